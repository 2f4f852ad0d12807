
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Options for opening a database.
public struct DatabaseConfiguration: Sendable {
    /// The directory that holds named databases (`Database(name:config:)`).
    public var directory: String
    /// The initial size of the memory map (address space reserved, not disk used: the data
    /// file grows only as pages are written); the map grows by itself beyond it.
    public var initialMapSize: Int = 1 << 30
    /// The largest the database may grow to (nil: no limit but the disk and address space).
    public var maxSize: Int?
    /// POSIX mode of the database files.
    public var fileMode: UInt32 = 0o600
    /// Skip fsync on commit: faster bulk loads, but the last commits may be lost on power
    /// failure (never on a process crash). Off by default.
    public var noSync: Bool = false
    /// Open the database read-only: nothing is created or changed (a missing database is
    /// `.notFound`), and every write throws `DatabaseError` `.readOnly`. A database whose files
    /// cannot be written (permissions, read-only media) opens read-only by itself.
    /// Off by default.
    ///
    /// Readers never wait for a writer either way: opening takes LMDB's write lock only to
    /// create a database or upgrade its format.
    public var readOnly: Bool = false

    /// The longest a query may run, in seconds, counted from `Query.execute()` until its last
    /// row is read (nil, the default: no limit). A query still running then throws
    /// `DatabaseError` with code `.interrupted`. (JDBC calls this the query timeout;
    /// `Query.interrupt()` and task cancellation stop a query at any time.)
    public var queryTimeout: Double?

    /// Records (header and body) larger than this many bytes are stored in two pieces even
    /// when they would fit a leaf page (nil: only those that would not). For tests that want
    /// every path to read split records; not part of the product's API.
    package var largestInlineRecord: Int?

    /// Creates a configuration; `directory` defaults to the current directory.
    public init(directory: String = ".") { self.directory = directory }
}

/// A Tessera database: a directory holding one LMDB environment with scopes, collections
/// of JSON documents and their indexes.
///
/// `Database` is `Sendable`: any number of threads may read and query while one writes
/// (LMDB allows one writer at a time; writers wait for each other, across processes too).
///
/// ```swift
/// let db = try Database(path: "/tmp/travel")
/// let hotels = try db.createCollection(name: "hotels")
/// let doc = MutableDocument(id: "hotel1", data: ["name": "Lakeside Inn", "city": "Ann Arbor"])
/// try hotels.save(document: doc)
/// ```
public final class Database: @unchecked Sendable {
    // @unchecked Sendable: `store` is thread-safe; mutable catalogue state lives in `catalog`
    // (a Mutex); `closed` and `writerThread` are Atomics; `writerContext` is touched only by
    // the thread that `writerThread` names.

    /// The current on-disk format version. Databases with a larger version are refused.
    public static let formatVersion: UInt32 = 10
    static let magic: [UInt8] = Array("TSRA".utf8)

    /// The database name (last path component, without extension).
    public let name: String
    /// The database directory.
    public let path: String

    let store: Store
    let metaTable: StorageTable
    let catalog: Mutex<Catalog>
    /// The thread running a write transaction on this database (0: none) and its context:
    /// saves inside `inBatch { }` join that transaction (see `currentWrite()`).
    private let writerThread = Atomic<UInt>(0)
    // Written only by the writer thread before it publishes `writerThread` and after it
    // clears it; read only by the thread `writerThread` names.
    private nonisolated(unsafe) var writerContext: WriteContext?
    private let closed = Atomic<Bool>(false)
    /// The last snapshot (transaction ID) whose stored catalogue generation this process's
    /// catalogue was found to be current for: a query in the same snapshot (nothing written
    /// since) skips reading the generation again.
    private let catalogCurrentAt = Atomic<UInt64>(0)
    private let removeOnClose: Bool
    /// Change listeners, live queries and change streams (Observation/).
    let observation = ObservationCenter()
    /// Advanced by `interrupt()`: every query execution that began earlier stops.
    let interruptEpoch = InterruptEpoch()
    /// `DatabaseConfiguration.queryTimeout`.
    let queryTimeout: Double?

    // MARK: - Opening and closing

