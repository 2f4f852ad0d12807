import Testing
@testable import Tessera

/// Seeded random documents, indexes and queries: every query returns the same rows with and
/// without indexes, and after random saves/deletes/purges the integrity check finds nothing.
@Suite("Index equivalence (property)")
struct IndexEquivalenceTests {
    typealias RNG = SplitMix64

    static let types: [Value] = ["hotel", "landmark", "airport"]
    static let cities: [Value] = ["Paris", "Lyon", "Nice", "Oslo", "Rome", "Bern", "Köln", "Åre"]
    static let tags: [Value] = ["pool", "spa", "wifi", "bar", "gym", "park"]

    static func randomDoc(_ r: inout RNG) -> [String: Value] {
        var d: [String: Value] = [:]
        if !r.chance(0.1) { d["type"] = r.chance(0.05) ? .null : r.pick(types) }
        if !r.chance(0.15) { d["city"] = r.chance(0.05) ? .int(Int64(r.int(3))) : r.pick(cities) }
        switch r.int(10) {
        case 0: break
        case 1: d["price"] = .null
        case 2: d["price"] = .double(Double(r.int(5000)) / 10)
        case 3: d["price"] = .string("cheap")
        default: d["price"] = .int(Int64(r.int(500)))
        }
        var name = String(r.pick(["ab", "abc", "b", "ba", "Ab", "x"]))
        name += String(r.int(100))
        if r.chance(0.05) { name += String(repeating: "z", count: 300 + r.int(400)) } // truncated index keys
        d["name"] = .string(name)
        if r.chance(0.8) {
            d["tags"] = .array((0..<r.int(5)).map { _ in r.pick(tags) })
        } else if r.chance(0.5) {
            d["tags"] = "pool"
        }
        if r.chance(0.7) { d["nested"] = ["a": ["b": .int(Int64(r.int(10)))]] }
        return d
    }

    static let indexDefs: [IndexDefinition] = [
        IndexDefinition(name: "byType", type: .value, expressions: ["type"]),
        IndexDefinition(name: "byCity", type: .value, expressions: ["city"]),
        IndexDefinition(name: "byTypePrice", type: .value, expressions: ["type", "price"]),
        IndexDefinition(name: "byPrice", type: .value, expressions: ["price"]),
        IndexDefinition(name: "byName", type: .value, expressions: ["name"]),
        IndexDefinition(name: "byNested", type: .value, expressions: ["nested.a.b"]),
        IndexDefinition(name: "hotelCity", type: .value, expressions: ["city"], whereClause: "type = 'hotel'"),
        IndexDefinition(name: "pricedName", type: .value, expressions: ["name"], whereClause: "price IS NOT MISSING"),
        IndexDefinition(name: "valuedCity", type: .value, expressions: ["city"], whereClause: "price IS NOT NULL"),
        ArrayIndexConfiguration(path: "tags").definition(name: "tagIdx"),
    ]

    static func literal(_ v: Value) -> String {
        if case .string(let s) = v { return "'" + s + "'" }
        return v.description
    }

    static func randomPredicate(_ r: inout RNG) -> String {
        switch r.int(22) {
        case 16: return "city = \(literal(r.pick(cities))) OR city = \(literal(r.pick(cities)))"
        case 17: return "(type = \(literal(r.pick(types))) OR price > \(r.int(500)))"
        case 18: return "((type = 'hotel' AND city = \(literal(r.pick(cities)))) OR name LIKE '\(r.pick(["ab", "b"]))%')"
        case 19: return "(meta().id = 'd\(r.int(400))' OR city = \(literal(r.pick(cities))))"
        case 20: return "meta().id IN ('d\(r.int(400))', 'd\(r.int(400))')"
        case 21: return "meta().id >= 'd\(r.int(400))'"
        case 0: return "type = \(literal(r.pick(types)))"
        case 1: return "city = \(literal(r.pick(cities)))"
        case 2: return "city IN (\(literal(r.pick(cities))), \(literal(r.pick(cities))), 1)"
        case 3: return "price > \(r.int(500))"
        case 4: return "price <= \(r.int(500))"
        case 5: return "price BETWEEN \(r.int(250)) AND \(250 + r.int(250))"
        case 6: return "name LIKE '\(r.pick(["ab", "a", "b", "x1", "abc1"]))%'"
        case 7: return "price IS NULL"
        case 8: return "city IS NOT MISSING"
        case 9: return "type IS MISSING"
        case 10: return "nested.a.b >= \(r.int(10))"
        case 11: return "type = 'hotel' AND city = \(literal(r.pick(cities)))"
        case 12: return "price IS NOT NULL"
        case 13: return "city IS VALUED"
        case 14: return "name > '\(r.pick(["ab", "b", "x"]))'"
        default: return "type = \(literal(r.pick(types))) AND price < \(r.int(500))"
        }
    }

