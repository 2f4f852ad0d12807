import LMDB

/// Maintains a full-text index in LMDB and reads it back for `MATCH()`.
///
/// Tables (see `FullTextPostingsCodec`):
/// - postings `idx:<scope>.<coll>:<name>`: `term ‖ 0x00 ‖ docID` → per column the positions;
/// - statistics `…:stats`: `docID` → token count (BM25 document length), and under the key
///   `FF` (never a UTF-8 document ID) the corpus totals (documents, tokens).
///
/// A save tokenizes the old and new text, deletes the postings of terms that disappeared,
/// writes the others, and adjusts the statistics, all in the document's transaction.
final class FullTextIndexer: @unchecked Sendable {
    // @unchecked Sendable: immutable after init; the tokenizer is Sendable (pooled workspaces).
    let definition: IndexDefinition
    let tokenizer: FullTextTokenizer
    /// Column names for `column:term` searches: the index expressions as written.
    let columns: [String]
    static let corpusKey: [UInt8] = [0xFF]

    init(definition: IndexDefinition) {
        self.definition = definition
        tokenizer = FullTextTokenizer(language: FullTextLanguage(definition.language ?? "en"), ignoreAccents: definition.ignoreAccents)
        var cols: [String] = []
        for text in definition.expressions {
            if let list = try? SQLParser.parseExpressionList(text) {
                cols += list.map { SQLPrinter.print($0) }
            }
        }
        columns = cols
    }

    /// Rejects definitions a full-text index cannot take (nothing is created).
    static func validate(_ def: IndexDefinition) throws {
        if def.expressions.isEmpty { throw DatabaseError(.invalidIndex, "full-text index '\(def.name)' needs at least one expression") }
    }

    /// The postings (key → value) and token count of one document, or nil if it is outside
    /// the index (partial `where`) or unreadable.
    func entries(store: IndexStore, docID: String, body: UnsafeRawBufferPointer, txn: Transaction) -> (postings: [([UInt8], [UInt8])], tokens: Int)? {
        guard let columns = store.columnValues(body: body, txn: txn) else { return nil }
        let docKey = Array(docID.utf8)
        var out: [([UInt8], [UInt8])] = []
        let count = tokenizer.forEachIndexEntry(for: columns) { term, value in
            out.append((FullTextPostingsCodec.postingsKey(term: term, docKey: docKey), Array(value)))
        }
        return (out, count)
    }

    func update(store: IndexStore, txn: Transaction, docID: String, old: UnsafeRawBufferPointer?, new: UnsafeRawBufferPointer?) throws {
        let before = old.flatMap { entries(store: store, docID: docID, body: $0, txn: txn) }
        let after = new.flatMap { entries(store: store, docID: docID, body: $0, txn: txn) }
        if before == nil && after == nil { return }
        var newKeys: [[UInt8]: [UInt8]] = [:]
        for (k, v) in after?.postings ?? [] { newKeys[k] = v }
        var oldKeys: [[UInt8]: [UInt8]] = [:]
        for (k, v) in before?.postings ?? [] { oldKeys[k] = v }
        for (k, _) in before?.postings ?? [] where newKeys[k] == nil { try txn.delete(store.table, key: k) }
        for (k, v) in after?.postings ?? [] where oldKeys[k] != v { try txn.put(store.table, key: k, value: v) }
        guard let stats = store.statsTable else { return }
        let docKey = Array(docID.utf8)
        var corpus = try corpusStatistics(txn: txn, stats: stats)
        if let b = before {
            corpus.documentCount -= 1
            corpus.totalTokens -= b.tokens
            if after == nil { try txn.delete(stats, key: docKey) }
        }
        if let a = after {
            corpus.documentCount += 1
            corpus.totalTokens += a.tokens
            try txn.put(stats, key: docKey, value: FullTextPostingsCodec.encodeDocumentLength(a.tokens))
        }
        try txn.put(stats, key: FullTextIndexer.corpusKey, value: FullTextPostingsCodec.encodeCorpusStatistics(corpus))
    }

