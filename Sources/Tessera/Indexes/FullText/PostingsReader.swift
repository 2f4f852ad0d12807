/// What full-text evaluation needs from storage: postings by term and by prefix, and the
/// statistics BM25 uses. The engine implements it over an index's LMDB tables (layout in
/// `FullTextPostingsCodec`); `InMemoryPostingsReader` is the reference implementation.
///
/// Implementations read one consistent snapshot (one LMDB read transaction) for the whole
/// evaluation of a query.
public protocol PostingsReader {
    /// How the index names a document (document-ID bytes, an internal number…).
    associatedtype DocKey: Hashable

    /// Every posting of exactly `term`: one per (document, column) holding it.
    ///
    /// - Parameter column: When not nil, only that column is needed; implementations may
    ///   still return other columns (evaluation filters them).
    func postings(forTerm term: String, column: Int?) throws -> [Posting<DocKey>]

    /// Every posting of every term starting with `prefix` (an LMDB range scan over
    /// `FullTextPostingsCodec.prefixScanKey(prefix)`). A document may appear once per
    /// matching term and column.
    func postings(forPrefix prefix: String, column: Int?) throws -> [Posting<DocKey>]

    /// The number of indexed documents and their total token count.
    func corpusStatistics() throws -> FullTextCorpusStatistics

    /// A document's indexed token count (its doc-stats entry), for BM25 length normalisation.
    func documentLength(_ doc: DocKey) throws -> Int
}

/// The positions of one term in one column of one document.
public struct Posting<DocKey: Hashable>: Hashable {
    /// The document.
    public var doc: DocKey
    /// The column (index of the expression in the full-text index), from 0.
    public var column: Int
    /// Token positions in that column, ascending.
    public var positions: [UInt32]

    /// Creates a posting.
    public init(doc: DocKey, column: Int, positions: [UInt32]) {
        self.doc = doc
        self.column = column
        self.positions = positions
    }
}

extension Posting: Sendable where DocKey: Sendable {}
