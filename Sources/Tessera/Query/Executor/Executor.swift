

/// Runs a `QueryPlan` in one read transaction and produces projected rows.
///
/// Sources are joined by nested loops in plan order (each level an access path: a scan,
/// an index lookup, an UNNEST); WHERE terms run at the first level where their sources
/// are bound. Above the joins: grouping and aggregates, HAVING, projection, DISTINCT,
/// ORDER BY (a full sort, or a bounded heap with LIMIT) and OFFSET/LIMIT. Without
/// grouping, DISTINCT or sorting, rows stream one at a time.
final class Executor {
    /// The plan, read through its prepared box (a `QueryPlan` copy costs a retain per field).
    private let prepared: PreparedPlan
    private var plan: QueryPlan { _read { yield prepared.plan } }
    let ctx: ExecContext
    private let levels: [RowSource]
    /// `levels`, unretained (for the per-row calls).
    private let levelRefs: [Unmanaged<RowSource>]
    /// ON, filters, columns, keys and HAVING: the plan's own when they read no parameter.
    private let ev: ExecutorEvaluators
    private var onConditions: [Compiled?] { _read { yield ev.ons } }
    private var filters: [[Compiled]] { _read { yield ev.filters } }
    private var leftOuter: [Bool] { _read { yield ev.leftOuter } }
    @exclusivity(unchecked) private var matchedAny: [Bool]
    /// Per level: no ON condition, no filter, not the inner side of a LEFT JOIN.
    private let plainLevel: [Bool]
    /// The levels the join iterates (the rest are bound by an earlier level's scan).
    private let drivingLevels: Int
    @exclusivity(unchecked) private var started = false
    @exclusivity(unchecked) private var exhausted = false

    private var columns: [ColumnEvaluator] { _read { yield ev.columns } }
    private var orderKeys: [(Compiled, Collation, Bool)] { _read { yield ev.orderKeys } }
    private var aggregateArgs: [[Compiled]] { _read { yield ev.aggregateArgs } }
    private var groupKeys: [Compiled] { _read { yield ev.groupKeys } }
    private var having: Compiled? { ev.having }

    // Streaming state.
    @exclusivity(unchecked) private var buffered: [RowCells]?
    @exclusivity(unchecked) private var bufferPosition = 0
    @exclusivity(unchecked) private var emitted = 0
    @exclusivity(unchecked) private var skipped = 0
    /// Streaming DISTINCT: the last row's values and covered-tuple generation.
    @exclusivity(unchecked) private var lastDistinct: RowCells?
    @exclusivity(unchecked) private var lastDistinctGeneration = 0
    /// Streamed counted groups: the groups, the next to return, the paths that bind a
    /// group's values.
    @exclusivity(unchecked) private var countedGroups: (next: Int, paths: [[PathComponent]])?
    /// The groups `countedGroups` hands out (storage kept between executions).
    @exclusivity(unchecked) private var groups = CountedGroups()
    private let limit: Int?
    private let offset: Int

    /// The most rows this execution returns (its LIMIT), nil when unbounded.
    var rowLimit: Int? { limit }

    enum ColumnEvaluator {
        case expression(Compiled)
        case star(Int)
    }

    /// A result column's evaluator in an object of its own (`ExecutorEvaluators.columnBoxes`).
    final class ColumnBox {
        /// The column's expression (a star column's is never called).
        let evaluate: Evaluator
        /// The slot of a star column, -1 for an expression.
        let star: Int

        init(_ c: ColumnEvaluator) {
            switch c {
            case .expression(let f): evaluate = f.evaluate; star = -1
            case .star(let s): evaluate = { _ in .missing }; star = s
            }
        }
    }

    /// `ev.columnBoxes`, unretained (`ev` keeps them).
    private let columnRefs: [Unmanaged<ColumnBox>]

    /// EXPLAIN ANALYZE's figures (nil for an ordinary execution).
    private let analysis: QueryAnalysis?

