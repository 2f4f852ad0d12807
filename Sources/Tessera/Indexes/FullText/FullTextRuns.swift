// Full-text segments made before their write transaction. A transaction of a small batch into
// a full-text index that has blocks writes its entries as one segment (`FullTextPendingChanges.
// writeSegment`): each term's entries of the batch, terms in byte order. Grouping and ordering
// them is work for the whole batch at its commit, on the writer's thread, and `tessera import
// --batch N` knows its batches before they are saved: its parser thread, which tokenizes the
// bodies already, also groups each run of N bodies by term (`FullTextRun`). A transaction that
// numbers exactly one run's documents, in order, with nothing else queued, then writes the
// run's segment as it was made; any other transaction queues the documents' entries as usual.

/// One segment's entries laid out as they are stored: per term (in byte order) its key
/// `BE32(segment) ‖ term`, then its value `BE32(first document) ‖ entries`, back to back in
/// one buffer. Both numbers are set as the image is written (`entry(_:segment:base:)`), so an
/// image made before its transaction serves whichever segment and numbering it gets there.
struct SegmentImage {
    struct Item {
        /// Where the key, then the value start in `bytes`, and where the value ends.
        var key: Int
        var value: Int
        var end: Int
        /// The first document's number, before `base` is added.
        var first: UInt32
    }

    var bytes: UnsafeGrowableBuffer<UInt8>
    var items: [Item] = []
    /// The entries the image holds (one per term and document).
    var postingCount = 0

    init(capacity: Int) { bytes = UnsafeGrowableBuffer(capacity: capacity) }

    /// Starts the entry of `term`, whose first document is `first`: its entries follow.
    mutating func begin(term: [UInt8], first: UInt32) {
        let key = bytes.count
        for _ in 0..<4 { bytes.append(0) }
        term.withUnsafeBufferPointer { if let p = $0.baseAddress { bytes.append(p, count: $0.count) } }
        let value = bytes.count
        for _ in 0..<4 { bytes.append(0) }
        items.append(Item(key: key, value: value, end: value, first: first))
    }

    /// Ends the entry begun last.
    mutating func end() { items[items.count - 1].end = bytes.count }

    /// Item `i`'s key and value, with `segment` and `base + first` written into them; valid
    /// until the image changes.
    func entry(_ i: Int, segment: UInt32, base: UInt32) -> (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        let item = items[i]
        let p = bytes.base
        func store(_ n: UInt32, at offset: Int) {
            p[offset] = UInt8(truncatingIfNeeded: n >> 24)
            p[offset + 1] = UInt8(truncatingIfNeeded: n >> 16)
            p[offset + 2] = UInt8(truncatingIfNeeded: n >> 8)
            p[offset + 3] = UInt8(truncatingIfNeeded: n)
        }
        store(segment, at: item.key)
        store(base &+ item.first, at: item.value)
        return (UnsafeRawBufferPointer(start: p + item.key, count: item.value - item.key),
                UnsafeRawBufferPointer(start: p + item.value, count: item.end - item.value))
    }

    /// Frees the buffer. The image must not be used afterwards.
    func deallocate() { bytes.deallocate() }
}

/// Terms put in byte order, as a segment and the blocks store them.
///
/// Sorted by each term's first eight bytes as one big-endian integer (zero-padded, so a
/// shorter term sorts first on a common prefix, as in byte order), and only terms whose
/// first eight bytes are equal are compared byte by byte: most terms differ early, and a
/// batch of 1,000 documents orders ~10,000 terms at every commit. Each key is one `UInt128`,
/// the prefix above the term's number, so the sort compares integers (a comparison closure
/// over tuples took 1–2 ms a commit).
enum TermOrder {
    /// A term's first eight bytes as a big-endian integer, zero-padded.
    @inline(__always)
    static func prefix(_ term: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var prefix: UInt64 = 0
        for j in 0..<8 { prefix = prefix << 8 | UInt64(j < term.count ? term[j] : 0) }
        return prefix
    }

