import LMDB

// Chooses an access path per source and places each WHERE term at the first join level
// where every source it reads is bound.

struct Planner {
    let query: AnalyzedQuery
    /// The open stores of the collections the query reads.
    let stores: [CollectionKey: CollectionStore]
    let parameters: [String: Value]
    /// A read transaction for statistics (index entry counts).
    let txn: Transaction

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
                // A MATCH on this source always drives it through the named full-text index.
                if let m = remaining.first(where: { if case .match(let s, _, _) = $0 { return s == src.index } else { return false } }),
                   case .match(_, let name, let q) = m, let store = stores[key],
                   let index = store.indexes.first(where: { $0.definition.type == .fullText && $0.definition.name.lowercased() == name.lowercased() }) {
                    var ft = FullTextPlan(indexName: index.definition.name, query: q, store: index)
                    // ORDER BY rank(index) DESC on a lone source: rows come out by rank and
                    // LIMIT stops the scan early.
                    let order = query.orderBy
                    if query.sources.count == 1, !query.isAggregating, !query.distinct, order.count == 1, order[0].descending,
                       case .rank(let s, let rankIndex) = order[0].expr, s == src.index,
                       rankIndex.lowercased() == name.lowercased() {
                        ft.rankOrdered = true
                        orderSatisfied = true
                    }
                    access = .fullText(ft)
                    // The MATCH stays a filter: it is TRUE for every row the scan binds, and
                    // FALSE for the null-extended row of a LEFT JOIN.
                } else if let store = stores[key] {
                    let choice = IndexSelection(query: q, source: src, store: store, terms: remaining,
                                                parameters: parameters, isFirstSource: src.index == 0, txn: txn)
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

        var plan = QueryPlan(query: q, sources: sources, sort: .none, orderSatisfied: orderSatisfied, limit: nil, offset: 0)
        try applyLimits(&plan)
        return plan
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
        case .parameter(let name): v = parameters[name] ?? .missing
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
            throw QueryError(.semantic, "\(what) must be an integer, not \(v)", source: query.text)
        }
    }
}

/// Index choice for one collection source: the best usable value index, or nil (a full scan).
struct IndexSelection {
    let query: AnalyzedQuery
    let source: SourceInfo
    let store: CollectionStore
    /// WHERE terms not yet used by an earlier source.
    let terms: [BoundExpr]
    let parameters: [String: Value]
    let isFirstSource: Bool
    let txn: Transaction

    struct Choice {
        var access: AccessPath
        var satisfied: [BoundExpr]
        var satisfiesOrder: Bool
        var score: (Int, Int, Int, Int)
    }

    func best() throws -> Choice? {
        let leftOuter = source.join == .leftOuter
        // Terms that may restrict this source's rows: WHERE terms (not for the inner side of
        // a LEFT JOIN, whose unmatched rows must still appear) and the ON terms.
        var candidates: [BoundExpr] = leftOuter ? [] : terms.filter { !$0.referencedSources.contains { $0 > source.index } }
        let onTerms = source.on?.conjuncts ?? []
        candidates += onTerms
        // For partial-index implication, Q is every top-level AND-term that constrains this source.
        let qTerms = ((leftOuter ? [] : (query.whereClause?.conjuncts ?? [])) + onTerms).compactMap { IndexSelection.rebase($0, from: source.index) }

        var bestChoice: Choice?
        for index in store.indexes where index.definition.type == .value {
            var proven: [BoundExpr] = []
            if let w = index.whereClause {
                guard let p = IndexSelection.implies(query: qTerms, indexWhere: w) else { continue }
                proven = p
            }
            guard let choice = try consider(index, candidates: candidates, onTerms: onTerms, proven: proven) else { continue }
            if let b = bestChoice, !(choice.score > b.score) { continue }
            bestChoice = choice
        }
        if !leftOuter {
            for index in store.indexes where index.definition.type == .array {
                guard let choice = try considerArray(index) else { continue }
                if let b = bestChoice, !(choice.score > b.score) { continue }
                bestChoice = choice
            }
        }
        return bestChoice
    }

