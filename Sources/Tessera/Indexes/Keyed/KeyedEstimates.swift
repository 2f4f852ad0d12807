// Row estimates of keyed index scans from `IndexStatistics` (issue 16, "cost, not rules").
//
// With constant bounds (literals) the sample keys say which share of the entries the key
// ranges hold: a value common enough to appear in two or more samples is estimated from
// them (`type = 'hotel'` on a collection of 90 % hotels reads 90 % of the index); a rarer
// one, or bounds known only when the query runs (parameters, outer columns), is estimated
// from the distinct-prefix counts (entries ÷ distinct values per point) and SQLite's fixed
// shares for ranges (a quarter for one bound, a sixteenth for two, a tenth for a prefix).

extension KeyedPlanning {
    /// The estimated index entries a scan of `index` reads under these constraints, and the
    /// index's entry count.
    ///
    /// A `spread` column (`x IN $array`) has one key point per element of the array: its
    /// size is read from the parameters the query is planned with (a plan is reused for
    /// other values, so it is the size at planning time); an array not known then counts
    /// as `KeyedPlanning.unknownSpreadPoints` points.
    func estimateEntries(_ index: IndexStore, equalities: [[BoundExpr]], range: ColumnConstraint?,
                         spread: Set<Int> = []) throws -> (rows: Double, entries: Int) {
        let entries = try request.snapshot.count(index.table, recent: index.recent)
        guard entries > 0 else { return (0, 0) }
        let e = Double(entries)
        if equalities.isEmpty && range == nil { return (e, entries) }
        let stats = try IndexStatistics.load(index, snapshot: request.snapshot, meta: request.meta)
        var points = 1.0
        for (col, exprs) in equalities.enumerated() {
            guard spread.contains(col) else { points *= Double(exprs.count); continue }
            var n = 0
            for e in exprs {
                switch e.bindingParameters(request.parameters) {
                case .literal(.array(let elements)): n += elements.count
                case .literal: break // not an array: no key point
                default: n += KeyedPlanning.unknownSpreadPoints
                }
            }
            points *= Double(max(n, 1))
        }
        let perPoint = equalities.isEmpty ? e : e / stats.distinct(columns: equalities.count, entriesNow: entries)
        var generic = min(e, points * perPoint)
        switch range {
        case .prefix?: generic *= 0.1
        case .range(let lo, let hi)?: generic *= (lo != nil && hi != nil) ? 1.0 / 16 : 0.25
        case .equal?, nil: break
        }
        generic = max(generic, 1)
        guard let tuples = KeyedPlanning.literalTuples(equalities), KeyedPlanning.literalBounds(range), !stats.samples.isEmpty else {
            return (min(e, generic), entries)
        }
        let ranges = KeyRangeScan.ranges(tuples: tuples, constraint: range) { b, _ in
            if case .literal(let v) = b { return v }
            return nil
        }
        let (hits, n) = stats.sampleHits(ranges)
        let share = Double(hits) / Double(n)
        // Every entry was sampled (a small index, unchanged since): the count is exact.
        if n == stats.entries && stats.entries == entries { return (Double(hits), entries) }
        if hits >= 2 { return (share * e, entries) }
        return (min(e, generic, Double(hits + 1) / Double(n) * e), entries)
    }

    /// Key points assumed for `x IN <array>` when the array is not known at planning time.
    static let unknownSpreadPoints = 10

    /// The equality tuples when every value is a literal, else nil.
    static func literalTuples(_ equalities: [[BoundExpr]]) -> [[Value]]? {
        var tuples: [[Value]] = [[]]
        for column in equalities {
            var values: [Value] = []
            for x in column {
                guard case .literal(let v) = x else { return nil }
                values.append(v)
            }
            tuples = tuples.flatMap { t in values.map { t + [$0] } }
        }
        return tuples
    }

    /// True when a range's bounds are literals (or there is no range).
    static func literalBounds(_ range: ColumnConstraint?) -> Bool {
        guard case .range(let lo, let hi)? = range else { return true }
        return (lo.map { $0.0.isLiteral } ?? true) && (hi.map { $0.0.isLiteral } ?? true)
    }

    /// LIMIT + OFFSET when both are known now (literals or bound parameters).
    var rowsWanted: Int? {
        func value(_ e: BoundExpr?) -> Int? {
            switch e {
            case nil: return 0
            case .literal(.int(let i))?: return Int(clamping: max(0, i))
            case .parameter(let name)?:
                if case .int(let i)? = request.parameters[name] { return Int(clamping: max(0, i)) }
                return nil
            default: return nil
            }
        }
        guard query.limit != nil, let limit = value(query.limit), let offset = value(query.offset) else { return nil }
        let (sum, overflow) = limit.addingReportingOverflow(offset)
        return overflow ? Int.max : sum
    }

    /// The rows an ordered scan reads when LIMIT stops it: the rows wanted, four times over
    /// when other conditions may still reject rows.
    func orderedRows(_ rows: Double, residual: Bool) -> Double {
        guard let wanted = rowsWanted else { return rows }
        return min(rows, Double(wanted) * (residual ? 4 : 1))
    }
}