    /// The numbers 0..<count in their terms' order: `prefix(i)` is term `i`'s `prefix`, and
    /// `less` compares two terms whose prefixes are equal.
    static func sorted(_ count: Int, prefix: (Int) -> UInt64, less: (Int, Int) -> Bool) -> [Int] {
        var keyed = [UInt128]()
        keyed.reserveCapacity(count)
        for i in 0..<count { keyed.append(UInt128(prefix(i)) << 64 | UInt128(i)) }
        keyed.sort()
        var order = keyed.map { Int(truncatingIfNeeded: UInt64(truncatingIfNeeded: $0)) }
        var start = 0
        while start < keyed.count {
            var end = start + 1
            while end < keyed.count && keyed[end] >> 64 == keyed[start] >> 64 { end += 1 }
            if end - start > 1 { order[start..<end].sort(by: less) }
            start = end
        }
        return order
    }
}

/// The full-text entries of `length` consecutive documents for one index, numbered 0..<length
/// in the order they were added, grouped by term into a segment image once the last is added.
///
/// Each entry is kept once, in arrival order, with its term's slot; per slot the run counts
/// its entries and the bytes they take in the segment (numbers arrive in order, so each
/// delta is known at once). Sealing sorts the terms, gives each its place in one buffer of
/// the image's exact size, and copies every entry to its term's next position: one pass, no
/// grouping of the entries first.
///
/// `@unchecked Sendable`: one thread adds the documents and seals the run (`add`), before it
/// hands the last document's entries to the writer; the writer reads `image` only once it has
/// received all `length` documents, so the hand-over of the last orders the sealing before
/// that read. Until then the writer reads only the immutable `length` and each entry's ordinal.
final class FullTextRun: @unchecked Sendable {
    let length: Int
    private(set) var count = 0
    private var sealedImage: SegmentImage?

    private struct Slot {
        var termStart: Int32
        var termLength: Int32
        var first: Int32 = -1
        var last: Int32 = 0
        /// The bytes of the term's segment entries after their first number.
        var bytes: Int = 0
    }

    private struct Entry {
        var slot: Int32
        var ordinal: Int32
        var bodyStart: Int32
        var bodyLength: Int32
    }

    // Raw buffers (`UnsafeGrowableBuffer`), no dynamic exclusivity tracking (one thread adds):
    // this runs once per entry of every document, and arrays' uniqueness checks, access
    // tracking and calls to memmove for a few bytes showed in profiles.
    @exclusivity(unchecked) private var slots = UnsafeGrowableBuffer<Slot>(capacity: 1024)
    @exclusivity(unchecked) private var termBytes = UnsafeGrowableBuffer<UInt8>(capacity: 8192)
    @exclusivity(unchecked) private var entries = UnsafeGrowableBuffer<Entry>(capacity: 1024)
    /// Entry bodies as a segment stores them: `varint(frequency) ‖ varint(tokens) ‖
    /// varint(positions' size) ‖ positions`.
    @exclusivity(unchecked) private var bodies = UnsafeGrowableBuffer<UInt8>(capacity: 8192)
    private var buffersFreed = false
    /// Slots by term ID in the tokenizer term cache `cacheKey` (-1: not seen yet).
    @exclusivity(unchecked) private var slotByID: [Int32] = []
    private var cacheKey: TermCacheKey?
    /// Slots by term bytes, made once a second term cache shows up (until then a term ID is
    /// a distinct term).
    private var slotByTerm: [[UInt8]: Int32]?

    init(length: Int, maximumBytes: Int = 1 << 30) {
        self.length = length
        self.maximumBytes = maximumBytes
    }

    deinit {
        sealedImage?.deallocate()
        freeBuffers()
    }

    private func freeBuffers() {
        guard !buffersFreed else { return }
        buffersFreed = true
        slots.deallocate()
        termBytes.deallocate()
        entries.deallocate()
        bodies.deallocate()
    }

