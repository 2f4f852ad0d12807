import Dispatch

/// Maintains a full-text index in LMDB and reads it back for `MATCH()`.
///
/// Tables (layout in `FullTextPostingsCodec`): postings `idx:<scope>.<coll>:<name>` hold one
/// entry per (term, block of documents); `…:stats` numbers the documents and keeps the corpus
/// totals.
///
/// A save tokenizes the old and new text and, in the document's transaction, numbers the
/// document and queues the postings that changed (`FullTextPendingChanges`); the queue is
/// merged into the blocks before the transaction commits (or before anything reads the index
/// inside it), one seek per changed term, so a batch of saves rewrites each block once.
final class FullTextIndexKind: IndexKind, @unchecked Sendable {
    // @unchecked Sendable: immutable after init; the tokenizer is Sendable (pooled workspaces).
    let definition: IndexDefinition
    let tokenizer: FullTextTokenizer
    /// Column names for `column:term` searches: the index expressions as written.
    let columns: [String]

    static let type = IndexType.fullText
    /// `…:stats`: document numbering and corpus totals; `…:segments`: postings of small
    /// transactions waiting to be merged into the blocks (format 9; see
    /// `FullTextPostingsCodec`).
    static let extraTableSuffixes = [":stats", ":segments"]
    static let answersMatch = true
    /// Format 1 stored one postings entry per (term, document ID); formats 1 and 2 gave stop
    /// words a position and indexed integral Doubles without `.0` (SPEC §10.1 step 6, §5.5).
    static func needsRebuild(fromFormat format: UInt32) -> Bool { format < 3 }

    /// Formats 7 and 8 kept waiting segments at the end of the statistics table
    /// (`FullTextPostingsCodec.legacySegmentKeyPrefix`); format 9 keeps them in `…:segments`,
    /// under the same keys without that prefix. Moves them, in key order.
    func upgrade(_ store: IndexStore, txn: WriteTransaction, fromFormat format: UInt32) throws {
        guard format < 9, let stats = store.statsTable, let segments = store.segmentsTable else { return }
        let legacy = FullTextPostingsCodec.legacySegmentKeyPrefix
        var moved: [([UInt8], [UInt8])] = []
        try txn.withCursor(stats) { c in
            try c.forEach(prefix: legacy) { k, v in
                moved.append((Array(k[legacy.count...]), Array(v)))
                return true
            }
        }
        guard !moved.isEmpty else { return }
        try txn.deleteAll(stats, prefix: legacy)
        for (key, value) in moved { try txn.put(segments, key: key, value: value, flags: .append) }
    }

    static let optionKeys: Set<String> = ["language", "ignoreAccents"]

    /// `language` absent → "en" (the conformance default), null → "" (no stemming).
    static func options(fromJSON o: [String: Value]) throws -> [String: Value] {
        var out: [String: Value] = [:]
        switch o["language"] {
        case nil: out["language"] = "en"
        case .null?: out["language"] = ""
        case .string(let s)?: out["language"] = .string(s)
        default: throw DatabaseError(.invalidIndex, "'language' must be a string or null")
        }
        if o["ignoreAccents"]?.boolValue == true { out["ignoreAccents"] = true }
        return out
    }

    static func summary(_ d: IndexDefinition) -> String {
        "fulltext (" + d.expressions.joined(separator: ", ") + ")"
            + " language=" + (d.language.map { $0.isEmpty ? "none" : $0 } ?? "en")
            + (d.ignoreAccents ? " ignoreAccents" : "")
    }

    convenience init(definition: IndexDefinition, compiled: CompiledIndexDefinition) throws {
        self.init(definition: definition)
    }

    init(definition: IndexDefinition) {
        self.definition = definition
        tokenizer = FullTextTokenizer(language: FullTextLanguage(definition.language ?? "en"), ignoreAccents: definition.ignoreAccents)
        var cols: [String] = []
        for text in definition.expressions {
            if let list = try? SQLParser.parseExpressionList(text) {
                cols += list.map { SQLPrinter.print($0) }
            }
        }
        columns = cols
    }

    // MARK: - Tokenized documents

    /// One document's postings: per distinct term its UTF-8 bytes and its entry body
    /// (frequency, length, positions), in order of first occurrence.
    struct DocumentTerms {
        var termBytes: [UInt8] = []
        var termEnds: [Int] = []
        var bodies: [UInt8] = []
        var bodyEnds: [Int] = []
        var tokens = 0

        var count: Int { termEnds.count }

        func term(_ i: Int) -> ArraySlice<UInt8> { termBytes[(i == 0 ? 0 : termEnds[i - 1])..<termEnds[i]] }
        func body(_ i: Int) -> ArraySlice<UInt8> { bodies[(i == 0 ? 0 : bodyEnds[i - 1])..<bodyEnds[i]] }
    }

    /// The postings of one document, or nil if it is outside the index (partial `where`) or
    /// unreadable.
    func terms(store: IndexStore, body: UnsafeRawBufferPointer, txn: Snapshot, context: ExecContext? = nil) -> DocumentTerms? {
        store.columnValues(body: body, txn: txn, context: context).map { terms($0) }
    }

    /// The postings of a document's column values.
    func terms(_ columns: [Value]) -> DocumentTerms {
        var out = DocumentTerms()
        var positions: [UInt8] = []
        var positionEnds: [Int] = []
        var frequencies: [Int] = []
        out.tokens = tokenizer.forEachIndexEntry(for: columns) { term, value in
            out.termBytes.append(contentsOf: term)
            out.termEnds.append(out.termBytes.count)
            positions.append(contentsOf: value)
            positionEnds.append(positions.count)
            frequencies.append((try? FullTextPostingsCodec.positionCount(UnsafeRawBufferPointer(value))) ?? 0)
        }
        positions.withUnsafeBytes { all in
            var start = 0
            for i in 0..<positionEnds.count {
                FullTextPostingsCodec.appendEntryBody(frequency: frequencies[i], length: out.tokens,
                                                      positions: UnsafeRawBufferPointer(rebasing: all[start..<positionEnds[i]]), to: &out.bodies)
                out.bodyEnds.append(out.bodies.count)
                start = positionEnds[i]
            }
        }
        return out
    }

    // MARK: - Columns of a document

    /// A document's index columns: read in place from the binary document when every index
    /// expression is a plain property path and the index has no `where` (nil: MISSING), else
    /// evaluated. The integrity check always evaluates, so it also checks the in-place reading.
    enum DocumentColumns {
        case binary([BinaryValue?])
        case values([Value])
    }

    /// The index columns of a document, or nil if it is outside the index (partial `where`)
    /// or unreadable.
    func columns(_ store: IndexStore, body: UnsafeRawBufferPointer, txn: Snapshot, context: ExecContext? = nil) -> DocumentColumns? {
        if let paths = store.plainPaths, store.whereClause == nil {
            guard let root = BinaryValue.root(body) else { return nil }
            return .binary(paths.map { $0.lookup(in: root) })
        }
        return store.columnValues(body: body, txn: txn, context: context).map { .values($0) }
    }

    /// Tokenizes a document's columns (`FullTextTokenizer.forEachInternedEntry`).
    @inline(__always)
    func forEachInternedEntry(_ columns: DocumentColumns, _ body: InternedEntryBody) rethrows -> Int {
        switch columns {
        case .binary(let b): return try tokenizer.forEachInternedEntry(forBinary: b, body)
        case .values(let v): return try tokenizer.forEachInternedEntry(for: v, body)
        }
    }

    /// True if two versions of a document have the same columns byte for byte (`sameText`).
    static func sameColumns(_ a: DocumentColumns, _ b: DocumentColumns) -> Bool {
        switch (a, b) {
        case (.values(let x), .values(let y)):
            return sameText(x, y)
        case (.binary(let x), .binary(let y)):
            guard x.count == y.count else { return false }
            for (p, q) in zip(x, y) {
                guard let p, let q else {
                    if (p == nil) != (q == nil) { return false }
                    continue
                }
                let strings: Bool?? = p.withUTF8 { pb in q.withUTF8 { qb in compareBytes(pb, qb) == 0 } }
                switch strings {
                case .some(.some(let same)): if !same { return false }
                default: if !sameText([p.toValue()], [q.toValue()]) { return false }
                }
            }
            return true
        default:
            return false
        }
    }

    // MARK: - Maintenance

    /// Replaces one document's postings: `old` body out, `new` body in. Writes the document
    /// numbering now and queues the postings on the write transaction.
    func update(_ store: IndexStore, txn: WriteTransaction, docID: String, old: UnsafeRawBufferPointer?, new: UnsafeRawBufferPointer?) throws {
        try DatabaseError.checkingFullText(index: definition.name) { try updateUnchecked(store, txn: txn, docID: docID, old: old, new: new) }
    }

