

/// What one data source currently holds while a row is being evaluated.
struct SourceSlot {
    enum State: UInt8 { case absent, document, element, covered }
    var state: State = .absent
    /// The document ID bytes (in LMDB memory, valid for the read transaction).
    var id: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)
    /// The document header.
    var record: DocumentRecord?
    /// The document body, read in place. For a document stored in two pieces it may be the
    /// head alone (`partial`): read it with `slotValue`/`slotBinary`, which complete it.
    var body: BinaryValue?
    /// True while `body` is only the head of a record in two pieces (`head`).
    var partial = false
    /// The stored head of the record, while `partial`.
    var head = UnsafeRawBufferPointer(start: nil, count: 0)
    /// The current UNNEST element.
    var element: Value = .missing
    /// The full-text relevance of the current document (when a MATCH drives this source).
    var rank: Double = 0
    /// True when a MATCH drives this source and the current document matched.
    var matched = false
    /// The full-text index whose scan bound this row (lower-cased name), if any.
    var drivingIndex: String? = nil
    /// Covering index scan: the values of the index expressions (plain paths) for this entry.
    var covered: [Value] = []
    var coveredPaths: [[PathComponent]] = []
    /// Covering scans: changes whenever `covered` changes (0: unknown). Two rows with the same
    /// non-zero generation have the same covered values, so anything computed from them only
    /// (a group key over an index) is the same too.
    var coveredGeneration = 0

    /// The document ID when it is not in LMDB memory (full-text matches).
    var ownedID: [UInt8]? = nil

    /// True when no field holds a reference-counted value (an empty slot, or one bound to a
    /// document in LMDB memory).
    var holdsNothingCounted: Bool {
        element.isMissing && drivingIndex == nil && covered.isEmpty && coveredPaths.isEmpty && ownedID == nil
    }

    var idString: String {
        if let ownedID { return String(decoding: ownedID, as: UTF8.self) }
        return String(decoding: id, as: UTF8.self)
    }

    /// Makes the slot at `p` an UNNEST element. A slot that already holds one only takes the
    /// new element (a new `SourceSlot` would release and retain every field, per row).
    @inline(__always)
    static func bindElement(_ p: UnsafeMutablePointer<SourceSlot>, _ e: Value) {
        if p.pointee.state == .element { p.pointee.element = e } else { p.pointee = SourceSlot(state: .element, element: e) }
    }

    /// Makes the slot at `p` a covered row that is only its document ID (an array index's
    /// parent); in place when it already is one.
    @inline(__always)
    static func bindCoveredID(_ p: UnsafeMutablePointer<SourceSlot>, _ id: UnsafeRawBufferPointer) {
        if p.pointee.state == .covered && p.pointee.coveredPaths.isEmpty && p.pointee.ownedID == nil {
            p.pointee.id = id
        } else {
            p.pointee = SourceSlot(state: .covered, id: id)
        }
    }

    /// Makes the slot at `p` a covered index entry. An entry with the same values as the row
    /// already there (same non-zero generation, the usual case inside a group) changes only
    /// the document ID.
    @inline(__always)
    static func bindCovered(_ p: UnsafeMutablePointer<SourceSlot>, id: UnsafeRawBufferPointer, values: [Value],
                            paths: [[PathComponent]], generation: Int) {
        if generation != 0 && p.pointee.state == .covered && p.pointee.coveredGeneration == generation && p.pointee.ownedID == nil {
            p.pointee.id = id
        } else {
            p.pointee = SourceSlot(state: .covered, id: id, covered: values, coveredPaths: paths, coveredGeneration: generation)
        }
    }

    /// The document ID of the slot at `p`, read in place.
    @inline(__always)
    static func idString(_ p: UnsafeMutablePointer<SourceSlot>) -> String {
        if p.pointee.ownedID != nil { return p.pointee.idString }
        return String(decoding: p.pointee.id, as: UTF8.self)
    }

    /// The whole value of the source: the body (decoded) or the element (complete a partial
    /// body first, `ExecContext.completeBody`).
    var wholeValue: Value {
        switch state {
        case .absent: return .missing
        case .document: return body?.toValue() ?? .missing
        case .element: return element
        case .covered: return .missing
        }
    }

    /// A path inside the source's value, read in place for documents.
    @inline(__always)
    func value(at path: [PathComponent]) -> Value {
        switch state {
        case .absent: return .missing
        case .document:
            guard let body else { return .missing }
            return path.isEmpty ? body.toValue() : body.value(at: path)
        case .element: return path.isEmpty ? element : element.value(at: path)
        case .covered:
            for (i, p) in coveredPaths.enumerated() where p == path { return covered[i] }
            return .missing
        }
    }

    /// A path inside the source's value, with the keys already in UTF-8 (the hot path).
    @inline(__always)
    func value(at path: CompiledPath) -> Value {
        switch state {
        case .absent: return .missing
        case .document:
            guard let body else { return .missing }
            return path.lookup(in: body)?.toValue() ?? .missing
        case .element: return element.value(at: path.components)
        case .covered:
            for (i, p) in coveredPaths.enumerated() where p == path.components { return covered[i] }
            return .missing
        }
    }

    /// The binary value at a path of the document (nil when absent or not a document).
    @inline(__always)
    func binary(at path: CompiledPath) -> BinaryValue? {
        guard state == .document, let body else { return nil }
        return path.lookup(in: body)
    }

}

