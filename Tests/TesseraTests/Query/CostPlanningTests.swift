import Foundation
import Testing
@testable import Tessera

/// Issue 16 item 5: the planner picks the access path with the fewest estimated rows read —
/// an index matching 90 % of a collection loses to the full scan, a selective one wins — from
/// index statistics that are stored with the index, survive reopening and follow writes.
@Suite("Cost-based planning")
struct CostPlanningTests {
    /// 2,000 documents: 90 % hotels, 10 % inns; prices 0 … 999; one of 200 cities.
    static func fill(_ c: Tessera.Collection, from: Int = 0, count: Int = 2000) throws {
        try c.database.inBatch {
            for i in from..<(from + count) {
                let type = i % 10 == 0 ? "inn" : "hotel"
                try c.save(id: "d\(i)", json: #"{"type":"\#(type)","price":\#(i % 1000),"city":"c\#(i % 200)","likes":["x\#(i % 50)","y"]}"#)
            }
        }
    }

    static func makeDatabase() throws -> (Database, Tessera.Collection) {
        let db = try Database.temporary()
        let c = try db.createCollection(name: "h")
        try fill(c)
        try c.createIndex(withName: "byType", config: ValueIndexConfiguration(["type"]))
        try c.createIndex(withName: "byPrice", config: ValueIndexConfiguration(["price"]))
        try c.createIndex(withName: "byCity", config: ValueIndexConfiguration(["city"]))
        try c.createIndex(withName: "likes", config: ArrayIndexConfiguration(path: "likes"))
        return (db, c)
    }

    static func plan(_ db: Database, _ sql: String) throws -> ExplainPlan.Source {
        try db.createQuery(sql).explainPlan().sources[0]
    }

    static func rows(_ db: Database, _ sql: String) throws -> [String] {
        try db.createQuery(sql).execute().allResults().map { $0.toJSON() }.sorted()
    }

    @Test("an index matching 90 % of the collection loses to the full scan; a selective one wins")
    func ninetyPercent() throws {
        let (db, _) = try Self.makeDatabase()
        defer { try? db.close() }
        let common = try Self.plan(db, "SELECT * FROM h WHERE type = 'hotel'")
        // (Reading only `type` and the ID, the index covers the query: 1,800 entries are
        // cheaper than 2,000 documents.)
        #expect(try Self.plan(db, "SELECT meta().id FROM h WHERE type = 'hotel'").covering)
        #expect(common.access == .fullScan)
        #expect(common.estimatedRows == 2000)
        let rare = try Self.plan(db, "SELECT * FROM h WHERE type = 'inn'")
        #expect(rare.access == .indexLookup && rare.index == "byType")
        #expect((100...300).contains(rare.estimatedRows ?? 0), "estimate \(String(describing: rare.estimatedRows))")
        // Ranges: 95 % of the prices vs 1 %.
        #expect(try Self.plan(db, "SELECT * FROM h WHERE price >= 50").access == .fullScan)
        let narrow = try Self.plan(db, "SELECT * FROM h WHERE price > 989")
        #expect(narrow.index == "byPrice")
        // Selective equality on a column with many values, through a parameter too.
        #expect(try Self.plan(db, "SELECT * FROM h WHERE city = 'c7'").index == "byCity")
        let q = try db.createQuery("SELECT * FROM h WHERE city = $c")
        #expect(try q.explainPlan().sources[0].index == "byCity")
        // The cheaper of two indexes, whatever their number of constrained columns.
        #expect(try Self.plan(db, "SELECT * FROM h WHERE type = 'hotel' AND price > 989").index == "byPrice")
        // Array index: a common element scans, a rare one uses the index.
        #expect(try db.createQuery("SELECT h.price FROM h UNNEST h.likes AS l WHERE l = 'y'").explainPlan().indexesUsed == [])
        #expect(try db.createQuery("SELECT h.price FROM h UNNEST h.likes AS l WHERE l = 'x7'").explainPlan().indexesUsed == ["likes"])
    }

    @Test("ORDER BY with LIMIT keeps an ordered index even when its range matches everything")
    func orderedLimit() throws {
        let (db, _) = try Self.makeDatabase()
        defer { try? db.close() }
        let s = try Self.plan(db, "SELECT meta().id, price FROM h WHERE price >= 0 ORDER BY price LIMIT 5")
        #expect(s.index == "byPrice")
        #expect((s.estimatedRows ?? .max) <= 5)
        #expect(try db.createQuery("SELECT meta().id FROM h ORDER BY meta().id LIMIT 3").explain().planOnly == "SCAN h USING COVERING PRIMARY KEY\nLIMIT 3")
        // A MATCH-free covering GROUP BY reads the index, not the documents.
        #expect(try Self.plan(db, "SELECT type, count(*) AS n FROM h GROUP BY type").index == "byType")
    }

    @Test("results are the same whichever path the estimate picks")
    func sameResults() throws {
        let (db, c) = try Self.makeDatabase()
        defer { try? db.close() }
        let queries = [
            "SELECT * FROM h WHERE type = 'hotel'", "SELECT * FROM h WHERE type = 'inn'",
            "SELECT * FROM h WHERE price >= 50", "SELECT * FROM h WHERE price > 989",
            "SELECT * FROM h WHERE type = 'hotel' AND price > 989",
            "SELECT meta(h).id AS id, l FROM h UNNEST h.likes AS l WHERE l = 'y'",
        ]
        let with = try queries.map { try Self.rows(db, $0) }
        for name in try c.indexes() { try c.deleteIndex(forName: name) }
        let without = try queries.map { try Self.rows(db, $0) }
        #expect(with == without)
    }

    @Test("statistics are stored with the index, survive reopening and follow inserts and deletes")
    func statisticsPersist() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-cost-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let db = try Database(path: dir)
            let c = try db.createCollection(name: "h")
            try Self.fill(c)
            try c.createIndex(withName: "byType", config: ValueIndexConfiguration(["type"]))
            try db.close()
        }
        let db = try Database(path: dir)
        defer { try? db.close() }
        let c = try #require(try db.collection(name: "h"))
        func stored() throws -> IndexStatistics? {
            let index = try #require(c.currentStore().indexes.first)
            return try db.read { txn in try txn.get(db.metaTable, key: IndexStatistics.key(index)).flatMap(IndexStatistics.init(encoded:)) }
        }
        let first = try #require(try stored())
        #expect(first.entries == 2000)
        #expect(first.distinct == [2])
        #expect(first.samples.count == 63 || first.samples.count == 64)
        #expect(try Self.plan(db, "SELECT * FROM h WHERE type = 'hotel'").access == .fullScan)

