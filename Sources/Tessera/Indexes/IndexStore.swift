import LMDB

/// An open index: its definition, its LMDB tables and its compiled expressions.
final class IndexStore: Sendable {
    let definition: IndexDefinition
    let collection: CollectionKey
    /// The main table (value/array entries, or full-text postings).
    let table: Table

    init(definition: IndexDefinition, collection: CollectionKey, table: Table) {
        self.definition = definition
        self.collection = collection
        self.table = table
    }

    static func tableName(_ collection: CollectionKey, _ name: String) -> String {
        "idx:" + collection.fullName + ":" + name
    }

    static func open(_ def: IndexDefinition, collection: CollectionKey, txn: Transaction) throws -> IndexStore {
        let table = try txn.openTable(tableName(collection, def.name), create: true)!
        return IndexStore(definition: def, collection: collection, table: table)
    }

    func drop(txn: Transaction) throws {
        try txn.drop(table, delete: true)
    }

    /// Replaces this index's entries for one document: `old` body out, `new` body in.
    func update(txn: Transaction, docID: String, old: UnsafeRawBufferPointer?, new: UnsafeRawBufferPointer?) throws {
    }
}

/// Keeps every index of a collection in step with its documents.
enum IndexMaintenance {
    static func update(store: CollectionStore, txn: Transaction, docID: String,
                       old: UnsafeRawBufferPointer?, new: UnsafeRawBufferPointer?) throws {
        for index in store.indexes {
            try index.update(txn: txn, docID: docID, old: old, new: new)
        }
    }
}
