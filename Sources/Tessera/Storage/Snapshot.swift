import LMDB

// The storage layer's transaction objects. Everything above Storage/ (expressions, indexes,
// planner, executor, database API) reads and writes through these types and never names an
// LMDB type: `Tests/TesseraTests/ArchitectureTests.swift` checks that only Storage/ imports
// LMDB. A snapshot or write transaction is created by the database layer and handed down
// explicitly to whatever needs it.

/// A table of the store: a collection's documents or by-sequence table, an index's entries.
/// An opaque handle, valid for the life of the database.
typealias StorageTable = LMDB.Table

/// Flags for `WriteTransaction.put`.
typealias StoragePutFlags = LMDB.PutFlags

/// Entries to append in key order (`WriteTransaction.append(_:to:)`).
typealias StorageAppendBatch = LMDB.AppendBatch

/// Keys of one table looked up together (`Snapshot.get(_:from:)`).
typealias StorageGetBatch = LMDB.GetBatch

/// A consistent read view of the whole database: every read inside it sees the database as
/// it was when the snapshot began (an LMDB read transaction), or as the enclosing write
/// transaction has left it so far.
///
/// Bytes a snapshot returns point into the memory map: they are valid until the snapshot
/// ends or, in a write transaction, until the next write. Copy what must outlive them.
class Snapshot {
    /// The LMDB transaction (for Storage/ only).
    let lmdb: Transaction

    init(_ txn: Transaction) { lmdb = txn }

    /// LMDB's ID of the transaction this snapshot reads (the last commit it sees).
    final var transactionID: UInt64 { lmdb.id }

    /// True for a read-only snapshot, false for a write transaction.
    var isReadOnly: Bool { lmdb.readOnly }

    /// Puts a write transaction holds back (`WriteTransaction.deferPuts(in:)`); nil in a
    /// read snapshot and until a write transaction defers a table.
    @exclusivity(unchecked) final fileprivate(set) var deferred: [DeferredPuts]?

    /// The value stored under `key`, or nil.
    @inline(__always)
    final func get(_ table: StorageTable, key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        if deferred != nil, let held = heldValue(table, key) { return held }
        return try lmdb.get(table, key: key)
    }

    /// The value stored under `key`, or nil.
    @inline(__always)
    final func get(_ table: StorageTable, key: [UInt8]) throws -> UnsafeRawBufferPointer? {
        try key.withUnsafeBytes { try get(table, key: $0) }
    }

    /// The value stored under the UTF-8 bytes of `key`, or nil.
    @inline(__always)
    final func get(_ table: StorageTable, key: String) throws -> UnsafeRawBufferPointer? {
        var key = key
        return try key.withUTF8 { try get(table, key: UnsafeRawBufferPointer($0)) }
    }

    /// Looks up every key of `batch` in `table`; `batch.value(at:)` then gives each value, or
    /// nil. In a read snapshot the keys walk the table together (`GetBatch`); values are valid
    /// as those of `get`.
    final func get(_ batch: StorageGetBatch, from table: StorageTable) throws {
        if deferred != nil, held(table) != nil {
            for i in 0..<batch.count { batch.setValue(try get(table, key: batch.key(at: i)), at: i) }
            return
        }
        try lmdb.get(batch, from: table)
    }

    /// The held-back puts of `table`, if it has any.
    @inline(__always)
    final func held(_ table: StorageTable) -> DeferredPuts? {
        guard let d = deferred else { return nil }
        for p in d where p.table.dbi == table.dbi { return p }
        return nil
    }

