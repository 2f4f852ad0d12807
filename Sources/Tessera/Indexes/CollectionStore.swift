/// The open tables and indexes of one collection. Immutable: a change to the catalogue
/// replaces it (copy-on-write), so readers can hold one without a lock.
final class CollectionStore: Sendable {
    let key: CollectionKey
    let docs: StorageTable
    let bySequence: StorageTable
    /// The IDs of the live documents (ID → empty value), in the `docs` table's order: the
    /// primary key's covering table (`PrimaryKeyIDs`).
    let ids: StorageTable
    /// The second pieces of records too large for a leaf page, by document ID
    /// (`RecordPieces.swift`).
    let tails: StorageTable
    let indexes: [IndexStore]

    init(key: CollectionKey, docs: StorageTable, bySequence: StorageTable, ids: StorageTable, tails: StorageTable,
         indexes: [IndexStore]) {
        self.key = key
        self.docs = docs
        self.bySequence = bySequence
        self.ids = ids
        self.tails = tails
        self.indexes = indexes
    }

    /// The document table with its records' second pieces.
    var documents: DocumentTables { DocumentTables(records: docs, tails: tails, liveIDs: ids) }

    /// A store with no tables open yet (the catalogue opens them).
    static func unopened(_ key: CollectionKey) -> CollectionStore {
        CollectionStore(key: key, docs: .placeholder, bySequence: .placeholder, ids: .placeholder, tails: .placeholder, indexes: [])
    }

    func with(indexes: [IndexStore]) -> CollectionStore {
        CollectionStore(key: key, docs: docs, bySequence: bySequence, ids: ids, tails: tails, indexes: indexes)
    }
}

/// Keeps every index of a collection in step with its documents.
enum IndexMaintenance {
    static func update(store: CollectionStore, txn: WriteTransaction, docID: String,
                       old: UnsafeRawBufferPointer?, new: UnsafeRawBufferPointer?) throws {
        for index in store.indexes {
            try index.update(txn: txn, docID: docID, old: old, new: new)
        }
    }
}
