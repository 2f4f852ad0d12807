

/// Reads a value (or array) index over key ranges built when the scan starts, and binds
/// each entry's document. Ranges are visited in key order (or reverse for ORDER BY … DESC).
///
/// Truncated keys (values longer than LMDB's key limit) that a range cannot classify are
/// re-checked against the document with the predicates the index was meant to satisfy.
final class KeyRangeScan: RowSource {
    let plan: KeyRangeScanPlan
    let docs: DocumentTables
    let includeDeleted: Bool
    private let equalities: [[Compiled?]]
    private let equalityExprs: [[BoundExpr]]
    private let recheck: [Compiled]
    /// Every equality column has one value: one key tuple.
    private let singleValued: Bool
    private let lowerBound: Compiled?
    private let upperBound: Compiled?
    /// Array-index scans bind the parent document once, however many elements match.
    private let dedupe: Bool
    /// A value-index scan whose ranges are all equality tuples (`wholeKeyInOnePoint`).
    private let pointRanges: Bool
    @exclusivity(unchecked) private var seen = Set<[UInt8]>()
    @exclusivity(unchecked) private var ranges: [ScanRange] = []
    @exclusivity(unchecked) private var rangeIndex = 0
    @exclusivity(unchecked) private var positioned = false
    @exclusivity(unchecked) private var cursor: KeyCursor?
    /// `cursor`, moved per row without retaining it.
    @exclusivity(unchecked) private var moving: BorrowedCursor?
    /// Covering scans: the key's values are the row; index expression paths, in order.
    private let coveredPaths: [[PathComponent]]?
    /// A covering array-index scan binds the innermost UNNEST slot too (`elementSlot`), once
    /// per occurrence the entry counts; the UNNEST levels then add no rows.
    private let arrayCovering: Bool
    private let elementSlot: Int
    /// A skip-scan's next seek: past the group of the last row.
    @exclusivity(unchecked) private var skipTo: [UInt8]?
    /// Rows still to repeat for the current entry (its further occurrences).
    @exclusivity(unchecked) private var repeatsLeft = 0
    /// Elements still to bind for an entry whose key was truncated (read from its document).
    @exclusivity(unchecked) private var pendingElements: [Value] = []
    /// The index's evaluation context, for reading a document's elements (made when needed).
    @exclusivity(unchecked) private var indexContext: ExecContext?

    /// Documents fetched ahead of the row that needs them (`bindDocument`): the next entries
    /// of the range, looked up together.
    private let lookahead = StorageGetBatch()
    /// `lookahead`, read per row without retaining it.
    private let lookaheadRef: Unmanaged<StorageGetBatch>
    /// The first of `lookahead`'s documents not handed out yet.
    @exclusivity(unchecked) private var lookaheadPosition = 0
    /// Documents the next look-ahead fetches (fewer than two: none; doubles per batch).
    @exclusivity(unchecked) private var lookaheadSize = 0
    /// The first look-ahead's size: LIMIT + OFFSET when known (a query that stops there reads
    /// no document more than it returns when nothing else filters), else a few.
    private let firstLookahead: Int

    init(slot: Int, plan: KeyRangeScanPlan, docs: DocumentTables, includeDeleted: Bool, rowsWanted: Int? = nil) {
        lookaheadRef = Unmanaged.passUnretained(lookahead)
        firstLookahead = min(rowsWanted ?? 8, Self.maxLookahead)
        self.plan = plan
        self.docs = docs
        self.includeDeleted = includeDeleted
        equalityExprs = plan.keys.equalities
        let compiled = plan.evaluators.get { KeyRangeScanEvaluators(plan) }
        equalities = compiled.equalities
        // A spread column (`x IN <array>`) gives as many values as its array has.
        singleValued = plan.keys.spread.isEmpty && plan.keys.equalities.allSatisfy { $0.count == 1 }
        recheck = compiled.recheck
        lowerBound = compiled.lower
        upperBound = compiled.upper
        // An array index has one entry per (element values, document): a lookup that fixes
        // every column meets each document at most once per key range (several ranges are
        // deduplicated below); a prefix or range lookup can meet it once per element.
        let columns = max(1, plan.store.expressions.count)
        let pointLookup = plan.keys.rangeConstraint == nil && plan.keys.equalities.count == columns
        arrayCovering = plan.covering && !plan.arraySources.isEmpty
        elementSlot = plan.arraySources.last ?? slot
        // A covering array scan yields every entry: each stands for its own UNNEST rows.
        dedupe = !plan.arraySources.isEmpty && !pointLookup && !arrayCovering
        pointRanges = plan.arraySources.isEmpty && plan.keys.rangeConstraint == nil && !(plan.store.kind is any ElementIndexKind)
        coveredPaths = plan.covering ? plan.expressionPaths : nil
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
        if cursor == nil {
            let c = try ctx.txn.cursor(plan.store.table, recent: plan.store.recent)
            cursor = c
            moving = c.borrowed
        }
        if !seen.isEmpty { seen.removeAll(keepingCapacity: true) }
        rangeIndex = 0
        positioned = false
        switch plan.keys.rangeConstraint {
        case nil, .equal?: ranges = try pointRanges(ctx)
        default: ranges = try boundedRanges(ctx)
        }
        // Several ranges can meet the same document (truncated keys of different values).
        dedupeAcrossRanges = ranges.count > 1
        pending = []
        cursorAtUnread = false
        repeatsLeft = 0
        pendingElements = []
        skipTo = nil
        elementGeneration = 0
        // Entries are read ahead only where they stay put: a read snapshot's pages do not
        // change, a write transaction's may. EXPLAIN ANALYZE counts exactly what is read.
        lookaheadSize = ctx.txn.isReadOnly && ctx.readCounters == nil && !arrayCovering && coveredPaths == nil ? firstLookahead : 0
        lookaheadPosition = 0
        lookahead.removeAll()
        queuedCount = 0
        queueHead = 0
        queuedKey = nil
        cursorUnread = false
    }

