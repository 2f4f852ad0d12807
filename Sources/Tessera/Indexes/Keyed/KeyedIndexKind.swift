// Value and array indexes store one key per entry (`IndexKey`: the encoded values, the
// document ID and a trailer). The entry's value (`IndexKey.entryValue`, empty for most) says
// how many elements of the document gave that key (array indexes) and whether the key's
// values are exact (a covering scan reads the document when they are not). What differs
// between the kinds is only which entries a document contributes; maintenance, back-fill and
// the integrity check are shared.
// Keys are built into a `KeyArena` (no array per key), which merges a document's repeats of a
// key into one entry and tracks exactness; index expressions that are plain property paths
// are encoded from the binary document in place, with no `Value`, no evaluation context and
// no reference counting per document.

/// One index entry: its `IndexKey` and its stored value (tests, diagnostics).
struct KeyedEntry: Hashable {
    var key: [UInt8]
    var value: [UInt8] = []
}

/// An index kind whose entries are `IndexKey`s (value and array indexes).
protocol KeyedIndexKind: IndexKind {
    /// Appends the keys one document contributes to `arena` (in any order, repeats allowed:
    /// an entry counts its key's repeats); none when the document is outside the partial
    /// index's `where` or contributes nothing. `evaluation` makes the index's evaluation
    /// context the first time one is needed.
    func appendEntries(_ index: IndexStore, docID: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer,
                       evaluation: inout KeyedEvaluation, into arena: inout KeyArena)

    /// `appendEntries` from `head`, the body of the first piece of a record in two pieces
    /// (`RecordPieces.swift`), when it reads nothing of the document but what is whole in the
    /// head: a back-fill then reads the head alone. False, with nothing appended, when it
    /// would need the rest.
    func appendEntries(_ index: IndexStore, docID: UnsafeRawBufferPointer, head: UnsafeRawBufferPointer,
                       evaluation: inout KeyedEvaluation, into arena: inout KeyArena) -> Bool
}

/// A keyed kind whose entries stand for elements of documents' arrays (array indexes): an
/// entry counts the elements with its key.
protocol ElementIndexKind: KeyedIndexKind {
    /// The elements of a document whose entry key is `key`, one per occurrence (a covering
    /// scan reads them for an entry whose key was truncated).
    func elements(_ index: IndexStore, docID: String, body: UnsafeRawBufferPointer, context ctx: ExecContext,
                  key: UnsafeRawBufferPointer) -> [Value]

    /// True when `elements` reads nothing of a document but what is whole in `head`, the
    /// head of a record in two pieces (`RecordPieces.swift`).
    func elementsAreWhole(_ index: IndexStore, in head: BinaryValue) -> Bool
}

/// Evaluates a keyed index's definition on documents: an `ExecContext` is made only for
/// definitions that need one (a `where`, or expressions other than plain paths).
struct KeyedEvaluation {
    let index: IndexStore
    let snapshot: Snapshot
    private var made: ExecContext?
    /// Whether plain paths are looked up with hints (walks over many documents).
    private let hinted: Bool
    /// Per plain path of the index, where its first member was found in the last document
    /// (`CompiledPath.lookup(in:hint:)`).
    private var hints: [Int] = []
    /// The index's plain paths (`IndexStore.plainPaths`; empty when it has none), kept here so
    /// that reading them for each document retains nothing: a back-fill's two threads would
    /// otherwise write the same arrays' reference counts from both cores.
    private let paths: [CompiledPath]

    /// An evaluation for `index`'s definition reading `snapshot`; `hinted` for one that will
    /// see many documents (a back-fill or check), where lookups remember positions.
    init(index: IndexStore, snapshot: Snapshot, hinted: Bool = false) {
        self.hinted = hinted
        self.index = index
        self.snapshot = snapshot
        self.paths = index.plainPaths ?? []
        // One per plain path for a walk; a single document's evaluation (a save) allocates none.
        if hinted { self.hints = Array(repeating: Int.max, count: max(paths.count, 1)) }
    }

    /// The index's evaluation context, reused across documents.
    mutating func context() -> ExecContext {
        if let made { return made }
        let c = index.makeContext(snapshot)
        made = c
        return c
    }

    /// The value at `path` in `root` (nil when absent), looked up with hint number `i` (one
    /// per path the kind reads).
    @inline(__always)
    mutating func lookup(_ path: CompiledPath, hint i: Int, in root: BinaryValue) -> BinaryValue? {
        guard hinted else { return path.lookup(in: root) }
        if hints.count <= i { hints += Array(repeating: Int.max, count: i + 1 - hints.count) }
        return path.lookup(in: root, hint: &hints[i])
    }

    /// True when the index's expressions are all plain paths (`IndexStore.plainPaths`), read
    /// in place by `forEachPlainValue`.
    var hasPlainPaths: Bool { !paths.isEmpty }

