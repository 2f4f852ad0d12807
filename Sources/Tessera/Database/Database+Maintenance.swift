

/// Maintenance operations (`Database.performMaintenance(_:)`).
public enum MaintenanceType: Sendable {
    /// Rewrites the data file without its free pages (space left by updates and deletes),
    /// giving that space back to the file system. The database stays open and usable:
    /// reads go on during the copy, and transactions wait only while the new file is swapped
    /// in. Throws `.busy` when another process has the database open, or when called inside
    /// a batch or while this thread reads a result set. Nothing is lost if the process dies
    /// halfway: the new file replaces the old one atomically.
    case compact
    /// Recompute every index from the documents and compare; check counters and the
    /// by-sequence table. Reports each difference; changes nothing.
    case integrityCheck
    /// Brings every index's upkeep up to date without changing what it answers: moves the
    /// recent entries of value and array indexes into their main tables and recomputes their
    /// planner statistics, merges full-text indexes' waiting segments, and drops from them
    /// the entries of documents that changed or were deleted since their last vacuum (queries
    /// skip those entries but still read them; a save vacuums on its own once they reach half
    /// the live documents). Runs in one write transaction (inside a batch: the batch's).
    case optimize
}

/// What an integrity check found.
public struct IntegrityReport: Sendable, CustomStringConvertible {
    /// One line per problem (empty when everything is consistent).
    public var problems: [String] = []
    /// Documents checked.
    public var documents = 0
    /// Index entries checked.
    public var indexEntries = 0
    /// True when no problem was found.
    public var isOK: Bool { problems.isEmpty }
    /// A summary line, then the problems.
    public var description: String {
        ([isOK ? "ok: \(documents) documents, \(indexEntries) index entries" : "\(problems.count) problem(s) in \(documents) documents, \(indexEntries) index entries"]
            + problems).joined(separator: "\n")
    }
}

extension Database {
    /// Runs a maintenance operation; `.integrityCheck` returns what it found (other
    /// operations return an empty report).
    @discardableResult
    public func performMaintenance(_ type: MaintenanceType) throws -> IntegrityReport {
        switch type {
        case .integrityCheck: return try integrityCheck()
        case .compact:
            try compact()
            return IntegrityReport()
        case .optimize:
            try optimize()
            return IntegrityReport()
        }
    }

    /// `performMaintenance(.optimize)`: every index of every collection, in one write.
    func optimize() throws {
        try checkOpen()
        try write { ctx in
            try ctx.txn.flushPendingWork()
            for key in ctx.catalog.collections.keys.sorted() {
                for index in ctx.catalog.collections[key]!.indexes {
                    try index.kind.optimize(index, txn: ctx.txn, meta: metaTable)
                }
            }
        }
    }

    /// Compacts the data file (`performMaintenance(.compact)`), telling the sizes before and after.
    @discardableResult
    package func compact() throws -> CompactionSummary {
        try checkOpen()
        if currentWrite() != nil {
            throw DatabaseError(.busy, "cannot compact database '\(name)' inside a batch")
        }
        return try store.compact()
    }

    /// Live and free pages of the data file (`tessera stats`).
    package func storageSpace() throws -> StorageSpace {
        try checkOpen()
        return try store.space()
    }

    func integrityCheck() throws -> IntegrityReport {
        // Inside a batch: check what the transaction has written so far, counters included.
        let inBatch = currentWrite()
        try inBatch?.flushCounters()
        let catalog = inBatch?.catalog ?? catalog.withLock { $0 }
        var report = IntegrityReport()
        // One snapshot per collection: a collection whose pages are damaged is reported (the
        // snapshot that met the damage is abandoned) and the others are still checked.
        for key in catalog.collections.keys.sorted() {
            do {
                try checkCollection(key, store: catalog.collections[key]!, into: &report)
            } catch let e as DatabaseError where e.code == .corrupt {
                report.problems.append("\(key): cannot be read to the end: \(e.message)")
            }
        }
        return report
    }

    private func checkCollection(_ key: CollectionKey, store: CollectionStore, into report: inout IntegrityReport) throws {
        try read { txn in
            var live = 0
            var sequences: [UInt64: String] = [:]
            var liveIDs: [[UInt8]] = []
            var continued = 0
            let pieces = RecordBuffer()
            try txn.withCursor(store.docs) { c in
                try c.forEach { k, stored in
                    let id = String(decoding: k, as: UTF8.self)
                    guard k.count <= IndexKey.maxDocIDBytes, !k.isEmpty else {
                        report.problems.append("\(key): a document ID of \(k.count) bytes is damaged (IDs have 1 to \(IndexKey.maxDocIDBytes))")
                        return true
                    }
                    guard let h = DocumentRecord.header(stored) else {
                        report.problems.append("\(key): document '\(id)' has a damaged header")
                        return true
                    }
                    let v: UnsafeRawBufferPointer
                    if DocumentRecord.isContinued(stored) {
                        guard let tail = try txn.get(store.tails, key: k) else {
                            report.problems.append("\(key): document '\(id)' misses the second piece of its record")
                            return true
                        }
                        continued += 1
                        v = pieces.assemble(head: stored, tail: tail)
                    } else {
                        v = stored
                    }
                    // The revision digest is a checksum of the generation and the body.
                    if DocumentRecord.digest(generation: h.generation, body: DocumentRecord.body(v)) != h.digest {
                        report.problems.append("\(key): document '\(id)' is damaged (its body does not match its checksum)")
                    }
                    if !h.deleted {
                        live += 1
                        liveIDs.append(Array(k))
                        if BinaryValue.root(DocumentRecord.body(v)).map({ $0.isValid }) != true {
                            report.problems.append("\(key): document '\(id)' has a damaged body")
                        }
                    }
                    sequences[h.sequence] = id
                    return true
                }
            }
            report.documents += live
            // Every second piece belongs to a record that says it continues.
            let tails = try txn.count(store.tails)
            if tails != continued {
                try txn.withCursor(store.tails) { c in
                    try c.forEach { k, _ in
                        if let head = try txn.get(store.docs, key: k), DocumentRecord.isContinued(head) { return true }
                        report.problems.append("\(key): a second record piece under '\(String(decoding: k, as: UTF8.self))' belongs to no document")
                        return true
                    }
                }
            }
            let counted = Int(Int64(bitPattern: try WriteContext.readCounter(txn: txn, meta: metaTable, name: "count:" + key.fullName)))
            if counted != live { report.problems.append("\(key): document count says \(counted), found \(live) live documents") }
            var bySeq = 0
            let lastSeq = try WriteContext.readCounter(txn: txn, meta: metaTable, name: "seq:" + key.fullName)
            try txn.withCursor(store.bySequence) { c in
                try c.forEach { k, v in
                    bySeq += 1
                    guard k.count == 8 else { report.problems.append("\(key): bad by-sequence key"); return true }
                    let seq = UInt64(bigEndian: k.loadUnaligned(as: UInt64.self))
                    let id = String(decoding: v, as: UTF8.self)
                    if sequences[seq] != id { report.problems.append("\(key): by-sequence entry \(seq) → '\(id)' does not match a document") }
                    if seq > lastSeq { report.problems.append("\(key): sequence \(seq) is above the collection's last sequence \(lastSeq)") }
                    return true
                }
            }
            report.problems += try PrimaryKeyIDs.check(txn, store, live: liveIDs)
            if bySeq != sequences.count { report.problems.append("\(key): \(sequences.count) documents but \(bySeq) by-sequence entries") }
            for index in store.indexes {
                report.problems += try index.check(snapshot: txn, docs: store.documents, entries: &report.indexEntries)
            }
        }
    }
}