    private func updateUnchecked(_ store: IndexStore, txn: WriteTransaction, docID: String, old: UnsafeRawBufferPointer?, new: UnsafeRawBufferPointer?) throws {
        let oldColumns = old.flatMap { columns(store, body: $0, txn: txn) }
        let newColumns = new.flatMap { columns(store, body: $0, txn: txn) }
        if oldColumns == nil && newColumns == nil { return }
        // The indexed text did not change (an update of other properties): nothing to
        // tokenize, queue or write — not even the corpus totals.
        if let o = oldColumns, let n = newColumns, FullTextIndexKind.sameColumns(o, n) { return }
        // Entries go straight from the tokenizer to the queue under the document's new number;
        // an old version only retires its number.
        guard let stats = store.statsTable else { return }
        let pending = try txn.pendingWork(for: store) { try FullTextPendingChanges(store: store, txn: txn) }

        let idBytes = Array(docID.utf8)
        let numberKey = FullTextPostingsCodec.documentNumberKey(idBytes)
        if let o = oldColumns {
            // The old version retires its number (its postings stay where they are and are
            // skipped by readers until a vacuum drops them): its text is not tokenized again.
            var found = try txn.get(stats, key: numberKey)
            if found == nil, !(pending.background?.isEmpty ?? true) {
                // Saved earlier in this transaction and still being tokenized: number it first.
                try pending.drainBackground(txn)
                found = try txn.get(stats, key: numberKey)
            }
            guard let raw = found else {
                throw DatabaseError(.corrupt, "full-text index '\(definition.name)' has no number for document '\(docID)' (run an integrity check)")
            }
            let (old, storedTokens) = try FullTextPostingsCodec.decodeDocumentNumber(raw)
            // Numbers written before format 5 do not carry the token count: count it once.
            var oldTokens = storedTokens ?? 0
            if storedTokens == nil { oldTokens = forEachInternedEntry(o) { _, _, _, _, _, _ in } }
            pending.retire(old)
            pending.state.statistics.documentCount -= 1
            pending.state.statistics.totalTokens -= oldTokens
            _ = try txn.delete(stats, key: FullTextPostingsCodec.documentIDKey(old))
            if newColumns == nil { _ = try txn.delete(stats, key: numberKey) }
        }
        if let columns = newColumns {
            // A new or changed document takes the next free number: its entries are appended
            // to each term's last block.
            let number = pending.state.nextDocument
            guard number < UInt32.max else { throw DatabaseError(.limitReached, "full-text index '\(definition.name)' has numbered 2³² documents; rebuild it") }
            pending.state.nextDocument += 1
            defer { pending.documentsNumbered += 1 }
            if let prepared = (txn.preparedIndexEntries as? [PreparedFullText])?.first(where: { $0.definition == definition }) {
                // Tokenized before the transaction, from this very body.
                try pending.index(number: number, id: idBytes, entries: prepared, txn: txn)
            } else if case .binary = columns, let paths = store.plainPaths, let new,
                      pending.documentsNumbered >= FullTextPendingChanges.backgroundAfter {
                // A large transaction: tokenized on a second core, queued a chunk later.
                let background = pending.background ?? FullTextBackgroundTokenizer(kind: self, paths: paths)
                pending.background = background
                // The retired number's key goes now, so that another save of this document
                // before the new number is written waits for it (above) instead of retiring
                // the old number twice.
                if oldColumns != nil { _ = try txn.delete(stats, key: numberKey) }
                try background.submit(.init(number: number, id: idBytes, body: Array(new))) { job, prepared in
                    try pending.index(number: job.number, id: job.id, entries: prepared, txn: txn)
                }
            } else {
                let tokens = forEachInternedEntry(columns) { key, tokenCount, id, term, value, frequency in
                    pending.addInterned(key: key, termID: id, term: term, document: number, tokenCount: tokenCount,
                                        positions: value, frequency: frequency)
                }
                try txn.put(stats, key: numberKey, value: FullTextPostingsCodec.documentNumberValue(number, tokens: tokens))
                try txn.put(stats, key: FullTextPostingsCodec.documentIDKey(number), value: idBytes)
                pending.state.statistics.documentCount += 1
                pending.state.statistics.totalTokens += tokens
            }
        }
        if pending.isLarge() { try pending.flush(txn: txn) }
    }

    /// True if two documents' index columns are the same values, byte for byte (so that they
    /// tokenize the same): strings by UTF-8 bytes, numbers of the same type and bits, arrays
    /// element-wise. Objects count as different (their members' order is not compared).
    static func sameText(_ a: [Value], _ b: [Value]) -> Bool {
        func same(_ x: Value, _ y: Value) -> Bool {
            switch (x, y) {
            case (.missing, .missing), (.null, .null): return true
            case (.bool(let p), .bool(let q)): return p == q
            case (.int(let p), .int(let q)): return p == q
            case (.double(let p), .double(let q)): return p.bitPattern == q.bitPattern
            case (.string(let p), .string(let q)): return stringsEqualBinary(p, q)
            case (.array(let p), .array(let q)): return p.count == q.count && zip(p, q).allSatisfy(same)
            default: return false
            }
        }
        return a.count == b.count && zip(a, b).allSatisfy(same)
    }

    /// The stored corpus totals and next document number.
    static func indexState(txn: Snapshot, stats: StorageTable) throws -> FullTextIndexState {
        guard let raw = try txn.get(stats, key: FullTextPostingsCodec.corpusKey) else {
            return .empty
        }
        do {
            return try FullTextPostingsCodec.decodeIndexState(raw)
        } catch {
            throw DatabaseError(.corrupt, "full-text index statistics are unreadable (run an integrity check; deleting and creating the index again rebuilds it): \(error)")
        }
    }

    /// Builds the index over every live document: documents are numbered in ID order, each
    /// term's postings are collected in number order, and blocks are appended in key order.
    func backfill(_ store: IndexStore, txn: WriteTransaction, docs: DocumentTables, meta: StorageTable) throws {
        try DatabaseError.checkingFullText(index: definition.name) { try backfillUnchecked(store, txn: txn, docs: docs) }
    }

    private func backfillUnchecked(_ store: IndexStore, txn: WriteTransaction, docs: DocumentTables) throws {
        guard let stats = store.statsTable else { return }
        let pending = FullTextPendingChanges(store: store, state: .empty)
        var ids: [[UInt8]] = []
        var tokenCounts: [Int] = []
        // The next document's number (documents are numbered in ID order).
        func number(_ id: UnsafeRawBufferPointer) -> UInt32 {
            ids.append(Array(id))
            return UInt32(ids.count - 1)
        }
        // The last numbered document's token count, kept with its number and in the totals.
        func counted(tokens: Int) {
            tokenCounts.append(tokens)
            pending.state.statistics.documentCount += 1
            pending.state.statistics.totalTokens += tokens
        }
        if let paths = store.plainPaths, store.whereClause == nil {
            // Text read in place: documents are tokenized on both cores where they are read
            // (`PartitionedScan`), and their entries added here in ID order.
            try PartitionedScan.run(docs, txn: txn) { _ in
                TokenizedDocuments()
            } visit: { part, r in
                guard let h = DocumentRecord.header(r.stored), !h.deleted else { return }
                var columns = BinaryValue.root(DocumentRecord.body(r.stored)).map { root in paths.map { $0.lookup(in: root) } }
                // The head of a record in two pieces serves when every column is a string (or
                // other scalar) whole in it; else the whole record is read.
                if r.isContinued && columns?.allSatisfy({ $0?.isWholeScalar == true }) != true {
                    columns = BinaryValue.root(DocumentRecord.body(try r.whole())).map { root in paths.map { $0.lookup(in: root) } }
                }
                guard let columns else { return }
                part.add(id: r.id, columns: columns, tokenizer: self.tokenizer)
            } consume: { part in
                part.forEachDocument { id, tokenCount in
                    defer { counted(tokens: tokenCount) }
                    return number(UnsafeRawBufferPointer(id))
                } entry: { number, key, tokenCount, termID, term, value, frequency in
                    pending.addInterned(key: key, termID: termID, term: term, document: number, tokenCount: tokenCount,
                                        positions: value, frequency: frequency)
                }
                if pending.isLarge(limit: FullTextPendingChanges.backfillLimit) { try pending.flush(txn: txn, writeState: false, segment: false) }
            }
            try finishBackfill(pending, ids: ids, tokenCounts: tokenCounts, stats: stats, txn: txn)
            return
        }
        let context = ExecContext(sourceCount: 1, variableCount: store.variableCount, aggregateCount: 0, parameters: [:], txn: txn)
        try docs.forEach(txn) { k, v in
            guard let h = DocumentRecord.header(v), !h.deleted else { return true }
            guard let columns = columns(store, body: DocumentRecord.body(v), txn: txn, context: context) else { return true }
            let n = number(k)
            counted(tokens: forEachInternedEntry(columns) { key, tokenCount, id, term, value, frequency in
                pending.addInterned(key: key, termID: id, term: term, document: n, tokenCount: tokenCount,
                                    positions: value, frequency: frequency)
            })
            if pending.isLarge(limit: FullTextPendingChanges.backfillLimit) { try pending.flush(txn: txn, writeState: false, segment: false) }
            return true
        }
        try finishBackfill(pending, ids: ids, tokenCounts: tokenCounts, stats: stats, txn: txn)
    }

    /// The end of a back-fill: the documents' numbers, then the postings still queued.
    private func finishBackfill(_ pending: FullTextPendingChanges, ids: [[UInt8]], tokenCounts: [Int], stats: StorageTable,
                                txn: WriteTransaction) throws {
        pending.state.nextDocument = UInt32(ids.count)
        // Numbering first (0x01…, then 0x02…, in key order), the corpus key 0xFF last.
        for (n, id) in ids.enumerated() {
            try txn.put(stats, key: FullTextPostingsCodec.documentNumberKey(id),
                        value: FullTextPostingsCodec.documentNumberValue(UInt32(n), tokens: tokenCounts[n]), flags: .append)
        }
        for (n, id) in ids.enumerated() {
            try txn.put(stats, key: FullTextPostingsCodec.documentIDKey(UInt32(n)), value: id, flags: .append)
        }
        try pending.flush(txn: txn, segment: false)
    }

    /// Vacuums the retired numbers' entries now, whatever their share of the documents (a
    /// flush does it once they reach half the live documents).
    func optimize(_ store: IndexStore, txn: WriteTransaction, meta: StorageTable) throws {
        try DatabaseError.checkingFullText(index: definition.name) {
            guard let stats = store.statsTable else { return }
            let changes = try FullTextPendingChanges(store: store, txn: txn)
            guard changes.state.retired > 0 || changes.state.segments > 0 else { return }
            if changes.state.retired > 0 { try changes.vacuum(txn) } else { try changes.mergeSegments(txn) }
            try txn.put(stats, key: FullTextPostingsCodec.corpusKey, value: FullTextPostingsCodec.encodeIndexState(changes.state))
        }
    }

    // MARK: - Integrity

    /// Compares postings, numbering and statistics with those recomputed from the documents.
    func check(_ store: IndexStore, snapshot txn: Snapshot, docs: DocumentTables, entries count: inout Int) throws -> [String] {
        try DatabaseError.checkingFullText(index: definition.name) { try checkUnchecked(store, snapshot: txn, docs: docs, entries: &count) }
    }

