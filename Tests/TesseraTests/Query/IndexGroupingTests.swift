import Testing
@testable import Tessera

/// GROUP BY and DISTINCT on the leading columns of a covering index stream over the index in
/// key order (no temporary B-tree) and return exactly what hashing every document returns:
/// MISSING and NULL groups, values longer than a key, tombstones, partial indexes.
@Suite("Grouping over an index")
struct IndexGroupingTests {
    static func database(indexes: Bool, seed: UInt64) throws -> Database {
        var r = SplitMix64(seed: seed)
        let db = try Database.temporary()
        let c = try db.createCollection(name: "h")
        let long = String(repeating: "k", count: 600)
        try db.inBatch {
            for i in 0..<600 {
                var fields: [String] = []
                switch r.int(8) {
                case 0: break                                      // city MISSING
                case 1: fields.append(#""city":null"#)
                case 2: fields.append(#""city":"\#(long)\#(r.int(3))""#) // truncated keys
                case 3: fields.append(#""city":\#(r.int(3))"#)
                default: fields.append(#""city":"c\#(r.int(6))""#)
                }
                fields.append(#""type":"\#(r.pick(["hotel", "inn"]))""#)
                fields.append(#""price":\#(r.int(100))"#)
                try c.save(id: "h\(i)", json: "{" + fields.joined(separator: ",") + "}")
            }
        }
        for i in 0..<60 where r.chance(0.5) { try c.delete(id: "h\(i * 10)") }
        if indexes {
            try c.createIndex(withName: "byCityType", config: ValueIndexConfiguration(["city", "type"]))
            try c.createIndex(withName: "hotelCity", config: ValueIndexConfiguration(["city"], where: "type = 'hotel'"))
        }
        return db
    }

    static let queries = [
        "SELECT city, count(*) AS n FROM h GROUP BY city",
        "SELECT city, type, count(*) AS n FROM h GROUP BY type, city",
        "SELECT DISTINCT city FROM h",
        "SELECT DISTINCT type, city FROM h",
        "SELECT city, count(*) AS n FROM h WHERE type = 'hotel' GROUP BY city",
        "SELECT city, count(*) AS n FROM h GROUP BY city HAVING count(*) > 20",
        "SELECT city, count(*) AS n FROM h GROUP BY city ORDER BY n DESC, city LIMIT 3",
    ]

    @Test("results equal hashing every document", arguments: [UInt64(5), 6])
    func equivalence(seed: UInt64) throws {
        let a = try Self.database(indexes: true, seed: seed), b = try Self.database(indexes: false, seed: seed)
        defer { try? a.close(); try? b.close() }
        for sql in Self.queries {
            let x = try a.createQuery(sql).execute().allResults().map { $0.toJSON() }
            let y = try b.createQuery(sql).execute().allResults().map { $0.toJSON() }
            if sql.contains("ORDER BY") { #expect(x == y, "\(sql)") } else { #expect(x.sorted() == y.sorted(), "\(sql)") }
        }
    }

    @Test("EXPLAIN: the index in key order, no temporary B-tree")
    func explain() throws {
        let db = try Self.database(indexes: true, seed: 5)
        defer { try? db.close() }
        #expect(try db.createQuery(Self.queries[0]).explain().planOnly == "SCAN h USING COVERING INDEX byCityType")
        #expect(try db.createQuery(Self.queries[2]).explain().planOnly == "SCAN h USING COVERING INDEX byCityType")
        #expect(try db.createQuery(Self.queries[4]).explain().planOnly == "SCAN h USING COVERING INDEX hotelCity")
        // Not a leading column: hashed.
        #expect(try db.createQuery("SELECT type, count(*) FROM h GROUP BY type").explain().contains("USE TEMP B-TREE FOR GROUP BY"))
        // An aggregate without GROUP BY is one running total: no temporary B-tree, and the
        // index alone answers a count under a WHERE it satisfies.
        #expect(try db.createQuery("SELECT count(*) FROM h WHERE city = 'c1'").explain().planOnly == "SEARCH h USING COVERING INDEX byCityType (city=?)")
        let counted = try db.createQuery("SELECT count(*) AS n FROM h WHERE city = 'c1'").execute().next()?.int(forKey: "n")
        let scanned = try db.createQuery("SELECT count(*) AS n FROM h WHERE city || '' = 'c1'").execute().next()?.int(forKey: "n")
        #expect(counted == scanned && (counted ?? 0) > 0)
    }
}
