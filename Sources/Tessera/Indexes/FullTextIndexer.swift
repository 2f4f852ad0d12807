import LMDB

/// Maintains a full-text index's postings and statistics. (Filled in by the full-text work.)
final class FullTextIndexer: @unchecked Sendable {
    let definition: IndexDefinition
    init(definition: IndexDefinition) { self.definition = definition }
    static func validate(_ def: IndexDefinition) throws {}
    func update(store: IndexStore, txn: Transaction, docID: String, old: UnsafeRawBufferPointer?, new: UnsafeRawBufferPointer?) throws {}
    func backfill(store: IndexStore, txn: Transaction, docs: Table) throws {}
    func check(store: IndexStore, txn: Transaction, docs: Table, entries: inout Int) throws -> [String] { [] }
}
