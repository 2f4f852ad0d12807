/// A value index: one entry per document (in the partial index's `where`, if any) whose key
/// is the tuple of the index expressions' values (MISSING included), then the document ID.
/// Serves `=`, `IN`, ranges, `BETWEEN`, `LIKE 'prefix%'`, `IS [NOT] NULL/MISSING` and ORDER BY
/// on a leading prefix of its expressions (SPEC §9.2), covering scans, and JOIN lookups.
final class ValueIndexKind: KeyedIndexKind {
    static let type = IndexType.value

    init(definition: IndexDefinition, compiled: CompiledIndexDefinition) throws {}

    /// Format 4 marks entries whose key does not give the values back exactly.
    static func needsRebuild(fromFormat format: UInt32) -> Bool { format < 4 }

    static func summary(_ d: IndexDefinition) -> String {
        "value (" + d.expressions.joined(separator: ", ") + ")"
    }

    func appendEntries(_ index: IndexStore, docID: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer,
                       evaluation: inout KeyedEvaluation, into arena: inout KeyArena) {
        let root: BinaryValue
        if index.whereClause == nil {
            guard let r = BinaryValue.root(body) else { return }
            root = r
        } else {
            let ctx = evaluation.context()
            guard index.bind(ctx, body: body), let r = ctx.slots[0].body else { return }
            root = r
        }
        if evaluation.hasPlainPaths {
            // Plain paths: each value encoded from the document in place.
            _ = evaluation.forEachPlainValue(in: root) { v in
                if let v { arena.appendComponent(binary: v) } else { arena.appendComponent(.missing) }
                return true
            }
        } else {
            let ctx = evaluation.context()
            if index.whereClause == nil {
                var slot = SourceSlot(state: .document)
                slot.body = root
                ctx.slots[0] = slot
            }
            for v in index.evaluate(ctx) { arena.appendComponent(v) }
        }
        arena.finishKey(docID: docID)
    }

    /// From a head: plain paths without a `where` only, each value encoded as it is found as
    /// long as it is a scalar whole in the head (one lookup per path: nothing else is read).
    func appendEntries(_ index: IndexStore, docID: UnsafeRawBufferPointer, head: UnsafeRawBufferPointer,
                       evaluation: inout KeyedEvaluation, into arena: inout KeyArena) -> Bool {
        guard index.whereClause == nil, evaluation.hasPlainPaths, let root = BinaryValue.root(head) else { return false }
        let whole = evaluation.forEachPlainValue(in: root) { v in
            guard let v, v.isWholeScalar else { return false }
            arena.appendComponent(binary: v)
            return true
        }
        guard whole else {
            arena.discardUnfinished()
            return false
        }
        arena.finishKey(docID: docID)
        return true
    }

    /// MIN/MAX of the leading expression of a full (not partial) index: its first entry after
    /// the NULLs, or its last entry.
    func answersExtreme(_ index: IndexStore, of expression: BoundExpr) -> Bool {
        index.whereClause == nil && index.expressions.first == expression
    }

    func extremeValue(_ index: IndexStore, largest: Bool, snapshot: Snapshot) throws -> Value? {
        try snapshot.withCursor(index.table, recent: index.recent) { c -> Value? in
            // Keys sort MISSING < NULL < every other value (SPEC §5.4).
            let found = largest ? try c.last() : try c.seek(IndexKey.lowerBound(for: [.null], inclusive: false))
            guard found else { return .null }
            // A key that does not give the value back exactly: aggregate the rows instead.
            guard IndexKey.entryInfo(c.value).exact, let values = try IndexKey.values(fromKey: c.key), let v = values.first else { return nil }
            return v.isMissing ? .null : v
        }
    }

    func accessPaths(_ index: IndexStore, for request: AccessRequest) throws -> [AccessCandidate] {
        let planning = KeyedPlanning(request: request)
        var proven: [BoundExpr] = []
        if let w = index.whereClause {
            // SPEC §9.2: a partial index serves only queries whose WHERE implies its condition.
            guard let p = KeyedPlanning.implies(query: planning.implicationTerms, indexWhere: w) else { return [] }
            proven = p
        }
        guard let c = try planning.consider(index, candidates: planning.candidateTerms, onTerms: planning.onTerms, proven: proven) else { return [] }
        return [c]
    }
}

