import Testing
@testable import Tessera

/// Issue 19 (file size): documents whose IDs sort after every ID already stored are appended
/// (`MDB_APPEND`), which fills leaf pages completely; the by-sequence table is always
/// appended. A transaction writes its documents in ID order whatever order they came in
/// (`DeferredPuts`), so one batch in random order is packed as well.
@Suite("Appending documents in ID order")
struct AppendPackingTests {
    static func body(_ i: Int) -> String {
        #"{"n":\#(i),"text":"\#(String(repeating: "x", count: 150 + i % 50))"}"#
    }

    /// Bytes of the pages of the default collection's document and by-sequence tables, and
    /// the share of the document table's pages its entries fill (keys, values, LMDB's node
    /// headers and pointers over the pages' bytes).
    static func tableBytes(_ db: Database) throws -> (docs: Int, bySequence: Int, fill: Double) {
        let store = try #require(db.catalog.withLock { $0.collections[CollectionKey.defaultCollection] })
        return try db.read { txn in
            var used = 0
            try txn.withCursor(store.docs) { c in
                var ok = try c.first()
                while ok { used += c.key.count + c.value.count + 8 + 2; ok = try c.next() }
            }
            let docs = try txn.byteSize(store.docs)
            return (docs, try txn.byteSize(store.bySequence), Double(used) / Double(docs))
        }
    }

    static func load(ids: [String]) throws -> Database {
        let db = try Database.temporary()
        let c = try db.defaultCollection()
        try db.inBatch { for (i, id) in ids.enumerated() { try c.save(id: id, json: body(i)) } }
        return db
    }

