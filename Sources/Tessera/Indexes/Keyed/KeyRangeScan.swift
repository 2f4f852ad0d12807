

/// Reads a value (or array) index over key ranges built when the scan starts, and binds
/// each entry's document. Ranges are visited in key order (or reverse for ORDER BY … DESC).
///
/// Truncated keys (values longer than LMDB's key limit) that a range cannot classify are
/// re-checked against the document with the predicates the index was meant to satisfy.
final class KeyRangeScan: RowSource {
    let plan: KeyRangeScanPlan
    let docs: StorageTable
    let includeDeleted: Bool
    private let equalities: [[Compiled?]]
    private let equalityExprs: [[BoundExpr]]
    private let recheck: [Compiled]
    /// Array-index scans bind the parent document once, however many elements match.
    private let dedupe: Bool
    @exclusivity(unchecked) private var seen = Set<[UInt8]>()
    @exclusivity(unchecked) private var ranges: [(exact: IndexKey.KeyRange, scan: IndexKey.KeyRange)] = []
    @exclusivity(unchecked) private var rangeIndex = 0
    @exclusivity(unchecked) private var positioned = false
    @exclusivity(unchecked) private var cursor: KeyCursor?
    /// Covering scans: the key's values are the row; index expression paths, in order.
    private let coveredPaths: [[PathComponent]]?

    init(slot: Int, plan: KeyRangeScanPlan, docs: StorageTable, includeDeleted: Bool) {
        self.plan = plan
        self.docs = docs
        self.includeDeleted = includeDeleted
        equalityExprs = plan.keys.equalities
        equalities = plan.keys.equalities.map { $0.map { e in if case .literal = e { return nil } else { return Compiled(ExpressionCompiler.compile(e)) } } }
        recheck = plan.satisfied.map { Compiled(ExpressionCompiler.compile($0)) }
        // An array index has one entry per (element values, document): a lookup that fixes
        // every column meets each document at most once per key range (several ranges are
        // deduplicated below); a prefix or range lookup can meet it once per element.
        let columns = max(1, plan.store.expressions.count)
        let pointLookup = plan.keys.rangeConstraint == nil && plan.keys.equalities.count == columns
        dedupe = !plan.arraySources.isEmpty && !pointLookup
        coveredPaths = plan.covering ? plan.store.expressions.map { e in
            if case .sourcePath(_, let p) = e { return p } else { return [] }
        } : nil
        super.init(slot: slot)
    }

    /// A literal bound is used as written; any other value that is NULL or MISSING at run
    /// time makes the comparison never TRUE (nil: no range).
    private func evaluate(_ e: BoundExpr, _ f: Evaluator?, _ ctx: ExecContext, allowNull: Bool) -> Value? {
        if case .literal(let v) = e { return v }
        let v = f!(ctx)
        if v.isMissing || (v.isNull && !allowNull) { return nil }
        return v
    }

    override func reset(_ ctx: ExecContext) throws {
        if cursor == nil { cursor = try ctx.txn.cursor(plan.store.table) }
        seen.removeAll(keepingCapacity: true)
        rangeIndex = 0
        positioned = false
        // Equality tuples: the cartesian product of each column's values.
        var tuples: [[Value]] = [[]]
        for (col, exprs) in equalityExprs.enumerated() {
            var values: [Value] = []
            for (i, e) in exprs.enumerated() {
                guard let v = evaluate(e, equalities[col][i]?.evaluate, ctx, allowNull: true) else { continue }
                if plan.keys.spread.contains(col) {
                    // `x IN <array>`: each element is a key point; anything else matches nothing.
                    if case .array(let elements) = v { values.append(contentsOf: elements) }
                } else {
                    values.append(v)
                }
            }
            guard tuples.count * values.count <= KeyedPlanning.maxKeyPoints else {
                throw InLimits.tooMany(tuples.count * values.count)
            }
            tuples = tuples.flatMap { t in values.map { t + [$0] } }
        }
        var unique = KeyRangeScan.ranges(tuples: tuples, constraint: plan.keys.rangeConstraint) { e in
            evaluate(e, e.isLiteral ? nil : ExpressionCompiler.compile(e), ctx, allowNull: false)
        }
        if plan.descending { unique.reverse() }
        ranges = unique.map { ($0, $0.clipped()) }
        // Several ranges can meet the same document (truncated keys of different values).
        dedupeAcrossRanges = ranges.count > 1
        pending = []
        cursorAtUnread = false
    }