    init(prepared: PreparedPlan, txn: Snapshot, parameters: BoundParameters, interrupt: QueryInterrupt? = nil, analysis: QueryAnalysis? = nil,
         sourceFactory: (SourcePlan, Int) throws -> RowSource) throws {
        self.prepared = prepared
        self.analysis = analysis
        // Fields are read through `prepared` (a local copy of the analysed query or of the
        // shared evaluators would retain every field of it, per execution).
        ctx = ExecContext(sourceCount: prepared.plan.query.sources.count, variableCount: prepared.plan.query.variableCount,
                          aggregateCount: prepared.plan.query.aggregates.count,
                          parameters: parameters, txn: txn)
        ctx.readCounters = analysis?.counters
        ctx.interrupt = interrupt
        var lv: [RowSource] = []
        lv.reserveCapacity(prepared.plan.sources.count)
        for i in prepared.plan.sources.indices {
            let source = try sourceFactory(prepared.plan.sources[i], i)
            lv.append(analysis.map { $0.wrap(source, level: i) } ?? source)
        }
        levels = lv
        levelRefs = lv.map { Unmanaged.passUnretained($0) }
        if prepared.usesMatch {
            var stores: [Int: CollectionStore] = [:]
            for sp in prepared.plan.sources { if let st = sp.store { stores[sp.source.index] = st } }
            let snapshot = txn
            ctx.matchSource = { slot, name, query in
                let lowered = name.lowercased()
                guard let index = stores[slot]?.indexes.first(where: { type(of: $0.kind).answersMatch && $0.definition.name.lowercased() == lowered }) else {
                    return [:]
                }
                return try index.kind.matches(index, snapshot: snapshot, query: query) ?? [:]
            }
        }
        ev = prepared.evaluators ?? ExecutorEvaluators(plan: prepared.plan, shared: prepared.shared, parameters: parameters.dictionary)
        columnRefs = ev.columnBoxes.map { Unmanaged.passUnretained($0) }
        matchedAny = Array(repeating: false, count: lv.count)
        let plain = lv.indices.map { [ev] k in ev.ons[k] == nil && ev.filters[k].isEmpty && !ev.leftOuter[k] }
        plainLevel = plain
        // Trailing UNNEST levels that a covering array-index scan binds, with nothing to
        // check, add exactly one row per row of the scan: the join stops above them.
        var driving = lv.count
        while driving > 1, analysis == nil, plain[driving - 1], lv[driving - 1] is BoundRowScan { driving -= 1 }
        drivingLevels = driving
        limit = prepared.plan.limit
        offset = prepared.plan.offset
    }

    func close() {
        for l in levels { l.close() }
        // Counted groups: small storage is kept for the next execution, a large one freed.
        if groups.values.count > 1 << 14 { groups = CountedGroups() } else if groups.count > 0 { groups.removeAll() }
    }

    /// True if this executor can run its plan again (`rearm`) once closed: nothing it holds
    /// depends on the parameters or the snapshot beyond what `rearm` replaces.
    var reusable: Bool { analysis == nil && prepared.evaluators != nil && !prepared.usesMatch }

    /// Readies a closed, `reusable` executor to run its plan again in `txn` with `parameters`
    /// (an execution then allocates no executor, context or row sources).
    func rearm(txn: Snapshot, parameters: BoundParameters, interrupt: QueryInterrupt?) {
        ctx.rearm(parameters: parameters, txn: txn, interrupt: interrupt)
        for k in matchedAny.indices { matchedAny[k] = false }
        started = false
        exhausted = false
        buffered = nil
        bufferPosition = 0
        emitted = 0
        skipped = 0
        lastDistinct = nil
        lastDistinctGeneration = 0
        countedGroups = nil
    }

    // MARK: - Joined rows

    private func passes(_ fs: [Compiled]) -> Bool {
        for f in fs where Semantics.truth(f(ctx)) != .true { return false }
        return true
    }

