

/// How `save(document:concurrencyControl:)` resolves a concurrent change.
public enum ConcurrencyControl: Sendable {
    /// The save wins (default).
    case lastWriteWins
    /// The save fails (returns false) if the stored document changed since it was read.
    case failOnConflict
}

/// A collection of JSON documents in a scope.
///
/// Saves, deletes and purges are transactions of their own, or join the enclosing
/// `database.inBatch { }`. Every index of the collection is updated in the same transaction.
public final class Collection: @unchecked Sendable, CustomStringConvertible {
    // @unchecked Sendable: immutable references; all state lives in the database catalogue.

    /// The database that holds this collection.
    public let database: Database
    let key: CollectionKey

    init(database: Database, key: CollectionKey) {
        self.database = database
        self.key = key
    }

    /// The collection name.
    public var name: String { key.name }
    /// The scope name.
    public var scope: Scope { Scope(database: database, name: key.scope) }
    /// `scope.name`.
    public var fullName: String { key.fullName }
    /// `scope.name`.
    public var description: String { fullName }

    /// The collection's current store (tables and indexes), from the calling thread's write
    /// transaction if there is one.
    func currentStore() throws -> CollectionStore {
        try database.checkOpen()
        if let ctx = database.currentWrite() { return try ctx.store(key) }
        guard let s = database.catalog.withLock({ $0.collections[key] }) else {
            throw DatabaseError(.notFound, "collection '\(fullName)' does not exist (deleted?)")
        }
        return s
    }

    // MARK: - Reading

    /// The number of live (non-deleted) documents, read from the collection's counter in the
    /// current snapshot (or the thread's write transaction).
    ///
    /// - Throws: `.notOpen` if the database is closed, `.storage` if the read fails.
    public var count: Int {
        get throws {
            // Inside a batch, the count includes the batch's saves and deletes so far.
            if let ctx = database.currentWrite() { try ctx.flushCounters() }
            return try database.read { txn in
                Int(Int64(bitPattern: try WriteContext.readCounter(txn: txn, meta: database.metaTable, name: "count:" + fullName)))
            }
        }
    }

    /// The document with `id`, or nil if there is none or it is deleted.
    public func document(id: String) throws -> Document? {
        let store = try currentStore()
        return try database.read { txn -> Document? in
            guard let raw = try txn.get(store.docs, key: id), let h = DocumentRecord.header(raw), !h.deleted else { return nil }
            let head = DocumentRecord.body(raw)
            let body: [UInt8]
            if DocumentRecord.isContinued(raw) {
                // Both pieces straight into the document's own bytes.
                guard let tail = try txn.get(store.tails, key: id) else {
                    throw RecordAssembly.missingTail(named: id)
                }
                body = [UInt8](unsafeUninitializedCapacity: head.count + tail.count) { out, n in
                    let p = UnsafeMutableRawPointer(out.baseAddress!)
                    if head.count > 0 { p.copyMemory(from: head.baseAddress!, byteCount: head.count) }
                    if tail.count > 0 { (p + head.count).copyMemory(from: tail.baseAddress!, byteCount: tail.count) }
                    n = head.count + tail.count
                }
            } else {
                body = Array(head)
            }
            // The revision digest is the document's checksum (LMDB keeps none): a damaged
            // document is an error, never a silently different body.
            if body.withUnsafeBytes({ DocumentRecord.digest(generation: h.generation, body: $0) }) != h.digest {
                throw DatabaseError(.corrupt, "document '\(id)' in collection '\(fullName)' is damaged: its checksum does not "
                                    + "match its body (`tessera check` lists every damaged document)")
            }
            return Document(id: id, storedBody: body, header: h)
        }
    }

    /// True if a document (live or tombstone) is stored under `id`.
    public func record(exists id: String) throws -> Bool { try record(id: id) != nil }