    /// The key ranges of the equality tuples `tuples` followed by `constraint` on the next
    /// column, in key order, each once. `bound` gives a range bound's value (nil: the
    /// comparison is never TRUE, no range for it).
    static func ranges(tuples: [[Value]], constraint: ColumnConstraint?, bound: (BoundExpr) -> Value?) -> [IndexKey.KeyRange] {
        var built: [IndexKey.KeyRange] = []
        for t in tuples {
            switch constraint {
            case nil, .equal?:
                built.append(.point(t))
            case .prefix(let p)?:
                built.append(.prefix(equal: t, stringPrefix: p))
            case .range(let lo, let hi)?:
                var lower: Value = .null, lowerInclusive = false
                if let (e, inc) = lo {
                    guard let v = bound(e) else { continue }
                    lower = v; lowerInclusive = inc
                }
                var upper: Value? = nil, upperInclusive = true
                if let (e, inc) = hi {
                    guard let v = bound(e) else { continue }
                    upper = v; upperInclusive = inc
                }
                let r = IndexKey.KeyRange.range(equal: t, lower: lower, lowerInclusive: lowerInclusive, upper: upper, upperInclusive: upperInclusive)
                if !r.isEmpty { built.append(r) }
            }
        }
        built.sort { $0.lower.lexicographicallyPrecedes($1.lower) }
        var unique: [IndexKey.KeyRange] = []
        for r in built where unique.last != r { unique.append(r) }
        return unique
    }

    /// Entries whose values share their first `groupLength` key bytes may have been
    /// truncated, so their key order is not their value order: an ordered scan reads the
    /// whole group, sorts it by the documents' values, and emits it from `pending`.
    @exclusivity(unchecked) private var pending: [SourceSlot] = []
    @exclusivity(unchecked) private var cursorAtUnread = false
    @exclusivity(unchecked) private var dedupeAcrossRanges = false
    private let groupLength = IndexKey.minimumRetainedTupleBytes()

    private func readGroup(_ ctx: ExecContext, cursor: KeyCursor, exact: IndexKey.KeyRange, scan: IndexKey.KeyRange) throws -> Bool {
        let first = cursor.key
        let prefix = Array(first[0..<groupLength])
        var members: [(values: [Value], id: [UInt8], slot: SourceSlot)] = []
        var ok = true
        while ok {
            let key = cursor.key
            guard key.count >= groupLength, keyHasPrefix(key, prefix) else { break }
            if plan.descending { if compareStoredKeys(key, scan.lower) < 0 { break } } else if let upper = scan.upper, compareStoredKeys(key, upper) >= 0 { break }
            let m = exact.match(key: key)
            if m != .outside, let (_, idLength) = IndexKey.layout(key) {
                let n = key.count
                let id = UnsafeRawBufferPointer(rebasing: key[(n - 3 - idLength)..<(n - 3)])
                if seen.insert(Array(id)).inserted,
                   try DocumentFetch.bind(ctx, slot: slot, table: docs, id: id, includeDeleted: includeDeleted),
                   m == .inside || recheck.allSatisfy({ Semantics.truth($0(ctx)) == .true }),
                   let body = ctx.slots[slot].body {
                    members.append((plan.store.expressionValues(body: body, txn: ctx.txn), Array(id), ctx.slots[slot]))
                }
            }
            ok = plan.descending ? try cursor.prev() : try cursor.next()
        }
        members.sort { a, b in
            let c = Value.compare(.array(a.values), .array(b.values))
            if c != 0 { return plan.descending ? c > 0 : c < 0 }
            return plan.descending ? b.id.lexicographicallyPrecedes(a.id) : a.id.lexicographicallyPrecedes(b.id)
        }
        pending = members.reversed().map(\.slot)
        return ok
    }

