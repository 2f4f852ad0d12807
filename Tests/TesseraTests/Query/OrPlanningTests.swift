import Testing
@testable import Tessera

/// SPEC §9.2: ORs on one indexed expression are planned as IN; ORs whose every branch can use
/// an index run as a union of lookups; only a branch no index serves makes the plan scan.
@Suite("OR planning")
struct OrPlanningTests {
    static func database(indexes: Bool) throws -> Database {
        let db = try Database.temporary()
        let c = try db.createCollection(name: "hotels")
        try db.inBatch {
            for i in 0..<300 {
                try c.save(id: "h\(i)", json: #"{"city":"c\#(i % 7)","type":"\#(["hotel", "inn", "motel"][i % 3])","price":\#(i % 50),"likes":["l\#(i % 5)","l\#(i % 11)"]}"#)
            }
        }
        if indexes {
            try c.createIndex(withName: "byCity", config: ValueIndexConfiguration(["city"]))
            try c.createIndex(withName: "byPrice", config: ValueIndexConfiguration(["price"]))
            try c.createIndex(withName: "likes", config: ArrayIndexConfiguration(path: "likes"))
        }
        return db
    }

    static let cases: [(sql: String, plan: String)] = [
        ("SELECT meta().id FROM hotels WHERE city = 'c1' OR city = 'c2'",
         "SEARCH hotels USING COVERING INDEX byCity (city IN (2))"),
        ("SELECT meta().id FROM hotels WHERE type = 'inn' AND (city = 'c1' OR city IN ('zz', 'c9'))",
         "SEARCH hotels USING INDEX byCity (city IN (3))\n  FILTER (type = 'inn')"),
        ("SELECT meta().id FROM hotels WHERE city = 'c1' OR price < 3 OR meta().id = 'h5'",
         "MULTI-INDEX OR hotels\n  SEARCH hotels USING INDEX byCity (city=?)\n  SEARCH hotels USING INDEX byPrice (price<?)\n  SEARCH hotels USING PRIMARY KEY (id=?)\n  FILTER (((city = 'c1') OR (price < 3)) OR (meta(hotels).id = 'h5'))"),
        ("SELECT meta().id FROM hotels WHERE city = 'c1' OR type = 'inn'",
         "SCAN hotels\n  FILTER ((city = 'c1') OR (type = 'inn'))"),
        ("SELECT meta(h).id FROM hotels AS h UNNEST h.likes AS l WHERE l = 'l7' OR l = 'l8'",
         "SEARCH l USING COVERING ARRAY INDEX likes (l IN (2)) FOR h\nSCAN l (UNNEST bound by array index)"),
    ]

    @Test("plans", arguments: cases.indices)
    func plans(_ i: Int) throws {
        let db = try Self.database(indexes: true)
        defer { try? db.close() }
        let plan = try db.createQuery(Self.cases[i].sql).explain().planOnly
        #expect(plan == Self.cases[i].plan, "\(Self.cases[i].sql)\n\(plan)")
    }

    @Test("results equal those without indexes", arguments: cases.indices)
    func results(_ i: Int) throws {
        let a = try Self.database(indexes: true), b = try Self.database(indexes: false)
        defer { try? a.close(); try? b.close() }
        let sql = Self.cases[i].sql
        let x = try a.createQuery(sql).execute().allResults().map { $0.toJSON() }.sorted()
        let y = try b.createQuery(sql).execute().allResults().map { $0.toJSON() }.sorted()
        #expect(x == y)
        #expect(!x.isEmpty)
    }
}