    /// Metadata of a stored document, tombstones included (nil if absent or purged).
    func record(id: String) throws -> DocumentRecord? {
        let store = try currentStore()
        return try database.read { txn in try txn.get(store.docs, key: id).flatMap(DocumentRecord.header) }
    }

    // MARK: - Writing

    /// Saves a document, replacing its whole body.
    ///
    /// With `.failOnConflict`, returns false without writing if the stored document's revision
    /// is not the one `document` was read at. On success the document's `sequence` and
    /// `revisionID` are updated.
    ///
    /// - Throws: `.invalidDocumentID`, `.reservedKey`, `.notOpen`, `.storage`.
    @discardableResult
    public func save(document: MutableDocument, concurrencyControl: ConcurrencyControl = .lastWriteWins) throws -> Bool {
        try DocumentValidation.validateID(document.id)
        let body = document.properties
        try DocumentValidation.validateBody(body, id: document.id)
        let encoded = BinaryEncoder.encode(.object(body))
        let expected = concurrencyControl == .failOnConflict ? document.revisionID : nil
        let result = try write(id: document.id, body: encoded, deleting: false, expectedRevision: expected,
                               checkConflict: concurrencyControl == .failOnConflict)
        guard let record = result else { return false }
        let rev = record.revisionID
        document.state.withLock { s in
            s.sequence = record.sequence
            s.revisionID = rev
            s.isDeleted = false
        }
        return true
    }

    /// Saves a JSON object under `id` (parsed once, stored in binary form).
    ///
    /// - Throws: `.invalidJSON` with line and column, `.notAnObject`, `.reservedKey`, `.invalidDocumentID`.
    public func save(id: String, json: String) throws {
        // JSON text goes to the binary format in one pass, without building a Value.
        try write(id: id, prepared: Collection.prepare(id: id, json: json))
    }

    /// Saves a body already in the binary format (encoded from JSON text: `tessera import`).
    ///
    /// - Throws: `.notAnObject`, `.reservedKey`, `.invalidDocumentID`.
    package func save(id: String, encodedBody body: [UInt8]) throws {
        try DocumentValidation.validateID(id)
        try write(id: id, prepared: PreparedBody(id: id, encodedBody: body))
    }

    /// Saves a body checked and hashed beforehand (`PreparedBody`, made on another thread by
    /// `tessera import`): only the ID's rules and the write itself are left.
    ///
    /// - Throws: `.invalidDocumentID`, `.storage`.
    package func save(id: String, prepared: PreparedBody) throws {
        try DocumentValidation.validateID(id)
        try write(id: id, prepared: prepared)
    }

    /// Writes a checked body under an ID already validated.
    private func write(id: String, prepared: PreparedBody) throws {
        _ = try write(id: id, body: prepared.body, deleting: false, expectedRevision: nil, checkConflict: false,
                      digestIfNew: prepared.digestIfNew, fullText: prepared.fullText)
    }

    /// Writes a checked body under an ID already validated, under a sequence reserved for it
    /// (`WriteContext.reserveSequences`) whose entry in the by-sequence table the caller
    /// writes itself, at the end of its batch (`SequencesByPosition`).
    func write(id: String, prepared: PreparedBody, reserved: ReservedSequence) throws {
        _ = try write(id: id, body: prepared.body, deleting: false, expectedRevision: nil, checkConflict: false,
                      digestIfNew: prepared.digestIfNew, fullText: prepared.fullText, reserved: reserved)
    }

    /// Saves a body given as a dictionary of values under `id`.
    public func save(id: String, properties: [String: Value]) throws {
        try DocumentValidation.validateID(id)
        try DocumentValidation.validateBody(properties, id: id)
        _ = try write(id: id, body: BinaryEncoder.encode(.object(properties)), deleting: false, expectedRevision: nil, checkConflict: false)
    }