    private func checkUnchecked(_ store: IndexStore, snapshot txn: Snapshot, docs: DocumentTables, entries count: inout Int) throws -> [String] {
        let name = "\(store.collection):\(definition.name)"
        var problems: [String] = []
        guard let stats = store.statsTable else { return problems }
        func report(_ s: String) { if problems.count < 100 { problems.append("\(name): " + s) } }

        // Numbering: both directions must agree.
        var numberOf: [[UInt8]: UInt32] = [:]
        var tokensOf: [[UInt8]: Int] = [:]
        var idOf: [UInt32: [UInt8]] = [:]
        // Segment entries by term: (segment, first document, entries), segments ascending.
        var segmentsOf: [[UInt8]: [(UInt32, UInt32, UnsafeRawBufferPointer)]] = [:]
        var segmentsSeen = Set<UInt32>()
        let state = try FullTextIndexKind.indexState(txn: txn, stats: stats)
        if let segments = store.segmentsTable {
            try txn.withCursor(segments) { c in
                try c.forEach { k, v in
                    guard let (segment, termBytes) = FullTextPostingsCodec.splitSegmentKey(k) else {
                        report("unreadable segment key \(Array(k).prefix(16))")
                        return true
                    }
                    let term = Array(termBytes)
                    if segment >= UInt32(state.segments) {
                        report("segment \(segment) of term '\(String(decoding: term, as: UTF8.self))' is not below the \(state.segments) segments the statistics name")
                    } else if let (first, entries) = FullTextPostingsCodec.splitSegmentValue(v) {
                        segmentsSeen.insert(segment)
                        segmentsOf[term, default: []].append((segment, first, entries))
                    } else {
                        report("short segment entry of term '\(String(decoding: term, as: UTF8.self))'")
                    }
                    return true
                }
            }
        }
        try txn.withCursor(stats) { c in
            try c.forEach { k, v in
                if k.first == 0x01, let (n, tokens) = try? FullTextPostingsCodec.decodeDocumentNumber(v) {
                    numberOf[Array(k.dropFirst())] = n
                    if let tokens { tokensOf[Array(k.dropFirst())] = tokens }
                } else if k.first == 0x02, k.count == 5 {
                    idOf[FullTextPostingsCodec.readBigEndian(k, at: 1)] = Array(v)
                } else if k.first == 0x03, k.count == 5, v.count == FullTextPostingsCodec.retiredChunkBits / 8 {
                    // A chunk of the retired set, read below.
                } else if Array(k) != FullTextPostingsCodec.corpusKey {
                    report("unexpected statistics entry \(Array(k).prefix(16))")
                }
                return true
            }
        }
        if segmentsSeen.count != state.segments {
            report("\(segmentsSeen.count) segments hold entries, the statistics say \(state.segments)")
        }
        let retired = try RetiredNumbers(txn: txn, stats: stats)
        if retired.count != state.retired { report("\(retired.count) retired numbers, the statistics say \(state.retired)") }
        for (id, n) in numberOf {
            if idOf[n] != id { report("document '\(String(decoding: id, as: UTF8.self))' has number \(n), which names another document") }
            if n >= state.nextDocument { report("document number \(n) is not below the next free number \(state.nextDocument)") }
            if retired.contains(n) { report("document '\(String(decoding: id, as: UTF8.self))' has the retired number \(n)") }
        }
        if idOf.count != numberOf.count { report("\(idOf.count) numbers name \(numberOf.count) numbered documents") }

        // Expected postings, recomputed from the documents.
        let expected = FullTextPendingChanges(store: store, state: state)
        var corpus = FullTextCorpusStatistics(documentCount: 0, totalTokens: 0)
        try docs.forEach(txn) { k, v in
            guard let h = DocumentRecord.header(v), !h.deleted else { return true }
            let id = Array(k)
            guard let t = terms(store: store, body: DocumentRecord.body(v), txn: txn) else {
                if numberOf[id] != nil { report("document '\(String(decoding: id, as: UTF8.self))' is outside the index but numbered") }
                return true
            }
            corpus.documentCount += 1
            corpus.totalTokens += t.tokens
            if let stored = tokensOf[id], stored != t.tokens {
                report("document '\(String(decoding: id, as: UTF8.self))' is stored with \(stored) tokens, its text has \(t.tokens)")
            }
            guard let n = numberOf.removeValue(forKey: id) else {
                report("document '\(String(decoding: id, as: UTF8.self))' has no number")
                return true
            }
            for i in 0..<t.count { expected.add(term: t.term(i), document: n, body: t.body(i)) }
            return true
        }
        for id in numberOf.keys.prefix(20) { report("stale number for document '\(String(decoding: id, as: UTF8.self))'") }
        if state.statistics != corpus {
            report("corpus statistics say \(state.statistics.documentCount) documents / \(state.statistics.totalTokens) tokens, expected \(corpus.documentCount) / \(corpus.totalTokens)")
        }

        // Stored postings, block by block, against the expected lists (bodies point into
        // `expected`, which outlives the walk).
        var seen = Set<[UInt8]>()
        var entries = 0
        var segmentEntries = 0
        var expectedLists: [[UInt8]: [(UInt32, UnsafeRawBufferPointer?)]] = [:]
        expected.forEachTerm { term, list in expectedLists[term] = list }
        try withExtendedLifetime(expected) {
            var currentTerm: [UInt8]? = nil
            var want: [(UInt32, UnsafeRawBufferPointer?)] = []
            var w = 0
            var lastDocument: Int64 = -1
            func describe(_ n: UInt32) -> String {
                idOf[n].map { "'" + String(decoding: $0, as: UTF8.self) + "'" } ?? "#\(n)"
            }
            // One block (or segment entry) of the current term against the expected list.
            func walk(_ term: [UInt8], first: UInt32, _ v: UnsafeRawBufferPointer, inSegment: Bool) {
                let what = inSegment ? "segment entries" : "blocks"
                if Int64(first) <= lastDocument { report("\(what) of term '\(String(decoding: term, as: UTF8.self))' overlap at document \(first)") }
                var it = PostingBlockIterator(value: v, firstDocument: first)
                do {
                    while let e = try it.next() {
                        entries += 1
                        if inSegment { segmentEntries += 1 }
                        lastDocument = Int64(e.document)
                        // A retired number's entries are stale by design until a vacuum.
                        if retired.contains(e.document) { continue }
                        while w < want.count && want[w].0 < e.document {
                            report("missing posting for term '\(String(decoding: term, as: UTF8.self))' of document \(describe(want[w].0))")
                            w += 1
                        }
                        if w < want.count && want[w].0 == e.document {
                            let expectedBody = want[w].1 ?? UnsafeRawBufferPointer(start: nil, count: 0)
                            if !expectedBody.elementsEqual(e.body) {
                                report("wrong frequency, length or positions for term '\(String(decoding: term, as: UTF8.self))' of document \(describe(e.document))")
                            }
                            w += 1
                        } else {
                            report("stale posting for term '\(String(decoding: term, as: UTF8.self))' of document \(describe(e.document))")
                        }
                    }
                } catch {
                    report("\(what) of term '\(String(decoding: term, as: UTF8.self))' at document \(first): \(error)")
                }
            }
            func startTerm(_ term: [UInt8]) {
                currentTerm = term
                w = 0
                lastDocument = -1
                want = expectedLists[term] ?? []
                seen.insert(term)
            }
            // The current term's segment entries come after its blocks; then what is missing.
            func finishTerm() {
                guard let t = currentTerm else { return }
                for (_, first, v) in segmentsOf.removeValue(forKey: t) ?? [] { walk(t, first: first, v, inSegment: true) }
                while w < want.count {
                    report("missing posting for term '\(String(decoding: t, as: UTF8.self))' of document \(describe(want[w].0))")
                    w += 1
                }
            }
            try txn.withCursor(store.table) { c in
                try c.forEach { k, v in
                    guard let (termRaw, first) = FullTextPostingsCodec.splitBlockKey(k) else {
                        report("unreadable postings key \(Array(k).prefix(16))")
                        return problems.count < 100
                    }
                    let term = Array(termRaw)
                    if term != currentTerm {
                        finishTerm()
                        startTerm(term)
                    }
                    walk(term, first: first, v, inSegment: false)
                    return problems.count < 100
                }
            }
            finishTerm()
            // Terms that have entries in segments only.
            for term in segmentsOf.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                startTerm(term)
                finishTerm()
            }
        }
        count += entries
        if segmentEntries != state.segmentPostings {
            report("\(segmentEntries) entries wait in segments, the statistics say \(state.segmentPostings)")
        }
        for term in expectedLists.keys where !seen.contains(term) {
            report("missing postings for term '\(String(decoding: term, as: UTF8.self))'")
        }
        return problems
    }
}

/// One queued posting: a document's entry body in `FullTextPendingChanges.bodies`, or a removal.
struct PendingPosting {
    var document: UInt32
    var start: UInt32
    /// Body length; `UInt32.max` marks a removal.
    var count: UInt32

    var isRemoval: Bool { count == UInt32.max }
}

/// One term's queued postings in block-entry form (`varint(number delta) ‖ body`, the first
/// delta from 0), while they arrive in ascending document order.
struct TermStream {
    var base: UnsafeMutablePointer<UInt8>? = nil
    var count = 0
    var capacity = 0
    var last: UInt32 = 0
    var used = false
    var active = true

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    /// Whether a change for `document` can be appended.
    @inline(__always)
    func takes(_ document: UInt32) -> Bool { active && (!used || document > last) }

    /// Appends an entry: with `frequency`, the body is built from frequency, length and the
    /// positions in `bytes`; without, `bytes` is the whole body. Returns the bytes added.
    @inline(__always)
    mutating func append(document: UInt32, frequency: Int?, length: Int, bytes: UnsafeBufferPointer<UInt8>) -> Int {
        let needed = count + 40 + bytes.count
        if needed > capacity { grow(needed) }
        let start = count
        var p = base! + count
        @inline(__always) func varint(_ value: UInt64) {
            var v = value
            while v >= 0x80 {
                p.pointee = UInt8(truncatingIfNeeded: v) | 0x80
                p += 1
                v >>= 7
            }
            p.pointee = UInt8(v)
            p += 1
        }
        varint(UInt64(used ? document - last : document))
        if let frequency {
            varint(UInt64(frequency))
            varint(UInt64(length))
            varint(UInt64(bytes.count))
        }
        if let b = bytes.baseAddress {
            for k in 0..<bytes.count { p[k] = b[k] }
            p += bytes.count
        }
        count = p - base!
        last = document
        used = true
        return count - start
    }