    func corpusStatistics(txn: Transaction, stats: Table) throws -> FullTextCorpusStatistics {
        guard let raw = try txn.get(stats, key: FullTextIndexer.corpusKey) else {
            return FullTextCorpusStatistics(documentCount: 0, totalTokens: 0)
        }
        return try FullTextPostingsCodec.decodeCorpusStatistics(Array(raw))
    }

    /// Builds the index over every live document: postings grouped by term (documents come
    /// in ID order, so each term's list is already sorted), then appended in key order.
    func backfill(store: IndexStore, txn: Transaction, docs: Table) throws {
        guard let stats = store.statsTable else { return }
        var byTerm: [[UInt8]: [UInt8]] = [:]  // term → (varint docKey length, docKey, varint value length, value)*
        var lengths: [([UInt8], Int)] = []
        var corpus = FullTextCorpusStatistics(documentCount: 0, totalTokens: 0)
        try txn.withCursor(docs) { c in
            try c.forEach { k, v in
                guard let h = DocumentRecord.header(v), !h.deleted else { return true }
                guard let columns = store.columnValues(body: DocumentRecord.body(v), txn: txn) else { return true }
                let docKey = Array(k)
                let count = tokenizer.forEachIndexEntry(for: columns) { term, value in
                    let t = Array(term)
                    byTerm[t, default: []].appendPosting(docKey: docKey, value: value)
                }
                lengths.append((docKey, count))
                corpus.documentCount += 1
                corpus.totalTokens += count
                return true
            }
        }
        for term in byTerm.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            let list = byTerm[term]!
            var i = 0
            while i < list.count {
                let (docKey, value, next) = list.readPosting(at: i)
                var key = term
                key.append(FullTextPostingsCodec.separator)
                key.append(contentsOf: docKey)
                try txn.put(store.table, key: key, value: Array(value), flags: .append)
                i = next
            }
        }
        for (docKey, count) in lengths { try txn.put(stats, key: docKey, value: FullTextPostingsCodec.encodeDocumentLength(count), flags: .append) }
        try txn.put(stats, key: FullTextIndexer.corpusKey, value: FullTextPostingsCodec.encodeCorpusStatistics(corpus))
    }

    /// Compares postings and statistics with those recomputed from the documents.
    func check(store: IndexStore, txn: Transaction, docs: Table, entries count: inout Int) throws -> [String] {
        var expected: [[UInt8]: [UInt8]] = [:]
        var lengths: [[UInt8]: Int] = [:]
        var corpus = FullTextCorpusStatistics(documentCount: 0, totalTokens: 0)
        try txn.withCursor(docs) { c in
            try c.forEach { k, v in
                guard let h = DocumentRecord.header(v), !h.deleted else { return true }
                let id = String(decoding: k, as: UTF8.self)
                if let e = entries(store: store, docID: id, body: DocumentRecord.body(v), txn: txn) {
                    for (key, value) in e.postings { expected[key] = value }
                    lengths[Array(k)] = e.tokens
                    corpus.documentCount += 1
                    corpus.totalTokens += e.tokens
                }
                return true
            }
        }
        let name = "\(store.collection):\(definition.name)"
        var problems: [String] = []
        var seen = 0
        try txn.withCursor(store.table) { c in
            try c.forEach { k, v in
                seen += 1
                let key = Array(k)
                let split = FullTextPostingsCodec.splitPostingsKey(key)
                let what = "term '\(split?.term ?? "?")' of document '\(String(decoding: split?.docKey ?? [], as: UTF8.self))'"
                if let e = expected.removeValue(forKey: key) {
                    if e != Array(v) { problems.append("\(name): wrong positions for \(what)") }
                } else {
                    problems.append("\(name): stale posting for \(what)")
                }
                return problems.count < 100
            }
        }
        count += seen
        for key in expected.keys.prefix(100) {
            let split = FullTextPostingsCodec.splitPostingsKey(key)
            problems.append("\(name): missing posting for term '\(split?.term ?? "?")' of document '\(String(decoding: split?.docKey ?? [], as: UTF8.self))'")
        }
        if let stats = store.statsTable {
            let stored = try corpusStatistics(txn: txn, stats: stats)
            if stored != corpus {
                problems.append("\(name): corpus statistics say \(stored.documentCount) documents / \(stored.totalTokens) tokens, expected \(corpus.documentCount) / \(corpus.totalTokens)")
            }
            try txn.withCursor(stats) { c in
                try c.forEach { k, v in
                    let key = Array(k)
                    if key == FullTextIndexer.corpusKey { return true }
                    if let want = lengths.removeValue(forKey: key) {
                        if (try? FullTextPostingsCodec.decodeDocumentLength(Array(v))) != want {
                            problems.append("\(name): wrong length for document '\(String(decoding: key, as: UTF8.self))'")
                        }
                    } else {
                        problems.append("\(name): stale length for document '\(String(decoding: key, as: UTF8.self))'")
                    }
                    return true
                }
            }
            for key in lengths.keys.prefix(20) {
                problems.append("\(name): missing length for document '\(String(decoding: key, as: UTF8.self))'")
            }
        }
        return problems
    }
}