    /// Deletes a document: it becomes a tombstone (invisible to `document(id:)` and to queries
    /// that do not ask for `meta().deleted`), its sequence advances, and it leaves every index.
    ///
    /// - Throws: `.notFound` if there is no such live document.
    public func delete(document: Document, concurrencyControl: ConcurrencyControl = .lastWriteWins) throws {
        let result = try write(id: document.id, body: BinaryEncoder.encode(.object([:])), deleting: true,
                               expectedRevision: document.revisionID, checkConflict: concurrencyControl == .failOnConflict)
        if result == nil {
            throw DatabaseError(.conflict, "document '\(document.id)' in '\(fullName)' changed since it was read")
        }
    }

    /// Deletes the document with `id` (see `delete(document:)`).
    public func delete(id: String) throws {
        _ = try write(id: id, body: BinaryEncoder.encode(.object([:])), deleting: true, expectedRevision: nil, checkConflict: false)
    }

    /// Removes every trace of a document, tombstone included.
    ///
    /// - Throws: `.notFound` if there is no such document.
    public func purge(id: String) throws {
        try DocumentValidation.validateID(id)
        try database.write { ctx in
            let store = try ctx.store(key)
            guard let raw = try store.documents.record(id, txn: ctx.txn, buffer: ctx.oldRecord),
                  let old = DocumentRecord.header(raw) else {
                throw DatabaseError(.notFound, "no document '\(id)' in '\(fullName)' to purge")
            }
            if DocumentRecord.isContinued(raw) { try ctx.txn.delete(store.tails, key: Array(id.utf8)) }
            if !old.deleted {
                try IndexMaintenance.update(store: store, txn: ctx.txn, docID: id, old: DocumentRecord.body(raw), new: nil)
                try PrimaryKeyIDs.update(ctx.txn, store, id: Array(id.utf8), live: false, append: false)
                ctx.adjustCount(key, by: -1)
            }
            try ctx.txn.delete(store.bySequence, key: sequenceKey(old.sequence))
            try ctx.txn.delete(store.docs, key: Array(id.utf8))
            ctx.notePurge(key, id)
        }
    }

    /// Purges the document `document`.
    public func purge(document: Document) throws { try purge(id: document.id) }

