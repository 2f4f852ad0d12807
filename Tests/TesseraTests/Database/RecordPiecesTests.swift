import Testing
@testable import Tessera

/// Issue 19 (file size): records too large for a leaf page are stored in two pieces, the
/// head in the document table and the rest in the collection's `tail:` table
/// (`RecordPieces.swift`), instead of on overflow pages of their own.
@Suite("Records in two pieces")
struct RecordPiecesTests {
    /// A body of about `bytes` bytes of JSON.
    static func body(_ i: Int, bytes: Int) -> [String: Value] {
        let words = ["amber", "birch", "cedar", "dune", "elm", "fern", "grove", "heath"]
        var text = ""
        var k = i
        while text.utf8.count < bytes {
            text += words[k % words.count] + " "
            k = (k &* 31 &+ 7) & 0xFF_FFFF
        }
        return ["n": .int(Int64(i)), "city": .string(["Oslo", "Rome", "Bern"][i % 3]), "text": .string(text),
                "tags": .array([.string(words[i % 8]), .string(words[(i + 3) % 8])])]
    }

    static func store(_ c: Tessera.Collection) throws -> CollectionStore { try c.currentStore() }

    /// Entries of the collection's tail table.
    static func tails(_ db: Database, _ c: Tessera.Collection) throws -> Int {
        let s = try store(c)
        return try db.read { try $0.count(s.tails) }
    }

    /// The stored size of document `id`'s head (its value in the document table).
    static func headSize(_ db: Database, _ c: Tessera.Collection, _ id: String) throws -> Int? {
        let s = try store(c)
        return try db.read { try $0.get(s.docs, key: id)?.count }
    }

    /// Two empty databases, one storing records over `limit` bytes in two pieces (nil: over
    /// what fits a leaf node) and one with the default limit, to compare.
    static func splitAndPlain(limit: Int?) throws -> (split: Database, plain: Database) {
        var config = DatabaseConfiguration()
        config.largestInlineRecord = limit
        return (try Database.temporary(configuration: config), try Database.temporary())
    }

    /// Each query's rows from both databases (expected equal).
    static func bothRows(_ split: Database, _ plain: Database, _ sql: String) throws -> (split: [Value], plain: [Value]) {
        (try split.createQuery(sql).execute().allResults().map(\.object), try plain.createQuery(sql).execute().allResults().map(\.object))
    }

