import Testing
@testable import Tessera

/// Postings blocks under maintenance: a small vocabulary over a few thousand documents gives
/// every term many blocks, so saves, edits, deletes and purges (alone and in batches, with
/// the same document saved twice in one batch) append to, rewrite, split and empty blocks in
/// the middle of the lists. After each round every term query equals the model, ranked
/// queries by rank order equal a full sort, and the integrity check (which re-derives every
/// block from the documents) reports nothing.
@Suite("Full-text: postings blocks under maintenance")
struct FullTextBlockMaintenanceTests {
    static let words = ["amber", "birch", "cedar", "dune", "ember", "fjord", "grove", "heath", "inlet", "juniper", "kelp", "larch"]

    typealias RNG = SeededRandom

    static func text(_ r: inout RNG) -> String {
        // Skewed: early words are frequent, so their lists span many blocks.
        (0..<(3 + r.int(10))).map { _ in words[min(r.int(words.count), r.int(words.count))] }.joined(separator: " ")
    }

    static func ids(matching word: String, _ model: [String: String]) -> [String] {
        model.filter { $0.value.split(separator: " ").contains(Substring(word)) }.keys.sorted()
    }

    static func phraseIDs(_ a: String, _ b: String, _ model: [String: String]) -> [String] {
        model.filter { doc in
            let w = doc.value.split(separator: " ")
            return w.indices.dropLast().contains { w[$0] == a && w[$0 + 1] == b }
        }.keys.sorted()
    }

    static func query(_ db: Database, _ sql: String, _ q: String) throws -> [String] {
        let query = try db.createQuery(sql)
        query.parameters = Parameters(["q": .string(q)])
        return try query.execute().allResults().compactMap { $0.string(forKey: "id") }
    }

