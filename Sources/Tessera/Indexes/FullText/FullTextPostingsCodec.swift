/// The byte layout of a full-text index in LMDB (DESIGN "Storage", README "Full-text storage").
///
/// Each document gets an index-local **document number** (`UInt32`) when it enters the index
/// (back-fill numbers documents in ID order; later arrivals take the next free number). A
/// document keeps its number while it stays in the index; numbers are never reused.
///
/// **Postings table** — one entry per (term, block of documents):
///
///     key   = term (UTF-8) ‖ 0x00 ‖ BE32(number of the block's first document)
///     value = one entry per document, ascending document number:
///             varint(number − previous number; 0 for the first)
///             varint(frequency)        occurrences of the term (all columns)
///             varint(length)           the document's indexed token count (BM25 |d|)
///             varint(byte count of the positions that follow)
///             positions                for each column holding the term, ascending:
///                                      varint(column) varint(count) varint(p₀) varint(p₁ − p₀) …
///
/// Blocks hold up to `blockTargetBytes` (a block may exceed it only with a single entry), so a
/// term's documents are a short run of LMDB entries read in document order: a query decodes
/// numbers, frequencies and lengths without touching positions (they are skipped by their byte
/// count) and intersects lists by merging. Terms never contain U+0000, so `term ‖ 0x00` is the
/// exact-term range and keeps one term's blocks contiguous and before any longer term; a prefix
/// query (`lin*`) is a range over keys starting with the prefix's UTF-8 bytes, each key split
/// into term and block number. Varints are unsigned LEB128.
///
/// **Documents table** (`…:stats`):
///
///     0x01 ‖ document ID      → BE32(document number) [‖ varint(the document's token count)]
///     0x02 ‖ BE32(number)     → document ID
///     0x03 ‖ BE32(chunk)      → 512 bytes: bit (n mod 4096) of chunk n / 4096 set = number n
///                               is retired (its postings are stale)
///     0xFF                    → varint(documents) varint(tokens) varint(next document number)
///                               [varint(retired numbers whose postings are still stored)
///                               [varint(segments) varint(entries in segments)]]
///
/// **Segments table** (`…:segments`, format 9):
///
///     BE32(segment) ‖ term    → BE32(first document number) ‖ the term's entries of that
///                               segment, in block form (first delta 0)
///
/// The corpus totals keep BM25's average document length exact after every save.
///
/// **Retired numbers** (format 5): a document whose indexed text changes, or that leaves the
/// index, gives up its number instead of having its entries removed from the middle of every
/// term's list: the number's bit is set in the retired set, the new version (if any) takes the
/// next free number — its entries are appended to each term's last block — and the old text is
/// never tokenized again (its token count, kept with the number, corrects the corpus totals).
/// Readers skip retired numbers while decoding a list, so document frequencies, ranks and
/// matches are exactly those of the live documents. Once the retired numbers reach half the
/// live documents (or on `performMaintenance(.optimize)`), every term holding their entries is
/// rewritten without them and the set is cleared (`FullTextPendingChanges.vacuum`). The token count after the number is absent in entries
/// written before format 5; updating such a document tokenizes its old text once to count.
///
/// **Segments** (format 7): a transaction that adds few postings to an index that has blocks
/// does not append them to each term's last block — that dirtied one leaf page per distinct
/// term, thousands per batch of a thousand documents, most of them rewritten again by the next
/// batch. It writes them as one **segment** instead: one entry per term, keyed by segment
/// number then term, so a batch's postings are appended to the end of the segments table.
/// Document numbers only grow, so a term's list is its blocks followed by its entries in
/// segments 0, 1, … in that order (readers look the term up in each). Once
/// `FullTextPendingChanges.segmentLimit` segments or `segmentPostingsLimit` entries wait (or a
/// larger transaction, a vacuum or `.optimize` comes), every segment is merged into the
/// blocks — each term's last block rewritten once for all of them — and the segments table
/// is emptied at once (LMDB frees its pages without reading or copying them). Formats 7 and 8
/// kept segments at the end of the documents table (`0xFF 0x01 ‖ BE32(segment) ‖ term`), where
/// deleting them after a merge copied every page they filled; opening such a database moves
/// them (`FullTextIndexKind.upgrade`).
enum FullTextPostingsCodec {
    /// The separator between term and block number.
    static let separator: UInt8 = 0
    /// A block is closed once its value reaches this many bytes.
    static let blockTargetBytes = 1_536

    // MARK: - Postings keys

