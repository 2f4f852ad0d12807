import Synchronization
// The tokenizer's engine: one workspace = one Snowball stemmer + caches + scratch buffers.
//
// Hot path (indexing): the UTF-8 bytes of a text are scanned once. ASCII letters and digits
// are folded inline; other scalars go through a per-workspace table (scalar → class and
// folded/accent-stripped UTF-8), filled on first sight. Each finished word is looked up in a
// byte-keyed open-addressing cache that maps the folded word straight to an interned term ID
// (or "stop word"), so stop-word checks, Snowball stemming and String creation happen once per
// distinct word, not once per token. Tokens are recorded as (term ID, position, column).

/// The scalar classes of SPEC §10.1 rule 2.
enum ScalarClass: UInt64 {
    /// L*, N*, Co: part of a token.
    case token = 1
    /// M*: part of a token when it follows a token character, else a separator.
    case mark = 2
    /// Everything else.
    case separator = 3
}

/// A token as recorded by the engine: interned term ID, position, column.
struct RawToken {
    var term: Int32
    var position: UInt32
    var column: Int32
}

/// A slot of the term cache (open addressing): a folded word → term ID, or -1 for a stop
/// word. Words of up to 16 bytes are kept in the slot itself (zero-padded, little-endian), so a
/// hit reads one 32-byte slot — one cache line — rather than a slot, an entry and the key
/// bytes; a longer word's bytes are in `keys` at offset `key0`.
struct TermCacheSlot {
    var hash: UInt64 = 0
    var key0: UInt64 = 0
    var key1: UInt64 = 0
    /// -1: empty slot.
    var keyLength: Int32 = -1
    var value: Int32 = 0

    /// `count` empty slots on 64-byte boundaries (two slots per cache line).
    static func allocate(_ count: Int) -> UnsafeMutablePointer<TermCacheSlot> {
        let slots = UnsafeMutableRawPointer.allocate(byteCount: count * MemoryLayout<TermCacheSlot>.stride, alignment: 64)
            .bindMemory(to: TermCacheSlot.self, capacity: count)
        slots.initialize(repeating: TermCacheSlot(), count: count)
        return slots
    }

    /// Frees slots from `allocate`.
    static func deallocate(_ slots: UnsafeMutablePointer<TermCacheSlot>) {
        UnsafeMutableRawPointer(slots).deallocate()
    }
}

/// What one workspace is configured for.
struct TokenizerSettings: Sendable, Hashable {
    var stemmerAlgorithm: String?
    var ignoreAccents: Bool
    var stopWords: [String]
}

/// One tokenizer workspace.
///
/// @unchecked Sendable: a workspace is never used by two threads at once. It is either
/// parked in `TokenizerWorkspacePool.free` (protected by that pool's `Mutex`) or leased to
/// exactly one call of `TokenizerWorkspacePool.withWorkspace`, which returns it afterwards.
final class TokenizerWorkspace: @unchecked Sendable {
    /// Words longer than this many UTF-8 bytes (after folding) are cut before stemming.
    static var maxWordBytes: Int { 1024 }
    /// When a call starts with more cached words than this, the cache is emptied.
    static var maxCachedWords: Int { 1 << 16 }

    let ignoreAccents: Bool
    let stemmer: Stemmer?
    /// Stop words as this workspace normalises them (folded, accent-stripped if configured).
    private(set) var stopWords: Set<String> = []