    /// Advances level `k` to its next row that satisfies ON and the level's filters.
    private func advance(_ k: Int) throws -> Bool {
        if plainLevel[k] {
            try ctx.checkInterrupt()
            // `levels` keeps the source alive: move it without retaining it per row.
            guard try levelRefs[k]._withUnsafeGuaranteedRef({ try $0.next(ctx) }) else { return false }
            analysis?.levels[k].passed += 1
            return true
        }
        let source = levelRefs[k]
        while true {
            try ctx.checkInterrupt()
            if try !source._withUnsafeGuaranteedRef({ try $0.next(ctx) }) {
                if leftOuter[k] && !matchedAny[k] {
                    matchedAny[k] = true
                    ctx.slots[k] = SourceSlot()
                    if passes(filters[k]) { analysis?.levels[k].passed += 1; return true }
                }
                return false
            }
            if let on = onConditions[k], Semantics.truth(on(ctx)) != .true { continue }
            matchedAny[k] = true
            if passes(filters[k]) { analysis?.levels[k].passed += 1; return true }
        }
    }

    /// Moves to the next complete joined row; false when there are no more.
    func nextJoinedRow() throws -> Bool {
        let more = try joinedRow()
        if let e = ctx.deferredError { throw e }
        return more
    }

    private func joinedRow() throws -> Bool {
        if exhausted { return false }
        let n = drivingLevels
        var k: Int
        if !started {
            started = true
            k = 0
            try levels[0].reset(ctx)
            matchedAny[0] = false
        } else {
            k = n - 1
        }
        while k >= 0 {
            if try advance(k) {
                if k == n - 1 { return true }
                k += 1
                try levels[k].reset(ctx)
                matchedAny[k] = false
            } else {
                k -= 1
            }
        }
        exhausted = true
        return false
    }

    // MARK: - Output rows

    private var streams: Bool {
        !plan.query.isAggregating && !plan.query.distinct && (plan.sort == .none)
    }

    /// The current row's columns. A star column keeps its document's encoded body (copied
    /// out of LMDB, so it outlives the transaction) for `Result` to decode on access.
    private func project() -> RowCells {
        // Rows of one to three columns keep their cells inline: nothing is allocated. Their
        // evaluators are called through unretained boxes (taking a closure out of the enum
        // retained and released its context, per column per row).
        switch columnRefs.count {
        case 1: return .one(cell(columnRefs[0]))
        case 2: return .two(cell(columnRefs[0]), cell(columnRefs[1]))
        case 3: return .three(cell(columnRefs[0]), cell(columnRefs[1]), cell(columnRefs[2]))
        default: break
        }
        var row: [ResultCell] = []
        row.reserveCapacity(columnRefs.count)
        for r in columnRefs { row.append(cell(r)) }
        return .many(row)
    }

    @inline(__always)
    private func cell(_ r: Unmanaged<ColumnBox>) -> ResultCell {
        r._withUnsafeGuaranteedRef { b in b.star < 0 ? .value(b.evaluate(ctx)) : slotCell(ctx, ctx.slots + b.star) }
    }

    /// The next output row (columns in column order), or nil at the end.
    func nextRow() throws -> RowCells? {
        if let limit, emitted >= limit { return nil }
        if streams {
            while try nextJoinedRow() {
                if let row = try emitCurrent() { return row }
            }
            return nil
        }
        // Groups of index columns counted by the scan (GROUP BY with only count(*)s, or
        // DISTINCT), wanted in key order: one row per group as it is read, nothing buffered.
        if ev.streamsGroups, buffered == nil, limit == nil, !started, let (k, paths) = prepared.countedGroups {
            try levels[0].reset(ctx)
            if try levels[0].groupCounts(ctx, columns: k, ids: !plan.query.distinct, into: &groups) {
                started = true
                exhausted = true
                countedGroups = (0, paths)
            }
        }
        if countedGroups != nil { return try nextCountedGroupRow() }
        if let evaluators = ev.distinctStreaming {
            while try nextJoinedRow() {
                guard let row = try nextDistinct(evaluators) else { continue }
                if skipped < offset { skipped += 1; continue }
                emitted += 1
                return row
            }
            return nil
        }
        if buffered == nil { buffered = try materialize() }
        guard bufferPosition < buffered!.count else { return nil }
        defer { bufferPosition += 1 }
        emitted += 1
        return buffered![bufferPosition]
    }