    /// Keys of the entries the last look-ahead read past the one that started it, in scan
    /// order: the scan takes them from here (`queuedKey`) before it moves its cursor again,
    /// which is on the last of them (or, with `cursorUnread`, on an entry the look-ahead read
    /// and did not take: past the range, or the first of a group `readGroup` reads).
    private let queued = UnsafeMutablePointer<UnsafeRawBufferPointer>.allocate(capacity: maxLookahead)
    @exclusivity(unchecked) private var queuedCount = 0
    @exclusivity(unchecked) private var queueHead = 0
    /// The current entry's key when it came from `queued` (nil: the cursor's).
    @exclusivity(unchecked) private var queuedKey: UnsafeRawBufferPointer?
    @exclusivity(unchecked) private var cursorUnread = false

    deinit { queued.deallocate() }

    /// Moves to the next entry in the scan's direction: the next queued one, else the one the
    /// cursor is on if it was read ahead and not taken, else the cursor's next.
    @inline(__always)
    private func advance(_ cursor: BorrowedCursor) throws -> Bool {
        if queueHead < queuedCount {
            queuedKey = queued[queueHead]
            queueHead &+= 1
            return true
        }
        queuedKey = nil
        if cursorUnread {
            cursorUnread = false
            return true
        }
        return plan.descending ? try cursor.prev() : try cursor.next()
    }

    /// The most documents one look-ahead fetches.
    static let maxLookahead = 32

    /// Binds the document of the current entry (whose key's trailer holds `id`). With
    /// look-ahead on, the documents of the range's next entries are fetched with it, their
    /// B-tree walks overlapping (`Snapshot.get(_:from:)`), and the entries are queued for the
    /// scan (the cursor does not go back): a later row finds its document by the address of
    /// its key (the snapshot's pages do not move).
    @inline(__always)
    private func bindDocument(_ ctx: ExecContext, id: UnsafeRawBufferPointer,
                              cursor: BorrowedCursor, range: ScanRange) throws -> Bool {
        if lookaheadSize < 2 {
            return try DocumentFetch.bind(ctx, slot: slot, table: docs, id: id, includeDeleted: includeDeleted)
        }
        return try lookaheadRef._withUnsafeGuaranteedRef { batch in
            var i = lookaheadPosition
            var found = -1
            while i < batch.count {
                let k = batch.key(at: i)
                i &+= 1
                if k.baseAddress == id.baseAddress && k.count == id.count { found = i &- 1; break }
            }
            if found < 0 {
                // Only an entry the cursor is on starts a look-ahead (one taken from the queue
                // has its document in the batch).
                guard queuedKey == nil && queueHead == queuedCount && !cursorUnread else {
                    return try DocumentFetch.bind(ctx, slot: slot, table: docs, id: id, includeDeleted: includeDeleted)
                }
                try fillLookahead(batch, ctx, id: id, cursor: cursor, range: range)
                found = 0
                i = 1
            }
            lookaheadPosition = i
            guard let stored = batch.value(at: found) else { return false }
            return DocumentFetch.bind(ctx, slot: slot, id: id, record: stored, tables: docs, includeDeleted: includeDeleted)
        }
    }

