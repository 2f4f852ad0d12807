import CLMDB
import CLMDBGuard
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
    /// The key sorts after every key in the table: append without searching, filling pages
    /// instead of splitting them in half (bulk loads). A key that does not is put as usual.
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
    @exclusivity(unchecked) var holder: UInt = 0

    /// For a read-only transaction: the part of the memory map the data file covers, which
    /// every key and value it returns must lie in (nil in a write transaction, whose values
    /// may live in memory LMDB allocated).
    @usableFromInline let window: MapWindow?
    /// For a write transaction: the same, to find out whether a leaf page it is about to change
    /// is still the file's own (and check it first: `tessera_lmdb_check_leaf`).
    @usableFromInline let pages: MapWindow?
    /// Tables an append (`MDB_APPEND`) has written to in this transaction, after checking the
    /// last leaf page: that page is this transaction's copy from then on, and so is every page
    /// a later append lands on (the same one, or new ones), so later appends skip the check
    /// (its cursor descent doubled the cost of each appended entry).
    @exclusivity(unchecked) @usableFromInline var appendedTables: [UInt32] = []
    /// For a write transaction: the tables it has written to so far, one bit per handle
    /// (`hasChanged(_:)`).
    @exclusivity(unchecked) @usableFromInline var changedTables: [UInt64] = []
    /// For a read-only transaction: the B-trees `get(_:from:)` walked, by table, with the
    /// snapshot and map they were read in (`tree(of:)`); for a write transaction, the committed
    /// trees its leaf checks walk (`committedTree(of:base:)`).
    @exclusivity(unchecked) @usableFromInline var trees: [(dbi: MDB_dbi, snapshot: Int, base: UInt, end: UInt, tree: tessera_lmdb_tree?)] = []

    init(raw: OpaquePointer, readOnly: Bool, window: MapWindow? = nil) {
        self.raw = raw
        self.readOnly = readOnly
        self.window = readOnly ? window : nil
        self.pages = readOnly ? nil : window
    }

    /// Before changing `key` in `table`: checks the leaf page it lands on (see `pages`).
    @inlinable @inline(__always)
    func checkLeaf(_ table: Table, _ key: inout MDB_val) throws(LMDBError) {
        guard let pages else { return }
        let base = pages.base.load(ordering: .relaxed)
        if base == 0 { return }
        if !hasChanged(table), var tree = try committedTree(of: table, base: base) {
            // A table this transaction has not written yet is its committed tree: check the
            // path to the key's leaf, each page once per transaction. (Once it has written,
            // the pages it changed are its own copies, hot in memory; the committed path would
            // be read from the file again for every write, which cost 10–15 % of a round of
            // updates: then the leaf LMDB finds is checked, as before.)
            if checkedPages == nil { allocateCheckedPages(pages: Int((tree.map_end - tree.map_base) / UInt(tree.page_size))) }
            try check(tessera_lmdb_check_path(&tree, &key, checkedPages, checkedPageCount))
            return
        }
        try check(tessera_lmdb_check_leaf(UnsafeMutableRawPointer(handle), table.dbi, &key, base,
                                          pages.end.load(ordering: .relaxed), pages.pageSize))
    }

    /// For a write transaction: keys that cut `table` into at most `pieces` runs of about the
    /// same number of pages, ascending, read from the branch pages at the top of its committed
    /// tree (`tessera_lmdb_cut_keys`: a few pages, not a walk of the keys). Nil when the tree
    /// cannot be read so: a table this transaction has changed or created, an empty one, a
    /// map not known yet, or a page that does not look as expected (the caller walks the keys
    /// instead, which reports damage as any read does).
    package func cutKeys(_ table: Table, pieces: Int) -> [[UInt8]]? {
        guard pieces > 1, let pages, !hasChanged(table) else { return nil }
        var base = pages.base.load(ordering: .relaxed)
        if base == 0 {
            // Not known yet: learn it from the table's first key (the table is unchanged, so
            // its pages are the file's, in the map).
            var cursor: OpaquePointer?
            guard tessera_mdb_cursor_open(UnsafeMutableRawPointer(handle), table.dbi, &cursor) == 0, let cursor else { return nil }
            var k = MDB_val(), v = MDB_val()
            let rc = tessera_mdb_cursor_get(UnsafeMutableRawPointer(cursor), &k, &v, MDB_FIRST.rawValue)
            mdb_cursor_close(cursor)
            guard rc == 0, (try? pages.recheck(start: UInt(bitPattern: k.mv_data), count: k.mv_size)) != nil else { return nil }
            base = pages.base.load(ordering: .relaxed)
        }
        guard base != 0, var tree = try? committedTree(of: table, base: base) else { return nil }
        let capacity = 16_384
        let scratch = UnsafeMutablePointer<tessera_lmdb_cut_node>.allocate(capacity: capacity)
        defer { scratch.deallocate() }
        var cuts = [MDB_val](repeating: MDB_val(), count: pieces - 1)
        var count: UInt32 = 0
        let rc = cuts.withUnsafeMutableBufferPointer { c in
            tessera_lmdb_cut_keys(&tree, UInt32(min(pieces, Int(UInt32.max))), c.baseAddress, &count, scratch, capacity)
        }
        guard rc == 0 else { return nil }
        return cuts[0..<Int(count)].map { Array(UnsafeRawBufferPointer(start: $0.mv_data, count: $0.mv_size)) }
    }

    /// For a write transaction: a bit per page of the file, set for the pages its leaf checks
    /// have checked (`tessera_lmdb_check_path`).
    @exclusivity(unchecked) @usableFromInline var checkedPages: UnsafeMutablePointer<UInt8>?
    @exclusivity(unchecked) @usableFromInline var checkedPageCount = 0

    @usableFromInline
    func allocateCheckedPages(pages: Int) {
        let bytes = pages / 8 + 1
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes)
        p.initialize(repeating: 0, count: bytes)
        checkedPages = p
        checkedPageCount = pages
    }

    deinit { checkedPages?.deallocate() }

    /// For a write transaction: where `table`'s committed B-tree lies (the record of the last
    /// commit; nil for a table created in this transaction, an empty one, or one with a key
    /// order of its own). Read once per table per transaction.
    @usableFromInline
    func committedTree(of table: Table, base: UInt) throws(LMDBError) -> tessera_lmdb_tree? {
        for t in trees where t.dbi == table.dbi { return t.tree }
        guard let pages, !table.name.isEmpty else { return nil }
        let end = pages.end.load(ordering: .relaxed)
        let tree = try readTree(of: table, base: base, end: end, pageSize: pages.pageSize)
        trees.append((table.dbi, 0, base, end, tree))
        return tree
    }

    /// Records that this write transaction is about to write to table `dbi`.
    @inlinable @inline(__always)
    func noteChange(_ dbi: MDB_dbi) {
        let word = Int(dbi &>> 6)
        if word < changedTables.count {
            changedTables[word] |= 1 &<< UInt64(dbi & 63)
        } else {
            noteChangeGrowing(dbi)
        }
    }

    /// Bytes of keys and values this write transaction has put (appends and batches included;
    /// deletes not): how much the commit will write, roughly (`Environment.write` starts the
    /// file's writeback during a large commit).
    @exclusivity(unchecked) @usableFromInline package var writtenBytes = 0

    @usableFromInline
    func noteChangeGrowing(_ dbi: MDB_dbi) {
        let word = Int(dbi &>> 6)
        changedTables.append(contentsOf: repeatElement(0, count: word + 1 - changedTables.count))
        changedTables[word] |= 1 &<< UInt64(dbi & 63)
    }

    /// True when this write transaction has written to `table` (a put, a delete, emptying
    /// it), even if the writes cancel out. A read transaction begun while this one runs sees
    /// every table it has not changed exactly as this one does: LMDB admits one writer at a
    /// time, so both start from the same commit.
    @usableFromInline package func hasChanged(_ table: Table) -> Bool {
        let word = Int(table.dbi &>> 6)
        return word < changedTables.count && changedTables[word] & (1 &<< UInt64(table.dbi & 63)) != 0
    }

    /// Marks the transaction ended for good; an object the caller attached goes with it.
    func invalidate() {
        raw = nil
        attachment = nil
    }

    /// A read transaction: true from the moment it is handed out until it ends (the pool
    /// keeps ended ones, reset, for the next reader).
    @exclusivity(unchecked) var inUse = false
    /// An object of the caller's that lives as long as this transaction object and comes
    /// back with it when the pool hands it out again (Tessera's snapshot wrapper).
    @exclusivity(unchecked) package var attachment: AnyObject?
    /// `attachment`, for other modules: `@exclusivity(unchecked)` holds for this module's
    /// accesses only, and a direct read from Tessera paid a dynamic check per snapshot.
    package var attached: AnyObject? {
        get { attachment }
        set { attachment = newValue }
    }

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
        let rc = tessera_mdb_dbi_open(UnsafeMutableRawPointer(handle), name, flags, &dbi)
        if rc == MDB_NOTFOUND { return nil }
        try checkWrite(rc)
        return Table(dbi: dbi, name: name)
    }

    /// The names of the named tables in the environment (the keys of LMDB's main database).
    @usableFromInline package func tableNames() throws -> [String] {
        var dbi = MDB_dbi()
        try check(tessera_mdb_dbi_open(UnsafeMutableRawPointer(handle), nil, 0, &dbi))
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
        noteChange(table.dbi)
        try check(tessera_mdb_drop(UnsafeMutableRawPointer(handle), table.dbi, delete ? 1 : 0))
    }

    /// The number of entries in a table.
    @usableFromInline package func count(_ table: Table) throws -> Int {
        var stat = MDB_stat()
        try check(tessera_mdb_stat(UnsafeMutableRawPointer(handle), table.dbi, &stat))
        return stat.ms_entries
    }

    /// Pages used by a table (branch + leaf + overflow) times the page size.
    @usableFromInline package func byteSize(_ table: Table) throws -> Int {
        var stat = MDB_stat()
        try check(tessera_mdb_stat(UnsafeMutableRawPointer(handle), table.dbi, &stat))
        return (stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages) * Int(stat.ms_psize)
    }

    // MARK: - Reads

    /// The value stored under `key`, or `nil`. The bytes live in the memory map.
    @inlinable
    package func get(_ table: Table, key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        let rc = tessera_mdb_get(UnsafeMutableRawPointer(handle), table.dbi, &k, &v)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc)
        try window?.check(v)
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
        let appending = flags.contains(.append)
        if !appending || !appendedTables.contains(table.dbi) { try checkLeaf(table, &k) }
        noteChange(table.dbi)
        writtenBytes &+= key.count &+ value.count
        let rc = tessera_mdb_put(UnsafeMutableRawPointer(handle), table.dbi, &k, &v, flags.rawValue)
        if rc == MDB_KEYEXIST && appending {
            // Not after the last key (LMDB changed nothing): an ordinary put.
            return try put(table, key: key, value: value, flags: flags.subtracting(.append))
        }
        if rc == MDB_KEYEXIST && flags.contains(.noOverwrite) { return false }
        try checkWrite(rc)
        if appending && !appendedTables.contains(table.dbi) { appendedTables.append(table.dbi) }
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
        let appending = flags.contains(.append)
        if !appending || !appendedTables.contains(table.dbi) { try checkLeaf(table, &k) }
        noteChange(table.dbi)
        writtenBytes &+= key.count &+ size
        let rc = tessera_mdb_put(UnsafeMutableRawPointer(handle), table.dbi, &k, &v, flags.rawValue | UInt32(MDB_RESERVE))
        if rc == MDB_KEYEXIST && appending {
            // Not after the last key (LMDB changed nothing): an ordinary put.
            return try putReserved(table, key: key, size: size, flags: flags.subtracting(.append), fill: fill)
        }
        try checkWrite(rc)
        if appending && !appendedTables.contains(table.dbi) { appendedTables.append(table.dbi) }
        try fill(UnsafeMutableRawBufferPointer(start: v.mv_data, count: size))
    }

    /// Writes the entries of `batch` (see `AppendBatch`) and empties it. Entries are appended
    /// through one cursor while they come after the table's last key; one that does not is put
    /// as usual (`put`), and the rest continue after it.
    package func append(_ batch: inout AppendBatch, to table: Table) throws {
        try appendInRuns(&batch, to: table, { keys, values, count, appended in
            tessera_mdb_append_batch(UnsafeMutableRawPointer(handle), table.dbi, keys, values, count, &appended)
        }, appended: { _ in }, outOfOrder: { key, value in try put(table, key: key, value: value) })
    }

    /// Appends the records of `batch` (in ascending key order) through one cursor, each cut as
    /// `packing` says (see `RecordPacking`), and empties the batch. `placed(i, head)` is called
    /// for each entry in order: with the number of its bytes stored under its key (the rest is
    /// the caller's to store), or with nil when it does not come after the table's last key and
    /// was not written (the caller puts it another way); the entries after it are appended.
    package func appendRecords(_ batch: inout AppendBatch, to table: Table, packing: RecordPacking,
                               _ placed: (_ entry: Int, _ head: Int?) throws -> Void) throws {
        var heads = [Int](repeating: 0, count: batch.count)
        var packing = packing.raw
        var first = 0
        var index = 0
        try appendInRuns(&batch, to: table, { keys, values, count, appended in
            first = heads.count - count
            return heads.withUnsafeMutableBufferPointer { h in
                tessera_mdb_append_records(UnsafeMutableRawPointer(handle), table.dbi, keys, nil, values, count,
                                           &packing, h.baseAddress! + first, &appended)
            }
        }, appended: { run in
            for i in run { try placed(i, heads[i]) }
            index = run.upperBound
        }, outOfOrder: { _, _ in
            try placed(index, nil)
            index += 1
        })
    }

    /// The loop of `append` and `appendRecords`: `write(keys, values, count, &appended)` appends
    /// entries from the first not yet written (MDB_val arrays) and says how many it did;
    /// `appended` gets the range of those, `outOfOrder` an entry that is not after the table's
    /// last key (which it puts another way), and the next run starts after it.
    private func appendInRuns(_ batch: inout AppendBatch, to table: Table,
                              _ write: (UnsafeRawPointer, UnsafeRawPointer, Int, inout Int) -> Int32,
                              appended: (Range<Int>) throws -> Void,
                              outOfOrder: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        defer { batch.removeAll() }
        writtenBytes &+= batch.byteCount
        var next = 0
        while next < batch.count {
            let (firstKey, _) = batch.entry(next)
            var first = MDB_val(mv_size: firstKey.count, mv_data: UnsafeMutableRawPointer(mutating: firstKey.baseAddress))
            if !appendedTables.contains(table.dbi) { try checkLeaf(table, &first) }
            noteChange(table.dbi)
            var count = 0
            let rc = batch.withEntries(from: next) { keys, values, n in write(keys, values, n, &count) }
            if count > 0 && !appendedTables.contains(table.dbi) { appendedTables.append(table.dbi) }
            try appended(next..<(next + count))
            next += count
            if rc == 0 { break }
            guard rc == MDB_KEYEXIST else { try checkWrite(rc); return }
            // Not after the last key: that entry is put another way.
            let (key, value) = batch.entry(next)
            try outOfOrder(key, value)
            next += 1
        }
    }

    /// Writes the puts and deletes of `writes` (in ascending key order, among the table's
    /// keys) through one cursor, which finds each key from the leaf of the last write when it
    /// is on the same page, and empties `writes`. Each write's leaf page is checked as `put`
    /// checks it (the path to the first key too, while this transaction has not written the
    /// table yet).
    package func write(_ writes: inout OrderedWrites, to table: Table) throws {
        defer { writes.removeAll() }
        guard writes.count > 0 else { return }
        writtenBytes &+= writes.byteCount
        var first = writes.keys[0]
        try checkLeaf(table, &first)
        noteChange(table.dbi)
        let base = pages?.base.load(ordering: .relaxed) ?? 0
        let end = pages?.end.load(ordering: .relaxed) ?? 0
        var done = 0
        let rc = writes.keys.withUnsafeBufferPointer { k in
            writes.values.withUnsafeBufferPointer { v in
                writes.deletes.withUnsafeBufferPointer { d in
                    tessera_mdb_write_sorted(UnsafeMutableRawPointer(handle), table.dbi, k.baseAddress!, v.baseAddress!,
                                             d.baseAddress!, writes.count, base, end, pages?.pageSize ?? 4096, &done)
                }
            }
        }
        try checkWrite(rc)
    }

    /// Appends one record, `prefix ‖ value` under `key`, cut as `packing` says: returns the
    /// number of its bytes stored (the rest is the caller's to store), or nil when `key` does
    /// not come after the table's last key (nothing was written).
    package func appendRecord(_ table: Table, key: UnsafeRawBufferPointer, prefix: UnsafeRawBufferPointer,
                              value: UnsafeRawBufferPointer, packing: RecordPacking) throws -> Int? {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var p = MDB_val(mv_size: prefix.count, mv_data: UnsafeMutableRawPointer(mutating: prefix.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        if !appendedTables.contains(table.dbi) { try checkLeaf(table, &k) }
        noteChange(table.dbi)
        writtenBytes &+= key.count &+ prefix.count &+ value.count
        var packing = packing.raw
        var head = 0
        var appended = 0
        let rc = tessera_mdb_append_records(UnsafeMutableRawPointer(handle), table.dbi, &k, &p, &v, 1, &packing, &head, &appended)
        if rc == MDB_KEYEXIST { return nil }
        try checkWrite(rc)
        if !appendedTables.contains(table.dbi) { appendedTables.append(table.dbi) }
        return head
    }

    /// Deletes `key`. Returns false if it was not there.
    @discardableResult
    @inlinable
    package func delete(_ table: Table, key: UnsafeRawBufferPointer) throws -> Bool {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        try checkLeaf(table, &k)
        noteChange(table.dbi)
        let rc = tessera_mdb_del(UnsafeMutableRawPointer(handle), table.dbi, &k, nil)
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
        try check(tessera_mdb_cursor_open(UnsafeMutableRawPointer(handle), table.dbi, &cur))
        let cursor = Cursor(raw: cur!, txn: self)
        defer { cursor.close() }
        return try body(cursor)
    }

    /// Opens a cursor that the caller must `close()` before the transaction ends.
    @usableFromInline package func openCursor(_ table: Table) throws -> Cursor {
        var cur: OpaquePointer?
        try check(tessera_mdb_cursor_open(UnsafeMutableRawPointer(handle), table.dbi, &cur))
        return Cursor(raw: cur!, txn: self)
    }
}

/// The part of the memory map that the data file covers: every key and value a read-only
/// transaction returns must lie inside it. A damaged page can make LMDB return a value that
/// runs past the end of the file; reading it would be a SIGBUS, so it is an error instead.
///
/// LMDB does not tell where it mapped the file: the address is derived from the first
/// pointer checked (`tessera_lmdb_map_base`, which finds LMDB's meta pages there), again
/// after each remap.
@usableFromInline package final class MapWindow: @unchecked Sendable {
    // @unchecked Sendable: every field is atomic, or set once before any transaction.
    /// The map's address (0: not known yet).
    @usableFromInline let base = Atomic<UInt>(0)
    /// The address just past the file's last byte (0 while `base` is not known).
    @usableFromInline let end = Atomic<UInt>(0)
    /// Failed attempts to derive `base` since the last remap (it stops trying after a few).
    private let attempts = Atomic<Int>(0)
    /// The data file and LMDB's page size (set once, when the environment opens).
    var fd: Int32 = -1
    @usableFromInline var pageSize: UInt32 = 4096

    init() {}

    /// Forgets the map's address (after a remap: LMDB may have moved it).
    func reset() {
        end.store(0, ordering: .relaxed)
        base.store(0, ordering: .relaxed)
        attempts.store(0, ordering: .relaxed)
    }

    /// True when `value` lies inside the part of the file known to exist (no file check).
    @inlinable @inline(__always)
    func contains(_ value: MDB_val) -> Bool {
        let start = UInt(bitPattern: value.mv_data)
        let (last, overflow) = start.addingReportingOverflow(UInt(value.mv_size))
        return !(start < base.load(ordering: .relaxed) || overflow || last > end.load(ordering: .relaxed))
    }

    /// The map's address, the address past the file's known end, and the page size.
    @inlinable
    var bounds: (base: UInt, end: UInt, pageSize: UInt) {
        (base.load(ordering: .relaxed), end.load(ordering: .relaxed), UInt(pageSize))
    }

    /// Throws when `value` does not lie inside the file (after checking the file's size again:
    /// another process may have made it longer).
    @inlinable @inline(__always)
    func check(_ value: MDB_val) throws(LMDBError) {
        let start = UInt(bitPattern: value.mv_data)
        let (last, overflow) = start.addingReportingOverflow(UInt(value.mv_size))
        if start < base.load(ordering: .relaxed) || overflow || last > end.load(ordering: .relaxed) {
            try recheck(start: start, count: value.mv_size)
        }
    }

    /// Reads the file's size again (at the start of a write transaction: the pages before it
    /// are the file's own).
    package func refreshEnd() {
        let b = base.load(ordering: .relaxed)
        var st = stat()
        if b != 0, fstat(fd, &st) == 0 { end.store(b &+ UInt(st.st_size), ordering: .relaxed) }
    }

    @usableFromInline @inline(never)
    package func recheck(start: UInt, count: Int) throws(LMDBError) {
        if count == 0 { return }
        var b = base.load(ordering: .relaxed)
        if b == 0 {
            guard attempts.load(ordering: .relaxed) < 8 else { return }  // cannot check
            b = UInt(tessera_lmdb_map_base(UnsafeRawPointer(bitPattern: start), pageSize))
            if b == 0 { attempts.add(1, ordering: .relaxed); return }
            base.store(b, ordering: .relaxed)
        }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return }
        let fileEnd = b &+ UInt(st.st_size)
        end.store(fileEnd, ordering: .relaxed)
        let (last, overflow) = start.addingReportingOverflow(UInt(count))
        if start < b || overflow || last > fileEnd { throw LMDBError.outsideFile }
    }
}