/// A property path with its member names pre-encoded as UTF-8, for lookups in place.
///
/// The steps are trivial values (a member name is a range of `names`): a lookup copies no
/// reference and so retains nothing. Scans on both cores read the same index's paths for
/// every document, and a retained array there is a reference count written from two cores.
struct CompiledPath {
    enum Step {
        /// A member whose UTF-8 name is `names[start ..< end]`.
        case key(start: Int32, end: Int32)
        case index(Int)
    }
    let components: [PathComponent]
    let steps: [Step]
    /// Every member name of the path, one after the other.
    private let names: [UInt8]

    init(_ components: [PathComponent]) {
        self.components = components
        var names: [UInt8] = []
        steps = components.map { c in
            switch c {
            case .key(let k):
                let start = Int32(names.count)
                names.append(contentsOf: k.utf8)
                return .key(start: start, end: Int32(names.count))
            case .index(let i): return .index(i)
            }
        }
        self.names = names
    }

    /// The UTF-8 name of a `.key` step.
    func name(_ step: Step) -> [UInt8]? {
        guard case .key(let start, let end) = step else { return nil }
        return Array(names[Int(start) ..< Int(end)])
    }

    @inline(__always)
    func lookup(in root: BinaryValue) -> BinaryValue? {
        var noHint = Int.max
        return lookup(in: root, hint: &noHint)
    }

    /// `lookup(in:)` that looks for the first member at position `hint` first and leaves
    /// where it was found there (`BinaryValue.member(utf8:hint:)`): a scan reading the same
    /// path from documents of one shape then compares one key per document instead of
    /// searching (fewer reads of a document it has not touched yet).
    @inline(__always)
    func lookup(in root: BinaryValue, hint: inout Int) -> BinaryValue? {
        names.withUnsafeBytes { names -> BinaryValue? in
            var cur = root
            for i in steps.indices {
                switch steps[i] {
                case .key(let start, let end):
                    var noHint = Int.max
                    let name = UnsafeRawBufferPointer(rebasing: names[Int(start) ..< Int(end)])
                    guard let next = i == 0 ? cur.member(utf8: name, hint: &hint) : cur.member(utf8: name, hint: &noHint) else {
                        return nil
                    }
                    cur = next
                case .index(let n):
                    guard let next = cur[n] else { return nil }
                    cur = next
                }
            }
            return cur
        }
    }
}

/// A path inside the value of the slot at `s`, reading fields through the pointer (calling
/// a method on `s.pointee` would copy the whole slot, retaining its fields, for every row).
@inline(__always)
func slotValue(_ ctx: ExecContext, _ s: UnsafeMutablePointer<SourceSlot>, _ path: CompiledPath) -> Value {
    switch s.pointee.state {
    case .absent: return .missing
    case .document:
        if s.pointee.partial { return partialSlotValue(ctx, s, path) }
        guard let body = s.pointee.body else { return .missing }
        return path.lookup(in: body)?.toValue() ?? .missing
    case .element: return s.pointee.element.value(at: path.components)
    case .covered:
        let paths = s.pointee.coveredPaths
        for i in paths.indices where paths[i] == path.components { return s.pointee.covered[i] }
        return .missing
    }
}

