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

/// The documents matching a full-text query with their BM25 rank: by document number, or by
/// descending rank when the plan satisfies `ORDER BY rank(index) DESC` (then a heap yields
/// one row at a time, so `LIMIT k` fetches only k documents).
final class FullTextScan: RowSource {
    let plan: FullTextPlan
    let docs: Table
    let query: Evaluator
    private var found = FullTextRankedNumbers(documents: [], ranks: [])
    /// Rank order: a max-heap of indices into `found`.
    private var heap: [Int32] = []
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
            found = FullTextRankedNumbers(documents: [], ranks: [])
            heap = []
            cachedQuery = nil
            return
        }
        if text != cachedQuery {
            guard let indexer = plan.store.fullText, let stats = plan.store.statsTable else {
                found = FullTextRankedNumbers(documents: [], ranks: [])
                heap = []
                return
            }
            let compiled: CompiledFullTextQuery
            do {
                compiled = try CompiledFullTextQuery(text, tokenizer: indexer.tokenizer, columns: indexer.columns)
            } catch var e as QueryError {
                e.message = "in MATCH(\(plan.indexName), …): " + e.message
                throw e
            }
            let reader = LMDBPostingsReader(txn: ctx.txn, postings: plan.store.table, stats: stats)
            found = try compiled.evaluateNumbers(in: reader, ranking: true)
            cachedQuery = text
        }
        if plan.rankOrdered {
            heap = (0..<Int32(found.documents.count)).map { $0 }
            let n = heap.count
            var i = n / 2 - 1
            while i >= 0 { siftDown(i, n); i -= 1 }
        }
    }

    /// Higher rank first; equal ranks by document number.
    @inline(__always)
    private func before(_ a: Int32, _ b: Int32) -> Bool {
        let ra = found.ranks[Int(a)], rb = found.ranks[Int(b)]
        return ra > rb || (ra == rb && a < b)
    }

    private func siftDown(_ start: Int, _ n: Int) {
        var i = start
        while true {
            let l = 2 * i + 1
            if l >= n { return }
            var best = l
            if l + 1 < n && before(heap[l + 1], heap[l]) { best = l + 1 }
            if !before(heap[best], heap[i]) { return }
            heap.swapAt(i, best)
            i = best
        }
    }

    /// The next match to bind, in the scan's order.
    private func nextIndex() -> Int? {
        if plan.rankOrdered {
            guard !heap.isEmpty else { return nil }
            let top = heap[0]
            let last = heap.removeLast()
            if !heap.isEmpty {
                heap[0] = last
                siftDown(0, heap.count)
            }
            return Int(top)
        }
        guard position < found.documents.count else { return nil }
        position += 1
        return position - 1
    }

    override func next(_ ctx: ExecContext) throws -> Bool {
        guard let stats = plan.store.statsTable else { return false }
        while let i = nextIndex() {
            let number = found.documents[i]
            guard let rawID = try ctx.txn.get(stats, key: FullTextPostingsCodec.documentIDKey(number)) else {
                throw DatabaseError(.corrupt, "full-text index '\(plan.indexName)': document number \(number) names no document")
            }
            let id = Array(rawID)
            let bound = try id.withUnsafeBytes { raw -> Bool in
                // The ID must outlive this call: bind from the document table's own key bytes.
                guard let v = try ctx.txn.get(docs, key: raw), let header = DocumentRecord.header(v), !header.deleted else { return false }
                ctx.slots[slot] = SourceSlot(state: .document, id: UnsafeRawBufferPointer(start: nil, count: 0), record: header,
                                             body: BinaryValue.root(DocumentRecord.body(v)))
                return true
            }
            if bound {
                ctx.slots[slot].ownedID = id
                ctx.slots[slot].rank = found.ranks[i]
                ctx.slots[slot].matched = true
                ctx.slots[slot].drivingIndex = plan.indexName.lowercased()
                return true
            }
        }
        return false
    }
}