    @Test("Documents over half a page come back whole, from every way of reading them")
    func largeDocumentsRoundTrip() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "c")
        let sizes = [300, 1_900, 2_100, 2_600, 3_900, 4_300, 9_000, 40_000]
        for (i, n) in sizes.enumerated() { try c.save(id: "d\(i)", properties: Self.body(i, bytes: n)) }
        // 2,038-byte nodes on 4 KB pages: the records of 2.1 KB and more are split.
        #expect(try Self.tails(db, c) == 6)
        for (i, n) in sizes.enumerated() {
            let head = try #require(try Self.headSize(db, c, "d\(i)"))
            #expect(head <= 2_038 - 8 - 2, "d\(i) (\(n) bytes of text) has a head of \(head) bytes")
            #expect(try c.document(id: "d\(i)")?.properties == Self.body(i, bytes: n))
        }
        var seen = 0
        try c.forEachDocument { doc in
            #expect(doc.properties == Self.body(Int(doc.int(forKey: "n")), bytes: sizes[Int(doc.int(forKey: "n"))]))
            seen += 1
            return true
        }
        #expect(seen == sizes.count)
        // A full scan, a lookup by ID, an index scan and a full-text match bind whole bodies.
        let all = try db.createQuery("SELECT * FROM c ORDER BY n").execute().allResults()
        #expect(all.map(\.object) == sizes.indices.map { .object(["c": .object(Self.body($0, bytes: sizes[$0]))]) })
        try c.createIndex(withName: "byCity", config: ValueIndexConfiguration(["city"]))
        try c.createIndex(withName: "byTag", config: ArrayIndexConfiguration(path: "tags"))
        try c.createIndex(withName: "ft", config: FullTextIndexConfiguration(["text"], language: ""))
        let lengths = try db.createQuery("SELECT meta().id AS id, length(text) AS l FROM c WHERE city = 'Rome' ORDER BY meta().id")
            .execute().allResults().map { [$0.string(forKey: "id") ?? "", String($0.int(forKey: "l"))] }
        #expect(lengths == [1, 4, 7].map { ["d\($0)", String(Self.body($0, bytes: sizes[$0])["text"]!.stringValue!.count)] })
        let byID = try db.createQuery("SELECT n, text FROM c WHERE meta().id = 'd6'").execute().allResults()
        #expect(byID.first?.string(forKey: "text") == Self.body(6, bytes: 9_000)["text"]?.stringValue)
        let tagged = try db.createQuery("SELECT meta().id AS id, length(text) AS l FROM c UNNEST tags AS t WHERE t = 'amber' ORDER BY meta().id")
            .execute().allResults()
        #expect(!tagged.isEmpty && tagged.allSatisfy { $0.int(forKey: "l") > 0 })
        let matched = try db.createQuery("SELECT meta().id AS id FROM c WHERE match(ft, 'heath')").execute().allResults()
        let containing = try db.createQuery("SELECT meta().id AS id FROM c WHERE contains(text, 'heath')").execute().allResults()
        #expect(matched.count == containing.count && matched.count >= 2)
        #expect(try db.performMaintenance(.integrityCheck).isOK)
    }

    @Test("Saves, deletes and purges move the second piece with the record")
    func updatesMoveTheTail() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "c")
        try c.createIndex(withName: "byCity", config: ValueIndexConfiguration(["city"]))
        func step(_ id: String, _ bytes: Int?, tails: Int) throws {
            if let bytes {
                try c.save(id: id, properties: Self.body(bytes, bytes: bytes))
                #expect(try c.document(id: id)?.properties == Self.body(bytes, bytes: bytes))
            }
            #expect(try Self.tails(db, c) == tails, "after \(id) → \(bytes.map(String.init) ?? "-")")
            let report = try db.performMaintenance(.integrityCheck)
            #expect(report.isOK, "\(report)")
        }
        try step("a", 500, tails: 0)         // one piece
        try step("a", 3_000, tails: 1)       // grows: a tail
        try step("a", 6_000, tails: 1)       // grows beyond two leaf entries: the tail replaced
        try step("a", 2_500, tails: 1)
        try step("a", 200, tails: 0)         // shrinks: the tail goes
        try step("a", 3_500, tails: 1)
        try c.delete(id: "a")                // a tombstone has no body to split
        try step("a", nil, tails: 0)
        #expect(try c.document(id: "a") == nil)
        try step("a", 2_700, tails: 1)       // saved again over the tombstone
        try step("b", 2_200, tails: 2)
        try c.purge(id: "a")
        try step("a", nil, tails: 1)
        #expect(try c.document(id: "a") == nil)
        // The index followed every version.
        let cities = try db.createQuery("SELECT meta().id AS id, city FROM c WHERE city IS VALUED").execute().allResults()
        #expect(cities.map { $0.string(forKey: "id") } == ["b"])
    }

    @Test("A batch with IDs out of order reads its own split records and writes them sorted", arguments: [false, true])
    func unorderedBatches(shuffled: Bool) throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "c")
        try c.save(id: "m-0500", properties: Self.body(1, bytes: 2_400))
        var ids = (0..<600).map { "m-" + String(1_000 + $0) }
        ids += (0..<100).map { "a-" + String(1_000 + $0) } // below the stored ID
        var rng = SplitMix64(seed: 19)
        if shuffled { ids.shuffle(using: &rng) }
        try db.inBatch {
            for (i, id) in ids.enumerated() {
                try c.save(id: id, properties: Self.body(i, bytes: 1_000 + i * 7 % 4_000))
                if i % 97 == 0 {
                    // Reads inside the batch see the held-back pieces.
                    #expect(try c.document(id: id)?.properties == Self.body(i, bytes: 1_000 + i * 7 % 4_000))
                    let n = try db.createQuery("SELECT count(*) AS k FROM c WHERE length(text) > 0").execute().allResults().first
                    #expect(n?.int(forKey: "k") == i + 2)
                }
            }
            // An update of an earlier save of this batch, shrinking it.
            try c.save(id: ids[3], properties: Self.body(3, bytes: 100))
        }
        for (i, id) in ids.enumerated() {
            let bytes = i == 3 ? 100 : 1_000 + i * 7 % 4_000
            #expect(try c.document(id: id)?.properties == Self.body(i, bytes: bytes), "\(id)")
        }
        let expectedTails = 1 + ids.indices.filter { i in
            i != 3 && (try? Self.headSize(db, c, ids[i])).flatMap { $0 } != nil && 1_000 + i * 7 % 4_000 > 1_900
        }.count
        let stored = try Self.tails(db, c)
        // Records of over ~1.95 KB are split (the exact limit depends on the ID's length).
        #expect(abs(stored - expectedTails) <= 20, "\(stored) tails, about \(expectedTails) expected")
        let report = try db.performMaintenance(.integrityCheck)
        #expect(report.isOK, "\(report)")
        #expect(try c.documentIDs() == (ids + ["m-0500"]).sorted())
    }

    @Test("Pages hold split records instead of half-empty overflow pages")
    func splitRecordsPack() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "c")
        // 1,000 documents of 2.1–3.5 KB: on overflow pages each would take a whole 4 KB page
        // beside its leaf entry.
        try db.inBatch {
            for i in 0..<1_000 { try c.save(id: "doc-" + String(10_000 + i), properties: Self.body(i, bytes: 2_100 + i * 13 % 1_400)) }
        }
        let s = try Self.store(c)
        let (docs, tails, payload) = try db.read { txn -> (Int, Int, Int) in
            var payload = 0
            for t in [s.docs, s.tails] {
                try txn.withCursor(t) { cur in
                    var ok = try cur.first()
                    while ok { payload += cur.key.count + cur.value.count; ok = try cur.next() }
                }
            }
            return (try txn.byteSize(s.docs), try txn.byteSize(s.tails), payload)
        }
        // On overflow pages: at least 4,096,000 bytes (a page per document, and leaf pages).
        #expect(docs + tails < 1_000 * 4_096 * 9 / 10, "\(docs + tails) bytes of pages")
        #expect(Double(payload) / Double(docs + tails) > 0.75, "\(payload) bytes of entries in \(docs + tails) bytes of pages")
    }

    @Test("Rows kept beyond their own keep their assembled bodies", arguments: [nil, 64] as [Int?])
    func keptRows(limit: Int?) throws {
        let (split, plain) = try Self.splitAndPlain(limit: limit)
        defer { try? split.close(); try? plain.close() }
        for db in [split, plain] {
            let c = try db.createCollection(name: "c")
            for i in 0..<60 {
                // Names of 320 bytes sharing their first 300: index keys are truncated, so an
                // ordered index scan reads and sorts whole groups of documents.
                var doc = Self.body(i, bytes: 200 + i * 97 % 3_000)
                doc["name"] = .string(String(repeating: "n", count: 300) + String(format: "%020d", (i * 37) % 60))
                try c.save(id: "k\(i)", properties: doc)
            }
            try c.createIndex(withName: "byName", config: ValueIndexConfiguration(["name"]))
        }
        for sql in ["SELECT city, n, length(text) AS l, count(*) AS k FROM c GROUP BY city ORDER BY city",
                    "SELECT n, length(text) AS l FROM c WHERE name > 'a' ORDER BY name LIMIT 40",
                    "SELECT n, text FROM c WHERE name > 'a' ORDER BY name DESC"] {
            let (a, b) = try Self.bothRows(split, plain, sql)
            #expect(a == b, "\(sql)")
            #expect(!a.isEmpty)
        }
    }

    @Test("A query reads from a head alone only values that are whole in it", arguments: [40, 64, 90, 130, 200, 400])
    func headsAlone(limit: Int) throws {
        let (split, plain) = try Self.splitAndPlain(limit: limit)
        defer { try? split.close(); try? plain.close() }
        for db in [split, plain] {
            let c = try db.createCollection(name: "c")
            var r = SplitMix64(seed: UInt64(limit)) // the same documents in both
            for i in 0..<80 {
                // Values of every kind and length, in changing order, so that the head ends
                // inside strings, numbers, arrays, objects, keys and offset tables.
                var d: [String: Value] = [:]
                for k in 0..<(2 + r.int(8)) {
                    let key = ["a", "bb", "city", "n", "zz", "tags", "o", "s\(k)"][r.int(8)]
                    switch r.int(7) {
                    case 0: d[key] = .int(Int64(r.int(1_000_000)) - 500_000)
                    case 1: d[key] = .double(Double(r.int(10_000)) / 7)
                    case 2: d[key] = .string(String(repeating: "é", count: r.int(60)) + "x\(i)")
                    case 3: d[key] = .array((0..<r.int(6)).map { .int(Int64($0 * i)) })
                    case 4: d[key] = .object(["p": .string("v\(i)"), "q": .array([.bool(true), .null])])
                    case 5: d[key] = r.chance(0.5) ? .null : .bool(r.chance(0.5))
                    default: d[key] = .string(["Oslo", "Rome", "Bern"][r.int(3)])
                    }
                }
                try c.save(id: "d\(i)", properties: d)
            }
        }
        for sql in ["SELECT meta().id AS id, a, bb, city, n, zz, tags, o, s0, s3, s7 FROM c ORDER BY meta().id",
                    "SELECT meta().id AS id FROM c WHERE city = 'Rome' OR n > 0 OR a = 'x1' ORDER BY meta().id",
                    "SELECT city, count(*) AS k, max(n) AS m FROM c GROUP BY city ORDER BY city",
                    "SELECT meta().id AS id, t FROM c UNNEST tags AS t WHERE t > 10 ORDER BY meta().id, t",
                    "SELECT o.p AS p, length(zz) AS l, bb IS MISSING AS gone FROM c ORDER BY meta().id",
                    "SELECT c.* FROM c WHERE s7 IS VALUED ORDER BY meta().id"] {
            let (a, b) = try Self.bothRows(split, plain, sql)
            #expect(a == b, "limit \(limit): \(sql)")
        }
        #expect(try split.performMaintenance(.integrityCheck).isOK)
    }

    @Test("A large document's scalars come first, and a query on them reads no second piece")
    func scalarsFromTheHead() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "c")
        // JSON order puts the long text first and the scalar `type` last.
        let long = String(repeating: "amber birch ", count: 400)
        for i in 0..<20 {
            try c.save(id: "p\(i)", json: #"{"about":"\#(long)","city":"Oslo","n":\#(i),"type":"\#(i % 2 == 0 ? "hotel" : "inn")"}"#)
        }
        #expect(try Self.tails(db, c) == 20)
        // In the stored body the members' data is ordered by size: `type` before `about`.
        let s = try Self.store(c)
        try db.read { txn in
            let record = try #require(try txn.get(s.docs, key: "p3"))
            let root = try #require(BinaryValue.root(DocumentRecord.body(record)))
            let type = try #require(root.member("type")), n = try #require(root.member("n"))
            #expect(type.isWholeScalar && n.isWholeScalar && type.offset < 64)
            #expect(root.member("about")?.isWholeScalar != true) // cut off at the head's end
        }
        // Without the second pieces, queries on the scalars still run (they never read them);
        // anything that needs a whole body reports the damage.
        try db.write { ctx in for i in 0..<20 { _ = try ctx.txn.delete(s.tails, key: Array("p\(i)".utf8)) } }
        let hotels = try db.createQuery("SELECT meta().id AS id, n FROM c WHERE type = 'hotel' AND city = 'Oslo' ORDER BY n")
        #expect(try hotels.execute().allResults().map { $0.int(forKey: "n") } == [0, 2, 4, 6, 8, 10, 12, 14, 16, 18])
        #expect(try db.createQuery("SELECT type, count(*) AS k FROM c GROUP BY type").execute().allResults().count == 2)
        #expect(throws: DatabaseError.self) { _ = try db.createQuery("SELECT length(about) AS l FROM c").execute().allResults() }
        #expect(throws: DatabaseError.self) { _ = try db.createQuery("SELECT * FROM c WHERE n = 3").execute().allResults() }
    }

    @Test("An index back-fill reads a second piece only when the index needs what is in it")
    func backfillFromTheHead() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "c")
        let long = String(repeating: "amber birch ", count: 400)
        for i in 0..<20 {
            try c.save(id: "p\(i)", json: #"{"about":"\#(long)","tags":["t\#(i % 3)","u"],"n":\#(i),"type":"\#(i % 2 == 0 ? "hotel" : "inn")"}"#)
        }
        #expect(try Self.tails(db, c) == 20)
        // Without the second pieces, indexes on values whole in the heads are still built
        // (the back-fill reads the heads alone).
        let s = try Self.store(c)
        let keys = (0..<20).map { Array("p\($0)".utf8) }
        let tails = try db.read { txn in try keys.map { Array(try #require(try txn.get(s.tails, key: $0))) } }
        try db.write { ctx in for k in keys { _ = try ctx.txn.delete(s.tails, key: k) } }
        try c.createIndex(withName: "byType", config: ValueIndexConfiguration(["type", "n"]))
        try c.createIndex(withName: "tags", config: ArrayIndexConfiguration(path: "tags"))
        try c.createIndex(withName: "typeText", config: FullTextIndexConfiguration(["type"]))
        // An index on the value cut off at the heads' end needs the second pieces: their loss
        // is reported, and nothing of the index is left behind.
        for config in [ValueIndexConfiguration(["about"]), FullTextIndexConfiguration(["about"])] as [any IndexConfiguration] {
            do {
                try c.createIndex(withName: "about", config: config)
                Issue.record("an index on `about` was built without the second pieces")
            } catch let e as DatabaseError {
                #expect(e.code == .corrupt && e.message.contains("second piece"), "\(e)")
            }
            #expect(try !c.indexes().contains("about"))
        }
        // With the pieces back, the indexes built from the heads are what the documents give.
        try db.write { ctx in for (k, t) in zip(keys, tails) { try ctx.txn.put(s.tails, key: k, value: t) } }
        let report = try db.performMaintenance(.integrityCheck)
        #expect(report.isOK, "\(report)")
        let byType = try db.createQuery("SELECT meta().id AS id FROM c WHERE type = 'inn' AND n < 6 ORDER BY n")
        #expect(try byType.explainPlan().indexesUsed == ["byType"])
        #expect(try byType.execute().allResults().map { $0.string(forKey: "id") } == ["p1", "p3", "p5"])
        let tagged = try db.createQuery("SELECT meta().id AS id FROM c UNNEST tags AS t WHERE t = 't1' ORDER BY n")
        #expect(try tagged.explainPlan().indexesUsed == ["tags"])
        #expect(try tagged.execute().allResults().map { $0.string(forKey: "id") } == ["p1", "p4", "p7", "p10", "p13", "p16", "p19"])
        let hotels = try db.createQuery("SELECT count(*) AS k FROM c WHERE match(typeText, 'hotel')")
        #expect(try hotels.execute().allResults().first?.int(forKey: "k") == 10)
    }

    @Test("Indexes built from heads equal those built from whole records", arguments: [40, 64, 90, 130, 200, 400])
    func backfillsFromHeadsAreComplete(limit: Int) throws {
        let (split, plain) = try Self.splitAndPlain(limit: limit)
        defer { try? split.close(); try? plain.close() }
        for db in [split, plain] {
            let c = try db.createCollection(name: "c")
            var r = SplitMix64(seed: UInt64(limit) &+ 17) // the same documents in both
            for i in 0..<120 {
                // Scalars, arrays and objects of every length, so that heads end inside each.
                var d: [String: Value] = [:]
                for k in 0..<(2 + r.int(8)) {
                    let key = ["a", "city", "n", "tags", "o", "text", "s\(k)"][r.int(7)]
                    switch r.int(6) {
                    case 0: d[key] = .int(Int64(r.int(1_000)) - 500)
                    case 1: d[key] = .string(["Oslo", "Rome", "Bern"][r.int(3)] + String(repeating: "é", count: r.int(40)))
                    case 2: d[key] = .array((0..<r.int(6)).map { .string("w\(($0 * i) % 5)") })
                    case 3: d[key] = .object(["p": .string("v\(i % 4)"), "q": .array([.bool(true), .null])])
                    case 4: d[key] = .string((0..<(1 + r.int(30))).map { ["amber", "birch", "cedar", "dune"][($0 + i) % 4] }.joined(separator: " "))
                    default: d[key] = r.chance(0.5) ? .null : .double(Double(r.int(100)) / 8)
                    }
                }
                try c.save(id: "d\(i)", properties: d)
            }
            try c.createIndex(withName: "city", config: ValueIndexConfiguration(["city", "n"]))
            try c.createIndex(withName: "a", config: ValueIndexConfiguration(["a"]))
            try c.createIndex(withName: "op", config: ValueIndexConfiguration(["o.p", "o"]))
            try c.createIndex(withName: "tags", config: ArrayIndexConfiguration(path: "tags"))
            try c.createIndex(withName: "text", config: FullTextIndexConfiguration(["text", "city"]))
        }
        // The integrity check recomputes every entry from whole records.
        let report = try split.performMaintenance(.integrityCheck)
        #expect(report.isOK, "limit \(limit): \(report)")
        for sql in ["SELECT meta().id AS id, city, n FROM c WHERE city >= 'B' ORDER BY city, n, meta().id",
                    "SELECT meta().id AS id, a FROM c WHERE a IS NOT MISSING ORDER BY a, meta().id",
                    "SELECT meta().id AS id FROM c WHERE o.p = 'v1' ORDER BY meta().id",
                    "SELECT meta().id AS id, t FROM c UNNEST tags AS t WHERE t = 'w2' ORDER BY meta().id",
                    "SELECT meta().id AS id FROM c WHERE match(text, 'cedar OR oslo') ORDER BY meta().id"] {
            let (a, b) = try Self.bothRows(split, plain, sql)
            #expect(a == b, "limit \(limit): \(sql)")
            #expect(try !split.createQuery(sql).explainPlan().indexesUsed.isEmpty, "limit \(limit): \(sql)")
        }
    }

    @Test("A missing or stray second piece is damage the integrity check names")
    func damagedPieces() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "c")
        try c.save(id: "big", properties: Self.body(1, bytes: 3_000))
        try c.save(id: "small", properties: Self.body(2, bytes: 100))
        let s = try Self.store(c)
        try db.write { ctx in
            _ = try ctx.txn.delete(s.tails, key: Array("big".utf8))
            _ = try ctx.txn.put(s.tails, key: Array("small".utf8), value: [1, 2, 3])
        }
        let report = try db.performMaintenance(.integrityCheck)
        #expect(report.problems.contains { $0.contains("'big' misses the second piece") }, "\(report)")
        #expect(report.problems.contains { $0.contains("under 'small' belongs to no document") }, "\(report)")
        #expect(throws: DatabaseError.self) { _ = try c.document(id: "big") }
        do {
            _ = try c.document(id: "big")
        } catch let e as DatabaseError {
            #expect(e.code == .corrupt && e.message.contains("'big'"), "\(e)")
        }
        #expect(throws: DatabaseError.self) { _ = try db.createQuery("SELECT text FROM c").execute().allResults() }
    }
}