    /// What a held-back put or delete says about `key`: `.some(nil)` when it is deleted,
    /// nil when nothing is held for it.
    @inline(never)
    private final func heldValue(_ table: StorageTable, _ key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer?? {
        held(table)?.lookup(key)
    }

    /// Writes out the held-back puts of `table` before something walks it in key order.
    @inline(__always)
    final func writeOutHeld(_ table: StorageTable) throws {
        if deferred != nil, let d = held(table), !d.isEmpty { try writeOut(d) }
    }

    /// Writes out the held-back puts of `d` (only a write transaction holds any).
    func writeOut(_ d: DeferredPuts) throws {
        try d.writeOut(lmdb) { _, _ in preconditionFailure("a read snapshot holds no puts back") }
    }

    /// A 64-bit counter stored little-endian under `name` in `table` (0 when absent): the
    /// per-collection last sequence (`seq:<scope>.<collection>`) and live-document count
    /// (`count:…`) in the `meta` table.
    final func counter(_ name: String, in table: StorageTable) throws -> UInt64 {
        guard let raw = try lmdb.get(table, key: name), raw.count == 8 else { return 0 }
        return UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self))
    }

    /// The number of entries of a table (read from its root page: O(1)).
    final func count(_ table: StorageTable) throws -> Int {
        try writeOutHeld(table)
        return try lmdb.count(table)
    }

    /// Bytes used by a table's pages.
    final func byteSize(_ table: StorageTable) throws -> Int {
        try writeOutHeld(table)
        return try lmdb.byteSize(table)
    }

    /// The names of every table.
    final func tableNames() throws -> [String] { try lmdb.tableNames() }

    /// The table `name` of the catalogue: in a write transaction opened and created if needed;
    /// in a read snapshot opened if it exists, else `MissingTableError`. Only in a write
    /// transaction or a snapshot of `Store.readOpeningTables` (LMDB's rule for opening tables).
    func table(named name: String) throws -> StorageTable {
        guard let t = try lmdb.openTable(name, create: false) else { throw MissingTableError(name: name) }
        return t
    }

    /// A cursor over `table`, closed by `close()` (or when the snapshot ends).
    @inline(__always)
    final func cursor(_ table: StorageTable) throws -> KeyCursor {
        try writeOutHeld(table)
        return KeyCursor(try lmdb.openCursor(table))
    }

    /// Runs `body` with a cursor over `table`, closed afterwards.
    @inline(__always)
    final func withCursor<R>(_ table: StorageTable, _ body: (KeyCursor) throws -> R) throws -> R {
        try writeOutHeld(table)
        return try lmdb.withCursor(table) { try body(KeyCursor($0)) }
    }
}

/// A write transaction: one at a time per database (LMDB's rule, across processes too).
/// Everything written through it commits together or not at all.
///
/// Index kinds may attach work they queue during the transaction (`pendingWork(for:make:)`,
/// e.g. full-text postings merged once per batch); it is flushed before anything reads inside
/// the transaction (`flushPendingWork()`) and before the commit.
final class WriteTransaction: Snapshot {
    private var pending: [ObjectIdentifier: any PendingIndexWork] = [:]
    /// Tables of recent entries this transaction moved into their main tables
    /// (`RecentEntries.swift`): its later new keys go straight to the main table.
    var mergedRecent: [UInt32] = []
    private var pendingOrder: [ObjectIdentifier] = []
    /// Where held-back puts beyond their memory budget go (the database directory; nil: they
    /// are written out instead).
    let spillDirectory: String?
    /// Index entries made before the transaction for the body being saved (full-text entries
    /// tokenized on another thread), set by the save around its index maintenance and nil
    /// otherwise; an index kind takes them when they are its own entry type (an array, so
    /// that setting them boxes nothing) and made for its definition.
    var preparedIndexEntries: (any Sendable)?

    /// The store this transaction writes (for read snapshots begun during it).
    private unowned let store: Store

    init(_ txn: Transaction, spillDirectory: String?, store: Store) {
        self.spillDirectory = spillDirectory
        self.store = store
        super.init(txn)
    }

    /// True when this transaction has written to `table` so far (puts held back included
    /// once they are written out: `writeOutHeld(_:)` first). A read snapshot begun now sees
    /// every table this transaction has not changed exactly as it does.
    func hasChanged(_ table: StorageTable) -> Bool { lmdb.hasChanged(table) }

