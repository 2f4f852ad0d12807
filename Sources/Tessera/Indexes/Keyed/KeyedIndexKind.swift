// Value and array indexes store one key per entry (`IndexKey`: the encoded values, the
// document ID and a trailer). The entry's value (`IndexKey.entryValue`, empty for most) says
// how many elements of the document gave that key (array indexes) and whether the key's
// values are exact (a covering scan reads the document when they are not).
// What differs between the kinds is only which entries a document contributes; maintenance,
// back-fill and the integrity check are shared.

/// One index entry: its `IndexKey` and its stored value.
struct KeyedEntry: Hashable {
    var key: [UInt8]
    var value: [UInt8] = []
}

/// An index kind whose entries are `IndexKey`s (value and array indexes).
protocol KeyedIndexKind: IndexKind {
    /// The entries one document contributes (sorted by key, keys unique); empty when the
    /// document is outside the partial index's `where` or contributes nothing. `ctx` is the
    /// index's evaluation context (`IndexStore.makeContext`), reused across documents.
    func entries(_ index: IndexStore, docID: String, body: UnsafeRawBufferPointer, context ctx: ExecContext) -> [KeyedEntry]
}

/// A keyed kind whose entries stand for elements of documents' arrays (array indexes): an
/// entry counts the elements with its key.
protocol ElementIndexKind: KeyedIndexKind {
    /// The elements of a document whose entry key is `key`, one per occurrence (a covering
    /// scan reads them for an entry whose key was truncated).
    func elements(_ index: IndexStore, docID: String, body: UnsafeRawBufferPointer, context ctx: ExecContext,
                  key: UnsafeRawBufferPointer) -> [Value]
}

extension KeyedIndexKind {
    func update(_ index: IndexStore, txn: WriteTransaction, docID: String,
                old: UnsafeRawBufferPointer?, new: UnsafeRawBufferPointer?) throws {
        let ctx = index.makeContext(txn)
        let before = old.map { entries(index, docID: docID, body: $0, context: ctx) } ?? []
        let after = new.map { entries(index, docID: docID, body: $0, context: ctx) } ?? []
        if before == after { return }
        let keep = Set(before).intersection(after)
        let newKeys = Set(after.map(\.key))
        // A key whose value changed is overwritten, not deleted.
        for e in before where !keep.contains(e) && !newKeys.contains(e.key) { try txn.delete(index.table, key: e.key) }
        for e in after where !keep.contains(e) { try txn.put(index.table, key: e.key, value: e.value) }
    }

    /// Collects every entry, sorts them and appends them in key order.
    func backfill(_ index: IndexStore, txn: WriteTransaction, docs: StorageTable) throws {
        var all: [KeyedEntry] = []
        let ctx = index.makeContext(txn)
        try txn.withCursor(docs) { c in
            try c.forEach { k, v in
                guard let h = DocumentRecord.header(v), !h.deleted else { return true }
                guard k.count <= IndexKey.maxDocIDBytes else {
                    throw DatabaseError(.corrupt, "cannot index '\(index.collection)': a document ID of \(k.count) bytes is damaged")
                }
                let id = String(decoding: k, as: UTF8.self)
                all.append(contentsOf: entries(index, docID: id, body: DocumentRecord.body(v), context: ctx))
                return true
            }
        }
        all.sort { bytesLess($0.key, $1.key) }
        var previous: [UInt8]? = nil
        for e in all where e.key != previous {
            try txn.put(index.table, key: e.key, value: e.value, flags: .append)
            previous = e.key
        }
    }

    func check(_ index: IndexStore, snapshot: Snapshot, docs: StorageTable, entries count: inout Int) throws -> [String] {
        var expected: [KeyedEntry] = []
        let ctx = index.makeContext(snapshot)
        try snapshot.withCursor(docs) { c in
            try c.forEach { k, v in
                // A damaged ID is reported by the document check.
                guard let h = DocumentRecord.header(v), !h.deleted, k.count <= IndexKey.maxDocIDBytes else { return true }
                expected += entries(index, docID: String(decoding: k, as: UTF8.self), body: DocumentRecord.body(v), context: ctx)
                return true
            }
        }
        expected.sort { $0.key.lexicographicallyPrecedes($1.key) }
        var actual: [KeyedEntry] = []
        try snapshot.withCursor(index.table) { c in try c.forEach { k, v in actual.append(KeyedEntry(key: Array(k), value: Array(v))); return true } }
        count += actual.count
        var problems: [String] = []
        let name = "\(index.collection):\(index.definition.name)"
        var i = 0, j = 0
        func describe(_ key: [UInt8]) -> String {
            let id = IndexKey.docID(fromKey: key) ?? "?"
            let values = (try? IndexKey.values(fromKey: key)).flatMap { $0 }.map { $0.map(\.description).joined(separator: ", ") } ?? "(truncated)"
            return "document '\(id)' [\(values)]"
        }
        while i < expected.count || j < actual.count {
            if problems.count >= 100 { problems.append("\(name): … more differences"); break }
            if j >= actual.count || (i < expected.count && expected[i].key.lexicographicallyPrecedes(actual[j].key)) {
                problems.append("\(name): missing entry for \(describe(expected[i].key))"); i += 1
            } else if i >= expected.count || actual[j].key.lexicographicallyPrecedes(expected[i].key) {
                problems.append("\(name): stale entry for \(describe(actual[j].key))"); j += 1
            } else {
                if expected[i].value != actual[j].value {
                    problems.append("\(name): entry for \(describe(actual[j].key)) has the stored value \(actual[j].value), not \(expected[i].value)")
                }
                i += 1; j += 1
            }
        }
        return problems
    }
}