/// How `Transaction.appendRecords` cuts records too large for a leaf node, or for the rest of
/// the leaf page they are appended to (the records' format is the caller's; see
/// `tessera_record_packing` in CLMDBGuard.h).
package struct RecordPacking: Sendable {
    /// LMDB's largest leaf node for the page size.
    package var largestNode: Int
    /// A smaller limit on a record's head (tests), or nil.
    package var recordLimit: Int?
    /// No head is shorter.
    package var smallestHead: Int
    /// A record is cut where a page ends only if its head keeps at least this many bytes.
    package var leastPackedHead: Int
    /// The data file's page size.
    package var pageSize: Int
    /// The flag set in a head's first byte (and, when already set, marking a record that is
    /// a head already: appended whole).
    package var continuedFlag: UInt8

    /// A packing with these parameters.
    package init(largestNode: Int, recordLimit: Int?, smallestHead: Int, leastPackedHead: Int, pageSize: Int,
                 continuedFlag: UInt8) {
        self.largestNode = largestNode
        self.recordLimit = recordLimit
        self.smallestHead = smallestHead
        self.leastPackedHead = leastPackedHead
        self.pageSize = pageSize
        self.continuedFlag = continuedFlag
    }

    /// The bytes of a record of `size` bytes under a key of `keyCount` bytes that a put among
    /// the keys (not an append) stores under the key: `size` when it fits a leaf node, else
    /// the largest node (`tessera_record_head`, which appends use too).
    package func headSize(recordSize size: Int, keyCount: Int) -> Int {
        var raw = raw
        return tessera_record_head(&raw, keyCount, size, -1)
    }

    var raw: tessera_record_packing {
        tessera_record_packing(largest_node: largestNode, record_limit: recordLimit ?? Int.max, smallest_head: smallestHead,
                               least_packed_head: leastPackedHead, page_size: pageSize, continued: continuedFlag)
    }
}