    /// The next row of the counted groups: each group bound as its first entry (the index
    /// columns' values and document ID), its `count(*)`s set, HAVING checked.
    private func nextCountedGroupRow() throws -> RowCells? {
        if let positions = ev.countedGroupColumns {
            // DISTINCT of index columns: the row is the group's values.
            while countedGroups!.next < groups.count {
                try ctx.checkInterrupt()
                let g = countedGroups!.next
                countedGroups!.next += 1
                analysis?.levels[0].passed += groups.counts[g]
                if skipped < offset { skipped += 1; continue }
                emitted += 1
                let first = groups.valueRange(g).lowerBound
                return RowCells(count: positions.count) { .value(groups.values[first + positions[$0]]) }
            }
            return nil
        }
        let calls = plan.query.aggregates.count
        while countedGroups!.next < groups.count {
            try ctx.checkInterrupt()
            let g = countedGroups!.next
            countedGroups!.next += 1
            guard bindCountedGroup(g, paths: countedGroups!.paths, calls: calls) else { continue }
            if let row = try emitCurrent() { return row }
        }
        return nil
    }

    /// Binds counted group `g` as its first row (the index columns' values, the document ID
    /// when kept) with its `count(*)`s; false when HAVING rejects it.
    @inline(__always)
    private func bindCountedGroup(_ g: Int, paths: [[PathComponent]], calls: Int) -> Bool {
        ctx.slots[0] = SourceSlot(state: .covered, covered: Array(groups.values[groups.valueRange(g)]), coveredPaths: paths)
        let id = groups.id(g)
        if !id.isEmpty { ctx.slots[0].ownedID = Array(id) }
        let count = groups.counts[g]
        analysis?.levels[0].passed += count
        for i in 0..<calls { ctx.aggregateValues[i] = .int(Int64(count)) }
        return having.map { Semantics.truth($0(ctx)) == .true } ?? true
    }

    /// The current row projected as an output row, or nil while OFFSET skips it.
    @inline(__always)
    private func emitCurrent() throws -> RowCells? {
        if skipped < offset { skipped += 1; return nil }
        emitted += 1
        let row = project()
        if let e = ctx.deferredError { throw e }
        return row
    }

    /// DISTINCT over rows that come grouped and need no sorting: the row's cells (decoded
    /// values) when they differ from the last row's (equal rows come one after another),
    /// else nil. Columns that are all index columns are equal for entries of the same
    /// covered tuple.
    private func nextDistinct(_ evaluators: [Compiled]) throws -> RowCells? {
        let generation = ev.distinctFromTuple && ctx.slots[0].state == .covered ? ctx.slots[0].coveredGeneration : 0
        if generation != 0 && generation == lastDistinctGeneration && lastDistinct != nil { return nil }
        lastDistinctGeneration = generation
        if let previous = lastDistinct {
            var same = true
            for (i, f) in evaluators.enumerated() where f(ctx) != previous[i].value { same = false; break }
            if same { return nil }
        }
        let row = RowCells(count: evaluators.count) { .value(evaluators[$0](ctx)) }
        if let e = ctx.deferredError { throw e }
        lastDistinct = row
        return row
    }

    private struct Candidate {
        var row: RowCells
        var keys: [Value]
        var ordinal: Int
    }

    private func sortKeys() -> [Value] { orderKeys.map { $0.0(ctx) } }

    private func less(_ a: Candidate, _ b: Candidate) -> Bool {
        for (i, k) in orderKeys.enumerated() {
            var c = Value.compare(a.keys[i], b.keys[i], collation: k.1)
            if k.2 { c = -c }
            if c != 0 { return c < 0 }
        }
        return a.ordinal < b.ordinal
    }

