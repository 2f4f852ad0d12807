import Synchronization

/// Produces the rows of one data source, binding `ctx.slots[slot]` on each `next`.
/// Subclasses are the access paths; `reset` restarts for a new outer row.
class RowSource {
    let slot: Int
    init(slot: Int) { self.slot = slot }
    func reset(_ ctx: ExecContext) throws {}
    func next(_ ctx: ExecContext) throws -> Bool { false }
    func close() {}

    /// How many rows are left, for a `count(*)` that reads nothing of them: a source that can
    /// count without binding each row overrides this; the default reads them.
    func countRows(_ ctx: ExecContext) throws -> Int {
        var n = 0
        while try next(ctx) { n += 1 }
        return n
    }

    /// For `GROUP BY` the first `columns` index expressions with only `count(*)`: the groups
    /// of the rows left in key order, each with its first row's document ID and values and its
    /// number of rows, counted without binding each row (without `ids`, the IDs are left
    /// empty: DISTINCT reads none), written into `groups` (emptied first, its storage kept).
    /// False (having read nothing that `reset` does not undo) when this source cannot count
    /// so; the default cannot.
    func groupCounts(_ ctx: ExecContext, columns: Int, ids: Bool = true, into groups: inout CountedGroups) throws -> Bool { false }
}

/// The groups of `RowSource.groupCounts`, one after another in flat storage (no array per
/// group): each group's first row's index values (all of the entry's, the group's first
/// `columns` first) and document ID, and how many rows the group has.
struct CountedGroups {
    private(set) var values: [Value] = []
    private var valueEnds: [Int] = []
    private var idBytes: [UInt8] = []
    private var idEnds: [Int] = []
    private(set) var counts: [Int] = []

    var count: Int { counts.count }

    /// Empties the groups, keeping the storage for the next execution.
    mutating func removeAll() {
        values.removeAll(keepingCapacity: true)
        valueEnds.removeAll(keepingCapacity: true)
        idBytes.removeAll(keepingCapacity: true)
        idEnds.removeAll(keepingCapacity: true)
        counts.removeAll(keepingCapacity: true)
    }

    /// Starts a group whose values were just appended to `values` (`withValues`).
    mutating func close(id: UnsafeRawBufferPointer) {
        valueEnds.append(values.count)
        idBytes.append(contentsOf: id)
        idEnds.append(idBytes.count)
        counts.append(1)
    }

    /// Appends values of a group being started (`close` ends it).
    mutating func withValues<R>(_ body: (inout [Value]) throws -> R) rethrows -> R { try body(&values) }

    /// Drops values appended after the last group (a group not started after all).
    mutating func dropOpenValues() {
        values.removeSubrange((valueEnds.last ?? 0)...)
    }

    /// One more row for the last group.
    mutating func countRow() { counts[counts.count - 1] += 1 }

    /// Where group `g`'s values are in `values`.
    func valueRange(_ g: Int) -> Range<Int> { (g == 0 ? 0 : valueEnds[g - 1])..<valueEnds[g] }

    /// Group `g`'s first row's document ID (empty when IDs were not kept).
    func id(_ g: Int) -> ArraySlice<UInt8> { idBytes[(g == 0 ? 0 : idEnds[g - 1])..<idEnds[g]] }

    /// The number of rows of all groups.
    var rows: Int { counts.reduce(0, +) }
}

/// Looks documents up by ID (used by index scans).
enum DocumentFetch {
    /// Binds `slot` to document `id`; false if it is absent (or a tombstone and not wanted).
    @inline(__always)
    static func bind(_ ctx: ExecContext, slot: Int, table: DocumentTables, id: UnsafeRawBufferPointer, includeDeleted: Bool) throws -> Bool {
        guard let v = try ctx.txn.get(table.records, key: id) else { return false }
        return bind(ctx, slot: slot, id: id, record: v, tables: table, includeDeleted: includeDeleted)
    }

    /// Binds `slot` to the stored record `stored` of document `id` (both in LMDB memory; of a
    /// record in two pieces, the head, `ExecContext.bindHead`); false if the header is
    /// damaged, or a tombstone that is not wanted.
    @inline(__always)
    static func bind(_ ctx: ExecContext, slot: Int, id: UnsafeRawBufferPointer, record stored: UnsafeRawBufferPointer,
                     tables: DocumentTables, includeDeleted: Bool) -> Bool {
        if let counters = ctx.readCounters { counters.documents &+= 1 }
        guard let header = DocumentRecord.header(stored), !header.deleted || includeDeleted else { return false }
        // Set the fields in place: building a new SourceSlot would retain and release its
        // reference-counted fields for every document.
        let s = ctx.slots + slot
        s.pointee.state = .document
        s.pointee.id = id
        s.pointee.record = header
        if DocumentRecord.isContinued(stored) {
            // The head alone until an expression needs more (`ExecContext.completeBody`).
            ctx.bindHead(s, stored: stored, tables: tables)
        } else {
            s.pointee.partial = false
            s.pointee.body = BinaryValue.root(DocumentRecord.body(stored))
        }
        return true
    }
}

/// Evaluators a plan compiles when it first runs and every later execution shares (they keep
/// no state of their own, see `Compiled`): a row source then costs no compiling per execution.
final class CompiledOnce<T>: @unchecked Sendable {
    // @unchecked Sendable: `value` is read and written under `lock` only; T's evaluators are
    // stateless closures, safe to call from several executions at once.
    private let lock = Mutex<Void>(())
    private var value: T?

    init() {}

    /// The compiled value, made by `make` on the first call.
    func get(_ make: () -> T) -> T {
        lock.withLock { _ in
            if let value { return value }
            let made = make()
            value = made
            return made
        }
    }
}

/// What an execution read, counted only for EXPLAIN ANALYZE (`ExecContext.readCounters`).
final class ReadCounters {
    /// Documents read: fetched by ID or visited by a scan (tombstones included).
    var documents = 0
    /// Index entries read (keys of value and array indexes, matches of a full-text index).
    var entries = 0
}