    override func next(_ ctx: ExecContext) throws -> Bool {
        guard let cursor else { return false }
        if let s = pending.popLast() {
            ctx.slots[slot] = s
            return true
        }
        while rangeIndex < ranges.count {
            let (exact, scan) = ranges[rangeIndex]
            var ok: Bool
            if !positioned {
                positioned = true
                if plan.descending {
                    if let upper = scan.upper {
                        ok = try cursor.seek(upper) ? try cursor.prev() : try cursor.last()
                    } else {
                        ok = try cursor.last()
                    }
                } else {
                    // LMDB rejects an empty key: an open lower bound is the first entry.
                    ok = scan.lower.isEmpty ? try cursor.first() : try cursor.seek(scan.lower)
                }
            } else if cursorAtUnread {
                // A group read left the cursor on the first entry after it.
                cursorAtUnread = false
                ok = true
            } else {
                ok = plan.descending ? try cursor.prev() : try cursor.next()
            }
            while ok {
                try ctx.checkInterrupt()
                let key = cursor.key
                if let counters = ctx.readCounters { counters.entries &+= 1 }
                if plan.descending {
                    if compareStoredKeys(key, scan.lower) < 0 { break }
                } else if let upper = scan.upper, compareStoredKeys(key, upper) >= 0 {
                    break
                }
                if plan.ordered, let (tupleLength, _) = IndexKey.layout(key), tupleLength >= groupLength {
                    let more = try readGroup(ctx, cursor: cursor, exact: exact, scan: scan)
                    guard let s = pending.popLast() else {
                        if !more { break }
                        continue // the cursor is on the first entry after the group
                    }
                    if more {
                        cursorAtUnread = true
                    } else {
                        // The cursor ran off the table: this range is done.
                        rangeIndex += 1
                        positioned = false
                    }
                    ctx.slots[slot] = s
                    return true
                }
                let m = exact.match(key: key)
                if m != .outside, key.count >= IndexKey.trailerSize {
                    let n = key.count
                    let idLength = Int(key[n - 3]) << 8 | Int(key[n - 2])
                    if idLength + IndexKey.trailerSize <= n {
                        let id = UnsafeRawBufferPointer(rebasing: key[(n - 3 - idLength)..<(n - 3)])
                        var fresh = true
                        // A value index holds one entry per document: one range meets it once.
                        if dedupe || dedupeAcrossRanges || (plan.ordered && !plan.arraySources.isEmpty) {
                            fresh = seen.insert(Array(id)).inserted
                        }
                        if fresh, m == .inside, let paths = coveredPaths, let values = coveredValues(key, tupleLength: n - IndexKey.trailerSize - idLength) {
                            ctx.slots[slot] = SourceSlot(state: .covered, id: id, covered: values, coveredPaths: paths,
                                                         coveredGeneration: tupleGeneration)
                            return true
                        }
                        if fresh, try DocumentFetch.bind(ctx, slot: slot, table: docs, id: id, includeDeleted: includeDeleted) {
                            if m == .inside || recheck.allSatisfy({ Semantics.truth($0(ctx)) == .true }) { return true }
                        }
                    }
                }
                ok = plan.descending ? try cursor.prev() : try cursor.next()
            }
            rangeIndex += 1
            positioned = false
        }
        return false
    }

    /// The last covered entry's tuple bytes and values: neighbours in an index often share
    /// their values (every entry of a group), which are then not decoded again.
    @exclusivity(unchecked) private var lastTuple: [UInt8] = []
    @exclusivity(unchecked) private var lastValues: [Value] = []
    /// Numbers the distinct tuples met, in order (see `SourceSlot.coveredGeneration`).
    @exclusivity(unchecked) private var tupleGeneration = 0

    /// The values of a covered entry's key (nil if truncated or malformed).
    private func coveredValues(_ key: UnsafeRawBufferPointer, tupleLength: Int) -> [Value]? {
        if !lastTuple.isEmpty, lastTuple.count == tupleLength, keyHasPrefix(key, lastTuple) { return lastValues }
        guard let values = try? IndexKey.values(fromKey: key) else { return nil }
        tupleGeneration += 1
        lastTuple = Array(key[0..<tupleLength])
        lastValues = values
        return values
    }

    override func close() {
        cursor?.close()
        cursor = nil
    }
}

extension BoundExpr {
    var isLiteral: Bool { if case .literal = self { return true } else { return false } }
}