/// The whole value of the slot at `s` as a result column: a bound document's body is
/// copied out of LMDB still encoded (decoded when the column is read), anything else is
/// the value itself. Reads fields through the pointer (see `slotValue`).
@inline(__always)
func slotCell(_ ctx: ExecContext, _ s: UnsafeMutablePointer<SourceSlot>) -> ResultCell {
    switch s.pointee.state {
    case .document:
        if s.pointee.partial { ctx.completeBody(s) }
        guard let body = s.pointee.body else { return .value(.missing) }
        return ResultCell(copying: body)
    case .absent, .element, .covered:
        return .value(s.pointee.wholeValue)
    }
}

/// The binary value at a path of the document bound at `s` (nil when absent); call only
/// when the slot holds a document.
@inline(__always)
func slotBinary(_ ctx: ExecContext, _ s: UnsafeMutablePointer<SourceSlot>, _ path: CompiledPath) -> BinaryValue? {
    if s.pointee.partial {
        // A scalar found whole in the head is the value; anything else (absent, cut off, an
        // array or object that callers walk, a head too short for the root's table) is read
        // again from the whole record.
        if let body = s.pointee.body, let v = path.lookup(in: body), v.isWholeScalar { return v }
        ctx.completeBody(s)
    }
    guard let body = s.pointee.body else { return nil }
    return path.lookup(in: body)
}

/// `slotValue` for a slot bound to the head of a record in two pieces.
@inline(never)
func partialSlotValue(_ ctx: ExecContext, _ s: UnsafeMutablePointer<SourceSlot>, _ path: CompiledPath) -> Value {
    // A value that decodes whole from the head is the value: every read was inside the
    // head, which holds the record's first bytes. Absent or cut off: the whole record.
    if let body = s.pointee.body, let v = path.lookup(in: body)?.decode() { return v }
    ctx.completeBody(s)
    guard let body = s.pointee.body else { return .missing }
    return path.lookup(in: body)?.toValue() ?? .missing
}

/// Per-execution state shared by all compiled expressions of a query.
///
/// `slots` is a plain pointer rather than an array: evaluators read and write it per row,
/// and an array property of a class would pay for copy-on-write checks and dynamic
/// exclusivity checks on every access.
final class ExecContext {
    let slots: UnsafeMutablePointer<SourceSlot>
    let slotCount: Int
    // Per-row state, touched by one query on one thread: no dynamic exclusivity tracking.
    @exclusivity(unchecked) var variables: [Value]
    @exclusivity(unchecked) var aggregateValues: [Value]
    /// The execution's parameters and snapshot (a reused executor gets new ones, `rearm`).
    @exclusivity(unchecked) private(set) var parameters: BoundParameters
    @exclusivity(unchecked) private(set) var txn: Snapshot
    /// Answers MATCH on an index that does not drive its source: the documents (ID bytes →
    /// rank) of `slot`'s collection matching `query` in the index named `index`. Set by the
    /// executor (the index layer is above this one).
    @exclusivity(unchecked) var matchSource: ((_ slot: Int, _ index: String, _ query: String) throws -> [[UInt8]: Double])?
    /// Matches of such MATCHes, by index and query text.
    @exclusivity(unchecked) var fullTextCache: [String: [[UInt8]: Double]] = [:]
    /// An error raised inside an evaluator (which cannot throw); the executor rethrows it.
    @exclusivity(unchecked) var deferredError: (any Error)?
    /// Counts of documents and index entries read, under EXPLAIN ANALYZE only (read for every
    /// document and index entry: no dynamic exclusivity check, ~76 instructions each).
    @exclusivity(unchecked) var readCounters: ReadCounters?
    /// Stops this execution early (nil: it cannot be interrupted).
    @exclusivity(unchecked) var interrupt: QueryInterrupt? {
        didSet { interruptRef = interrupt.map { Unmanaged.passUnretained($0) } }
    }
    /// `interrupt`, unretained: `checkInterrupt` runs for every row and index entry, and
    /// reading the optional reference there retained and released it each time.
    @exclusivity(unchecked) private var interruptRef: Unmanaged<QueryInterrupt>?

    /// Throws `DatabaseError.interrupted` when the execution was interrupted, cancelled or
    /// timed out, or the error an evaluator raised; call it in every loop that can run long.
    @inline(__always)
    func checkInterrupt() throws {
        if let deferredError { throw deferredError }
        guard let interruptRef else { return }
        try interruptRef._withUnsafeGuaranteedRef { interrupt in
            // The flag (one atomic load) every time; the epochs and the clock every 32 checks.
            var r = interrupt.flaggedReason
            if r == .none {
                if interruptPoll != 0 { interruptPoll &-= 1; return }
                interruptPoll = 31
                r = interrupt.slowReason()
                if r == .none { return }
            }
            throw interrupt.error(r)
        }
    }

