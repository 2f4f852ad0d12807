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
        guard let v = try ctx.txn.get(table, key: id), let header = DocumentRecord.header(v) else { return false }
        if header.deleted && !includeDeleted { return false }
        let s = ctx.slots + slot
        s.pointee.state = .document
        s.pointee.id = id
        s.pointee.record = header
        s.pointee.body = BinaryValue.root(DocumentRecord.body(v))
        return true
    }
}