    @inline(never)
    private mutating func grow(_ minimum: Int) {
        var c = max(capacity, 32)
        while c < minimum { c *= 2 }
        let n = UnsafeMutablePointer<UInt8>.allocate(capacity: c)
        if let base { n.update(from: base, count: count); base.deallocate() }
        base = n
        capacity = c
    }

    /// Frees the bytes.
    mutating func release() {
        base?.deallocate()
        base = nil
        count = 0
        capacity = 0
    }
}

/// A queued change and its term slot.
struct PendingRecord {
    var slot: Int32
    var posting: PendingPosting
}

/// Postings changes of one index waiting to be merged into its blocks, grouped by term.
///
/// Saves in a write transaction append here; `flush` merges each term's changes (ascending
/// document, the last change of a document wins) into only the blocks they fall in. New
/// documents have the highest numbers, so a bulk load only appends to each term's last block.
///
/// Storage per term: while its changes arrive in ascending document order with no removal
/// (a bulk load, a back-fill), they are appended to the term's own **stream**, already in
/// block-entry form (number delta, then the entry body), so a flush reads each term's postings
/// sequentially. The first change out of order or removal moves the term to **records**
/// (document, body in a shared buffer), sorted by document at flush.
final class FullTextPendingChanges: PendingIndexWork {
    // One transaction's queue, used by one thread: raw buffers, no dynamic exclusivity
    // tracking (this runs once per term of every saved document).
    let store: IndexStore
    var state: FullTextIndexState
    @exclusivity(unchecked) var termIndex: [[UInt8]: Int32] = [:]
    @exclusivity(unchecked) var terms: [[UInt8]] = []
    /// Per term slot: its stream (inactive once the term uses records).
    @exclusivity(unchecked) private var streams = UnsafeGrowableBuffer<TermStream>(capacity: 256)
    /// Changes of terms that left stream mode, in arrival order, with their term slot.
    @exclusivity(unchecked) private var records = UnsafeGrowableBuffer<PendingRecord>(capacity: 64)
    /// The entry bodies the records point into.
    @exclusivity(unchecked) private var bodies = UnsafeGrowableBuffer<UInt8>(capacity: 1 << 10)
    /// The number of queued changes.
    private(set) var postingCount = 0
    private var streamBytes = 0
    /// The tokenizer term cache `internedSlots` is valid for.
    private var internedKey: TermCacheKey?
    /// Tokenizer term ID → term slot here (-1: not seen yet).
    @exclusivity(unchecked) private var internedSlots: [Int32] = []
    /// The slots of the term caches used before the current one (at most three, the most
    /// recent last): entries tokenized on two threads come from two caches, taken in turns,
    /// and forgetting a cache's slots at every turn sent each term back to `newInternedSlot`.
    private var earlierInterned: [(key: TermCacheKey, slots: [Int32])] = []

    /// Every change goes to `records` (no per-term streams): see `init(store:txn:)`.
    private let recordsOnly: Bool

    /// Documents this queue has numbered; from `backgroundAfter` on, new text is tokenized
    /// on a second core (`FullTextBackgroundTokenizer`).
    var documentsNumbered = 0
    static let backgroundAfter = 512
    var background: FullTextBackgroundTokenizer?

    /// Queues a document's entries made elsewhere (before the transaction or on the
    /// background tokenizer) under `number`, and numbers it in the statistics table.
    func index(number: UInt32, id: [UInt8], entries prepared: PreparedFullText, txn: WriteTransaction) throws {
        guard let stats = store.statsTable else { return }
        if prepared.run != nil {
            // Grouped with its run already: queued only if the run cannot be written whole.
            runDocuments.append((prepared, number))
            runPostings += prepared.entries.count
        } else {
            prepared.forEach { key, tokenCount, termID, term, value, frequency in
                addInterned(key: key, termID: termID, term: term, document: number, tokenCount: tokenCount,
                            positions: value, frequency: frequency)
            }
        }
        try txn.put(stats, key: FullTextPostingsCodec.documentNumberKey(id),
                    value: FullTextPostingsCodec.documentNumberValue(number, tokens: prepared.tokenCount))
        try txn.put(stats, key: FullTextPostingsCodec.documentIDKey(number), value: id)
        state.statistics.documentCount += 1
        state.statistics.totalTokens += prepared.tokenCount
    }

    /// Documents whose entries come grouped in a `FullTextRun`, with their numbers, in the
    /// order they were numbered: a flush writes their run's segment as it is when they are
    /// exactly that run, and queues their entries otherwise (`queueRunDocuments`).
    @exclusivity(unchecked) private var runDocuments: [(prepared: PreparedFullText, number: UInt32)] = []
    /// The entries of `runDocuments`.
    private var runPostings = 0

    /// The run `runDocuments` are, whole and in order, with the number of its first document;
    /// nil when they are anything else.
    private func completeRun() -> (run: FullTextRun, base: UInt32)? {
        guard let first = runDocuments.first, let run = first.prepared.run, runDocuments.count == run.length else { return nil }
        for (i, d) in runDocuments.enumerated() {
            guard d.prepared.run === run, Int(d.prepared.ordinal) == i, d.number == first.number &+ UInt32(i) else { return nil }
        }
        return (run, first.number)
    }

    /// Queues the entries of `runDocuments` one by one, as documents without a run are.
    private func queueRunDocuments() {
        for (prepared, number) in runDocuments {
            prepared.forEach { key, tokenCount, termID, term, value, frequency in
                addInterned(key: key, termID: termID, term: term, document: number, tokenCount: tokenCount,
                            positions: value, frequency: frequency)
            }
        }
        runDocuments = []
        runPostings = 0
    }

    /// Writes the segment of the run `runDocuments` are, if they are one and a segment is what
    /// this flush would write; true if it did (nothing else may be queued).
    private func writeRunSegment(_ txn: WriteTransaction) throws -> Bool {
        guard postingCount == 0, let (run, base) = completeRun(), var image = run.image,
              image.postingCount <= Self.segmentPostingLimit,
              try state.segments > 0 || txn.withCursor(store.table, { try $0.first() }) else { return false }
        // The image stays the run's (it is freed with the run); only its number fields change.
        try writeSegment(&image, base: base, txn)
        run.timesWritten += 1
        runDocuments = []
        runPostings = 0
        return true
    }

    /// Queues the entries of every document handed to the background tokenizer.
    func drainBackground(_ txn: WriteTransaction) throws {
        guard let b = background, !b.isEmpty else { return }
        try b.drain { job, prepared in try index(number: job.number, id: job.id, entries: prepared, txn: txn) }
    }

    init(store: IndexStore, state: FullTextIndexState, recordsOnly: Bool = false) {
        self.store = store
        self.state = state
        self.recordsOnly = recordsOnly
    }

    /// The queue of a write transaction's saves. Once the index has numbered documents, its
    /// changes go to one sequential buffer of records, grouped by term at the flush:
    /// appending to a stream per term missed the cache twice per posting (the term's stream
    /// state, then its tail) once a transaction touched thousands of terms (an update of
    /// 10,000 documents: −12 % of its time). An empty index (a first load) and back-fills keep
    /// the streams, whose bytes go into the new blocks as they are.
    convenience init(store: IndexStore, txn: Snapshot) throws {
        guard let stats = store.statsTable else { throw DatabaseError(.corrupt, "full-text index without statistics") }
        let state = try FullTextIndexKind.indexState(txn: txn, stats: stats)
        self.init(store: store, state: state, recordsOnly: state.nextDocument > 0)
    }

    /// A new slot's stream: inactive when the queue keeps records only.
    private func newStream() -> TermStream {
        var s = TermStream()
        s.active = !recordsOnly
        return s
    }

    deinit { release() }

    private func release() {
        for i in 0..<streams.count { streams.base[i].release() }
        streams.deallocate()
        records.deallocate()
        bodies.deallocate()
    }

    /// Queued changes before a save merges them mid-transaction (about 100 MB).
    static let saveLimit = 4_000_000
    /// Queued changes before a back-fill merges them (about 150 MB): a back-fill that fits
    /// writes every block once, in key order, in LMDB's append mode.
    static let backfillLimit = 8_000_000

    /// Large enough to merge now rather than keep growing (`limit` changes or 256 MB of bodies).
    func isLarge(limit: Int = saveLimit) -> Bool { postingCount + runPostings >= limit || bodies.count + streamBytes >= 1 << 28 }

    /// The slot of a term, created on first sight.
    private func slot(_ term: some Swift.Collection<UInt8>) -> Int32 {
        indexTerms()
        let t = Array(term)
        if let existing = termIndex[t] { return existing }
        let id = Int32(terms.count)
        termIndex[t] = id
        terms.append(t)
        streams.append(newStream())
        return id
    }

    /// While every slot came from one tokenizer term cache (`soleKey`), its term IDs are
    /// distinct terms: a new slot needs no lookup by bytes, and `termIndex` is built only
    /// once terms arrive another way (`indexTerms`).
    private var soleKey: TermCacheKey?
    private var termsIndexed = true

    /// Fills `termIndex` with the slots made without it.
    private func indexTerms() {
        guard !termsIndexed else { return }
        termsIndexed = true
        for (i, t) in terms.enumerated() { termIndex[t] = Int32(i) }
    }

    /// The slot of a term first seen in the tokenizer term cache `key`.
    private func newInternedSlot(key: TermCacheKey, term: UnsafeBufferPointer<UInt8>) -> Int32 {
        if terms.isEmpty && termIndex.isEmpty {
            soleKey = key
            termsIndexed = false
        }
        guard !termsIndexed, key == soleKey else { return slot(term) }
        let id = Int32(terms.count)
        terms.append(Array(term))
        streams.append(newStream())
        return id
    }

