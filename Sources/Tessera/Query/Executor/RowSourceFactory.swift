import LMDB

/// Builds the row source of each plan level from its access path.
enum RowSourceFactory {
    static func make(_ sp: SourcePlan, parameters: [String: Value]) throws -> RowSource {
        let slot = sp.source.index
        switch sp.access {
        case .fullScan:
            guard let store = sp.store else { throw DatabaseError(.notFound, "collection of '\(sp.source.alias)' is gone") }
            return CollectionScan(slot: slot, table: store.docs, includeDeleted: sp.source.includeDeleted)
        case .unnest(let path):
            return UnnestScan(slot: slot, array: ExpressionCompiler.compile(path))
        case .indexScan(let scan):
            guard let store = sp.store else { throw DatabaseError(.notFound, "collection of '\(sp.source.alias)' is gone") }
            return IndexScan(slot: slot, plan: scan, docs: store.docs,
                             includeDeleted: sp.source.includeDeleted)
        case .fullText(let ft):
            guard let store = sp.store else { throw DatabaseError(.notFound, "collection of '\(sp.source.alias)' is gone") }
            return try FullTextScan(slot: slot, plan: ft, docs: store.docs, parameters: parameters)
        }
    }
}

/// The documents matching a full-text query, with their BM25 rank, in document-ID order.
final class FullTextScan: RowSource {
    let plan: FullTextPlan
    let docs: Table
    let query: Evaluator
    private var matches: [([UInt8], Double)] = []
    private var position = 0
    private var cachedQuery: String?

    init(slot: Int, plan: FullTextPlan, docs: Table, parameters: [String: Value]) throws {
        self.plan = plan
        self.docs = docs
        self.query = ExpressionCompiler.compile(plan.query)
        super.init(slot: slot)
    }

    override func reset(_ ctx: ExecContext) throws {
        position = 0
        guard case .string(let text) = query(ctx) else {
            matches = []
            cachedQuery = nil
            return
        }
        if text == cachedQuery { return }
        guard let indexer = plan.store.fullText, let stats = plan.store.statsTable else { matches = []; return }
        let compiled: CompiledFullTextQuery
        do {
            compiled = try CompiledFullTextQuery(text, tokenizer: indexer.tokenizer, columns: indexer.columns)
        } catch var e as QueryError {
            e.message = "in MATCH(\(plan.indexName), …): " + e.message
            throw e
        }
        let reader = LMDBPostingsReader(txn: ctx.txn, postings: plan.store.table, stats: stats)
        let found = try compiled.evaluate(in: reader, ranking: true)
        matches = found.ranks.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { ($0.key, $0.value) }
        cachedQuery = text
    }

    override func next(_ ctx: ExecContext) throws -> Bool {
        while position < matches.count {
            let (id, rank) = matches[position]
            position += 1
            let bound = try id.withUnsafeBytes { raw -> Bool in
                // The ID must outlive this call: bind from the document table's own key bytes.
                guard let v = try ctx.txn.get(docs, key: raw), let header = DocumentRecord.header(v), !header.deleted else { return false }
                ctx.slots[slot] = SourceSlot(state: .document, id: UnsafeRawBufferPointer(start: nil, count: 0), record: header,
                                             body: BinaryValue.root(DocumentRecord.body(v)))
                return true
            }
            if bound {
                ctx.slots[slot].ownedID = id
                ctx.slots[slot].rank = rank
                ctx.slots[slot].matched = true
                ctx.slots[slot].drivingIndex = plan.indexName.lowercased()
                return true
            }
        }
        return false
    }
}
