// Value and array indexes store one key per entry (`IndexKey`: the encoded values, the
// document ID and a trailer) with an empty value. What differs between them is only which
// entries a document contributes; maintenance, back-fill and the integrity check are shared.

/// An index kind whose entries are `IndexKey`s (value and array indexes).
protocol KeyedIndexKind: IndexKind {
    /// The keys one document contributes (sorted, unique); empty when the document is outside
    /// the partial index's `where` or contributes nothing. `ctx` is the index's evaluation
    /// context (`IndexStore.makeContext`), reused across documents.
    func entries(_ index: IndexStore, docID: String, body: UnsafeRawBufferPointer, context ctx: ExecContext) -> [[UInt8]]
}

extension KeyedIndexKind {
    func update(_ index: IndexStore, txn: WriteTransaction, docID: String,
                old: UnsafeRawBufferPointer?, new: UnsafeRawBufferPointer?) throws {
        let ctx = index.makeContext(txn)
        let before = old.map { entries(index, docID: docID, body: $0, context: ctx) } ?? []
        let after = new.map { entries(index, docID: docID, body: $0, context: ctx) } ?? []
        if before == after { return }
        let keep = Set(before).intersection(after)
        for k in before where !keep.contains(k) { try txn.delete(index.table, key: k) }
        for k in after where !keep.contains(k) { try txn.put(index.table, key: k, value: []) }
    }

    /// Collects every entry, sorts them and appends them in key order.
    func backfill(_ index: IndexStore, txn: WriteTransaction, docs: StorageTable) throws {
        var all: [[UInt8]] = []
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
        all.sort(by: bytesLess)
        var previous: [UInt8]? = nil
        for k in all where k != previous {
            try txn.put(index.table, key: k, value: [], flags: .append)
            previous = k
        }
    }

    func check(_ index: IndexStore, snapshot: Snapshot, docs: StorageTable, entries count: inout Int) throws -> [String] {
        var expected: [[UInt8]] = []
        let ctx = index.makeContext(snapshot)
        try snapshot.withCursor(docs) { c in
            try c.forEach { k, v in
                // A damaged ID is reported by the document check.
                guard let h = DocumentRecord.header(v), !h.deleted, k.count <= IndexKey.maxDocIDBytes else { return true }
                expected += entries(index, docID: String(decoding: k, as: UTF8.self), body: DocumentRecord.body(v), context: ctx)
                return true
            }
        }
        expected.sort { $0.lexicographicallyPrecedes($1) }
        var actual: [[UInt8]] = []
        try snapshot.withCursor(index.table) { c in try c.forEach { k, _ in actual.append(Array(k)); return true } }
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
            if j >= actual.count || (i < expected.count && expected[i].lexicographicallyPrecedes(actual[j])) {
                problems.append("\(name): missing entry for \(describe(expected[i]))"); i += 1
            } else if i >= expected.count || actual[j].lexicographicallyPrecedes(expected[i]) {
                problems.append("\(name): stale entry for \(describe(actual[j]))"); j += 1
            } else {
                i += 1; j += 1
            }
        }
        return problems
    }
}