    /// Slot numbers in their terms' byte order (`TermOrder`).
    private func slotsInTermOrder() -> [Int] {
        TermOrder.sorted(terms.count, prefix: { i in terms[i].withUnsafeBufferPointer { TermOrder.prefix($0) } }, less: { x, y in
            terms[x].withUnsafeBytes { a in terms[y].withUnsafeBytes { b in compareStoredKeys(a, b) < 0 } }
        })
    }

    /// The entries of a slot's stream: (document, body).
    private func streamEntries(_ stream: TermStream) -> [(UInt32, UnsafeRawBufferPointer)] {
        var out: [(UInt32, UnsafeRawBufferPointer)] = []
        var reader = ByteReader(stream.bytes)
        var doc: UInt32 = 0
        // Written by this class, so well formed; a varint that cannot be read ends the walk.
        while !reader.atEnd, let delta = try? reader.varint32() {
            doc &+= delta
            let start = reader.offset
            guard (try? reader.varint()) != nil, (try? reader.varint()) != nil, let n = try? reader.varint(),
                  let positions = try? reader.bytes(Int(clamping: n)) else { break }
            _ = positions
            out.append((doc, UnsafeRawBufferPointer(rebasing: reader.base[start..<reader.offset])))
        }
        return out
    }

    /// Moves a slot from its stream to records (its first out-of-order change or removal).
    private func leaveStream(_ i: Int) {
        let stream = streams.base[i]
        guard stream.active else { return }
        for (doc, body) in streamEntries(stream) {
            let bodyStart = bodies.count
            bodies.append(body.baseAddress!.assumingMemoryBound(to: UInt8.self), count: body.count)
            records.append(PendingRecord(slot: Int32(i), posting: PendingPosting(document: doc, start: UInt32(bodyStart), count: UInt32(body.count))))
        }
        streamBytes -= stream.count
        streams.base[i].release()
        streams.base[i].active = false
    }

    /// Queues a document's new entry for a term (nil body: the document loses the term).
    func add(term: ArraySlice<UInt8>, document: UInt32, body: ArraySlice<UInt8>?) {
        let id = slot(term)
        guard let body else { return queueRemoval(slot: id, document: document) }
        let i = Int(id)
        postingCount += 1
        let st = streams.base + i
        if st.pointee.takes(document) {
            body.withUnsafeBufferPointer { b in
                streamBytes += st.pointee.append(document: document, frequency: nil, length: 0, bytes: b)
            }
            return
        }
        leaveStream(i)
        let start = bodies.count
        body.withUnsafeBufferPointer { bodies.append($0.baseAddress!, count: $0.count) }
        records.append(PendingRecord(slot: id, posting: PendingPosting(document: document, start: UInt32(start), count: UInt32(body.count))))
    }

    /// Queues the removal of `document` from slot `id`'s term.
    private func queueRemoval(slot id: Int32, document: UInt32) {
        postingCount += 1
        leaveStream(Int(id))
        records.append(PendingRecord(slot: id, posting: PendingPosting(document: document, start: UInt32(bodies.count), count: UInt32.max)))
    }

    /// Queues a document's entry for a term straight from the tokenizer: the term's slot is
    /// found by its ID in the tokenizer's term cache (hashing its bytes only on first sight).
    func addInterned(key: TermCacheKey, termID: Int32, term: UnsafeBufferPointer<UInt8>, document: UInt32,
                     tokenCount: Int, positions: UnsafeBufferPointer<UInt8>, frequency: Int) {
        let id = internedSlot(key: key, termID: termID, term: term)
        queue(slot: id, document: document, frequency: frequency, tokenCount: tokenCount, positions: positions)
    }

    /// The slot of a tokenizer term: by its ID in the tokenizer's term cache `key`, by its
    /// bytes the first time that cache shows it.
    @inline(__always)
    private func internedSlot(key: TermCacheKey, termID: Int32, term: UnsafeBufferPointer<UInt8>) -> Int32 {
        if key != internedKey { switchInterned(to: key) }
        let t = Int(termID)
        if t >= internedSlots.count { internedSlots.append(contentsOf: repeatElement(-1, count: t - internedSlots.count + 1)) }
        var id = internedSlots[t]
        if id < 0 {
            id = newInternedSlot(key: key, term: term)
            internedSlots[t] = id
        }
        return id
    }

    /// Makes `key`'s slots the current ones, keeping the current cache's for its next turn.
    @inline(never)
    private func switchInterned(to key: TermCacheKey) {
        let found = earlierInterned.firstIndex { $0.key == key }
        let slots = found.map { earlierInterned.remove(at: $0).slots } ?? []
        if let current = internedKey {
            earlierInterned.append((current, internedSlots))
            if earlierInterned.count > 3 { earlierInterned.removeFirst() }
        }
        internedKey = key
        internedSlots = slots
    }

    /// Queues an entry of `document` for slot `id` (its stream while documents come in
    /// order, else a record).
    private func queue(slot id: Int32, document: UInt32, frequency: Int, tokenCount: Int, positions: UnsafeBufferPointer<UInt8>) {
        let i = Int(id)
        postingCount += 1
        if !recordsOnly {
            let st = streams.base + i
            if st.pointee.takes(document) {
                streamBytes += st.pointee.append(document: document, frequency: frequency, length: tokenCount, bytes: positions)
                return
            }
            leaveStream(i)
        }
        let start = bodies.count
        FullTextPostingsCodec.appendVarint(UInt64(frequency), to: &bodies)
        FullTextPostingsCodec.appendVarint(UInt64(tokenCount), to: &bodies)
        FullTextPostingsCodec.appendVarint(UInt64(positions.count), to: &bodies)
        if let p = positions.baseAddress { bodies.append(p, count: positions.count) }
        records.append(PendingRecord(slot: id, posting: PendingPosting(document: document, start: UInt32(start), count: UInt32(bodies.count - start))))
    }

    // MARK: Retired numbers

    /// Numbers retired in this transaction and not yet written to the retired set.
    @exclusivity(unchecked) private var retiring: [UInt32] = []

    /// Retires `number` (an old version of a document): its postings stay in the blocks and
    /// readers skip them until `vacuum` drops them.
    func retire(_ number: UInt32) {
        retiring.append(number)
        state.retired += 1
    }

    /// Retired numbers, before a flush vacuums the blocks: half the live documents, and at
    /// least this many.
    static let vacuumMinimum = 64

    /// Bytes of blocks a vacuum copies out and rewrites at a time (`VacuumBatch`). Tests
    /// lower it to cut a small index into many batches (any size gives the same result).
    nonisolated(unsafe) static var vacuumBatchBytes = 8 << 20

    /// Sets the bits of the numbers retired since the last flush (each chunk read and
    /// written once).
    private func writeRetired(_ txn: WriteTransaction, stats: StorageTable) throws {
        guard !retiring.isEmpty else { return }
        retiring.sort()
        let chunkBits = UInt32(FullTextPostingsCodec.retiredChunkBits)
        var i = 0
        var chunkBytes = [UInt8](repeating: 0, count: Int(chunkBits) / 8)
        while i < retiring.count {
            let chunk = retiring[i] / chunkBits
            let key = FullTextPostingsCodec.retiredChunkKey(chunk)
            if let existing = try txn.get(stats, key: key) {
                guard existing.count == chunkBytes.count else { throw FullTextIndexCorruption("bad retired-number chunk") }
                chunkBytes.withUnsafeMutableBytes { $0.copyMemory(from: existing) }
            } else {
                for k in chunkBytes.indices { chunkBytes[k] = 0 }
            }
            while i < retiring.count && retiring[i] / chunkBits == chunk {
                let bit = Int(retiring[i] % chunkBits)
                chunkBytes[bit >> 3] |= 1 << UInt8(bit & 7)
                i += 1
            }
            try txn.put(stats, key: key, value: chunkBytes)
        }
        retiring.removeAll(keepingCapacity: true)
    }

    /// Rewrites every term whose blocks hold entries of retired numbers without them, then
    /// clears the retired set: the cost of a back-fill's writes without its tokenizing, paid
    /// once per (live documents / 2) retirements. The terms go in batches of about
    /// `vacuumBatchBytes` of blocks: the writer copies a batch's blocks out of the table, the
    /// writer and a helper thread each decode, filter and re-encode half of it in memory (no
    /// LMDB call), and the writer then replaces the changed terms' blocks.
    func vacuum(_ txn: WriteTransaction) throws {
        guard let stats = store.statsTable else { return }
        // Segments first: the walk below rewrites whole terms from their blocks.
        try mergeSegments(txn)
        let retired = try RetiredNumbers(txn: txn, stats: stats)
        let table = store.table
        let worker = WorkerThread(name: "tessera.vacuum")
        defer { worker.stop() }
        var after: [UInt8]?
        while true {
            let batch = try VacuumBatch(txn, table, after: after, maxBytes: Self.vacuumBatchBytes)
            guard let lastTerm = batch.terms.last else { break }
            let half = batch.half()
            let helper = VacuumOutput()
            let done = DispatchSemaphore(value: 0)
            worker.submit { [batch, retired, helper] in
                do { try batch.rewrite(0..<half, retired: retired, into: helper) } catch { helper.error = error }
                done.signal()
            }
            let mine = VacuumOutput()
            var myError: (any Error)?
            do { try batch.rewrite(half..<batch.terms.count, retired: retired, into: mine) } catch { myError = error }
            done.wait()
            if let e = helper.error ?? myError { throw e }
            for output in [helper, mine] { try output.apply(batch, txn, table) }
            after = batch.termBytes(lastTerm.term).withUnsafeBytes {
                FullTextPostingsCodec.blockKey(term: $0, firstDocument: UInt32.max)
            }
        }
        var chunkKeys: [[UInt8]] = []
        try txn.withCursor(stats) { c in
            var ok = try c.seek(FullTextPostingsCodec.retiredChunkKey(0))
            while ok, c.key.count == 5, c.key[0] == 0x03 {
                chunkKeys.append(Array(c.key))
                ok = try c.next()
            }
        }
        for key in chunkKeys { _ = try txn.delete(stats, key: key) }
        state.retired = 0
    }

