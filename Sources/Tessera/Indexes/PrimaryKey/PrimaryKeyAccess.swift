// The document table's key, `meta().id`, as an access path (SPEC §9.2 "The primary key"):
// `=`, `IN`, ranges, `BETWEEN` and `LIKE 'prefix%'` on it become key lookups or key-range
// scans of the documents table, and `ORDER BY meta().id [DESC]` is that table's order.
// Not a registered kind — it has no definition and is never dropped — but it offers the
// planner `AccessCandidate`s like one. When a lone source needs nothing of its documents but
// their IDs, the path reads the collection's table of live IDs (`PrimaryKeyIDs`) instead of
// the documents: `SEARCH c USING COVERING PRIMARY KEY (id>=?)`, or `SCAN c USING COVERING
// PRIMARY KEY` for every ID.

/// The access paths the primary key offers for a collection source.
enum PrimaryKeyAccess {
    static func accessPaths(for request: AccessRequest) throws -> [AccessCandidate] {
        let planning = KeyedPlanning(request: request)
        let src = request.source
        let q = request.query
        let idExpr = BoundExpr.meta(0, .id)
        var used: [KeyedPlanning.ColumnTerm] = []
        var byColumn: [Int: [KeyedPlanning.ColumnTerm]] = [:]
        for t in planning.candidateTerms {
            if let m = planning.match(term: t, expressions: [idExpr], columnName: { _ in "id" }) {
                byColumn[0, default: []].append(m)
            }
        }
        let (equalities, usedTerms, range) = KeyedPlanning.constrainPrefix(byColumn, columns: 1)
        used = usedTerms
        // ORDER BY meta().id [DESC] on a lone source: the table's own order.
        var delivers = false
        var descending = false
        if q.sources.count == 1, !q.isAggregating, !q.distinct, q.orderBy.count == 1,
           KeyedPlanning.rebase(q.orderBy[0].expr, from: src.index) == idExpr {
            delivers = true
            descending = q.orderBy[0].descending
        }
        // Nothing is read from the documents but their IDs: the ID table covers the query.
        let covering = q.sources.count == 1 && !src.includeDeleted
            && planning.readsOnly { KeyedPlanning.rebase($0, from: src.index) == idExpr }
        guard !used.isEmpty || delivers || covering else { return [] }
        let docs = try request.snapshot.count(request.docs.records)
        let points = equalities.first?.count
        var plan = PrimaryKeyScanPlan(points: equalities.first, range: range, descending: descending,
                                      describedPredicates: used.map(\.text).joined(separator: " AND "))
        plan.spread = !KeyedPlanning.spreadColumns(used).isEmpty
        if covering { plan.ids = request.ids }
        // IDs are looked up one by one, or a share of the table is read in order (SQLite's
        // shares: a quarter for one bound, a sixteenth for two, a tenth for a prefix).
        var rows = Double(docs)
        var work: Double
        if let points {
            rows = min(rows, Double(points))
            work = rows * (covering ? CostModel.entryRead : CostModel.documentFetch)
        } else {
            switch range {
            case .prefix?: rows *= 0.1
            case .range(let lo, let hi)?: rows *= (lo != nil && hi != nil) ? 1.0 / 16 : 0.25
            case .equal?, nil: break
            }
            if delivers {
                let residual = planning.candidateTerms.count > used.count
                rows = planning.orderedRows(rows, residual: residual)
            }
            work = rows * (covering ? CostModel.entryRead : CostModel.scanRow)
        }
        let cost = AccessCost(equalityColumns: points == nil ? 0 : 1, rangeColumns: range == nil ? 0 : 1,
                              deliversOrder: delivers ? 1 : 0, estimatedRows: Int(rows.rounded(.up)), estimatedCost: work)
        // IDs are strings compared byte by byte (the table's order), and the scan resolves a
        // bound of another type by SPEC §5.4's type order, NULL and MISSING as never TRUE:
        // exact terms leave the filter (ON terms stay, for LEFT JOIN's null-extended rows).
        let satisfied = used.filter { $0.exact && !planning.onTerms.contains($0.term) }.map(\.term)
        return [AccessCandidate(plan: plan, satisfied: satisfied, deliversOrder: delivers, cost: cost)]
    }
}

