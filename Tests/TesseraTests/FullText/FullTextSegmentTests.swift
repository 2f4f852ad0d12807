import Testing
@testable import Tessera

/// Small transactions write their postings as segments (format 7; in their own table since
/// format 9; "Segments" in
/// `FullTextPostingsCodec`): no block is touched until `segmentLimit` segments wait, a query
/// reads each term's blocks and then its segment entries, and merging the segments stores
/// the blocks that appending each batch in place stored before.
@Suite("Full-text: segments for small transactions")
struct FullTextSegmentTests {
    typealias Maintenance = FullTextBlockMaintenanceTests
    typealias RNG = SeededRandom

    /// Segment entries of an index, read in one snapshot: (segment, term) → value.
    static func segmentEntries(_ db: Database, _ index: IndexStore) throws -> [[UInt8]: [UInt8]] {
        let segments = try #require(index.segmentsTable)
        return try db.read { snap in
            var out: [[UInt8]: [UInt8]] = [:]
            try snap.withCursor(segments) { c in
                try c.forEach { k, v in out[Array(k)] = Array(v); return true }
            }
            return out
        }
    }

    /// A database whose collection `docs` has the full-text index `ftLive` (returned) over
    /// `count` random documents saved in one batch; `model` gets their text.
    static func loaded(_ count: Int, _ r: inout RNG, _ model: inout [String: String]) throws -> (Database, Collection, IndexStore) {
        let (db, coll) = try temporaryDocsDatabase()
        do {
            try coll.createIndex(withName: "ftLive", config: FullTextIndexConfiguration(["body"], language: ""))
            try Maintenance.load(count, &r, db, coll, &model)
            return (db, coll, try #require(try coll.currentStore().indexes.first { $0.definition.name == "ftLive" }))
        } catch {
            try? db.close()
            throw error
        }
    }

    @Test func smallTransactionsWriteSegmentsUntilTheLimitThenMergeThem() throws {
        var r = RNG(seed: 61)
        var model: [String: String] = [:]
        let (db, coll, live) = try Self.loaded(500, &r, &model)
        defer { try? db.close() }
        let loaded = try Maintenance.StoredIndex(db, live)
        #expect(loaded.state.segments == 0)
        #expect(try Self.segmentEntries(db, live).isEmpty)

        // Batches of a few arrivals and edits: each is one more segment, and no block changes.
        for batch in 1..<FullTextPendingChanges.segmentLimit {
            try db.inBatch {
                for k in 0..<(1 + r.int(6)) {
                    let id = k == 0 ? "new\(batch)" : "doc\(r.int(500))"
                    let body = Maintenance.text(&r)
                    try coll.save(id: id, properties: ["body": .string(body)])
                    model[id] = body
                }
            }
            let now = try Maintenance.StoredIndex(db, live)
            #expect(now.state.segments == batch)
            #expect(now.blocks == loaded.blocks, "batch \(batch) rewrote blocks")
            #expect(Set(try Self.segmentEntries(db, live).keys.map { Array($0[0..<4]) }).count == batch)
            if batch % 5 == 1 { try Maintenance().expectSameAsRebuilt(db, coll, model: model, "segments \(batch)") }
        }
        // Prefix queries read segments too.
        for prefix in ["ce*", "d*", "j*"] {
            let got = try Maintenance.query(db, "SELECT meta().id AS id FROM docs WHERE match(ftLive, $q)", prefix).sorted()
            let letters = prefix.dropLast()
            let want = model.filter { $0.value.split(separator: " ").contains { $0.hasPrefix(letters) } }.keys.sorted()
            #expect(got == want, "'\(prefix)'")
        }

        // The limit: the next small transaction merges every segment into the blocks.
        try coll.save(id: "last", properties: ["body": .string("amber birch")])
        model["last"] = "amber birch"
        let merged = try Maintenance.StoredIndex(db, live)
        #expect(merged.state.segments == 0)
        #expect(try Self.segmentEntries(db, live).isEmpty)
        #expect(merged.blocks != loaded.blocks)
        try Maintenance().expectSameAsRebuilt(db, coll, model: model, "merged")
        try Maintenance().verify(db, model, round: 0, indexes: ["ftLive"])
    }

    /// A large transaction (more than `segmentPostingLimit` postings) merges into the blocks
    /// directly, after the waiting segments, whose numbers come first.
    @Test func aLargeTransactionMergesTheWaitingSegmentsFirst() throws {
        var r = RNG(seed: 62)
        var model: [String: String] = [:]
        let (db, coll, live) = try Self.loaded(50, &r, &model)
        defer { try? db.close() }
        for i in 0..<3 {
            try coll.save(id: "s\(i)", properties: ["body": .string("cedar dune")])
            model["s\(i)"] = "cedar dune"
        }
        #expect(try Maintenance.StoredIndex(db, live).state.segments == 3)
        // 200 distinct words a document: 5,100 documents pass the limit.
        let many = (0..<198).map { "w\($0)" }.joined(separator: " ")
        #expect(5_100 * 200 > FullTextPendingChanges.segmentPostingLimit)
        try db.inBatch {
            for d in 0..<5_100 {
                let body = "cedar dune " + many
                try coll.save(id: "bulk\(d)", properties: ["body": .string(body)])
                model["bulk\(d)"] = body
            }
        }
        #expect(try Maintenance.StoredIndex(db, live).state.segments == 0)
        #expect(try Self.segmentEntries(db, live).isEmpty)
        let cedar = try Maintenance.query(db, "SELECT meta().id AS id FROM docs WHERE match(ftLive, $q)", "\"cedar dune\"").sorted()
        #expect(cedar == Maintenance.phraseIDs("cedar", "dune", model))
        #expect(try db.performMaintenance(.integrityCheck).isOK)
    }

    /// `.optimize` merges waiting segments (with no retired number to vacuum), and a vacuum
    /// merges them before it rewrites the terms.
    @Test func optimizeAndVacuumMergeSegments() throws {
        var r = RNG(seed: 63)
        var model: [String: String] = [:]
        let (db, coll, live) = try Self.loaded(300, &r, &model)
        defer { try? db.close() }
        for i in 0..<4 {
            let body = Maintenance.text(&r)
            try coll.save(id: "a\(i)", properties: ["body": .string(body)])
            model["a\(i)"] = body
        }
        #expect(try Maintenance.StoredIndex(db, live).state.segments == 4)
        try db.performMaintenance(.optimize)
        #expect(try Maintenance.StoredIndex(db, live).state.segments == 0)
        try Maintenance().expectSameAsRebuilt(db, coll, model: model, "optimized")

        // Edits of more than half the documents, one transaction each: segments are written,
        // merged at the limit, and the vacuum (which merges what waits first) leaves no
        // retired number.
        var sawSegments = false
        for d in 0..<200 {
            let body = Maintenance.text(&r)
            try coll.save(id: "doc\(d)", properties: ["body": .string(body)])
            model["doc\(d)"] = body
            let waiting = try Maintenance.StoredIndex(db, live).state.segments
            sawSegments = sawSegments || waiting > 0
        }
        let after = try Maintenance.StoredIndex(db, live)
        #expect(sawSegments)
        #expect(after.state.retired < 150, "a vacuum ran")
        try Maintenance().expectSameAsRebuilt(db, coll, model: model, "vacuumed")
    }

    /// The integrity check reads segments: a lost segment entry, an entry in a segment the
    /// statistics do not name, and a segment count that disagrees are reported.
    @Test func theIntegrityCheckReadsSegments() throws {
        var r = RNG(seed: 64)
        var model: [String: String] = [:]
        let (db, coll, live) = try Self.loaded(100, &r, &model)
        defer { try? db.close() }
        try coll.save(id: "x1", properties: ["body": .string("kelp larch")])
        try coll.save(id: "x2", properties: ["body": .string("kelp fjord")])
        #expect(try db.performMaintenance(.integrityCheck).isOK)
        let segments = try #require(live.segmentsTable)
        let kelp = FullTextPostingsCodec.segmentKey(1, term: UnsafeRawBufferPointer(start: nil, count: 0)) + Array("kelp".utf8)
        let saved = try #require(try Self.segmentEntries(db, live)[kelp])
        try db.write { ctx in _ = try ctx.txn.delete(segments, key: kelp) }
        let lost = try db.performMaintenance(.integrityCheck)
        #expect(lost.problems.contains { $0.contains("missing posting for term 'kelp' of document 'x2'") }, "\(lost)")

        try db.write { ctx in
            try ctx.txn.put(segments, key: kelp, value: saved)
            try ctx.txn.put(segments, key: FullTextPostingsCodec.segmentPrefix(7) + Array("kelp".utf8), value: saved)
        }
        let stray = try db.performMaintenance(.integrityCheck)
        #expect(stray.problems.contains { $0.contains("segment 7 of term 'kelp' is not below the 2 segments") }, "\(stray)")
    }
}

extension FullTextSegmentTests {
    /// The segment that reaches the limit is merged with the waiting ones without being
    /// written. They are read in place when the transaction has not written a segment, and
    /// copied out first when it has (a read inside the batch flushed one): both give the
    /// blocks a rebuild gives.
    @Test(arguments: [false, true])
    func theLastSegmentIsMergedUnwritten(readInsideTheBatch: Bool) throws {
        var r = RNG(seed: readInsideTheBatch ? 63 : 64)
        var model: [String: String] = [:]
        let (db, coll, live) = try Self.loaded(300, &r, &model)
        defer { try? db.close() }
        // One segment short of the limit, or two when the batch writes one before its commit.
        let waiting = FullTextPendingChanges.segmentLimit - (readInsideTheBatch ? 2 : 1)
        for batch in 0..<waiting {
            let body = Maintenance.text(&r)
            try coll.save(id: "s\(batch)", properties: ["body": .string(body)])
            model["s\(batch)"] = body
        }
        #expect(try Maintenance.StoredIndex(db, live).state.segments == waiting)
        try db.inBatch {
            for k in 0..<2 {
                let body = Maintenance.text(&r)
                try coll.save(id: "last\(k)", properties: ["body": .string(body)])
                model["last\(k)"] = body
                if readInsideTheBatch && k == 0 {
                    // The read flushes the first save as a segment of this transaction.
                    let w = Maintenance.words[r.int(Maintenance.words.count)]
                    let got = try Maintenance.query(db, "SELECT meta().id AS id FROM docs WHERE match(ftLive, $q)", w).sorted()
                    #expect(got == Maintenance.ids(matching: w, model), "'\(w)' inside the batch")
                }
            }
        }
        let merged = try Maintenance.StoredIndex(db, live)
        #expect(merged.state.segments == 0)
        #expect(try Self.segmentEntries(db, live).isEmpty)
        try Maintenance().expectSameAsRebuilt(db, coll, model: model, "merged, read inside: \(readInsideTheBatch)")
        try Maintenance().verify(db, model, round: 0, indexes: ["ftLive"])
    }
}
