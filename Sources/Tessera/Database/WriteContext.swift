


/// The state of one write transaction: the LMDB transaction, counters to persist at the end
/// (per-collection sequence and live-document count) and catalogue changes to publish once
/// it commits. The database creates one per write transaction and hands it to the code
/// that writes (`Database.write`); saves inside `inBatch { }` find it through
/// `Database.currentWrite()`.
final class WriteContext {
    let database: Database
    let txn: WriteTransaction
    /// The catalogue as this transaction sees it (published on commit).
    var catalog: Catalog { didSet { lastStore = nil } }
    /// The store `store(_:)` returned last (saves in a batch go to one collection: no hashing
    /// of its key per save).
    private var lastStore: (key: CollectionKey, store: CollectionStore)?
    private var catalogChanged = false
    private var catalogReloaded = false
    /// What this transaction accumulated per collection, and the last collection asked for
    /// (saves in a batch go to one collection: no hashing of its key per save).
    private var counters: [CollectionKey: CollectionCounters] = [:]
    private var lastKey: CollectionKey?
    private var lastCounters: CollectionCounters?
    /// Work to run after commit (updating documents' metadata in memory).
    var afterCommit: [() -> Void] = []
    /// Documents purged, recorded only while observers exist (Observation/).
    var purgedForObservers: [(CollectionKey, String)] = []
    /// Where a save assembles the record it replaces when that is in two pieces.
    let oldRecord = RecordBuffer()

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
        if let last = lastStore, last.key == key { return last.store }
        guard let s = catalog.collections[key] else {
            throw DatabaseError(.notFound, "collection '\(key)' does not exist (deleted?)")
        }
        lastStore = (key, s)
        return s
    }

    /// The counters of collection `key` in this transaction (created on first use).
    @inline(__always)
    private func counters(_ key: CollectionKey) -> CollectionCounters {
        if let last = lastCounters, lastKey == key { return last }
        let c: CollectionCounters
        if let known = counters[key] {
            c = known
        } else {
            c = CollectionCounters()
            counters[key] = c
        }
        lastKey = key
        lastCounters = c
        return c
    }

    /// The next sequence number of a collection: strictly increasing, never reused (purges included).
    func nextSequence(_ key: CollectionKey) throws -> UInt64 {
        let c = counters(key)
        let current = try (c.sequence ?? WriteContext.readCounter(txn: txn, meta: database.metaTable, name: "seq:" + key.fullName)) + 1
        c.sequence = current
        return current
    }

    /// Reserves the next `count` sequence numbers of a collection for writes that are given
    /// theirs (`Collection.save(jsonDocuments:)` writing in ID order, each document under the
    /// sequence its place in the caller's order gives it); returns the last sequence before them.
    func reserveSequences(_ key: CollectionKey, count: Int) throws -> UInt64 {
        let c = counters(key)
        let last = try c.sequence ?? WriteContext.readCounter(txn: txn, meta: database.metaTable, name: "seq:" + key.fullName)
        c.sequence = last + UInt64(count)
        return last
    }

    /// True when `id` sorts after every document ID of collection `key` as this transaction
    /// sees it (above the largest one it found or appended, while it appends in ID order):
    /// such a document is new, and a save need not look for the one it replaces.
    @inline(__always)
    func sortsAfterEveryDocument(_ key: CollectionKey, id: [UInt8]) -> Bool {
        let c = counters(key)
        guard !c.deferring, let largest = c.largestDocumentKey else { return false }
        return largest.withUnsafeBytes { compareStoredKeys($0, id) } < 0
    }

    /// At most this many documents a transaction appended in ID order are taken back into
    /// the held-back puts when its IDs stop ascending (`placeNewDocument`).
    static let maxTakenBack = 1024

    /// Where a new document of collection `key` goes. While the transaction's new IDs keep
    /// ascending past every stored ID, `.append` (`MDB_APPEND` fills each page before the next:
    /// the cheapest load there is). At the first new ID out of that order, the document and ID
    /// tables start holding their puts back until the commit (or a read that walks them) and
    /// write them in ID order (`DeferredPuts`), taking back the few documents appended before
    /// (otherwise every held ID below them would be inserted in the middle of the table, which
    /// leaves pages half full); the result is then `[]` (the write-out places everything).
    /// `sortsAfterEveryDocument`: the caller already found that `id` sorts after every stored
    /// ID (`sortsAfterEveryDocument(_:id:)`), so it is appended with no second comparison.
    func placeNewDocument(_ key: CollectionKey, store: CollectionStore, id: [UInt8],
                          sortsAfterEveryDocument: Bool) throws -> StoragePutFlags {
        let c = counters(key)
        if sortsAfterEveryDocument {
            c.largestDocumentKey = id
            c.appended += 1
            return .append
        }
        if c.deferring { return [] }
        let largest: [UInt8]
        if let known = c.largestDocumentKey {
            largest = known
        } else {
            largest = try txn.withCursor(store.docs) { c in try c.last() ? Array(c.key) : [] }
            c.appendedAfter = largest
        }
        if largest.isEmpty || largest.withUnsafeBytes({ compareStoredKeys($0, id) }) < 0 {
            c.largestDocumentKey = id
            c.appended += 1
            return .append
        }
        c.largestDocumentKey = largest
        c.deferring = true
        txn.deferPuts(in: store.docs, records: RecordTablePacking(tails: store.tails, splitting: database.store.splitting))
        txn.deferPuts(in: store.ids)
        txn.deferPuts(in: store.tails)
        if c.appended > 0 && c.appended <= WriteContext.maxTakenBack, let after = c.appendedAfter {
            try txn.takeBack(store.docs, after: after)
            try txn.takeBack(store.ids, after: after)
            try txn.takeBack(store.tails, after: after)
        } else if try storedDocuments(store, above: id, atMost: WriteContext.maxTakenBackAbove) {
            // A few stored IDs above the new ones (a deleted document's tombstone, one document
            // of another kind): taken back too, the whole run is appended after the rest.
            try txn.takeBack(store.docs, after: id)
            try txn.takeBack(store.ids, after: id)
            try txn.takeBack(store.tails, after: id)
        }
        return []
    }

    /// At most this many stored documents with IDs above a transaction's first new ID out of
    /// order are taken back into the held puts, so that the write-out appends the new
    /// documents: otherwise each batch of IDs that ascend below a larger stored one (a
    /// tombstone `seed` above `k-…` IDs) is inserted in the middle of the table, which splits
    /// its pages in half — a file twice the size (3.4 GB for 1,000,000 documents imported in
    /// batches of 1,000, against 1.7 GB), and a slower import.
    static let maxTakenBackAbove = 64

    /// True when at most `limit` (and at least one) stored documents have IDs above `id`.
    private func storedDocuments(_ store: CollectionStore, above id: [UInt8], atMost limit: Int) throws -> Bool {
        try txn.withCursor(store.docs) { c in
            var n = 0
            var ok = try c.seek(id)
            while ok {
                if compareStoredKeys(c.key, id) > 0 { n += 1 }
                if n > limit { return false }
                ok = try c.next()
            }
            return n > 0
        }
    }

    /// After this many documents of a collection written in one transaction, its value and
    /// array indexes hold their puts back as well (`noteIndexedWrite`). 128 since 2026-12-05
    /// (512 before): in batches of 1,000 the first 511 documents' entries went one descent of
    /// the B-tree each, 1.6 µs a put, a tenth of a small-batch import's writer time; batches of
    /// 150 and 200 documents take the same time either way. (Taking back indexes of up to
    /// 8,192 entries as before, rather than 2,048, cost a small-batch import 3 %.)
    static let keyedIndexDeferral = 128

    /// Counts a document write of collection `key` before its index entries are written. At
    /// the `keyedIndexDeferral`th, the collection's value and array index tables start holding
    /// their puts and deletes back until the commit (or a read that walks them) and write them
    /// in key order (`DeferredPuts`): a batch's entries come in document order, which is random
    /// key order, and each went to a different leaf page, splitting pages in the middle; into
    /// an index that was empty they are now appended, page after page. Small transactions keep
    /// writing straight to the tables.
    ///
    /// An index holding at most 16 × `keyedIndexDeferral` entries (2,048) when it starts
    /// holding puts back has them taken back as well (an index this transaction filled so far,
    /// or nearly): the write-out then appends the whole table in key order instead of
    /// inserting between them.
    ///
    /// New keys go to an index's recent entries (`RecentEntries.swift`); every
    /// `recentCheckInterval` documents after that, an index whose recent entries outgrew their
    /// limit has them moved into its main table, and takes the transaction's later keys there.
    @inline(__always)
    func noteIndexedWrite(_ key: CollectionKey, store: CollectionStore) throws {
        let c = counters(key)
        c.writes &+= 1
        if c.writes < WriteContext.keyedIndexDeferral { return }
        if c.writes == WriteContext.keyedIndexDeferral {
            for index in store.indexes where index.kind is any KeyedIndexKind {
                let small = try txn.count(index.table) <= WriteContext.keyedIndexDeferral * 16
                txn.deferRecent(index.table, recent: index.recent!)
                if small { try txn.takeBack(index.table, after: []) }
            }
        } else if c.writes % WriteContext.recentCheckInterval == 0 {
            for index in store.indexes where index.kind is any KeyedIndexKind {
                try txn.settleRecent(index.table, recent: index.recent!)
            }
        }
    }

    /// Deletes the by-sequence entry of a document's previous revision. At the
    /// `keyedIndexDeferral`th in a transaction, the by-sequence table starts holding its
    /// writes back until the commit (or a read that walks it) and writes them in key order:
    /// the entries a large update replaces are all over the table, and each delete was a
    /// search from its root. Held deletes are not looked up first (`deleteIfPresent`).
    func deleteSequenceEntry(_ key: CollectionKey, store: CollectionStore, sequence: UInt64) throws {
        let c = counters(key)
        c.replaced &+= 1
        if c.replaced == WriteContext.keyedIndexDeferral { txn.deferPuts(in: store.bySequence) }
        try withUnsafeBytes(of: sequence.bigEndian) { try txn.deleteIfPresent(store.bySequence, key: $0) }
    }

    /// How often (in documents written) a large transaction checks whether its indexes'
    /// recent entries outgrew their limit.
    static let recentCheckInterval = 2048

    /// Moves the recent entries of the keyed indexes of every collection this transaction
    /// wrote into their main tables where they outgrew their limit (before the commit).
    private func settleRecentEntries() throws {
        for (key, c) in counters where c.writes > 0 {
            guard let store = catalog.collections[key] else { continue }
            for index in store.indexes where index.kind is any KeyedIndexKind {
                try txn.settleRecent(index.table, recent: index.recent!)
            }
        }
    }

    func adjustCount(_ key: CollectionKey, by delta: Int) {
        let c = counters(key)
        c.countDelta += delta
        c.countChanged = true
    }

    /// Recomputes the planner statistics of the keyed indexes of every collection whose
    /// document count changed, when an index's entry count drifted from them.
    private func refreshStatistics() throws {
        for (key, c) in counters where c.countChanged {
            c.countChanged = false
            guard let store = catalog.collections[key] else { continue }
            for index in store.indexes where index.kind is any KeyedIndexKind {
                try IndexStatistics.refreshIfDrifted(index, txn: txn, meta: database.metaTable)
            }
        }
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
        try txn.drop(store.tails, delete: true)
        for index in store.indexes {
            try index.drop(txn: txn)
            try IndexStatistics.remove(index, txn: txn, meta: database.metaTable)
        }
        catalog.collections[key] = nil
        catalog.indexDefinitions[key] = nil
        let meta = database.metaTable
        try txn.delete(meta, key: Array(("seq:" + key.fullName).utf8))
        try txn.delete(meta, key: Array(("count:" + key.fullName).utf8))
        counters[key] = nil
        if lastKey == key { (lastKey, lastCounters) = (nil, nil) }
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
        try settleRecentEntries()
        try refreshStatistics()
        if catalogChanged { try catalog.save(txn: txn, meta: database.metaTable) }
    }

    /// Writes the sequence and live-count counters accumulated so far (before commit, or
    /// before an integrity check inside the transaction reads them).
    func flushCounters() throws {
        let meta = database.metaTable
        for (key, c) in counters {
            if let seq = c.sequence {
                try txn.put(meta, key: Array(("seq:" + key.fullName).utf8), value: withUnsafeBytes(of: seq.littleEndian) { Array($0) })
            }
            if c.countDelta != 0 {
                let name = "count:" + key.fullName
                let current = Int64(bitPattern: try WriteContext.readCounter(txn: txn, meta: meta, name: name))
                let next = UInt64(bitPattern: current + Int64(c.countDelta))
                try txn.put(meta, key: Array(name.utf8), value: withUnsafeBytes(of: next.littleEndian) { Array($0) })
                c.countDelta = 0
            }
        }
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

/// What one write transaction accumulates for one collection until it commits.
private final class CollectionCounters {
    /// The last sequence number handed out (nil until the stored counter is read).
    var sequence: UInt64?
    /// Live documents gained (or lost) since the counters were last written.
    var countDelta = 0
    /// The live-document count changed: the indexes' statistics are checked for drift.
    var countChanged = false
    /// The largest document ID known to be in the document table in this transaction (read
    /// once, then raised by every append): never smaller than the real largest key, so a key
    /// above it is above every key in the table.
    var largestDocumentKey: [UInt8]?
    /// The largest ID in the document table when this transaction first looked ([] when it
    /// was empty): every ID above it was appended by this transaction.
    var appendedAfter: [UInt8]?
    /// Documents this transaction appended in ID order.
    var appended = 0
    /// The collection's document and ID tables hold their puts back (`placeNewDocument`).
    var deferring = false
    /// Documents of the collection this transaction wrote (`noteIndexedWrite`).
    var writes = 0
    /// Stored documents this transaction replaced (`deleteSequenceEntry`).
    var replaced = 0
}
