import Testing
@testable import Tessera

/// Issue 20: the index advisor. Over seeded random queries on a generated collection with no
/// indexes, every advised index, once created, is used by the plan, makes the query read
/// fewer rows (EXPLAIN ANALYZE: index entries plus documents) and never changes its rows.
@Suite("Index advisor")
struct IndexAdvisorTests {
    static func makeDatabase() throws -> (Database, Tessera.Collection) {
        let db = try Database.temporary()
        let c = try db.createCollection(name: "items")
        var r = SplitMix64(seed: 20)
        try db.inBatch {
            for i in 0..<1500 {
                let tags = (0..<r.int(4)).map { _ in "\"t\(r.int(30))\"" }.joined(separator: ",")
                let contacts = (0..<r.int(3)).map { _ in #"{"kind":"k\#(r.int(6))","n":\#(r.int(100))}"# }.joined(separator: ",")
                try c.save(id: "i\(i)", json: #"{"kind":"\#(["a", "b", "c", "d"][r.int(4)])","city":"c\#(r.int(120))","price":\#(r.int(1000)),"name":"n\#(r.int(5000))","tags":[\#(tags)],"contacts":[\#(contacts)]}"#)
            }
        }
        return (db, c)
    }

    static func randomQuery(_ r: inout SplitMix64) -> String {
        let city = "'c\(r.int(120))'", price = r.int(1000)
        switch r.int(9) {
        case 0: return "SELECT meta().id, name FROM items WHERE city = \(city)"
        case 1: return "SELECT meta().id FROM items WHERE city = \(city) AND price < \(price)"
        case 2: return "SELECT meta().id, price FROM items WHERE price BETWEEN \(price) AND \(price + 5)"
        case 3: return "SELECT name FROM items WHERE kind = 'a' AND city = \(city) ORDER BY name LIMIT 5"
        case 4: return "SELECT meta().id FROM items WHERE name = 'n\(r.int(5000))'"
        case 5: return "SELECT meta(i).id FROM items AS i UNNEST i.tags AS t WHERE t = 't\(r.int(30))'"
        case 6: return "SELECT meta(i).id, c.n FROM items AS i UNNEST i.contacts AS c WHERE c.kind = 'k\(r.int(6))' AND c.n < \(r.int(10))"
        case 7: return "SELECT meta().id FROM items WHERE city IN (\(city), 'c\(r.int(120))') AND kind = 'b'"
        default: return "SELECT name, price FROM items WHERE price > \(price) ORDER BY price LIMIT 3"
        }
    }

    static func rowsRead(_ plan: ExplainPlan) -> Int {
        plan.sources.reduce(0) { $0 + ($1.analysis.map { $0.documentsRead + $0.indexEntriesRead } ?? 0) }
    }

    static func rows(_ db: Database, _ sql: String) throws -> [String] {
        try db.createQuery(sql).execute().allResults().map { $0.toJSON() }.sorted()
    }

    @Test("every advised index is used, reads fewer rows and keeps the results (seeded random queries)")
    func randomQueries() throws {
        let (db, c) = try Self.makeDatabase()
        defer { try? db.close() }
        var r = SplitMix64(seed: 2020)
        var advised = 0
        for _ in 0..<40 {
            let sql = Self.randomQuery(&r)
            let q = try db.createQuery(sql)
            let advice = try db.adviseIndexes(for: q)
            #expect(try c.indexes().isEmpty, "the advisor created something")
            let before = try Self.rows(db, sql)
            let readBefore = Self.rowsRead(try q.explainPlan(analyze: true))
            for a in advice {
                #expect(a.estimatedRowsAfter < a.estimatedRowsBefore, "\(sql)")
                try c.createIndex(withName: a.name, config: a.configuration)
                let plan = try db.createQuery(sql).explainPlan(analyze: true)
                #expect(plan.indexesUsed.contains(a.name), "\(sql): \(a.swiftConfiguration)\n\(plan.text)")
                #expect(Self.rowsRead(plan) < readBefore, "\(sql): \(a.swiftConfiguration)\n\(plan.text)")
                #expect(try Self.rows(db, sql) == before, "\(sql): \(a.swiftConfiguration)")
                try c.deleteIndex(forName: a.name)
                advised += 1
            }
        }
        #expect(advised >= 30)
    }

    @Test("the advice names the index in the API's and the command line's terms")
    func texts() throws {
        let (db, _) = try Self.makeDatabase()
        defer { try? db.close() }
        let a = try #require(try db.adviseIndexes(for: db.createQuery("SELECT meta().id FROM items WHERE city = 'c7' AND price < 10")).first)
        #expect(a.collection == "_default.items")
        #expect(a.swiftConfiguration == #"ValueIndexConfiguration(["city", "price"])"#)
        #expect(a.command == "tessera index create DB items_city_price --collection items --value 'city, price'")
        let u = try #require(try db.adviseIndexes(for: db.createQuery("SELECT meta(i).id FROM items AS i UNNEST i.tags AS t WHERE t = 't3'")).first)
        #expect(u.swiftConfiguration == #"ArrayIndexConfiguration(path: "tags")"#)
        #expect(u.command == "tessera index create DB items_tags --collection items --array 'tags'")
        // Nothing to gain: no advice.
        #expect(try db.adviseIndexes(for: db.createQuery("SELECT count(*) FROM items")).isEmpty)
        // Inside a batch the trial transaction would undo the batch.
        #expect(throws: DatabaseError.self) { try db.inBatch { _ = try db.adviseIndexes(for: db.createQuery("SELECT * FROM items WHERE city = 'c1'")) } }
    }

    @Test("a MATCH naming a missing full-text index: that index over the longest text property")
    func missingFullTextIndex() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "notes")
        var r = SplitMix64(seed: 8)
        let words = ["river", "station", "quiet", "garden", "harbour", "market", "bridge", "tower"]
        try db.inBatch {
            for i in 0..<300 {
                let body = (0..<(6 + r.int(10))).map { _ in words[r.int(words.count)] }.joined(separator: " ")
                try c.save(id: "n\(i)", json: #"{"title":"note \#(i)","body text":"\#(body)","kind":"k\#(r.int(3))"}"#)
            }
        }
        let sql = "SELECT meta().id FROM notes WHERE MATCH(notesFTS, $q) ORDER BY RANK(notesFTS) DESC"
        // createQuery rejects the query until the index exists.
        #expect(throws: QueryError.self) { try db.createQuery(sql) }
        let advice = try db.adviseIndexes(for: sql, parameters: Parameters().setString("harbour", forName: "q"))
        #expect(try c.indexes().isEmpty, "the advisor created something")
        let a = try #require(advice.first)
        #expect(advice.count == 1)
        #expect(a.name == "notesFTS")
        #expect(a.swiftConfiguration == #"FullTextIndexConfiguration(["`body text`"])"#)
        #expect(a.command == "tessera index create DB notesFTS --collection notes --fulltext '`body text`'")
        #expect(a.estimatedRowsBefore == 300)
        try c.createIndex(withName: a.name, config: a.configuration)
        let q = try db.createQuery(sql)
        q.parameters = Parameters().setString("harbour", forName: "q")
        let rows = try q.execute().allResults().count
        #expect(rows == a.estimatedRowsAfter && rows > 0 && rows < 300)
        #expect(try q.explain().hasPrefix("SEARCH notes USING FULL-TEXT INDEX notesFTS"))
        // Nothing to index: no advice, and no error.
        let empty = try db.createCollection(name: "numbers")
        try empty.save(id: "x", json: #"{"n":1}"#)
        #expect(try db.adviseIndexes(for: "SELECT meta().id FROM numbers WHERE MATCH(idx, 'a')").isEmpty)
    }
}