    // MARK: Current word
    @exclusivity(unchecked) var word: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) var wordLength = 0
    /// The word contains a combining mark or conjoining jamo: NFC-normalise it on a cache miss.
    @exclusivity(unchecked) var wordNeedsNFC = false
    /// The word hit `maxWordBytes`: the rest of the run is skipped.
    @exclusivity(unchecked) var wordFull = false
    /// Inside a token (a mark here extends it).
    @exclusivity(unchecked) var inToken = false

    // MARK: Scalar table
    /// Info for scalars U+0080…U+07FF (0 = not computed yet).
    @exclusivity(unchecked) var smallInfo: UnsafeMutablePointer<UInt64>
    /// Info for scalars from U+0800.
    @exclusivity(unchecked) var bigInfo: [UInt32: UInt64] = [:]
    /// Folded/stripped UTF-8 of scalars whose output differs from their input.
    @exclusivity(unchecked) var scalarBytes = UnsafeGrowableBuffer<UInt8>(capacity: 1024)

    // MARK: Term cache and interned terms
    @exclusivity(unchecked) var slots: UnsafeMutablePointer<TermCacheSlot>
    @exclusivity(unchecked) var slotMask: Int
    /// Words in the term cache.
    @exclusivity(unchecked) var cachedWords = 0
    /// Changes whenever the term cache is emptied (term IDs from before mean nothing after).
    private(set) var generation = 0
    /// Unique per workspace ever created (unlike an object identity, never reused).
    let serial = TokenizerWorkspace.serials.add(1, ordering: .relaxed).newValue
    private static let serials = Atomic<Int>(0)
    @exclusivity(unchecked) var keys = UnsafeGrowableBuffer<UInt8>(capacity: 8192)
    /// Interned terms (final, stemmed); a term ID indexes these.
    @exclusivity(unchecked) var terms: [String] = []
    @exclusivity(unchecked) var termIDs: [String: Int32] = [:]
    /// UTF-8 of each interned term: `termBytes[termOffsets[id] ..< termOffsets[id + 1]]`.
    @exclusivity(unchecked) var termBytes = UnsafeGrowableBuffer<UInt8>(capacity: 8192)
    @exclusivity(unchecked) var termOffsets = UnsafeGrowableBuffer<Int32>(capacity: 1024)

    // MARK: Output
    @exclusivity(unchecked) var tokens = UnsafeGrowableBuffer<RawToken>(capacity: 256)
    /// Normalised words (query mode): folded, stripped, NFC, not stemmed, stop words kept.
    @exclusivity(unchecked) var normalized: [(word: String, position: UInt32)] = []
    /// Scan mode: true = record normalised words, false = record term IDs.
    @exclusivity(unchecked) var normalizeOnly = false
    @exclusivity(unchecked) var column: Int32 = 0
    @exclusivity(unchecked) var position: UInt32 = 0

    // MARK: Grouping scratch (index entries)
    @exclusivity(unchecked) var groupHead = UnsafeGrowableBuffer<Int32>(capacity: 1024)
    @exclusivity(unchecked) var groupTail = UnsafeGrowableBuffer<Int32>(capacity: 1024)
    @exclusivity(unchecked) var groupNext = UnsafeGrowableBuffer<Int32>(capacity: 256)
    @exclusivity(unchecked) var groupOrder = UnsafeGrowableBuffer<Int32>(capacity: 256)
    @exclusivity(unchecked) var valueBytes = UnsafeGrowableBuffer<UInt8>(capacity: 4096)
    @exclusivity(unchecked) var valueEnds = UnsafeGrowableBuffer<Int32>(capacity: 256)
    /// Each grouped term's frequency (its number of positions), beside `valueEnds`.
    @exclusivity(unchecked) var valueFrequencies = UnsafeGrowableBuffer<Int32>(capacity: 256)

    init(_ settings: TokenizerSettings) {
        ignoreAccents = settings.ignoreAccents
        stemmer = settings.stemmerAlgorithm.flatMap { Stemmer(algorithm: $0) }
        // Zeroed, so that the 16 bytes a short word is read as are always initialized.
        word = .allocate(capacity: TokenizerWorkspace.maxWordBytes + 16)
        word.initialize(repeating: 0, count: TokenizerWorkspace.maxWordBytes + 16)
        smallInfo = .allocate(capacity: 0x800)
        smallInfo.initialize(repeating: 0, count: 0x800)
        let slotCount = 4096
        slots = TermCacheSlot.allocate(slotCount)
        slotMask = slotCount - 1
        termOffsets.append(0)
        // Stop words are compared with tokens after this workspace's own normalisation, so
        // run them through it (with ignoreAccents, "été" must become "ete").
        if !settings.stopWords.isEmpty {
            var set = Set<String>()
            for w in settings.stopWords {
                for n in normalizedWords(w, startingAt: 0) { set.insert(n.word) }
            }
            stopWords = set
        }
    }

    deinit {
        word.deallocate()
        smallInfo.deallocate()
        TermCacheSlot.deallocate(slots)
        keys.deallocate()
        termBytes.deallocate()
        termOffsets.deallocate()
        scalarBytes.deallocate()
        tokens.deallocate()
        groupHead.deallocate()
        groupTail.deallocate()
        groupNext.deallocate()
        groupOrder.deallocate()
        valueBytes.deallocate()
        valueEnds.deallocate()
        valueFrequencies.deallocate()
    }

    // MARK: - Calls

    /// Prepares an indexing/tokenizing call: empties the output and, if it grew too large,
    /// the term cache (term IDs are only stable within one call).
    func beginTokenizing() {
        tokens.count = 0
        position = 0
        column = 0
        normalizeOnly = false
        if cachedWords > TokenizerWorkspace.maxCachedWords { resetTermCache() }
    }

    /// The folded words of `text` (stop words kept, nothing stemmed), with positions
    /// starting at `start`.
    func normalizedWords(_ text: String, startingAt start: UInt32) -> [(word: String, position: UInt32)] {
        normalizeOnly = true
        normalized.removeAll(keepingCapacity: true)
        position = start
        scan(text)
        normalizeOnly = false
        return normalized
    }

    /// Empties the term cache and the interned terms.
    @inline(never)
    func resetTermCache() {
        generation &+= 1
        cachedWords = 0
        keys.count = 0
        terms.removeAll(keepingCapacity: true)
        termIDs.removeAll(keepingCapacity: true)
        termBytes.count = 0
        termOffsets.count = 0
        termOffsets.append(0)
        slots.update(repeating: TermCacheSlot(), count: slotMask + 1)
    }

    /// The UTF-8 bytes of an interned term.
    @inline(__always)
    func termUTF8(_ id: Int32) -> UnsafeBufferPointer<UInt8> {
        let start = Int(termOffsets.base[Int(id)])
        let end = Int(termOffsets.base[Int(id) + 1])
        return UnsafeBufferPointer(start: termBytes.base + start, count: end - start)
    }

    // MARK: - Scanning

    /// Tokenizes a string (SPEC §10.1 rules 2–5), appending to `tokens` (or `normalized`).
    func scan(_ text: String) {
        var text = text
        text.withUTF8 { scan(bytes: $0) }
    }

    /// Tokenizes valid UTF-8. Every token ends at the end of the buffer.
    func scan(bytes: UnsafeBufferPointer<UInt8>) {
        guard let p = bytes.baseAddress else { return }
        let n = bytes.count
        var i = 0
        while i < n {
            let b = p[i]
            if b < 0x80 {
                // ASCII fast path: [0-9a-z] as is, [A-Z] lower-cased, anything else separates.
                if (b &- 0x61) < 26 || (b &- 0x30) < 10 {
                    appendASCII(b)
                } else if (b &- 0x41) < 26 {
                    appendASCII(b | 0x20)
                } else if inToken {
                    flushWord()
                }
                i &+= 1
                continue
            }
            // Multi-byte scalar; Swift strings are valid UTF-8, so the continuation bytes exist.
            let v: UInt32
            let len: Int
            if b < 0xE0 {
                v = (UInt32(b & 0x1F) << 6) | UInt32(p[i + 1] & 0x3F)
                len = 2
            } else if b < 0xF0 {
                v = (UInt32(b & 0x0F) << 12) | (UInt32(p[i + 1] & 0x3F) << 6) | UInt32(p[i + 2] & 0x3F)
                len = 3
            } else {
                v = (UInt32(b & 0x07) << 18) | (UInt32(p[i + 1] & 0x3F) << 12)
                    | (UInt32(p[i + 2] & 0x3F) << 6) | UInt32(p[i + 3] & 0x3F)
                len = 4
            }
            handleScalar(v, source: p + i, length: len)
            i &+= len
        }
        if inToken { flushWord() }
    }

    @inline(__always)
    private func appendASCII(_ b: UInt8) {
        inToken = true
        if wordLength < TokenizerWorkspace.maxWordBytes && !wordFull {
            word[wordLength] = b
            wordLength &+= 1
        } else {
            wordFull = true
        }
    }

    // Info layout (UInt64): bits 0-1 class, bit 2 identity (output = input bytes),
    // bit 3 output contains a mark/jamo (needs NFC), bits 8-15 output length,
    // bits 32-63 offset in `scalarBytes`. 0 = not computed.
    static var identityBit: UInt64 { 1 << 2 }
    static var nfcBit: UInt64 { 1 << 3 }

    @inline(__always)
    private func info(_ v: UInt32) -> UInt64 {
        if v < 0x800 {
            let x = smallInfo[Int(v)]
            if x != 0 { return x }
            let c = computeInfo(v)
            smallInfo[Int(v)] = c
            return c
        }
        if let x = bigInfo[v] { return x }
        let c = computeInfo(v)
        bigInfo[v] = c
        return c
    }

    @inline(__always)
    private func handleScalar(_ v: UInt32, source: UnsafePointer<UInt8>, length: Int) {
        let inf = info(v)
        let cls = inf & 3
        if cls == ScalarClass.separator.rawValue || (cls == ScalarClass.mark.rawValue && !inToken) {
            if inToken { flushWord() }
            return
        }
        inToken = true
        if inf & TokenizerWorkspace.nfcBit != 0 { wordNeedsNFC = true }
        let src: UnsafePointer<UInt8>
        let n: Int
        if inf & TokenizerWorkspace.identityBit != 0 {
            src = source
            n = length
        } else {
            n = Int((inf >> 8) & 0xFF)
            src = UnsafePointer(scalarBytes.base + Int(inf >> 32))
        }
        if n == 0 { return }
        if wordFull || wordLength &+ n > TokenizerWorkspace.maxWordBytes {
            wordFull = true
            return
        }
        (word + wordLength).update(from: src, count: n)
        wordLength &+= n
    }

    /// Classifies and folds one non-ASCII scalar (once per workspace and scalar).
    @inline(never)
    private func computeInfo(_ v: UInt32) -> UInt64 {
        guard let scalar = Unicode.Scalar(v) else { return ScalarClass.separator.rawValue }
        let cls = FullTextUnicode.scalarClass(scalar)
        if cls == .separator { return cls.rawValue }
        let out = FullTextUnicode.fold(scalar, stripAccents: ignoreAccents)
        var inf = cls.rawValue
        if out.contains(where: FullTextUnicode.needsComposition) { inf |= TokenizerWorkspace.nfcBit }
        if out.count == 1 && out[0] == scalar {
            return inf | TokenizerWorkspace.identityBit
        }
        var bytes: [UInt8] = []
        for s in out { bytes.append(contentsOf: UTF8.encode(s)!) }
        let length = min(bytes.count, 255)
        let offset = scalarBytes.count
        bytes.withUnsafeBufferPointer { scalarBytes.append($0.baseAddress!, count: length) }
        return inf | (UInt64(length) << 8) | (UInt64(offset) << 32)
    }

    // MARK: - Words

    /// Ends the current word: records its term (or, in query mode, its normalised text).
    private func flushWord() {
        let length = wordLength
        let needsNFC = wordNeedsNFC
        wordLength = 0
        wordNeedsNFC = false
        wordFull = false
        inToken = false
        if length == 0 { return }
        if normalizeOnly {
            // Query words keep every word in order; the query compiler assigns positions
            // (stop words take none there either).
            normalized.append((normalizedString(length: length, needsNFC: needsNFC), position))
            position &+= 1
            return
        }
        // SPEC §10.1 step 6: a stop word is dropped before positions are assigned.
        let id = termID(length: length, needsNFC: needsNFC)
        if id >= 0 {
            tokens.append(RawToken(term: id, position: position, column: column))
            position &+= 1
        }
    }

    /// The word as a String, NFC-normalised if it holds marks, and cut to a scalar boundary.
    private func normalizedString(length: Int, needsNFC: Bool) -> String {
        let s = String(decoding: UnsafeBufferPointer(start: word, count: length), as: UTF8.self)
        return needsNFC ? FullTextUnicode.nfc(s) : s
    }

    /// The first 16 bytes of the current word, zero beyond its length (a word of up to 16
    /// bytes is compared as these two integers).
    @inline(__always)
    private func inlineKey(_ length: Int) -> (UInt64, UInt64) {
        let raw = UnsafeRawPointer(word)
        @inline(__always) func masked(_ w: UInt64, _ n: Int) -> UInt64 {
            n >= 8 ? w : (n <= 0 ? 0 : w & ((1 << UInt64(n &* 8)) &- 1))
        }
        let k0 = masked(UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self)), length)
        let k1 = masked(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)), length &- 8)
        return (k0, k1)
    }

    /// The term ID of the current word through the cache (-1 = stop word).
    @inline(__always)
    private func termID(length: Int, needsNFC: Bool) -> Int32 {
        let h = FullTextUnicode.hash(word, length)
        let short = length <= 16
        let (k0, k1) = short ? inlineKey(length) : (0, 0)
        var slot = Int(truncatingIfNeeded: h) & slotMask
        while true {
            let s = slots + slot
            let keyLength = s.pointee.keyLength
            if keyLength < 0 { break }
            if s.pointee.hash == h && Int(keyLength) == length {
                if short {
                    if s.pointee.key0 == k0 && s.pointee.key1 == k1 { return s.pointee.value }
                } else if FullTextUnicode.bytesEqual(keys.base + Int(s.pointee.key0), word, length) {
                    return s.pointee.value
                }
            }
            slot = (slot &+ 1) & slotMask
        }
        return insertWord(length: length, needsNFC: needsNFC, hash: h, slot: slot, key: (k0, k1))
    }

    /// Cache miss: analyses the word (stop word? stem) and caches the result.
    @inline(never)
    private func insertWord(length: Int, needsNFC: Bool, hash: UInt64, slot: Int, key: (UInt64, UInt64)) -> Int32 {
        let text = normalizedString(length: length, needsNFC: needsNFC)
        let value: Int32 = analyze(text).map(intern) ?? -1
        var entry = TermCacheSlot(hash: hash, key0: key.0, key1: key.1, keyLength: Int32(length), value: value)
        if length > 16 {
            entry.key0 = UInt64(keys.count)
            keys.append(word, count: length)
        }
        slots[slot] = entry
        cachedWords += 1
        if cachedWords &* 2 > slotMask &+ 1 { rehash() }
        return value
    }

    @inline(never)
    private func rehash() {
        let oldSlots = slots
        let oldCount = slotMask + 1
        let newCount = oldCount * 2
        slots = TermCacheSlot.allocate(newCount)
        slotMask = newCount - 1
        for i in 0..<oldCount where oldSlots[i].keyLength >= 0 {
            var s = Int(truncatingIfNeeded: oldSlots[i].hash) & slotMask
            while slots[s].keyLength >= 0 { s = (s &+ 1) & slotMask }
            slots[s] = oldSlots[i]
        }
        TermCacheSlot.deallocate(oldSlots)
    }

    /// Steps 4–5 of SPEC §10.1 on a normalised word: nil for a stop word, else the stem
    /// (cut to `FullTextSearch.maxTermLength` bytes).
    func analyze(_ normalizedWord: String) -> String? {
        if stopWords.contains(normalizedWord) { return nil }
        return FullTextUnicode.truncated(stem(normalizedWord), toUTF8Length: FullTextSearch.maxTermLength)
    }

    /// The stem of a normalised word (the word itself without a stemmer).
    func stem(_ normalizedWord: String) -> String {
        guard let stemmer else { return normalizedWord }
        let s = stemmer.stem(normalizedWord)
        return s.isEmpty ? normalizedWord : s
    }

    /// The ID of a term, interning it on first use.
    private func intern(_ term: String) -> Int32 {
        if let id = termIDs[term] { return id }
        let id = Int32(terms.count)
        terms.append(term)
        termIDs[term] = id
        var t = term
        t.withUTF8 { termBytes.append($0.baseAddress!, count: $0.count) }
        termOffsets.append(Int32(termBytes.count))
        return id
    }
}
