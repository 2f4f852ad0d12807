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

    /// Point ranges are encoded from the parameters at each execution: IN lists and ORs over
    /// a two-column index (the cartesian product of the columns' values), with repeats, `1`
    /// and `1.0`, NULL and MISSING values and `IN $array`, ascending and descending, on
    /// queries re-run with new parameters, give the rows of the database without indexes.
    @Test("IN and OR over a two-column index, re-run with new parameters", arguments: [UInt64(5), 17])
    func parameterisedPointRanges(seed: UInt64) throws {
        func make(_ indexed: Bool) throws -> Database {
            let db = try Database.temporary()
            let c = try db.createCollection(name: "hotels")
            try db.inBatch {
                for i in 0..<240 {
                    let price = i % 9 == 0 ? "\(i % 6).0" : "\(i % 6)"
                    let city = i % 13 == 0 ? "null" : "\"c\(i % 8)\""
                    try c.save(id: "h\(i)", json: #"{"city":\#(city),"price":\#(price),"n":\#(i)}"#)
                }
            }
            if indexed { try c.createIndex(withName: "cityPrice", config: ValueIndexConfiguration(["city", "price"])) }
            return db
        }
        let a = try make(true), b = try make(false)
        defer { try? a.close(); try? b.close() }
        let sqls = [
            "SELECT meta().id, n FROM hotels WHERE city IN [$c1, $c2, $c3] AND price IN $prices ORDER BY city DESC, price DESC, n",
            "SELECT meta().id FROM hotels WHERE (city = $c1 OR city = $c2) AND (price = $p1 OR price = $p2) ORDER BY n",
            "SELECT meta().id, n, price FROM hotels WHERE city = $c1 AND price IN [$p1, $p2, $p1] ORDER BY n",
        ]
        let indexed = try sqls.map { try a.createQuery($0) }
        let plain = try sqls.map { try b.createQuery($0) }
        for (i, q) in indexed.enumerated() {
            #expect(try q.explain().contains("USING") && q.explain().contains("cityPrice"), "\(sqls[i])")
        }
        var r = SplitMix64(seed: seed)
        let cities: [Value] = (0..<9).map { .string("c\($0)") } + [.null, .int(3)]
        let prices: [Value] = [.int(0), .double(0), .int(1), .double(2.0), .int(5), .double(5.5), .string("1"), .null]
        let names = [["c1", "c2", "c3", "prices"], ["c1", "c2", "p1", "p2"], ["c1", "p1", "p2"]]
        var rows = [0, 0, 0]
        for round in 0..<60 {
            var v: [String: Value] = [:]
            for name in ["c1", "c2", "c3"] { v[name] = r.pick(cities) }
            if round % 7 == 3 { v["c2"] = v["c1"] }
            for name in ["p1", "p2"] { v[name] = r.pick(prices) }
            v["prices"] = round % 10 == 9 ? .string("not an array") : .array((0..<r.int(5)).map { _ in r.pick(prices) })
            for (i, q) in indexed.enumerated() {
                var p = Parameters()
                for name in names[i] { p = p.setValue(v[name]!, forName: name) }
                q.parameters = p
                plain[i].parameters = p
                let x = try q.execute().allResults().map { $0.toJSON() }
                let y = try plain[i].execute().allResults().map { $0.toJSON() }
                #expect(x == y, "round \(round): \(sqls[i])")
                rows[i] += x.count
            }
        }
        #expect(rows.allSatisfy { $0 > 30 }, "rows per query: \(rows)")
    }
}
