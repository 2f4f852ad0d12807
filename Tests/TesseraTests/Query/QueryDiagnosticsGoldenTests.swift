import Foundation
import Testing
@testable import Tessera

/// Issue 20: the exact EXPLAIN texts — `NOT USED:` reasons for each kind of unused index
/// (expression, collation, alias, leading column, partial-index rules 1 and 2 of SPEC §9.2,
/// not sargable, cheaper path, full text, array index and UNNEST) and EXPLAIN ANALYZE figures
/// (times masked) — compared with golden files in Tests/Golden/QueryDiagnostics. Run with
/// TESSERA_UPDATE_GOLDEN=1 to rewrite them after a deliberate change.
@Suite("Query diagnostics (golden)")
struct QueryDiagnosticsGoldenTests {
    /// `Tests/Golden/QueryDiagnostics/<name>` (three levels above this file's folder).
    static func goldenPath(_ name: String) -> String {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3) // TesseraTests/Query/QueryDiagnosticsGoldenTests.swift
        return parts.joined(separator: "/") + "/Golden/QueryDiagnostics/" + name
    }

    /// 1,000 hotels (90 % of type 'hotel'), with every kind of index.
    static func makeDatabase() throws -> Database {
        let db = try Database.temporary()
        let c = try db.createCollection(name: "hotels")
        try db.inBatch {
            for i in 0..<1000 {
                let c3 = i % 3 == 0 ? "" : (i % 3 == 1 ? #","c":1"# : #","c":null"#)
                let view = i % 7 == 0 ? "with a view" : "on the street"
                try c.save(id: "h\(i)", json: #"{"type":"\#(i % 10 == 0 ? "inn" : "hotel")","name":"n\#(i)","city":"c\#(i % 50)","price":\#(i % 500),"b":\#(i % 20),"likes":["l\#(i % 40)","all"],"description":"room \#(view)"\#(c3)}"#)
            }
        }
        let configs: [(String, any IndexConfiguration)] = [
            ("byType", ValueIndexConfiguration(["type"])),
            ("typeName", ValueIndexConfiguration(["type", "name"])),
            ("byName", ValueIndexConfiguration(["name"])),
            ("byPrice", ValueIndexConfiguration(["price"])),
            ("hotelCity", ValueIndexConfiguration(["city"], where: "type = 'hotel'")),
            ("bWhereCNotMissing", ValueIndexConfiguration(["b"], where: "c IS NOT MISSING")),
            ("bWhereCNotNull", ValueIndexConfiguration(["b"], where: "c IS NOT NULL")),
            ("descText", FullTextIndexConfiguration(["description"])),
            ("likesIdx", ArrayIndexConfiguration(path: "likes")),
        ]
        for (name, config) in configs { try c.createIndex(withName: name, config: config) }
        return db
    }

    static let notUsedQueries: [String] = [
        // The expression does not match: a function of the indexed expression.
        "SELECT * FROM hotels WHERE lower(name) = 'n1'",
        // A different collation.
        "SELECT * FROM hotels WHERE name COLLATE NOCASE = 'N1'",
        // An alias that did not normalise: `hotels.name` under alias h is a property path.
        "SELECT * FROM hotels AS h WHERE h.hotels.name = 'n1'",
        // Not a leading column: (type, name) constrained on name only (byName serves it).
        "SELECT * FROM hotels WHERE name = 'n1'",
        // Partial index, rule 1: the WHERE does not restate type = 'hotel'.
        "SELECT * FROM hotels WHERE city = 'c1'",
        // Partial index, rule 2: no comparison of c implies c IS NOT MISSING.
        "SELECT * FROM hotels WHERE b = 3",
        // Rule 2 holds for IS NOT MISSING; IS NOT NULL gets only rule 1.
        "SELECT * FROM hotels WHERE b = 3 AND c != 0",
        // Not sargable: !=, a leading wildcard, arithmetic on the expression.
        "SELECT * FROM hotels WHERE price != 3",
        "SELECT * FROM hotels WHERE name LIKE '%1'",
        "SELECT * FROM hotels WHERE price + 1 = 4",
        // A cheaper path won: 90 % of the documents are hotels.
        "SELECT * FROM hotels WHERE type = 'hotel'",
        // The full-text index used by MATCH; the others have no term.
        "SELECT meta().id FROM hotels WHERE MATCH(descText, 'view')",
        // Array index: UNNEST of another path, no element predicate, a function of the element.
        "SELECT meta(h).id FROM hotels AS h UNNEST h.tags AS t WHERE t = 'x'",
        "SELECT meta(h).id FROM hotels AS h UNNEST h.likes AS l WHERE h.price = 1",
        "SELECT meta(h).id FROM hotels AS h UNNEST h.likes AS l WHERE upper(l) = 'L1'",
        "SELECT meta(h).id FROM hotels AS h UNNEST h.likes AS l WHERE l = 'all'",
        "SELECT meta(h).id FROM hotels AS h UNNEST h.likes AS l WHERE l = 'l1'",
    ]

    static let analyzeQueries: [String] = [
        "SELECT name FROM hotels WHERE type = 'inn' AND price < 100",
        "SELECT count(*) AS n FROM hotels WHERE type = 'hotel'",
        "SELECT meta(h).id FROM hotels AS h UNNEST h.likes AS l WHERE l = 'l1' ORDER BY meta(h).id LIMIT 3",
        "SELECT a.name, meta(b).id AS other FROM hotels AS a JOIN hotels AS b ON b.name = a.name WHERE a.price = 7",
        "SELECT meta().id FROM hotels WHERE name = 'n7' OR price = 3 OR meta().id = 'h9'",
        "SELECT max(price) AS m FROM hotels",
    ]

    /// Milliseconds vary: `0.042 ms` → `T ms`.
    static func masked(_ text: String) -> String {
        text.replacingOccurrences(of: #"[0-9]+\.[0-9]{3} ms"#, with: "T ms", options: .regularExpression)
    }

    static func render(_ db: Database, _ queries: [String], analyze: Bool) throws -> String {
        var out = ""
        for sql in queries {
            let text = try db.createQuery(sql).explain(analyze: analyze)
            out += "=== " + sql + "\n" + (analyze ? masked(text) : text) + "\n\n"
        }
        return out
    }

    static func compare(_ actual: String, golden name: String) throws {
        let path = goldenPath(name)
        if ProcessInfo.processInfo.environment["TESSERA_UPDATE_GOLDEN"] == "1" {
            try actual.write(toFile: path, atomically: true, encoding: .utf8)
            return
        }
        let expected = try String(contentsOfFile: path, encoding: .utf8)
        let a = actual.components(separatedBy: "\n"), e = expected.components(separatedBy: "\n")
        for (i, (x, y)) in zip(a, e).enumerated() where x != y {
            Issue.record("\(name) line \(i + 1):\n  expected: \(y)\n  actual:   \(x)")
            return
        }
        #expect(a.count == e.count, "\(name): \(a.count) lines, golden \(e.count)")
    }

    @Test("NOT USED: one reason per unused index, in exact words")
    func notUsed() throws {
        let db = try Self.makeDatabase()
        defer { try? db.close() }
        try Self.compare(try Self.render(db, Self.notUsedQueries, analyze: false), golden: "not-used.txt")
    }

    @Test("NOT USED reasons as data in explainPlan()")
    func notUsedData() throws {
        let db = try Self.makeDatabase()
        defer { try? db.close() }
        func reason(_ sql: String, _ index: String) throws -> ExplainPlan.UnusedIndex.Reason? {
            try db.createQuery(sql).explainPlan().unusedIndexes.first { $0.index == index }?.reason
        }
        #expect(try reason(Self.notUsedQueries[0], "byName") == .expressionMismatch)
        #expect(try reason(Self.notUsedQueries[1], "byName") == .collation)
        #expect(try reason(Self.notUsedQueries[4], "hotelCity") == .partialConditionNotImplied)
        #expect(try reason(Self.notUsedQueries[7], "byPrice") == .notSargable)
        #expect(try reason(Self.notUsedQueries[10], "byType") == .cheaperPathWon)
        #expect(try reason(Self.notUsedQueries[0], "descText") == .fullTextNeedsMatch)
        #expect(try reason(Self.notUsedQueries[12], "likesIdx") == .noUnnest)
        #expect(try reason("SELECT * FROM hotels WHERE name = 'n1'", "typeName") == .notLeadingColumn)
        #expect(try reason("SELECT * FROM hotels WHERE type = 'inn' AND name = 'n10'", "byType") == .cheaperPathWon)
        #expect(try reason("SELECT * FROM hotels WHERE price > 3", "typeName") == .noPredicate)
        let used = try db.createQuery("SELECT * FROM hotels WHERE name = 'n1'").explainPlan()
        #expect(!used.unusedIndexes.contains { $0.index == "byName" })
    }

    @Test("EXPLAIN ANALYZE: figures per step, rows passed per filter, the result line")
    func analyze() throws {
        let db = try Self.makeDatabase()
        defer { try? db.close() }
        try Self.compare(try Self.render(db, Self.analyzeQueries, analyze: true), golden: "analyze.txt")
    }
}