    func verify(_ db: Database, _ model: [String: String], round: Int, indexes: [String] = ["ftLive", "ftBackfilled"]) throws {
        for index in indexes {
            for w in Self.words {
                let got = try Self.query(db, "SELECT meta().id AS id FROM docs WHERE match(\(index), $q)", w).sorted()
                #expect(got == Self.ids(matching: w, model), "round \(round) \(index) '\(w)'")
            }
            let (a, b) = (Self.words[0], Self.words[1])
            let phrase = try Self.query(db, "SELECT meta().id AS id FROM docs WHERE match(\(index), $q)", "\"\(a) \(b)\"").sorted()
            #expect(phrase == Self.phraseIDs(a, b, model), "round \(round) \(index) phrase")
        }
        // Rank order from the heap equals a full sort of every match's rank.
        let ranked = try db.createQuery("SELECT rank(ftLive) AS r FROM docs WHERE match(ftLive, 'cedar dune') ORDER BY rank(ftLive) DESC LIMIT 25")
        #expect(try ranked.explain().contains("BY RANK"))
        #expect(try !ranked.explain().contains("TEMP B-TREE"))
        let top = try ranked.execute().allResults().compactMap { $0.double(forKey: "r") }
        let all = try db.createQuery("SELECT rank(ftLive) AS r FROM docs WHERE match(ftLive, 'cedar dune')")
            .execute().allResults().compactMap { $0.double(forKey: "r") }.sorted(by: >)
        #expect(top == Array(all.prefix(25)), "round \(round) ranked top 25")
        // A filter the index cannot apply rejects most of the best matches: the scan must go
        // past its first selection, in rank order; OFFSET counts towards the selection.
        let filtered = try db.createQuery("SELECT rank(ftLive) AS r FROM docs WHERE match(ftLive, 'cedar') AND meta().id LIKE '%7' ORDER BY rank(ftLive) DESC LIMIT 6 OFFSET 2")
        #expect(try !filtered.explain().contains("TEMP B-TREE"))
        let filteredAll = try db.createQuery("SELECT rank(ftLive) AS r FROM docs WHERE match(ftLive, 'cedar') AND meta().id LIKE '%7'")
            .execute().allResults().compactMap { $0.double(forKey: "r") }.sorted(by: >)
        #expect(try filtered.execute().allResults().compactMap { $0.double(forKey: "r") } == Array(filteredAll.dropFirst(2).prefix(6)),
                "round \(round) filtered ranked")
        let report = try db.performMaintenance(.integrityCheck)
        #expect(report.isOK, "round \(round): \(report)")
    }

    /// One random change of the documents `doc0`…`doc<ids - 1>`, applied to the collection and
    /// to `model`: a save (new or edited), a delete, a purge, or a batch of saves touching one
    /// document twice (the last save wins), sometimes with a delete.
    static func randomChange(_ r: inout RNG, _ db: Database, _ coll: Collection, _ model: inout [String: String], ids: Int) throws {
        let roll = r.int(10)
        let id = "doc\(r.int(ids))"
        if roll < 5 {
            let body = Self.text(&r)
            try coll.save(id: id, properties: ["body": .string(body)])
            model[id] = body
        } else if roll < 7 {
            if model[id] != nil { try coll.delete(id: id); model[id] = nil }
        } else if roll < 8 {
            try? coll.purge(id: id)
            model[id] = nil
        } else {
            try db.inBatch {
                for k in 0..<(2 + r.int(6)) {
                    let other = k == 1 ? id : "doc\(r.int(ids))"
                    let body = Self.text(&r)
                    try coll.save(id: other, properties: ["body": .string(body)])
                    model[other] = body
                }
                if let victim = model.keys.min(), r.int(2) == 0 {
                    try coll.delete(id: victim)
                    model[victim] = nil
                }
            }
        }
    }

    /// Expects index `ftLive` to answer every word, a two-word AND and a phrase with the same
    /// documents and ranks as a full-text index built afresh from the documents (and, for
    /// single words, the documents of `model`), and the integrity check to be clean.
    func expectSameAsRebuilt(_ db: Database, _ coll: Collection, model: [String: String], _ label: String) throws {
        try coll.createIndex(withName: "ftFresh", config: FullTextIndexConfiguration(["body"], language: ""))
        defer { try? coll.deleteIndex(forName: "ftFresh") }
        for q in Self.words + ["\(Self.words[0]) \(Self.words[1])", "\"\(Self.words[2]) \(Self.words[3])\""] {
            func ranks(_ index: String) throws -> [String: Double] {
                let query = try db.createQuery("SELECT meta().id AS id, rank(\(index)) AS r FROM docs WHERE match(\(index), $q)")
                query.parameters = Parameters(["q": .string(q)])
                return Dictionary(uniqueKeysWithValues: try query.execute().allResults().map { ($0.string(forKey: "id") ?? "?", $0.double(forKey: "r")) })
            }
            let (stored, fresh) = (try ranks("ftLive"), try ranks("ftFresh"))
            #expect(stored.keys.sorted() == fresh.keys.sorted(), "\(label) '\(q)'")
            #expect(stored.allSatisfy { abs($0.value - (fresh[$0.key] ?? .nan)) < 1e-12 }, "\(label) '\(q)' ranks")
            if Self.words.contains(q) { #expect(stored.keys.sorted() == Self.ids(matching: q, model), "\(label) '\(q)' model") }
        }
        let report = try db.performMaintenance(.integrityCheck)
        #expect(report.isOK, "\(label): \(report)")
    }

    @Test(arguments: [11, 12, 13] as [UInt64])
    func blocksStayExact(seed: UInt64) throws {
        var r = RNG(seed: seed)
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        try coll.createIndex(withName: "ftLive", config: FullTextIndexConfiguration(["body"], language: ""))
        var model: [String: String] = [:]

        // Bulk load in batches of random size: appends to each term's last block.
        var next = 0
        while next < 1_500 {
            let n = 1 + r.int(300)
            try db.inBatch {
                for _ in 0..<n {
                    let id = "doc\(next)"
                    let body = Self.text(&r)
                    try coll.save(id: id, properties: ["body": .string(body)])
                    model[id] = body
                    next += 1
                }
            }
        }
        try coll.createIndex(withName: "ftBackfilled", config: FullTextIndexConfiguration(["body"], language: ""))
        let store = try coll.currentStore()
        let live = try #require(store.indexes.first { $0.definition.name == "ftLive" })
        // Small batches wait in segments: queries read them, then they are merged.
        try verify(db, model, round: -1)
        try db.performMaintenance(.optimize)
        let blocks = try db.read { try $0.count(live.table) }
        #expect(blocks > Self.words.count * 3, "every frequent term spans several blocks (\(blocks) blocks)")
        try verify(db, model, round: 0)

        for round in 1...3 {
            for _ in 0..<150 { try Self.randomChange(&r, db, coll, &model, ids: next + 50) }
            try verify(db, model, round: round)
        }
    }

    /// Arrivals in many small batches (written as segments, merged into each term's last
    /// block in place) store exactly the blocks that one batch stores: same keys, same bytes.
    @Test func smallBatchesOfArrivalsStoreTheBlocksOfOneBatch() throws {
        func blocks(batch: Int) throws -> [[UInt8]: [UInt8]] {
            var r = RNG(seed: 21)
            let (db, coll) = try temporaryDocsDatabase()
            defer { try? db.close() }
            try coll.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: ""))
            var next = 0
            while next < 2_000 {
                try db.inBatch {
                    for _ in 0..<min(batch, 2_000 - next) {
                        try coll.save(id: "doc\(next)", properties: ["body": .string(Self.text(&r))])
                        next += 1
                    }
                }
            }
            let index = try #require(try coll.currentStore().indexes.first)
            // Segments still waiting (batches of 1 and 7 leave some) are merged first.
            let waiting = try FullTextBlockMaintenanceTests.StoredIndex(db, index).state.segments
            #expect(batch == 2_000 || waiting > 0, "batches of \(batch): no segment waits")
            try db.performMaintenance(.optimize)
            return try db.read { snap in
                var out: [[UInt8]: [UInt8]] = [:]
                try snap.withCursor(index.table) { c in try c.forEach { k, v in out[Array(k)] = Array(v); return true } }
                return out
            }
        }
        let whole = try blocks(batch: 2_000)
        #expect(whole.count > Self.words.count * 3, "\(whole.count) blocks")
        for batch in [1, 7, 100] { #expect(try blocks(batch: batch) == whole, "batches of \(batch)") }
    }

    /// What a full-text index stores, read in one snapshot: its blocks, corpus state, retired
    /// set and each document's number.
    struct StoredIndex {
        var blocks: [[UInt8]: [UInt8]] = [:]
        var state: FullTextIndexState
        var retired: RetiredNumbers
        var numbers: [String: UInt32] = [:]

        init(_ db: Database, _ index: IndexStore) throws {
            let stats = try #require(index.statsTable)
            (blocks, state, retired, numbers) = try db.read { snap in
                var blocks: [[UInt8]: [UInt8]] = [:]
                try snap.withCursor(index.table) { c in try c.forEach { k, v in blocks[Array(k)] = Array(v); return true } }
                var numbers: [String: UInt32] = [:]
                try snap.withCursor(stats) { c in
                    try c.forEach { k, v in
                        if k.first == 0x01 { numbers[String(decoding: k.dropFirst(), as: UTF8.self)] = try FullTextPostingsCodec.decodeDocumentNumber(v).number }
                        return true
                    }
                }
                return (blocks, try FullTextIndexKind.indexState(txn: snap, stats: stats), try RetiredNumbers(txn: snap, stats: stats), numbers)
            }
        }

        /// Every document number some block holds an entry for.
        func storedNumbers() throws -> Set<UInt32> {
            var out = Set<UInt32>()
            for (k, v) in blocks {
                let first = try #require(k.withUnsafeBytes { FullTextPostingsCodec.splitBlockKey($0)?.firstDocument })
                try v.withUnsafeBytes { raw in
                    var it = PostingBlockIterator(value: raw, firstDocument: first)
                    while let e = try it.next() { out.insert(e.document) }
                }
            }
            return out
        }
    }

    /// Saves `count` documents `doc0`… with random text in one batch, into the collection and `model`.
    static func load(_ count: Int, _ r: inout RNG, _ db: Database, _ coll: Collection, _ model: inout [String: String]) throws {
        try db.inBatch {
            for d in 0..<count {
                let body = Self.text(&r)
                try coll.save(id: "doc\(d)", properties: ["body": .string(body)])
                model["doc\(d)"] = body
            }
        }
    }

    /// An edit retires the document's number instead of rewriting the blocks it is in: the
    /// term lists' existing blocks keep their bytes, the new version's entries go after them,
    /// and readers skip the retired number (matches, document frequencies and ranks equal a
    /// freshly built index's). Once the retired numbers reach half the live documents a
    /// flush vacuums them: no stored entry names a retired number and the set is empty — also
    /// when the vacuum rewrites the terms in batches of a few blocks (`VacuumBatch`, the
    /// halves on two threads).
    @Test(arguments: [FullTextPendingChanges.vacuumBatchBytes, 2_048])
    func editsRetireNumbersAndAVacuumDropsThem(vacuumBatchBytes: Int) throws {
        var r = RNG(seed: 31)
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        try coll.createIndex(withName: "ftLive", config: FullTextIndexConfiguration(["body"], language: ""))
        var model: [String: String] = [:]
        try Self.load(600, &r, db, coll, &model)
        try coll.createIndex(withName: "ftBackfilled", config: FullTextIndexConfiguration(["body"], language: ""))
        let live = try #require(try coll.currentStore().indexes.first { $0.definition.name == "ftLive" })
        func snapshot() throws -> StoredIndex { try StoredIndex(db, live) }
        let before = try snapshot()
        #expect(before.state.retired == 0 && before.retired.isEmpty)
        // Edit one document: every block stays byte for byte; its old number is retired and
        // its new number is the next free one.
        let oldNumber = try #require(before.numbers["doc17"])
        let edited = Self.text(&r) + " " + Self.words[0]
        try coll.save(id: "doc17", properties: ["body": .string(edited)])
        model["doc17"] = edited
        let after = try snapshot()
        #expect(after.numbers["doc17"] == before.state.nextDocument)
        #expect(after.retired.contains(oldNumber) && after.state.retired == 1)
        for (k, v) in before.blocks {
            guard let now = after.blocks[k] else { Issue.record("block \(k) disappeared"); continue }
            // Only a term's last block may grow (the new version's entry appended).
            #expect(now.starts(with: v), "block \(k) rewritten")
        }
        try expectSameAsRebuilt(db, coll, model: model, "one edit")

        // Edits, deletes and purges below the vacuum threshold: stale entries stay, hidden.
        for i in 0..<100 {
            let id = "doc\(r.int(600))"
            if i % 10 == 9 { try? coll.purge(id: id); model[id] = nil; continue }
            if i % 10 == 8 { if model[id] != nil { try coll.delete(id: id); model[id] = nil }; continue }
            let body = Self.text(&r)
            try coll.save(id: id, properties: ["body": .string(body)])
            model[id] = body
        }
        let mid = try snapshot()
        #expect(mid.state.retired > 64 && mid.state.retired < mid.state.statistics.documentCount / 2)
        #expect(try mid.storedNumbers().contains { mid.retired.contains($0) }, "stale entries are kept until a vacuum")
        try expectSameAsRebuilt(db, coll, model: model, "below the threshold")
        try verify(db, model, round: 1)

        // Past half the live documents: the flush vacuums.
        let usual = FullTextPendingChanges.vacuumBatchBytes
        if vacuumBatchBytes != usual { FullTextPendingChanges.vacuumBatchBytes = vacuumBatchBytes }
        defer { if vacuumBatchBytes != usual { FullTextPendingChanges.vacuumBatchBytes = usual } }
        try db.inBatch {
            for d in 0..<300 {
                let body = Self.text(&r)
                try coll.save(id: "doc\(d)", properties: ["body": .string(body)])
                model["doc\(d)"] = body
            }
        }
        let vacuumed = try snapshot()
        #expect(vacuumed.state.retired == 0 && vacuumed.retired.isEmpty)
        #expect(try vacuumed.storedNumbers() == Set(vacuumed.numbers.values), "only live numbers are stored")
        try expectSameAsRebuilt(db, coll, model: model, "after the vacuum")
    }

    /// Property (seeded): through random saves, edits, deletes and purges — alone and in
    /// batches, across several vacuums — the live index answers every word, a two-word AND
    /// and a phrase with the same documents and the same ranks as an index built afresh from
    /// the documents, matches equal the model, and the integrity check is clean.
    @Test(arguments: [41, 42, 43] as [UInt64])
    func retiredNumbersAndVacuumsKeepTheIndexEqualToARebuild(seed: UInt64) throws {
        var r = RNG(seed: seed)
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        try coll.createIndex(withName: "ftLive", config: FullTextIndexConfiguration(["body"], language: ""))
        let live = try #require(try coll.currentStore().indexes.first { $0.definition.name == "ftLive" })
        let stats = try #require(live.statsTable)
        func retired() throws -> Int { try db.read { try FullTextIndexKind.indexState(txn: $0, stats: stats).retired } }
        var model: [String: String] = [:]
        var vacuums = 0
        var lastRetired = 0
        for round in 0..<6 {
            for _ in 0..<120 {
                try Self.randomChange(&r, db, coll, &model, ids: 160)
                let now = try retired()
                if now < lastRetired { vacuums += 1 }
                lastRetired = now
            }
            try expectSameAsRebuilt(db, coll, model: model, "seed \(seed) round \(round)")
        }
        #expect(vacuums >= 2, "seed \(seed): \(vacuums) vacuums")
    }

    /// `performMaintenance(.optimize)` vacuums below the threshold: afterwards no retired
    /// number is left, only live numbers are stored, and queries answer as before.
    @Test func optimizeVacuumsRetiredNumbers() throws {
        var r = RNG(seed: 51)
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        try coll.createIndex(withName: "ftLive", config: FullTextIndexConfiguration(["body"], language: ""))
        try coll.createIndex(withName: "byBody", config: ValueIndexConfiguration(["body"]))
        var model: [String: String] = [:]
        try Self.load(400, &r, db, coll, &model)
        for _ in 0..<60 { try Self.randomChange(&r, db, coll, &model, ids: 400) }
        let live = try #require(try coll.currentStore().indexes.first { $0.definition.name == "ftLive" })
        #expect(try StoredIndex(db, live).state.retired > 0)
        try db.performMaintenance(.optimize)
        let optimized = try StoredIndex(db, live)
        #expect(optimized.state.retired == 0 && optimized.retired.isEmpty)
        #expect(try optimized.storedNumbers() == Set(optimized.numbers.values), "only live numbers are stored")
        try expectSameAsRebuilt(db, coll, model: model, "after optimize")
        // Inside a batch, queued postings are merged first; nothing changes for queries.
        try db.inBatch {
            try coll.save(id: "doc1", properties: ["body": .string(Self.words[0])])
            model["doc1"] = Self.words[0]
            try db.performMaintenance(.optimize)
        }
        #expect(try StoredIndex(db, live).state.retired == 0)
        try expectSameAsRebuilt(db, coll, model: model, "after optimize in a batch")
    }

    @Test func queriesInsideABatchSeeTheBatchsSaves() throws {
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        try coll.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: ""))
        try coll.save(id: "a", properties: ["body": "amber birch"])
        try db.inBatch {
            try coll.save(id: "b", properties: ["body": "amber cedar"])
            try coll.save(id: "a", properties: ["body": "cedar only"])
            let inside = try Self.query(db, "SELECT meta().id AS id FROM docs WHERE match(ft, $q)", "amber").sorted()
            #expect(inside == ["b"])
            // Saves after a read inside the batch are merged too.
            try coll.save(id: "c", properties: ["body": "amber"])
            let report = try db.performMaintenance(.integrityCheck)
            #expect(report.isOK, "\(report)")
        }
        #expect(try Self.query(db, "SELECT meta().id AS id FROM docs WHERE match(ft, $q)", "amber").sorted() == ["b", "c"])
        #expect(try Self.query(db, "SELECT meta().id AS id FROM docs WHERE match(ft, $q)", "cedar").sorted() == ["a", "b"])
        #expect(try db.performMaintenance(.integrityCheck).isOK)
    }

    @Test func droppingOrRedefiningAnIndexInsideABatchDiscardsItsQueue() throws {
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        try coll.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: ""))
        try db.inBatch {
            try coll.save(id: "a", properties: ["body": "amber", "title": "birch"])
            try coll.deleteIndex(forName: "ft")
            try coll.save(id: "b", properties: ["body": "amber", "title": "cedar"])
            try coll.createIndex(withName: "ft2", config: FullTextIndexConfiguration(["body"], language: ""))
            try coll.save(id: "c", properties: ["body": "amber", "title": "dune"])
            try coll.createIndex(withName: "ft2", config: FullTextIndexConfiguration(["title"], language: ""))
            try coll.save(id: "d", properties: ["body": "ember", "title": "amber"])
        }
        #expect(try coll.indexes() == ["ft2"])
        #expect(try Self.query(db, "SELECT meta().id AS id FROM docs WHERE match(ft2, $q)", "amber") == ["d"])
        #expect(try Self.query(db, "SELECT meta().id AS id FROM docs WHERE match(ft2, $q)", "cedar") == ["b"])
        #expect(try db.performMaintenance(.integrityCheck).isOK)
    }

    /// One transaction with more distinct words than the tokenizer's term cache keeps
    /// (`TokenizerWorkspace.maxCachedWords`): the cache is emptied mid-transaction, so the
    /// queued changes meet the same terms under a second cache; each term must still be
    /// written once, with every document, for new documents and for edits.
    @Test func aTransactionOutgrowsTheTermCache() throws {
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        try coll.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: ""))
        let perDocument = 100
        let documents = TokenizerWorkspace.maxCachedWords / perDocument + 40
        func word(_ n: Int) -> String {
            // Distinct letters-only words: base 26 of n.
            var n = n, out = "w"
            repeat { out.append(Character(UnicodeScalar(UInt8(97 + n % 26)))); n /= 26 } while n > 0
            return out
        }
        func body(_ d: Int, edited: Bool) -> String {
            let own = (0..<perDocument).map { word(d * perDocument + $0) }
            return (["common", d % 2 == 0 ? "even" : "odd", edited ? "edited" : "fresh"] + own).joined(separator: " ")
        }
        try db.inBatch {
            for d in 0..<documents { try coll.save(id: "d\(d)", properties: ["body": .string(body(d, edited: false))]) }
        }
        // Edits of every third document, in one transaction that outgrows the cache again.
        try db.inBatch {
            for d in stride(from: 0, to: documents, by: 3) { try coll.save(id: "d\(d)", properties: ["body": .string(body(d, edited: true))]) }
        }
        func count(_ q: String) throws -> Int {
            try db.createQuery("SELECT count(*) AS n FROM docs WHERE match(ft, '\(q)')").execute().next()?.int(forKey: "n") ?? -1
        }
        let edited = (documents + 2) / 3
        #expect(try count("common") == documents)
        #expect(try count("even") == (documents + 1) / 2)
        #expect(try count("edited") == edited)
        #expect(try count("fresh") == documents - edited)
        #expect(try count(word(0)) == 1)
        #expect(try count(word((documents - 1) * perDocument + 7)) == 1)
        let report = try db.performMaintenance(.integrityCheck)
        #expect(report.isOK, "\(report)")
    }
}
