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
    private(set) var items: [Item] = []
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

/// The full-text entries of `length` consecutive documents for one index, numbered 0..<length
/// in the order they were added, grouped by term into a segment image once the last is added.
///
/// `@unchecked Sendable`: one thread adds the documents and seals the run (`add`), before it
/// hands the last document's entries to the writer; the writer reads `image` only once it has
/// received all `length` documents, so the hand-over of the last orders the sealing before
/// that read. Until then the writer reads only the immutable `length` and each entry's ordinal.
final class FullTextRun: @unchecked Sendable {
    let length: Int
    private(set) var count = 0
    private var builder: FullTextPendingChanges?
    private var sealedImage: SegmentImage?

    init(store: IndexStore, length: Int) {
        self.length = length
        builder = FullTextPendingChanges(
            store: store, state: FullTextIndexState(statistics: FullTextCorpusStatistics(documentCount: 0, totalTokens: 0), nextDocument: 0),
            recordsOnly: true)
    }

    deinit { sealedImage?.deallocate() }

    /// Adds the next document's entries and returns its ordinal; the last one seals the run.
    func add(_ prepared: PreparedFullText) -> Int32 {
        let ordinal = Int32(count)
        if let builder {
            prepared.forEach { key, tokenCount, termID, term, value, frequency in
                builder.addInterned(key: key, termID: termID, term: term, document: UInt32(ordinal), tokenCount: tokenCount,
                                    positions: value, frequency: frequency)
            }
        }
        count += 1
        if count == length {
            // Records only: the image reads no stream, so it cannot fail; if it did, the
            // run would have no image and its documents would be queued one by one.
            sealedImage = try? builder?.segmentImage()
            builder = nil
        }
        return ordinal
    }

    /// Transactions that wrote the run's segment as it was made (the writer's alone, once the
    /// run is sealed; tests read it).
    var timesWritten = 0

    /// The sealed run's segment image (nil before the last document, or if it was not made).
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

    private let preparer: FullTextPreparer
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

    /// Adds the full-text entries of `prepared`'s body for each covered index, each in the
    /// current run of its index.
    package func prepare(_ prepared: inout PreparedBody) {
        preparer.prepare(&prepared)
        guard let runLength, !prepared.fullText.isEmpty else { return }
        if runs.count != prepared.fullText.count { runs = Array(repeating: nil, count: prepared.fullText.count) }
        for i in prepared.fullText.indices {
            let run = runs[i] ?? FullTextRun(store: preparer.store(of: i), length: runLength)
            prepared.fullText[i].run = run
            prepared.fullText[i].ordinal = run.add(prepared.fullText[i])
            runs[i] = run.count == runLength ? nil : run
        }
    }
}