    /// Opens the database in directory `path`, creating it if it does not exist.
    ///
    /// - Throws: `DatabaseError` `.notADatabase` when the directory holds something else,
    ///   `.unsupportedVersion` when a newer Tessera wrote it, `.storage` on I/O errors.
    public init(path: String, configuration: DatabaseConfiguration = DatabaseConfiguration()) throws {
        self.path = path
        var base = path
        while base.hasSuffix("/") && base.count > 1 { base.removeLast() }
        var last = base.split(separator: "/").last.map(String.init) ?? base
        if last.hasSuffix(".tessera") { last.removeLast(8) }
        self.name = last
        self.removeOnClose = false
        self.queryTimeout = configuration.queryTimeout
        let (e, m, c) = try Database.openStorage(path: path, configuration: configuration)
        (store, metaTable) = (e, m)
        catalog = Mutex(c)
    }

    /// Opens (creating) the database `name` in `config.directory` (`<directory>/<name>.tessera`).
    public convenience init(name: String, config: DatabaseConfiguration = DatabaseConfiguration()) throws {
        guard !name.isEmpty, !name.contains("/") else {
            throw DatabaseError(.invalidName, "invalid database name '\(name)'")
        }
        try self.init(path: config.directory + "/" + name + ".tessera", configuration: config)
    }

    private init(temporaryPath: String, configuration: DatabaseConfiguration) throws {
        self.path = temporaryPath
        self.name = "temporary"
        self.removeOnClose = true
        self.queryTimeout = nil
        let (e, m, c) = try Database.openStorage(path: temporaryPath, configuration: configuration)
        (store, metaTable) = (e, m)
        catalog = Mutex(c)
    }

    /// A fresh database in a new temporary directory, removed when it is closed (for tests).
    public static func temporary() throws -> Database { try temporary(configuration: DatabaseConfiguration()) }

