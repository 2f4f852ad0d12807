


/// The database catalogue: collections and index definitions. Persisted as JSON under the
/// `catalog` key of the `meta` table; the in-memory copy lives in `Database.catalog`.
struct Catalog: Sendable {
    /// Bumped by every published change; queries cache their analysis per version.
    var version: UInt64 = 0
    var collections: [CollectionKey: CollectionStore] = [:]
    /// Index definitions per collection, as stored.
    var indexDefinitions: [CollectionKey: [IndexDefinition]] = [:]
    /// Counts the saves of the catalogue (meta key `catalog-generation`), so that a write
    /// transaction notices that another process changed it since this copy was loaded.
    var generation: UInt64 = 0

    static let generationKey = "catalog-generation"
    /// Meta key of the catalogue's checksum (`DocumentRecord.digest` of its text; LMDB keeps
    /// no checksums). Databases written before it have none: it is written with the next
    /// catalogue change.
    static let checksumKey = "catalog-checksum"

    static func checksum(_ text: UnsafeRawBufferPointer) -> UInt64 {
        DocumentRecord.digest(generation: 0, body: text)
    }

    /// The stored generation (0 for a database that never recorded one).
    static func storedGeneration(txn: Snapshot, meta: StorageTable) throws -> UInt64 {
        guard let raw = try txn.get(meta, key: generationKey), raw.count == 8 else { return 0 }
        return UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self))
    }

    static func docTableName(_ key: CollectionKey) -> String { "doc:" + key.fullName }
    static func seqTableName(_ key: CollectionKey) -> String { "seq:" + key.fullName }
    static func idTableName(_ key: CollectionKey) -> String { "ids:" + key.fullName }
    static func tailTableName(_ key: CollectionKey) -> String { "tail:" + key.fullName }

    static func load(txn: Snapshot, meta: StorageTable) throws -> Catalog {
        var catalog = Catalog()
        catalog.generation = try storedGeneration(txn: txn, meta: meta)
        guard let raw = try txn.get(meta, key: "catalog") else { return catalog }
        func damaged(_ what: String) -> DatabaseError {
            DatabaseError(.corrupt, "the database catalogue is damaged: \(what) (the documents may be intact: "
                          + "`tessera check` tells more)")
        }
        if let stored = try txn.get(meta, key: checksumKey) {
            guard stored.count == 8 else { throw damaged("its checksum record has \(stored.count) bytes, not 8") }
            let expected = UInt64(littleEndian: stored.loadUnaligned(as: UInt64.self))
            let actual = checksum(raw)
            if actual != expected {
                throw damaged("its checksum does not match (stored \(String(expected, radix: 16)), computed \(String(actual, radix: 16)))")
            }
        }
        let json: Value
        do { json = try JSONReader.parse(Array(raw)) } catch {
            throw damaged("\(error)")
        }
        guard let list = json["collections"].arrayValue else { throw damaged("it has no list of collections") }
        for (i, c) in list.enumerated() {
            guard let s = c["scope"].stringValue, let n = c["name"].stringValue else {
                throw damaged("collection entry \(i + 1) has no scope or name")
            }
            let key = CollectionKey(unchecked: s, n)
            catalog.collections[key] = CollectionStore.unopened(key)
            var defs: [IndexDefinition] = []
            for (j, d) in (c["indexes"].arrayValue ?? []).enumerated() {
                guard let def = IndexDefinition(json: d) else {
                    throw damaged("index entry \(j + 1) of collection '\(key.fullName)' cannot be read")
                }
                defs.append(def)
            }
            if !defs.isEmpty { catalog.indexDefinitions[key] = defs }
        }
        return catalog
    }

    mutating func ensureDefaultCollection(txn: WriteTransaction, meta: StorageTable) throws {
        if collections[.defaultCollection] == nil {
            collections[.defaultCollection] = CollectionStore.unopened(.defaultCollection)
            try save(txn: txn, meta: meta)
        }
    }

    /// Opens the tables of every collection and index: creating them in a write transaction;
    /// in a read snapshot (of `Store.readOpeningTables`) a missing one is `MissingTableError`.
    mutating func openTables(txn: Snapshot) throws {
        for key in Array(collections.keys) {
            collections[key] = try Catalog.openCollection(key, txn: txn, definitions: indexDefinitions[key] ?? [])
        }
    }

    /// Drops and rebuilds, from its collection's documents, every index whose kind changed its
    /// stored layout since on-disk format `format`.
    mutating func rebuildIndexes(txn: WriteTransaction, meta: StorageTable, fromFormat format: UInt32) throws {
        for (key, store) in collections where store.indexes.contains(where: { type(of: $0.kind).needsRebuild(fromFormat: format) }) {
            var indexes: [IndexStore] = []
            for index in store.indexes {
                guard type(of: index.kind).needsRebuild(fromFormat: format) else { indexes.append(index); continue }
                try index.drop(txn: txn)
                let fresh = try IndexStore.open(index.definition, collection: key, txn: txn)
                try fresh.backfill(txn: txn, docs: store.documents, meta: meta)
                indexes.append(fresh)
            }
            collections[key] = store.with(indexes: indexes)
        }
    }

    /// Lets every index that is not rebuilt move what it stored at on-disk format `format` to
    /// where the current format keeps it (`IndexKind.upgrade`).
    func upgradeIndexes(txn: WriteTransaction, fromFormat format: UInt32) throws {
        for store in collections.values {
            for index in store.indexes where !type(of: index.kind).needsRebuild(fromFormat: format) {
                try index.kind.upgrade(index, txn: txn, fromFormat: format)
            }
        }
    }

    static func openCollection(_ key: CollectionKey, txn: Snapshot, definitions: [IndexDefinition]) throws -> CollectionStore {
        let docs = try txn.table(named: docTableName(key))
        let seq = try txn.table(named: seqTableName(key))
        let ids = try txn.table(named: idTableName(key))
        let tails = try txn.table(named: tailTableName(key))
        var indexes: [IndexStore] = []
        for def in definitions {
            indexes.append(try IndexStore.open(def, collection: key, txn: txn))
        }
        return CollectionStore(key: key, docs: docs, bySequence: seq, ids: ids, tails: tails, indexes: indexes)
    }

    mutating func save(txn: WriteTransaction, meta: StorageTable) throws {
        generation &+= 1
        try txn.put(meta, key: Array(Catalog.generationKey.utf8), value: withUnsafeBytes(of: generation.littleEndian) { Array($0) })
        var list: [Value] = []
        for key in collections.keys.sorted() {
            var entry: [String: Value] = ["scope": .string(key.scope), "name": .string(key.name)]
            if let defs = indexDefinitions[key], !defs.isEmpty {
                entry["indexes"] = .array(defs.map(\.json))
            }
            list.append(.object(entry))
        }
        let text = JSONWriter.string(.object(["collections": .array(list)]))
        let bytes = Array(text.utf8)
        try txn.put(meta, key: Array("catalog".utf8), value: bytes)
        let sum = bytes.withUnsafeBytes { Catalog.checksum($0) }
        try txn.put(meta, key: Array(Catalog.checksumKey.utf8), value: withUnsafeBytes(of: sum.littleEndian) { Array($0) })
    }
}