    /// Sorts candidates by the ORDER BY keys, checking for interruption every 1,024
    /// comparisons (once interrupted, the remaining comparisons are skipped and it throws).
    private func interruptibleSort(_ rows: inout [Candidate]) throws {
        guard let interrupt = ctx.interrupt else { rows.sort(by: less); return }
        var stopped = false
        var count = 0
        rows.sort { a, b in
            if stopped { return false }
            count &+= 1
            if count & 1023 == 0, interrupt.reason != .none { stopped = true; return false }
            return less(a, b)
        }
        if stopped { try ctx.checkInterrupt() }
    }

    /// The aggregates read from counters and index ends, or nil when one of them cannot be
    /// (the rows are then aggregated as usual).
    private func shortcutAggregates(_ sources: [AggregateSource]) throws -> [Value]? {
        var values: [Value] = []
        for source in sources {
            switch source {
            case .liveCount(let counters, let name):
                values.append(.int(Int64(bitPattern: try ctx.txn.counter(name, in: counters))))
            case .extreme(let index, let largest):
                guard let v = try index.kind.extremeValue(index, largest: largest, snapshot: ctx.txn) else { return nil }
                values.append(v)
            }
        }
        return values
    }

    /// The one row of an aggregate query answered without reading rows one by one (MIN/MAX
    /// from an index end, `count(*)` of the counter or of an index range), or nil when the
    /// query is not one. DISTINCT and ORDER BY do nothing to a single row; OFFSET and LIMIT
    /// still apply.
    private func singleAggregateRow() throws -> [RowCells]? {
        let values: [Value]
        if let shortcut = plan.aggregateShortcut, let v = try shortcutAggregates(shortcut) {
            values = v
        } else if prepared.countsRows {
            // count(*) of the rows of one source that nothing else reads: counted unbound.
            started = true
            exhausted = true
            try levels[0].reset(ctx)
            let n = try levels[0].countRows(ctx)
            if let e = ctx.deferredError { throw e }
            // No filter is left: every row counted passed.
            analysis?.levels[0].passed += n
            values = Array(repeating: .int(Int64(n)), count: plan.query.aggregates.count)
        } else {
            return nil
        }
        // As for any aggregate query without GROUP BY: one row, no source bound.
        ctx.clearSlots()
        for (i, v) in values.enumerated() { ctx.aggregateValues[i] = v }
        if let e = ctx.deferredError { throw e }
        emitted = 0
        guard having.map({ Semantics.truth($0(ctx)) == .true }) ?? true, offset == 0, limit.map({ $0 > 0 }) ?? true else { return [] }
        return [project()]
    }

