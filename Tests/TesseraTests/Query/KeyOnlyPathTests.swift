import Testing
@testable import Tessera

/// Index paths that read keys only: `count(*)` under a WHERE an index satisfies counts the
/// entries without binding rows, and DISTINCT (or GROUP BY without aggregates) over a covering
/// index seeks past each group (a skip-scan). Both return exactly the rows of the plain path:
/// MISSING and NULL keys, values longer than a key, numbers only a document tells apart,
/// partial indexes, tombstones, purges, saves inside a batch.
@Suite("Key-only index paths")
struct KeyOnlyPathTests {
    static func database(indexes: Bool, seed: UInt64) throws -> Database {
        let db = try IndexGroupingTests.database(indexes: indexes, seed: seed)
        let c = try #require(try db.collection(name: "h"))
        var r = SplitMix64(seed: seed &+ 100)
        for i in 0..<600 where r.chance(0.03) { try? c.purge(id: "h\(i)") }
        try c.save(id: "x1", json: #"{"city":2.0,"type":"hotel","price":1}"#)
        try c.save(id: "x2", json: #"{"city":-0.0,"type":"inn","price":2}"#)
        return db
    }

    static let counts = [
        "SELECT count(*) AS n FROM h WHERE city = 'c1'",
        "SELECT count(*) AS n FROM h WHERE city IN ['c1', 'c2', 2, 0]",
        "SELECT count(*) AS n FROM h WHERE city > 'c2'",
        "SELECT count(*) AS n FROM h WHERE city < 'c3'",
        "SELECT count(*) AS n FROM h WHERE city LIKE 'kkk%'",
        "SELECT count(*) AS n FROM h WHERE city >= 'kkkkkkkkkk'",
        "SELECT count(*) AS n FROM h WHERE city IS NULL",
        "SELECT count(*) AS n FROM h WHERE city = 'c2' AND type = 'hotel'",
        "SELECT count(*) AS a, count(*) AS b, 'x' AS c FROM h WHERE city = 'c4' ORDER BY 'x'",
        "SELECT count(*) AS n FROM h WHERE city = 'nowhere'",
        // A filter is left: the rows are read.
        "SELECT count(*) AS n FROM h WHERE city >= 'c' AND price < 50",
    ]

    static let groups = [
        "SELECT DISTINCT city FROM h",
        "SELECT DISTINCT city, type FROM h",
        "SELECT DISTINCT type FROM h WHERE city = 'c1'",
        "SELECT DISTINCT city FROM h WHERE city > 'c2'",
        "SELECT city FROM h GROUP BY city",
        "SELECT city, TOSTRING(city) AS t FROM h GROUP BY city",
        "SELECT DISTINCT city FROM h WHERE type = 'hotel'",
        "SELECT DISTINCT city FROM h ORDER BY city DESC LIMIT 4",
        // Counted groups, streamed in key order.
        "SELECT city, count(*) AS n FROM h GROUP BY city HAVING count(*) > 30",
        "SELECT city, type, count(*) AS n, count(*) * 2 AS m FROM h GROUP BY city, type",
        "SELECT type, count(*) AS n FROM h WHERE city = 'c1' GROUP BY type",
        // DISTINCT rows built straight from the counted groups' values.
        "SELECT DISTINCT type, city FROM h",
        "SELECT DISTINCT city AS c, city AS d, type FROM h",
    ]

    @Test("rows equal the plain path's", arguments: [UInt64(5), 9])
    func equivalence(seed: UInt64) throws {
        let a = try Self.database(indexes: true, seed: seed), b = try Self.database(indexes: false, seed: seed)
        defer { try? a.close(); try? b.close() }
        try expectSameRows(a, b, Self.counts + Self.groups)
        // Not vacuous: the counts see rows, the groups several.
        #expect(try resultRows(a, Self.counts[0]) != [#"{"n":0}"#])
        #expect(try resultRows(a, Self.groups[0]).count > 5)
    }

    @Test("inside a batch, after saves, deletes and purges")
    func insideABatch() throws {
        func run(_ db: Database) throws -> [[String]] {
            let c = try #require(try db.collection(name: "h"))
            var out: [[String]] = []
            try db.inBatch {
                for i in 0..<40 { try c.save(id: "b\(i)", json: #"{"city":"c\#(i % 3)","type":"hotel"}"#) }
                try c.save(id: "h1", json: #"{"city":"c1"}"#)
                try? c.delete(id: "h2")
                try? c.purge(id: "h3")
                out = try (Self.counts + Self.groups).map { try resultRows(db, $0).sorted() }
            }
            return out
        }
        let a = try Self.database(indexes: true, seed: 5), b = try Self.database(indexes: false, seed: 5)
        defer { try? a.close(); try? b.close() }
        let x = try run(a), y = try run(b)
        for (i, sql) in (Self.counts + Self.groups).enumerated() { #expect(x[i] == y[i], "\(sql)") }
    }

    /// The plan's shape: which queries count unbound and which scans skip.
    @Test("counting and skipping are planned")
    func planned() throws {
        let db = try Self.database(indexes: true, seed: 5)
        defer { try? db.close() }
        func prepared(_ sql: String) throws -> PreparedPlan { try db.createQuery(sql).prepare().0 }
        for sql in Self.counts.dropLast() { #expect(try prepared(sql).countsRows, "\(sql)") }
        #expect(try !prepared(Self.counts.last!).countsRows)
        #expect(try !prepared("SELECT count(*) AS n, city FROM h WHERE city = 'c1'").countsRows)
        #expect(try !prepared("SELECT count(city) AS n FROM h WHERE city = 'c1'").countsRows)
        func skip(_ sql: String) throws -> Int? {
            guard case .index(let p) = try prepared(sql).plan.sources[0].access, let scan = p as? KeyRangeScanPlan else { return nil }
            return scan.skipColumns
        }
        #expect(try skip(Self.groups[0]) == 1)
        #expect(try skip(Self.groups[1]) == 2)
        #expect(try skip(Self.groups[2]) == 2)
        #expect(try skip(Self.groups[4]) == 1)
        #expect(try skip("SELECT city, count(*) AS n FROM h GROUP BY city") == nil)
    }

    /// Small groups (most values distinct): the scan steps over entries instead of seeking
    /// past each group, and DISTINCT still streams each value once.
    @Test("small groups step instead of seeking; rows equal the plain path's", arguments: [UInt64(3), 8])
    func smallGroups(seed: UInt64) throws {
        func make(_ indexes: Bool) throws -> Database {
            var r = SplitMix64(seed: seed)
            let db = try Database.temporary()
            let c = try db.createCollection(name: "h")
            try db.inBatch {
                for i in 0..<900 {
                    // ~700 distinct cities: groups of one or two entries, some MISSING and NULL.
                    let city = r.chance(0.05) ? "null" : #""c\#(r.int(700))""#
                    let json = r.chance(0.05) ? #"{"type":"inn"}"# : #"{"city":\#(city),"type":"\#(r.pick(["hotel", "inn"]))"}"#
                    try c.save(id: "h\(i)", json: json)
                }
            }
            if indexes { try c.createIndex(withName: "byCityType", config: ValueIndexConfiguration(["city", "type"])) }
            return db
        }
        let a = try make(true), b = try make(false)
        defer { try? a.close(); try? b.close() }
        let queries = ["SELECT DISTINCT city FROM h", "SELECT DISTINCT city, type FROM h", "SELECT city FROM h GROUP BY city",
                       "SELECT DISTINCT city FROM h ORDER BY city DESC LIMIT 7"]
        try expectSameRows(a, b, queries)
        func skip(_ sql: String) throws -> Int?? {
            guard case .index(let p) = try a.createQuery(sql).prepare().0.plan.sources[0].access, let scan = p as? KeyRangeScanPlan else { return nil }
            return .some(scan.skipColumns)
        }
        // An index scan, without a skip.
        #expect(try skip(queries[0]) == .some(nil))
        #expect(try skip(queries[2]) == .some(nil))
        #expect(try resultRows(a, queries[0]).count > 400)
    }

    /// DISTINCT and counted GROUP BY over grouped index entries stream their rows: OFFSET and
    /// LIMIT cut the same rows out of them as out of the whole result.
    @Test("streamed DISTINCT and GROUP BY rows with OFFSET and LIMIT are a slice of the whole result")
    func streamedSlices() throws {
        let db = try Self.database(indexes: true, seed: 5)
        defer { try? db.close() }
        for sql in ["SELECT DISTINCT city FROM h", "SELECT DISTINCT city, type FROM h", "SELECT DISTINCT type FROM h WHERE city = 'c1'",
                    "SELECT city, count(*) AS n FROM h GROUP BY city", "SELECT city, type, count(*) AS n FROM h GROUP BY city, type HAVING count(*) > 3"] {
            let all = try resultRows(db, sql)
            #expect(all.count >= 2, "\(sql)")
            #expect(Set(all).count == all.count, "\(sql): a row twice")
            for (limit, offset) in [(1, 0), (3, 1), (100, 2), (2, all.count - 1), (5, all.count + 3)] {
                let part = try resultRows(db, "\(sql) LIMIT \(limit) OFFSET \(offset)")
                #expect(part == Array(all.dropFirst(offset).prefix(limit)), "\(sql) LIMIT \(limit) OFFSET \(offset)")
            }
            // Run again on the reused executor: the same rows.
            #expect(try resultRows(db, sql) == all, "\(sql)")
        }
    }

    /// DISTINCT of index columns (in any order, repeated, renamed) takes its rows from the
    /// counted groups' values, without binding or evaluating; columns that are not index
    /// columns, or a HAVING, take the bound path. Both give the plain path's rows, on reused
    /// executors too.
    @Test("DISTINCT of index columns is built from the counted groups")
    func distinctFromCountedGroups() throws {
        let a = try Self.database(indexes: true, seed: 4), b = try Self.database(indexes: false, seed: 4)
        defer { try? a.close(); try? b.close() }
        let cases: [(String, [Int]?)] = [
            ("SELECT DISTINCT city FROM h", [0]),
            ("SELECT DISTINCT type, city FROM h", [1, 0]),
            ("SELECT DISTINCT city AS c, type, city AS d FROM h", nil), // not planned as counted groups
            ("SELECT DISTINCT city, TOSTRING(city) AS t FROM h", nil),
            ("SELECT DISTINCT city, price FROM h", nil),
        ]
        for (sql, positions) in cases {
            let q = try a.createQuery(sql)
            let (prepared, _) = try q.prepare()
            #expect(prepared.evaluators?.countedGroupColumns == positions, "\(sql)")
            for _ in 0..<3 { try expectSameRows(a, b, [sql]) }
            let rows = try q.execute().allResults().map { $0.toJSON() }
            #expect(try q.execute().allResults().map { $0.toJSON() } == rows, "\(sql): a reused executor")
            #expect(rows.count > 5, "\(sql)")
        }
    }
}