    /// The records grouped by slot (counting sort: arrival order kept within a slot), each
    /// group sorted by document with one change per document (the last queued).
    struct RecordGroups {
        let sorted: UnsafeMutablePointer<PendingPosting>
        /// Per term slot, its changes in `sorted` (empty when it has none).
        var ranges: [Range<Int>] = []
    }

    private func groupRecords() -> RecordGroups {
        var groups = RecordGroups(sorted: .allocate(capacity: max(records.count, 1)))
        guard records.count > 0 else { return groups }
        // Term slots are dense (0..<terms.count): counts and fill positions are arrays.
        var fill = [Int](repeating: 0, count: terms.count + 1)
        for i in 0..<records.count { fill[Int(records.base[i].slot) + 1] += 1 }
        for t in 0..<terms.count { fill[t + 1] += fill[t] }
        let begin = fill
        for i in 0..<records.count {
            let r = records.base[i]
            groups.sorted[fill[Int(r.slot)]] = r.posting
            fill[Int(r.slot)] += 1
        }
        groups.ranges = Array(repeating: 0..<0, count: terms.count)
        // Each slot's changes by document, arrival order kept among a document's changes
        // (sort keys: document ‖ arrival), then the last change of each document kept.
        var order: [UInt64] = []
        var scratch: [PendingPosting] = []
        for t in 0..<terms.count where begin[t + 1] > begin[t] {
            let start = begin[t], n = begin[t + 1] - start
            let base = groups.sorted + start
            if n > 1 {
                order.removeAll(keepingCapacity: true)
                var ascending = true
                for i in 0..<n {
                    order.append(UInt64(base[i].document) << 32 | UInt64(i))
                    if i > 0 && base[i].document < base[i - 1].document { ascending = false }
                }
                if !ascending {
                    order.sort()
                    scratch.removeAll(keepingCapacity: true)
                    for i in 0..<n { scratch.append(base[i]) }
                    for (i, key) in order.enumerated() { base[i] = scratch[Int(key & 0xFFFF_FFFF)] }
                }
            }
            var kept = 0
            for i in 0..<n {
                if kept > 0 && base[kept - 1].document == base[i].document {
                    base[kept - 1] = base[i]
                } else {
                    base[kept] = base[i]
                    kept += 1
                }
            }
            groups.ranges[t] = start..<(start + kept)
        }
        return groups
    }

    /// A slot's changes, ascending document, one per document (nil body: removal).
    private func changes(of slot: Int32, _ groups: RecordGroups) -> [(UInt32, UnsafeRawBufferPointer?)] {
        let i = Int(slot)
        if streams.base[i].active { return streamEntries(streams.base[i]).map { ($0.0, $0.1) } }
        guard i < groups.ranges.count, !groups.ranges[i].isEmpty else { return [] }
        let range = groups.ranges[i]
        return UnsafeBufferPointer(start: groups.sorted + range.lowerBound, count: range.count).map { p in
            (p.document, p.isRemoval ? nil : UnsafeRawBufferPointer(start: bodies.base + Int(p.start), count: Int(p.count)))
        }
    }

    /// Calls `body` with every term's changes (ascending document, one per document, nil body
    /// for a removal), terms in byte order; the bodies are valid only during the call.
    func forEachTerm(_ body: (_ term: [UInt8], _ changes: [(UInt32, UnsafeRawBufferPointer?)]) throws -> Void) rethrows {
        queueRunDocuments()
        let groups = groupRecords()
        defer { groups.sorted.deallocate() }
        for t in slotsInTermOrder() {
            let list = changes(of: Int32(t), groups)
            if !list.isEmpty { try body(terms[t], list) }
        }
    }

    /// Merges every queued change into the postings blocks and writes the corpus totals.
    func flush(_ txn: WriteTransaction) throws {
        try DatabaseError.checkingFullText(index: store.definition.name) { try flush(txn: txn) }
    }

    /// - Parameters:
    ///   - writeState: write the corpus totals (a back-fill writes them itself at its end).
    ///   - segment: a small flush into an index that has blocks may write a segment (see
    ///     "Segments" in `FullTextPostingsCodec`); a back-fill never does.
    func flush(txn: WriteTransaction, writeState: Bool = true, segment: Bool = true) throws {
        try drainBackground(txn)
        if !runDocuments.isEmpty {
            let written = segment ? try writeRunSegment(txn) : false
            if !written { queueRunDocuments() }
        }
        if postingCount > 0 {
            let table = store.table
            if segment, postingCount <= Self.segmentPostingLimit, !hasRemovals,
               try state.segments > 0 || txn.withCursor(table, { try $0.first() }) {
                try writeSegment(txn)
            } else {
                try mergeQueue(txn, table: table)
            }
        }
        release()
        termIndex = [:]
        terms = []
        soleKey = nil
        termsIndexed = true
        streams = UnsafeGrowableBuffer<TermStream>(capacity: 256)
        records = UnsafeGrowableBuffer<PendingRecord>(capacity: 64)
        bodies = UnsafeGrowableBuffer<UInt8>(capacity: 1 << 10)
        postingCount = 0
        streamBytes = 0
        internedKey = nil
        internedSlots = []
        earlierInterned = []
        if let stats = store.statsTable {
            try writeRetired(txn, stats: stats)
            if state.segments >= Self.segmentLimit || state.segmentPostings >= Self.segmentPostingsLimit { try mergeSegments(txn) }
            if state.retired >= max(Self.vacuumMinimum, state.statistics.documentCount / 2) { try vacuum(txn) }
            if writeState {
                try txn.put(stats, key: FullTextPostingsCodec.corpusKey, value: FullTextPostingsCodec.encodeIndexState(state))
            }
        }
    }

    // MARK: Segments

    /// Segments waiting before a flush merges them all into the blocks (a query looks each
    /// term up in every waiting segment). A merge rewrites the blocks of every term the
    /// segments hold — most of the index — so fewer, larger merges write less: importing
    /// 100,000 documents in batches of 1,000 merged six times with 16 and three with 32.
    static let segmentLimit = 32
    /// Queued changes above which a flush merges into the blocks rather than writing a
    /// segment (a transaction of about 12,000 documents of 80 distinct words).
    static let segmentPostingLimit = 1_000_000
    /// Entries waiting in segments before a flush merges them (a merge copies them out of
    /// the table first: at most this many, about 60 MB).
    static let segmentPostingsLimit = 4_000_000

    /// Whether a queued change is a removal (only the integrity check's model queues them).
    private var hasRemovals: Bool {
        for i in 0..<records.count where records.base[i].posting.isRemoval { return true }
        return false
    }

    /// Writes the queued entries as the next segment: one entry per term, in term order, in
    /// the segments table (`BE32(segment) ‖ term`, appended), touching no block.
    private func writeSegment(_ txn: WriteTransaction) throws {
        var image = try segmentImage()
        defer { image.deallocate() }
        try writeSegment(&image, base: 0, txn)
    }

    /// The queued entries as a segment's (see `SegmentImage`), terms in byte order.
    func segmentImage() throws -> SegmentImage {
        let groups = groupRecords()
        defer { groups.sorted.deallocate() }
        let order = slotsInTermOrder()
        var image = SegmentImage(capacity: bodies.count + streamBytes + terms.count * 24)
        for t in order {
            if streams.base[t].active {
                // The stream is already entries with the first delta from 0: the first number
                // goes in front and its delta becomes 0.
                let bytes = streams.base[t].bytes
                var reader = ByteReader(bytes)
                let first = try reader.varint32()
                let rest = UnsafeRawBufferPointer(rebasing: bytes[reader.offset...])
                image.begin(term: terms[t], first: first)
                image.bytes.append(0)
                if let p = rest.baseAddress { image.bytes.append(p.assumingMemoryBound(to: UInt8.self), count: rest.count) }
            } else {
                // The slot's records, read in place (no array per term).
                guard t < groups.ranges.count, !groups.ranges[t].isEmpty else { continue }
                let range = groups.ranges[t]
                let first = groups.sorted[range.lowerBound].document
                image.begin(term: terms[t], first: first)
                var previous = first
                for i in range {
                    let p = groups.sorted[i]
                    FullTextPostingsCodec.appendVarint(UInt64(p.document - previous), to: &image.bytes)
                    if !p.isRemoval { image.bytes.append(bodies.base + Int(p.start), count: Int(p.count)) }
                    previous = p.document
                }
            }
            image.end()
        }
        image.postingCount = postingCount
        return image
    }

    /// Appends `image` as the next segment, its document numbers `base` higher, through one
    /// cursor (keys and values read in place from the image, whose number fields are set here).
    ///
    /// A segment that would be the last the limits allow (`segmentLimit`,
    /// `segmentPostingsLimit`) is not written: it is merged into the blocks with the waiting
    /// ones at once (the merge the flush would start right after writing it).
    func writeSegment(_ image: inout SegmentImage, base: UInt32, _ txn: WriteTransaction) throws {
        guard let segments = store.segmentsTable else { return }
        if state.segments + 1 >= Self.segmentLimit || state.segmentPostings + image.postingCount >= Self.segmentPostingsLimit {
            return try mergeSegments(txn, adding: (image, base))
        }
        let segment = UInt32(state.segments)
        var batch = StorageAppendBatch()
        for i in image.items.indices {
            // Segment keys sort last, a new segment after the others, terms ascending.
            let (key, value) = image.entry(i, segment: segment, base: base)
            batch.add(key: key, referencing: value)
            if batch.isFull { try txn.append(&batch, to: segments) }
        }
        try txn.append(&batch, to: segments)
        state.segments += 1
        state.segmentPostings += image.postingCount
    }