extension Array where Element == UInt8 {
    /// Appends `varint(len) docKey varint(len) value`.
    mutating func appendPosting(docKey: [UInt8], value: UnsafeBufferPointer<UInt8>) {
        FullTextPostingsCodec.appendVarint(UInt64(docKey.count), to: &self)
        append(contentsOf: docKey)
        FullTextPostingsCodec.appendVarint(UInt64(value.count), to: &self)
        append(contentsOf: value)
    }

    /// Reads one entry written by `appendPosting`; returns the offset of the next.
    func readPosting(at i: Int) -> (ArraySlice<UInt8>, ArraySlice<UInt8>, Int) {
        var p = i
        func varint() -> Int {
            var v = 0, shift = 0
            while true {
                let b = self[p]; p += 1
                v |= Int(b & 0x7F) << shift
                if b < 0x80 { return v }
                shift += 7
            }
        }
        let kl = varint()
        let key = self[p..<(p + kl)]; p += kl
        let vl = varint()
        let value = self[p..<(p + vl)]; p += vl
        return (key, value, p)
    }
}

/// Postings read from LMDB inside the query's read transaction.
struct LMDBPostingsReader: PostingsReader {
    typealias DocKey = [UInt8]
    let txn: Transaction
    let postings: Table
    let stats: Table

    private func collect(prefix: [UInt8], column: Int?, termFilter: ((UnsafeRawBufferPointer) -> Bool)? = nil) throws -> [Posting<[UInt8]>] {
        var out: [Posting<[UInt8]>] = []
        try txn.withCursor(postings) { c in
            try c.forEach(prefix: prefix) { k, v in
                guard let sep = k.firstIndex(of: FullTextPostingsCodec.separator) else { return true }
                let docKey = Array(k[(sep + 1)...])
                for col in try FullTextPostingsCodec.decodePositions(v) where column == nil || col.column == column {
                    out.append(Posting(doc: docKey, column: col.column, positions: col.positions))
                }
                return true
            }
        }
        return out
    }

    func postings(forTerm term: String, column: Int?) throws -> [Posting<[UInt8]>] {
        try collect(prefix: FullTextPostingsCodec.termKeyPrefix(term), column: column)
    }

    func postings(forPrefix prefix: String, column: Int?) throws -> [Posting<[UInt8]>] {
        try collect(prefix: FullTextPostingsCodec.prefixScanKey(prefix), column: column)
    }

    func corpusStatistics() throws -> FullTextCorpusStatistics {
        guard let raw = try txn.get(stats, key: FullTextIndexer.corpusKey) else {
            return FullTextCorpusStatistics(documentCount: 0, totalTokens: 0)
        }
        return try FullTextPostingsCodec.decodeCorpusStatistics(Array(raw))
    }

    func documentLength(_ doc: [UInt8]) throws -> Int {
        guard let raw = try txn.get(stats, key: doc) else { return 0 }
        return try FullTextPostingsCodec.decodeDocumentLength(Array(raw))
    }
}