    /// `temporary()` with a configuration (its directory is ignored).
    package static func temporary(configuration: DatabaseConfiguration) throws -> Database {
        var template = Array((FileSystem.temporaryDirectory + "/tessera-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else { throw DatabaseError(.storage, "cannot create a temporary directory") }
        let dir = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
        return try Database(temporaryPath: dir, configuration: configuration)
    }

    deinit { try? close() }

    /// Stops every query execution of this database that has begun (result sets not yet read
    /// to the end), from any thread: reading their rows throws `DatabaseError` with code
    /// `.interrupted`. Queries executed afterwards run normally; writes are not affected.
    public func interrupt() { interruptEpoch.interrupt() }

    /// Closes the database, from any thread. Further use of it or its collections throws
    /// `.notOpen`. Transactions other threads are running (a batch, a save, a read) finish
    /// first: `close()` waits for them. A compaction running on another thread stops with
    /// `.notOpen` (the file unchanged), or finishes if it is already swapping the file in.
    /// A result set still open keeps reading its snapshot to the end; the file is closed
    /// when the last one finishes (as `sqlite3_close_v2` does).
    /// A temporary database is deleted.
    public func close() throws {
        if closed.exchange(true, ordering: .acquiringAndReleasing) { return }
        observation.close()
        store.close()
        if removeOnClose { FileSystem.removeTree(path) }
    }

    /// Closes the database and deletes its directory.
    public func delete() throws {
        try close()
        FileSystem.removeTree(path)
    }

    /// Deletes the database directory at `path` (it must not be open).
    public static func delete(path: String) throws {
        FileSystem.removeTree(path)
    }

    /// True if a database exists at `path`.
    public static func exists(path: String) -> Bool {
        FileSystem.fileExists(path + "/data.mdb")
    }

    var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// True when the database cannot be written: opened with `DatabaseConfiguration.readOnly`,
    /// or its files are read-only. Writes then throw `DatabaseError` `.readOnly`.
    public var isReadOnly: Bool { store.isReadOnly }

    private static func openStorage(path: String, configuration: DatabaseConfiguration) throws
        -> (Store, StorageTable, Catalog)
    {
        if !FileSystem.fileExists(path) {
            if configuration.readOnly {
                throw DatabaseError(.notFound, "no database at '\(path)' (opened read-only: nothing is created)")
            }
            guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
                throw DatabaseError(.storage, "cannot create database directory '\(path)': \(String(cString: strerror(errno)))")
            }
        } else if !FileSystem.isDirectory(path) {
            throw DatabaseError(.notADatabase, "'\(path)' is not a database directory")
        }
        let store = try Store(path: path, options: StoreOptions(initialMapSize: configuration.initialMapSize, maxSize: configuration.maxSize,
                                                                fileMode: configuration.fileMode, noSync: configuration.noSync,
                                                                readOnly: configuration.readOnly,
                                                                largestInlineRecord: configuration.largestInlineRecord))
        do {
            // Most opens only read: no write lock, so never waiting for another process's writer.
            let needs: String
            switch try store.readOpeningTables({ try Database.load(txn: $0, path: path) }) {
            case .ready(let meta, let catalog): return (store, meta, catalog)
            case .needsWrite(let why): needs = why
            }
            if let reason = store.readOnlyReason {
                throw DatabaseError(.readOnly, "cannot open '\(path)': it \(needs), which needs a write, and the database is read-only (\(reason))")
            }
            let (meta, catalog) = try store.write { txn -> (StorageTable, Catalog) in
                let hadTables = try !txn.tableNames().isEmpty
                let meta = try txn.createTable("meta")
                var storedVersion = Database.formatVersion
                if let fmt = try txn.get(meta, key: "format") {
                    storedVersion = try Database.storedVersion(fmt, path: path)
                } else {
                    if hadTables {
                        throw DatabaseError(.notADatabase, "'\(path)' is an LMDB file but not a Tessera database")
                    }
                    try txn.put(meta, key: Array("format".utf8), value: Database.magic + withUnsafeBytes(of: Database.formatVersion.littleEndian) { Array($0) })
                }
                var catalog = try Catalog.load(txn: txn, meta: meta)
                try catalog.ensureDefaultCollection(txn: txn, meta: meta)
                try catalog.openTables(txn: txn)
                if storedVersion < Database.formatVersion {
                    // Indexes whose stored layout changed since (a kind says which) are rebuilt
                    // from the documents; documents and other indexes are untouched.
                    try catalog.rebuildIndexes(txn: txn, meta: meta, fromFormat: storedVersion)
                    // Layouts that moved without a rebuild (format 9: full-text segments).
                    try catalog.upgradeIndexes(txn: txn, fromFormat: storedVersion)
                    // Format 6 added each collection's table of live IDs.
                    if storedVersion < 6 {
                        for store in catalog.collections.values { try PrimaryKeyIDs.fill(txn, store) }
                    }
                    try txn.put(meta, key: Array("format".utf8), value: Database.magic + withUnsafeBytes(of: Database.formatVersion.littleEndian) { Array($0) })
                }
                return (meta, catalog)
            }
            return (store, meta, catalog)
        } catch {
            store.close()
            throw error
        }
    }

    private enum OpenState {
        case ready(StorageTable, Catalog)
        /// Opening must write: why ("is new", "must be upgraded from format 2", …).
        case needsWrite(String)
    }

    /// Loads the catalogue and opens every table in a read snapshot; says what needs a write.
    private static func load(txn: Snapshot, path: String) throws -> OpenState {
        let meta: StorageTable
        do { meta = try txn.table(named: "meta") } catch is MissingTableError {
            if try !txn.tableNames().isEmpty {
                throw DatabaseError(.notADatabase, "'\(path)' is an LMDB file but not a Tessera database")
            }
            return .needsWrite("is a new database")
        }
        guard let fmt = try txn.get(meta, key: "format") else {
            throw DatabaseError(.notADatabase, "'\(path)' is an LMDB file but not a Tessera database")
        }
        let version = try storedVersion(fmt, path: path)
        if version < formatVersion { return .needsWrite("must be upgraded from format \(version) to \(formatVersion)") }
        var catalog = try Catalog.load(txn: txn, meta: meta)
        if catalog.collections[.defaultCollection] == nil { return .needsWrite("has no default collection yet") }
        do { try catalog.openTables(txn: txn) } catch let e as MissingTableError {
            return .needsWrite("misses a table (\(e))")
        }
        return .ready(meta, catalog)
    }

    /// The format version of a `format` record.
    private static func storedVersion(_ fmt: UnsafeRawBufferPointer, path: String) throws -> UInt32 {
        guard fmt.count == 8, Array(fmt[0..<4]) == Database.magic else {
            throw DatabaseError(.notADatabase, "'\(path)' is an LMDB file but not a Tessera database")
        }
        let version = UInt32(littleEndian: fmt.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
        guard version <= Database.formatVersion else {
            throw DatabaseError(.unsupportedVersion,
                "'\(path)' was written by a newer Tessera (format \(version)); this version reads format \(Database.formatVersion) or older")
        }
        return version
    }

    // MARK: - Transactions

    /// Runs `body` as one transaction: every save, delete and purge inside it commits
    /// together or not at all. Throwing from `body` rolls everything back and rethrows.
    ///
    /// Batches may nest; the outermost one commits.
    ///
    /// - Important: if one batch writes more than the free space of the memory map, the
    ///   transaction is rolled back, the map grows, and `body` runs **again from the start**
    ///   (the map is grown ahead of time when it is half full, so this is rare). Keep effects
    ///   outside the database (reading a file position, counters) restartable.
    public func inBatch(_ body: () throws -> Void) throws {
        try write { _ in try body() }
    }

    /// The write transaction the calling thread is running on this database (an open batch),
    /// or nil. Only the API layer looks it up — so that saves inside `inBatch { }` join the
    /// batch, as Couchbase Lite's API has it; everything below is handed the transaction.
    func currentWrite() -> WriteContext? {
        writerThread.load(ordering: .acquiring) == Database.callingThread ? writerContext : nil
    }

    private static var callingThread: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: Int(bitPattern: UnsafeMutableRawPointer(pthread_self())))
        #else
        UInt(pthread_self())
        #endif
    }