    /// Merges every waiting segment into the blocks (each term's entries of all segments
    /// appended at once) and empties the segments table; `extra`, a segment not written (its
    /// numbers `base` higher, all above the waiting segments'), is merged with them as their last.
    func mergeSegments(_ txn: WriteTransaction, adding extra: (image: SegmentImage, base: UInt32)? = nil) throws {
        guard state.segments > 0 || extra != nil, let segments = store.segmentsTable else { return }
        // Each segment's (term, value) pairs in term order. A table this transaction has not
        // written is read in place: its pages are the file's, which no write of a transaction
        // moves (LMDB copies a page before changing it). Otherwise they are copied out first
        // (the writes below may spill and free this transaction's own dirty pages): offsets
        // into `bytes`, turned into pointers once every pair is copied.
        let inPlace = !txn.hasChanged(segments)
        var bytes = UnsafeGrowableBuffer<UInt8>(capacity: inPlace ? 1 : 1 << 16)
        defer { bytes.deallocate() }
        // Each term also gets its first eight bytes as a big-endian integer: the merge below
        // compares those first (as `TermOrder` does).
        typealias Pair = (term: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, prefix: UInt64)
        var runs: [[Pair]] = []
        var copied: [[(term: Range<Int>, value: Range<Int>, prefix: UInt64)]] = []
        if state.segments > 0 {
            try txn.withCursor(segments) { c in
                // Keys are segment, then term: one walk reads the runs one after the other.
                var ok = try c.first()
                while ok {
                    guard let (segment, term) = FullTextPostingsCodec.splitSegmentKey(c.key), segment < UInt32(state.segments) else {
                        throw FullTextIndexCorruption("segment entry outside the \(state.segments) waiting segments")
                    }
                    let termPrefix = TermOrder.prefix(term.assumingMemoryBound(to: UInt8.self))
                    if inPlace {
                        while runs.count <= Int(segment) { runs.append([]) }
                        runs[Int(segment)].append((term, c.value, termPrefix))
                    } else {
                        while copied.count <= Int(segment) { copied.append([]) }
                        let termStart = bytes.count
                        if let t = term.baseAddress { bytes.append(t.assumingMemoryBound(to: UInt8.self), count: term.count) }
                        let valueStart = bytes.count
                        if let v = c.value.baseAddress { bytes.append(v.assumingMemoryBound(to: UInt8.self), count: c.value.count) }
                        copied[Int(segment)].append((termStart..<valueStart, valueStart..<bytes.count, termPrefix))
                    }
                    ok = try c.next()
                }
            }
        }
        func slice(_ r: Range<Int>) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: bytes.base + r.lowerBound, count: r.count) }
        if !inPlace { runs = copied.map { run in run.map { (slice($0.term), slice($0.value), $0.prefix) } } }
        if let (image, base) = extra {
            runs.append(image.items.indices.map { i in
                let (key, value) = image.entry(i, segment: 0, base: base)
                let term = UnsafeRawBufferPointer(rebasing: key[4...])
                return (term, value, TermOrder.prefix(term.assumingMemoryBound(to: UInt8.self)))
            })
        }
        // Terms in order across the runs (each run is sorted): the smallest head term, then
        // its entries from every run that has it, in segment order.
        var heads = [Int](repeating: 0, count: runs.count)
        var changes: [(UInt32, UnsafeRawBufferPointer?)] = []
        let table = store.table
        try txn.withCursor(table) { cursor in
            var writer = BlockWriter(txn: txn, table: table, append: false)
            defer { writer.deallocate() }
            func order(_ a: Pair, _ b: Pair) -> Int {
                if a.prefix != b.prefix { return a.prefix < b.prefix ? -1 : 1 }
                return compareStoredKeys(a.term, b.term)
            }
            while true {
                var smallest = -1
                for r in runs.indices where heads[r] < runs[r].count {
                    if smallest < 0 || order(runs[r][heads[r]], runs[smallest][heads[smallest]]) < 0 { smallest = r }
                }
                guard smallest >= 0 else { break }
                let head = runs[smallest][heads[smallest]]
                let term = head.term
                changes.removeAll(keepingCapacity: true)
                for r in runs.indices where heads[r] < runs[r].count && order(runs[r][heads[r]], head) == 0 {
                    guard let (first, entries) = FullTextPostingsCodec.splitSegmentValue(runs[r][heads[r]].value) else {
                        throw FullTextIndexCorruption("short segment entry")
                    }
                    var it = PostingBlockIterator(value: entries, firstDocument: first)
                    while let e = try it.next() {
                        if let last = changes.last?.0, e.document <= last { throw FullTextIndexCorruption("segments out of document order") }
                        changes.append((e.document, e.body))
                    }
                    heads[r] += 1
                }
                try merge(term: Array(term), changes: changes, cursor: cursor, txn: txn, writer: &writer)
            }
        }
        // Every segment at once: LMDB frees the table's pages without reading or copying them.
        if state.segments > 0 { try txn.drop(segments, delete: false) }
        state.segments = 0
        state.segmentPostings = 0
    }

    /// Merges the queued changes into the blocks (after any waiting segment, whose numbers
    /// come first).
    private func mergeQueue(_ txn: WriteTransaction, table: StorageTable) throws {
        try mergeSegments(txn)
        let empty = try txn.withCursor(table) { try !$0.first() }
        let groups = groupRecords()
        defer { groups.sorted.deallocate() }
        try txn.withCursor(table) { cursor in
            var writer = BlockWriter(txn: txn, table: table, append: empty)
            defer { writer.deallocate() }
            for t in slotsInTermOrder() {
                if empty && streams.base[t].active {
                    // A new table and a term in stream form: cut the stream into blocks.
                    try writer.writeStream(term: terms[t], streams.base[t].bytes)
                    continue
                }
                let list = changes(of: Int32(t), groups)
                if list.isEmpty { continue }
                if empty {
                    try writer.write(term: terms[t], entries: list.compactMap { d, b in b.map { (d, $0) } })
                } else {
                    try merge(term: terms[t], changes: list, cursor: cursor, txn: txn, writer: &writer)
                }
            }
        }
    }

    /// Applies one term's changes (ascending, unique documents) to its blocks: each block a
    /// change falls in is read, merged with the changes before the next block, and rewritten.
    private func merge(term: [UInt8], changes: [(UInt32, UnsafeRawBufferPointer?)], cursor c: KeyCursor, txn: WriteTransaction, writer: inout BlockWriter) throws {
        func isTerm(_ key: UnsafeRawBufferPointer) -> Bool {
            key.count == term.count + 5 && key[term.count] == 0 && key.starts(with: term)
        }
        var i = 0
        while i < changes.count {
            let seekKey = term.withUnsafeBytes { FullTextPostingsCodec.blockKey(term: $0, firstDocument: changes[i].0) }
            // The block holding the first change: the last one starting at or before it, else
            // the term's first block, else none.
            var found = try c.seek(seekKey)
            var onBlock = found && compareStoredKeys(c.key, seekKey) == 0
            if !onBlock {
                let after = found && isTerm(c.key)
                let moved = found ? try c.prev() : try c.last()
                if moved && isTerm(c.key) {
                    onBlock = true
                } else if after {
                    found = try c.seek(seekKey)
                    onBlock = found
                }
            }
            var existing: UnsafeMutableRawBufferPointer? = nil
            var blockKey: [UInt8]? = nil
            var first: UInt32 = 0
            var nextFirst = UInt64.max
            if onBlock {
                blockKey = Array(c.key)
                first = FullTextPostingsCodec.readBigEndian(c.key, at: c.key.count - 4)
                let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: c.value.count, alignment: 1)
                copy.copyMemory(from: c.value)
                existing = copy
                if try c.next(), isTerm(c.key) {
                    nextFirst = UInt64(FullTextPostingsCodec.readBigEndian(c.key, at: c.key.count - 4))
                }
            }
            defer { existing?.deallocate() }
            var j = i
            while j < changes.count && UInt64(changes[j].0) < nextFirst { j += 1 }
            if let existing, let blockKey, j == changes.count,
               let last = try FullTextPostingsCodec.lastDocument(inBlock: UnsafeRawBufferPointer(existing), first: first),
               changes[i].0 > last, !changes[i...].contains(where: { $0.1 == nil }) {
                // New documents after the term's last block (a batch of arrivals): the block's
                // bytes are kept as they are and the entries appended, without decoding it
                // or deleting its key: the same blocks a full merge writes.
                try writer.append(term: term, entries: changes[i...].map { ($0.0, $0.1!) },
                                  toBlock: blockKey, first: first, last: last, bytes: UnsafeRawBufferPointer(existing))
                return
            }
            var merged: [(UInt32, UnsafeRawBufferPointer)] = []
            var it = PostingBlockIterator(value: UnsafeRawBufferPointer(existing ?? UnsafeMutableRawBufferPointer(start: nil, count: 0)), firstDocument: first)
            var k = i
            var current = try it.next()
            while current != nil || k < j {
                if let e = current, k >= j || e.document < changes[k].0 {
                    merged.append((e.document, e.body))
                    current = try it.next()
                } else {
                    let (d, body) = changes[k]
                    if let e = current, e.document == d { current = try it.next() }
                    if let body { merged.append((d, body)) }
                    k += 1
                }
            }
            if let blockKey { try txn.delete(store.table, key: blockKey) }
            try writer.write(term: term, entries: merged)
            i = j
        }
    }

}

/// Cuts a term's entries into blocks of about `FullTextPostingsCodec.blockTargetBytes`.
struct BlockWriter {
    /// Where blocks are put; nil when they are collected (`sink`).
    private let txn: WriteTransaction?
    private let table: StorageTable?
    /// Keys arrive in ascending order into an empty table: use LMDB's append mode.
    private let append: Bool
    /// A vacuum's output that keeps the blocks instead (`FullTextVacuum.swift`); it owns this
    /// writer.
    private unowned(unsafe) let sink: VacuumOutput?
    private var value = UnsafeGrowableBuffer<UInt8>(capacity: FullTextPostingsCodec.blockTargetBytes * 2)
    private var key = UnsafeGrowableBuffer<UInt8>(capacity: 512)

    init(txn: WriteTransaction, table: StorageTable, append: Bool) {
        self.txn = txn
        self.table = table
        self.append = append
        sink = nil
    }

    /// A writer whose blocks `output` keeps (no LMDB call: usable on any thread).
    init(collectingInto output: VacuumOutput) {
        txn = nil
        table = nil
        append = false
        sink = output
    }

    /// Frees the buffers.
    func deallocate() {
        value.deallocate()
        key.deallocate()
    }

