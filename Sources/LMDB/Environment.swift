import CLMDB

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
public final class Environment: @unchecked Sendable {
    // @unchecked Sendable: `env` is thread-safe per lmdb.h when used with MDB_NOTLS;
    // `mapSize` and the reader pool are protected by `resizeLock` / `poolLock`; per-thread
    // hold counts live in thread-specific storage (`SharedHolds`).

    /// Options for opening an environment.
    public struct Options: Sendable {
        /// Maximum number of named tables.
        public var maxTables: Int = 4096
        /// The initial map size in bytes.
        public var initialMapSize: Int = 1 << 30
        /// The largest map the environment may grow to (`nil`: no limit but the address space).
        public var maxMapSize: Int? = nil
        /// POSIX file mode for the data and lock files.
        public var fileMode: mode_t = 0o600
        /// Maximum concurrent read transactions.
        public var maxReaders: Int = 256
        /// Open without a subdirectory (`path` names the data file itself).
        public var noSubdirectory: Bool = false
        /// Skip fsync on commit (faster, loses the last transactions on power failure; never on a crash).
        public var noSync: Bool = false
        /// Creates default options.
        public init() {}
    }

    @usableFromInline let env: OpaquePointer
    /// The path the environment was opened at.
    public let path: String
    let options: Options
    private var mapSize: Int
    // Readers hold it shared while their transaction lives; growing the map holds it exclusively.
    @usableFromInline let resizeLock = RWLock()
    private let poolLock = MutexLock()
    private var readerPool: [OpaquePointer] = []
    private var closed = false

    /// Opens (creating if needed) the environment at `path`, a directory unless `noSubdirectory`.
    ///
    /// - Throws: `LMDBError` when the file cannot be opened, is not an LMDB file, or has another version.
    public init(path: String, options: Options = Options()) throws {
        var raw: OpaquePointer?
        try check(mdb_env_create(&raw))
        guard let raw else { throw LMDBError.invalid }
        self.env = raw
        self.path = path
        self.options = options
        let initialSize = min(options.initialMapSize, options.maxMapSize ?? Int.max)
        self.mapSize = initialSize
        do {
            try check(mdb_env_set_maxdbs(raw, MDB_dbi(options.maxTables)))
            try check(mdb_env_set_maxreaders(raw, UInt32(options.maxReaders)))
            try check(mdb_env_set_mapsize(raw, initialSize))
            // MDB_NOTLS: read transactions are not bound to the creating thread, so a
            // pooled read txn may be reset on one thread and renewed on another.
            var flags = UInt32(MDB_NOTLS)
            if options.noSubdirectory { flags |= UInt32(MDB_NOSUBDIR) }
            if options.noSync { flags |= UInt32(MDB_NOSYNC) }
            try check(mdb_env_open(raw, path, flags, options.fileMode))
            // The file may already be larger than our initial size (another process grew it):
            // passing 0 adopts the size recorded in the file.
            try check(mdb_env_set_mapsize(raw, 0))
            var info = MDB_envinfo()
            try check(mdb_env_info(raw, &info))
            self.mapSize = info.me_mapsize
        } catch {
            // Every stored property is set, so deinit runs when this initializer throws:
            // mark the environment closed so that it does not close `raw` a second time.
            closed = true
            mdb_env_close(raw)
            throw error
        }
    }

    deinit { close() }

    /// Closes the environment. Every transaction must have ended.
    public func close() {
        poolLock.lock()
        defer { poolLock.unlock() }
        if closed { return }
        closed = true
        for txn in readerPool { mdb_txn_abort(txn) }
        readerPool.removeAll()
        mdb_env_close(env)
    }

    /// The current map size in bytes.
    public var currentMapSize: Int {
        lockShared(); defer { unlockShared() }
        return mapSize
    }

    /// Bytes of the data file actually in use (last used page × page size).
    public var usedBytes: Int {
        var info = MDB_envinfo()
        var stat = MDB_stat()
        mdb_env_info(env, &info)
        mdb_env_stat(env, &stat)
        return (info.me_last_pgno + 1) * Int(stat.ms_psize)
    }

