import CLMDB

/// A named LMDB table (a DBI). Cheap to copy; valid for the life of its environment.
@usableFromInline package struct Table: Sendable, Hashable {
    /// The LMDB database handle.
    @usableFromInline package let dbi: MDB_dbi
    /// The table's name.
    @usableFromInline package let name: String

    /// A handle that refers to no table, for values filled in later.
    @usableFromInline package static let placeholder = Table(dbi: 0, name: "")
}

/// Flags for `Transaction.put`.
@usableFromInline package struct PutFlags: OptionSet, Sendable {
    /// The raw flag bits.
    @usableFromInline package let rawValue: UInt32
    /// Creates flags from raw bits.
    @usableFromInline package init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Fail (return false) instead of overwriting an existing key.
    @usableFromInline package static let noOverwrite = PutFlags(rawValue: UInt32(MDB_NOOVERWRITE))
    /// The key sorts after every key in the table: append without searching (bulk loads).
    @usableFromInline package static let append = PutFlags(rawValue: UInt32(MDB_APPEND))
}

/// An LMDB transaction, handed to the closure of `Environment.read` or `Environment.write`.
///
/// Bytes it returns point into the memory map and are valid only until the transaction
/// ends or, in a write transaction, until the next write. Copy what must outlive them.
@usableFromInline package final class Transaction {
    @exclusivity(unchecked) @usableFromInline var raw: OpaquePointer?
    /// True for a read-only transaction.
    @usableFromInline package let readOnly: Bool
    @usableFromInline var sawMapFull = false
    /// For a long-lived read transaction: the thread that began it (its hold on the
    /// environment is counted for that thread until it ends, wherever it ends).
    var holder: UInt = 0

    init(raw: OpaquePointer, readOnly: Bool) {
        self.raw = raw
        self.readOnly = readOnly
    }

    func invalidate() { raw = nil }

    /// The transaction ID (`mdb_txn_id`): for a read transaction, the ID of the last write
    /// transaction its snapshot includes.
    package var id: UInt64 { UInt64(mdb_txn_id(handle)) }

    @inlinable
    var handle: OpaquePointer {
        guard let raw else { preconditionFailure("LMDB transaction used after it ended") }
        return raw
    }

    @usableFromInline
    func checkWrite(_ rc: Int32) throws(LMDBError) {
        if rc == MDB_MAP_FULL || rc == MDB_TXN_FULL { sawMapFull = rc == MDB_MAP_FULL }
        try check(rc)
    }

    // MARK: - Tables

    /// Opens a named table; `nil` if it does not exist and `create` is false.
    @usableFromInline package func openTable(_ name: String, create: Bool = false) throws -> Table? {
        var dbi = MDB_dbi()
        let flags = create ? UInt32(MDB_CREATE) : 0
        let rc = mdb_dbi_open(handle, name, flags, &dbi)
        if rc == MDB_NOTFOUND { return nil }
        try checkWrite(rc)
        return Table(dbi: dbi, name: name)
    }

    /// The names of the named tables in the environment (the keys of LMDB's main database).
    @usableFromInline package func tableNames() throws -> [String] {
        var dbi = MDB_dbi()
        try check(mdb_dbi_open(handle, nil, 0, &dbi))
        var names: [String] = []
        try withCursor(Table(dbi: dbi, name: "")) { c in
            try c.forEach { k, _ in names.append(String(decoding: k, as: UTF8.self)); return true }
        }
        return names
    }

    /// A named table's record in the main table (LMDB's `MDB_db`: flags, depth, page counts,
    /// entries, root page), or nil if there is no such table. LMDB copies every page a write
    /// changes, so the record changes whenever a committed write touched the table: tests use
    /// it to check which tables a write left alone.
    package func tableRecord(_ name: String) throws -> [UInt8]? {
        var main = MDB_dbi()
        try check(mdb_dbi_open(handle, nil, 0, &main))
        return try get(Table(dbi: main, name: ""), key: name).map { Array($0) }
    }

    /// Empties a table, or deletes it from the environment when `delete` is true.
    @usableFromInline package func drop(_ table: Table, delete: Bool = false) throws {
        try check(mdb_drop(handle, table.dbi, delete ? 1 : 0))
    }

    /// The number of entries in a table.
    @usableFromInline package func count(_ table: Table) throws -> Int {
        var stat = MDB_stat()
        try check(mdb_stat(handle, table.dbi, &stat))
        return stat.ms_entries
    }

    /// Pages used by a table (branch + leaf + overflow) times the page size.
    @usableFromInline package func byteSize(_ table: Table) throws -> Int {
        var stat = MDB_stat()
        try check(mdb_stat(handle, table.dbi, &stat))
        return (stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages) * Int(stat.ms_psize)
    }

    // MARK: - Reads

    /// The value stored under `key`, or `nil`. The bytes live in the memory map.
    @inlinable
    package func get(_ table: Table, key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        let rc = mdb_get(handle, table.dbi, &k, &v)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc)
        return UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
    }

    /// The value stored under a byte-array key.
    @inlinable
    package func get(_ table: Table, key: [UInt8]) throws -> UnsafeRawBufferPointer? {
        try key.withUnsafeBytes { try get(table, key: $0) }
    }

    /// The value stored under a UTF-8 string key.
    @inlinable
    package func get(_ table: Table, key: String) throws -> UnsafeRawBufferPointer? {
        var key = key
        return try key.withUTF8 { try get(table, key: UnsafeRawBufferPointer($0)) }
    }

    // MARK: - Writes

    /// Stores `value` under `key`. Returns false when `.noOverwrite` is set and the key exists.
    @discardableResult
    @inlinable
    package func put(_ table: Table, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
                    flags: PutFlags = []) throws -> Bool {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = mdb_put(handle, table.dbi, &k, &v, flags.rawValue)
        if rc == MDB_KEYEXIST && flags.contains(.noOverwrite) { return false }
        try checkWrite(rc)
        return true
    }

    /// Stores byte arrays.
    @discardableResult
    @inlinable
    package func put(_ table: Table, key: [UInt8], value: [UInt8], flags: PutFlags = []) throws -> Bool {
        try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try put(table, key: k, value: v, flags: flags) } }
    }

    /// Reserves `size` bytes for the value of `key` and lets `fill` write them in place
    /// (`MDB_RESERVE`: no intermediate copy of large values).
    @inlinable
    package func putReserved(_ table: Table, key: UnsafeRawBufferPointer, size: Int, flags: PutFlags = [],
                            fill: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: size, mv_data: nil)
        let rc = mdb_put(handle, table.dbi, &k, &v, flags.rawValue | UInt32(MDB_RESERVE))
        try checkWrite(rc)
        try fill(UnsafeMutableRawBufferPointer(start: v.mv_data, count: size))
    }

    /// Deletes `key`. Returns false if it was not there.
    @discardableResult
    @inlinable
    package func delete(_ table: Table, key: UnsafeRawBufferPointer) throws -> Bool {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        let rc = mdb_del(handle, table.dbi, &k, nil)
        if rc == MDB_NOTFOUND { return false }
        try checkWrite(rc)
        return true
    }

    /// Deletes a byte-array key.
    @discardableResult
    @inlinable
    package func delete(_ table: Table, key: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { try delete(table, key: $0) }
    }

    // MARK: - Cursors

    /// Runs `body` with a cursor over `table`; the cursor is closed when `body` returns.
    @inlinable
    package func withCursor<R>(_ table: Table, _ body: (Cursor) throws -> R) throws -> R {
        var cur: OpaquePointer?
        try check(mdb_cursor_open(handle, table.dbi, &cur))
        let cursor = Cursor(raw: cur!, txn: self)
        defer { cursor.close() }
        return try body(cursor)
    }

    /// Opens a cursor that the caller must `close()` before the transaction ends.
    @usableFromInline package func openCursor(_ table: Table) throws -> Cursor {
        var cur: OpaquePointer?
        try check(mdb_cursor_open(handle, table.dbi, &cur))
        return Cursor(raw: cur!, txn: self)
    }
}