    /// Runs `body` in the write transaction of this thread (joining an open batch).
    func write<R>(_ body: (WriteContext) throws -> R) throws -> R {
        // A batch this thread is running finishes even if another thread closes the database
        // meanwhile (`close()` waits for it).
        if let ctx = currentWrite() { return try body(ctx) }
        try checkOpen()
        let (result, ctx) = try store.write { txn -> (R, WriteContext) in
            let ctx = WriteContext(database: self, txn: txn)
            try ctx.syncCatalog()
            writerContext = ctx
            writerThread.store(Database.callingThread, ordering: .releasing)
            defer {
                writerThread.store(0, ordering: .releasing)
                writerContext = nil
            }
            let r = try body(ctx)
            try ctx.finish()
            return (r, ctx)
        }
        ctx.committed()
        return result
    }

    /// Runs `body` in a read snapshot (the open write transaction when called inside a batch).
    func read<R>(_ body: (Snapshot) throws -> R) throws -> R {
        if let ctx = currentWrite() {
            try ctx.txn.flushPendingWork()
            return try body(ctx.txn)
        }
        try checkOpen()
        return try store.read(body)
    }

    // MARK: - Catalogue changes of other processes

    /// True if another process changed the catalogue (collections, indexes) after this process
    /// last loaded it, as `txn`'s snapshot shows.
    func catalogIsStale(txn: Snapshot) throws -> Bool {
        let id = txn.transactionID
        if id != 0 && catalogCurrentAt.load(ordering: .relaxed) == id { return false }
        // The in-memory generation only grows: current for this snapshot stays current for it.
        if try Catalog.storedGeneration(txn: txn, meta: metaTable) > catalog.withLock({ $0.generation }) { return true }
        // (Read snapshots only: a write transaction's ID is also that of the snapshots after
        // it commits, which may hold more than it had when this ran.)
        if txn.isReadOnly { catalogCurrentAt.store(id, ordering: .relaxed) }
        return false
    }

    /// Loads the catalogue another process wrote, opening its new tables in a read snapshot of
    /// their own: no write lock, so it never waits for another process's writer (only for a
    /// write transaction of this process that is running). Inside a batch the transaction
    /// already holds the newest catalogue. Never called while this thread holds a read snapshot.
    func reloadCatalog() throws {
        if currentWrite() != nil { return }
        let fresh: Catalog
        do {
            fresh = try store.readOpeningTables { txn in
                var c = try Catalog.load(txn: txn, meta: metaTable)
                try c.openTables(txn: txn)
                return c
            }
        } catch let e as MissingTableError {
            throw DatabaseError(.corrupt, "the catalogue of '\(path)' names a table that is not in the file: \(e)")
        }
        catalog.withLock {
            if fresh.generation > $0.generation {
                var c = fresh
                c.version = $0.version &+ 1
                $0 = c
            }
        }
    }

