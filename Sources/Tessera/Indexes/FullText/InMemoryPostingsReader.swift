/// A `PostingsReader` over in-memory tables: each document gets the next document number
/// when added, each term maps document numbers to their encoded positions. For tests and as
/// a reference for the LMDB-backed reader.
///
/// ```swift
/// let reader = InMemoryPostingsReader()
/// reader.add(document: Array("a".utf8), columns: ["Linux kernel"], tokenizer: tokenizer)
/// let hits = try CompiledFullTextQuery("linux", tokenizer: tokenizer, columns: ["body"]).evaluate(in: reader)
/// ```
///
/// Not thread-safe: a reference type.
final class InMemoryPostingsReader: PostingsReader {
    /// Document-ID bytes.
    typealias DocKey = [UInt8]

    private struct Entry {
        var frequency: UInt32
        var positions: [UInt8]
    }

    /// term bytes → document number → entry.
    private var postings: [[UInt8]: [UInt32: Entry]] = [:]
    private var numbers: [[UInt8]: UInt32] = [:]
    private var keys: [UInt32: [UInt8]] = [:]
    private var lengths: [UInt32: UInt32] = [:]
    private var termsOf: [UInt32: [[UInt8]]] = [:]
    private var nextNumber: UInt32 = 0
    private var totalTokens = 0

    /// Creates an empty index.
    init() {}

    /// The number of indexed documents.
    var documentCount: Int { numbers.count }

    /// The number of (term, document) pairs.
    var postingsCount: Int { postings.values.reduce(0) { $0 + $1.count } }

    /// Indexes (or re-indexes) a document: its value for each column, through `tokenizer`.
    /// A re-indexed document keeps its number.
    func add(document docKey: [UInt8], columns: [Value], tokenizer: FullTextTokenizer) {
        let number: UInt32
        if let n = numbers[docKey] {
            number = n
            removeEntries(number)
        } else {
            number = nextNumber
            nextNumber += 1
            numbers[docKey] = number
            keys[number] = docKey
        }
        var terms: [[UInt8]] = []
        let count = tokenizer.forEachIndexEntry(for: columns) { term, value in
            let t = Array(term)
            let raw = UnsafeRawBufferPointer(value)
            let frequency = (try? FullTextPostingsCodec.positionCount(raw)) ?? 0
            postings[t, default: [:]][number] = Entry(frequency: UInt32(frequency), positions: Array(value))
            terms.append(t)
        }
        termsOf[number] = terms
        lengths[number] = UInt32(count)
        totalTokens += count
    }

    /// Removes a document's entries (no-op if it is not indexed).
    func remove(document docKey: [UInt8]) {
        guard let number = numbers.removeValue(forKey: docKey) else { return }
        removeEntries(number)
        keys[number] = nil
    }

    private func removeEntries(_ number: UInt32) {
        for t in termsOf.removeValue(forKey: number) ?? [] {
            postings[t]?[number] = nil
            if postings[t]?.isEmpty == true { postings[t] = nil }
        }
        totalTokens -= Int(lengths.removeValue(forKey: number) ?? 0)
    }

    private func list(_ entries: [UInt32: Entry], positions: Bool) -> PostingList {
        var out = PostingList(hasPositions: positions)
        for n in entries.keys.sorted() {
            let e = entries[n]!
            e.positions.withUnsafeBytes { out.append(document: n, frequency: e.frequency, length: lengths[n] ?? 0, positions: $0) }
        }
        return out
    }

    /// The postings of exactly `term`.
    func postings(forTerm term: String, positions: Bool) throws -> PostingList {
        list(postings[Array(term.utf8)] ?? [:], positions: positions)
    }

    /// The postings of every term starting with `prefix`, in term order.
    func postings(forPrefix prefix: String, positions: Bool) throws -> [PostingList] {
        let p = Array(prefix.utf8)
        return postings.keys.filter { $0.starts(with: p) }.sorted { $0.lexicographicallyPrecedes($1) }
            .map { list(postings[$0]!, positions: positions) }
    }

    /// Indexed documents and their total token count.
    func corpusStatistics() throws -> FullTextCorpusStatistics {
        FullTextCorpusStatistics(documentCount: numbers.count, totalTokens: totalTokens)
    }

    /// The document with this number.
    func documentKey(forNumber number: UInt32) throws -> [UInt8]? { keys[number] }
}
