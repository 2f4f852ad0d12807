

// Chooses an access path per source and places each WHERE term at the first join level
// where every source it reads is bound.

struct Planner {
    let query: AnalyzedQuery
    /// The open stores of the collections the query reads.
    let stores: [CollectionKey: CollectionStore]
    let parameters: [String: Value]
    /// A read transaction for statistics (index entry counts).
    let txn: Snapshot
    /// The table of per-collection counters (live documents, last sequence).
    let counters: StorageTable

    func plan() throws -> QueryPlan {
        let q = query
        // SPEC §9.2: `x = a OR x = b` is `x IN (a, b)` (then planned like IN).
        let written = q.whereClause?.conjuncts ?? []
        let terms = written.map(Planner.orAsIn)
        // A rewritten term is proven when its written form is (partial-index rule 1).
        var writtenForm: [BoundExpr: BoundExpr] = [:]
        for (t, w) in zip(terms, written) where t != w { writtenForm[t] = w }
        var remaining = terms
        var sources: [SourcePlan] = []
        var orderSatisfied = false
        var groupsDelivered = false

        for src in q.sources {
            var access: AccessPath
            var estimate: Estimate?
            var considered: [AccessCandidate] = []
            switch src.kind {
            case .unnest(let path):
                access = .unnest(path)
                for sp in sources {
                    if case .index(let p) = sp.access, p.bindsBoundRows, p.boundSources.contains(src.index) { access = .boundByIndex }
                }
            case .collection(let key):
                access = .fullScan
                guard let store = stores[key] else { break }
                // Issue 16: the cheapest path by estimated rows read, the full scan included
                // (which an index must beat by `CostModel.scanMargin`).
                let documents = try txn.count(store.docs)
                var chosen = try bestIndexAccess(for: src, store: store, terms: remaining, considered: &considered)
                // Without the array index, the scan also unnests every element (as many as
                // the index has entries).
                var elements = 0
                for c in considered where !c.plan.boundSources.isEmpty {
                    if let index = c.plan.index { elements = max(elements, try txn.count(index.table, recent: index.recent)) }
                }
                let scanCost = Double(documents) * CostModel.scanRow + Double(elements) * CostModel.elementRead
                estimate = Estimate(rows: documents, cost: scanCost, scanRows: documents)
                func affordable(_ c: AccessCandidate) -> Bool { c.cost.required || c.cost.estimatedCost <= scanCost + CostModel.scanMargin }
                if chosen.map(affordable) != true { chosen = try multiIndexOr(for: src, store: store, terms: remaining) }
                if let chosen, affordable(chosen) {
                    access = .index(chosen.plan)
                    estimate = Estimate(rows: chosen.cost.estimatedRows, cost: chosen.cost.estimatedCost, scanRows: documents)
                    orderSatisfied = orderSatisfied || chosen.deliversOrder
                    groupsDelivered = chosen.deliversGroups && q.sources.count == 1
                    remaining.removeAll { t in chosen.satisfied.contains(t) || writtenForm[t].map(chosen.satisfied.contains) == true }
                }
            }
            var sp = SourcePlan(source: src, store: src.collectionKey.flatMap { stores[$0] }, access: access, filter: [])
            sp.estimate = estimate
            sp.considered = considered
            sources.append(sp)
        }

        // Place each remaining WHERE term at the deepest source it references.
        for t in remaining {
            let level = t.referencedSources.max() ?? 0
            sources[level].filter.append(t)
        }

        var plan = QueryPlan(query: q, sources: sources, sort: .none, orderSatisfied: orderSatisfied, limit: nil, offset: 0)
        plan.aggregateShortcut = aggregateShortcut()
        plan.groupsDelivered = groupsDelivered
        try applyLimits(&plan)
        return plan
    }

    /// `x = a OR x = b OR x IN (c, d)` → `x IN (a, b, c, d)` when every branch compares the
    /// same expression `x` with constants or parameters (neither a NULL nor a MISSING literal);
    /// any other term is returned unchanged. As a WHERE term (only its truth matters) the IN
    /// is TRUE exactly when one of the equalities is.
    static func orAsIn(_ term: BoundExpr) -> BoundExpr {
        guard case .binary(.or, _, _) = term else { return term }
        func constant(_ e: BoundExpr) -> Bool {
            var ok = true
            e.walk { n in
                switch n {
                case .sourcePath, .meta, .variablePath, .aggregate, .match, .rank: ok = false
                case .literal(let v) where v.isNull || v.isMissing: ok = false
                default: break
                }
            }
            return ok
        }
        var subject: BoundExpr?
        var values: [BoundExpr] = []
        for branch in KeyedPlanning.flatten(term, .or) {
            let x: BoundExpr
            let vs: [BoundExpr]
            switch branch {
            case .binary(.equal, let a, let b) where constant(b) && !constant(a): (x, vs) = (a, [b])
            case .binary(.equal, let a, let b) where constant(a) && !constant(b): (x, vs) = (b, [a])
            case .inList(let a, let list, negated: false) where !constant(a) && list.allSatisfy(constant): (x, vs) = (a, list)
            default: return term
            }
            if let s = subject, s != x { return term }
            subject = x
            values += vs
        }
        guard let subject, !values.isEmpty else { return term }
        return .inList(subject, values, negated: false)
    }