    /// Reloads the catalogue if another process changed it; true if it did. Inside a batch the
    /// transaction already holds the newest catalogue.
    func refreshCatalogIfStale() throws -> Bool {
        if currentWrite() != nil { return false }
        guard try read({ try catalogIsStale(txn: $0) }) else { return false }
        try reloadCatalog()
        return true
    }

    func checkOpen() throws {
        if isClosed, currentWrite() == nil { throw DatabaseError(.notOpen, "database '\(name)' is closed") }
    }

    // MARK: - Scopes and collections

    /// The default collection (`_default._default`), which always exists.
    public func defaultCollection() throws -> Collection {
        try checkOpen()
        return Collection(database: self, key: .defaultCollection)
    }

    /// Creates the collection `name` in `scope` (default `_default`), or returns it if it exists.
    ///
    /// A database holds at most 4,096 LMDB tables: each collection uses 2, each value or
    /// array index 1 and each full-text index 2 (about 2,046 collections without indexes).
    ///
    /// - Throws: `.invalidName` if a name breaks the rules of SPEC §1.3; `.limitReached` when
    ///   the table limit is reached (nothing is created).
    @discardableResult
    public func createCollection(name: String, scope: String? = nil) throws -> Collection {
        let key = try CollectionKey(scope: scope ?? CollectionKey.defaultName, name: name, validate: true)
        if catalog.withLock({ $0.collections[key] != nil }) { return Collection(database: self, key: key) }
        try write { ctx in
            if ctx.catalog.collections[key] != nil { return }
            try ctx.createCollection(key)
        }
        return Collection(database: self, key: key)
    }

    /// The collection `name` in `scope`, or nil if it does not exist.
    public func collection(name: String, scope: String? = nil) throws -> Collection? {
        try checkOpen()
        let key = CollectionKey(unchecked: scope ?? CollectionKey.defaultName, name)
        if catalog.withLock({ $0.collections[key] != nil }) { return Collection(database: self, key: key) }
        // Another process may have created it since this one loaded the catalogue.
        guard try refreshCatalogIfStale() else { return nil }
        return catalog.withLock { $0.collections[key] != nil } ? Collection(database: self, key: key) : nil
    }

    /// The collections of `scope` (default `_default`), sorted by name.
    public func collections(scope: String? = nil) throws -> [Collection] {
        try checkOpen()
        _ = try refreshCatalogIfStale()
        let s = scope ?? CollectionKey.defaultName
        let keys = catalog.withLock { $0.collections.keys.filter { $0.scope == s } }
        return keys.sorted { $0.name < $1.name }.map { Collection(database: self, key: $0) }
    }

    /// Deletes a collection with its documents and indexes. The default collection cannot be deleted.
    public func deleteCollection(name: String, scope: String? = nil) throws {
        let key = CollectionKey(unchecked: scope ?? CollectionKey.defaultName, name)
        if key == .defaultCollection {
            throw DatabaseError(.invalidName, "the default collection cannot be deleted")
        }
        try write { ctx in
            guard ctx.catalog.collections[key] != nil else { return }
            try ctx.deleteCollection(key)
        }
    }

    /// The scopes that hold at least one collection (`_default` always), sorted by name.
    public func scopes() throws -> [Scope] {
        try checkOpen()
        _ = try refreshCatalogIfStale()
        let names = catalog.withLock { Set($0.collections.keys.map(\.scope)) }
        return names.union([CollectionKey.defaultName]).sorted().map { Scope(database: self, name: $0) }
    }

    /// The scope `name`, or nil if it has no collection.
    public func scope(name: String) throws -> Scope? {
        try scopes().first { $0.name == name }
    }

    /// Bytes of the data file in use.
    public var fileSize: Int { store.usedBytes }
}

/// A namespace of collections.
public struct Scope: Sendable {
    /// The database.
    public let database: Database
    /// The scope name.
    public let name: String

    /// The collections of this scope.
    public func collections() throws -> [Collection] { try database.collections(scope: name) }
    /// The collection `name` of this scope, or nil.
    public func collection(name: String) throws -> Collection? { try database.collection(name: name, scope: self.name) }
}