    /// Runs the whole pipeline above the joins and returns the final rows.
    private func materialize() throws -> [RowCells] {
        if let row = try singleAggregateRow() { return row }
        var candidates: [Candidate] = []
        var heap = BoundedHeap<Candidate>(capacity: 0, less: { _, _ in false })
        let topK: Int? = { if case .topK(let n) = plan.sort, !plan.query.distinct { return n } else { return nil } }()
        if let topK { heap = BoundedHeap(capacity: topK, less: { [unowned self] in self.less($0, $1) }) }
        var ordinal = 0
        var seen = Set<[Value]>()
        var previousDistinct: [Value]? = nil

        func accept(_ projected: RowCells) {
            var row = projected
            if plan.query.distinct {
                // DISTINCT compares decoded values: keep them decoded.
                let values = row.map(\.value)
                if plan.groupsDelivered && !plan.query.isAggregating {
                    // Equal rows come one after another: compare with the last one only.
                    if values == previousDistinct { return }
                    previousDistinct = values
                } else if !seen.insert(values).inserted {
                    return
                }
                row = RowCells(values: values)
            }
            let c = Candidate(row: row, keys: orderKeys.isEmpty ? [] : sortKeys(), ordinal: ordinal)
            ordinal += 1
            if topK != nil { heap.insert(c) } else { candidates.append(c) }
        }

        if plan.query.isAggregating && plan.groupsDelivered && !plan.query.groupBy.isEmpty {
            // Rows come grouped (an index in key order): each group is finished when the next
            // one starts; no hash table.
            let calls = plan.query.aggregates
            var current: (key: [Value], slots: [SourceSlot], aggregates: [AggregateState])?
            func finish() {
                guard let g = current else { return }
                ctx.restore(g.slots)
                for (i, a) in g.aggregates.enumerated() { ctx.aggregateValues[i] = a.result() }
                if let having, Semantics.truth(having(ctx)) != .true { return }
                accept(project())
            }
            // Group keys are index columns: entries with the same covered tuple (the scan
            // numbers them) are in the same group without evaluating the keys.
            let single = prepared.plan.sources.count == 1
            var currentGeneration = 0
            if let (k, paths) = prepared.countedGroups, !started {
                // Only count(*)s of groups of index columns: the scan counts each group's
                // entries; each group is then bound as its first row, as below.
                try levels[0].reset(ctx)
                if try levels[0].groupCounts(ctx, columns: k, into: &groups) {
                    started = true
                    exhausted = true
                    for g in 0..<groups.count {
                        try ctx.checkInterrupt()
                        if bindCountedGroup(g, paths: paths, calls: calls.count) { accept(project()) }
                    }
                }
            }
            while try nextJoinedRow() {
                let generation = single && ctx.slots[0].state == .covered ? ctx.slots[0].coveredGeneration : 0
                var same = current != nil
                if same && (generation == 0 || generation != currentGeneration) {
                    // Compared in place: most rows continue the current group.
                    for (i, g) in groupKeys.enumerated() where g(ctx) != current!.key[i] { same = false; break }
                }
                currentGeneration = generation
                if !same {
                    let key = groupKeys.map { $0(ctx) }
                    // Finishing the last group rebinds its row: keep this one and put it back.
                    let row = ctx.snapshot()
                    finish()
                    ctx.restore(row)
                    current = (key, row, calls.map { AggregateState(function: $0.name, countStar: $0.args.isEmpty) })
                }
                for (i, args) in aggregateArgs.enumerated() {
                    current!.aggregates[i].add(args.isEmpty ? .bool(true) : args[0](ctx))
                }
            }
            finish()
        } else if plan.query.isAggregating {
            var groups = GroupIndex(groupBy: plan.query.groupBy, compiled: groupKeys)
            var states: [(slots: [SourceSlot], aggregates: [AggregateState])] = []
            let calls = plan.query.aggregates
            let fresh = { calls.map { AggregateState(function: $0.name, countStar: $0.args.isEmpty) } }
            if !calls.isEmpty && fresh().allSatisfy({ $0.kind == .countRows }) {
                // Only count(*)s: a row adds one to its group's counter, nothing else.
                var counts: [Int64] = []
                while try nextJoinedRow() {
                    let (gi, isNew) = groups.group(ctx)
                    if isNew {
                        states.append((ctx.snapshot(), []))
                        counts.append(0)
                    }
                    counts[gi] &+= 1
                }
                for g in states.indices {
                    states[g].aggregates = fresh()
                    for i in calls.indices { states[g].aggregates[i].addRows(counts[g]) }
                }
            } else {
                while try nextJoinedRow() {
                    let (gi, isNew) = groups.group(ctx)
                    if isNew { states.append((ctx.snapshot(), fresh())) }
                    for (i, args) in aggregateArgs.enumerated() {
                        states[gi].aggregates[i].add(args.isEmpty ? .bool(true) : args[0](ctx))
                    }
                }
            }
            if states.isEmpty && plan.query.groupBy.isEmpty {
                // An aggregate query without GROUP BY returns one row even on empty input.
                states.append((Array(repeating: SourceSlot(), count: ctx.slotCount), fresh()))
            }
            for g in states {
                try ctx.checkInterrupt()
                ctx.restore(g.slots)
                for (i, a) in g.aggregates.enumerated() { ctx.aggregateValues[i] = a.result() }
                if let having, Semantics.truth(having(ctx)) != .true { continue }
                accept(project())
            }
        } else if let evaluators = ev.groupedDistinct {
            // Equal rows come one after another (then sorted by the ORDER BY).
            while try nextJoinedRow() {
                if let row = try nextDistinct(evaluators) { accept(row) }
            }
        } else if plan.query.distinct, !plan.query.isAggregating, plan.query.columns.count == 1, columns.count == 1,
                  case .expression(let e) = plan.query.columns[0].kind, case .sourcePath(_, let p) = e, !p.isEmpty,
                  case .expression(let f) = columns[0] {
            // DISTINCT of one property: rows whose value was seen before are dropped by the
            // grouping table (a string by its bytes, read in place) before they are projected.
            var groups = GroupIndex(groupBy: [e], compiled: [f])
            while try nextJoinedRow() {
                if groups.group(ctx).isNew { accept(project()) }
            }
        } else {
            while try nextJoinedRow() { accept(project()) }
        }

        var ordered: [Candidate]
        if topK != nil {
            ordered = heap.sortedElements()
        } else {
            ordered = candidates
            if !orderKeys.isEmpty { try interruptibleSort(&ordered) }
        }
        if let e = ctx.deferredError { throw e }
        let start = min(offset, ordered.count)
        var rows = ordered[start...].map(\.row)
        if let limit, rows.count > limit { rows = Array(rows.prefix(limit)) }
        // OFFSET/LIMIT were applied here; nextRow must not apply them again.
        emitted = 0
        return rows
    }
}