    /// SPEC §9.2: `count(*)` of a whole collection from its live-document counter, `MIN`/`MAX`
    /// of an index's leading expression from one end of the index — when the query has one
    /// collection source, no WHERE, no GROUP BY, does not ask for tombstones, and every
    /// aggregate can be read so.
    private func aggregateShortcut() -> [AggregateSource]? {
        let q = query
        guard q.sources.count == 1, let src = q.sources.first, let key = src.collectionKey, !src.includeDeleted,
              q.whereClause == nil, q.groupBy.isEmpty, !q.aggregates.isEmpty, let store = stores[key] else { return nil }
        var out: [AggregateSource] = []
        for call in q.aggregates {
            let name = FunctionRegistry.upperASCII(call.name)
            if name == "COUNT" && call.args.isEmpty {
                out.append(.liveCount(counters: counters, name: "count:" + key.fullName))
                continue
            }
            guard name == "MIN" || name == "MAX", call.args.count == 1,
                  let expr = KeyedPlanning.rebase(call.args[0], from: src.index),
                  let index = store.indexes.first(where: { $0.kind.answersExtreme($0, of: expr) }) else { return nil }
            out.append(.extreme(index, largest: name == "MAX"))
        }
        return out
    }

    /// The cheapest path any index of the collection offers for `src` (nil: a full scan).
    /// Kinds are asked in registry order and indexes in catalogue order; on equal cost the
    /// first offer stays.
    func bestIndexAccess(for src: SourceInfo, store: CollectionStore, terms: [BoundExpr], query: AnalyzedQuery? = nil) throws -> AccessCandidate? {
        var considered: [AccessCandidate] = []
        return try bestIndexAccess(for: src, store: store, terms: terms, query: query, considered: &considered)
    }

    /// Same, also returning every candidate offered (for EXPLAIN's `NOT USED:` lines).
    func bestIndexAccess(for src: SourceInfo, store: CollectionStore, terms: [BoundExpr], query: AnalyzedQuery? = nil,
                         considered: inout [AccessCandidate]) throws -> AccessCandidate? {
        let request = AccessRequest(query: query ?? self.query, source: src, terms: terms, parameters: parameters, snapshot: txn,
                                    docs: store.documents, ids: store.ids, meta: counters)
        var best: AccessCandidate?
        for kind in IndexKinds.all {
            for index in store.indexes where type(of: index.kind) == kind {
                for candidate in try index.kind.accessPaths(index, for: request) {
                    considered.append(candidate)
                    if let b = best, !(b.cost < candidate.cost) { continue }
                    best = candidate
                }
            }
        }
        for candidate in try PrimaryKeyAccess.accessPaths(for: request) {
            considered.append(candidate)
            if let b = best, !(b.cost < candidate.cost) { continue }
            best = candidate
        }
        return best
    }

    /// Sets LIMIT, OFFSET and the sort strategy from this execution's parameters (a cached
    /// plan is reused with new values).
    func applyLimits(_ plan: inout QueryPlan) throws {
        let q = plan.query
        let limit = try evaluateLimit(q.limit, what: "LIMIT")
        let offset = try evaluateLimit(q.offset, what: "OFFSET") ?? 0
        var sort = SortStrategy.none
        if !q.orderBy.isEmpty && !plan.orderSatisfied {
            if let limit { sort = .topK(Planner.rowsWanted(limit: limit, offset: offset)) } else { sort = .full }
        }
        plan.limit = limit
        plan.offset = offset
        plan.sort = sort
    }

    /// The rows a LIMIT + OFFSET query reads at most (saturating: LIMIT may be Int.max).
    static func rowsWanted(limit: Int, offset: Int) -> Int {
        let (sum, overflow) = limit.addingReportingOverflow(offset)
        return overflow ? Int.max : sum
    }

    /// LIMIT/OFFSET: integer literal or parameter; negative → 0.
    private func evaluateLimit(_ e: BoundExpr?, what: String) throws -> Int? {
        guard let e else { return nil }
        var v: Value
        switch e {
        case .literal(let x): v = x
        case .unary(.negate, .literal(let x)): v = Semantics.negate(x)
        case .parameter(let name):
            // An unbound (or NULL) parameter is an error, as `LIMIT NULL` is: not "no limit".
            guard let bound = parameters[name] else {
                throw QueryError(.semantic, "\(what) $\(name): the parameter is not bound (or is NULL); \(what) needs an integer", source: query.text)
            }
            v = bound
        default: v = .missing
        }
        switch v {
        case .int(let i): return i < 0 ? 0 : Int(clamping: i)
        case .double(let d) where d.rounded(.towardZero) == d && d.isFinite:
            // Doubles at or past 2⁶³ do not fit Int64: no practical limit.
            return d < 0 ? 0 : (d >= 9_223_372_036_854_775_807.0 ? Int.max : Int(d))
        case .missing:
            return nil
        default:
            throw QueryError(.semantic, "\(what) must be an integer, not \(QueryError.shortened(v.description))", source: query.text)
        }
    }
}