/// Lookups or a key-range scan of a collection's documents table by ID.
struct PrimaryKeyScanPlan: IndexAccessPlan {
    /// `=` / `IN`: the IDs to look up.
    var points: [BoundExpr]?
    /// `meta().id IN <array>`: the one point is an array of the IDs.
    var spread = false
    /// A range or prefix (when there are no points).
    var range: ColumnConstraint?
    /// Visit IDs in descending order.
    var descending: Bool
    var describedPredicates: String
    /// The collection's table of live IDs when the query needs nothing else of its documents
    /// (a covering scan: rows are IDs only, and tombstones are never seen); nil: the documents.
    var ids: StorageTable?

    var index: IndexStore? { nil }
    var boundSources: [Int] { [] }
    /// The scan's evaluators, compiled for the first execution and shared by the others.
    let evaluators = CompiledOnce<(points: [Compiled], lower: Evaluator?, upper: Evaluator?)>()

    func makeRowSource(slot: Int, docs: DocumentTables, includeDeleted: Bool, parameters: [String: Value],
                       rowsWanted: Int?) throws -> RowSource {
        PrimaryKeyScan(slot: slot, plan: self, docs: docs, includeDeleted: includeDeleted)
    }

    func explain(sources: [SourceInfo]) -> IndexAccessExplanation {
        IndexAccessExplanation(access: points != nil ? .primaryKeyLookup : .primaryKeyScan,
                               keyRange: describedPredicates.isEmpty ? nil : describedPredicates, covering: ids != nil)
    }
}