    /// The ID of the last committed write transaction, by any process (`mdb_env_info`'s
    /// `me_last_txnid`). Reads the meta pages of the memory map, without a transaction: cheap
    /// enough to poll, and it moves when another process commits to the same file.
    package var lastTransactionID: UInt64 {
        var info = MDB_envinfo()
        // lmdb.h: mdb_env_info may be called at any time on an open environment; the meta
        // page with the larger transaction ID is the last committed one.
        guard mdb_env_info(env, &info) == 0 else { return 0 }
        return UInt64(info.me_last_txnid)
    }

    /// Flushes the data to disk (useful with `noSync`).
    public func sync() throws {
        try check(mdb_env_sync(env, 1))
    }

    // MARK: - Tables

    /// Opens a named table, creating it when `create` is true.
    ///
    /// Tables are opened in a write transaction of their own, as lmdb.h requires that a
    /// DBI be opened by one transaction at a time; returns `nil` when it does not exist
    /// and `create` is false.
    public func openTable(_ name: String, create: Bool = true) throws -> Table? {
        try write { txn in try txn.openTable(name, create: create) }
    }

    // MARK: - Transactions

    /// Runs `body` in a read-only transaction: a consistent snapshot of the whole environment.
    ///
    /// Bytes handed out by the transaction are valid only inside `body`.
    public func read<R>(_ body: (Transaction) throws -> R) throws -> R {
        let raw = try lockAndAcquireReader()
        defer { unlockShared() }
        var ok = false
        defer { releaseReader(raw, reusable: ok) }
        let txn = Transaction(raw: raw, readOnly: true)
        defer { txn.invalidate() }
        let result = try body(txn)
        ok = true
        return result
    }

    /// Begins a long-lived read transaction; it must be ended with `endRead(_:)` on the same thread.
    ///
    /// Used by lazy result sets that outlive a closure. While it is open the map cannot grow:
    /// a write on another thread that needs more room waits for it to end, and a write on
    /// this thread that needs more room fails with `LMDBError.mapFull` (instead of waiting
    /// for itself forever).
    public func beginRead() throws -> Transaction {
        let raw = try lockAndAcquireReader()
        return Transaction(raw: raw, readOnly: true)
    }

    /// Ends a transaction started by `beginRead()`.
    public func endRead(_ txn: Transaction) {
        guard let raw = txn.raw else { return }
        txn.invalidate()
        releaseReader(raw, reusable: true)
        unlockShared()
    }