/// Puts and deletes for `Transaction.write(_:to:)`, in ascending key order: keys and values
/// by reference (their bytes must stay valid and unchanged until the writes are made).
package struct OrderedWrites {
    // @usableFromInline: `put` and `isFull` run once per held index entry written out, from
    // another module (as `AppendBatch`'s).
    @usableFromInline var keys: [MDB_val] = []
    @usableFromInline var values: [MDB_val] = []
    /// 1 for a delete.
    @usableFromInline var deletes: [UInt8] = []
    /// Bytes of the puts' keys and values.
    @usableFromInline package internal(set) var byteCount = 0

    /// No writes yet.
    package init() {}

    /// The number of writes.
    @inlinable package var count: Int { keys.count }

    /// True once 4,096 writes are queued: the caller makes them then (`Transaction.write`).
    @inlinable package var isFull: Bool { keys.count >= 4096 }

    /// Queues a put of `value` under `key`.
    @inlinable @inline(__always)
    package mutating func put(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        byteCount &+= key.count &+ value.count
        keys.append(MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress)))
        values.append(MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress)))
        deletes.append(0)
    }

    /// Queues a delete of `key`.
    @inlinable @inline(__always)
    package mutating func delete(key: UnsafeRawBufferPointer) {
        keys.append(MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress)))
        values.append(MDB_val(mv_size: 0, mv_data: nil))
        deletes.append(1)
    }

    /// Forgets every write, keeping the capacity.
    package mutating func removeAll() {
        byteCount = 0
        keys.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        deletes.removeAll(keepingCapacity: true)
    }
}