    /// `term ‖ 0x00 ‖ BE32(firstDocument)`.
    static func blockKey(term: UnsafeRawBufferPointer, firstDocument: UInt32) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(term.count + 5)
        key.append(contentsOf: term)
        key.append(separator)
        appendBigEndian(firstDocument, to: &key)
        return key
    }

    /// `term ‖ 0x00 ‖ BE32(firstDocument)`.
    static func blockKey(term: String, firstDocument: UInt32) -> [UInt8] {
        Array(term.utf8).withUnsafeBytes { blockKey(term: $0, firstDocument: firstDocument) }
    }

    /// `term ‖ 0x00`: every block key of exactly this term starts with these bytes.
    static func termKeyPrefix(_ term: String) -> [UInt8] {
        Array(term.utf8) + [separator]
    }

    /// The UTF-8 bytes of a prefix: every block key of a term starting with `prefix` starts
    /// with these bytes (and only those keys).
    static func prefixScanKey(_ prefix: String) -> [UInt8] {
        Array(prefix.utf8)
    }

    /// Splits a block key into its term bytes and first document number, or nil if it is not
    /// a block key.
    static func splitBlockKey(_ key: UnsafeRawBufferPointer) -> (term: UnsafeRawBufferPointer, firstDocument: UInt32)? {
        guard key.count >= 5, key[key.count - 5] == separator else { return nil }
        let term = UnsafeRawBufferPointer(rebasing: key[0..<(key.count - 5)])
        if term.contains(separator) { return nil }
        return (term, readBigEndian(key, at: key.count - 4))
    }

    // MARK: - Block entries

    /// Appends an entry's body (everything after the number delta): frequency, length and
    /// the encoded positions.
    static func appendEntryBody(frequency: Int, length: Int, positions: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        appendVarint(UInt64(max(0, frequency)), to: &out)
        appendVarint(UInt64(max(0, length)), to: &out)
        appendVarint(UInt64(positions.count), to: &out)
        out.append(contentsOf: positions)
    }

    /// The total number of positions in an encoded positions value (the term's frequency).
    static func positionCount(_ positions: UnsafeRawBufferPointer) throws -> Int {
        var reader = ByteReader(positions)
        var total = 0
        while !reader.atEnd {
            _ = try reader.varint()
            let count = try reader.varint()
            guard count <= UInt64(positions.count) else { throw FullTextIndexCorruption("bad position count") }
            total += Int(count)
            for _ in 0..<count { _ = try reader.varint() }
        }
        return total
    }

    /// Encodes the positions of one term in one document (columns ascending, positions
    /// ascending within a column).
    static func encodePositions(_ columns: [FullTextColumnPositions]) -> [UInt8] {
        var out: [UInt8] = []
        for c in columns.sorted(by: { $0.column < $1.column }) where !c.positions.isEmpty {
            appendVarint(UInt64(c.column), to: &out)
            appendVarint(UInt64(c.positions.count), to: &out)
            var previous: UInt32 = 0
            for p in c.positions {
                appendVarint(UInt64(p &- previous), to: &out)
                previous = p
            }
        }
        return out
    }

    /// Decodes a positions value.
    ///
    /// - Throws: `FullTextIndexCorruption` if the bytes are not a valid encoding.
    static func decodePositions(_ bytes: some Swift.Collection<UInt8>) throws -> [FullTextColumnPositions] {
        try Array(bytes).withUnsafeBytes { try decodePositions(raw: $0) }
    }

    /// Decodes a positions value held in raw memory.
    static func decodePositions(raw bytes: UnsafeRawBufferPointer) throws -> [FullTextColumnPositions] {
        var out: [FullTextColumnPositions] = []
        var reader = ByteReader(bytes)
        while !reader.atEnd {
            let column = try reader.varint()
            let count = try reader.varint()
            guard count <= UInt64(bytes.count) else { throw FullTextIndexCorruption("bad position count") }
            var positions: [UInt32] = []
            positions.reserveCapacity(Int(count))
            var p: UInt64 = 0
            for _ in 0..<count {
                p += try reader.varint()
                guard p <= UInt64(UInt32.max) else { throw FullTextIndexCorruption("position out of range") }
                positions.append(UInt32(p))
            }
            guard column <= UInt64(Int32.max) else { throw FullTextIndexCorruption("column out of range") }
            out.append(FullTextColumnPositions(column: Int(column), positions: positions))
        }
        return out
    }

    // MARK: - Documents table

    /// `0x01 ‖ documentID`: the key of a document's number.
    static func documentNumberKey(_ docID: some Sequence<UInt8>) -> [UInt8] {
        [0x01] + Array(docID)
    }

    /// `0x02 ‖ BE32(number)`: the key of a number's document ID.
    static func documentIDKey(_ number: UInt32) -> [UInt8] {
        var key: [UInt8] = [0x02]
        appendBigEndian(number, to: &key)
        return key
    }

    /// The value of a document's number key: `BE32(number) ‖ varint(tokens)`.
    static func documentNumberValue(_ number: UInt32, tokens: Int) -> [UInt8] {
        var value: [UInt8] = []
        value.reserveCapacity(8)
        appendBigEndian(number, to: &value)
        appendVarint(UInt64(max(0, tokens)), to: &value)
        return value
    }

    /// Decodes a document's number key value: the number and, when stored (format 5), the
    /// document's token count.
    static func decodeDocumentNumber(_ raw: UnsafeRawBufferPointer) throws -> (number: UInt32, tokens: Int?) {
        guard raw.count >= 4 else { throw FullTextIndexCorruption("bad document number") }
        let number = readBigEndian(raw, at: 0)
        if raw.count == 4 { return (number, nil) }
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: raw[4...]))
        let tokens = try reader.varint()
        guard reader.atEnd, tokens <= UInt64(Int.max) else { throw FullTextIndexCorruption("bad document token count") }
        return (number, Int(tokens))
    }

    /// Document numbers per chunk of the retired set.
    static let retiredChunkBits = 4_096

    /// `0x03 ‖ BE32(chunk)`: the key of the retired-set chunk holding `number`'s bit.
    static func retiredChunkKey(_ chunk: UInt32) -> [UInt8] {
        var key: [UInt8] = [0x03]
        appendBigEndian(chunk, to: &key)
        return key
    }

    /// The key of the corpus totals.
    static let corpusKey: [UInt8] = [0xFF]

    /// Where formats 7 and 8 kept segment entries: keys of the documents table starting with
    /// these bytes, then the segment's key (`segmentKey`).
    static let legacySegmentKeyPrefix: [UInt8] = [0xFF, 0x01]

    /// `BE32(segment)`: every entry of one segment starts with these bytes.
    static func segmentPrefix(_ segment: UInt32) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(4)
        appendBigEndian(segment, to: &key)
        return key
    }

    /// `BE32(segment) ‖ term`: a term's entries in one segment.
    static func segmentKey(_ segment: UInt32, term: UnsafeRawBufferPointer) -> [UInt8] {
        var key = segmentPrefix(segment)
        key.append(contentsOf: term)
        return key
    }

    /// Splits a segment entry's key into its segment number and term, or nil if it is not one.
    static func splitSegmentKey(_ key: UnsafeRawBufferPointer) -> (segment: UInt32, term: UnsafeRawBufferPointer)? {
        guard key.count > 4 else { return nil }
        return (readBigEndian(key, at: 0), UnsafeRawBufferPointer(rebasing: key[4...]))
    }

    /// Splits a segment entry's value into the number of its first document and its entries
    /// (block form: the first entry's delta is 0), or nil if it is too short.
    static func splitSegmentValue(_ value: UnsafeRawBufferPointer) -> (first: UInt32, entries: UnsafeRawBufferPointer)? {
        guard value.count > 4 else { return nil }
        return (readBigEndian(value, at: 0), UnsafeRawBufferPointer(rebasing: value[4...]))
    }

    /// The corpus totals of an index: `varint(documents) varint(tokens) varint(nextDocument)`,
    /// then `varint(retired)` when some retired numbers still have postings or a segment is
    /// waiting, then `varint(segments)` when segments are waiting.
    static func encodeIndexState(_ state: FullTextIndexState) -> [UInt8] {
        var out: [UInt8] = []
        appendVarint(UInt64(max(0, state.statistics.documentCount)), to: &out)
        appendVarint(UInt64(max(0, state.statistics.totalTokens)), to: &out)
        appendVarint(UInt64(state.nextDocument), to: &out)
        if state.retired > 0 || state.segments > 0 { appendVarint(UInt64(state.retired), to: &out) }
        if state.segments > 0 {
            appendVarint(UInt64(state.segments), to: &out)
            appendVarint(UInt64(max(0, state.segmentPostings)), to: &out)
        }
        return out
    }

    /// Decodes corpus totals.
    static func decodeIndexState(_ bytes: UnsafeRawBufferPointer) throws -> FullTextIndexState {
        var reader = ByteReader(bytes)
        let d = try reader.varint()
        let t = try reader.varint()
        let n = try reader.varint()
        let r = reader.atEnd ? 0 : try reader.varint()
        let s = reader.atEnd ? 0 : try reader.varint()
        let p = reader.atEnd ? 0 : try reader.varint()
        guard d <= UInt64(Int.max), t <= UInt64(Int.max), n <= UInt64(UInt32.max), r <= UInt64(UInt32.max),
              s <= UInt64(UInt32.max), p <= UInt64(Int.max), reader.atEnd else {
            throw FullTextIndexCorruption("bad corpus statistics")
        }
        return FullTextIndexState(statistics: FullTextCorpusStatistics(documentCount: Int(d), totalTokens: Int(t)),
                                  nextDocument: UInt32(n), retired: Int(r), segments: Int(s), segmentPostings: Int(p))
    }

    // MARK: - Integers

    /// Appends an unsigned LEB128 varint.
    @inline(__always)
    static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    @inline(__always)
    static func appendVarint(_ value: UInt64, to out: inout UnsafeGrowableBuffer<UInt8>) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    @inline(__always)
    static func appendBigEndian(_ n: UInt32, to out: inout [UInt8]) {
        out.append(UInt8(truncatingIfNeeded: n >> 24))
        out.append(UInt8(truncatingIfNeeded: n >> 16))
        out.append(UInt8(truncatingIfNeeded: n >> 8))
        out.append(UInt8(truncatingIfNeeded: n))
    }

    @inline(__always)
    static func readBigEndian(_ bytes: UnsafeRawBufferPointer, at i: Int) -> UInt32 {
        UInt32(bytes[i]) << 24 | UInt32(bytes[i + 1]) << 16 | UInt32(bytes[i + 2]) << 8 | UInt32(bytes[i + 3])
    }
}