    /// Runs `body` in the write transaction; returning commits, throwing aborts.
    ///
    /// If the map fills up, the transaction is aborted, the map grows and `body` runs again
    /// from the start, so `body` must not have side effects outside the transaction that it
    /// cannot repeat. Writers are serialised by LMDB (across threads and processes).
    public func write<R>(_ body: (Transaction) throws -> R) throws -> R {
        precondition(!WriterFlag.active, "re-entrant write transaction: a write is already running on this thread")
        WriterFlag.active = true
        defer { WriterFlag.active = false }
        // Grow ahead of time when the map is half full, so that a write rarely has to be
        // rolled back and run again for lack of space.
        // Not while this thread holds a read snapshot (an open result set): growing waits for
        // every reader of the process, so it would wait for itself.
        if !holdsShared, usedBytes > currentMapSize / 2 { try? grow() }
        while true {
            var needGrow = false
            var resized = false
            do {
                lockShared()
                defer { unlockShared() }
                var raw: OpaquePointer?
                let rc = mdb_txn_begin(env, nil, 0, &raw)
                if rc == MDB_MAP_RESIZED {
                    // Another process grew the map: adopt its size under the exclusive lock.
                    resized = true
                } else {
                    try check(rc)
                    let txn = Transaction(raw: raw!, readOnly: false)
                    do {
                        let result = try body(txn)
                        txn.invalidate()
                        try check(mdb_txn_commit(raw))
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

    /// Remaps at the size another process gave the file. Needs the exclusive lock.
    private func adoptExternalSize() throws {
        // This thread's own snapshot would make the exclusive lock wait for itself.
        if holdsShared { throw LMDBError.mapResized }
        resizeLock.writeLock()
        defer { resizeLock.unlock() }
        drainPool()
        try check(mdb_env_set_mapsize(env, 0))
        var info = MDB_envinfo()
        mdb_env_info(env, &info)
        mapSize = info.me_mapsize
    }

    private func grow() throws {
        // This thread's own snapshot (an open lazy result set) would make the exclusive lock
        // wait for itself: fail the write instead.
        if holdsShared { throw LMDBError.mapFull }
        resizeLock.writeLock()
        defer { resizeLock.unlock() }
        let current = mapSize
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
        try check(mdb_env_set_mapsize(env, next))
        var info = MDB_envinfo()
        mdb_env_info(env, &info)
        mapSize = info.me_mapsize
    }

    // MARK: - The resize lock, per thread

    // Every transaction holds `resizeLock` shared; remapping (growth, or adopting another
    // process's size) holds it exclusively. The lock prefers writers, so a stream of readers
    // cannot starve growth; a thread therefore takes it shared only once, however many
    // snapshots it nests (a read inside a lazy result set's loop), since a second shared
    // acquisition would queue behind a waiting remap that waits for the first.

    private var holdsShared: Bool { SharedHolds.count(self) > 0 }

    private func lockShared() {
        if SharedHolds.adjust(self, by: 1) == 1 { resizeLock.readLock() }
    }

    private func unlockShared() {
        if SharedHolds.adjust(self, by: -1) == 0 { resizeLock.unlock() }
    }

    /// Takes the shared lock and a reader; remaps first if another process grew the file.
    private func lockAndAcquireReader() throws -> OpaquePointer {
        while true {
            lockShared()
            do {
                return try acquireReader()
            } catch LMDBError.mapResized {
                unlockShared()
                try adoptExternalSize()
            } catch {
                unlockShared()
                throw error
            }
        }
    }

    // MARK: - Reader pool

    private func acquireReader() throws -> OpaquePointer {
        poolLock.lock()
        let pooled = readerPool.popLast()
        poolLock.unlock()
        if let pooled {
            let rc = mdb_txn_renew(pooled)
            if rc == 0 { return pooled }
            mdb_txn_abort(pooled)
            if rc != MDB_MAP_RESIZED { throw LMDBError(code: rc) }
        }
        var raw: OpaquePointer?
        // MDB_MAP_RESIZED (another process grew the file past our map) is thrown: lmdb.h
        // requires mdb_env_set_mapsize(env, 0) with no transaction of this process active,
        // which only the exclusive lock guarantees.
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &raw))
        return raw!
    }

    private func releaseReader(_ raw: OpaquePointer, reusable: Bool) {
        // lmdb.h: mdb_txn_reset releases the snapshot but keeps the reader slot for renew.
        mdb_txn_reset(raw)
        poolLock.lock()
        if readerPool.count < 32 {
            readerPool.append(raw)
            poolLock.unlock()
        } else {
            poolLock.unlock()
            mdb_txn_abort(raw)
        }
    }

    private func drainPool() {
        poolLock.lock()
        let txns = readerPool
        readerPool.removeAll()
        poolLock.unlock()
        for txn in txns { mdb_txn_abort(txn) }
    }
}

/// How many times the calling thread holds each environment's resize lock shared.
enum SharedHolds {
    /// Per-thread list of (environment, count); nearly always empty or one entry.
    final class Counts {
        var entries: [(ObjectIdentifier, Int)] = []
    }

    static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k) { p in
            guard let p else { return }
            Unmanaged<Counts>.fromOpaque(p).release()
        }
        return k
    }()

    static var counts: Counts {
        if let p = pthread_getspecific(key) { return Unmanaged<Counts>.fromOpaque(p).takeUnretainedValue() }
        let c = Counts()
        pthread_setspecific(key, Unmanaged.passRetained(c).toOpaque())
        return c
    }

    static func count(_ env: Environment) -> Int {
        let id = ObjectIdentifier(env)
        return counts.entries.first { $0.0 == id }?.1 ?? 0
    }

    /// Adds `delta` to the calling thread's count for `env` and returns the new count.
    static func adjust(_ env: Environment, by delta: Int) -> Int {
        let c = counts
        let id = ObjectIdentifier(env)
        if let i = c.entries.firstIndex(where: { $0.0 == id }) {
            let n = c.entries[i].1 + delta
            if n == 0 { c.entries.remove(at: i) } else { c.entries[i].1 = n }
            return n
        }
        c.entries.append((id, delta))
        return delta
    }
}

/// Marks the thread that is running a write transaction, to catch re-entrant writes.
enum WriterFlag {
    static var active: Bool {
        get { pthread_getspecific(key) != nil }
        set { pthread_setspecific(key, newValue ? UnsafeRawPointer(bitPattern: 1) : nil) }
    }
    static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k, nil)
        return k
    }()
}