    /// Keys that cut `table` into at most `pieces` runs of about the same number of pages,
    /// from the top of its committed tree; nil when it cannot be read so (`LMDB.Transaction.cutKeys`).
    func cutKeys(_ table: StorageTable, pieces: Int) -> [[UInt8]]? { lmdb.cutKeys(table, pieces: pieces) }

    /// Begins a read snapshot of the last commit (what this transaction started from), to be
    /// read on another thread; end it with `endReadSnapshot(_:)` on this thread.
    func beginReadSnapshot() throws -> Snapshot { try store.beginSnapshot() }

    /// Ends a snapshot begun by `beginReadSnapshot()`.
    func endReadSnapshot(_ snapshot: Snapshot) { store.endSnapshot(snapshot) }

    /// Stores `value` under `key`; with `.noOverwrite`, returns false when the key exists.
    @inline(__always) @discardableResult
    func put(_ table: StorageTable, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
             flags: StoragePutFlags = []) throws -> Bool {
        if deferred != nil, let d = try heldForPut(table, flags) {
            d.put(key: key, value: value)
            try writeOutIfFull(d)
            return true
        }
        return try lmdb.put(table, key: key, value: value, flags: flags)
    }

    /// Writes the entries of `batch`, in ascending key order, as puts with `.append` would
    /// (through one cursor, the costs of a call paid once per batch), and empties it.
    func append(_ batch: inout StorageAppendBatch, to table: StorageTable) throws {
        if deferred != nil, held(table) != nil {
            for i in 0..<batch.count {
                let (key, value) = batch.entry(i)
                try put(table, key: key, value: value, flags: .append)
            }
            batch.removeAll()
            return
        }
        try lmdb.append(&batch, to: table)
    }

