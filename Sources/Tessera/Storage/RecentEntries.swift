import LMDB

// A table with a small table of recent entries beside it (a value or array index: `IndexStore`).
//
// Keys of an index go to leaf pages all over its B-tree: a batch of 1,000 documents adds
// ~3,500 keys to a value and an array index, one or two per distinct value, and each lands on
// a different leaf page. LMDB copies every page a transaction changes and writes it whole at
// the commit, so at 1,000,000 documents each such batch wrote ~5 MB of index pages for ~140 KB
// of keys, and small batches spent most of their time copying pages (issue #19).
//
// New keys therefore go to a second table, the recent entries, which stays small (at most
// `RecentEntries.limit(mainEntries:)` entries: a few hundred pages): a batch rewrites those
// pages instead of thousands of pages of the big table. When the recent table would grow past
// its limit, the transaction moves all of it into the big one (`mergeRecent`), in key order,
// touching each leaf page there once for many batches' keys. A transaction that adds more keys than the
// limit (a bulk load) moves them as soon as it has held that many and writes the rest straight
// to the big table, as before.
//
// The two tables never hold the same key: a new key is absent from both (the index's keys end
// with the document ID, and the maintenance adds only keys the document did not have); a key
// whose value changes or that is deleted is changed where it is. Readers walk both as one
// (`Snapshot.cursor(_:recent:)`, LMDB's `Cursor(merging:_:)`); the entry count is the sum.

/// Limits of the recent entries beside an index.
enum RecentEntries {
    /// Most recent entries kept beside an index of `mainEntries` entries: a quarter of them,
    /// between 2,048 and 24,576. Batches of 1,000 into 1,000,000 documents wrote the least
    /// with 24,576 (3.85 GB in all, against 3.91 GB with 8,192 — merged three times as often —
    /// and 4.49 GB with 65,536, more of whose pages every batch rewrites).
    static func limit(mainEntries: Int) -> Int { min(max(mainEntries / 4, 2048), 24_576) }
}

extension Snapshot {
    /// A cursor over `table` and its recent entries as one table (a plain cursor over `table`
    /// when there are none).
    final func cursor(_ table: StorageTable, recent: StorageTable?) throws -> KeyCursor {
        guard let recent, try count(recent) > 0 else { return try cursor(table) }
        try writeOutHeld(table)
        let a = try lmdb.openCursor(table)
        do {
            return KeyCursor(Cursor(merging: a, try lmdb.openCursor(recent)))
        } catch {
            a.closeCursor()
            throw error
        }
    }

    /// Runs `body` with a cursor over `table` and its recent entries as one table, closed
    /// afterwards.
    final func withCursor<R>(_ table: StorageTable, recent: StorageTable?, _ body: (KeyCursor) throws -> R) throws -> R {
        let c = try cursor(table, recent: recent)
        defer { c.close() }
        return try body(c)
    }

    /// The number of entries of `table` and its recent entries.
    final func count(_ table: StorageTable, recent: StorageTable?) throws -> Int {
        try count(table) + (recent.map { try count($0) } ?? 0)
    }
}

extension WriteTransaction {
    /// Stores a key that is in neither `table` nor `recent`: in `recent`, unless this
    /// transaction moved `recent` into `table` already (it then writes `table` directly).
    @inline(__always)
    func putNew(_ table: StorageTable, recent: StorageTable, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws {
        try put(hasMergedRecent(recent) ? table : recent, key: key, value: value)
    }

    /// Replaces the value of a key stored in `table` or `recent`, where it is.
    func replace(_ table: StorageTable, recent: StorageTable, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws {
        try put(try get(recent, key: key) != nil ? recent : table, key: key, value: value)
    }

    /// Deletes `key` from `recent` or `table`, wherever it is. When both hold their writes
    /// back (a large transaction), the delete is held for both without looking the key up in
    /// either (`deleteIfPresent`; the write-out passes over the table that does not have it):
    /// two searches per deleted key were most of an update's index maintenance.
    func delete(_ table: StorageTable, recent: StorageTable, key: UnsafeRawBufferPointer) throws {
        if deferred != nil, held(recent) != nil, held(table) != nil {
            try deleteIfPresent(recent, key: key)
            try deleteIfPresent(table, key: key)
            return
        }
        if try delete(recent, key: key) { return }
        try delete(table, key: key)
    }

    /// Starts holding back the puts of `recent` and of `table` (for the keys changed there):
    /// the write-out puts them in key order through one cursor.
    func deferRecent(_ table: StorageTable, recent: StorageTable) {
        deferPuts(in: table)
        deferPuts(in: recent)
    }

    /// Moves `recent` into `table` when it holds more than its limit (counting the puts it
    /// holds back), or always with `force`; false when it stays.
    @discardableResult
    func settleRecent(_ table: StorageTable, recent: StorageTable, force: Bool = false) throws -> Bool {
        if hasMergedRecent(recent) { return false }
        let stored = try lmdb.count(recent)
        // Held deletes do not count: most are of keys in `table` (`delete(_:recent:key:)`).
        let held = held(recent)?.putCount ?? 0
        if stored + held == 0 { return false }
        // The stored count: counting held puts of `table` would write them out.
        let limit = RecentEntries.limit(mainEntries: try lmdb.count(table))
        if !force && stored + held <= limit { return false }
        try mergeRecent(table, recent: recent)
        return true
    }

    /// Moves every entry of `recent` into `table` through `table`'s held-back puts (written in
    /// key order at the commit), and writes this transaction's later new keys straight to
    /// `table` (`putNew`).
    private func mergeRecent(_ table: StorageTable, recent: StorageTable) throws {
        deferPuts(in: table)
        let d = held(recent)
        if try lmdb.count(recent) > 0 {
            try lmdb.withCursor(recent) { c in
                var ok = try c.first()
                while ok {
                    // A held put or delete of the key is newer than the stored entry.
                    if d?.lookup(c.key) == nil { try put(table, key: c.key, value: c.value) }
                    ok = try c.next()
                }
            }
            try lmdb.drop(recent, delete: false)
        }
        if let d {
            try d.forEachHeld { key, value in
                if let value { try put(table, key: key, value: value) }
            }
            d.discard()
        }
        mergedRecent.append(recent.dbi)
    }

    /// True once this transaction moved `recent` into its table.
    @inline(__always)
    func hasMergedRecent(_ recent: StorageTable) -> Bool {
        mergedRecent.isEmpty ? false : mergedRecent.contains(recent.dbi)
    }
}