    /// Adds the next document's entries and returns its ordinal; the last one seals the run.
    func add(_ prepared: PreparedFullText) -> Int32 {
        precondition(count < length, "FullTextRun: a document added to a sealed run")
        let ordinal = Int32(count)
        count += 1
        // A run whose entries outgrow `maximumBytes` makes no image (its offsets are 32-bit):
        // its documents are counted, and their entries are queued one by one at the save.
        if buffersFreed { return ordinal }
        if bodies.count + prepared.bytes.count + 15 * prepared.entries.count > maximumBytes {
            freeBuffers()
            return ordinal
        }
        if ordinal == 0 {
            // Sized by the first document.
            let postings = min(prepared.entries.count * length, 1 << 20)
            if postings > entries.capacity { entries.grow(to: postings) }
            let bytes = min(prepared.bytes.count * length, 1 << 24)
            if bytes > bodies.capacity { bodies.grow(to: bytes) }
        }
        prepared.forEach { key, tokenCount, termID, term, positions, frequency in
            let s = Int(slot(key: key, termID: termID, term: term))
            let bodyStart = bodies.count
            FullTextPostingsCodec.appendVarint(UInt64(frequency), to: &bodies)
            FullTextPostingsCodec.appendVarint(UInt64(tokenCount), to: &bodies)
            FullTextPostingsCodec.appendVarint(UInt64(positions.count), to: &bodies)
            if let p = positions.baseAddress { bodies.append(p, count: positions.count) }
            let bodyLength = bodies.count - bodyStart
            let slot = slots.base + s
            let delta = slot.pointee.first < 0 ? 0 : Int(ordinal - slot.pointee.last)
            if slot.pointee.first < 0 { slot.pointee.first = ordinal }
            slot.pointee.last = ordinal
            slot.pointee.bytes += varintLength(delta) + bodyLength
            entries.append(Entry(slot: Int32(s), ordinal: ordinal, bodyStart: Int32(bodyStart), bodyLength: Int32(bodyLength)))
        }
        if count == length { seal() }
        return ordinal
    }

    /// The most bytes of entries a run keeps (then it makes no image); usually 1 GB.
    let maximumBytes: Int