    /// Stores `value` under `key`.
    @inline(__always) @discardableResult
    func put(_ table: StorageTable, key: [UInt8], value: [UInt8], flags: StoragePutFlags = []) throws -> Bool {
        try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try put(table, key: k, value: v, flags: flags) } }
    }

    /// Reserves `size` bytes under `key` and lets `fill` write them in place.
    @inline(__always)
    func putReserved(_ table: StorageTable, key: UnsafeRawBufferPointer, size: Int, flags: StoragePutFlags = [],
                     _ fill: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
        if deferred != nil, let d = try heldForPut(table, flags) {
            try d.put(key: key, size: size, fill)
            try writeOutIfFull(d)
            return
        }
        try lmdb.putReserved(table, key: key, size: size, flags: flags, fill: fill)
    }

    /// Deletes `key`; false if it was absent.
    @inline(__always) @discardableResult
    func delete(_ table: StorageTable, key: UnsafeRawBufferPointer) throws -> Bool {
        if deferred != nil, let d = held(table) {
            let existed: Bool
            if let h = d.lookup(key) { existed = h != nil } else { existed = try lmdb.get(table, key: key) != nil }
            if existed { d.delete(key: key) }
            return existed
        }
        return try lmdb.delete(table, key: key)
    }

    /// Deletes `key` if it is there, without finding out whether it was: while `table` holds
    /// its writes back, the delete is held with no lookup (the write-out passes over a key
    /// that is absent, and a read in the meantime sees it deleted either way).
    @inline(__always)
    func deleteIfPresent(_ table: StorageTable, key: UnsafeRawBufferPointer) throws {
        if deferred != nil, let d = held(table) {
            d.delete(key: key)
            return
        }
        _ = try lmdb.delete(table, key: key)
    }

    /// Deletes `key`; false if it was absent.
    @inline(__always) @discardableResult
    func delete(_ table: StorageTable, key: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { try delete(table, key: $0) }
    }

    /// Deletes every entry whose key starts with `prefix`, in one walk of the table (one
    /// descent, then each entry removed where the cursor stands), and returns how many.
    @discardableResult
    func deleteAll(_ table: StorageTable, prefix: [UInt8]) throws -> Int {
        try writeOutHeld(table)
        return try lmdb.withCursor(table) { c in
            var deleted = 0
            var ok = try c.seek(prefix)
            while ok && LMDB.hasPrefix(c.key, prefix) {
                try c.deleteCurrent()
                deleted += 1
                // After a delete the cursor stands on the entry that followed: `next` returns
                // it (LMDB's rule for a cursor whose entry was deleted).
                ok = try c.next()
            }
            return deleted
        }
    }

    /// Empties a table, or deletes it with `delete`.
    func drop(_ table: StorageTable, delete: Bool) throws {
        if let d = held(table) {
            d.discard()
            if delete { deferred!.removeAll { $0 === d } }
        }
        try lmdb.drop(table, delete: delete)
    }

    // MARK: - Puts held back and written in key order (DeferredPuts)

    /// From now until the commit, holds puts and deletes of `table` back and writes them in
    /// key order (before anything walks the table, at the commit, or when too many are held).
    /// Held bytes beyond `memoryBytes` go to a temporary file in the database directory.
    /// A document table's puts (`records`) are records, held whole and cut as they are
    /// written out (`RecordTablePacking`).
    func deferPuts(in table: StorageTable, maxHeldBytes: Int = DeferredPuts.defaultMaxHeldBytes,
                   memoryBytes: Int = DeferredPuts.defaultMemoryBytes, records: RecordTablePacking? = nil) {
        if held(table) != nil { return }
        deferred = (deferred ?? []) + [DeferredPuts(table: table, maxHeldBytes: maxHeldBytes, memoryBytes: memoryBytes,
                                                    spillDirectory: spillDirectory, records: records)]
    }

    /// Moves the entries of `table` after `key` into its held-back puts (entries this
    /// transaction appended before it began holding puts back), so that the write-out places
    /// them among the held ones.
    func takeBack(_ table: StorageTable, after key: [UInt8]) throws {
        guard let d = held(table) else { return }
        var taken: [[UInt8]] = []
        try lmdb.withCursor(table) { c in
            var ok = key.isEmpty ? try c.first() : try c.seek(key)
            if ok && !key.isEmpty && LMDB.compareKeys(c.key, key) == 0 { ok = try c.next() }
            while ok {
                d.put(key: c.key, value: c.value)
                taken.append(Array(c.key))
                ok = try c.next()
            }
        }
        for k in taken { _ = try lmdb.delete(table, key: k) }
    }

    /// The held-back puts of `table` when a put with `flags` can join them; a put with other
    /// flags than `.append` (which the write-out decides itself) writes them out and goes
    /// straight to the table.
    @inline(__always)
    private func heldForPut(_ table: StorageTable, _ flags: StoragePutFlags) throws -> DeferredPuts? {
        guard let d = held(table) else { return nil }
        if flags.isEmpty || flags == .append { return d }
        if !d.isEmpty { try writeOut(d) }
        return nil
    }

    @inline(__always)
    private func writeOutIfFull(_ d: DeferredPuts) throws {
        if d.isFull { try writeOut(d) }
    }

    /// Writes out every held-back put (before the commit).
    func writeOutDeferredPuts() throws {
        guard let d = deferred else { return }
        // A document table's write-out adds the second pieces of the records it cuts to its
        // tail table's held puts: until every table is empty.
        var written = true
        while written {
            written = false
            for p in d where !p.isEmpty {
                try writeOut(p)
                written = true
            }
        }
    }

    /// Writes out the held puts of `d`; a document table's second pieces go to its tail table
    /// (held there too while that table holds its puts back).
    override func writeOut(_ d: DeferredPuts) throws {
        guard let records = d.records else { return try d.writeOut(lmdb) { _, _ in } }
        try d.writeOut(lmdb) { key, tail in try self.put(records.tails, key: key, value: tail, flags: .append) }
    }

    /// Opens (creating) a table.
    override func table(named name: String) throws -> StorageTable { try createTable(name) }

    /// Opens (creating) a table. LMDB's table limit becomes `DatabaseError.limitReached`.
    func createTable(_ name: String) throws -> StorageTable {
        do {
            return try lmdb.openTable(name, create: true)!
        } catch LMDBError.dbsFull {
            let limit = Environment.Options().maxTables
            throw DatabaseError(.limitReached, "cannot create table '\(name)': a database holds at most \(limit) tables "
                + "(4 per collection, 2 per value or array index, 3 per full-text index: about \((limit - 1) / 4) collections)")
        }
    }

    // MARK: - Work queued by index kinds

    /// The queued work of `owner` in this transaction, made by `make` on first use.
    func pendingWork<W: PendingIndexWork>(for owner: AnyObject, make: () throws -> W) rethrows -> W {
        let id = ObjectIdentifier(owner)
        if let w = pending[id] as? W { return w }
        let w = try make()
        pending[id] = w
        pendingOrder.append(id)
        return w
    }

    /// Forgets the queued work of `owner` (an index being dropped).
    func discardPendingWork(for owner: AnyObject) {
        let id = ObjectIdentifier(owner)
        pending[id] = nil
        pendingOrder.removeAll { $0 == id }
    }

    /// Applies all queued work; called before anything reads inside the transaction and
    /// before commit.
    func flushPendingWork() throws {
        if pending.isEmpty { return }
        let order = pendingOrder
        let work = pending
        pending = [:]
        pendingOrder = []
        for id in order { try work[id]?.flush(self) }
    }
}

