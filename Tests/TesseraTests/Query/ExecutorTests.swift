import Testing
@testable import Tessera

/// Unit tests for each plan node and the result-set API (behaviour in depth is in Fixtures/).
@Suite("Executor plan nodes")
struct ExecutorTests {
    func db(_ setUp: (Database) throws -> Void) throws -> Database {
        let d = try Database.temporary()
        try setUp(d)
        return d
    }

    func rows(_ db: Database, _ sql: String, _ params: [String: Value] = [:]) throws -> [Value] {
        let q = try db.createQuery(sql)
        q.parameters = Parameters(params)
        return try q.execute().allResults().map(\.object)
    }

    func plan(_ db: Database, _ sql: String) throws -> ExplainPlan {
        try db.createQuery(sql).explainPlan()
    }

    @Test func collectionScanSkipsTombstonesUnlessAsked() throws {
        let d = try db { d in
            let c = try d.defaultCollection()
            try c.save(id: "a", json: #"{"v":1}"#)
            try c.save(id: "b", json: #"{"v":2}"#)
            try c.delete(id: "b")
        }
        defer { try? d.close() }
        #expect(try rows(d, "SELECT meta().id FROM _") == [["id": "a"]])
        #expect(try rows(d, "SELECT meta().id, meta().deleted FROM _ ORDER BY meta().id")
            == [["id": "a", "deleted": false], ["id": "b", "deleted": true]])
        #expect(try plan(d, "SELECT v FROM _").sources.map(\.access) == [.fullScan])
    }

    @Test func unnestScanYieldsOneRowPerElementAndNoneForNonArrays() throws {
        let d = try db { d in
            let c = try d.defaultCollection()
            try c.save(id: "a", json: #"{"xs":[1,2,2]}"#)
            try c.save(id: "b", json: #"{"xs":"no"}"#)
            try c.save(id: "c", json: #"{}"#)
        }
        defer { try? d.close() }
        let r = try rows(d, "SELECT meta().id AS id, x FROM _ UNNEST xs AS x")
        #expect(r == [["id": "a", "x": 1], ["id": "a", "x": 2], ["id": "a", "x": 2]])
        #expect(try plan(d, "SELECT x FROM _ UNNEST xs AS x").sources.map(\.access) == [.fullScan, .unnest])
    }

    @Test func indexScanRangesInListsAndDescendingOrder() throws {
        let d = try db { d in
            let c = try d.defaultCollection()
            try d.inBatch { for i in 0..<50 { try c.save(id: "d\(i)", properties: ["n": .int(Int64(i)), "g": .int(Int64(i % 5))]) } }
            try c.createIndex(withName: "byN", config: ValueIndexConfiguration(["n"]))
        }
        defer { try? d.close() }
        #expect(try rows(d, "SELECT n FROM _ WHERE n BETWEEN 10 AND 12").count == 3)
        #expect(try rows(d, "SELECT n FROM _ WHERE n IN (3, 3.0, 7, 99)").count == 2)
        #expect(try rows(d, "SELECT n FROM _ WHERE n > 45 ORDER BY n DESC LIMIT 2") == [["n": 49], ["n": 48]])
        let p = try plan(d, "SELECT n FROM _ WHERE n > 45 ORDER BY n DESC LIMIT 2")
        #expect(p.indexesUsed == ["byN"])
        #expect(p.sort == "none")
        #expect(p.sources[0].covering)
        #expect(try rows(d, "SELECT n FROM _ WHERE n < $x", ["x": .null]).isEmpty)
    }

    @Test func joinsInnerLeftOuterAndCross() throws {
        let d = try db { d in
            let a = try d.createCollection(name: "a")
            let b = try d.createCollection(name: "b")
            try a.save(id: "a1", json: #"{"k":1}"#)
            try a.save(id: "a2", json: #"{"k":2}"#)
            try b.save(id: "b1", json: #"{"k":1,"v":"x"}"#)
            try b.save(id: "b2", json: #"{"k":1,"v":"y"}"#)
        }
        defer { try? d.close() }
        #expect(try rows(d, "SELECT a.k, b.v FROM a JOIN b ON a.k = b.k ORDER BY b.v") == [["k": 1, "v": "x"], ["k": 1, "v": "y"]])
        #expect(try rows(d, "SELECT a.k, b.v FROM a LEFT JOIN b ON a.k = b.k ORDER BY a.k, b.v").count == 3)
        #expect(try rows(d, "SELECT a.k, b.v FROM a LEFT JOIN b ON a.k = b.k WHERE a.k = 2") == [["k": 2]])
        #expect(try rows(d, "SELECT a.k, b.v FROM a CROSS JOIN b").count == 4)
    }

    @Test func groupingDistinctAndAggregatesOnEmptyInput() throws {
        let d = try db { d in
            let c = try d.defaultCollection()
            for (i, g) in ["x", "y", "x", "x"].enumerated() { try c.save(id: "d\(i)", properties: ["g": .string(g), "n": .int(Int64(i))]) }
        }
        defer { try? d.close() }
        #expect(try rows(d, "SELECT g, count(*) AS c, sum(n) AS s FROM _ GROUP BY g ORDER BY g")
            == [["g": "x", "c": 3, "s": 5], ["g": "y", "c": 1, "s": 1]])
        #expect(try rows(d, "SELECT count(*) AS c, max(n) AS m FROM _ WHERE n > 100") == [["c": 0, "m": .null]])
        #expect(try rows(d, "SELECT DISTINCT g FROM _ ORDER BY g") == [["g": "x"], ["g": "y"]])
        #expect(try rows(d, "SELECT g FROM _ GROUP BY g HAVING count(*) > 1") == [["g": "x"]])
    }

    @Test func topKEqualsFullSortPrefixAndOffsetLimit() throws {
        let d = try db { d in
            let c = try d.defaultCollection()
            var r = SplitMix64(seed: 9)
            try d.inBatch { for i in 0..<300 { try c.save(id: "d\(i)", properties: ["v": .int(Int64(r.next() % 50))]) } }
        }
        defer { try? d.close() }
        let all = try rows(d, "SELECT meta().id AS id, v FROM _ ORDER BY v DESC, meta().id")
        for (limit, offset) in [(1, 0), (10, 0), (10, 5), (299, 3), (0, 0)] {
            let part = try rows(d, "SELECT meta().id AS id, v FROM _ ORDER BY v DESC, meta().id LIMIT \(limit) OFFSET \(offset)")
            #expect(part == Array(all.dropFirst(offset).prefix(limit)), "limit \(limit) offset \(offset)")
        }
        #expect(try plan(d, "SELECT v FROM _ ORDER BY v LIMIT 5").sort == "topK(5)")
        #expect(try rows(d, "SELECT v FROM _ LIMIT -1").isEmpty)
        #expect(try rows(d, "SELECT v FROM _ OFFSET 295").count == 5)
    }

    @Test func boundedHeapKeepsTheSmallest() {
        var r = SplitMix64(seed: 3)
        for trial in 0..<50 {
            let values = (0..<Int(r.next() % 200)).map { _ in Int(r.next() % 1000) }
            let k = Int(r.next() % 20)
            var heap = BoundedHeap<Int>(capacity: k, less: <)
            values.forEach { heap.insert($0) }
            #expect(heap.sortedElements() == Array(values.sorted().prefix(k)), "trial \(trial)")
        }
    }

    @Test func fullTextScanRanksAndBindsDocuments() throws {
        let d = try db { d in
            let c = try d.defaultCollection()
            try c.save(id: "a", json: #"{"t":"the quick brown fox"}"#)
            try c.save(id: "b", json: #"{"t":"fox fox fox"}"#)
            try c.save(id: "c", json: #"{"t":"slow turtle"}"#)
            try c.createIndex(withName: "ft", config: FullTextIndexConfiguration(["t"]))
        }
        defer { try? d.close() }
        let r = try rows(d, "SELECT meta().id AS id FROM _ WHERE match(ft, 'fox') ORDER BY rank(ft) DESC")
        #expect(r == [["id": "b"], ["id": "a"]])
        #expect(try plan(d, "SELECT meta().id FROM _ WHERE match(ft, 'fox')").sources[0].access == .fullText)
    }

    @Test func resultAPI() throws {
        struct Row: Decodable, Equatable { var name: String; var n: Int }
        let d = try db { d in try d.defaultCollection().save(id: "a", json: #"{"name":"Ann","n":3}"#) }
        defer { try? d.close() }
        let r = try #require(try d.createQuery("SELECT name, n, missingThing, NULL AS z FROM _").execute().allResults().first)
        #expect(r.keys == ["name", "n", "missingThing", "z"])
        #expect(r.string(at: 0) == "Ann" && r.int(forKey: "n") == 3)
        #expect(r.value(at: 2) == nil && !r.contains(key: "missingThing"))
        #expect(r.value(forKey: "z") == .null)
        #expect(r.toJSON() == #"{"n":3,"name":"Ann","z":null}"#)
        #expect(r.toArray().count == 4)
        #expect(try r.data(as: Row.self) == Row(name: "Ann", n: 3))
        #expect(try d.createQuery("SELECT name FROM _").columnNames == ["name"])
    }

    @Test func errorsCarryKindAndPosition() throws {
        let d = try Database.temporary()
        defer { try? d.close() }
        do {
            _ = try d.createQuery("SELECT nope(1)\nFROM _")
            Issue.record("expected an error")
        } catch let e as QueryError {
            #expect(e.kind == .semantic)
            #expect(e.location?.line == 1 && e.location?.column == 8)
            #expect(e.description.contains("^"))
        }
        #expect(throws: QueryError.self) { try d.createQuery("SELECT x FROM missing_collection") }
        let q = try d.createQuery("SELECT $a FROM _")
        q.parameters = Parameters().setInt(1, forName: "b")
        #expect(throws: QueryError.self) { try q.execute() }
    }
}