        // A few saves are within the drift allowed; many more refresh the statistics.
        try Self.fill(c, from: 2000, count: 10)
        #expect(try stored()?.entries == 2000)
        try Self.fill(c, from: 2010, count: 1990)
        #expect(try stored()?.entries == 4000)
        try db.inBatch { for i in 0..<3000 { try c.delete(id: "d\(i)") } }
        #expect(try stored()?.entries == 1000)

        // Deleting the index forgets them.
        try c.deleteIndex(forName: "byType")
        #expect(try db.read { txn in try txn.get(db.metaTable, key: Array("stats:_default.h:byType".utf8)) } == nil)
    }

    @Test("statistics taken from a back-fill's sorted keys equal those read back from the index (seeded)", arguments: [3, 9] as [UInt64])
    func backfillStatisticsMatchTheIndex(seed: UInt64) throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "h")
        var r = SplitMix64(seed: seed)
        let long = String(repeating: "q", count: 600) // keys over the limit are truncated
        try db.inBatch {
            for i in 0..<(300 + r.int(3_000)) {
                var d: [String: Value] = ["type": .string(["hotel", "inn", long + "a", long + "b"][r.int(4)])]
                if r.chance(0.8) { d["n"] = .int(Int64(r.int(40))) }
                if r.chance(0.7) { d["tags"] = .array((0..<r.int(5)).map { _ in .string("t\(r.int(6))") }) }
                try c.save(id: "d\(i)", properties: d)
            }
        }
        let configs: [(String, any IndexConfiguration)] = [("byType", ValueIndexConfiguration(["type", "n"])),
                                                           ("byN", ValueIndexConfiguration(["n"])),
                                                           ("tags", ArrayIndexConfiguration(path: "tags"))]
        for (name, config) in configs {
            try c.createIndex(withName: name, config: config)
            let index = try #require(c.currentStore().indexes.first { $0.definition.name == name })
            let (stored, computed) = try db.read { txn in
                (try txn.get(db.metaTable, key: IndexStatistics.key(index)).flatMap(IndexStatistics.init(encoded:)),
                 try IndexStatistics.compute(index, snapshot: txn))
            }
            #expect(stored == computed, "\(name)")
            #expect(computed.entries > 0)
        }
    }

    @Test("a database written before statistics existed is planned from computed ones; a write stores them")
    func olderDatabase() throws {
        let (db, c) = try Self.makeDatabase()
        defer { try? db.close() }
        let index = try #require(c.currentStore().indexes.first { $0.definition.name == "byType" })
        try db.write { ctx in _ = try ctx.txn.delete(db.metaTable, key: IndexStatistics.key(index)) }
        #expect(try Self.plan(db, "SELECT * FROM h WHERE type = 'hotel'").access == .fullScan)
        #expect(try Self.plan(db, "SELECT * FROM h WHERE type = 'inn'").index == "byType")
        try c.save(id: "new", json: #"{"type":"inn"}"#)
        let raw = try db.read { txn in try txn.get(db.metaTable, key: IndexStatistics.key(index)).map { Array($0) } }
        #expect(raw.flatMap { $0.withUnsafeBytes(IndexStatistics.init(encoded:)) }?.entries == 2001)
    }

    @Test("a cached plan is remade when the collection grows past its size class")
    func cachedPlanFollowsSize() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "h")
        try c.createIndex(withName: "byType", config: ValueIndexConfiguration(["type"]))
        let q = try db.createQuery("SELECT * FROM h WHERE type = 'hotel'")
        #expect(try q.execute().allResults().isEmpty)
        try Self.fill(c)
        #expect(try q.execute().allResults().count == 1800)
        #expect(try q.explainPlan().sources[0].access == .fullScan)
    }

    @Test("x IN $array is estimated from the array's size at planning time")
    func inArrayParameter() throws {
        let (db, _) = try Self.makeDatabase()
        defer { try? db.close() }
        func estimate(_ cities: Int) throws -> (Int?, String?) {
            let q = try db.createQuery("SELECT meta().id, price FROM h WHERE city IN $cities")
            q.parameters = Parameters().setArray((0..<cities).map { .string("c\($0)") }, forName: "cities")
            let s = try q.explainPlan().sources[0]
            #expect(try q.execute().allResults().count == cities * 10)
            return (s.estimatedRows, s.index)
        }
        // 200 cities, 10 documents each.
        let one = try estimate(1), forty = try estimate(40)
        #expect(one.0 == 10 && one.1 == "byCity", "\(one)")
        #expect(forty.0 == 400 && forty.1 == "byCity", "\(forty)")
        // Nearly every city: the scan reads fewer rows than 190 lookups and their documents.
        let most = try estimate(190)
        #expect(most.1 == nil, "\(most)")
        // One query re-run with other arrays: a much longer or shorter one gets a new plan.
        let q = try db.createQuery("SELECT meta().id, price FROM h WHERE city IN $cities")
        for n in [1, 190, 2, 180] {
            q.parameters = Parameters().setArray((0..<n).map { .string("c\($0)") }, forName: "cities")
            #expect((try q.explainPlan(analyze: true).sources[0].index == nil) == (n > 100), "\(n) cities")
            #expect(try q.execute().allResults().count == n * 10)
        }
        // Unbound, the parameter is MISSING: no key, at most one point's rows.
        let unbound = try db.createQuery("SELECT meta().id, price FROM h WHERE city IN $cities").explainPlan().sources[0]
        #expect(unbound.estimatedRows == 10 && unbound.index == "byCity", "\(unbound)")
    }
}