/// A table the catalogue names is not in the file (read snapshots do not create tables).
struct MissingTableError: Error, CustomStringConvertible {
    var name: String
    var description: String { "table '\(name)' named in the catalogue is missing" }
}

/// Work an index queues in a write transaction and applies in one go (see `WriteTransaction`).
protocol PendingIndexWork: AnyObject {
    /// Writes the queued changes.
    func flush(_ txn: WriteTransaction) throws
}

/// A position in a table, moving in key order. Keys and values point into the memory map
/// (valid until the snapshot ends or, in a write transaction, the next write).
/// A `KeyCursor` that does not own its LMDB cursor (`KeyCursor.borrowed`): valid while the
/// `KeyCursor` it came from is open.
struct BorrowedCursor {
    fileprivate let ref: Unmanaged<Cursor>

    /// The current key.
    @inline(__always) var key: UnsafeRawBufferPointer { ref._withUnsafeGuaranteedRef { $0.key } }
    /// The current value.
    @inline(__always) var value: UnsafeRawBufferPointer { ref._withUnsafeGuaranteedRef { $0.value } }
    /// Starts loading the current value's next cache lines (a full scan reads a field or two
    /// beyond the record's header: the misses then overlap instead of following each other).
    @inline(__always) func prefetchValue() { ref._withUnsafeGuaranteedRef { $0.prefetchValue() } }
    /// On the first entry read of a leaf page, starts loading the page's other entries
    /// (`Cursor.prefetchPage`).
    @inline(__always) func prefetchPage() { ref._withUnsafeGuaranteedRef { $0.prefetchPage() } }
    /// Moves to the first entry; false if the table is empty.
    @inline(__always) func first() throws -> Bool { try ref._withUnsafeGuaranteedRef { try $0.first() } }
    /// Moves to the last entry; false if the table is empty.
    @inline(__always) func last() throws -> Bool { try ref._withUnsafeGuaranteedRef { try $0.last() } }
    /// Moves to the next entry; false at the end.
    @inline(__always) func next() throws -> Bool { try ref._withUnsafeGuaranteedRef { try $0.next() } }
    /// Moves to the previous entry; false at the start.
    @inline(__always) func prev() throws -> Bool { try ref._withUnsafeGuaranteedRef { try $0.prev() } }
    /// Moves to the first entry whose key is ≥ `key`.
    @inline(__always) func seek(_ key: [UInt8]) throws -> Bool { try ref._withUnsafeGuaranteedRef { try $0.seek(key) } }
    /// Moves to the entry with exactly `key`; false if absent.
    @inline(__always) func seekExact(_ key: UnsafeRawBufferPointer) throws -> Bool { try ref._withUnsafeGuaranteedRef { try $0.seekExact(key) } }
    /// Moves to the last entry whose key is ≤ `key`; false if there is none.
    func seekLast(atOrBefore key: [UInt8]) throws -> Bool { try ref._withUnsafeGuaranteedRef { try $0.seekLast(atOrBefore: key) } }
}

