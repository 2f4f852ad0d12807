// The full-text kind's answers to the planner and to MATCH() outside its scan; maintenance,
// back-fill and the integrity check are in FullTextIndexer.swift.

extension DatabaseError {
    /// Runs `body`, which reads full-text index `index`; bytes of the index that do not decode
    /// (`FullTextIndexCorruption`) become a `.corrupt` error naming the index.
    ///
    /// Every path into a full-text index's stored bytes (its scan, MATCH and RANK outside it,
    /// saves, the flush of queued postings, back-fill, integrity check) goes through this.
    static func checkingFullText<R>(index: String, _ body: () throws -> R) throws -> R {
        do { return try body() } catch let e as FullTextIndexCorruption {
            throw fullTextCorrupt(e, index: index)
        }
    }

    @inline(never)
    static func fullTextCorrupt(_ e: FullTextIndexCorruption, index: String) -> DatabaseError {
        DatabaseError(.corrupt, "full-text index '\(index)' is damaged: \(e.message) (run an integrity check; deleting and creating the index again rebuilds it)", underlying: e)
    }
}

extension IndexStore {
    /// A full-text index's statistics table (document numbering, corpus totals).
    var statsTable: StorageTable? { extraTables.first }
    /// A full-text index's segments table (postings waiting to be merged into the blocks).
    var segmentsTable: StorageTable? { extraTables.count > 1 ? extraTables[1] : nil }
}

extension FullTextIndexKind {
    /// A MATCH on this index drives its source whatever else the WHERE says (SPEC §10.2: the
    /// index is the one `match()` names, never a planner choice). When several MATCHes name
    /// indexes of one source, the first in the WHERE clause drives it (the others filter).
    func accessPaths(_ index: IndexStore, for request: AccessRequest) throws -> [AccessCandidate] {
        let src = request.source
        let name = index.definition.name.lowercased()
        guard let position = request.terms.firstIndex(where: { t in
            if case .match(let s, let n, _) = t { return s == src.index && n.lowercased() == name }
            return false
        }), case .match(_, _, let text) = request.terms[position] else { return [] }
        // The first MATCH term of this source, whichever index it names, is the one that drives.
        guard let first = request.terms.firstIndex(where: { if case .match(let s, _, _) = $0 { return s == src.index } else { return false } }),
              first == position else { return [] }
        var plan = FullTextPlan(indexName: index.definition.name, query: text, store: index)
        // ORDER BY rank(index) DESC on a lone source: rows come out by rank and LIMIT stops
        // the scan early.
        let q = request.query
        let order = q.orderBy
        if q.sources.count == 1, !q.isAggregating, !q.distinct, order.count == 1, order[0].descending,
           case .rank(let s, let rankIndex) = order[0].expr, s == src.index, rankIndex.lowercased() == name {
            plan.rankOrdered = true
        }
        // The MATCH stays a filter: it is TRUE for every row the scan binds, and FALSE for the
        // null-extended row of a LEFT JOIN.
        return [AccessCandidate(plan: plan, satisfied: [], deliversOrder: plan.rankOrdered, cost: AccessCost(required: true))]
    }

    /// The documents (ID bytes → BM25 rank) matching `query`, for a MATCH on this index that
    /// does not drive its source.
    func matches(_ index: IndexStore, snapshot: Snapshot, query: String) throws -> [[UInt8]: Double]? {
        guard let stats = index.statsTable else { return [:] }
        let compiled = try CompiledFullTextQuery(query, tokenizer: tokenizer, columns: columns)
        return try DatabaseError.checkingFullText(index: index.definition.name) {
            try compiled.evaluate(in: try StoredPostingsReader(txn: snapshot, postings: index.table, stats: stats, segments: index.segmentsTable), ranking: true).ranks
        }
    }
}

/// A full-text MATCH driving a source.
struct FullTextPlan: IndexAccessPlan {
    var indexName: String
    var query: BoundExpr
    var store: IndexStore
    /// Deliver rows by descending rank (`ORDER BY rank(index) DESC` is satisfied).
    var rankOrdered = false

    var index: IndexStore? { store }
    var boundSources: [Int] { [] }

    func makeRowSource(slot: Int, docs: DocumentTables, includeDeleted: Bool, parameters: [String: Value],
                       rowsWanted: Int?) throws -> RowSource {
        try FullTextScan(slot: slot, plan: self, docs: docs, parameters: parameters, rowsWanted: rowsWanted)
    }

    func explain(sources: [SourceInfo]) -> IndexAccessExplanation {
        IndexAccessExplanation(access: .fullText, keyRange: nil, rankOrdered: rankOrdered)
    }
}