    /// Fetches the documents of the entry the cursor is on (`id`) and of the range's next
    /// entries, up to `lookaheadSize`, queueing the entries read (`advance` hands them out).
    @inline(never)
    private func fillLookahead(_ batch: StorageGetBatch, _ ctx: ExecContext, id: UnsafeRawBufferPointer,
                               cursor: BorrowedCursor, range: ScanRange) throws {
        batch.removeAll()
        batch.append(key: id)
        queuedCount = 0
        queueHead = 0
        while batch.count < lookaheadSize && queuedCount < Self.maxLookahead {
            guard try plan.descending ? cursor.prev() : cursor.next() else { break }
            let k = cursor.key
            let outside = plan.descending ? compareStoredKeys(k, range.scan.lower) < 0
                                          : range.scan.upper.map { compareStoredKeys(k, $0) >= 0 } ?? false
            // Past the range, or an entry whose group `readGroup` reads from the cursor: the
            // scan takes it from the cursor.
            if outside || (plan.ordered && (IndexKey.layout(k).map { $0.0 >= groupLength } ?? false)) {
                cursorUnread = true
                break
            }
            queued[queuedCount] = k
            queuedCount &+= 1
            if let id = IndexKey.documentID(in: k) { batch.append(key: id) }
        }
        lookaheadSize = min(lookaheadSize &* 2, Self.maxLookahead)
        try ctx.txn.get(batch, from: docs.records)
    }

    /// The ranges of equality tuples followed by a range or prefix on the next column.
    private func boundedRanges(_ ctx: ExecContext) throws -> [ScanRange] {
        if equalityExprs.isEmpty, case .range(let lo, let hi)? = plan.keys.rangeConstraint {
            return refilledRange(lo, hi, ctx)
        }
        // Equality tuples: the cartesian product of each column's values (one tuple when
        // each column has one value, the usual case, built without the product).
        var tuples: [[Value]]
        if singleValued {
            var t: [Value] = []
            t.reserveCapacity(equalityExprs.count)
            for (col, exprs) in equalityExprs.enumerated() {
                guard let v = evaluate(exprs[0], equalities[col][0]?.evaluate, ctx, allowNull: true) else { break }
                t.append(v)
            }
            tuples = t.count == equalityExprs.count ? [t] : []
        } else {
            tuples = [[]]
            for col in equalityExprs.indices {
                var values: [Value] = []
                appendValues(ofColumn: col, ctx, to: &values)
                guard tuples.count * values.count <= KeyedPlanning.maxKeyPoints else {
                    throw InLimits.tooMany(tuples.count * values.count)
                }
                tuples = tuples.flatMap { t in values.map { t + [$0] } }
            }
        }
        return scanRanges(KeyRangeScan.ranges(tuples: tuples, constraint: plan.keys.rangeConstraint) { e, isLower in
            evaluate(e, isLower ? lowerBound?.evaluate : upperBound?.evaluate, ctx, allowNull: false)
        })
    }

    /// Appends the values equality column `col` takes in this execution: each of its
    /// expressions' values (MISSING gives none), or for `x IN <array>` the array's elements
    /// (anything but an array gives none).
    private func appendValues(ofColumn col: Int, _ ctx: ExecContext, to values: inout [Value]) {
        for (i, e) in equalityExprs[col].enumerated() {
            guard let v = evaluate(e, equalities[col][i]?.evaluate, ctx, allowNull: true) else { continue }
            if plan.keys.spread.contains(col) {
                if case .array(let elements) = v { values.append(contentsOf: elements) }
            } else {
                values.append(v)
            }
        }
    }

    /// The point ranges of the equality tuples (the cartesian product of each column's
    /// values), encoded straight into their key bytes — no tuple of values is built — in key
    /// order (reversed for a descending scan), equal tuples (`1`, `1.0`) once.
    private func pointRanges(_ ctx: ExecContext) throws -> [ScanRange] {
        var values: [Value] = []
        if equalityExprs.count == 1 {
            // One column (`x = $a`, `x IN (…)`, an OR of equalities): each value encodes
            // straight into a key buffer kept from the last execution, and the ranges are the
            // last execution's objects refilled: nothing is allocated once they exist.
            swap(&values, &scratchValues)
            defer {
                values.removeAll(keepingCapacity: true)
                swap(&values, &scratchValues)
            }
            appendValues(ofColumn: 0, ctx, to: &values)
            guard values.count <= KeyedPlanning.maxKeyPoints else { throw InLimits.tooMany(values.count) }
            return refilledPointRanges(values)
        }
        var keys: [[UInt8]] = [[]]
        for col in equalityExprs.indices {
            values.removeAll(keepingCapacity: true)
            appendValues(ofColumn: col, ctx, to: &values)
            guard keys.count * values.count <= KeyedPlanning.maxKeyPoints else {
                throw InLimits.tooMany(keys.count * values.count)
            }
            if values.isEmpty { return [] }
            var product: [[UInt8]] = []
            product.reserveCapacity(keys.count * values.count)
            for k in keys {
                for v in values {
                    var b = k
                    IndexKey.encode(v, into: &b)
                    product.append(b)
                }
            }
            keys = product
        }
        return scanRanges(IndexKey.KeyRange.points(encoded: consume keys))
    }