    /// The bytes of slot `s`'s term.
    private func term(_ s: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: termBytes.base + Int(slots.base[s].termStart), count: Int(slots.base[s].termLength))
    }

    /// The slot of a term: by its ID in the term cache `key`, by its bytes on first sight.
    @inline(__always)
    private func slot(key: TermCacheKey, termID: Int32, term t: UnsafeBufferPointer<UInt8>) -> Int32 {
        if key != cacheKey {
            if cacheKey != nil && slotByTerm == nil {
                var byTerm: [[UInt8]: Int32] = [:]
                for i in 0..<slots.count { byTerm[Array(term(i))] = Int32(i) }
                slotByTerm = byTerm
            }
            cacheKey = key
            slotByID = []
        }
        let i = Int(termID)
        if i >= slotByID.count { slotByID.append(contentsOf: repeatElement(-1, count: i - slotByID.count + 1)) }
        if slotByID[i] >= 0 { return slotByID[i] }
        var id = Int32(slots.count)
        if slotByTerm != nil {
            let bytes = Array(t)
            if let known = slotByTerm![bytes] { id = known } else { slotByTerm![bytes] = id }
        }
        if id == Int32(slots.count) {
            slots.append(Slot(termStart: Int32(termBytes.count), termLength: Int32(t.count)))
            if let b = t.baseAddress { termBytes.append(b, count: t.count) }
        }
        slotByID[i] = id
        return id
    }

    /// Lays the entries out as a segment image: terms in byte order, each term's entries in
    /// the order they came (ascending ordinals).
    private func seal() {
        let order = TermOrder.sorted(slots.count, prefix: { TermOrder.prefix(term($0)) }, less: { x, y in
            compareBytes(UnsafeRawBufferPointer(term(x)), UnsafeRawBufferPointer(term(y))) < 0
        })
        // Each term's place: key (segment number, term), then value (first number, entries).
        var size = 0
        var items: [SegmentImage.Item] = []
        items.reserveCapacity(order.count)
        var cursor = [Int](repeating: 0, count: slots.count)
        for s in order {
            let slot = slots.base[s]
            let key = size
            let value = key + 4 + Int(slot.termLength)
            let end = value + 4 + slot.bytes
            items.append(SegmentImage.Item(key: key, value: value, end: end, first: UInt32(slot.first)))
            cursor[s] = value + 4
            size = end
        }
        var image = SegmentImage(capacity: size)
        let p = image.bytes.base
        for (item, s) in zip(items, order) {
            let t = term(s)
            if let b = t.baseAddress { (p + item.key + 4).update(from: b, count: t.count) }
        }
        // Every entry to its term's next position, in arrival order.
        var previous = [Int32](repeating: -1, count: slots.count)
        for i in 0..<entries.count {
            let e = entries.base[i]
            let s = Int(e.slot)
            var at = cursor[s]
            var delta = previous[s] < 0 ? 0 : UInt32(e.ordinal - previous[s])
            while delta >= 0x80 {
                p[at] = UInt8(truncatingIfNeeded: delta) | 0x80
                at += 1
                delta >>= 7
            }
            p[at] = UInt8(delta)
            at += 1
            (p + at).update(from: bodies.base + Int(e.bodyStart), count: Int(e.bodyLength))
            cursor[s] = at + Int(e.bodyLength)
            previous[s] = e.ordinal
        }
        image.bytes.count = size
        image.items = items
        image.postingCount = entries.count
        sealedImage = image
        freeBuffers()
        slotByID = []
        slotByTerm = nil
    }

    /// Transactions that wrote the run's segment as it was made (the writer's alone, once the
    /// run is sealed; tests read it).
    var timesWritten = 0

    /// The sealed run's segment image (nil before the last document).
    /// See the class comment for when the writer may read it.
    var image: SegmentImage? { sealedImage }
}

/// Prepares document bodies as `FullTextPreparer` does and groups each run of `runLength`
/// consecutive bodies' entries by term (`FullTextRun`), on the calling thread: `tessera
/// import --batch N` runs it on its parser thread with `runLength` N, so that each batch's
/// segment is made before the batch is saved. Used by one thread at a time.
package final class FullTextRunPreparer {
    /// Runs longer than this are not made: their segment would be larger than a transaction
    /// writes as one (`FullTextPendingChanges.segmentPostingLimit`) at 100 terms a document.
    package static let longestRun = 10_000

    let preparer: FullTextPreparer
    private let runLength: Int?
    private var runs: [FullTextRun?] = []

    /// A preparer of `preparer`'s entries that also makes runs of `runLength` documents (none
    /// when nil, 1 or above `longestRun`).
    package init(_ preparer: FullTextPreparer, runLength: Int?) {
        self.preparer = preparer
        self.runLength = runLength.flatMap { $0 > 1 && $0 <= Self.longestRun ? $0 : nil }
    }

    /// True if no index of the collection can use prepared entries.
    package var isEmpty: Bool { preparer.isEmpty }

    /// Adds a body's entries (one per covered index, as `FullTextPreparer` makes them) each to
    /// the current run of its index (`prepare(_:)` in Collection.swift does both).
    func addToRuns(_ fullText: inout [PreparedFullText]) {
        guard let runLength, !fullText.isEmpty else { return }
        if runs.count != fullText.count { runs = Array(repeating: nil, count: fullText.count) }
        for i in fullText.indices {
            let run = runs[i] ?? FullTextRun(length: runLength)
            fullText[i].run = run
            fullText[i].ordinal = run.add(fullText[i])
            runs[i] = run.count == runLength ? nil : run
        }
    }
}
