/// Produces the rows of one data source, binding `ctx.slots[slot]` on each `next`.
/// Subclasses are the access paths; `reset` restarts for a new outer row.
class RowSource {
    let slot: Int
    init(slot: Int) { self.slot = slot }
    func reset(_ ctx: ExecContext) throws {}
    func next(_ ctx: ExecContext) throws -> Bool { false }
    func close() {}
}

/// Looks documents up by ID (used by index scans).
enum DocumentFetch {
    /// Binds `slot` to document `id`; false if it is absent (or a tombstone and not wanted).
    @inline(__always)
    static func bind(_ ctx: ExecContext, slot: Int, table: StorageTable, id: UnsafeRawBufferPointer, includeDeleted: Bool) throws -> Bool {
        guard let v = try ctx.txn.get(table, key: id) else { return false }
        return bind(ctx, slot: slot, id: id, record: v, includeDeleted: includeDeleted)
    }

    /// Binds `slot` to the stored record `record` of document `id` (both in LMDB memory);
    /// false if the header is damaged, or a tombstone that is not wanted.
    @inline(__always)
    static func bind(_ ctx: ExecContext, slot: Int, id: UnsafeRawBufferPointer, record v: UnsafeRawBufferPointer,
                     includeDeleted: Bool) -> Bool {
        if let counters = ctx.readCounters { counters.documents &+= 1 }
        guard let header = DocumentRecord.header(v), !header.deleted || includeDeleted else { return false }
        // Set the fields in place: building a new SourceSlot would retain and release its
        // reference-counted fields for every document.
        let s = ctx.slots + slot
        s.pointee.state = .document
        s.pointee.id = id
        s.pointee.record = header
        s.pointee.body = BinaryValue.root(DocumentRecord.body(v))
        return true
    }
}

/// What an execution read, counted only for EXPLAIN ANALYZE (`ExecContext.readCounters`).
final class ReadCounters {
    /// Documents read: fetched by ID or visited by a scan (tombstones included).
    var documents = 0
    /// Index entries read (keys of value and array indexes, matches of a full-text index).
    var entries = 0
}