/// Reads varints from raw bytes with bounds checks.
struct ByteReader {
    let base: UnsafeRawBufferPointer
    var offset = 0

    init(_ base: UnsafeRawBufferPointer) { self.base = base }

    @inline(__always) var atEnd: Bool { offset >= base.count }

    /// Reads an unsigned LEB128 varint.
    @inline(__always)
    mutating func varint() throws -> UInt64 {
        guard offset < base.count else { throw FullTextIndexCorruption("truncated varint") }
        let b0 = base[offset]
        offset &+= 1
        if b0 < 0x80 { return UInt64(b0) }
        var result = UInt64(b0 & 0x7F)
        var shift: UInt64 = 7
        while true {
            guard offset < base.count else { throw FullTextIndexCorruption("truncated varint") }
            guard shift < 64 else { throw FullTextIndexCorruption("varint too long") }
            let b = base[offset]
            offset &+= 1
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return result }
            shift += 7
        }
    }

    /// Reads a varint that must fit in 32 bits.
    @inline(__always)
    mutating func varint32() throws -> UInt32 {
        let v = try varint()
        guard v <= UInt64(UInt32.max) else { throw FullTextIndexCorruption("number out of range") }
        return UInt32(truncatingIfNeeded: v)
    }

    /// The next `n` bytes.
    mutating func bytes(_ n: Int) throws -> UnsafeRawBufferPointer {
        guard n >= 0, n <= base.count - offset else { throw FullTextIndexCorruption("truncated entry") }
        let out = UnsafeRawBufferPointer(rebasing: base[offset..<(offset + n)])
        offset += n
        return out
    }
}