    /// An array index serves an UNNEST chain over this source whose paths are the index's
    /// levels, with predicates on the innermost alias (SPEC §9.3). The scan binds each parent
    /// document once; the UNNESTs and their filters then run as usual.
    private func considerArray(_ index: IndexStore) throws -> Choice? {
        var chain: [Int] = []
        var parent = source.index
        for level in index.arrayLevels {
            guard let u = query.sources.first(where: { s in
                if case .unnest(.sourcePath(let p, let path)) = s.kind, p == parent, path == level, s.index > parent { return true }
                return false
            }) else { return nil }
            chain.append(u.index)
            parent = u.index
        }
        guard let innermost = chain.last else { return nil }
        let exprs = index.expressions.isEmpty ? [BoundExpr.sourcePath(0, [])] : index.expressions
        let names: [String] = exprs.map { e in
            if case .sourcePath(_, let p) = e { return p.isEmpty ? query.sources[innermost].alias : SQLPathText.text(p) }
            return BoundExprPrinter(sources: [query.sources[innermost]]).print(e)
        }
        var byColumn: [Int: [ColumnTerm]] = [:]
        for t in terms where t.referencedSources == [innermost] || t.referencedSources.isSubset(of: Set(0..<source.index).union([innermost])) {
            if let m = match(term: t, expressions: exprs, slot: innermost, columnName: { names[$0] }) {
                byColumn[m.column, default: []].append(m)
            }
        }
        let (equalities, used, rangeConstraint) = IndexSelection.constrainPrefix(byColumn, columns: exprs.count)
        guard !used.isEmpty else { return nil }
        var scan = IndexScanPlan(index: index, ranges: [], descending: false, covering: false,
                                 describedPredicates: used.map(\.text).joined(separator: " AND "), satisfied: [],
                                 usedColumns: equalities.count + (rangeConstraint == nil ? 0 : 1), expressions: exprs)
        scan.arraySources = chain
        scan.keys = IndexScanKeys(equalities: equalities, rangeConstraint: rangeConstraint)
        let entries = try txn.count(index.table)
        return Choice(access: .indexScan(scan), satisfied: [], satisfiesOrder: false,
                      score: (equalities.count, rangeConstraint == nil ? 0 : 1, 0, -entries))
    }

    private func consider(_ index: IndexStore, candidates: [BoundExpr], onTerms: [BoundExpr], proven: [BoundExpr]) throws -> Choice? {
        let exprs = index.expressions
        let printer = BoundExprPrinter(sources: [SourceInfo(index: 0, alias: source.alias, explicitAlias: false, kind: source.kind,
                                                            join: nil, on: nil, writtenScope: nil, writtenName: source.alias)])
        let names = exprs.map { printer.print($0) }
        var byColumn: [Int: [ColumnTerm]] = [:]
        for t in candidates {
            if let m = match(term: t, expressions: exprs, columnName: { names[$0] }) { byColumn[m.column, default: []].append(m) }
        }
        let (equalities, used, rangeConstraint) = IndexSelection.constrainPrefix(byColumn, columns: exprs.count)
        // ORDER BY by index order (single source, no grouping/distinct, all one direction).
        var satisfiesOrder = false
        var descending = false
        let q = query
        if q.sources.count == 1, !q.isAggregating, !q.distinct, !q.orderBy.isEmpty, equalities.allSatisfy({ $0.count == 1 }),
           q.orderBy.allSatisfy({ $0.descending == q.orderBy[0].descending }) {
            let keys = q.orderBy.compactMap { IndexSelection.rebase($0.expr, from: source.index) }
            if keys.count == q.orderBy.count {
                let startsAt = [0, equalities.count]
                for s in startsAt where s + keys.count <= exprs.count {
                    if Array(exprs[s..<(s + keys.count)]) == keys && (s == 0 || rangeConstraint == nil || true) {
                        // Equality columns before `s` are fixed, so the order holds within them.
                        if s <= equalities.count { satisfiesOrder = true; descending = q.orderBy[0].descending; break }
                    }
                }
            }
        }
        let constrained = !used.isEmpty
        let usefulOrder = satisfiesOrder && q.limit != nil
        guard constrained || usefulOrder || !proven.isEmpty && satisfiesOrder else { return nil }
        if !constrained && !usefulOrder { return nil }

        let satisfied = used.filter { $0.exact && !onTerms.contains($0.term) }.map(\.term)
        let described = used.map(\.text).joined(separator: " AND ")
        var scan = IndexScanPlan(index: index, ranges: [], descending: descending, covering: false,
                                 describedPredicates: described, satisfied: satisfied, usedColumns: equalities.count + (rangeConstraint == nil ? 0 : 1),
                                 expressions: exprs)
        scan.keys = IndexScanKeys(equalities: equalities, rangeConstraint: rangeConstraint)
        scan.ordered = satisfiesOrder
        scan.covering = isCovering(index, satisfied: satisfied + proven)
        let entries = try txn.count(index.table)
        let score = (equalities.count, rangeConstraint == nil ? 0 : 1, satisfiesOrder ? 1 : 0, -entries)
        return Choice(access: .indexScan(scan), satisfied: satisfied + proven, satisfiesOrder: satisfiesOrder, score: score)
    }