/// Keeps the `capacity` smallest elements seen (by `less`), for ORDER BY + LIMIT.
struct BoundedHeap<Element> {
    let capacity: Int
    let less: (Element, Element) -> Bool
    private var items: [Element] = [] // a max-heap: items[0] is the largest kept

    init(capacity: Int, less: @escaping (Element, Element) -> Bool) {
        self.capacity = capacity
        self.less = less
        items.reserveCapacity(min(capacity, 1 << 16))
    }

    mutating func insert(_ e: Element) {
        if capacity <= 0 { return }
        if items.count < capacity {
            items.append(e)
            siftUp(items.count - 1)
        } else if less(e, items[0]) {
            items[0] = e
            siftDown(0)
        }
    }

    private mutating func siftUp(_ i: Int) {
        var c = i
        while c > 0 {
            let p = (c - 1) / 2
            if less(items[p], items[c]) { items.swapAt(p, c); c = p } else { return }
        }
    }

    private mutating func siftDown(_ i: Int) {
        var p = i
        let n = items.count
        while true {
            let l = 2 * p + 1, r = l + 1
            var m = p
            if l < n && less(items[m], items[l]) { m = l }
            if r < n && less(items[m], items[r]) { m = r }
            if m == p { return }
            items.swapAt(p, m)
            p = m
        }
    }

    func sortedElements() -> [Element] { items.sorted(by: less) }
}

/// The evaluators of an execution above its row sources (ON, filters, result columns, ORDER BY
/// and GROUP BY keys, aggregate arguments, HAVING). Expressions without parameters come
/// compiled from the plan's `SharedEvaluators`; the others take `parameters` as constants.
/// A plan whose expressions read no parameter makes this once (`PreparedPlan.evaluators`).
final class ExecutorEvaluators: @unchecked Sendable {
    // @unchecked Sendable: immutable, and compiled evaluators keep no state of their own
    // (see SharedEvaluators).
    let ons: [Compiled?]
    let filters: [[Compiled]]
    let leftOuter: [Bool]
    let columns: [Executor.ColumnEvaluator]
    /// `columns`, each in a box (`Executor.project`).
    let columnBoxes: [Executor.ColumnBox]
    let orderKeys: [(Compiled, Collation, Bool)]
    let aggregateArgs: [[Compiled]]
    let groupKeys: [Compiled]
    let having: Compiled?
    /// DISTINCT (without aggregates) over rows that the access path delivers grouped, every
    /// column an expression: the column evaluators (`Executor.nextDistinct` compares each row
    /// with the last one only).
    let groupedDistinct: [Compiled]?
    /// `groupedDistinct`, when the rows are wanted in that order (no ORDER BY): they stream
    /// (nil: they are materialised and sorted).
    let distinctStreaming: [Compiled]?
    /// True when those columns are all paths of the one source (a covering entry's values).
    let distinctFromTuple: Bool
    /// Groups (GROUP BY, or DISTINCT) that the access path delivers are wanted in that order
    /// (no ORDER BY to sort by): counted groups (`PreparedPlan.countedGroups`) stream.
    let streamsGroups: Bool
    /// DISTINCT of index columns read as counted groups, every result column one of the
    /// group's index expressions: each column's position in the group's values (the rows are
    /// built from them, nothing bound or evaluated). Nil otherwise.
    let countedGroupColumns: [Int]?

