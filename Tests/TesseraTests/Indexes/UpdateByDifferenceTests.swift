import Testing
@testable import Tessera

/// An update writes only the index entries whose values it changes: an index whose values
/// stay the same is not touched at all — not one page of its tables (LMDB copies every page a
/// write changes, so a table's record in the main table, with its root page, changes with any
/// write to it). Full text: text that did not change is not tokenized again.
@Suite("Indexes: updates by difference")
struct UpdateByDifferenceTests {
    /// Every index table's record in LMDB's main table.
    static func records(_ db: Database) throws -> [String: [UInt8]] {
        try db.store.read { snap in
            var out: [String: [UInt8]] = [:]
            for name in try snap.lmdb.tableNames() where name.hasPrefix("idx:") { out[name] = try snap.lmdb.tableRecord(name) }
            return out
        }
    }

    /// The index names (`byCity`, `text`, …) whose tables `body` wrote to.
    static func touched(_ db: Database, _ body: () throws -> Void) throws -> Set<String> {
        let before = try records(db)
        try body()
        let after = try records(db)
        #expect(before.keys == after.keys)
        return Set(after.keys.filter { before[$0] != after[$0] }.map { name in
            // idx:_default.hotels:byCity or idx:_default.hotels:text:stats → byCity, text
            String(name.split(separator: ":")[2])
        })
    }

    static func hotel(_ i: Int) -> [String: Value] {
        [
            "name": .string("Hotel \(i)"), "city": .string(["Paris", "Rome", "Oslo"][i % 3]), "stars": .int(Int64(i % 5)),
            "likes": ["pool", "view", .string("w\(i % 4)")], "description": .string("A quiet room near the station, number \(i)"),
            "price": .int(Int64(100 + i)),
        ]
    }

    @Test func anUpdateTouchesOnlyTheIndexesWhoseValuesItChanges() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "hotels")
        try c.createIndex(withName: "byCity", config: ValueIndexConfiguration(["city", "stars"]))
        try c.createIndex(withName: "cheap", config: ValueIndexConfiguration(["name"], where: "price < 150"))
        try c.createIndex(withName: "byLike", config: ArrayIndexConfiguration(path: "likes"))
        try c.createIndex(withName: "text", config: FullTextIndexConfiguration(["description"]))
        try c.createIndex(withName: "titled", config: FullTextIndexConfiguration(["name", "description"]))
        try db.inBatch { for i in 0..<300 { try c.save(id: "h\(i)", properties: Self.hotel(i)) } }

        func update(_ id: String, _ change: (MutableDocument) -> Void) throws -> Set<String> {
            try Self.touched(db) {
                let doc = try #require(try c.document(id: id)).toMutable()
                change(doc)
                try c.save(document: doc)
            }
        }
        // Properties no index reads; the same body again; array elements reordered.
        #expect(try update("h10") { $0.setInt(120, forKey: "price") } == [])
        #expect(try update("h11") { _ in } == [])
        #expect(try update("h12") { $0.setValue(["w0", "view", "pool"], forKey: "likes") } == [])
        #expect(try update("h13") { $0.setString("Rome", forKey: "district") } == [])
        // Each indexed value touches its own indexes only.
        #expect(try update("h20") { $0.setString("Nice", forKey: "city") } == ["byCity"])
        #expect(try update("h21") { $0.setInt(9, forKey: "stars") } == ["byCity"])
        #expect(try update("h22") { $0.setValue(["pool", "spa"], forKey: "likes") } == ["byLike"])
        #expect(try update("h23") { $0.setString("A loud room above the bar", forKey: "description") } == ["text", "titled"])
        #expect(try update("h24") { $0.setString("Grand Hotel", forKey: "name") } == ["titled", "cheap"])
        // Leaving a partial index's `where` touches it; staying outside does not.
        #expect(try update("h25") { $0.setInt(500, forKey: "price") } == ["cheap"])
        #expect(try update("h26") { $0.setInt(501, forKey: "price") } == ["cheap"])
        #expect(try update("h26") { $0.setInt(502, forKey: "price") } == [])
        // A batch of updates of unindexed properties writes no index page either.
        #expect(try Self.touched(db) {
            try db.inBatch {
                for i in 100..<200 {
                    let doc = try #require(try c.document(id: "h\(i)")).toMutable()
                    doc.setInt(i * 7, forKey: "views")
                    try c.save(document: doc)
                }
            }
        } == [])
        let report = try db.performMaintenance(.integrityCheck)
        #expect(report.isOK, "\(report)")
        #expect(try db.createQuery("SELECT COUNT(*) AS n FROM hotels WHERE MATCH(text, 'loud')").execute().allResults()[0].int(forKey: "n") == 1)
    }

    /// Same text, byte for byte, is what skips tokenizing: values that compare equal but may
    /// tokenize differently (an integer and a double, canonically equivalent strings) count
    /// as changed.
    @Test func fullTextSkipsOnlyTextThatIsTheSameByteForByte() {
        let same = FullTextIndexKind.sameText
        #expect(same(["caf\u{e9}", 3, .array(["a", 1.5])], ["caf\u{e9}", 3, .array(["a", 1.5])]))
        #expect(!same(["caf\u{e9}"], ["cafe\u{301}"]))
        #expect(!same([1], [1.0]))
        #expect(!same([0.0], [-0.0]))
        #expect(!same(["a"], ["a", "b"]))
        #expect(!same([.object(["a": 1])], [.object(["a": 1])]))
        #expect(same([.missing, .null], [.missing, .null]))
    }
}