    /// A range on the first column alone (`price BETWEEN $lo AND $hi`, `x > $a`): the bounds
    /// are encoded into the range object and byte arrays of the last execution, as
    /// `ranges(tuples: [[]], …)` and `scanRanges` would build them anew.
    private func refilledRange(_ lo: (BoundExpr, Bool)?, _ hi: (BoundExpr, Bool)?, _ ctx: ExecContext) -> [ScanRange] {
        var lower: Value = .null, lowerInclusive = false
        if let (e, inclusive) = lo {
            guard let v = evaluate(e, lowerBound?.evaluate, ctx, allowNull: false) else { return [] }
            lower = v
            lowerInclusive = inclusive
        }
        var upper: Value? = nil, upperInclusive = true
        if let (e, inclusive) = hi {
            guard let v = evaluate(e, upperBound?.evaluate, ctx, allowNull: false) else { return [] }
            upper = v
            upperInclusive = inclusive
        }
        if rangePool.isEmpty {
            rangePool.append(ScanRange(exact: IndexKey.KeyRange(), scan: IndexKey.KeyRange()))
            oneRange = [rangePool[0]]
        }
        guard rangePool[0].setRange(lower: lower, lowerInclusive: lowerInclusive, upper: upper, upperInclusive: upperInclusive) else {
            return []
        }
        return oneRange
    }

    /// `[rangePool[0]]`, kept so that a one-range execution allocates no array.
    @exclusivity(unchecked) private var oneRange: [ScanRange] = []

    /// Values of the one-column point path, kept between executions (empty between them).
    @exclusivity(unchecked) private var scratchValues: [Value] = []
    /// Encoded keys of the one-column point path, by value; their buffers keep their capacity.
    @exclusivity(unchecked) private var scratchKeys: [[UInt8]] = []
    @exclusivity(unchecked) private var scratchOrder: [Int] = []
    /// Point ranges made by earlier executions, refilled by the next.
    @exclusivity(unchecked) private var rangePool: [ScanRange] = []

    /// One point range per distinct value of `values`, in key order (reversed for a
    /// descending scan), reusing the key buffers and range objects of earlier executions.
    private func refilledPointRanges(_ values: [Value]) -> [ScanRange] {
        let n = values.count
        guard n > 0 else { return [] }
        while scratchKeys.count < n { scratchKeys.append([]) }
        for i in 0..<n {
            scratchKeys[i].removeAll(keepingCapacity: true)
            if scratchKeys[i].capacity == 0 { scratchKeys[i].reserveCapacity(40) }
            IndexKey.encode(values[i], into: &scratchKeys[i])
        }
        scratchOrder.removeAll(keepingCapacity: true)
        scratchOrder.append(contentsOf: 0..<n)
        if n > 1 {
            // A few values (an OR, a short IN list): an insertion sort; many: the library's.
            if n <= 16 {
                for i in 1..<n {
                    let x = scratchOrder[i]
                    var j = i
                    while j > 0 && IndexKey.compareStoredKeys(scratchKeys[x], scratchKeys[scratchOrder[j - 1]]) < 0 {
                        scratchOrder[j] = scratchOrder[j - 1]
                        j -= 1
                    }
                    scratchOrder[j] = x
                }
            } else {
                scratchOrder.sort { IndexKey.compareStoredKeys(scratchKeys[$0], scratchKeys[$1]) < 0 }
            }
        }
        var out: [ScanRange] = []
        out.reserveCapacity(n)
        var previous = -1
        for k in 0..<n {
            let i = scratchOrder[plan.descending ? n - 1 - k : k]
            // Equal values (`1`, `1.0`) encode equally: one range.
            if previous >= 0 && scratchKeys[i] == scratchKeys[previous] { continue }
            previous = i
            let range: ScanRange
            if out.count < rangePool.count {
                range = rangePool[out.count]
            } else {
                range = ScanRange(exact: IndexKey.KeyRange(), scan: IndexKey.KeyRange())
                rangePool.append(range)
            }
            range.setPoint(scratchKeys[i])
            out.append(range)
        }
        return out
    }

    /// The ranges to read, in the scan's direction: each as asked and as clipped.
    private func scanRanges(_ ascending: [IndexKey.KeyRange]) -> [ScanRange] {
        var unique = ascending
        if plan.descending { unique.reverse() }
        return unique.map { ScanRange(exact: $0, scan: $0.clipped()) }
    }

