import LMDB

/// An open index: its definition, its LMDB table(s), and its compiled expressions.
///
/// Value and array indexes store one LMDB key per entry (`IndexKey`: the encoded tuple, the
/// document ID and a trailer) with an empty value; full-text indexes store postings.
final class IndexStore: @unchecked Sendable {
    // @unchecked Sendable: every stored property is immutable after init; the compiled
    // evaluators capture only immutable state and write only to the ExecContext passed in.

    let definition: IndexDefinition
    let collection: CollectionKey
    /// Value/array entries, or full-text postings.
    let table: Table
    /// Full-text per-document statistics (nil for other kinds).
    let statsTable: Table?
    /// Index expressions bound to a single source (slot 0).
    let expressions: [BoundExpr]
    /// The partial-index condition, bound to slot 0.
    let whereClause: BoundExpr?
    /// Array index: the path of each nesting level.
    let arrayLevels: [[PathComponent]]
    private let evaluators: [Evaluator]
    private let whereEvaluator: Evaluator?
    let fullText: FullTextIndexer?
    let variableCount: Int

    init(definition: IndexDefinition, collection: CollectionKey, table: Table, statsTable: Table?,
         compiled: CompiledIndexDefinition) {
        self.definition = definition
        self.collection = collection
        self.table = table
        self.statsTable = statsTable
        self.expressions = compiled.expressions
        self.whereClause = compiled.whereClause
        self.arrayLevels = compiled.arrayLevels
        self.variableCount = compiled.variableCount
        self.evaluators = compiled.expressions.map { ExpressionCompiler.compile($0) }
        self.whereEvaluator = compiled.whereClause.map { ExpressionCompiler.compile($0) }
        self.fullText = definition.type == .fullText ? FullTextIndexer(definition: definition) : nil
    }

    static func tableName(_ collection: CollectionKey, _ name: String) -> String {
        "idx:" + collection.fullName + ":" + name
    }

    static func open(_ def: IndexDefinition, collection: CollectionKey, txn: Transaction) throws -> IndexStore {
        let compiled = try IndexCompiler.compile(def, collection: collection)
        let table = try txn.createTable(tableName(collection, def.name))
        var stats: Table? = nil
        if def.type == .fullText {
            stats = try txn.createTable(tableName(collection, def.name) + ":stats")
        }
        return IndexStore(definition: def, collection: collection, table: table, statsTable: stats, compiled: compiled)
    }

    func drop(txn: Transaction) throws {
        WriteContext.current?.discardFullText(for: self)
        try txn.drop(table, delete: true)
        if let statsTable { try txn.drop(statsTable, delete: true) }
    }

    // MARK: - Entries

    /// The index keys one document contributes (sorted, unique). Empty when the document is
    /// outside the partial index's `where`, or (array index) has no reachable element.
    func entries(docID: String, body: UnsafeRawBufferPointer, txn: Transaction, context: ExecContext? = nil) -> [[UInt8]] {
        guard let root = BinaryValue.root(body) else { return [] }
        let ctx = context ?? ExecContext(sourceCount: 1, variableCount: variableCount, aggregateCount: 0, parameters: [:], txn: txn)
        ctx.slots[0].state = .document
        ctx.slots[0].body = root
        if let w = whereEvaluator, Semantics.truth(w(ctx)) != .true { return [] }
        switch definition.type {
        case .value:
            return [IndexKey.make(values: evaluators.map { $0(ctx) }, docID: docID).key]
        case .array:
            var keys = Set<[UInt8]>()
            var elements: [Value] = []
            collectElements(root.value(at: arrayLevels[0]), level: 1, into: &elements)
            for e in elements {
                let values: [Value]
                if evaluators.isEmpty {
                    values = [e]
                } else {
                    ctx.slots[0] = SourceSlot(state: .element, element: e)
                    values = evaluators.map { $0(ctx) }
                }
                keys.insert(IndexKey.make(values: values, docID: docID).key)
            }
            return keys.sorted { $0.lexicographicallyPrecedes($1) }
        case .fullText:
            return []
        }
    }