    @Test("IDs saved in ascending order fill their pages")
    func ascendingIsPacked() throws {
        let ids = (0..<4000).map { "doc-" + String(100_000 + $0) }
        var rng = SplitMix64(seed: 11)
        let shuffled = ids.shuffled(using: &rng)
        let ascending = try Self.load(ids: ids), random = try Self.load(ids: shuffled)
        defer { try? ascending.close(); try? random.close() }
        let a = try Self.tableBytes(ascending), r = try Self.tableBytes(random)
        // Appended pages are full (LMDB's own split for a key at the end of a page leaves them
        // about 89 % full here); a B-tree fed random keys settled near 65–70 % before the
        // batch's documents were written in ID order.
        #expect(a.fill > 0.93, "ascending IDs fill \(a.fill) of \(a.docs) bytes")
        #expect(r.fill > 0.93, "random IDs fill \(r.fill) of \(r.docs) bytes")
        // Sequences only grow, whatever the IDs: both by-sequence tables are packed.
        let payload = 4000 * (8 + 11 + 8)
        #expect(a.bySequence < payload * 5 / 4 + 4096 * 4 && r.bySequence < payload * 5 / 4 + 4096 * 4,
                "by-sequence: \(a.bySequence) and \(r.bySequence) bytes for \(payload) bytes of entries")
        #expect(try ascending.defaultCollection().documentIDs() == ids)
        #expect(try random.defaultCollection().documentIDs() == ids)
    }

    @Test("IDs out of order, updates, deletes and purges in one batch keep every document")
    func mixedOrder() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        var expected: [String: Int] = [:]
        var rng = SplitMix64(seed: 5)
        try db.inBatch {
            for i in 0..<3000 {
                // Mostly ascending, with IDs below the largest and repeats mixed in.
                let id: String
                switch Int.random(in: 0..<10, using: &rng) {
                case 0: id = "a-" + String(Int.random(in: 0..<1000, using: &rng))
                case 1: id = expected.keys.randomElement(using: &rng) ?? "m-0"
                default: id = "m-" + String(100_000 + i)
                }
                try c.save(id: id, json: Self.body(i))
                expected[id] = i
                if i % 97 == 0, let victim = expected.keys.max() {
                    // Removing the largest ID: the next larger ID is still appended after it.
                    try c.purge(id: victim)
                    expected[victim] = nil
                }
            }
        }
        #expect(try c.documentIDs() == expected.keys.sorted())
        for (id, n) in expected { #expect(try c.document(id: id)?.int(forKey: "n") == n) }
        #expect(try db.integrityCheck().problems.isEmpty)
        // A later transaction appends after what the first one left.
        try db.inBatch { try c.save(id: "z-last", json: Self.body(1)); try c.save(id: "b-first", json: Self.body(2)) }
        #expect(try c.documentIDs() == (Array(expected.keys) + ["z-last", "b-first"]).sorted())
        #expect(try db.integrityCheck().problems.isEmpty)
    }

    /// Records of 0.9–2.1 KB (scattered: a hash of `i`), two or three to a leaf page.
    static func largeBody(_ i: Int) -> String {
        #"{"n":\#(i),"text":"\#(String(repeating: "t", count: textLength(i)))","tag":"end-\#(i)"}"#
    }

    static func textLength(_ i: Int) -> Int { 900 + Int((UInt64(i) &* 0x9E37_79B9_7F4A_7C15) >> 40) % 1_200 }

    /// The share of the document table's pages its entries fill, the number of records in two
    /// pieces, and how many of those were cut shorter than the largest leaf node (where their
    /// page ended).
    static func recordPacking(_ db: Database) throws -> (fill: Double, continued: Int, cutAtPageEnd: Int, tails: Int) {
        let store = try #require(db.catalog.withLock { $0.collections[CollectionKey.defaultCollection] })
        let largest = RecordSplitting(pageSize: 4096, recordLimit: nil).largestNode
        return try db.read { txn in
            var used = 0, continued = 0, cut = 0
            try txn.withCursor(store.docs) { c in
                var ok = try c.first()
                while ok {
                    used += (8 + c.key.count + c.value.count + 1) & ~1 + 2
                    if DocumentRecord.isContinued(c.value) {
                        continued += 1
                        if c.value.count < largest - 8 - c.key.count { cut += 1 }
                    }
                    ok = try c.next()
                }
            }
            return (Double(used) / Double(try txn.byteSize(store.docs)), continued, cut, try txn.count(store.tails))
        }
    }

    @Test("Records that do not fit the rest of a page are cut where it ends: appended, held, one per transaction",
          arguments: ["ascending", "random", "one per transaction"])
    func recordsFillTheirPages(order: String) throws {
        let ids = (0..<2500).map { "doc-" + String(100_000 + $0) }
        var rng = SplitMix64(seed: 23)
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        switch order {
        case "ascending": try db.inBatch { for (i, id) in ids.enumerated() { try c.save(id: id, json: Self.largeBody(i)) } }
        case "random":
            let shuffled = Array(ids.enumerated()).shuffled(using: &rng)
            try db.inBatch { for (i, id) in shuffled { try c.save(id: id, json: Self.largeBody(i)) } }
        default: for (i, id) in ids.enumerated() { try c.save(id: id, json: Self.largeBody(i)) }
        }
        let p = try Self.recordPacking(db)
        // Each record that did not fit the rest of a page starting the next left a fifth of
        // these pages empty (fill 0.80, 285 records in two pieces); cut there: 0.93, 721.
        #expect(p.fill > 0.90, "\(order): the document table's pages are \(p.fill) full")
        #expect(p.cutAtPageEnd > 300, "\(order): \(p.cutAtPageEnd) of \(p.continued) records in two pieces were cut at a page's end")
        #expect(p.tails == p.continued)
        for (i, id) in ids.enumerated() {
            let doc = try #require(try c.document(id: id))
            #expect(doc.int(forKey: "n") == i && doc.string(forKey: "tag") == "end-\(i)"
                    && doc.string(forKey: "text")?.utf8.count == Self.textLength(i))
        }
        let rows = try db.createQuery("SELECT tag, length(text) AS len FROM _default WHERE n >= 1000 AND n < 1100 ORDER BY n")
            .execute().allResults()
        #expect(rows.map { $0.string(forKey: "tag") } == (1000..<1100).map { "end-\($0)" })
        #expect(rows.map { $0.int(forKey: "len") } == (1000..<1100).map(Self.textLength))
        #expect(try db.integrityCheck().problems.isEmpty)
        // Updates put records at their place: the pieces follow (cut at the largest node or whole).
        try db.inBatch {
            for i in stride(from: 0, to: 2500, by: 7) { try c.save(id: ids[i], json: Self.largeBody(i + 1)) }
        }
        for i in stride(from: 0, to: 2500, by: 7) {
            #expect(try c.document(id: ids[i])?.string(forKey: "tag") == "end-\(i + 1)")
        }
        #expect(try db.integrityCheck().problems.isEmpty)
    }

    /// Batches of ascending IDs below a few larger stored ones — a deleted document's tombstone
    /// and two documents of another kind, one stored in two pieces — are appended as well: the
    /// write-out takes the larger ones back and appends them after the batch. Inserted between
    /// the stored keys instead, every batch split its pages in half (fill about 0.5).
    @Test func batchesBelowAFewLargerIDsFillTheirPages() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        try c.save(id: "seed", json: "{}")
        try c.delete(id: "seed")
        try c.save(id: "zz-big", json: Self.largeBody(7_000))
        try c.save(id: "zz-small", json: #"{"kind":"other"}"#)
        let ids = (0..<4000).map { "doc-" + String(100_000 + $0) }
        for start in stride(from: 0, to: ids.count, by: 250) {
            try db.inBatch { for i in start..<(start + 250) { try c.save(id: ids[i], json: Self.body(i)) } }
        }
        let packed = try Self.tableBytes(db)
        #expect(packed.fill > 0.85, "the document table's pages are \(packed.fill) full")
        #expect(try c.documentIDs() == ids + ["zz-big", "zz-small"])
        #expect(try c.document(id: "zz-big")?.string(forKey: "tag") == "end-7000")
        #expect(try c.document(id: "seed") == nil && c.count == 4002)
        #expect(try db.integrityCheck().problems.isEmpty)
        // The tombstone is still there: the change feed and a purge see it.
        try c.purge(id: "seed")
        #expect(try db.integrityCheck().problems.isEmpty)
    }
}