    init(plan: QueryPlan, shared: SharedEvaluators, parameters: [String: Value]) {
        func compiled(_ e: BoundExpr, _ once: Compiled?) -> Compiled {
            once ?? Compiled(ExpressionCompiler.compile(e.bindingParameters(parameters)))
        }
        ons = plan.sources.enumerated().map { i, sp in sp.source.on.map { compiled($0, shared.ons[i]) } }
        filters = plan.sources.enumerated().map { i, sp in sp.filter.enumerated().map { compiled($1, shared.filters[i][$0]) } }
        leftOuter = plan.sources.map { $0.source.join == .leftOuter }
        columns = plan.query.columns.enumerated().map { i, col in
            switch col.kind {
            case .expression(let e): return .expression(compiled(e, shared.columns[i]))
            case .star(let s): return .star(s ?? 0)
            }
        }
        columnBoxes = columns.map(Executor.ColumnBox.init)
        // A key that is a constant once parameters are bound (`GROUP BY $p`, `ORDER BY $p`)
        // never separates rows: leave it out rather than hash or compare it for every row.
        func constant(_ e: BoundExpr) -> Bool {
            if case .literal = e.bindingParameters(parameters) { return true }
            return false
        }
        orderKeys = plan.query.orderBy.enumerated().filter { !constant($1.expr) }.map { i, t in
            var collation = Collation.binary
            if case .collate(_, let c) = t.expr { collation = c }
            return (compiled(t.expr, shared.orderKeys[i]), collation, t.descending)
        }
        aggregateArgs = plan.query.aggregates.enumerated().map { i, a in a.args.enumerated().map { compiled($1, shared.aggregateArgs[i][$0]) } }
        groupKeys = plan.query.groupBy.enumerated().filter { !constant($1) }.map { compiled($1, shared.groupKeys[$0]) }
        having = plan.query.having.map { compiled($0, shared.having) }
        let evaluators = columns.compactMap { c -> Compiled? in if case .expression(let f) = c { return f } else { return nil } }
        if plan.query.distinct, plan.groupsDelivered, !plan.query.isAggregating, evaluators.count == columns.count, !evaluators.isEmpty {
            groupedDistinct = evaluators
        } else {
            groupedDistinct = nil
        }
        distinctStreaming = plan.sort == .none && orderKeys.isEmpty ? groupedDistinct : nil
        streamsGroups = plan.groupsDelivered && plan.sort == .none && orderKeys.isEmpty
            && (plan.query.distinct ? distinctStreaming != nil : !plan.query.groupBy.isEmpty)
        distinctFromTuple = plan.sources.count == 1 && plan.query.columns.allSatisfy { c in
            if case .expression(.sourcePath(0, let p)) = c.kind { return !p.isEmpty } else { return false }
        }
        var positions: [Int]? = nil
        if streamsGroups, plan.query.distinct, plan.query.aggregates.isEmpty, plan.query.having == nil,
           let (k, paths) = PreparedPlan.countedGroups(plan) {
            positions = []
            for c in plan.query.columns {
                guard case .expression(.sourcePath(0, let p)) = c.kind, !p.isEmpty,
                      let j = paths.prefix(k).firstIndex(of: p) else { positions = nil; break }
                positions!.append(j)
            }
        }
        countedGroupColumns = positions
    }
}