    /// The values of the index expressions for a document, or nil when it is outside the
    /// partial index's `where` (full-text columns).
    func columnValues(body: UnsafeRawBufferPointer, txn: Transaction, context: ExecContext? = nil) -> [Value]? {
        guard let root = BinaryValue.root(body) else { return nil }
        let ctx = context ?? ExecContext(sourceCount: 1, variableCount: variableCount, aggregateCount: 0, parameters: [:], txn: txn)
        var slot = SourceSlot(state: .document)
        slot.body = root
        ctx.slots[0] = slot
        if let w = whereEvaluator, Semantics.truth(w(ctx)) != .true { return nil }
        return evaluators.map { $0(ctx) }
    }

    /// The index expressions' values for a document (ignoring `where`).
    func expressionValues(body: BinaryValue, txn: Transaction) -> [Value] {
        let ctx = ExecContext(sourceCount: 1, variableCount: variableCount, aggregateCount: 0, parameters: [:], txn: txn)
        var slot = SourceSlot(state: .document)
        slot.body = body
        ctx.slots[0] = slot
        return evaluators.map { $0(ctx) }
    }

    /// The innermost elements reachable through the array levels (non-arrays contribute none).
    func collectElements(_ v: Value, level: Int, into out: inout [Value]) {
        guard case .array(let items) = v else { return }
        if level == arrayLevels.count {
            out.append(contentsOf: items)
            return
        }
        for item in items { collectElements(item.value(at: arrayLevels[level]), level: level + 1, into: &out) }
    }

    /// Replaces this index's entries for one document: `old` body out, `new` body in; only the
    /// difference is written.
    func update(txn: Transaction, docID: String, old: UnsafeRawBufferPointer?, new: UnsafeRawBufferPointer?) throws {
        if let fullText {
            try DatabaseError.checkingFullText(index: definition.name) {
                try fullText.update(store: self, txn: txn, docID: docID, old: old, new: new)
            }
            return
        }
        let before = old.map { entries(docID: docID, body: $0, txn: txn) } ?? []
        let after = new.map { entries(docID: docID, body: $0, txn: txn) } ?? []
        if before == after { return }
        let keep = Set(before).intersection(after)
        for k in before where !keep.contains(k) { try txn.delete(table, key: k) }
        for k in after where !keep.contains(k) { try txn.put(table, key: k, value: []) }
    }

    /// Builds the index over every live document: collect, sort, append.
    func backfill(txn: Transaction, docs: Table) throws {
        if let fullText {
            try DatabaseError.checkingFullText(index: definition.name) { try fullText.backfill(store: self, txn: txn, docs: docs) }
            return
        }
        var all: [[UInt8]] = []
        let ctx = ExecContext(sourceCount: 1, variableCount: variableCount, aggregateCount: 0, parameters: [:], txn: txn)
        try txn.withCursor(docs) { c in
            try c.forEach { k, v in
                guard let h = DocumentRecord.header(v), !h.deleted else { return true }
                let id = String(decoding: k, as: UTF8.self)
                all.append(contentsOf: entries(docID: id, body: DocumentRecord.body(v), txn: txn, context: ctx))
                return true
            }
        }
        all.sort(by: bytesLess)
        var previous: [UInt8]? = nil
        for k in all where k != previous {
            try txn.put(table, key: k, value: [], flags: .append)
            previous = k
        }
    }
}

/// memcmp order of two byte arrays (LMDB's key order), shorter first on a common prefix.
@inline(__always)
func bytesLess(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in compareKeys(pa, pb) < 0 } }
}

/// Keeps every index of a collection in step with its documents.
enum IndexMaintenance {
    static func update(store: CollectionStore, txn: Transaction, docID: String,
                       old: UnsafeRawBufferPointer?, new: UnsafeRawBufferPointer?) throws {
        for index in store.indexes {
            try index.update(txn: txn, docID: docID, old: old, new: new)
        }
    }
}