/// One entry of a postings block.
struct PostingBlockEntry {
    var document: UInt32
    var frequency: UInt32
    var length: UInt32
    /// The encoded positions (inside the block's bytes).
    var positions: UnsafeRawBufferPointer
    /// The entry's body (frequency, length, positions) as stored: copy it to move the entry.
    var body: UnsafeRawBufferPointer
}

/// Walks the entries of one postings block.
extension FullTextPostingsCodec {
    /// The last document number of a block whose first is `first`, found by skipping each
    /// entry's body by its byte counts (nothing decoded); nil for an empty block.
    /// - Throws: `FullTextIndexCorruption` for a truncated entry.
    static func lastDocument(inBlock value: UnsafeRawBufferPointer, first: UInt32) throws -> UInt32? {
        var reader = ByteReader(value)
        var doc = first
        var any = false
        while !reader.atEnd {
            let delta = try reader.varint32()
            doc = any ? doc &+ delta : first &+ delta
            any = true
            _ = try reader.varint()
            _ = try reader.varint()
            reader.offset += Int(clamping: try reader.varint())
            guard reader.offset <= value.count else { throw FullTextIndexCorruption("truncated posting entry") }
        }
        return any ? doc : nil
    }
}

struct PostingBlockIterator {
    var reader: ByteReader
    var previous: UInt32
    var first = true