struct KeyCursor {
    private let cursor: Cursor

    init(_ cursor: Cursor) { self.cursor = cursor }

    /// This cursor without a reference count, for a row source's per-row moves: a `KeyCursor`
    /// copied out of a stored property is retained and released on every call. The row source
    /// keeps the `KeyCursor` itself, so the cursor outlives every use of the borrowed one.
    var borrowed: BorrowedCursor { BorrowedCursor(ref: Unmanaged.passUnretained(cursor)) }

    /// The current key.
    @inline(__always) var key: UnsafeRawBufferPointer { cursor.key }
    /// The current value.
    @inline(__always) var value: UnsafeRawBufferPointer { cursor.value }

    /// Moves to the first entry; false if the table is empty.
    @inline(__always) func first() throws -> Bool { try cursor.first() }
    /// Moves to the last entry; false if the table is empty.
    @inline(__always) func last() throws -> Bool { try cursor.last() }
    /// Moves to the next entry; false at the end.
    @inline(__always) func next() throws -> Bool { try cursor.next() }
    /// Moves to the previous entry; false at the start.
    @inline(__always) func prev() throws -> Bool { try cursor.prev() }
    /// Moves to the first entry whose key is ≥ `key`.
    @inline(__always) func seek(_ key: UnsafeRawBufferPointer) throws -> Bool { try cursor.seek(key) }
    /// Moves to the first entry whose key is ≥ `key`.
    @inline(__always) func seek(_ key: [UInt8]) throws -> Bool { try cursor.seek(key) }
    /// Moves to the entry with exactly `key`; false if absent.
    @inline(__always) func seekExact(_ key: UnsafeRawBufferPointer) throws -> Bool { try cursor.seekExact(key) }
    /// Moves to the last entry whose key is ≤ `key`; false if there is none.
    func seekLast(atOrBefore key: [UInt8]) throws -> Bool { try cursor.seekLast(atOrBefore: key) }
    /// Deletes the current entry (write transactions only).
    func deleteCurrent() throws { try cursor.deleteCurrent() }
    /// Calls `body` for each entry with `lower <= key < upper` (nil bounds are open); `body`
    /// returns false to stop.
    @inline(__always)
    func forEach(from lower: [UInt8]? = nil, to upper: [UInt8]? = nil,
                 _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        try cursor.forEach(from: lower, to: upper, body)
    }
    /// Calls `body` for each entry whose key starts with `prefix`.
    func forEach(prefix: [UInt8], _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        try cursor.forEach(prefix: prefix, body)
    }
    /// Closes the cursor.
    func close() { cursor.closeCursor() }
}

/// Asks the processor to start loading the cache line holding `p` (a hint: never faults).
@inline(__always)
func prefetchMemory(_ p: UnsafeRawPointer) { LMDB.prefetchMemory(p) }

/// memcmp order of two byte strings, shorter first on a common prefix (the store's key order).
@inline(__always)
func compareStoredKeys(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Int { LMDB.compareKeys(a, b) }

/// memcmp order of two byte strings, shorter first on a common prefix (the store's key order).
@inline(__always)
func compareStoredKeys(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int { LMDB.compareKeys(a, b) }

/// True if `key` starts with `prefix`.
@inline(__always)
func keyHasPrefix(_ key: UnsafeRawBufferPointer, _ prefix: [UInt8]) -> Bool { LMDB.hasPrefix(key, prefix) }
