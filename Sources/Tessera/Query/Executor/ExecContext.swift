import LMDB

/// What one data source currently holds while a row is being evaluated.
struct SourceSlot {
    enum State: UInt8 { case absent, document, element, covered }
    var state: State = .absent
    /// The document ID bytes (in LMDB memory, valid for the read transaction).
    var id: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)
    /// The document header.
    var record: DocumentRecord?
    /// The document body, read in place.
    var body: BinaryValue?
    /// The current UNNEST element.
    var element: Value = .missing
    /// The full-text relevance of the current document (when a MATCH drives this source).
    var rank: Double = 0
    /// True when a MATCH drives this source and the current document matched.
    var matched = false
    /// The full-text index whose scan bound this row (lower-cased name), if any.
    var drivingIndex: String? = nil
    /// Covering index scan: the values of the index expressions (plain paths) for this entry.
    var covered: [Value] = []
    var coveredPaths: [[PathComponent]] = []

    /// The document ID when it is not in LMDB memory (full-text matches).
    var ownedID: [UInt8]? = nil

    var idString: String {
        if let ownedID { return String(decoding: ownedID, as: UTF8.self) }
        return String(decoding: id, as: UTF8.self)
    }

    /// The whole value of the source: the body (decoded) or the element.
    var wholeValue: Value {
        switch state {
        case .absent: return .missing
        case .document: return body?.toValue() ?? .missing
        case .element: return element
        case .covered: return .missing
        }
    }

    /// A path inside the source's value, read in place for documents.
    @inline(__always)
    func value(at path: [PathComponent]) -> Value {
        switch state {
        case .absent: return .missing
        case .document:
            guard let body else { return .missing }
            return path.isEmpty ? body.toValue() : body.value(at: path)
        case .element: return path.isEmpty ? element : element.value(at: path)
        case .covered:
            for (i, p) in coveredPaths.enumerated() where p == path { return covered[i] }
            return .missing
        }
    }
}

/// Per-execution state shared by all compiled expressions of a query.
final class ExecContext {
    var slots: [SourceSlot]
    var variables: [Value]
    var aggregateValues: [Value]
    let parameters: [String: Value]
    let txn: Transaction
    /// Collection stores by source slot (for MATCH on an index that does not drive the source).
    var stores: [Int: CollectionStore] = [:]
    /// Matches of such MATCHes, by index and query text.
    var fullTextCache: [String: [[UInt8]: Double]] = [:]
    /// An error raised inside an evaluator (which cannot throw); the executor rethrows it.
    var deferredError: (any Error)?

    /// Documents (ID bytes → rank) matching `query` in full-text index `index` of `slot`'s collection.
    func fullTextMatches(slot: Int, index: String, query: String) -> [[UInt8]: Double] {
        let key = index.lowercased() + "\u{0}" + query
        if let cached = fullTextCache[key] { return cached }
        var result: [[UInt8]: Double] = [:]
        do {
            guard let store = stores[slot]?.indexes.first(where: { $0.definition.type == .fullText && $0.definition.name.lowercased() == index.lowercased() }),
                  let indexer = store.fullText, let stats = store.statsTable else { return [:] }
            let compiled = try CompiledFullTextQuery(query, tokenizer: indexer.tokenizer, columns: indexer.columns)
            result = try compiled.evaluate(in: LMDBPostingsReader(txn: txn, postings: store.table, stats: stats), ranking: true).ranks
        } catch {
            if deferredError == nil { deferredError = error }
        }
        fullTextCache[key] = result
        return result
    }

    init(sourceCount: Int, variableCount: Int, aggregateCount: Int, parameters: [String: Value], txn: Transaction) {
        slots = Array(repeating: SourceSlot(), count: sourceCount)
        variables = Array(repeating: .missing, count: variableCount)
        aggregateValues = Array(repeating: .missing, count: aggregateCount)
        self.parameters = parameters
        self.txn = txn
    }
}

/// A compiled expression: evaluates against the context's current row.
typealias Evaluator = (ExecContext) -> Value
