// Why a plan does not use an index (issue 20, "why not this index"): for every index of the
// collections a query reads that the plan leaves unused, one reason the user can act on —
// the planner offered it and a cheaper path won (both estimates), or it could not be
// offered: a full-text index without MATCH, an array index without its UNNEST, a partial
// index whose condition the WHERE does not imply (which term, by which rule of SPEC §9.2),
// a term on the indexed expression that is not sargable, an expression that differs from the
// index's (a function, a collation, a path), a constraint on a later column only, or no
// term at all.

struct UnusedIndexDiagnosis {
    let plan: QueryPlan
    let txn: Snapshot
    let meta: StorageTable

    private var query: AnalyzedQuery { plan.query }

    func reasons() throws -> [ExplainPlan.UnusedIndex] {
        var used = Set<ObjectIdentifier>()
        func collect(_ p: any IndexAccessPlan) {
            if let i = p.index { used.insert(ObjectIdentifier(i)) }
            if let u = p as? MultiIndexOrPlan { u.branches.forEach(collect) }
        }
        for sp in plan.sources { if case .index(let p) = sp.access { collect(p) } }
        for a in plan.aggregateShortcut ?? [] { if case .extreme(let i, _) = a { used.insert(ObjectIdentifier(i)) } }
        var out: [ExplainPlan.UnusedIndex] = []
        for sp in plan.sources {
            guard let store = sp.store, let key = sp.source.collectionKey else { continue }
            for index in store.indexes where !used.contains(ObjectIdentifier(index)) {
                // An index of a collection read twice is explained once, at its first source.
                if out.contains(where: { $0.index == index.definition.name && $0.collection == key.fullName }) { continue }
                if plan.sources.contains(where: { other in
                    if case .index(let p) = other.access, other.source.collectionKey == key { return p.index === index }
                    return false
                }) { continue }
                let (reason, detail) = try diagnose(index, sp, store: store)
                out.append(ExplainPlan.UnusedIndex(collection: key.fullName, alias: sp.source.alias, index: index.definition.name,
                                                   reason: reason, detail: detail))
            }
        }
        return out
    }

    private func printed(_ e: BoundExpr) -> String { BoundExprPrinter(sources: query.sources).print(e) }

    private func diagnose(_ index: IndexStore, _ sp: SourcePlan, store: CollectionStore) throws -> (ExplainPlan.UnusedIndex.Reason, String) {
        let name = index.definition.name
        let src = sp.source
        // Offered, and something cheaper won.
        if let offered = sp.considered.filter({ $0.plan.index === index }).max(by: { $0.cost < $1.cost }) {
            let chosen: String
            switch sp.access {
            case .fullScan: chosen = "the full scan of \(src.alias)"
            case .unnest, .boundByIndex: chosen = "the UNNEST"
            case .index(let p):
                if let i = p.index { chosen = "index \(i.definition.name)" } else if p is MultiIndexOrPlan { chosen = "the multi-index OR" } else { chosen = "the primary key" }
            }
            let rows = sp.estimate?.rows ?? 0
            let cost = sp.estimate?.cost ?? 0
            let head = abs(offered.cost.estimatedCost - cost) <= CostModel.scanMargin
                ? "a path of about the same cost was chosen: " : "a cheaper path won: "
            return (.cheaperPathWon, head + "\(chosen) reads about \(rows) rows (cost \(Int(cost.rounded()))); "
                    + "this index would read about \(offered.cost.estimatedRows) rows (cost \(Int(offered.cost.estimatedCost.rounded())))")
        }
        if type(of: index.kind).answersMatch {
            return (.fullTextNeedsMatch, "a full-text index is used only by MATCH(\(name), …) in the WHERE clause")
        }
        let request = AccessRequest(query: query, source: src, terms: plannedTerms(), parameters: [:], snapshot: txn, docs: store.documents, ids: store.ids, meta: meta)
        let planning = KeyedPlanning(request: request)
        if let array = index.kind as? ArrayIndexKind {
            return diagnoseArray(index, array, planning)
        }
        if let w = index.whereClause {
            let (_, missing) = KeyedPlanning.implication(query: planning.implicationTerms, indexWhere: w)
            if let missing { return (.partialConditionNotImplied, partialText(missing, index: index)) }
        }
        let texts = expressionTexts(index.expressions, collection: index.collection)
        return classify(planning.candidateTerms, expressions: index.expressions, texts: texts, planning: planning, slot: src.index)
            ?? (.noPredicate, "no WHERE term, ORDER BY (with LIMIT) or GROUP BY of \(src.alias) uses its expression\(texts.count == 1 ? "" : "s") \(texts.joined(separator: ", "))")
    }

