// The primary key's covering table (`ids:<scope>.<collection>`, on-disk format 6): the IDs
// of the collection's live documents, each with an empty value, kept in the same write
// transaction as the `doc:` table. A query that needs nothing from its documents but their
// IDs (`SELECT meta().id … WHERE meta().id >= $x ORDER BY meta().id LIMIT 20`, listing the
// IDs of a collection, counting IDs with a prefix) walks this table — a few hundred IDs per
// page — instead of the document table, whose pages hold one to three whole documents each,
// as SQLite (and so Couchbase Lite) answers it from the ID index of its `kv_` table.

/// Maintenance, migration and checking of the ID table.
enum PrimaryKeyIDs {
    /// Records that document `id` became live (`live`) or stopped being live (deleted to a
    /// tombstone, or purged). With `append`, `id` is known to sort after every ID of the
    /// collection (the document table's append test), so it goes at the end of the table; once
    /// a transaction's IDs come out of order, the ID table holds its puts back and writes them
    /// in ID order, like the document table (`WriteContext.placeNewDocument`).
    @inline(__always)
    static func update(_ txn: WriteTransaction, _ store: CollectionStore, id: [UInt8], live: Bool, append: Bool) throws {
        try id.withUnsafeBytes { key in
            if live {
                try txn.put(store.ids, key: key, value: UnsafeRawBufferPointer(start: nil, count: 0), flags: append ? .append : [])
            } else {
                _ = try txn.delete(store.ids, key: key)
            }
        }
    }

    /// Fills an empty ID table from the document table (opening a database of format 5 or
    /// older): the live IDs in order, appended, so its pages are full.
    static func fill(_ txn: WriteTransaction, _ store: CollectionStore) throws {
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        try txn.withCursor(store.docs) { c in
            try c.forEach { k, v in
                if let h = DocumentRecord.header(v), !h.deleted {
                    try txn.put(store.ids, key: k, value: empty, flags: .append)
                }
                return true
            }
        }
    }

    /// What is wrong with the ID table of a collection whose live document IDs, in order,
    /// are `live`: IDs missing from it, IDs of no live document, values that are not empty.
    static func check(_ txn: Snapshot, _ store: CollectionStore, live: [[UInt8]]) throws -> [String] {
        var problems: [String] = []
        var next = 0
        func name(_ id: some Swift.Collection<UInt8>) -> String { "'" + String(decoding: id, as: UTF8.self) + "'" }
        try txn.withCursor(store.ids) { c in
            try c.forEach { k, v in
                // Both lists are in key order: walk them together.
                while next < live.count, live[next].withUnsafeBytes({ compareStoredKeys($0, k) }) < 0 {
                    problems.append("\(store.key): the ID table misses live document \(name(live[next]))")
                    next += 1
                }
                if next < live.count, live[next].elementsEqual(k) {
                    next += 1
                } else {
                    problems.append("\(store.key): the ID table lists \(name(k)), which is not a live document")
                }
                if !v.isEmpty { problems.append("\(store.key): the ID table's entry for \(name(k)) has a value of \(v.count) bytes") }
                return problems.count < 100
            }
        }
        while next < live.count, problems.count < 100 {
            problems.append("\(store.key): the ID table misses live document \(name(live[next]))")
            next += 1
        }
        return problems
    }
}