    /// Checks left before `checkInterrupt` polls the interrupt's epochs and deadline again.
    @exclusivity(unchecked) private var interruptPoll: UInt32 = 0

    /// Records `error` for the executor to throw (the first one wins).
    func raise(_ error: any Error) {
        if deferredError == nil { deferredError = error }
    }

    /// Documents (ID bytes → rank) matching `query` in full-text index `index` of `slot`'s collection.
    func fullTextMatches(slot: Int, index: String, query: String) -> [[UInt8]: Double] {
        let key = index.lowercased() + "\u{0}" + query
        if let cached = fullTextCache[key] { return cached }
        var result: [[UInt8]: Double] = [:]
        do {
            result = try matchSource?(slot, index, query) ?? [:]
        } catch {
            raise(error)
        }
        fullTextCache[key] = result
        return result
    }

    init(sourceCount: Int, variableCount: Int, aggregateCount: Int, parameters: BoundParameters, txn: Snapshot) {
        slotCount = sourceCount
        slots = .allocate(capacity: max(sourceCount, 1))
        slots.initialize(repeating: SourceSlot(), count: max(sourceCount, 1))
        variables = Array(repeating: .missing, count: variableCount)
        aggregateValues = Array(repeating: .missing, count: aggregateCount)
        self.parameters = parameters
        self.txn = txn
    }

    deinit {
        slots.deinitialize(count: max(slotCount, 1))
        slots.deallocate()
    }

    /// Readies the context for another execution of the same plan in snapshot `txn`.
    func rearm(parameters: BoundParameters, txn: Snapshot, interrupt: QueryInterrupt?) {
        self.parameters = parameters
        self.txn = txn
        self.interrupt = interrupt
        deferredError = nil
        readCounters = nil
        if !fullTextCache.isEmpty { fullTextCache = [:] }
        if !keptPieceBuffers.isEmpty { keptPieceBuffers.removeAll() }
        interruptPoll = 0
        clearSlots()
    }

    /// Empties every slot (a slot already empty is left as it is). A slot bound to a
    /// document holds nothing reference-counted: its fields are reset in place (a new
    /// `SourceSlot` would destroy and initialise every field through the value witnesses).
    func clearSlots() {
        for i in 0..<max(slotCount, 1) {
            let s = slots + i
            if s.pointee.holdsNothingCounted {
                s.pointee.state = .absent
                s.pointee.id = UnsafeRawBufferPointer(start: nil, count: 0)
                s.pointee.record = nil
                s.pointee.body = nil
                s.pointee.partial = false
                s.pointee.rank = 0
                s.pointee.matched = false
                s.pointee.coveredGeneration = 0
            } else {
                s.pointee = SourceSlot()
            }
        }
    }

    /// A copy of every slot (a group's representative row). Bodies assembled from two
    /// pieces stay where they are: their slots' buffers are kept for the execution.
    func snapshot() -> [SourceSlot] {
        for slot in 0..<slotCount { keepAssembledBody(slot) }
        return Array(UnsafeBufferPointer(start: slots, count: slotCount))
    }

    // MARK: - Records in two pieces

    /// Per slot, where a document stored in two pieces is assembled (made on first use).
    @exclusivity(unchecked) private var pieceBuffers: [RecordBuffer?] = []
    /// Per slot, whether its buffer may hold the body the slot is bound to.
    @exclusivity(unchecked) private var pieceBufferBound: [Bool] = []
    /// Buffers that bodies kept beyond their row point into, released with the execution.
    @exclusivity(unchecked) private var keptPieceBuffers: [RecordBuffer] = []

    /// The whole record of `stored` (the value of document `id` in `tables.records`) for
    /// binding to `slot`: `stored` itself, or both pieces assembled in the slot's buffer,
    /// which the next assembly for that slot reuses (`keepAssembledBody` keeps it).
    @inline(__always)
    func wholeRecord(_ stored: UnsafeRawBufferPointer, id: UnsafeRawBufferPointer, tables: DocumentTables,
                     slot: Int) throws -> UnsafeRawBufferPointer {
        // (A slot later bound to a record in one piece leaves its flag set: keeping the buffer
        // then costs memory only.)
        guard DocumentRecord.isContinued(stored) else { return stored }
        return try assembleRecord(stored, id: id, tables: tables, slot: slot)
    }

