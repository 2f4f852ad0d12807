import LMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Scope and collection name of a collection.
struct CollectionKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    static let defaultName = "_default"
    static let defaultCollection = CollectionKey(unchecked: defaultName, defaultName)

    let scope: String
    let name: String

    init(unchecked scope: String, _ name: String) {
        self.scope = scope
        self.name = name
    }

    /// Validates both names per SPEC §1.3.
    init(scope: String, name: String, validate: Bool) throws {
        try CollectionKey.validate(scope, what: "scope")
        try CollectionKey.validate(name, what: "collection")
        self.init(unchecked: scope, name)
    }

    /// Names: 1–251 chars of `A–Z a–z 0–9 _ - %`, not starting with `_` or `%` (except `_default`).
    static func validate(_ name: String, what: String) throws {
        if name == defaultName { return }
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= 251 else {
            throw DatabaseError(.invalidName, "\(what) name must be 1 to 251 characters long (got \(bytes.count))")
        }
        for (i, b) in bytes.enumerated() {
            let ok = (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || (b >= 48 && b <= 57) || b == 95 || b == 45 || b == 37
            guard ok else {
                throw DatabaseError(.invalidName, "\(what) name '\(name)' has an invalid character at position \(i + 1); allowed are A-Z a-z 0-9 _ - %")
            }
        }
        if bytes[0] == 95 || bytes[0] == 37 {
            throw DatabaseError(.invalidName, "\(what) name '\(name)' must not start with '_' or '%'")
        }
    }

    var fullName: String { scope + "." + name }
    var description: String { fullName }
    static func < (a: CollectionKey, b: CollectionKey) -> Bool { (a.scope, a.name) < (b.scope, b.name) }
}

/// The open tables and indexes of one collection. Immutable: a change to the catalogue
/// replaces it (copy-on-write), so readers can hold one without a lock.
final class CollectionStore: Sendable {
    let key: CollectionKey
    let docs: Table
    let bySequence: Table
    let indexes: [IndexStore]

    init(key: CollectionKey, docs: Table, bySequence: Table, indexes: [IndexStore]) {
        self.key = key
        self.docs = docs
        self.bySequence = bySequence
        self.indexes = indexes
    }

    func with(indexes: [IndexStore]) -> CollectionStore {
        CollectionStore(key: key, docs: docs, bySequence: bySequence, indexes: indexes)
    }
}

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

    /// The stored generation (0 for a database that never recorded one).
    static func storedGeneration(txn: Transaction, meta: Table) throws -> UInt64 {
        guard let raw = try txn.get(meta, key: generationKey), raw.count == 8 else { return 0 }
        return UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self))
    }

    static func docTableName(_ key: CollectionKey) -> String { "doc:" + key.fullName }
    static func seqTableName(_ key: CollectionKey) -> String { "seq:" + key.fullName }

    static func load(txn: Transaction, meta: Table) throws -> Catalog {
        var catalog = Catalog()
        catalog.generation = try storedGeneration(txn: txn, meta: meta)
        guard let raw = try txn.get(meta, key: "catalog") else { return catalog }
        let json: Value
        do { json = try JSONReader.parse(Array(raw)) } catch {
            throw DatabaseError(.corrupt, "the database catalogue is damaged: \(error)")
        }
        for c in json["collections"].arrayValue ?? [] {
            guard let s = c["scope"].stringValue, let n = c["name"].stringValue else { continue }
            let key = CollectionKey(unchecked: s, n)
            catalog.collections[key] = CollectionStore(key: key, docs: .placeholder, bySequence: .placeholder, indexes: [])
            var defs: [IndexDefinition] = []
            for d in c["indexes"].arrayValue ?? [] {
                if let def = IndexDefinition(json: d) { defs.append(def) }
            }
            if !defs.isEmpty { catalog.indexDefinitions[key] = defs }
        }
        return catalog
    }

    mutating func ensureDefaultCollection(txn: Transaction, meta: Table) throws {
        if collections[.defaultCollection] == nil {
            collections[.defaultCollection] = CollectionStore(key: .defaultCollection, docs: .placeholder, bySequence: .placeholder, indexes: [])
            try save(txn: txn, meta: meta)
        }
    }

    /// Opens (creating) the tables of every collection and index.
    mutating func openTables(txn: Transaction) throws {
        for key in Array(collections.keys) {
            collections[key] = try Catalog.openCollection(key, txn: txn, definitions: indexDefinitions[key] ?? [])
        }
    }

    /// Drops and rebuilds every full-text index from its collection's documents (after a
    /// change of the postings layout).
    mutating func rebuildFullTextIndexes(txn: Transaction) throws {
        for (key, store) in collections where store.indexes.contains(where: { $0.definition.type == .fullText }) {
            var indexes: [IndexStore] = []
            for index in store.indexes {
                guard index.definition.type == .fullText else { indexes.append(index); continue }
                try index.drop(txn: txn)
                let fresh = try IndexStore.open(index.definition, collection: key, txn: txn)
                try fresh.backfill(txn: txn, docs: store.docs)
                indexes.append(fresh)
            }
            collections[key] = store.with(indexes: indexes)
        }
    }

    static func openCollection(_ key: CollectionKey, txn: Transaction, definitions: [IndexDefinition]) throws -> CollectionStore {
        let docs = try txn.createTable(docTableName(key))
        let seq = try txn.createTable(seqTableName(key))
        var indexes: [IndexStore] = []
        for def in definitions {
            indexes.append(try IndexStore.open(def, collection: key, txn: txn))
        }
        return CollectionStore(key: key, docs: docs, bySequence: seq, indexes: indexes)
    }

    mutating func save(txn: Transaction, meta: Table) throws {
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
        try txn.put(meta, key: Array("catalog".utf8), value: Array(text.utf8))
    }
}

extension Transaction {
    /// Opens (creating) the table of a collection or index. LMDB's table limit
    /// (`Environment.Options.maxTables`) becomes `.limitReached` instead of a storage error.
    func createTable(_ name: String) throws -> Table {
        do {
            return try openTable(name, create: true)!
        } catch LMDBError.dbsFull {
            let limit = Environment.Options().maxTables
            throw DatabaseError(.limitReached, "cannot create table '\(name)': a database holds at most \(limit) tables "
                + "(2 per collection, 1 per value or array index, 2 per full-text index: about \((limit - 3) / 2) collections)")
        }
    }
}

/// Small file-system helpers (POSIX; Foundation stays out of the engine).
enum FileSystem {
    static var temporaryDirectory: String {
        if let t = getenv("TMPDIR") { return String(cString: t) }
        return "/tmp"
    }

    static func fileExists(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0
    }

    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Removes a directory tree (best effort). Symbolic links are removed, never followed:
    /// deleting a database must not delete what a link inside it points to.
    static func removeTree(_ path: String) {
        var st = stat()
        guard lstat(path, &st) == 0 else { return }
        guard (st.st_mode & S_IFMT) == S_IFDIR, let dir = opendir(path) else { unlink(path); return }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name == "." || name == ".." { continue }
            removeTree(path + "/" + name)
        }
        closedir(dir)
        rmdir(path)
    }
}