    /// The constraints an index scan can use: `=`/`IN` on leading columns (at most 1,024 key
    /// points in all), then one range (one lower and one upper bound) or `LIKE` prefix on the
    /// next column. Returns the equality values per column, the terms used, and the range.
    static func constrainPrefix(_ byColumn: [Int: [ColumnTerm]], columns: Int)
        -> (equalities: [[BoundExpr]], used: [ColumnTerm], range: ColumnConstraint?)
    {
        var equalities: [[BoundExpr]] = []
        var used: [ColumnTerm] = []
        var column = 0
        var rangeConstraint: ColumnConstraint?
        var points = 1
        while column < columns, let ts = byColumn[column] {
            if let eq = ts.first(where: { if case .equal = $0.constraint { return true } else { return false } }),
               case .equal(let values) = eq.constraint, points * values.count <= 1024 {
                equalities.append(values)
                points *= values.count
                used.append(eq)
                column += 1
                continue
            }
            var lower: (BoundExpr, Bool)?
            var upper: (BoundExpr, Bool)?
            for t in ts {
                switch t.constraint {
                case .range(let lo, let hi):
                    if rangeConstraint != nil { continue } // a LIKE prefix already constrains this column
                    if lo != nil && lower != nil || hi != nil && upper != nil { continue }
                    if let lo { lower = lo }
                    if let hi { upper = hi }
                    used.append(t)
                case .prefix(let p):
                    if rangeConstraint == nil && lower == nil && upper == nil {
                        rangeConstraint = .prefix(p)
                        used.append(t)
                    }
                case .equal: break
                }
            }
            if lower != nil || upper != nil { rangeConstraint = .range(lower: lower, upper: upper) }
            break
        }
        return (equalities, used, rangeConstraint)
    }

    /// True if every expression the query reads from this source is an index expression
    /// (or `meta().id`), so documents never need to be read.
    private func isCovering(_ index: IndexStore, satisfied: [BoundExpr]) -> Bool {
        let q = query
        guard q.sources.count == 1 else { return false }
        var exprs: [BoundExpr] = []
        for c in q.columns {
            switch c.kind {
            case .expression(let e): exprs.append(e)
            case .star: return false
            }
        }
        exprs += (q.whereClause?.conjuncts ?? []).filter { !satisfied.contains($0) }
        exprs += q.groupBy + (q.having.map { [$0] } ?? []) + q.orderBy.map(\.expr) + q.aggregates.flatMap(\.args)
        // Only plain property paths can be read back from a key.
        let indexed = Set(index.expressions.filter { if case .sourcePath(0, let p) = $0 { return !p.isEmpty } else { return false } })
        if indexed.isEmpty { return false }
        func covered(_ e: BoundExpr) -> Bool {
            if let r = IndexSelection.rebase(e, from: source.index), indexed.contains(r) { return true }
            switch e {
            case .sourcePath: return false
            case .meta(_, let k): return k == .id
            case .match, .rank: return false
            case .literal, .parameter, .variablePath, .aggregate: return true
            case .member(let b, _), .unary(_, let b), .test(let b, _, _), .collate(let b, _): return covered(b)
            case .array(let a), .call(_, let a): return a.allSatisfy(covered)
            case .object(let m): return m.allSatisfy { covered($0.value) }
            case .binary(_, let a, let b), .like(let a, let b, _), .inArray(let a, let b, _): return covered(a) && covered(b)
            case .between(let a, let b, let c, _): return covered(a) && covered(b) && covered(c)
            case .inList(let a, let l, _): return covered(a) && l.allSatisfy(covered)
            case .caseWhen(let o, let w, let el):
                return (o.map(covered) ?? true) && w.allSatisfy { covered($0.when) && covered($0.then) } && (el.map(covered) ?? true)
            case .quantified(_, _, let a, let p): return covered(a) && covered(p)
            }
        }
        return exprs.allSatisfy(covered)
    }
}
