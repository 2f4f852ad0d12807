// Value and array indexes store one key per entry (`IndexKey`: the encoded values, the
// document ID and a trailer) with an empty value. What differs between them is only which
// entries a document contributes; maintenance, back-fill and the integrity check are shared.
// Keys are built into a `KeyArena` (no array per key); index expressions that are plain
// property paths are encoded from the binary document in place, with no `Value`, no
// evaluation context and no reference counting per document.

/// An index kind whose entries are `IndexKey`s (value and array indexes).
protocol KeyedIndexKind: IndexKind {
    /// Appends the keys one document contributes to `arena` (in any order, repeats allowed);
    /// none when the document is outside the partial index's `where` or contributes nothing.
    /// `evaluation` makes the index's evaluation context the first time one is needed.
    func appendEntries(_ index: IndexStore, docID: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer,
                       evaluation: inout KeyedEvaluation, into arena: inout KeyArena)
}

/// Evaluates a keyed index's definition on documents: an `ExecContext` is made only for
/// definitions that need one (a `where`, or expressions other than plain paths).
struct KeyedEvaluation {
    let index: IndexStore
    let snapshot: Snapshot
    private var made: ExecContext?

    init(index: IndexStore, snapshot: Snapshot) {
        self.index = index
        self.snapshot = snapshot
    }

    /// The index's evaluation context, reused across documents.
    mutating func context() -> ExecContext {
        if let made { return made }
        let c = index.makeContext(snapshot)
        made = c
        return c
    }

}

extension KeyedIndexKind {
    /// The keys of one document as arrays, sorted, without repeats (tests, diagnostics).
    func entries(_ index: IndexStore, docID: String, body: UnsafeRawBufferPointer, snapshot: Snapshot) -> [[UInt8]] {
        var arena = KeyArena()
        var evaluation = KeyedEvaluation(index: index, snapshot: snapshot)
        var id = docID
        id.withUTF8 { appendEntries(index, docID: UnsafeRawBufferPointer($0), body: body, evaluation: &evaluation, into: &arena) }
        return arena.sortedUniqueOrder().map { arena.key($0) }
    }

    func update(_ index: IndexStore, txn: WriteTransaction, docID: String,
                old: UnsafeRawBufferPointer?, new: UnsafeRawBufferPointer?) throws {
        var evaluation = KeyedEvaluation(index: index, snapshot: txn)
        // Old keys first, then new ones, in one buffer.
        var arena = KeyArena(reservingBytes: 128)
        var id = docID
        let split = id.withUTF8 { p -> Int in
            let idBytes = UnsafeRawBufferPointer(p)
            if let old { appendEntries(index, docID: idBytes, body: old, evaluation: &evaluation, into: &arena) }
            let split = arena.count
            if let new { appendEntries(index, docID: idBytes, body: new, evaluation: &evaluation, into: &arena) }
            return split
        }
        let before = arena.sortedUniqueOrder(from: 0, to: split)
        let after = arena.sortedUniqueOrder(from: split, to: arena.count)
        // Walk both sorted lists: keys only before are deleted, keys only after are added,
        // keys in both are left alone (an unchanged document touches no page).
        var i = 0, j = 0
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        while i < before.count || j < after.count {
            let c: Int
            if i == before.count { c = 1 } else if j == after.count { c = -1 } else {
                c = arena.withKey(before[i]) { a in arena.withKey(after[j]) { b in compareStoredKeys(a, b) } }
            }
            if c < 0 {
                try arena.withKey(before[i]) { _ = try txn.delete(index.table, key: $0) }
                i += 1
            } else if c > 0 {
                try arena.withKey(after[j]) { _ = try txn.put(index.table, key: $0, value: empty) }
                j += 1
            } else {
                i += 1
                j += 1
            }
        }
    }

    /// Every document's keys into one buffer, in the documents table's order.
    private func allEntries(_ index: IndexStore, snapshot: Snapshot, docs: StorageTable, damagedID: Bool) throws -> KeyArena {
        var arena = KeyArena(reservingBytes: 1 << 20)
        var evaluation = KeyedEvaluation(index: index, snapshot: snapshot)
        try snapshot.withCursor(docs) { c in
            try c.forEach { k, v in
                guard let h = DocumentRecord.header(v), !h.deleted else { return true }
                guard k.count <= IndexKey.maxDocIDBytes else {
                    // A damaged ID is reported by the document check.
                    if !damagedID { return true }
                    throw DatabaseError(.corrupt, "cannot index '\(index.collection)': a document ID of \(k.count) bytes is damaged")
                }
                appendEntries(index, docID: k, body: DocumentRecord.body(v), evaluation: &evaluation, into: &arena)
                return true
            }
        }
        return arena
    }

    /// Collects every entry, sorts them and appends them in key order.
    func backfill(_ index: IndexStore, txn: WriteTransaction, docs: StorageTable) throws {
        let arena = try allEntries(index, snapshot: txn, docs: docs, damagedID: true)
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        for i in arena.sortedUniqueOrder() {
            try arena.withKey(i) { _ = try txn.put(index.table, key: $0, value: empty, flags: .append) }
        }
    }

    func check(_ index: IndexStore, snapshot: Snapshot, docs: StorageTable, entries count: inout Int) throws -> [String] {
        let arena = try allEntries(index, snapshot: snapshot, docs: docs, damagedID: false)
        let expected = arena.sortedUniqueOrder().map { arena.key($0) }
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