    /// Calls `body` with the value of each of the index's plain paths in `root` (nil when
    /// absent), in order; `body` returns false to stop. False if it stopped.
    @inline(__always)
    mutating func forEachPlainValue(in root: BinaryValue, _ body: (BinaryValue?) -> Bool) -> Bool {
        // p[i] is read in place: no copy of the path, no retain.
        guard hinted else {
            return paths.withUnsafeBufferPointer { p in
                for i in p.indices where !body(p[i].lookup(in: root)) { return false }
                return true
            }
        }
        return paths.withUnsafeBufferPointer { p in
            hints.withUnsafeMutableBufferPointer { h in
                for i in p.indices where !body(p[i].lookup(in: root, hint: &h[i])) { return false }
                return true
            }
        }
    }
}

extension KeyedIndexKind {
    /// A keyed index keeps its recent entries beside its main table (`RecentEntries.swift`).
    static var extraTableSuffixes: [String] { [":recent"] }

    /// Moves the recent entries into the main table (as full-text indexes merge their
    /// segments) and recomputes the planner statistics from the index as it is now.
    func optimize(_ index: IndexStore, txn: WriteTransaction, meta: StorageTable) throws {
        try txn.settleRecent(index.table, recent: index.recent!, force: true)
        try IndexStatistics.refresh(index, txn: txn, meta: meta)
    }

    /// The entries of one document, sorted by key (tests, diagnostics).
    func entries(_ index: IndexStore, docID: String, body: UnsafeRawBufferPointer, snapshot: Snapshot) -> [KeyedEntry] {
        var arena = KeyArena()
        var evaluation = KeyedEvaluation(index: index, snapshot: snapshot)
        var id = docID
        id.withUTF8 { appendEntries(index, docID: UnsafeRawBufferPointer($0), body: body, evaluation: &evaluation, into: &arena) }
        return arena.sortedEntries().map {
            KeyedEntry(key: arena.key($0.key), value: IndexKey.entryValue(occurrences: $0.occurrences, exact: $0.exact))
        }
    }

    func update(_ index: IndexStore, txn: WriteTransaction, docID: String,
                old: UnsafeRawBufferPointer?, new: UnsafeRawBufferPointer?) throws {
        let recent = index.recent!
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
        let before = arena.sortedEntries(from: 0, to: split)
        let after = arena.sortedEntries(from: split, to: arena.count)
        // Walk both sorted lists: keys only before are deleted, keys only after are added,
        // keys in both are overwritten only if their stored value changed (an unchanged
        // document touches no page).
        var i = 0, j = 0
        while i < before.count || j < after.count {
            let c: Int
            if i == before.count { c = 1 } else if j == after.count { c = -1 } else {
                c = arena.withKey(before[i].key) { a in arena.withKey(after[j].key) { b in compareStoredKeys(a, b) } }
            }
            // New keys go to the index's recent entries; changed and deleted ones are found
            // where they are (`RecentEntries.swift`).
            if c < 0 {
                try arena.withKey(before[i].key) { try txn.delete(index.table, recent: recent, key: $0) }
                i += 1
            } else {
                let e = after[j]
                if c > 0 {
                    try Self.withEntryValue(e) { value in try arena.withKey(e.key) { try txn.putNew(index.table, recent: recent, key: $0, value: value) } }
                } else if before[i].occurrences != e.occurrences || before[i].exact != e.exact {
                    try Self.withEntryValue(e) { value in try arena.withKey(e.key) { try txn.replace(index.table, recent: recent, key: $0, value: value) } }
                }
                if c == 0 { i += 1 }
                j += 1
            }
        }
    }

