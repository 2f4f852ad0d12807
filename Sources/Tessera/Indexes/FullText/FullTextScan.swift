/// The documents matching a full-text query with their BM25 rank: by document number, or by
/// descending rank when the plan satisfies `ORDER BY rank(index) DESC`. In rank order, the
/// best `rowsWanted` (LIMIT + OFFSET) are selected with a bounded heap and sorted; should the
/// consumer want more (rows rejected by other filters), the rest are ordered by a heap.
final class FullTextScan: RowSource {
    let plan: FullTextPlan
    let docs: DocumentTables
    let query: Evaluator
    let rowsWanted: Int?
    private var found = FullTextRankedNumbers(documents: [], ranks: [])
    /// Rank order: the indices (into `found`) to emit next, best first.
    private var ordered: [Int32] = []
    private var orderedPosition = 0
    /// Rank order: every match has been placed in `ordered` or `heap`.
    private var selectedAll = true
    /// Rank order: a max-heap of indices not yet emitted (after `ordered` runs out).
    private var heap: [Int32] = []
    private var position = 0
    private var cachedQuery: String?

    init(slot: Int, plan: FullTextPlan, docs: DocumentTables, parameters: [String: Value], rowsWanted: Int? = nil) throws {
        self.plan = plan
        self.docs = docs
        self.query = ExpressionCompiler.compile(plan.query)
        self.rowsWanted = rowsWanted
        super.init(slot: slot)
    }

    override func reset(_ ctx: ExecContext) throws {
        position = 0
        ordered = []
        orderedPosition = 0
        heap = []
        selectedAll = true
        let value = query(ctx)
        guard case .string(let text) = value else { throw FullTextQueryValue.notAString(value, index: plan.indexName) }
        if text != cachedQuery {
            guard let indexer = plan.store.kind as? FullTextIndexKind, let stats = plan.store.statsTable else {
                found = FullTextRankedNumbers(documents: [], ranks: [])
                return
            }
            let compiled: CompiledFullTextQuery
            do {
                compiled = try CompiledFullTextQuery(text, tokenizer: indexer.tokenizer, columns: indexer.columns)
            } catch var e as QueryError {
                e.message = "in MATCH(\(plan.indexName), …): " + e.message
                throw e
            }
            found = try DatabaseError.checkingFullText(index: plan.indexName) {
                let reader = try StoredPostingsReader(txn: ctx.txn, postings: plan.store.table, stats: stats, segments: plan.store.segmentsTable)
                return try compiled.evaluateNumbers(in: reader, ranking: true)
            }
            cachedQuery = text
        }
        if plan.rankOrdered {
            let n = found.documents.count
            if let k = rowsWanted, k < n {
                ordered = Self.best(k, of: found.ranks)
                selectedAll = false
            } else {
                ordered = Self.best(n, of: found.ranks)
            }
        }
    }

    /// True if match `a` comes before match `b`: higher rank, then lower document number.
    @inline(__always)
    private static func before(_ a: Int32, _ b: Int32, _ ranks: UnsafeBufferPointer<Double>) -> Bool {
        let ra = ranks[Int(a)], rb = ranks[Int(b)]
        return ra > rb || (ra == rb && a < b)
    }

    /// The `k` best matches, best first (a bounded heap keeps the worst of the best on top).
    static func best(_ k: Int, of ranks: [Double]) -> [Int32] {
        if k <= 0 { return [] }
        var heap: [Int32] = []
        heap.reserveCapacity(k)
        ranks.withUnsafeBufferPointer { r in
            for i in 0..<Int32(r.count) {
                if heap.count < k {
                    heap.append(i)
                    var c = heap.count - 1
                    while c > 0 {
                        let parent = (c - 1) / 2
                        // Min-heap by "before": the parent is not better than the child.
                        guard before(heap[parent], heap[c], r) else { break }
                        heap.swapAt(parent, c)
                        c = parent
                    }
                } else if before(i, heap[0], r) {
                    heap[0] = i
                    var c = 0
                    let n = heap.count
                    while true {
                        let l = 2 * c + 1
                        if l >= n { break }
                        var worst = l
                        if l + 1 < n && before(heap[l], heap[l + 1], r) { worst = l + 1 }
                        guard before(heap[c], heap[worst], r) else { break }
                        heap.swapAt(c, worst)
                        c = worst
                    }
                }
            }
            heap.sort { before($0, $1, r) }
        }
        return heap
    }

    /// Orders the matches not among the first `ordered` ones by a max-heap.
    private func heapifyRest() {
        var taken = [Bool](repeating: false, count: found.documents.count)
        for i in ordered { taken[Int(i)] = true }
        heap = (0..<Int32(found.documents.count)).filter { !taken[Int($0)] }
        found.ranks.withUnsafeBufferPointer { r in
            var i = heap.count / 2 - 1
            while i >= 0 { Self.siftDown(&heap, i, r); i -= 1 }
        }
        selectedAll = true
    }

    private static func siftDown(_ heap: inout [Int32], _ start: Int, _ r: UnsafeBufferPointer<Double>) {
        var i = start
        let n = heap.count
        while true {
            let l = 2 * i + 1
            if l >= n { return }
            var best = l
            if l + 1 < n && before(heap[l + 1], heap[l], r) { best = l + 1 }
            if !before(heap[best], heap[i], r) { return }
            heap.swapAt(i, best)
            i = best
        }
    }

    /// The next match to bind, in the scan's order.
    private func nextIndex() -> Int? {
        if plan.rankOrdered {
            if orderedPosition < ordered.count {
                orderedPosition += 1
                return Int(ordered[orderedPosition - 1])
            }
            if !selectedAll { heapifyRest() }
            guard !heap.isEmpty else { return nil }
            let top = heap[0]
            let last = heap.removeLast()
            if !heap.isEmpty {
                heap[0] = last
                found.ranks.withUnsafeBufferPointer { Self.siftDown(&heap, 0, $0) }
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
            if let counters = ctx.readCounters { counters.entries &+= 1; counters.documents &+= 1 }
            guard let rawID = try ctx.txn.get(stats, key: FullTextPostingsCodec.documentIDKey(number)) else {
                throw DatabaseError(.corrupt, "full-text index '\(plan.indexName)': document number \(number) names no document")
            }
            let id = Array(rawID)
            let bound = try id.withUnsafeBytes { raw -> Bool in
                // The ID must outlive this call: bind from the document table's own key bytes.
                guard let stored = try ctx.txn.get(docs.records, key: raw), let header = DocumentRecord.header(stored), !header.deleted else {
                    return false
                }
                let v = try ctx.wholeRecord(stored, id: raw, tables: docs, slot: slot)
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
