


/// The state of one write transaction: the LMDB transaction, counters to persist at the end
/// (per-collection sequence and live-document count) and catalogue changes to publish once
/// it commits. The database creates one per write transaction and hands it to the code
/// that writes (`Database.write`); saves inside `inBatch { }` find it through
/// `Database.currentWrite()`.
final class WriteContext {
    let database: Database
    let txn: WriteTransaction
    /// The catalogue as this transaction sees it (published on commit).
    var catalog: Catalog
    private var catalogChanged = false
    private var catalogReloaded = false
    private var sequences: [CollectionKey: UInt64] = [:]
    private var countDeltas: [CollectionKey: Int] = [:]
    /// Work to run after commit (updating documents' metadata in memory).
    var afterCommit: [() -> Void] = []
    /// Documents purged, recorded only while observers exist (Observation/).
    var purgedForObservers: [(CollectionKey, String)] = []

    init(database: Database, txn: WriteTransaction) {
        self.database = database
        self.txn = txn
        self.catalog = database.catalog.withLock { $0 }
    }

    /// Reloads the catalogue if another process changed it since this process loaded it
    /// (its index list, collections): writes must maintain indexes this process has not
    /// seen yet, and a catalogue saved by this transaction must not drop the others' changes.
    /// Called once, at the start of the transaction.
    func syncCatalog() throws {
        let stored = try Catalog.storedGeneration(txn: txn, meta: database.metaTable)
        if stored == catalog.generation { return }
        var fresh = try Catalog.load(txn: txn, meta: database.metaTable)
        try fresh.ensureDefaultCollection(txn: txn, meta: database.metaTable)
        try fresh.openTables(txn: txn)
        catalog = fresh
        catalogReloaded = true
    }

    /// The collection's store as this transaction sees it.
    func store(_ key: CollectionKey) throws -> CollectionStore {
        guard let s = catalog.collections[key] else {
            throw DatabaseError(.notFound, "collection '\(key)' does not exist (deleted?)")
        }
        return s
    }

    /// The next sequence number of a collection: strictly increasing, never reused (purges included).
    func nextSequence(_ key: CollectionKey) throws -> UInt64 {
        var current: UInt64
        if let s = sequences[key] {
            current = s
        } else {
            current = try WriteContext.readCounter(txn: txn, meta: database.metaTable, name: "seq:" + key.fullName)
        }
        current += 1
        sequences[key] = current
        return current
    }

    /// The largest document ID known to be in each collection's document table in this
    /// transaction (read once, then raised by every insert): never smaller than the real
    /// largest key, so a key above it is above every key in the table.
    private var largestDocumentKeys: [CollectionKey: [UInt8]] = [:]

    /// Put flags for inserting document `id` into `store`'s document table: `.append` when
    /// the ID sorts after every ID in the table (`MDB_APPEND` then fills the last page before
    /// starting a new one: IDs imported in ascending order fill about 96 % of their pages, not 89 %).
    func documentPutFlags(_ key: CollectionKey, store: CollectionStore, id: [UInt8]) throws -> StoragePutFlags {
        let largest: [UInt8]
        if let known = largestDocumentKeys[key] {
            largest = known
        } else {
            largest = try txn.withCursor(store.docs) { c in try c.last() ? Array(c.key) : [] }
        }
        if largest.isEmpty || largest.lexicographicallyPrecedes(id) {
            largestDocumentKeys[key] = id
            return .append
        }
        largestDocumentKeys[key] = largest
        return []
    }

    func adjustCount(_ key: CollectionKey, by delta: Int) {
        countDeltas[key, default: 0] += delta
        countChanged.insert(key)
    }

    /// Collections whose live-document count this transaction changed (their indexes'
    /// statistics are checked for drift before commit).
    private var countChanged: Set<CollectionKey> = []

    /// Recomputes the planner statistics of the keyed indexes of every collection whose
    /// document count changed, when an index's entry count drifted from them.
    private func refreshStatistics() throws {
        for key in countChanged {
            guard let store = catalog.collections[key] else { continue }
            for index in store.indexes where index.kind is any KeyedIndexKind {
                try IndexStatistics.refreshIfDrifted(index, txn: txn, meta: database.metaTable)
            }
        }
        countChanged = []
    }

    static func readCounter(txn: Snapshot, meta: StorageTable, name: String) throws -> UInt64 {
        try txn.counter(name, in: meta)
    }

    func createCollection(_ key: CollectionKey) throws {
        catalog.collections[key] = try Catalog.openCollection(key, txn: txn, definitions: [])
        catalogChanged = true
    }

    func deleteCollection(_ key: CollectionKey) throws {
        guard let store = catalog.collections[key] else { return }
        try txn.drop(store.docs, delete: true)
        try txn.drop(store.bySequence, delete: true)
        try txn.drop(store.ids, delete: true)
        for index in store.indexes {
            try index.drop(txn: txn)
            try IndexStatistics.remove(index, txn: txn, meta: database.metaTable)
        }
        catalog.collections[key] = nil
        catalog.indexDefinitions[key] = nil
        let meta = database.metaTable
        try txn.delete(meta, key: Array(("seq:" + key.fullName).utf8))
        try txn.delete(meta, key: Array(("count:" + key.fullName).utf8))
        sequences[key] = nil
        countDeltas[key] = nil
        catalogChanged = true
    }

    /// Replaces a collection's store (index list changes).
    func replaceStore(_ store: CollectionStore, definitions: [IndexDefinition]) {
        catalog.collections[store.key] = store
        catalog.indexDefinitions[store.key] = definitions.isEmpty ? nil : definitions
        catalogChanged = true
    }

    /// Writes counters and catalogue; called just before commit.
    func finish() throws {
        try txn.flushPendingWork()
        try flushCounters()
        try refreshStatistics()
        if catalogChanged { try catalog.save(txn: txn, meta: database.metaTable) }
    }

    /// Writes the sequence and live-count counters accumulated so far (before commit, or
    /// before an integrity check inside the transaction reads them).
    func flushCounters() throws {
        let meta = database.metaTable
        for (key, seq) in sequences {
            try txn.put(meta, key: Array(("seq:" + key.fullName).utf8), value: withUnsafeBytes(of: seq.littleEndian) { Array($0) })
        }
        for (key, delta) in countDeltas where delta != 0 {
            let name = "count:" + key.fullName
            let current = Int64(bitPattern: try WriteContext.readCounter(txn: txn, meta: meta, name: name))
            let next = UInt64(bitPattern: current + Int64(delta))
            try txn.put(meta, key: Array(name.utf8), value: withUnsafeBytes(of: next.littleEndian) { Array($0) })
        }
        countDeltas = [:]
    }

    /// Publishes the catalogue and runs after-commit work; called once the commit succeeded.
    func committed() {
        if catalogChanged || catalogReloaded {
            var c = catalog
            // Transactions publish after their commit, possibly out of order: keep the newest.
            // `version` (which invalidates cached query analyses and plans) moves on each time.
            database.catalog.withLock {
                if c.generation >= $0.generation {
                    c.version = $0.version &+ 1
                    $0 = c
                }
            }
        }
        for f in afterCommit { f() }
        // Observation: one atomic load when nobody observes (WriteContext+Observation.swift).
        notifyObservers()
    }
}