/// Entries to append to a table in ascending key order (`Transaction.append(_:to:)`): keys by
/// reference (their bytes must stay valid and unchanged until the batch is written), values
/// copied into the batch or, with `add(key:referencing:)`, by reference too. A batch may
/// instead copy every key (`add(copyingKey:value:)`): LMDB then reads the keys one after
/// another from one buffer (a batch filled on another thread from keys scattered over memory).
package struct AppendBatch {
    // @usableFromInline: `add` and `isFull` run once per entry of a back-fill or write-out in
    // another module, and a call per entry showed (an index of 100,000 entries).
    @usableFromInline var keys: [MDB_val] = []
    /// Per entry: the value by reference, or its size with no address when it was copied.
    @usableFromInline var values: [MDB_val] = []
    /// Per entry: where its copied value starts in `valueBytes`, or -1 (by reference).
    @usableFromInline var copiedAt: [Int] = []
    @usableFromInline var valueBytes: [UInt8] = []
    /// The keys' bytes when they are copied: each key's `mv_data` is then its offset in
    /// `keyBytes` plus one, as an address, until the batch is written.
    @usableFromInline var keyBytes: [UInt8] = []
    @usableFromInline var keysCopied = false
    /// Entries after which `isFull` says to write the batch.
    package let capacity: Int
    /// Bytes of the entries' keys and values.
    @usableFromInline package internal(set) var byteCount = 0

    /// An empty batch that reports itself full at `capacity` entries.
    package init(capacity: Int = 4096) {
        self.capacity = capacity
        keys.reserveCapacity(capacity)
        values.reserveCapacity(capacity)
        copiedAt.reserveCapacity(capacity)
    }

    /// The number of entries.
    @inlinable package var count: Int { keys.count }

    /// True once the batch holds `capacity` entries.
    @inlinable package var isFull: Bool { keys.count >= capacity }

    /// Adds an entry: `key` must stay valid until the batch is written; `value` is copied.
    @inlinable @inline(__always)
    package mutating func add(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        precondition(!keysCopied, "AppendBatch: keys by reference and copied keys in one batch")
        byteCount &+= key.count &+ value.count
        keys.append(MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress)))
        values.append(MDB_val(mv_size: value.count, mv_data: nil))
        copiedAt.append(valueBytes.count)
        if value.count > 0 { valueBytes.append(contentsOf: value) }
    }

    /// Adds an entry whose key and value are both copied. A batch copies every key or none
    /// (mixing them stops the process: the addresses would be read as offsets).
    @inlinable @inline(__always)
    package mutating func add(copyingKey key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        precondition(keysCopied || keys.isEmpty, "AppendBatch: keys by reference and copied keys in one batch")
        keysCopied = true
        byteCount &+= key.count &+ value.count
        keys.append(MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(bitPattern: keyBytes.count &+ 1)))
        keyBytes.append(contentsOf: key)
        values.append(MDB_val(mv_size: value.count, mv_data: nil))
        copiedAt.append(valueBytes.count)
        if value.count > 0 { valueBytes.append(contentsOf: value) }
    }

    /// Adds an entry whose key and value both stay valid until the batch is written.
    @inlinable @inline(__always)
    package mutating func add(key: UnsafeRawBufferPointer, referencing value: UnsafeRawBufferPointer) {
        precondition(!keysCopied, "AppendBatch: keys by reference and copied keys in one batch")
        byteCount &+= key.count &+ value.count
        keys.append(MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress)))
        values.append(MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress)))
        copiedAt.append(-1)
    }

    /// Empties the batch, keeping its capacity.
    package mutating func removeAll() {
        byteCount = 0
        keys.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        copiedAt.removeAll(keepingCapacity: true)
        valueBytes.removeAll(keepingCapacity: true)
        keyBytes.removeAll(keepingCapacity: true)
        keysCopied = false
    }

    /// Entry `i` (valid until the batch changes).
    package func entry(_ i: Int) -> (UnsafeRawBufferPointer, UnsafeRawBufferPointer) {
        let key = keysCopied
            ? keyBytes.withUnsafeBytes { b in
                let at = Int(bitPattern: keys[i].mv_data) - 1
                return UnsafeRawBufferPointer(rebasing: b[at..<(at + keys[i].mv_size)])
            }
            : UnsafeRawBufferPointer(start: keys[i].mv_data, count: keys[i].mv_size)
        let at = copiedAt[i], n = values[i].mv_size
        if at < 0 { return (key, UnsafeRawBufferPointer(start: values[i].mv_data, count: n)) }
        return (key, valueBytes.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[at..<(at + n)]) })
    }

    /// Calls `body` with the keys and values of entries `first...` as MDB_val arrays.
    fileprivate func withEntries(from first: Int, _ body: (UnsafeRawPointer, UnsafeRawPointer, Int) -> Int32) -> Int32 {
        valueBytes.withUnsafeBytes { bytes in
            let base = bytes.baseAddress.map { UnsafeMutableRawPointer(mutating: $0) }
            let resolved = (first..<keys.count).map { i -> MDB_val in
                let at = copiedAt[i]
                if at < 0 { return values[i] }
                return MDB_val(mv_size: values[i].mv_size, mv_data: values[i].mv_size == 0 ? nil : base! + at)
            }
            guard keysCopied else {
                return keys.withUnsafeBufferPointer { k in
                    resolved.withUnsafeBufferPointer { v in
                        body(UnsafeRawPointer(k.baseAddress! + first), UnsafeRawPointer(v.baseAddress!), keys.count - first)
                    }
                }
            }
            return keyBytes.withUnsafeBytes { kb in
                let kbase = UnsafeMutableRawPointer(mutating: kb.baseAddress)
                let resolvedKeys = (first..<keys.count).map { i -> MDB_val in
                    MDB_val(mv_size: keys[i].mv_size, mv_data: kbase.map { $0 + (Int(bitPattern: keys[i].mv_data) - 1) })
                }
                return resolvedKeys.withUnsafeBufferPointer { k in
                    resolved.withUnsafeBufferPointer { v in
                        body(UnsafeRawPointer(k.baseAddress!), UnsafeRawPointer(v.baseAddress!), keys.count - first)
                    }
                }
            }
        }
    }
}
