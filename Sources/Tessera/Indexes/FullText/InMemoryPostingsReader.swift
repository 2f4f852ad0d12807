/// A `PostingsReader` over in-memory tables laid out exactly like the LMDB ones
/// (`FullTextPostingsCodec`): sorted `term ‖ 0x00 ‖ docKey` keys → encoded positions, and
/// `docKey` → encoded token count. For tests and as a reference for the LMDB-backed reader.
///
/// ```swift
/// let reader = InMemoryPostingsReader()
/// reader.add(document: Array("a".utf8), columns: ["Linux kernel"], tokenizer: tokenizer)
/// let hits = try CompiledFullTextQuery("linux", tokenizer: tokenizer, columns: ["body"]).evaluate(in: reader)
/// ```
///
/// Not thread-safe: a reference type with a lazily rebuilt sorted key list.
public final class InMemoryPostingsReader: PostingsReader {
    /// Document-ID bytes.
    public typealias DocKey = [UInt8]

    private var postings: [[UInt8]: [UInt8]] = [:]
    private var docStats: [[UInt8]: [UInt8]] = [:]
    private var docKeys: [[UInt8]: [[UInt8]]] = [:]
    private var totalTokens = 0
    private var sortedKeysCache: [[UInt8]]?

    /// Creates an empty index.
    public init() {}

    /// The number of indexed documents.
    public var documentCount: Int { docStats.count }

    /// The number of postings entries (term, document pairs).
    public var postingsCount: Int { postings.count }

    /// Indexes (or re-indexes) a document: its value for each column, through `tokenizer`.
    public func add(document docKey: [UInt8], columns: [Value], tokenizer: FullTextTokenizer) {
        remove(document: docKey)
        var keys: [[UInt8]] = []
        let count = tokenizer.forEachIndexEntry(for: columns) { term, value in
            let key = FullTextPostingsCodec.postingsKey(term: term, docKey: docKey)
            postings[key] = Array(value)
            keys.append(key)
        }
        docKeys[docKey] = keys
        docStats[docKey] = FullTextPostingsCodec.encodeDocumentLength(count)
        totalTokens += count
        sortedKeysCache = nil
    }

    /// Removes a document's entries (no-op if it is not indexed).
    public func remove(document docKey: [UInt8]) {
        guard let keys = docKeys.removeValue(forKey: docKey) else { return }
        for k in keys { postings.removeValue(forKey: k) }
        if let stats = docStats.removeValue(forKey: docKey) {
            totalTokens -= (try? FullTextPostingsCodec.decodeDocumentLength(stats)) ?? 0
        }
        sortedKeysCache = nil
    }

    /// All postings keys in LMDB (memcmp) order.
    public var sortedKeys: [[UInt8]] {
        if let k = sortedKeysCache { return k }
        let k = postings.keys.sorted { $0.lexicographicallyPrecedes($1) }
        sortedKeysCache = k
        return k
    }

    /// The postings of keys starting with `start`, as an LMDB cursor range scan would find.
    private func scan(startingWith start: [UInt8], column: Int?) throws -> [Posting<DocKey>] {
        let keys = sortedKeys
        var lo = 0
        var hi = keys.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if keys[mid].lexicographicallyPrecedes(start) { lo = mid + 1 } else { hi = mid }
        }
        var out: [Posting<DocKey>] = []
        var i = lo
        while i < keys.count, keys[i].starts(with: start) {
            guard let (_, doc) = FullTextPostingsCodec.splitPostingsKey(keys[i]) else {
                throw FullTextIndexCorruption("postings key without separator")
            }
            for c in try FullTextPostingsCodec.decodePositions(postings[keys[i]]!) where column == nil || c.column == column {
                out.append(Posting(doc: doc, column: c.column, positions: c.positions))
            }
            i += 1
        }
        return out
    }

    /// The postings of exactly `term` (a range scan over `term ‖ 0x00`).
    public func postings(forTerm term: String, column: Int?) throws -> [Posting<DocKey>] {
        try scan(startingWith: FullTextPostingsCodec.termKeyPrefix(term), column: column)
    }

    /// The postings of every term starting with `prefix` (a range scan over its bytes).
    public func postings(forPrefix prefix: String, column: Int?) throws -> [Posting<DocKey>] {
        try scan(startingWith: FullTextPostingsCodec.prefixScanKey(prefix), column: column)
    }

    /// Indexed documents and their total token count.
    public func corpusStatistics() throws -> FullTextCorpusStatistics {
        FullTextCorpusStatistics(documentCount: docStats.count, totalTokens: totalTokens)
    }

    /// A document's indexed token count (0 if it is not indexed).
    public func documentLength(_ doc: [UInt8]) throws -> Int {
        guard let v = docStats[doc] else { return 0 }
        return try FullTextPostingsCodec.decodeDocumentLength(v)
    }
}