    /// The key ranges of the equality tuples `tuples` followed by `constraint` on the next
    /// column, in key order, each once. `bound` gives a range bound's value (nil: the
    /// comparison is never TRUE, no range for it) from the bound and whether it is the lower one.
    static func ranges(tuples: [[Value]], constraint: ColumnConstraint?, bound: (BoundExpr, Bool) -> Value?) -> [IndexKey.KeyRange] {
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
                    guard let v = bound(e, true) else { continue }
                    lower = v; lowerInclusive = inc
                }
                var upper: Value? = nil, upperInclusive = true
                if let (e, inc) = hi {
                    guard let v = bound(e, false) else { continue }
                    upper = v; upperInclusive = inc
                }
                let r = IndexKey.KeyRange.range(equal: t, lower: lower, lowerInclusive: lowerInclusive, upper: upper, upperInclusive: upperInclusive)
                if !r.isEmpty { built.append(r) }
            }
        }
        if built.count <= 1 { return built }
        built.sort { $0.lower.lexicographicallyPrecedes($1.lower) }
        var unique: [IndexKey.KeyRange] = []
        for r in built where unique.last != r { unique.append(r) }
        return unique
    }

    /// True when the entry with `key` lies in one key range only, so several ranges cannot
    /// meet its document twice: a value index has one entry per document, and distinct
    /// equality tuples are disjoint ranges that a whole (not truncated) key falls in at most
    /// once. A truncated key may fall in several widened ranges.
    @inline(__always)
    private func wholeKeyInOnePoint(_ key: UnsafeRawBufferPointer) -> Bool {
        pointRanges && !IndexKey.isTruncated(key: key)
    }

    /// Entries whose values share their first `groupLength` key bytes may have been
    /// truncated, so their key order is not their value order: an ordered scan reads the
    /// whole group, sorts it by the documents' values, and emits it from `pending`.
    @exclusivity(unchecked) private var pending: [SourceSlot] = []
    @exclusivity(unchecked) private var cursorAtUnread = false
    @exclusivity(unchecked) private var dedupeAcrossRanges = false
    private let groupLength = IndexKey.minimumRetainedTupleBytes()

    private func readGroup(_ ctx: ExecContext, cursor: BorrowedCursor, exact: IndexKey.KeyRange, scan: IndexKey.KeyRange) throws -> Bool {
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
                   ctx.completedBody(slot), let body = ctx.slots[slot].body {
                    // The member's slot is held until the group is emitted.
                    ctx.keepAssembledBody(slot)
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
        guard let cursor = moving else { return false }
        if arrayCovering {
            // The slots still hold the entry's row.
            if repeatsLeft > 0 { repeatsLeft -= 1; return true }
            if let e = pendingElements.popLast() { SourceSlot.bindElement(ctx.slots + elementSlot, e); elementGeneration = 0; return true }
        }
        if let s = pending.popLast() {
            ctx.slots[slot] = s
            return true
        }
        while rangeIndex < ranges.count {
            // One reference for the range (its bounds' arrays are not retained one by one, per row).
            let range = ranges[rangeIndex]
            var ok: Bool
            if !positioned {
                positioned = true
                ok = try position(cursor, at: range.scan)
            } else if cursorAtUnread {
                // A group read left the cursor on the first entry after it.
                cursorAtUnread = false
                ok = true
            } else if let skip = skipTo {
                // Past every entry of the last group (`FF` follows no complete encoding).
                skipTo = nil
                ok = try cursor.seek(skip)
            } else {
                ok = try advance(cursor)
            }
            while ok {
                try ctx.checkInterrupt()
                // An entry the look-ahead read, or the one the cursor is on.
                let key = queuedKey ?? cursor.key
                if let counters = ctx.readCounters { counters.entries &+= 1 }
                if plan.descending {
                    if compareStoredKeys(key, range.scan.lower) < 0 { break }
                } else if let upper = range.scan.upper, compareStoredKeys(key, upper) >= 0 {
                    break
                }
                if plan.ordered, let (tupleLength, _) = IndexKey.layout(key), tupleLength >= groupLength {
                    let more = try readGroup(ctx, cursor: cursor, exact: range.exact, scan: range.scan)
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
                // Below `scan.upper` and (sought) at or above its lower bound: inside when the
                // range was not widened and the key is whole.
                let m = range.scan.isExact && !IndexKey.isTruncated(key: key) ? .inside : range.exact.match(key: key)
                if m != .outside, key.count >= IndexKey.trailerSize {
                    let n = key.count
                    let idLength = Int(key[n - 3]) << 8 | Int(key[n - 2])
                    if idLength + IndexKey.trailerSize <= n {
                        let id = UnsafeRawBufferPointer(rebasing: key[(n - 3 - idLength)..<(n - 3)])
                        var fresh = true
                        // A value index holds one entry per document: one range meets it once.
                        if !arrayCovering && (dedupe || (dedupeAcrossRanges && !wholeKeyInOnePoint(key)) || (plan.ordered && !plan.arraySources.isEmpty)) {
                            fresh = seen.insert(Array(id)).inserted
                        }
                        if arrayCovering {
                            // A truncated key may fall in several ranges: take it once.
                            if dedupeAcrossRanges && key[n - 1] != 0 && !seen.insert(Array(key)).inserted { fresh = false }
                            if fresh, try bindElements(ctx, key: key, id: id, inside: m == .inside, tupleLength: n - IndexKey.trailerSize - idLength,
                                                       entry: IndexKey.entryInfo(cursor.value)) {
                                return true
                            }
                            ok = try advance(cursor)
                            continue
                        }
                        if fresh, m == .inside, let paths = coveredPaths, IndexKey.entryInfo(cursor.value).exact,
                           let values = coveredValues(key, tupleLength: n - IndexKey.trailerSize - idLength) {
                            if let k = plan.skipColumns, !plan.descending, k <= values.count {
                                // The group's key prefix (the encoding is canonical: checked).
                                let prefix = IndexKey.encode(Array(values[0..<k]))
                                if prefix.count <= n, keyHasPrefix(key, prefix) { skipTo = prefix + [IndexKey.highByte] }
                            }
                            SourceSlot.bindCovered(ctx.slots + slot, id: id, values: values, paths: paths, generation: tupleGeneration)
                            return true
                        }
                        if fresh, try bindDocument(ctx, id: id, cursor: cursor, range: range) {
                            if m == .inside || recheck.allSatisfy({ Semantics.truth($0(ctx)) == .true }) { return true }
                        }
                    }
                }
                ok = try advance(cursor)
            }
            rangeIndex += 1
            positioned = false
        }
        return false
    }

    /// Puts the cursor on the first entry of `scan` in the scan's direction (false: none).
    private func position(_ cursor: BorrowedCursor, at scan: IndexKey.KeyRange) throws -> Bool {
        if plan.descending {
            if let upper = scan.upper { return try cursor.seek(upper) ? try cursor.prev() : try cursor.last() }
            return try cursor.last()
        }
        // LMDB rejects an empty key: an open lower bound is the first entry.
        return scan.lower.isEmpty ? try cursor.first() : try cursor.seek(scan.lower)
    }

    /// Counts the entries in the ranges without binding them (a value index has one per
    /// document): only an entry whose key a range cannot classify reads its document.
    /// Calls `body` with the key and value of each entry of `scan`, in key order, checking
    /// for interrupts and counting the entries read, until `body` returns false or the scan
    /// ends (the cursor is then on the entry after the last one given, if any).
    @inline(__always)
    private func forEachEntry(_ ctx: ExecContext, _ cursor: KeyCursor, in scan: IndexKey.KeyRange,
                              _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        var ok = try position(cursor.borrowed, at: scan)
        while ok {
            try ctx.checkInterrupt()
            let key = cursor.key
            if let counters = ctx.readCounters { counters.entries &+= 1 }
            if let upper = scan.upper, compareStoredKeys(key, upper) >= 0 { return }
            if try !body(key, cursor.value) { return }
            ok = try cursor.next()
        }
    }

    override func countRows(_ ctx: ExecContext) throws -> Int {
        guard let cursor, plan.arraySources.isEmpty, !plan.ordered, !plan.descending, !positioned, rangeIndex == 0 else {
            return try super.countRows(ctx)
        }
        var n = 0
        for range in ranges {
            let exact = range.exact, scan = range.scan
            try forEachEntry(ctx, cursor, in: scan) { key, _ in
                let m = scan.isExact && !IndexKey.isTruncated(key: key) ? .inside : exact.match(key: key)
                if m != .outside, let id = IndexKey.documentID(in: key) {
                    if !dedupeAcrossRanges || wholeKeyInOnePoint(key) || seen.insert(Array(id)).inserted {
                        if m == .inside {
                            n += 1
                        } else if try DocumentFetch.bind(ctx, slot: slot, table: docs, id: id, includeDeleted: includeDeleted),
                                  recheck.allSatisfy({ Semantics.truth($0(ctx)) == .true }) {
                            n += 1
                        }
                    }
                }
                return true
            }
        }
        rangeIndex = ranges.count
        return n
    }

    /// Counts the entries of each run of equal leading `columns` values (a covering value-index
    /// scan over one range, in key order). Nil, with the cursor left for `reset` to put back,
    /// as soon as an entry would need its document (a truncated key or an inexact entry) or
    /// the scan is not of that shape.
    override func groupCounts(_ ctx: ExecContext, columns k: Int, ids: Bool = true, into groups: inout CountedGroups) throws -> Bool {
        guard let cursor, coveredPaths != nil, plan.arraySources.isEmpty, !plan.descending, plan.skipColumns == nil,
              ranges.count == 1, !positioned, rangeIndex == 0, pending.isEmpty, k >= 1 else { return false }
        let exact = ranges[0].exact, scan = ranges[0].scan
        groups.removeAll()
        // The encoded leading values of the current group: its entries' keys start with them.
        var prefix: [UInt8] = []
        prefix.reserveCapacity(64)
        var gaveUp = false
        try forEachEntry(ctx, cursor, in: scan) { key, value in
            let n = key.count
            guard n >= IndexKey.trailerSize, !IndexKey.isTruncated(key: key), IndexKey.entryInfo(value).exact else { gaveUp = true; return false }
            let idLength = Int(key[n - 3]) << 8 | Int(key[n - 2])
            let tupleLength = n - IndexKey.trailerSize - idLength
            guard tupleLength >= 0, !(plan.ordered && tupleLength >= groupLength) else { gaveUp = true; return false }
            if !scan.isExact {
                switch exact.match(key: key) {
                case .inside: break
                case .outside: return true
                default: gaveUp = true; return false
                }
            }
            if groups.count > 0 && prefix.count <= tupleLength && keyHasPrefix(key, prefix) {
                groups.countRow()
                return true
            }
            // A new group: the end of its first `k` values, found in place.
            let tuple = UnsafeRawBufferPointer(rebasing: key[0..<tupleLength])
            var end = 0
            for _ in 0..<k {
                guard let e = IndexKey.componentEnd(tuple, from: end) else { gaveUp = true; return false }
                end = e
            }
            let decoded = groups.withValues { values in (try? IndexKey.decode(tuple, appendingTo: &values)) ?? -1 }
            guard decoded >= k else { gaveUp = true; return false }
            prefix.removeAll(keepingCapacity: true)
            prefix.append(contentsOf: tuple[0..<end])
            // The encoding is canonical; values equal but encoded apart (the executor
            // compares the values) would still make one group.
            if groups.count > 0 {
                let last = groups.valueRange(groups.count - 1).lowerBound
                let new = groups.values.count - decoded
                if (0..<k).allSatisfy({ groups.values[last + $0] == groups.values[new + $0] }) {
                    groups.dropOpenValues()
                    groups.countRow()
                    return true
                }
            }
            groups.close(id: ids ? UnsafeRawBufferPointer(rebasing: key[(n - 3 - idLength)..<(n - 3)]) : UnsafeRawBufferPointer(start: nil, count: 0))
            return true
        }
        if gaveUp { groups.removeAll(); return false }
        rangeIndex = ranges.count
        return true
    }

    /// Binds the first row of a covering array-index entry: the collection slot to the
    /// document ID, the element slot to the key's values, and the further occurrences to
    /// repeat. A key whose values are truncated or inexact binds the document's elements with
    /// that key instead (read from the document). False if the entry gives no row.
    private func bindElements(_ ctx: ExecContext, key: UnsafeRawBufferPointer, id: UnsafeRawBufferPointer, inside: Bool,
                              tupleLength: Int, entry: (occurrences: Int, exact: Bool)) throws -> Bool {
        if inside, entry.exact, let paths = coveredPaths, let values = coveredValues(key, tupleLength: tupleLength) {
            SourceSlot.bindCoveredID(ctx.slots + slot, id)
            if elementGeneration == tupleGeneration && ctx.slots[elementSlot].state == .element && paths.isEmpty {
                // The same values as the entry before (every entry of an equality lookup):
                // the element slot already holds them.
                repeatsLeft = entry.occurrences - 1
                return true
            }
            elementGeneration = paths.isEmpty ? tupleGeneration : 0
            if paths.isEmpty {
                SourceSlot.bindElement(ctx.slots + elementSlot, values.first ?? .missing)
            } else {
                ctx.slots[elementSlot] = SourceSlot(state: .covered, covered: values, coveredPaths: paths, coveredGeneration: tupleGeneration)
            }
            repeatsLeft = entry.occurrences - 1
            return true
        }
        elementGeneration = 0
        guard let kind = plan.store.kind as? any ElementIndexKind,
              try DocumentFetch.bind(ctx, slot: slot, table: docs, id: id, includeDeleted: includeDeleted) else { return false }
        if ctx.slots[slot].partial, !(ctx.slots[slot].body.map { kind.elementsAreWhole(plan.store, in: $0) } ?? false) {
            guard ctx.completedBody(slot) else { return false }
        }
        guard let body = ctx.slots[slot].body else { return false }
        let indexContext = self.indexContext ?? plan.store.makeContext(ctx.txn)
        self.indexContext = indexContext
        var elements = kind.elements(plan.store, docID: String(decoding: id, as: UTF8.self), body: body.buffer,
                                     context: indexContext, key: key)
        if !recheck.isEmpty {
            // The terms the range satisfies left the filter: hold them for these elements.
            elements = elements.filter { e in
                SourceSlot.bindElement(ctx.slots + elementSlot, e)
                return recheck.allSatisfy { Semantics.truth($0(ctx)) == .true }
            }
        }
        guard let first = elements.first else { return false }
        pendingElements = elements.dropFirst().reversed()
        SourceSlot.bindElement(ctx.slots + elementSlot, first)
        return true
    }

    /// The last covered entry's tuple bytes and values: neighbours in an index often share
    /// their values (every entry of a group), which are then not decoded again.
    @exclusivity(unchecked) private var lastTuple: [UInt8] = []
    @exclusivity(unchecked) private var lastValues: [Value] = []
    /// Numbers the distinct tuples met, in order (see `SourceSlot.coveredGeneration`).
    @exclusivity(unchecked) private var tupleGeneration = 0
    /// The tuple whose first value a covering array scan last bound to the element slot (0:
    /// none, or the slot was bound otherwise since).
    @exclusivity(unchecked) private var elementGeneration = 0

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
        moving = nil
        cursor?.close()
        cursor = nil
        // Made with this execution's snapshot (an executor may run again in another one).
        indexContext = nil
    }
}