    /// Writes a term's stream (entries `varint(number delta) ‖ body`, the first delta from 0)
    /// into a new table: entries are copied as they are, except that each block's first one
    /// restarts its delta at 0 (its number is in the key).
    mutating func writeStream(term: [UInt8], _ stream: UnsafeRawBufferPointer) throws {
        var reader = ByteReader(stream)
        var doc: UInt32 = 0
        var first: UInt32 = 0
        value.count = 0
        while !reader.atEnd {
            let entryStart = reader.offset
            doc &+= try reader.varint32()
            let bodyStart = reader.offset
            _ = try reader.varint()
            _ = try reader.varint()
            reader.offset += Int(try reader.varint())
            guard reader.offset <= stream.count else { throw FullTextIndexCorruption("truncated queued entry") }
            let base = stream.baseAddress!.assumingMemoryBound(to: UInt8.self)
            if value.count == 0 {
                first = doc
                value.append(0)
                value.append(base + bodyStart, count: reader.offset - bodyStart)
            } else {
                value.append(base + entryStart, count: reader.offset - entryStart)
            }
            if value.count >= FullTextPostingsCodec.blockTargetBytes {
                try put(term: term, first: first)
            }
        }
        if value.count > 0 { try put(term: term, first: first) }
    }

    /// Writes entries after the last entry (`last`) of a term's last block (`blockKey`, whose
    /// first document is `first`, holding `bytes`): while the block is under the target size it
    /// takes entries and is written again under its key (LMDB replaces the value); the rest
    /// start new blocks. The same blocks as `write` of the block's entries and then these.
    mutating func append(term: [UInt8], entries: [(UInt32, UnsafeRawBufferPointer)], toBlock blockKey: [UInt8],
                         first: UInt32, last: UInt32, bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count < FullTextPostingsCodec.blockTargetBytes, let b = bytes.baseAddress else {
            try write(term: term, entries: entries)
            return
        }
        value.count = 0
        value.append(b.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        try write(term: term, entries: entries, continuing: (first, last))
    }

    /// Cuts entries (ascending documents) into blocks; `continuing` (first and last document
    /// of the block in `value`) goes on filling that block first.
    mutating func write(term: [UInt8], entries: [(UInt32, UnsafeRawBufferPointer)], continuing: (UInt32, UInt32)? = nil) throws {
        var first: UInt32 = continuing?.0 ?? 0
        var previous: UInt32 = continuing?.1 ?? 0
        if continuing == nil { value.count = 0 }
        for (d, body) in entries {
            if value.count == 0 {
                first = d
                value.append(0)
            } else {
                FullTextPostingsCodec.appendVarint(UInt64(d - previous), to: &value)
            }
            if let b = body.baseAddress { value.append(b.assumingMemoryBound(to: UInt8.self), count: body.count) }
            previous = d
            if value.count >= FullTextPostingsCodec.blockTargetBytes {
                try put(term: term, first: first)
            }
        }
        if value.count > 0 { try put(term: term, first: first) }
    }

    private mutating func put(term: [UInt8], first: UInt32) throws {
        key.count = 0
        term.withUnsafeBufferPointer { if let b = $0.baseAddress { key.append(b, count: $0.count) } }
        key.append(FullTextPostingsCodec.separator)
        key.append(UInt8(truncatingIfNeeded: first >> 24))
        key.append(UInt8(truncatingIfNeeded: first >> 16))
        key.append(UInt8(truncatingIfNeeded: first >> 8))
        key.append(UInt8(truncatingIfNeeded: first))
        let k = UnsafeRawBufferPointer(start: key.base, count: key.count)
        let v = UnsafeRawBufferPointer(start: value.base, count: value.count)
        if let sink {
            sink.add(key: k, value: v)
        } else {
            try txn!.put(table!, key: k, value: v, flags: append ? .append : [])
        }
        value.count = 0
    }
}

/// Postings read from LMDB inside the query's read transaction.
struct StoredPostingsReader: PostingsReader {
    typealias DocKey = [UInt8]
    let txn: Snapshot
    let postings: StorageTable
    let stats: StorageTable
    let segments: StorageTable?
    /// The corpus totals and next number, read once.
    let state: FullTextIndexState
    /// Numbers whose stale postings lists skip (empty unless `state.retired > 0`).
    let retired: RetiredNumbers

    /// A reader of the index whose tables are `postings`, `stats` and `segments`, inside `txn`.
    init(txn: Snapshot, postings: StorageTable, stats: StorageTable, segments: StorageTable?) throws {
        self.txn = txn
        self.postings = postings
        self.stats = stats
        self.segments = segments
        state = try FullTextIndexKind.indexState(txn: txn, stats: stats)
        retired = state.retired > 0 ? try RetiredNumbers(txn: txn, stats: stats) : RetiredNumbers()
    }

    /// Decodes a term's blocks (first document, value) into one list. Arrays are sized from
    /// the byte count (an entry takes at least 7 bytes: four varints and at least one
    /// position's column, count and offset) and filled in place; positions are
    /// referenced in the map, not copied.
    static func decode(_ blocks: [(UInt32, UnsafeRawBufferPointer)], positions: Bool, retired: RetiredNumbers = RetiredNumbers()) throws -> PostingList {
        let skipping = !retired.isEmpty
        var capacity = 0
        for (_, v) in blocks { capacity += v.count / 7 + 1 }
        // (Never ask for zero capacity: the empty array is a shared singleton.)
        if blocks.isEmpty { return PostingList(hasPositions: positions) }
        var count = 0
        var frequencies: [UInt32] = []
        var lengths: [UInt32] = []
        var refs: [UnsafeRawBufferPointer] = []
        let documents = try [UInt32](unsafeUninitializedCapacity: capacity) { docs, docsCount in
            docsCount = 0
            frequencies = try [UInt32](unsafeUninitializedCapacity: capacity) { freqs, freqsCount in
                freqsCount = 0
                lengths = try [UInt32](unsafeUninitializedCapacity: capacity) { lens, lensCount in
                    lensCount = 0
                    func fill(_ ps: UnsafeMutableBufferPointer<UnsafeRawBufferPointer>?) throws {
                        for (first, value) in blocks {
                            var it = PostingBlockIterator(value: value, firstDocument: first)
                            while let e = try it.next() {
                                guard count < capacity else { throw FullTextIndexCorruption("block holds more entries than bytes allow") }
                                if count > 0 && e.document <= docs[count - 1] { throw FullTextIndexCorruption("blocks out of document order") }
                                if skipping && retired.contains(e.document) { continue }
                                docs[count] = e.document
                                freqs[count] = e.frequency
                                lens[count] = e.length
                                ps?[count] = e.positions
                                count += 1
                            }
                        }
                    }
                    if positions {
                        refs = try [UnsafeRawBufferPointer](unsafeUninitializedCapacity: capacity) { ps, psCount in
                            psCount = 0
                            try fill(ps)
                            psCount = count
                        }
                    } else {
                        try fill(nil)
                    }
                    lensCount = count
                }
                freqsCount = count
            }
            docsCount = count
        }
        return PostingList(documents: documents, frequencies: frequencies, lengths: lengths, positionRefs: positions ? refs : nil)
    }

    func postings(forTerm term: String, positions: Bool) throws -> PostingList {
        let prefix = FullTextPostingsCodec.termKeyPrefix(term)
        var blocks: [(UInt32, UnsafeRawBufferPointer)] = []
        try txn.withCursor(postings) { c in
            var ok = try c.seek(prefix)
            while ok && c.key.count == prefix.count + 4 && keyHasPrefix(c.key, prefix) {
                blocks.append((FullTextPostingsCodec.readBigEndian(c.key, at: prefix.count), c.value))
                ok = try c.next()
            }
        }
        if state.segments > 0, let segments {
            // Then the term's entries in each waiting segment (their numbers come after).
            try prefix.withUnsafeBytes { p in
                let term = UnsafeRawBufferPointer(rebasing: p[0..<(p.count - 1)])
                for segment in 0..<UInt32(state.segments) {
                    if let v = try txn.get(segments, key: FullTextPostingsCodec.segmentKey(segment, term: term)) {
                        guard let (first, entries) = FullTextPostingsCodec.splitSegmentValue(v) else { throw FullTextIndexCorruption("short segment entry") }
                        blocks.append((first, entries))
                    }
                }
            }
        }
        return try Self.decode(blocks, positions: positions, retired: retired)
    }

    func postings(forPrefix prefix: String, positions: Bool) throws -> [PostingList] {
        let start = FullTextPostingsCodec.prefixScanKey(prefix)
        // Each term's blocks (terms in key order), then its entries in each waiting segment.
        var terms: [[UInt8]] = []
        var blocksOf: [[UInt8]: [(UInt32, UnsafeRawBufferPointer)]] = [:]
        func add(_ term: UnsafeRawBufferPointer, _ first: UInt32, _ value: UnsafeRawBufferPointer) {
            let t = Array(term)
            if blocksOf[t] == nil { terms.append(t) }
            blocksOf[t, default: []].append((first, value))
        }
        try txn.withCursor(postings) { c in
            try c.forEach(prefix: start) { k, v in
                guard let (term, first) = FullTextPostingsCodec.splitBlockKey(k) else {
                    throw FullTextIndexCorruption("unreadable postings key")
                }
                add(term, first, v)
                return true
            }
        }
        if state.segments > 0, let segments {
            try txn.withCursor(segments) { c in
                for segment in 0..<UInt32(state.segments) {
                    let segmentPrefix = FullTextPostingsCodec.segmentPrefix(segment)
                    try c.forEach(prefix: segmentPrefix + start) { k, v in
                        guard let (first, entries) = FullTextPostingsCodec.splitSegmentValue(v) else {
                            throw FullTextIndexCorruption("short segment entry")
                        }
                        add(UnsafeRawBufferPointer(rebasing: k[segmentPrefix.count...]), first, entries)
                        return true
                    }
                }
            }
        }
        return try terms.map { try Self.decode(blocksOf[$0]!, positions: positions, retired: retired) }
    }

    func corpusStatistics() throws -> FullTextCorpusStatistics {
        state.statistics
    }

    func documentKey(forNumber number: UInt32) throws -> [UInt8]? {
        try txn.get(stats, key: FullTextPostingsCodec.documentIDKey(number)).map { Array($0) }
    }
}
