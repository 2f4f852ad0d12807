/// What full-text evaluation needs from storage: each term's postings in document-number
/// order, and the statistics BM25 uses. The engine implements it over an index's LMDB tables
/// (layout in `FullTextPostingsCodec`); `InMemoryPostingsReader` is the reference
/// implementation.
///
/// Implementations read one consistent snapshot (one LMDB read transaction) for the whole
/// evaluation of a query.
protocol PostingsReader {
    /// How the index names a document to its users (document-ID bytes, …).
    associatedtype DocKey: Hashable

    /// The postings of exactly `term`, in ascending document number.
    ///
    /// - Parameter positions: When false, implementations may leave positions out (the list
    ///   then has `hasPositions == false`); frequencies and lengths are always present.
    func postings(forTerm term: String, positions: Bool) throws -> PostingList

    /// The postings of every term starting with `prefix`, one list per term.
    func postings(forPrefix prefix: String, positions: Bool) throws -> [PostingList]

    /// The number of indexed documents and their total token count.
    func corpusStatistics() throws -> FullTextCorpusStatistics

    /// The document that has this number, nil if none has.
    func documentKey(forNumber number: UInt32) throws -> DocKey?
}

/// One term's postings: documents in ascending number with the term's frequency, the
/// document's length and (optionally) the encoded positions (`FullTextPostingsCodec`).
///
/// Positions are referenced, not copied: a list read from LMDB points into the memory map and
/// is valid only inside the read transaction it came from; lists built with `append` own
/// their bytes.
struct PostingList {
    /// Document numbers, ascending, unique.
    var documents: [UInt32] = []
    /// The term's frequency in each document.
    var frequencies: [UInt32] = []
    /// Each document's indexed token count.
    var lengths: [UInt32] = []
    /// Whether positions were loaded.
    let hasPositions: Bool
    /// Each document's encoded positions (empty without positions).
    var positionRefs: [UnsafeRawBufferPointer] = []
    /// Owns the bytes `positionRefs` point to, for lists built with `append`.
    private var arena: PositionArena?

    /// Creates an empty list.
    init(hasPositions: Bool) {
        self.hasPositions = hasPositions
    }

    /// A list over arrays filled elsewhere (positions borrowed from the caller's storage).
    init(documents: [UInt32], frequencies: [UInt32], lengths: [UInt32], positionRefs: [UnsafeRawBufferPointer]?) {
        self.documents = documents
        self.frequencies = frequencies
        self.lengths = lengths
        self.hasPositions = positionRefs != nil
        self.positionRefs = positionRefs ?? []
    }

    /// The number of documents.
    var count: Int { documents.count }

    /// Reserves room for `n` documents.
    mutating func reserveCapacity(_ n: Int) {
        documents.reserveCapacity(n)
        frequencies.reserveCapacity(n)
        lengths.reserveCapacity(n)
        if hasPositions { positionRefs.reserveCapacity(n) }
    }

    /// Appends a document (numbers must ascend); the positions are copied.
    mutating func append(document: UInt32, frequency: UInt32, length: UInt32, positions: UnsafeRawBufferPointer) {
        documents.append(document)
        frequencies.append(frequency)
        lengths.append(length)
        if hasPositions {
            if arena == nil { arena = PositionArena() }
            positionRefs.append(arena!.store(positions))
        }
    }

    /// Calls `body` with the encoded positions of the `i`-th document (empty without positions).
    @inline(__always)
    func withPositions<R>(at i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        guard hasPositions else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try body(positionRefs[i])
    }

    /// The decoded positions of the `i`-th document, by column.
    func positions(at i: Int) throws -> [FullTextColumnPositions] {
        try withPositions(at: i) { try FullTextPostingsCodec.decodePositions(raw: $0) }
    }

    /// The index of `document` in the list, or nil (binary search).
    func index(of document: UInt32) -> Int? {
        var lo = 0
        var hi = documents.count
        while lo < hi {
            let mid = (lo + hi) >> 1
            if documents[mid] < document { lo = mid + 1 } else { hi = mid }
        }
        return lo < documents.count && documents[lo] == document ? lo : nil
    }
}

/// Append-only byte storage whose bytes never move (chunks are never reallocated).
final class PositionArena {
    private var chunks: [UnsafeMutableRawBufferPointer] = []
    private var used = 0

    func store(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        if bytes.isEmpty { return UnsafeRawBufferPointer(start: nil, count: 0) }
        if chunks.isEmpty || used + bytes.count > chunks[chunks.count - 1].count {
            chunks.append(.allocate(byteCount: max(1 << 16, bytes.count), alignment: 8))
            used = 0
        }
        let chunk = chunks[chunks.count - 1]
        let dest = UnsafeMutableRawBufferPointer(rebasing: chunk[used..<(used + bytes.count)])
        dest.copyMemory(from: bytes)
        used += bytes.count
        return UnsafeRawBufferPointer(dest)
    }

    deinit {
        for c in chunks { c.deallocate() }
    }
}