    /// The core write: returns the stored record's header (its sequence and revision), or nil on
    /// a conflict. `digestIfNew` is the body's digest for generation 1, when the caller has it
    /// (`PreparedBody`): a new document then skips hashing its body here.
    private func write(id: String, body: [UInt8], deleting: Bool, expectedRevision: String?, checkConflict: Bool,
                       digestIfNew: UInt64? = nil, fullText: [PreparedFullText] = [],
                       reserved: ReservedSequence? = nil) throws -> DocumentRecord? {
        try DocumentValidation.validateID(id)
        return try database.write { ctx -> DocumentRecord? in
            let store = try ctx.store(key)
            let txn = ctx.txn
            let idBytes = Array(id.utf8)
            // A save appending in ID order past every stored ID replaces nothing: no lookup.
            let appendsPastEvery = ctx.sortsAfterEveryDocument(key, id: idBytes)
            let oldRaw = appendsPastEvery
                ? nil : try idBytes.withUnsafeBytes { try store.documents.record($0, txn: txn, buffer: ctx.oldRecord) }
            let old = oldRaw.flatMap(DocumentRecord.header)
            let oldContinued = oldRaw.map(DocumentRecord.isContinued) ?? false
            if checkConflict {
                let current = (old?.deleted ?? true) && expectedRevision == nil ? nil : old?.revisionID
                if current != expectedRevision { return nil }
            }
            if deleting && (old == nil || old!.deleted) {
                throw DatabaseError(.notFound, "no document '\(id)' in '\(fullName)' to delete")
            }
            // Index entries: old body's entries out, new body's in (only the difference is written).
            let oldBody = (old != nil && !old!.deleted) ? DocumentRecord.body(oldRaw!) : nil
            if !store.indexes.isEmpty { try ctx.noteIndexedWrite(key, store: store) }
            try body.withUnsafeBytes { newBody in
                // Entries tokenized before the transaction (`FullTextPreparer`) are the new
                // body's, for this call only.
                if !fullText.isEmpty { txn.preparedIndexEntries = fullText }
                defer { if !fullText.isEmpty { txn.preparedIndexEntries = nil } }
                try IndexMaintenance.update(store: store, txn: txn, docID: id, old: oldBody, new: deleting ? nil : newBody)
            }
            let seq: UInt64
            if let reserved {
                // The caller writes the entry of a reserved sequence at the end of its batch; the
                // entry of a sequence its batch reserved before was never written: only an older
                // one is deleted.
                seq = reserved.sequence
                if let old, old.sequence <= reserved.base { try ctx.deleteSequenceEntry(key, store: store, sequence: old.sequence) }
            } else {
                seq = try ctx.nextSequence(key)
                if let old { try ctx.deleteSequenceEntry(key, store: store, sequence: old.sequence) }
                // Sequences only grow: every one goes after the last.
                try txn.put(store.bySequence, key: sequenceKey(seq), value: idBytes, flags: .append)
            }
            let generation = (old?.generation ?? 0) &+ 1
            let digest = generation == 1 && digestIfNew != nil
                ? digestIfNew! : body.withUnsafeBytes { DocumentRecord.digest(generation: generation, body: $0) }
            let record = DocumentRecord(deleted: deleting, sequence: seq, generation: generation, digest: digest, expiration: 0)
            let flags = oldRaw == nil
                ? try ctx.placeNewDocument(key, store: store, id: idBytes, sortsAfterEveryDocument: appendsPastEvery) : []
            try idBytes.withUnsafeBytes { k in
                try body.withUnsafeBytes { src in
                    try txn.putRecord(store.documents, key: k, header: record, body: src, flags: flags, oldContinued: oldContinued,
                                      splitting: database.store.splitting)
                }
            }
            let wasLive = old != nil && !old!.deleted
            if wasLive == deleting {
                try PrimaryKeyIDs.update(txn, store, id: idBytes, live: !deleting, append: flags.contains(.append))
            }
            if deleting { if wasLive { ctx.adjustCount(key, by: -1) } } else if !wasLive { ctx.adjustCount(key, by: 1) }
            return record
        }
    }

    // MARK: - Iteration

    /// Calls `body` for each live document in ID order, inside one read snapshot.
    public func forEachDocument(_ body: (Document) throws -> Bool) throws {
        let store = try currentStore()
        try database.read { txn in
            try store.documents.forEach(txn) { k, v in
                guard let h = DocumentRecord.header(v), !h.deleted else { return true }
                let doc = Document(id: String(decoding: k, as: UTF8.self), storedBody: Array(DocumentRecord.body(v)), header: h)
                return try body(doc)
            }
        }
    }

    /// The IDs of live documents in ID order, at most `limit`.
    public func documentIDs(limit: Int? = nil) throws -> [String] {
        var ids: [String] = []
        try forEachDocument { doc in
            ids.append(doc.id)
            return limit.map { ids.count < $0 } ?? true
        }
        return ids
    }
}

/// Validation of document IDs and bodies (SPEC §1.1).
enum DocumentValidation {
    /// Longest document ID in UTF-8 bytes (index keys append the ID, LMDB keys stop at 511).
    static let maxIDLength = 250
    static let reservedKeys: Set<String> = ["_id", "_rev", "_deleted", "_attachments", "_removed"]

    static func validateID(_ id: String) throws {
        let n = id.utf8.count
        if n == 0 { throw DatabaseError(.invalidDocumentID, "document ID must not be empty") }
        if n > maxIDLength {
            throw DatabaseError(.invalidDocumentID, "document ID '\(id.prefix(40))…' is \(n) bytes long; the limit is \(maxIDLength)")
        }
    }