    private func assembleRecord(_ stored: UnsafeRawBufferPointer, id: UnsafeRawBufferPointer, tables: DocumentTables,
                                slot: Int) throws -> UnsafeRawBufferPointer {
        if pieceBuffers.count <= slot {
            pieceBuffers += Array(repeating: nil, count: slot + 1 - pieceBuffers.count)
            pieceBufferBound += Array(repeating: false, count: slot + 1 - pieceBufferBound.count)
        }
        let buffer: RecordBuffer
        if let b = pieceBuffers[slot] { buffer = b } else { buffer = RecordBuffer(); pieceBuffers[slot] = buffer }
        let whole = try RecordAssembly.whole(stored, id: id, tails: tables.tails, txn: txn, buffer: buffer)
        pieceBufferBound[slot] = true
        return whole
    }

    /// Per slot, the document tables of the collection it reads (set when a split record is
    /// bound to it; a slot always reads the same collection).
    @exclusivity(unchecked) private var slotTables: [DocumentTables?] = []

    /// Binds the slot at `s` to the head of a record in two pieces, whose tail is read when
    /// an expression needs it (`completeBody`).
    @inline(never)
    func bindHead(_ s: UnsafeMutablePointer<SourceSlot>, stored: UnsafeRawBufferPointer, tables: DocumentTables) {
        let slot = s - slots
        if slotTables.count <= slot { slotTables += Array(repeating: nil, count: slot + 1 - slotTables.count) }
        if slotTables[slot] == nil { slotTables[slot] = tables }
        s.pointee.partial = true
        s.pointee.head = stored
        s.pointee.body = BinaryValue.root(DocumentRecord.body(stored))
    }

    /// Replaces the head bound to the slot at `s` by the whole record (assembled in the
    /// slot's buffer); a missing tail is raised (`raise`) and leaves no body.
    @inline(never)
    func completeBody(_ s: UnsafeMutablePointer<SourceSlot>) {
        guard s.pointee.partial else { return }
        let slot = s - slots
        s.pointee.partial = false
        guard slot < slotTables.count, let tables = slotTables[slot] else {
            s.pointee.body = nil
            raise(DatabaseError(.corrupt, "a document bound to a query source has lost its collection's tables"))
            return
        }
        do {
            let whole = try wholeRecord(s.pointee.head, id: s.pointee.id, tables: tables, slot: slot)
            s.pointee.body = BinaryValue.root(DocumentRecord.body(whole))
        } catch {
            s.pointee.body = nil
            raise(error)
        }
    }

    /// Completes `slot`'s body (`completeBody`); false, with the error raised, if it cannot.
    @inline(__always)
    func completedBody(_ slot: Int) -> Bool {
        let s = slots + slot
        if s.pointee.partial { completeBody(s) }
        return deferredError == nil
    }

    /// Keeps the body bound to `slot` valid until the execution ends, when it was assembled
    /// from two pieces (call before holding a copy of the slot beyond its row).
    @inline(__always)
    func keepAssembledBody(_ slot: Int) {
        guard slot < pieceBufferBound.count, pieceBufferBound[slot], let b = pieceBuffers[slot] else { return }
        keptPieceBuffers.append(b)
        pieceBuffers[slot] = nil
        pieceBufferBound[slot] = false
    }

    /// Restores slots saved by `snapshot()`.
    func restore(_ saved: [SourceSlot]) {
        for (i, s) in saved.enumerated() where i < slotCount { slots[i] = s }
    }
}

/// A compiled expression: evaluates against the context's current row.
typealias Evaluator = (ExecContext) -> Value

/// A compiled expression in a nominal wrapper, for storing in arrays and optionals.
///
/// An array (or optional, or tuple) of bare function values keeps them in the most general
/// calling convention, so every read wraps the closure in a reabstraction thunk — an
/// allocation per call on a row loop's hot path. Inside a struct the closure keeps the
/// convention it was compiled with.
struct Compiled {
    let evaluate: Evaluator

    init(_ evaluate: @escaping Evaluator) { self.evaluate = evaluate }

    @inline(__always)
    func callAsFunction(_ ctx: ExecContext) -> Value { evaluate(ctx) }
}