    /// Calls `body` with the stored value of `entry` (`IndexKey.entryValue`; no allocation
    /// for the common empty value).
    @inline(__always)
    static func withEntryValue<R>(_ entry: KeyArena.Entry, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if entry.occurrences == 1 && entry.exact { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try IndexKey.entryValue(occurrences: entry.occurrences, exact: entry.exact).withUnsafeBytes(body)
    }

    /// Appends one document's keys (a document-table entry) to `arena`; a damaged ID throws
    /// when `damagedID` is true and is skipped otherwise (the document check reports it).
    /// A record in two pieces is read from its head alone when the entries are whole in it
    /// and `headAlone` allows.
    @inline(__always)
    private func appendDocument(_ index: IndexStore, record r: WalkedRecord, damagedID: Bool, headAlone: Bool,
                                evaluation: inout KeyedEvaluation, into arena: inout KeyArena) throws {
        guard let h = DocumentRecord.header(r.stored), !h.deleted else { return }
        let k = r.id
        guard k.count <= IndexKey.maxDocIDBytes else {
            if !damagedID { return }
            throw DatabaseError(.corrupt, "cannot index '\(index.collection)': a document ID of \(k.count) bytes is damaged")
        }
        let before = arena.count
        var body = DocumentRecord.body(r.stored)
        if r.isContinued {
            if !headAlone || !appendEntries(index, docID: k, head: body, evaluation: &evaluation, into: &arena) {
                body = DocumentRecord.body(try r.whole())
                appendEntries(index, docID: k, body: body, evaluation: &evaluation, into: &arena)
            }
        } else {
            appendEntries(index, docID: k, body: body, evaluation: &evaluation, into: &arena)
        }
        if arena.count - before == 1 { arena.noteLoneKey() }
    }

    /// Every document's keys into one buffer, in the documents table's order, each computed
    /// from the whole record (the integrity check's reference).
    private func allEntries(_ index: IndexStore, snapshot: Snapshot, docs: DocumentTables, damagedID: Bool) throws -> KeyArena {
        var arena = KeyArena(reservingBytes: 1 << 20)
        var evaluation = KeyedEvaluation(index: index, snapshot: snapshot, hinted: true)
        try docs.forEachStored(snapshot) { r in
            try appendDocument(index, record: r, damagedID: damagedID, headAlone: false, evaluation: &evaluation, into: &arena)
            return true
        }
        return arena
    }

    /// `allEntries` for a back-fill, with the keys grouped for the sort (`TupleGroups`; nil
    /// when they cannot be): the documents are read on both cores when the table is large
    /// (`PartitionedScan`), each piece into an arena of its own, joined in ID order and grouped
    /// as it is joined, while the other thread reads on.
    func allEntries(_ index: IndexStore, txn: WriteTransaction, docs: DocumentTables,
                    minimumDocuments: Int = PartitionedScan.minimumDocuments,
                    worker: WorkerThread? = nil) throws -> (KeyArena, TupleGroups?) {
        // Room for a key of about 32 bytes per document, joined piece after piece without
        // copying what is joined already (more grows the arena as usual).
        let documents = try txn.count(docs.records)
        var arena = KeyArena(reservingBytes: max(documents * 32, 1 << 16), keys: documents)
        var groups: TupleGroups? = TupleGroups(reservingKeys: documents)
        try PartitionedScan.run(docs, txn: txn, minimumDocuments: minimumDocuments, worker: worker) { snapshot in
            (arena: KeyArena(reservingBytes: 64 << 10), evaluation: KeyedEvaluation(index: index, snapshot: snapshot, hinted: true))
        } visit: { part, r in
            try self.appendDocument(index, record: r, damagedID: true, headAlone: true, evaluation: &part.evaluation, into: &part.arena)
        } consume: { part in
            let first = arena.count
            arena.append(contentsOf: part.arena)
            if groups?.add(arena, from: first) == false { groups = nil }
        }
        return (arena, groups)
    }

    /// Collects every entry, sorts them and appends them in key order; the planner statistics
    /// are taken from the sorted keys on the way (no second walk of the index). A large table
    /// gets one helper thread for the whole back-fill, started first (a thread takes a while
    /// to start): it reads half the documents, then fills the batches the writer appends
    /// (`PipelinedAppend`).
    func backfill(_ index: IndexStore, txn: WriteTransaction, docs: DocumentTables, meta: StorageTable) throws {
        let worker = try PartitionedScan.hasSecondCore && txn.count(docs.records) >= PartitionedScan.minimumDocuments
            ? WorkerThread(name: "tessera-backfill") : nil
        defer { worker?.stop() }
        let (arena, groups) = try allEntries(index, txn: txn, docs: docs, worker: worker)
        // allEntries reads the document table in ID order.
        let sorted = groups.map { arena.sortedEntries(grouped: $0) } ?? arena.sortedEntries()
        var statistics = IndexStatistics.Builder(entries: sorted.count, columns: index.expressions.count)
        try arena.withKeys { keys in
            let ahead = KeyArena.prefetchDistance
            try PipelinedAppend.run(count: sorted.count, txn: txn, table: index.table, worker: worker) { range, batch in
                for j in range {
                    // Keys in sorted order are scattered over the arena: request where one
                    // starts and ends well ahead, and its bytes a few ahead.
                    if j &+ 2 &* ahead < sorted.count { keys.prefetchBounds(sorted[j &+ 2 &* ahead].key) }
                    if j &+ ahead < sorted.count { keys.prefetchKey(sorted[j &+ ahead].key) }
                    let e = sorted[j]
                    let k = keys[e.key]
                    statistics.add(key: k)
                    // Copied: the writer's thread then reads the keys in order from one buffer.
                    Self.withEntryValue(e) { value in batch.add(copyingKey: k, value: value) }
                }
            }
        }
        try statistics.statistics.store(index, txn: txn, meta: meta)
    }

    func check(_ index: IndexStore, snapshot: Snapshot, docs: DocumentTables, entries count: inout Int) throws -> [String] {
        let arena = try allEntries(index, snapshot: snapshot, docs: docs, damagedID: false)
        let expected = arena.sortedEntries().map {
            KeyedEntry(key: arena.key($0.key), value: IndexKey.entryValue(occurrences: $0.occurrences, exact: $0.exact))
        }
        var actual: [KeyedEntry] = []
        try snapshot.withCursor(index.table, recent: index.recent) { c in
            try c.forEach { k, v in actual.append(KeyedEntry(key: Array(k), value: Array(v))); return true }
        }
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
