// Chooses an access path per source and places each WHERE term at the first join level
// where every source it reads is bound.

struct Planner {
    let query: AnalyzedQuery
    /// The open stores of the collections the query reads.
    let stores: [CollectionKey: CollectionStore]
    let parameters: [String: Value]

    func plan() throws -> QueryPlan {
        let q = query
        let terms = q.whereClause?.conjuncts ?? []
        var remaining = terms
        var sources: [SourcePlan] = []
        var orderSatisfied = false

        for src in q.sources {
            var access: AccessPath
            switch src.kind {
            case .unnest(let path):
                access = .unnest(path)
            case .collection(let key):
                access = .fullScan
                if let store = stores[key] {
                    let choice = IndexSelection(query: q, source: src, store: store, terms: remaining,
                                                parameters: parameters, isFirstSource: src.index == 0)
                    if let chosen = try choice.best() {
                        access = chosen.access
                        orderSatisfied = orderSatisfied || chosen.satisfiesOrder
                        remaining.removeAll { t in chosen.satisfied.contains(t) }
                    }
                }
            }
            sources.append(SourcePlan(source: src, store: src.collectionKey.flatMap { stores[$0] }, access: access, filter: []))
        }

        // Place each remaining WHERE term at the deepest source it references.
        for t in remaining {
            let level = t.referencedSources.max() ?? 0
            sources[level].filter.append(t)
        }

        let limit = try evaluateLimit(q.limit, what: "LIMIT")
        let offset = try evaluateLimit(q.offset, what: "OFFSET") ?? 0
        var sort = SortStrategy.none
        if !q.orderBy.isEmpty && !orderSatisfied {
            if let limit { sort = .topK(limit + offset) } else { sort = .full }
        }
        return QueryPlan(query: q, sources: sources, sort: sort, limit: limit, offset: offset)
    }

    /// LIMIT/OFFSET: integer literal or parameter; negative → 0.
    private func evaluateLimit(_ e: BoundExpr?, what: String) throws -> Int? {
        guard let e else { return nil }
        var v: Value
        switch e {
        case .literal(let x): v = x
        case .unary(.negate, .literal(let x)): v = Semantics.negate(x)
        case .parameter(let name): v = parameters[name] ?? .missing
        default: v = .missing
        }
        switch v {
        case .int(let i): return i < 0 ? 0 : Int(clamping: i)
        case .double(let d) where d.rounded(.towardZero) == d && d.isFinite:
            return d < 0 ? 0 : Int(clamping: Int64(d))
        case .missing:
            return nil
        default:
            throw QueryError(.semantic, "\(what) must be an integer, not \(v)", source: query.text)
        }
    }
}

/// Index choice for one collection source. The value-index planner fills this in; without
/// usable indexes it returns nil (a full scan).
struct IndexSelection {
    let query: AnalyzedQuery
    let source: SourceInfo
    let store: CollectionStore
    let terms: [BoundExpr]
    let parameters: [String: Value]
    let isFirstSource: Bool

    struct Choice {
        var access: AccessPath
        var satisfied: [BoundExpr]
        var satisfiesOrder: Bool
    }

    func best() throws -> Choice? { nil }
}