    /// The WHERE terms as the planner sees them (ORs of one expression as IN).
    private func plannedTerms() -> [BoundExpr] {
        (query.whereClause?.conjuncts ?? []).map(Planner.orAsIn)
    }

    /// Index expressions (bound to slot 0) as text, without an alias.
    private func expressionTexts(_ exprs: [BoundExpr], collection: CollectionKey) -> [String] {
        let printer = BoundExprPrinter(sources: [SourceInfo(index: 0, alias: "", explicitAlias: false, kind: .collection(collection),
                                                            join: nil, on: nil, writtenScope: nil, writtenName: "")])
        return exprs.map { printer.print($0) }
    }

    private func partialText(_ term: BoundExpr, index: IndexStore) -> String {
        let t = expressionTexts([term], collection: index.collection)[0]
        let head = "the partial index's condition is not implied: "
        switch term {
        case .test(let x, .missing, negated: true):
            let xs = expressionTexts([x], collection: index.collection)[0]
            return head + "no AND-term of the WHERE is \(t) (rule 1 of SPEC §9.2) or compares \(xs) with =, !=, <, <=, >, >=, IN, LIKE or BETWEEN (rule 2)"
        case .test(_, .null, negated: true), .test(_, .valued, negated: false):
            return head + "\(t) is not an AND-term of the WHERE (rule 1 of SPEC §9.2); rule 2 does not apply to IS NOT NULL or IS VALUED (a comparison such as x != 0 is TRUE when x is NULL)"
        default:
            return head + "its term \(t) is not an AND-term of the WHERE (rule 1 of SPEC §9.2)"
        }
    }

    private func diagnoseArray(_ index: IndexStore, _ kind: ArrayIndexKind, _ planning: KeyedPlanning) -> (ExplainPlan.UnusedIndex.Reason, String) {
        let src = planning.source
        let path = index.definition.path ?? "?"
        if src.join == .leftOuter {
            return (.leftOuterJoin, "\(src.alias) is the inner side of a LEFT JOIN, whose unmatched rows an index lookup would lose")
        }
        // The UNNEST chain over the index's path levels.
        var chain: [SourceInfo] = []
        var parent = src.index
        for level in kind.levels {
            guard let u = query.sources.first(where: { s in
                if case .unnest(.sourcePath(let p, let lp)) = s.kind, p == parent, lp == level, s.index > parent { return true }
                return false
            }) else {
                return (.noUnnest, "the query does not UNNEST \(path) of \(src.alias) (an array index serves UNNEST chains over its path)")
            }
            chain.append(u)
            parent = u.index
        }
        let inner = chain[chain.count - 1]
        let exprs = index.expressions.isEmpty ? [BoundExpr.sourcePath(0, [])] : index.expressions
        let texts = index.expressions.isEmpty ? [inner.alias] : expressionTexts(index.expressions, collection: index.collection)
        let terms = plannedTerms().filter { $0.referencedSources.contains(inner.index) }
        return classify(terms, expressions: exprs, texts: texts, planning: planning, slot: inner.index)
            ?? (.noPredicate, "no WHERE term on the elements \(inner.alias) uses the indexed \(index.expressions.isEmpty ? "element" : "expression \(texts.joined(separator: ", "))")")
    }