extension KeyedPlanning {
    /// The scan of `index` the terms allow, or nil when it constrains nothing useful.
    func consider(_ index: IndexStore, candidates: [BoundExpr], onTerms: [BoundExpr], proven: [BoundExpr]) throws -> AccessCandidate? {
        let exprs = index.expressions
        let printer = BoundExprPrinter(sources: [SourceInfo(index: 0, alias: source.alias, explicitAlias: false, kind: source.kind,
                                                            join: nil, on: nil, writtenScope: nil, writtenName: source.alias)])
        let names = exprs.map { printer.print($0) }
        var byColumn: [Int: [ColumnTerm]] = [:]
        for t in candidates {
            if let m = match(term: t, expressions: exprs, columnName: { names[$0] }) { byColumn[m.column, default: []].append(m) }
        }
        let (equalities, used, rangeConstraint) = KeyedPlanning.constrainPrefix(byColumn, columns: exprs.count)
        let spread = KeyedPlanning.spreadColumns(used)
        let multiValued = KeyedPlanning.multiValued(equalities, spread: spread)
        // ORDER BY by index order (single source, no grouping/distinct, all one direction).
        var satisfiesOrder = false
        var descending = false
        let q = query
        if q.sources.count == 1, !q.isAggregating, !q.distinct, !q.orderBy.isEmpty, !multiValued,
           q.orderBy.allSatisfy({ $0.descending == q.orderBy[0].descending }) {
            let keys = q.orderBy.compactMap { KeyedPlanning.rebase($0.expr, from: source.index) }
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
        // GROUP BY keys / DISTINCT columns that are the leading index columns (after those an
        // equality fixes): in key order equal groups come together, so grouping streams.
        var groups = false
        var groupColumns = 0
        if q.sources.count == 1, !multiValued {
            var keys: [BoundExpr]? = nil
            if !q.groupBy.isEmpty {
                keys = q.groupBy.compactMap { KeyedPlanning.rebase($0, from: source.index) }
                if keys?.count != q.groupBy.count { keys = nil }
            } else if q.distinct && !q.isAggregating {
                var cols: [BoundExpr] = []
                for c in q.columns {
                    guard case .expression(let e) = c.kind, let r = KeyedPlanning.rebase(e, from: source.index) else { cols = []; break }
                    cols.append(r)
                }
                keys = cols.isEmpty ? nil : cols
            }
            if let keys {
                let wanted = Set(keys)
                for start in Set([0, equalities.count]) where start + wanted.count <= exprs.count {
                    if Set(exprs[start..<(start + wanted.count)]) == wanted && wanted.count == keys.count {
                        groups = true
                        groupColumns = start + wanted.count
                        break
                    }
                }
            }
        }
        let satisfied = used.filter { $0.exact && !onTerms.contains($0.term) }.map(\.term)
        let covering = isCovering(index, satisfied: satisfied + proven)
        let constrained = !used.isEmpty
        let usefulOrder = satisfiesOrder && q.limit != nil
        // Reading a whole index in key order pays only when it covers the query.
        let usefulGroups = groups && covering
        guard constrained || usefulOrder || usefulGroups else { return nil }

        let described = used.map(\.text).joined(separator: " AND ")
        var scan = KeyRangeScanPlan(store: index, descending: descending, covering: false,
                                    describedPredicates: described, satisfied: satisfied, expressions: exprs)
        scan.keys = IndexScanKeys(equalities: equalities, rangeConstraint: rangeConstraint, spread: spread)
        scan.ordered = satisfiesOrder || groups
        scan.covering = covering
        // DISTINCT, or GROUP BY without aggregates, needs one entry per group: after it the
        // scan seeks past the group's key prefix — when groups are large enough for a seek
        // (a descent from the root) to beat stepping over their entries.
        if groups && covering && q.aggregates.isEmpty && (q.distinct || !q.groupBy.isEmpty),
           try entriesPerGroup(index, columns: groupColumns) >= KeyedPlanning.skipScanMinimumGroup {
            scan.skipColumns = groupColumns
        }
        if groups && covering { scan.groupColumns = groupColumns }
        var rows = try estimateEntries(index, equalities: equalities, range: rangeConstraint, spread: spread).rows
        if satisfiesOrder {
            // LIMIT stops an ordered scan early; conditions left to the filter may reject rows.
            let residual = candidates.contains { t in !satisfied.contains(t) && !proven.contains(t) }
            rows = orderedRows(rows, residual: residual)
        }
        let cost = AccessCost(equalityColumns: equalities.count, rangeColumns: rangeConstraint == nil ? 0 : 1,
                              deliversOrder: satisfiesOrder || usefulGroups ? 1 : 0, estimatedRows: Int(rows.rounded(.up)),
                              estimatedCost: CostModel.indexScan(rows: rows, covering: covering))
        var candidate = AccessCandidate(plan: scan, satisfied: satisfied + proven, deliversOrder: satisfiesOrder, cost: cost)
        candidate.deliversGroups = groups
        return candidate
    }

    /// Entries of `index` per distinct value of its first `columns` expressions, from the
    /// statistics (the whole index when there are none).
    func entriesPerGroup(_ index: IndexStore, columns: Int) throws -> Double {
        let entries = try request.snapshot.count(index.table, recent: index.recent)
        guard entries > 0 else { return 0 }
        let stats = try IndexStatistics.load(index, snapshot: request.snapshot, meta: request.meta)
        return Double(entries) / stats.distinct(columns: columns, entriesNow: entries)
    }

    /// The fewest entries per group for which a skip-scan seeks past each group: a seek
    /// descends the B-tree from its root (several key comparisons per level), about the
    /// work of stepping over this many neighbouring entries, whose repeated values the
    /// scan recognises without decoding them again.
    static let skipScanMinimumGroup = 8.0

    /// True if every expression the query reads from this source is an index expression
    /// (or `meta().id`), so documents never need to be read.
    func isCovering(_ index: IndexStore, satisfied: [BoundExpr]) -> Bool {
        let q = query
        guard q.sources.count == 1 else { return false }
        // Only plain property paths can be read back from a key.
        let indexed = Set(index.expressions.filter { if case .sourcePath(0, let p) = $0 { return !p.isEmpty } else { return false } })
        if indexed.isEmpty { return false }
        return readsOnly(excluding: satisfied) { n in
            if let r = KeyedPlanning.rebase(n, from: source.index), indexed.contains(r) { return true }
            if case .meta(_, let k) = n { return k == .id }
            return false
        }
    }
}