    static func validateBody(_ body: [String: Value], id: String) throws {
        for k in body.keys where reservedKeys.contains(k) {
            throw DatabaseError(.reservedKey, "document '\(id)': top-level key '\(k)' is reserved")
        }
        // The body object is level 1; JSON text is held to the same limit by JSONReader.
        for v in body.values where !withinDepth(v, levelsLeft: JSONReader.defaultMaxDepth - 1) {
            throw DatabaseError(.tooDeep, "document '\(id)': arrays and objects are nested deeper than \(JSONReader.defaultMaxDepth) levels")
        }
    }

    /// True if `value` has at most `levelsLeft` levels of nested arrays and objects
    /// (recursion stops at the limit, so it is bounded whatever the value).
    static func withinDepth(_ value: Value, levelsLeft: Int) -> Bool {
        switch value {
        case .array(let a):
            guard levelsLeft > 0 else { return false }
            for e in a where !withinDepth(e, levelsLeft: levelsLeft - 1) { return false }
            return true
        case .object(let o):
            guard levelsLeft > 0 else { return false }
            for e in o.values where !withinDepth(e, levelsLeft: levelsLeft - 1) { return false }
            return true
        default:
            return true
        }
    }
}

/// A document body in the binary format, checked against SPEC §1.1's rules for bodies and
/// hashed for a first revision, with no database at hand: the work of a save that does not
/// need the write transaction. `tessera import` prepares bodies on a second thread while
/// the writer saves the ones before them (`Collection.save(id:prepared:)`).
package struct PreparedBody: Sendable {
    /// The binary document (header and root object).
    package let body: [UInt8]
    /// The revision digest of `body` at generation 1 (a document's first revision).
    let digestIfNew: UInt64
    /// Full-text entries of `body` made beforehand (`FullTextPreparer`); the save uses those
    /// of an index whose definition they match and tokenizes for any other.
    package var fullText: [PreparedFullText] = []

    /// Checks `encodedBody` (an object without reserved top-level keys) and hashes it.
    ///
    /// - Parameter id: the document's ID for error messages, when it is known already.
    /// - Throws: `.invalidJSON`, `.notAnObject`, `.reservedKey`.
    package init(id: String?, encodedBody: [UInt8]) throws {
        func what() -> String { id.map { "document '\($0)'" } ?? "the document" }
        try encodedBody.withUnsafeBytes { raw in
            guard let root = BinaryValue.root(raw) else {
                throw DatabaseError(.invalidJSON, "\(what()): the body could not be encoded")
            }
            guard root.kind == .object else {
                throw DatabaseError(.notAnObject, "\(what()): the body must be a JSON object, not \(root.toValue().typeName)")
            }
            // Every reserved key starts with "_": most bodies have no such key at all.
            if root.hasKey(startingWith: UInt8(ascii: "_")) {
                for k in DocumentValidation.reservedKeys.sorted() where root.member(k) != nil {
                    throw DatabaseError(.reservedKey, "\(what()): top-level key '\(k)' is reserved")
                }
            }
        }
        body = encodedBody
        digestIfNew = encodedBody.withUnsafeBytes { DocumentRecord.digest(generation: 1, body: $0) }
    }
}

extension FullTextPreparer {
    /// Adds the full-text entries of `prepared`'s body for each covered index.
    package func prepare(_ prepared: inout PreparedBody) {
        guard !isEmpty else { return }
        prepared.fullText = prepared.body.withUnsafeBytes { entries(forBody: $0) }
    }
}

extension FullTextRunPreparer {
    /// Adds the full-text entries of `prepared`'s body for each covered index, each in the
    /// current run of its index.
    package func prepare(_ prepared: inout PreparedBody) {
        preparer.prepare(&prepared)
        addToRuns(&prepared.fullText)
    }
}

extension Collection {
    /// A preparer of full-text entries for this collection's current indexes (`tessera
    /// import` runs it on its parser thread).
    package func fullTextPreparer() throws -> FullTextPreparer {
        FullTextPreparer(store: try currentStore())
    }
}
