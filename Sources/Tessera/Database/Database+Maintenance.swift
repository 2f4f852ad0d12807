import LMDB

/// Maintenance operations (`Database.performMaintenance(_:)`).
public enum MaintenanceType: Sendable {
    /// Recompute every index from the documents and compare; check counters and the
    /// by-sequence table. Reports each difference; changes nothing.
    case integrityCheck
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
    /// Runs a maintenance operation; `.integrityCheck` returns what it found.
    @discardableResult
    public func performMaintenance(_ type: MaintenanceType) throws -> IntegrityReport {
        switch type {
        case .integrityCheck: return try integrityCheck()
        }
    }

    func integrityCheck() throws -> IntegrityReport {
        // Inside a batch: check what the transaction has written so far, counters included.
        let inBatch = WriteContext.current.flatMap { $0.database === self ? $0 : nil }
        try inBatch?.flushCounters()
        let catalog = inBatch?.catalog ?? catalog.withLock { $0 }
        var report = IntegrityReport()
        try read { txn in
            for key in catalog.collections.keys.sorted() {
                let store = catalog.collections[key]!
                var live = 0
                var sequences: [UInt64: String] = [:]
                try txn.withCursor(store.docs) { c in
                    try c.forEach { k, v in
                        let id = String(decoding: k, as: UTF8.self)
                        guard let h = DocumentRecord.header(v) else {
                            report.problems.append("\(key): document '\(id)' has a damaged header")
                            return true
                        }
                        if !h.deleted {
                            live += 1
                            if BinaryValue.root(DocumentRecord.body(v)).map({ $0.isValid }) != true {
                                report.problems.append("\(key): document '\(id)' has a damaged body")
                            }
                        }
                        sequences[h.sequence] = id
                        return true
                    }
                }
                report.documents += live
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
                if bySeq != sequences.count { report.problems.append("\(key): \(sequences.count) documents but \(bySeq) by-sequence entries") }
                for index in store.indexes {
                    report.problems += try index.check(txn: txn, docs: store.docs, entries: &report.indexEntries)
                }
            }
        }
        return report
    }
}

extension IndexStore {
    /// Compares the stored entries with those recomputed from the documents.
    func check(txn: Transaction, docs: Table, entries count: inout Int) throws -> [String] {
        if let fullText {
            return try DatabaseError.checkingFullText(index: definition.name) { try fullText.check(store: self, txn: txn, docs: docs, entries: &count) }
        }
        var expected: [[UInt8]] = []
        try txn.withCursor(docs) { c in
            try c.forEach { k, v in
                guard let h = DocumentRecord.header(v), !h.deleted else { return true }
                expected += entries(docID: String(decoding: k, as: UTF8.self), body: DocumentRecord.body(v), txn: txn)
                return true
            }
        }
        expected.sort { $0.lexicographicallyPrecedes($1) }
        var actual: [[UInt8]] = []
        try txn.withCursor(table) { c in try c.forEach { k, _ in actual.append(Array(k)); return true } }
        count += actual.count
        var problems: [String] = []
        let name = "\(collection):\(definition.name)"
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