/// A key range of a scan: as the query asked for it (`exact`, to classify keys) and as read
/// (`scan`, clipped to the index's key length).
final class ScanRange {
    // Refilled by the scan that owns it, between executions (one thread).
    @exclusivity(unchecked) private(set) var exact: IndexKey.KeyRange
    @exclusivity(unchecked) private(set) var scan: IndexKey.KeyRange

    init(exact: IndexKey.KeyRange, scan: IndexKey.KeyRange) {
        self.exact = exact
        self.scan = scan
    }

    /// Makes this the point range of the encoded tuple `key` (`KeyRange.point(encoded:)`,
    /// clipped as `KeyRange.clipped()`), writing into the byte arrays it already has.
    func setPoint(_ key: [UInt8]) {
        Self.fill(&exact.lower, key[...])
        if exact.upper == nil { exact.upper = [] }
        Self.fill(&exact.upper!, key[...], then: IndexKey.highByte)
        exact.isExact = true
        refillScan()
    }

    /// Makes this the range of one column from `lower` to `upper` (nil: no end) with no
    /// equality before it — `KeyRange.range(equal: [], …)`, clipped as `KeyRange.clipped()` —
    /// writing into the byte arrays it already has. False when no key can lie in it.
    func setRange(lower: Value, lowerInclusive: Bool, upper: Value?, upperInclusive: Bool) -> Bool {
        exact.lower.removeAll(keepingCapacity: true)
        IndexKey.encode(lower, into: &exact.lower)
        if !lowerInclusive { exact.lower.append(IndexKey.highByte) }
        if let upper {
            if exact.upper == nil { exact.upper = [] }
            exact.upper!.removeAll(keepingCapacity: true)
            IndexKey.encode(upper, into: &exact.upper!)
            if upperInclusive { exact.upper!.append(IndexKey.highByte) }
        } else {
            exact.upper = nil
        }
        exact.isExact = true
        if exact.isEmpty { return false }
        refillScan()
        return true
    }

    /// `scan` as `exact.clipped()`, in the byte arrays it already has: a bound longer than n
    /// bytes is cut to n (the upper one to the successor of its first n bytes) and the range
    /// is then no longer exact.
    private func refillScan() {
        let n = IndexKey.minimumRetainedTupleBytes()
        var isExact = true
        if exact.lower.count > n {
            Self.fill(&scan.lower, exact.lower[..<n])
            isExact = false
        } else {
            Self.fill(&scan.lower, exact.lower[...])
        }
        if let u = exact.upper, u.count > n {
            scan.upper = IndexKey.prefixSuccessor(u[..<n])
            isExact = false
        } else if let u = exact.upper {
            if scan.upper == nil { scan.upper = [] }
            Self.fill(&scan.upper!, u[...])
        } else {
            scan.upper = nil
        }
        scan.isExact = isExact
    }

    private static func fill(_ array: inout [UInt8], _ bytes: ArraySlice<UInt8>, then last: UInt8? = nil) {
        array.removeAll(keepingCapacity: true)
        array.append(contentsOf: bytes)
        if let last { array.append(last) }
    }
}

extension BoundExpr {
    var isLiteral: Bool { if case .literal = self { return true } else { return false } }
}