/// Reads documents by ID: point lookups, or a cursor over an ID range in either direction.
final class PrimaryKeyScan: RowSource {
    let plan: PrimaryKeyScanPlan
    /// The table read: the documents, or the live IDs when the scan covers the query.
    let docs: StorageTable
    /// The documents (with their records' second pieces).
    let tables: DocumentTables
    let includeDeleted: Bool
    /// Rows are IDs only (`SourceSlot.bindCoveredID`): `docs` is the ID table.
    private let covering: Bool
    private let pointEvaluators: [Compiled]
    private let lowerEvaluator: Evaluator?
    private let upperEvaluator: Evaluator?
    /// The IDs to look up, one after another in `idBytes` (bound slots point into it), by length.
    @exclusivity(unchecked) private var keyLengths: [Int] = []
    @exclusivity(unchecked) private var keyPosition = 0
    @exclusivity(unchecked) private var idBytes = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 1)
    /// Where the next ID to look up starts in `idBytes` (while reading; its end while filling).
    @exclusivity(unchecked) private var idOffset = 0

    /// Several IDs in a read snapshot are looked up a batch at a time, their B-tree walks
    /// overlapping (`Snapshot.get(_:from:)`); `lookaheadStart` is the key position of the
    /// batch's first ID, `lookaheadEnd` the position after its last (0 / 0: none yet).
    private let lookahead = StorageGetBatch()
    @exclusivity(unchecked) private var lookaheadStart = 0
    @exclusivity(unchecked) private var lookaheadEnd = 0
    @exclusivity(unchecked) private var batched = false

    /// The value of the ID at key position `position` (starting at `offset` in `idBytes`),
    /// from the current batch, or a new batch of the IDs from there on.
    private func batchedValue(_ ctx: ExecContext, position: Int, offset: Int) throws -> UnsafeRawBufferPointer? {
        if position < lookaheadStart || position >= lookaheadEnd {
            lookahead.removeAll()
            var at = offset
            var p = position
            while p < keyLengths.count && lookahead.count < KeyRangeScan.maxLookahead {
                lookahead.append(key: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(idBytes)[at..<(at + keyLengths[p])]))
                at += keyLengths[p]
                p += 1
            }
            lookaheadStart = position
            lookaheadEnd = p
            try ctx.txn.get(lookahead, from: docs)
        }
        return lookahead.value(at: position - lookaheadStart)
    }

    /// Appends an ID to look up (reset only: earlier IDs move if the buffer grows).
    private func appendKey(_ id: UnsafeRawBufferPointer) {
        if idBytes.count < idOffset + id.count {
            let bigger = UnsafeMutableRawBufferPointer.allocate(byteCount: max(idOffset + id.count, 2 * idBytes.count), alignment: 1)
            if idOffset > 0 { bigger.baseAddress!.copyMemory(from: idBytes.baseAddress!, byteCount: idOffset) }
            idBytes.deallocate()
            idBytes = bigger
        }
        if !id.isEmpty { (idBytes.baseAddress! + idOffset).copyMemory(from: id.baseAddress!, byteCount: id.count) }
        idOffset += id.count
        keyLengths.append(id.count)
    }
    /// Puts the IDs in the buffer in key order (reversed for DESC), each once: sorts their
    /// positions by the bytes, then rewrites the buffer in that order (scratch arrays and a
    /// second buffer are kept between executions: no allocation once they are big enough).
    private func orderKeys() {
        let n = keyLengths.count
        if keyStarts.count < n {
            keyStarts.append(contentsOf: repeatElement(0, count: n - keyStarts.count))
            keyOrder.append(contentsOf: repeatElement(0, count: n - keyOrder.count))
        }
        if sortedBytes.count < idOffset {
            sortedBytes.deallocate()
            sortedBytes = .allocate(byteCount: max(idOffset, 2 * sortedBytes.count), alignment: 1)
        }
        sortedLengths.removeAll(keepingCapacity: true)
        let base = UnsafeRawPointer(idBytes.baseAddress!)
        let descending = plan.descending
        var out = 0
        keyLengths.withUnsafeBufferPointer { lengths in
            keyStarts.withUnsafeMutableBufferPointer { starts in
                keyOrder.withUnsafeMutableBufferPointer { order in
                    var start = 0
                    for i in 0..<n {
                        starts[i] = start
                        start += lengths[i]
                        order[i] = i
                    }
                    @inline(__always) func key(_ i: Int) -> UnsafeRawBufferPointer {
                        UnsafeRawBufferPointer(start: base + starts[i], count: lengths[i])
                    }
                    if n <= 16 {
                        // A few IDs (the usual IN list): an insertion sort, without the
                        // general sort's setup.
                        for i in 1..<max(n, 1) {
                            let x = order[i]
                            var j = i
                            while j > 0 && compareStoredKeys(key(x), key(order[j - 1])) < 0 {
                                order[j] = order[j - 1]
                                j -= 1
                            }
                            order[j] = x
                        }
                    } else {
                        var part = UnsafeMutableBufferPointer(rebasing: order[0..<n])
                        part.sort { compareStoredKeys(key($0), key($1)) < 0 }
                    }
                    var last: UnsafeRawBufferPointer?
                    for k in 0..<n {
                        let i = order[descending ? n - 1 - k : k]
                        let bytes = key(i)
                        if let last, compareStoredKeys(last, bytes) == 0 { continue }
                        let to = sortedBytes.baseAddress! + out
                        if bytes.count > 0 { to.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
                        last = UnsafeRawBufferPointer(start: to, count: bytes.count)
                        out += bytes.count
                        sortedLengths.append(bytes.count)
                    }
                }
            }
        }
        swap(&idBytes, &sortedBytes)
        swap(&keyLengths, &sortedLengths)
        idOffset = out
    }
    /// Scratch space of `orderKeys`.
    @exclusivity(unchecked) private var keyStarts: [Int] = []
    @exclusivity(unchecked) private var keyOrder: [Int] = []
    @exclusivity(unchecked) private var sortedLengths: [Int] = []
    @exclusivity(unchecked) private var sortedBytes = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 1)

    /// Range scan state.
    @exclusivity(unchecked) private var cursor: KeyCursor?
    /// `cursor`, moved per row without retaining it.
    @exclusivity(unchecked) private var moving: BorrowedCursor?
    @exclusivity(unchecked) private var lower: (key: [UInt8], inclusive: Bool)?
    @exclusivity(unchecked) private var upper: (key: [UInt8], inclusive: Bool)?
    @exclusivity(unchecked) private var prefix: [UInt8]?
    @exclusivity(unchecked) private var empty = false
    @exclusivity(unchecked) private var started = false

    init(slot: Int, plan: PrimaryKeyScanPlan, docs: DocumentTables, includeDeleted: Bool) {
        self.plan = plan
        // A covering scan reads the table of live IDs, not the documents.
        self.docs = plan.ids ?? docs.records
        tables = docs
        covering = plan.ids != nil
        self.includeDeleted = includeDeleted
        (pointEvaluators, lowerEvaluator, upperEvaluator) = plan.evaluators.get {
            guard case .range(let lo, let hi)? = plan.range else {
                return ((plan.points ?? []).map { Compiled(ExpressionCompiler.compile($0)) }, nil, nil)
            }
            return ([], lo.map { ExpressionCompiler.compile($0.0) }, hi.map { ExpressionCompiler.compile($0.0) })
        }
        super.init(slot: slot)
    }

    /// A bound's value: a literal as written; anything else that is NULL or MISSING makes the
    /// comparison never TRUE (nil).
    private static func value(_ e: BoundExpr, _ f: Evaluator, _ ctx: ExecContext) -> Value? {
        if case .literal(let v) = e { return v }
        let v = f(ctx)
        return v.isMissing || v.isNull ? nil : v
    }

    override func reset(_ ctx: ExecContext) throws {
        keyPosition = 0
        lookaheadStart = 0
        lookaheadEnd = 0
        defer { batched = moving == nil && keyLengths.count > 1 && ctx.txn.isReadOnly && ctx.readCounters == nil }
        started = false
        empty = false
        lower = nil
        upper = nil
        prefix = nil
        if let points = plan.points {
            keyLengths.removeAll(keepingCapacity: true)
            idOffset = 0
            // A later source looks its IDs up with a cursor, per outer row; the first source
            // is reset once per execution and needs none.
            if slot != 0 && cursor == nil { try openCursor(ctx) }
            if points.count == 1 && !plan.spread {
                // One ID, the usual `meta().id = $id`: straight into the buffer.
                guard case .string(var s)? = Self.value(points[0], pointEvaluators[0].evaluate, ctx), !s.isEmpty else { return }
                s.withUTF8 { appendKey(UnsafeRawBufferPointer($0)) }
                return
            }
            // The IDs go straight into the buffer (bound slots, and rows kept for grouping,
            // point at them until the next reset), then are put in key order.
            for (e, f) in zip(points, pointEvaluators) {
                let v = Self.value(e, f.evaluate, ctx)
                if plan.spread {
                    // `meta().id IN <array>`: the string elements; anything else matches nothing.
                    guard case .array(let ids)? = v else { continue }
                    guard ids.count <= KeyedPlanning.maxKeyPoints else { throw InLimits.tooMany(ids.count) }
                    for case .string(var s) in ids where !s.isEmpty { s.withUTF8 { appendKey(UnsafeRawBufferPointer($0)) } }
                } else if case .string(var s)? = v, !s.isEmpty {
                    // No document has an empty ID (and LMDB takes no empty key).
                    s.withUTF8 { appendKey(UnsafeRawBufferPointer($0)) }
                }
            }
            if keyLengths.count > 1 { orderKeys() }
            return
        }
        if cursor == nil { try openCursor(ctx) }
        switch plan.range {
        case .prefix(let p)?:
            prefix = Array(p.utf8)
        case .range(let lo, let hi)?:
            // IDs are strings: a bound below the strings in SPEC §5.4's order leaves that side
            // open, one above them leaves nothing.
            if let (e, inclusive) = lo, let f = lowerEvaluator {
                guard let v = Self.value(e, f, ctx) else { empty = true; return }
                if case .string(let s) = v { lower = (Array(s.utf8), inclusive) } else if v.typeRank > 5 { empty = true }
            }
            if let (e, inclusive) = hi, let f = upperEvaluator {
                guard let v = Self.value(e, f, ctx) else { empty = true; return }
                if case .string(let s) = v { upper = (Array(s.utf8), inclusive) } else if v.typeRank < 5 { empty = true }
            }
        default:
            break
        }
    }

    private func openCursor(_ ctx: ExecContext) throws {
        let c = try ctx.txn.cursor(docs)
        cursor = c
        moving = c.borrowed
    }

    /// Binds the document the cursor is on (false for a tombstone that is not wanted).
    private func bindCurrent(_ ctx: ExecContext, _ c: BorrowedCursor) -> Bool {
        if covering { return bindID(ctx, c.key) }
        return DocumentFetch.bind(ctx, slot: slot, id: c.key, record: c.value, tables: tables, includeDeleted: includeDeleted)
    }

    /// Binds a row of a covering scan: the ID alone (every ID in the table is live).
    @inline(__always)
    private func bindID(_ ctx: ExecContext, _ id: UnsafeRawBufferPointer) -> Bool {
        if let counters = ctx.readCounters { counters.entries &+= 1 }
        SourceSlot.bindCoveredID(ctx.slots + slot, id)
        return true
    }

    /// True while the cursor's key is inside the range (in the scan's direction).
    private func inside(_ key: UnsafeRawBufferPointer) -> Bool {
        if let prefix { return keyHasPrefix(key, prefix) }
        if plan.descending {
            if let lower {
                let c = compareStoredKeys(key, lower.key)
                return c > 0 || (c == 0 && lower.inclusive)
            }
        } else if let upper {
            let c = compareStoredKeys(key, upper.key)
            return c < 0 || (c == 0 && upper.inclusive)
        }
        return true
    }

    override func next(_ ctx: ExecContext) throws -> Bool {
        if plan.points != nil {
            if keyPosition == 0 { idOffset = 0 }
            while keyPosition < keyLengths.count {
                let id = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(idBytes)[idOffset..<(idOffset + keyLengths[keyPosition])])
                keyPosition += 1
                idOffset += id.count
                if let c = moving {
                    if try c.seekExact(id), bindCurrent(ctx, c) { return true }
                    continue
                }
                // The slot keeps pointing at `id`: it lives until the next reset.
                let found = batched ? try batchedValue(ctx, position: keyPosition - 1, offset: idOffset - id.count)
                                    : try ctx.txn.get(docs, key: id)
                if covering {
                    if found != nil, bindID(ctx, id) { return true }
                    continue
                }
                if let v = found,
                   DocumentFetch.bind(ctx, slot: slot, id: id, record: v, tables: tables, includeDeleted: includeDeleted) { return true }
            }
            return false
        }
        guard let c = moving, !empty else { return false }
        var ok: Bool
        if !started {
            started = true
            if plan.descending {
                if let upper, upper.key.isEmpty {
                    ok = false // every ID is after ""
                } else if let upper {
                    ok = try c.seekLast(atOrBefore: upper.key)
                    if ok && !upper.inclusive && compareStoredKeys(c.key, upper.key) == 0 { ok = try c.prev() }
                } else if let prefix {
                    // The last key with this prefix: just before the first key after it.
                    var after = prefix
                    while let last = after.last, last == 0xFF { after.removeLast() }
                    if after.isEmpty {
                        ok = try c.last()
                    } else {
                        after[after.count - 1] += 1
                        ok = try c.seek(after) ? try c.prev() : try c.last()
                    }
                } else {
                    ok = try c.last()
                }
            } else {
                if let lower, !lower.key.isEmpty {
                    ok = try c.seek(lower.key)
                    if ok && !lower.inclusive && compareStoredKeys(c.key, lower.key) == 0 { ok = try c.next() }
                } else if let prefix, !prefix.isEmpty {
                    ok = try c.seek(prefix)
                } else {
                    ok = try c.first()
                }
            }
        } else {
            ok = plan.descending ? try c.prev() : try c.next()
        }
        while ok {
            guard inside(c.key) else { return false }
            if bindCurrent(ctx, c) { return true }
            ok = plan.descending ? try c.prev() : try c.next()
        }
        return false
    }

    override func close() {
        moving = nil
        cursor?.close()
        cursor = nil
    }

    deinit {
        idBytes.deallocate()
        sortedBytes.deallocate()
    }
}