    init(value: UnsafeRawBufferPointer, firstDocument: UInt32) {
        reader = ByteReader(value)
        previous = firstDocument
    }

    /// The next entry, nil at the end of the block.
    @inline(__always)
    mutating func next() throws -> PostingBlockEntry? {
        if reader.atEnd { return nil }
        let delta = try reader.varint32()
        if first {
            guard delta == 0 else { throw FullTextIndexCorruption("block does not start at its key's document") }
            first = false
        } else {
            guard delta > 0, delta <= UInt32.max - previous else { throw FullTextIndexCorruption("documents out of order in a block") }
        }
        let doc = previous &+ delta
        previous = doc
        let bodyStart = reader.offset
        let frequency = try reader.varint32()
        let length = try reader.varint32()
        let count = try reader.varint()
        let positions = try reader.bytes(Int(clamping: count))
        let body = UnsafeRawBufferPointer(rebasing: reader.base[bodyStart..<reader.offset])
        return PostingBlockEntry(document: doc, frequency: frequency, length: length, positions: positions, body: body)
    }
}

/// Corpus totals and the next free document number of one index.
struct FullTextIndexState: Equatable {
    var statistics: FullTextCorpusStatistics
    var nextDocument: UInt32
    /// Retired document numbers whose postings are still stored (see "Retired numbers").
    var retired: Int = 0
    /// Segments waiting to be merged into the blocks, numbered 0..<segments (see "Segments").
    var segments: Int = 0
    /// The entries those segments hold.
    var segmentPostings: Int = 0

    /// An index that has numbered no document.
    static let empty = FullTextIndexState(statistics: FullTextCorpusStatistics(documentCount: 0, totalTokens: 0), nextDocument: 0)
}

/// The retired document numbers of an index (see "Retired numbers"), copied out of the
/// stats table into one bitmap so that a list decode tests a number with one load.
struct RetiredNumbers {
    private var bits: [UInt8] = []

    /// An empty set.
    init() {}

    /// The set stored in `stats`.
    init(txn: Snapshot, stats: StorageTable) throws {
        let chunkBytes = FullTextPostingsCodec.retiredChunkBits / 8
        try txn.withCursor(stats) { c in
            var ok = try c.seek(FullTextPostingsCodec.retiredChunkKey(0))
            while ok, c.key.count == 5, c.key[0] == 0x03 {
                guard c.value.count == chunkBytes else { throw FullTextIndexCorruption("bad retired-number chunk") }
                let start = Int(FullTextPostingsCodec.readBigEndian(c.key, at: 1)) * chunkBytes
                if start + chunkBytes > bits.count { bits.append(contentsOf: repeatElement(0, count: start + chunkBytes - bits.count)) }
                bits.withUnsafeMutableBytes { UnsafeMutableRawBufferPointer(rebasing: $0[start..<(start + chunkBytes)]).copyMemory(from: c.value) }
                ok = try c.next()
            }
        }
    }

    /// True when no number is retired.
    var isEmpty: Bool { bits.isEmpty }

    /// Whether `number` is retired.
    @inline(__always)
    func contains(_ number: UInt32) -> Bool {
        let byte = Int(number >> 3)
        return byte < bits.count && bits[byte] & (1 << UInt8(number & 7)) != 0
    }

    /// How many numbers are retired.
    var count: Int { bits.reduce(0) { $0 + $1.nonzeroBitCount } }
}

/// Corpus totals for BM25.
struct FullTextCorpusStatistics: Sendable, Hashable {
    /// Indexed documents.
    var documentCount: Int
    /// Indexed tokens over all documents (stop words excluded).
    var totalTokens: Int

    /// Creates statistics.
    init(documentCount: Int, totalTokens: Int) {
        self.documentCount = documentCount
        self.totalTokens = totalTokens
    }

    /// Mean tokens per document (0 for an empty index).
    var averageDocumentLength: Double {
        documentCount > 0 ? Double(totalTokens) / Double(documentCount) : 0
    }
}

/// Bytes in a full-text index that are not a valid encoding.
struct FullTextIndexCorruption: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    var message: String

    /// Creates the error.
    init(_ message: String) { self.message = message }

    /// `corrupt full-text index: message`.
    var description: String { "corrupt full-text index: \(message)" }
}