    static func randomQuery(_ r: inout RNG) -> String {
        var w = randomPredicate(&r)
        if r.chance(0.4) { w += " AND " + randomPredicate(&r) }
        switch r.int(10) {
        case 6:
            return "SELECT DISTINCT city FROM c WHERE \(w)"
        case 7:
            return "SELECT min(price) AS lo, max(price) AS hi, min(name) AS n, max(nested.a.b) AS b FROM c"
        case 8:
            return "SELECT city, count(*) AS n, max(price) AS m FROM c GROUP BY city"
        case 9:
            return "SELECT meta().id FROM c WHERE \(w) ORDER BY meta().id DESC LIMIT \(1 + r.int(10))"
        case 0:
            return "SELECT meta().id, t FROM c UNNEST tags AS t WHERE t = \(literal(r.pick(tags)))" + (r.chance(0.5) ? " AND " + w : "")
        case 1:
            return "SELECT meta().id, name, price FROM c WHERE \(w) ORDER BY price, meta().id LIMIT \(1 + r.int(20))"
        case 2:
            return "SELECT meta().id FROM c WHERE \(w) ORDER BY name DESC, meta().id LIMIT \(1 + r.int(10))"
        case 3:
            return "SELECT type, count(*) AS n FROM c WHERE \(w) GROUP BY type"
        default:
            return "SELECT meta().id, city, price FROM c WHERE \(w)"
        }
    }

    static func rows(_ db: Database, _ sql: String) throws -> [Value] {
        try db.createQuery(sql).execute().allResults().map(\.object)
    }

    static func sameMultiset(_ a: [Value], _ b: [Value]) -> Bool {
        guard a.count == b.count else { return false }
        var rest = b
        for x in a {
            guard let i = rest.firstIndex(of: x) else { return false }
            rest.remove(at: i)
        }
        return true
    }

    /// With even seeds the indexed database stores every record over 100 bytes in two pieces
    /// (`RecordPieces.swift`): back-fills, maintenance, scans and lookups read them assembled.
    @Test(arguments: [1, 2, 3, 4])
    func indexedAndUnindexedAgree(seed: UInt64) throws {
        var r = RNG(seed: seed &* 7919)
        let plain = try Database.temporary()
        var config = DatabaseConfiguration()
        if seed % 2 == 0 { config.largestInlineRecord = 100 }
        let indexed = try Database.temporary(configuration: config)
        defer { try? plain.close(); try? indexed.close() }
        let pc = try plain.createCollection(name: "c")
        let ic = try indexed.createCollection(name: "c")
        // Half the documents before the indexes exist (back-fill), half after (maintenance).
        var ids: [String] = []
        func mutate(_ n: Int) throws {
            for _ in 0..<n {
                let roll = r.int(10)
                if roll < 7 || ids.isEmpty {
                    let id = "d\(r.int(400))"
                    let doc = IndexEquivalenceTests.randomDoc(&r)
                    try pc.save(id: id, properties: doc)
                    try ic.save(id: id, properties: doc)
                    if !ids.contains(id) { ids.append(id) }
                } else if roll < 9 {
                    let id = r.pick(ids)
                    if try pc.document(id: id) != nil {
                        try pc.delete(id: id)
                        try ic.delete(id: id)
                    }
                } else {
                    let id = r.pick(ids)
                    try pc.purge(id: id)
                    try ic.purge(id: id)
                    ids.removeAll { $0 == id }
                }
            }
        }
        try mutate(150)
        for def in IndexEquivalenceTests.indexDefs where r.chance(0.8) { try ic.createIndex(def) }
        try mutate(150)
        let report = try indexed.performMaintenance(.integrityCheck)
        #expect(report.isOK, "\(report)")

        var usedIndex = 0
        for i in 0..<500 {
            let sql = IndexEquivalenceTests.randomQuery(&r)
            let expected = try IndexEquivalenceTests.rows(plain, sql)
            let actual = try IndexEquivalenceTests.rows(indexed, sql)
            let plan = try indexed.createQuery(sql).explainPlan()
            if !plan.indexesUsed.isEmpty { usedIndex += 1 }
            let ordered = sql.contains("ORDER BY")
            let same = ordered ? expected == actual : IndexEquivalenceTests.sameMultiset(expected, actual)
            #expect(same, "seed \(seed) query \(i): \(sql)\nplan:\n\(plan.text)\nexpected \(expected.count): \(expected.prefix(5))\ngot \(actual.count): \(actual.prefix(5))")
            if !same { break }
        }
        // The test is only meaningful if most queries really use an index.
        #expect(usedIndex > 50, "only \(usedIndex) of 500 queries used an index")
    }
}
