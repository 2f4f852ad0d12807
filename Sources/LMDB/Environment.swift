// The LMDB module is an engine internal: its API is `package` (Tessera and its tests only),
// never a product. Its declarations are also `@usableFromInline` so that the `@inlinable`
// hot paths (cursor moves, get, put, `check`) still inline into Tessera across the module
// boundary: `@inlinable package` code may only use public or `@usableFromInline` symbols.

import CLMDB
import CLMDBGuard

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An LMDB environment: one memory-mapped database file holding any number of named tables.
///
/// One writer at a time, any number of concurrent readers. Read transactions are opened
/// with `MDB_NOTLS`, so they are not tied to a thread, and are recycled through a small pool.
///
/// The map grows by itself: when a write fails with `MDB_MAP_FULL`, the transaction is
/// aborted, the map is enlarged while no transaction of this process is active, and the
/// write is run again. Callers never see `MDB_MAP_FULL` unless `maxMapSize` is reached.
@usableFromInline package final class Environment: @unchecked Sendable {
    // @unchecked Sendable: `env` is thread-safe per lmdb.h when used with MDB_NOTLS;
    // `mapSize` changes only under the gate held exclusively (and is read under its mutex);
    // the reader pool is protected by `poolLock`.

    /// Options for opening an environment.
    @usableFromInline package struct Options: Sendable {
        /// Maximum number of named tables.
        @usableFromInline package var maxTables: Int = 4096
        /// The initial map size in bytes.
        @usableFromInline package var initialMapSize: Int = 1 << 30
        /// The largest map the environment may grow to (`nil`: no limit but the address space).
        @usableFromInline package var maxMapSize: Int? = nil
        /// POSIX file mode for the data and lock files.
        @usableFromInline package var fileMode: mode_t = 0o600
        /// Maximum concurrent read transactions.
        @usableFromInline package var maxReaders: Int = 256
        /// Open without a subdirectory (`path` names the data file itself).
        @usableFromInline package var noSubdirectory: Bool = false
        /// Skip fsync on commit (faster, loses the last transactions on power failure; never on a crash).
        @usableFromInline package var noSync: Bool = false
        /// Open read-only (`MDB_RDONLY`): no write transaction can begin, the data file is
        /// opened without write access, and nothing is created.
        @usableFromInline package var readOnly: Bool = false
        /// Do not use the lock file (`MDB_NOLOCK`): for a read-only environment whose lock file
        /// cannot be opened for writing. Readers are then not registered, so a writer in another
        /// process could reuse pages they read: only for files nobody writes.
        @usableFromInline package var noLock: Bool = false
        /// Creates default options.
        @usableFromInline package init() {}
    }

    /// The LMDB environment. Replaced only by a compaction (`compact()`), under the gate held
    /// exclusively: read it only while holding the gate (inside a transaction or `withEnvironment`).
    @usableFromInline var env: OpaquePointer
    /// The path the environment was opened at.
    @usableFromInline package let path: String
    let options: Options
    var mapSize: Int
    // Transactions hold it shared while they live; remapping holds it exclusively.
    let gate = HoldGate()
    /// The part of the map the data file covers (read-only transactions check what they return).
    let window: MapWindow
    /// The thread running the write transaction (0: none), to catch re-entrant writes.
    private let writerThread = MutexLock()
    private var writer: UInt = 0
    private let poolLock = MutexLock()
    /// Read transactions reset after use (`mdb_txn_reset`: no snapshot, reader slot kept),
    /// renewed by the next reader: the LMDB handle and its `Transaction` object are reused.
    /// Read and written under `poolLock` only.
    @exclusivity(unchecked) private var readerPool: [Transaction] = []
    /// Serialises the transactions that open tables (lmdb.h: `mdb_dbi_open` must not run in two
    /// transactions of a process at once, and a transaction that used it must end before another
    /// uses it). The write transaction holds it from its begin to its end; a read transaction
    /// that opens tables (`readOpeningTables`) holds it too.
    private let tableOpenLock = MutexLock()
    /// Counts the read transactions that registered tables (under `tableOpenLock`): a write
    /// transaction that began while one committed starts again, since it copied the table list
    /// of the environment when it began.
    private var tableRegistrations = 0
    var closed = false
    /// Set when a compaction swapped the file but could not reopen it: every later
    /// transaction fails (written under the gate held exclusively, read under a hold, which
    /// exclude each other: no dynamic exclusivity check on the read every transaction makes).
    @exclusivity(unchecked) var unusable = false
    /// Serialises compactions and `close()`.
    let compactionLock = MutexLock()
    /// A descriptor of the lock file, opened by the first compaction to probe and take its
    /// POSIX lock, and kept open until `close()`: closing any descriptor of the lock file
    /// would drop the locks LMDB holds on it for this process.
    var lockFileProbe: Int32 = -1

    /// Opens (creating if needed) the environment at `path`, a directory unless `noSubdirectory`.
    ///
    /// - Throws: `LMDBError` when the file cannot be opened, is not an LMDB file, or has another version.
    @usableFromInline package init(path: String, options: Options = Options()) throws {
        let initialSize = min(options.initialMapSize, options.maxMapSize ?? Int.max)
        let (raw, size) = try Environment.openFresh(path: path, options: options, mapSize: initialSize)
        self.env = raw
        self.path = path
        self.options = options
        self.mapSize = size
        self.window = MapWindow()
        do {
            try attachWindow()
            OpenEnvironments.add(lockFile: lockFilePath)
        } catch {
            // Every stored property is set, so deinit runs when this initializer throws:
            // mark the environment closed so that it does not close `raw` a second time.
            closed = true
            mdb_env_close(raw)
            throw error
        }
    }

    /// Called when the map is about to grow, with the gate held exclusively (tests close the
    /// environment from another thread meanwhile). Set before the environment is shared.
    package var remapHookForTesting: (() -> Void)?

    /// Called when the environment is about to be really closed (tests check that `close()`
    /// on another thread returns only after it). Set before the environment is shared.
    package var finalizeHookForTesting: (() -> Void)?

    /// Sets (or with nil removes) a function called between LMDB's open of the data file
    /// `dataFile` and the check that the opened file is still the one at that path (tests
    /// replace the file there, as a compaction in another process would).
    ///
    /// Kept per data file and under a lock: tests on other threads open environments while a
    /// test sets its hook (a shared closure variable read while another thread replaced it
    /// could be released under the reader, and one test's hook replaced another's).
    package static func setAfterOpenHookForTesting(dataFile: String, _ hook: (@Sendable () -> Void)?) {
        afterOpenLock.withLock { afterOpenHooks[dataFile] = hook }
    }

    private static let afterOpenLock = MutexLock()
    // Accessed only under `afterOpenLock`.
    nonisolated(unsafe) private static var afterOpenHooks: [String: @Sendable () -> Void] = [:]

    private static func afterOpenHook(_ dataFile: String) -> (@Sendable () -> Void)? {
        afterOpenLock.withLock { afterOpenHooks.isEmpty ? nil : afterOpenHooks[dataFile] }
    }

    /// Creates and opens an LMDB environment at `path`; returns it and its map size.
    ///
    /// A read-only open (`MDB_RDONLY`) opens the data file *before* taking the lock file's
    /// shared lock (lmdb.h's order), so it can open a data file that a compaction in another
    /// process is replacing, and then wait for that compaction's lock: it would go on reading
    /// the replaced, unlinked file. The data file it opened is compared with the one at the
    /// path (device and inode) and opened again if they differ.
    private static func openFresh(path: String, options: Options, mapSize: Int) throws -> (OpaquePointer, Int) {
        var attempt = 0
        while true {
            var created: OpaquePointer?
            try check(mdb_env_create(&created))
            guard let raw = created else { throw LMDBError.invalid }
            do {
                let size = try openEnvironment(raw, path: path, options: options, mapSize: mapSize)
                let dataFile = options.noSubdirectory ? path : path + "/data.mdb"
                afterOpenHook(dataFile)?()
                if options.readOnly, !options.noLock, attempt < 20, !openedFileIsCurrent(raw, dataFile: dataFile) {
                    mdb_env_close(raw)
                    attempt += 1
                    continue
                }
                return (raw, size)
            } catch {
                mdb_env_close(raw)
                throw error
            }
        }
    }

    /// True if the data file `raw` has open is the file at `dataFile` (not one renamed over it).
    private static func openedFileIsCurrent(_ raw: OpaquePointer, dataFile: String) -> Bool {
        var fd: Int32 = -1
        guard mdb_env_get_fd(raw, &fd) == 0, fd >= 0 else { return true }
        var opened = stat()
        var current = stat()
        guard fstat(fd, &opened) == 0 else { return true }
        guard stat(dataFile, &current) == 0 else { return false }
        return opened.st_dev == current.st_dev && opened.st_ino == current.st_ino
    }

    /// Opens the created environment `raw` at `path`; returns its map size (at least
    /// `mapSize`, more if the file says so). Also reopens the data file after a compaction.
    static func openEnvironment(_ raw: OpaquePointer, path: String, options: Options, mapSize: Int) throws -> Int {
        tessera_lmdb_guard_env(UnsafeMutableRawPointer(raw))
        try check(mdb_env_set_maxdbs(raw, MDB_dbi(options.maxTables)))
        try check(mdb_env_set_maxreaders(raw, UInt32(options.maxReaders)))
        try check(mdb_env_set_mapsize(raw, mapSize))
        // MDB_NOTLS: read transactions are not bound to the creating thread, so a
        // pooled read txn may be reset on one thread and renewed on another.
        var flags = UInt32(MDB_NOTLS)
        if options.noSubdirectory { flags |= UInt32(MDB_NOSUBDIR) }
        if options.noSync { flags |= UInt32(MDB_NOSYNC) }
        if options.readOnly { flags |= UInt32(MDB_RDONLY) }
        if options.noLock { flags |= UInt32(MDB_NOLOCK) }
        try check(mdb_env_open(raw, path, flags, options.fileMode))
        // The file may already be larger than our initial size (another process grew it):
        // passing 0 adopts the size recorded in the file.
        try check(mdb_env_set_mapsize(raw, 0))
        var info = MDB_envinfo()
        try check(mdb_env_info(raw, &info))
        return info.me_mapsize
    }

    deinit { close() }

    /// Closes the environment, from any thread. New transactions throw `LMDBError.closed`;
    /// transactions running on other threads are waited for, and so are a growth of the map
    /// that another thread's write started and a compaction (which gives up if it has not
    /// swapped the file yet). When it returns the environment is closed, unless a long-lived
    /// snapshot (`beginRead()`, an open result set) or a transaction of the calling thread is
    /// still open: it is then really closed when the last of those ends (`endRead(_:)`), as
    /// `sqlite3_close_v2` does.
    @usableFromInline package func close() {
        poolLock.lock()
        let already = closed
        closed = true
        poolLock.unlock()
        if already { return }
        // Refuse new transactions first: a compaction on another thread that waits for every
        // transaction to end (this thread's open result set, say) gives up instead, so that
        // waiting for it below cannot wait for ever.
        gate.refuseNewHolds()
        compactionLock.lock()
        defer { compactionLock.unlock() }
        if gate.close(currentThreadID()) { finalizeClose() }
    }

    /// True once `close()` was called.
    var isClosed: Bool { poolLock.withLock { closed } }

    /// Closes the LMDB environment once no transaction of this process is left.
    private func finalizeClose() {
        finalizeHookForTesting?()
        drainPool()
        if !unusable { mdb_env_close(env) }
        if lockFileProbe >= 0 { _ = closeFile(lockFileProbe) }
        OpenEnvironments.remove(lockFile: lockFilePath)
    }

    /// Ends a hold taken with `gate.enter`, closing the environment when it was the last hold
    /// of a closed environment.
    func leaveGate(_ thread: UInt, longLived: Bool = false) {
        if gate.leave(thread, longLived: longLived) {
            finalizeClose()
            gate.didFinalize()
        }
    }

    /// Runs `body` with the LMDB environment while holding the gate (so that a compaction
    /// cannot swap it meanwhile), for calls made outside a transaction.
    func withEnvironment<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
        let thread = currentThreadID()
        try gate.enter(thread)
        defer { leaveGate(thread) }
        if unusable { throw LMDBError.unusable }
        return try body(env)
    }

    /// The current map size in bytes.
    @usableFromInline package var currentMapSize: Int {
        gate.withMutex { mapSize }
    }

    /// The size of the data file's pages in bytes (4,096 where the file was created on a
    /// system with 4 KB memory pages).
    @usableFromInline package var pageSize: Int {
        var stat = MDB_stat()
        _ = try? withEnvironment { env in mdb_env_stat(env, &stat) }
        return Int(stat.ms_psize)
    }

    /// Bytes of the data file actually in use (last used page × page size).
    @usableFromInline package var usedBytes: Int {
        var info = MDB_envinfo()
        var stat = MDB_stat()
        _ = try? withEnvironment { env in
            mdb_env_info(env, &info)
            mdb_env_stat(env, &stat)
        }
        return (info.me_last_pgno + 1) * Int(stat.ms_psize)
    }

    /// The ID of the last committed write transaction, by any process (`mdb_env_info`'s
    /// `me_last_txnid`). Reads the meta pages of the memory map, without a transaction: cheap
    /// enough to poll, and it moves when another process commits to the same file. It can
    /// name a commit still being published (its meta page is written before its ID reaches
    /// the lock file, where snapshots start), so it is a hint that something changed, never
    /// the label of a snapshot: that is the snapshot's own `Transaction.id`.
    package var lastTransactionID: UInt64 {
        var info = MDB_envinfo()
        // lmdb.h: mdb_env_info may be called at any time on an open environment; the meta
        // page with the larger transaction ID is the last committed one.
        guard (try? withEnvironment({ mdb_env_info($0, &info) })) == 0 else { return 0 }
        return UInt64(info.me_last_txnid)
    }

    /// Flushes the data to disk (useful with `noSync`).
    @usableFromInline package func sync() throws {
        try withEnvironment { try check(mdb_env_sync($0, 1)) }
    }

    // MARK: - Tables

    /// Opens a named table, creating it when `create` is true.
    ///
    /// Tables are opened in a write transaction of their own, as lmdb.h requires that a
    /// DBI be opened by one transaction at a time; returns `nil` when it does not exist
    /// and `create` is false.
    @usableFromInline package func openTable(_ name: String, create: Bool = true) throws -> Table? {
        try write { txn in try txn.openTable(name, create: create) }
    }

    // MARK: - Transactions

    /// Runs `body` in a read-only transaction: a consistent snapshot of the whole environment.
    ///
    /// Bytes handed out by the transaction are valid only inside `body`.
    @usableFromInline package func read<R>(_ body: (Transaction) throws -> R) throws -> R {
        let thread = currentThreadID()
        let txn = try lockAndAcquireReader(thread)
        defer { leaveGate(thread) }
        defer { releaseReader(txn) }
        return try body(txn)
    }

    /// Begins a long-lived read transaction, ended with `endRead(_:)` (on any thread).
    ///
    /// Used by lazy result sets that outlive a closure. While it is open the map cannot grow:
    /// a write on another thread that needs more room waits for it to end, and a write on the
    /// thread that began it fails with `LMDBError.mapFull` (instead of waiting for itself).
    @usableFromInline package func beginRead() throws -> Transaction {
        let thread = currentThreadID()
        let txn = try lockAndAcquireReader(thread, longLived: true)
        txn.holder = thread
        return txn
    }

    /// Runs `body` in a read-only transaction of its own that may open existing tables
    /// (`Transaction.openTable(_:create: false)`): the handles stay valid for the environment
    /// after it ends. It waits only for a write transaction of this process that is running
    /// (never for another process's writer: LMDB's write lock is not taken).
    package func readOpeningTables<R>(_ body: (Transaction) throws -> R) throws -> R {
        let thread = currentThreadID()
        var resized = false
        while true {
            // Another process grew the map: adopt its size holding nothing.
            if resized { try adoptExternalSize() }
            // Lock order, as in `write`: the gate, then the table lock.
            try gate.enter(thread)
            defer { leaveGate(thread) }
            tableOpenLock.lock()
            defer { tableOpenLock.unlock() }
            var raw: OpaquePointer?
            let rc = mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &raw)
            resized = rc == MDB_MAP_RESIZED
            if resized { continue }
            try check(rc)
            let txn = Transaction(raw: raw!, readOnly: true, window: window)
            do {
                let result = try body(txn)
                txn.invalidate()
                // lmdb.h: committing a read-only transaction keeps the table handles it opened
                // (aborting or resetting it would close them).
                try check(tessera_mdb_txn_commit(UnsafeMutableRawPointer(raw)))
                tableRegistrations += 1
                return result
            } catch {
                if txn.raw != nil { txn.invalidate(); mdb_txn_abort(raw) }
                throw error
            }
        }
    }

    /// Ends a transaction started by `beginRead()`.
    @usableFromInline package func endRead(_ txn: Transaction) {
        guard txn.raw != nil, txn.inUse else { return }
        let holder = txn.holder
        releaseReader(txn)
        leaveGate(holder, longLived: true)
    }

    /// Runs `body` in the write transaction; returning commits, throwing aborts.
    ///
    /// If the map fills up, the transaction is aborted, the map grows and `body` runs again
    /// from the start, so `body` must not have side effects outside the transaction that it
    /// cannot repeat. Writers are serialised by LMDB (across threads and processes).
    @usableFromInline package func write<R>(_ body: (Transaction) throws -> R) throws -> R {
        let thread = currentThreadID()
        writerThread.lock()
        let reentrant = writer == thread
        writerThread.unlock()
        precondition(!reentrant, "re-entrant write transaction: a write is already running on this thread")
        writerThread.lock()
        writer = thread
        writerThread.unlock()
        defer {
            writerThread.lock()
            writer = 0
            writerThread.unlock()
        }
        // Grow ahead of time when the map is half full, so that a write rarely has to be
        // rolled back and run again for lack of space.
        // Not while this thread holds a read snapshot (an open result set): growing waits for
        // every reader of the process, so it would wait for itself.
        if !gate.holds(thread), usedBytes > currentMapSize / 2 { try? grow() }
        while true {
            var needGrow = false
            var resized = false
            do {
                try gate.enter(thread)
                defer { leaveGate(thread) }
                if unusable { throw LMDBError.unusable }
                var raw: OpaquePointer?
                let registrations = tableOpenLock.withLock { tableRegistrations }
                // Waits for another process's writer: the lock below is taken only after.
                let rc = mdb_txn_begin(env, nil, 0, &raw)
                if rc == MDB_MAP_RESIZED {
                    // Another process grew the map: adopt its size under the exclusive lock.
                    resized = true
                } else {
                    try check(rc)
                    tableOpenLock.lock()
                    defer { tableOpenLock.unlock() }
                    if tableRegistrations != registrations {
                        // A reader registered tables after this transaction copied the table
                        // list: begin again (rare: another process changed the catalogue).
                        mdb_txn_abort(raw)
                        continue
                    }
                    window.refreshEnd()
                    let txn = Transaction(raw: raw!, readOnly: false, window: window)
                    do {
                        let result = try body(txn)
                        // A large commit starts the file's writeback while it copies its
                        // pages (`tessera_writeback_start`); a small one is over before the
                        // first request would be made.
                        let writeback = !options.noSync && txn.writtenBytes >= Self.writebackThreshold
                            ? tessera_writeback_start(window.fd) : nil
                        txn.invalidate()
                        defer { tessera_writeback_stop(writeback) }
                        try check(tessera_mdb_txn_commit(UnsafeMutableRawPointer(raw)))
                        return result
                    } catch {
                        if txn.raw != nil { txn.invalidate(); mdb_txn_abort(raw) }
                        // A put that hit MDB_MAP_FULL may have been wrapped in another error by
                        // the caller: the transaction's own flag is what decides.
                        if txn.sawMapFull || LMDBError.mapFull ~= error { needGrow = true } else { throw error }
                    }
                }
            }
            if resized { try adoptExternalSize() }
            if needGrow { try grow() }
        }
    }

    /// Grows the map ahead of a write expected to add about `bytes` to the file (a large batch),
    /// so that it is not rolled back and run again when it outgrows the map halfway. Does
    /// nothing on a thread inside a write or holding a snapshot (the map cannot change then),
    /// while another thread keeps a long-lived snapshot open (growing would wait for it to end,
    /// perhaps for ever), nor past `maxMapSize`; the write then grows the map itself if it must,
    /// as before.
    package func reserve(bytes: Int) {
        let thread = currentThreadID()
        writerThread.lock()
        let writing = writer == thread
        writerThread.unlock()
        if writing || gate.holds(thread) || gate.hasLongLivedHolds { return }
        // As `write` grows ahead of time: the map at least twice what is used.
        while (usedBytes + bytes) * 2 > currentMapSize {
            let before = currentMapSize
            if let limit = options.maxMapSize, before >= limit { return }
            do { try grow() } catch { return }
            if currentMapSize <= before { return }
        }
    }

    /// Bytes a write transaction puts from which its commit starts the file's writeback while
    /// it runs (`tessera_writeback_start`).
    static let writebackThreshold = 8 << 20

    /// Remaps at the size another process gave the file. Needs the exclusive lock.
    private func adoptExternalSize() throws {
        // This thread's own snapshot would make the exclusive lock wait for itself.
        if gate.holds(currentThreadID()) { throw LMDBError.mapResized }
        try gate.exclusively {
            drainPool()
            try check(mdb_env_set_mapsize(env, 0))
            var info = MDB_envinfo()
            mdb_env_info(env, &info)
            gate.withMutex { mapSize = info.me_mapsize }
            window.reset()
            establishWindow()
        }
    }

    private func grow() throws {
        // This thread's own snapshot (an open lazy result set) would make the exclusive lock
        // wait for itself: fail the write instead.
        if gate.holds(currentThreadID()) { throw LMDBError.mapFull }
        try gate.exclusively { try remapLarger() }
    }

    private func remapLarger() throws {
        let current = gate.withMutex { mapSize }
        // A growth rolls back and re-runs the write that hit the limit, so grow in big steps:
        // ×4 up to 16 GiB, then by a quarter. The map is address space, not disk: without
        // MDB_WRITEMAP the data file only grows as pages are written.
        var next = current < (16 << 30) ? current * 4 : current + current / 4
        if let limit = options.maxMapSize {
            if current >= limit { throw LMDBError.mapFull }
            next = min(next, limit)
        }
        // lmdb.h: mdb_env_set_mapsize may be called only when no transaction of this process
        // is active. The exclusive lock guarantees that; pooled readers are aborted first.
        drainPool()
        remapHookForTesting?()
        try check(mdb_env_set_mapsize(env, next))
        var info = MDB_envinfo()
        mdb_env_info(env, &info)
        gate.withMutex { mapSize = info.me_mapsize }
        window.reset()
        establishWindow()
    }

    /// Points the map window at the data file of `env` (on opening, and after a compaction
    /// swapped the file).
    func attachWindow() throws {
        var fd: Int32 = -1
        try check(mdb_env_get_fd(env, &fd))
        window.fd = fd
        var st = MDB_stat()
        try check(mdb_env_stat(env, &st))
        window.pageSize = st.ms_psize
        window.reset()
        establishWindow()
    }

    /// Finds where the map is (`MapWindow`) from the first key of LMDB's main table, read
    /// before any other value, so that a damaged value is never the first one checked.
    /// Only while no other transaction of this process is open (opening, remapping).
    private func establishWindow() {
        var raw: OpaquePointer?
        guard mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &raw) == 0, let raw else { return }
        defer { mdb_txn_abort(raw) }
        var cursor: OpaquePointer?
        // MAIN_DBI (1): the table of the named tables.
        guard tessera_mdb_cursor_open(UnsafeMutableRawPointer(raw), 1, &cursor) == 0 else { return }
        defer { mdb_cursor_close(cursor) }
        var k = MDB_val(), v = MDB_val()
        guard tessera_mdb_cursor_get(UnsafeMutableRawPointer(cursor), &k, &v, MDB_FIRST.rawValue) == 0 else { return }
        try? window.check(k)
    }

    // MARK: - Holds

    /// Takes the shared lock and a reader; remaps first if another process grew the file.
    private func lockAndAcquireReader(_ thread: UInt, longLived: Bool = false) throws -> Transaction {
        while true {
            try gate.enter(thread, longLived: longLived)
            do {
                return try acquireReader()
            } catch LMDBError.mapResized {
                leaveGate(thread, longLived: longLived)
                try adoptExternalSize()
            } catch {
                leaveGate(thread, longLived: longLived)
                throw error
            }
        }
    }

    // MARK: - Reader pool

    private func acquireReader() throws -> Transaction {
        if unusable { throw LMDBError.unusable }
        poolLock.lock()
        let pooled = readerPool.popLast()
        poolLock.unlock()
        if let pooled, let raw = pooled.raw {
            let rc = mdb_txn_renew(raw)
            if rc == 0 {
                pooled.inUse = true
                return pooled
            }
            mdb_txn_abort(raw)
            pooled.invalidate()
            if rc != MDB_MAP_RESIZED { throw LMDBError(code: rc) }
        }
        var raw: OpaquePointer?
        // MDB_MAP_RESIZED (another process grew the file past our map) is thrown: lmdb.h
        // requires mdb_env_set_mapsize(env, 0) with no transaction of this process active,
        // which only the exclusive lock guarantees.
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &raw))
        let txn = Transaction(raw: raw!, readOnly: true, window: window)
        txn.inUse = true
        return txn
    }

    /// Ends a read transaction: its snapshot is released and the handle (with its
    /// `Transaction` object and whatever the caller attached to it) waits in the pool.
    private func releaseReader(_ txn: Transaction) {
        guard let raw = txn.raw, txn.inUse else { return }
        txn.inUse = false
        txn.holder = 0
        // lmdb.h: mdb_txn_reset releases the snapshot but keeps the reader slot for renew.
        mdb_txn_reset(raw)
        poolLock.lock()
        if readerPool.count < 32 {
            readerPool.append(txn)
            poolLock.unlock()
        } else {
            poolLock.unlock()
            mdb_txn_abort(raw)
            txn.invalidate()
        }
    }

    /// Aborts every pooled read transaction (before a remap, a swap or closing).
    func drainPool() {
        poolLock.lock()
        let txns = readerPool
        readerPool.removeAll()
        poolLock.unlock()
        for txn in txns {
            if let raw = txn.raw { mdb_txn_abort(raw) }
            txn.invalidate()
        }
    }
}