    /// The most telling reason a term about the index's expressions gives, or nil when no
    /// term mentions them.
    private func classify(_ terms: [BoundExpr], expressions: [BoundExpr], texts: [String], planning: KeyedPlanning,
                          slot: Int) -> (ExplainPlan.UnusedIndex.Reason, String)? {
        var found: [(rank: Int, reason: ExplainPlan.UnusedIndex.Reason, text: String)] = []
        let lead = texts.first ?? "?"
        for term in terms {
            if let m = planning.match(term: term, expressions: expressions, slot: slot, columnName: { texts[$0] }), m.column > 0 {
                found.append((4, .notLeadingColumn, "not a leading column: the query constrains \(texts[m.column]) (expression \(m.column + 1) of the index) but not its leading expression \(lead)"))
                continue
            }
            for (subject, whole) in subjects(term) {
                guard let rebased = KeyedPlanning.rebase(subject, from: slot) else { continue }
                if let column = expressions.firstIndex(of: rebased) {
                    if column == 0 && !whole { found.append((3, .notSargable, "the predicate \(printed(term)) is not sargable: \(whyNotSargable(term))")) }
                    continue
                }
                // The subject wraps an indexed expression.
                for (column, e) in expressions.enumerated() where contains(rebased, e) {
                    let q = printed(subject)
                    switch rebased {
                    case .collate(let inner, let collation) where inner == e:
                        var words: [String] = []
                        if collation.unicode { words.append("UNICODE" + (collation.locale.map { ":" + $0 } ?? "")) }
                        if collation.ignoreCase { words.append("NOCASE") }
                        if collation.ignoreAccents { words.append("NODIAC") }
                        let c = words.count == 1 ? words[0] : "(" + words.joined(separator: " ") + ")"
                        found.append((1, .collation, "a different collation: the query compares \(texts[column]) COLLATE \(c), the index keeps \(texts[column]) in binary order (the default collation)"))
                    case .call:
                        found.append((2, .expressionMismatch, "the expression does not match: the query has \(q), the index has \(texts[column]) (an index on \(q) would serve it)"))
                    default:
                        found.append((3, .notSargable, "the predicate \(printed(term)) is not sargable: it computes on the indexed expression \(texts[column])"))
                    }
                }
                // A path that ends like an indexed path: an alias or a parent that did not normalise.
                if case .sourcePath(_, let p) = rebased {
                    for (column, e) in expressions.enumerated() {
                        guard case .sourcePath(_, let ip) = e, !ip.isEmpty, p.count > ip.count, Array(p.suffix(ip.count)) == ip else { continue }
                        var text = "the expression does not match: the query has \(printed(subject)), the index has \(texts[column])"
                        if case .key(let first)? = p.first, query.sources.contains(where: { $0.writtenName == first || $0.alias == first }) || first == planning.source.writtenName {
                            text += " ('\(first)' is read as a property here: the source's alias is \(planning.source.alias))"
                        }
                        found.append((2, .expressionMismatch, text))
                    }
                }
            }
        }
        guard let best = found.min(by: { $0.rank < $1.rank }) else { return nil }
        return (best.reason, best.text)
    }

    /// The operands of a term compared with values, and whether the term is a form an index
    /// could serve (`=`, ranges, IN, LIKE with a prefix, IS tests).
    private func subjects(_ term: BoundExpr) -> [(BoundExpr, Bool)] {
        switch term {
        case .binary(let op, let a, let b):
            switch op {
            case .equal, .less, .lessOrEqual, .greater, .greaterOrEqual: return [(a, true), (b, true)]
            case .notEqual: return [(a, false), (b, false)]
            default: return []
            }
        case .like(let a, let pattern, let negated):
            if case .literal(.string(let p)) = pattern, !negated, KeyedPlanning.likePrefix(p) != nil { return [(a, true)] }
            return [(a, false)]
        case .between(let a, _, _, let negated), .inList(let a, _, let negated): return [(a, !negated)]
        case .test(let a, _, _): return [(a, true)]
        case .unary(.not, let inner): return subjects(inner).map { ($0.0, false) }
        default: return []
        }
    }

    private func whyNotSargable(_ term: BoundExpr) -> String {
        switch term {
        case .binary(.notEqual, _, _): return "!= matches everything but one key, which no key range describes"
        case .like(_, let pattern, let negated):
            if negated { return "NOT LIKE excludes keys rather than selecting a range" }
            if case .literal(.string) = pattern { return "the pattern starts with a wildcard" }
            return "the pattern is not a constant"
        case .between(_, _, _, true), .inList(_, _, true), .unary(.not, _): return "NOT excludes keys rather than selecting a range"
        default: return "its value depends on this source"
        }
    }

    private func contains(_ e: BoundExpr, _ part: BoundExpr) -> Bool {
        var found = false
        e.walk { if $0 == part { found = true } }
        return found && e != part
    }
}
