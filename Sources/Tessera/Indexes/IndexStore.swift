import Synchronization

/// An open index of one collection: its definition, its tables, its compiled expressions and
/// `where`, and its kind (`IndexKind`), which does everything kind-specific.
final class IndexStore: @unchecked Sendable {
    // @unchecked Sendable: every stored property is immutable after init; the compiled
    // evaluators capture only immutable state and write only to the ExecContext passed in;
    // kinds are Sendable.

    let definition: IndexDefinition
    let collection: CollectionKey
    /// The main table (value/array entries, full-text postings).
    let table: StorageTable
    /// The kind's other tables, in the order of its `extraTableSuffixes`.
    let extraTables: [StorageTable]
    /// A value or array index's recent entries, a small table beside `table` that new keys
    /// go to first (`RecentEntries.swift`); nil for other kinds.
    let recent: StorageTable?
    /// Index expressions bound to a single source (slot 0).
    let expressions: [BoundExpr]
    /// The partial-index condition, bound to slot 0.
    let whereClause: BoundExpr?
    let variableCount: Int
    let kind: any IndexKind
    /// Planner statistics computed from a snapshot when none are stored (a database written
    /// before they existed), until a write stores them (`IndexStatistics.load`).
    let computedStatistics = Mutex<IndexStatistics?>(nil)
    /// The expressions as compiled paths when every one is a plain property path of the
    /// document (`city`, `address.zip`): they can be read in place, with no evaluation.
    let plainPaths: [CompiledPath]?
    private let evaluators: [Compiled]
    private let whereEvaluator: Evaluator?

    init(definition: IndexDefinition, collection: CollectionKey, table: StorageTable, extraTables: [StorageTable],
         compiled: CompiledIndexDefinition, kind: any IndexKind) {
        self.definition = definition
        self.collection = collection
        self.table = table
        self.extraTables = extraTables
        self.recent = kind is any KeyedIndexKind ? extraTables.first : nil
        self.expressions = compiled.expressions
        self.whereClause = compiled.whereClause
        self.variableCount = compiled.variableCount
        self.kind = kind
        self.evaluators = compiled.expressions.map { Compiled(ExpressionCompiler.compile($0)) }
        self.whereEvaluator = compiled.whereClause.map { ExpressionCompiler.compile($0) }
        let paths = compiled.expressions.compactMap { e -> CompiledPath? in
            if case .sourcePath(0, let p) = e, !p.isEmpty { return CompiledPath(p) }
            return nil
        }
        self.plainPaths = !paths.isEmpty && paths.count == compiled.expressions.count ? paths : nil
    }

    static func tableName(_ collection: CollectionKey, _ name: String) -> String {
        "idx:" + collection.fullName + ":" + name
    }

    /// Checks a definition without opening anything.
    /// - Throws: `DatabaseError(.invalidIndex)` saying what is wrong.
    static func validate(_ def: IndexDefinition, collection: CollectionKey) throws {
        let kindType = try IndexKinds.kind(of: def.type)
        let compiled = try IndexCompiler.compile(def, collection: collection, kind: kindType)
        _ = try kindType.init(definition: def, compiled: compiled)
    }

    /// Opens the index a definition describes (creating its tables in a write transaction).
    static func open(_ def: IndexDefinition, collection: CollectionKey, txn: Snapshot) throws -> IndexStore {
        let kindType = try IndexKinds.kind(of: def.type)
        let compiled = try IndexCompiler.compile(def, collection: collection, kind: kindType)
        let kind = try kindType.init(definition: def, compiled: compiled)
        let base = tableName(collection, def.name)
        let table = try txn.table(named: base)
        let extra = try kindType.extraTableSuffixes.map { try txn.table(named: base + $0) }
        return IndexStore(definition: def, collection: collection, table: table, extraTables: extra, compiled: compiled, kind: kind)
    }

    /// Deletes the index's tables (and forgets work it queued in this transaction).
    func drop(txn: WriteTransaction) throws {
        txn.discardPendingWork(for: self)
        try txn.drop(table, delete: true)
        for t in extraTables { try txn.drop(t, delete: true) }
    }

    /// Replaces this index's entries for one document: `old` body out, `new` body in.
    @inline(__always)
    func update(txn: WriteTransaction, docID: String, old: UnsafeRawBufferPointer?, new: UnsafeRawBufferPointer?) throws {
        try kind.update(self, txn: txn, docID: docID, old: old, new: new)
    }

    /// Builds the index over every live document (and its planner statistics, in `meta`).
    func backfill(txn: WriteTransaction, docs: DocumentTables, meta: StorageTable) throws {
        try kind.backfill(self, txn: txn, docs: docs, meta: meta)
    }

    /// Compares the stored entries with those recomputed from the documents.
    func check(snapshot: Snapshot, docs: DocumentTables, entries count: inout Int) throws -> [String] {
        try kind.check(self, snapshot: snapshot, docs: docs, entries: &count)
    }

    // MARK: - Evaluating the definition on a document

    /// A context for evaluating this index's expressions on one document at a time.
    func makeContext(_ snapshot: Snapshot) -> ExecContext {
        ExecContext(sourceCount: 1, variableCount: variableCount, aggregateCount: 0, parameters: [:], txn: snapshot)
    }

    /// Binds slot 0 of `ctx` to a document body; false when the body is unreadable or the
    /// document is outside the partial index's `where`.
    @inline(__always)
    func bind(_ ctx: ExecContext, body: UnsafeRawBufferPointer) -> Bool {
        guard let root = BinaryValue.root(body) else { return false }
        var slot = SourceSlot(state: .document)
        slot.body = root
        ctx.slots[0] = slot
        if let w = whereEvaluator, Semantics.truth(w(ctx)) != .true { return false }
        return true
    }

    /// Evaluates the index expressions on what slot 0 of `ctx` holds.
    @inline(__always)
    func evaluate(_ ctx: ExecContext) -> [Value] { evaluators.map { $0(ctx) } }

    /// The values of the index expressions for a document, or nil when it is outside the
    /// partial index's `where`.
    func columnValues(body: UnsafeRawBufferPointer, txn: Snapshot, context: ExecContext? = nil) -> [Value]? {
        let ctx = context ?? makeContext(txn)
        guard bind(ctx, body: body) else { return nil }
        return evaluate(ctx)
    }

    /// The index expressions' values for a document (ignoring `where`).
    func expressionValues(body: BinaryValue, txn: Snapshot) -> [Value] {
        let ctx = makeContext(txn)
        var slot = SourceSlot(state: .document)
        slot.body = body
        ctx.slots[0] = slot
        return evaluate(ctx)
    }
}

/// memcmp order of two byte arrays (the store's key order), shorter first on a common prefix.
@inline(__always)
func bytesLess(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in compareStoredKeys(pa, pb) < 0 } }
}
