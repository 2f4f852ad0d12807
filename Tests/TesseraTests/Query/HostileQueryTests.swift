import Foundation
import Testing
@testable import Tessera

/// Issue #18 item 4: queries an app passes through from user input finish (or fail with a
/// clear error) within about a second, whatever the parameters hold. Times are asserted with
/// a wide margin (a debug build on a loaded 2-core machine) and printed for the record.
@Suite("Hostile queries", .serialized)
struct HostileQueryTests {
    static let documents = 20_000

    /// `docs`: `city` (indexed, 50 values), `name`, `description` (full-text indexed, ~30
    /// words with plenty of `a`s).
    static func makeDatabase() throws -> Database {
        let db = try Database.temporary()
        let c = try db.createCollection(name: "docs")
        var r = SplitMix64(seed: 18)
        let words = ["banana", "alpaca", "data", "lava", "maria", "java", "sofa", "opera", "salsa", "panama", "the", "and"]
        try db.inBatch {
            for i in 0..<documents {
                let text = (0..<30).map { _ in r.pick(words) }.joined(separator: " ")
                try c.save(id: "d\(i)", properties: ["city": .string("city\(r.int(50))"), "name": .string("name\(i)"),
                                                     "description": .string(text), "n": .int(Int64(i))])
            }
        }
        try c.createIndex(withName: "byCity", config: ValueIndexConfiguration(["city"]))
        try c.createIndex(withName: "ft", config: FullTextIndexConfiguration(["description"], language: ""))
        return db
    }

    /// Runs `sql` to the end; the elapsed time and the error, if any.
    static func run(_ db: Database, _ sql: String, _ params: [String: Value] = [:]) -> (Duration, (any Error)?, Int) {
        let clock = ContinuousClock()
        var error: (any Error)?
        var rows = 0
        let elapsed = clock.measure {
            do {
                let q = try db.createQuery(sql)
                if !params.isEmpty { q.parameters = Parameters(params) }
                rows = try q.execute().allResults().count
            } catch let e {
                error = e
            }
        }
        print("hostile: \(elapsed) rows=\(rows) \(error.map { "error: \(String(describing: $0).prefix(160))" } ?? "") — \(sql.prefix(80))")
        return (elapsed, error, rows)
    }

    static let limit = Duration.seconds(3)

    /// One database for the suite (built once: 20,000 documents take a while in a debug build).
    static let shared: Database = try! makeDatabase()

    @Test func regularExpressions() throws {
        let db = Self.shared
        // Catastrophic backtracking from a parameter: a clear error, fast.
        var (t, e, _) = Self.run(db, "SELECT COUNT(*) FROM docs WHERE REGEXP_LIKE($s, '(a+)+$')",
                                 ["s": .string(String(repeating: "a", count: 30) + "b")])
        #expect(t < Self.limit)
        #expect((e as? QueryError)?.message.contains("regular expression too slow") == true)

        (t, e, _) = Self.run(db, "SELECT COUNT(*) FROM docs WHERE REGEXP_CONTAINS(description, $re)", ["re": "(.*a){8}z"])
        #expect(t < Self.limit)
        #expect((e as? QueryError)?.message.contains("regular expression too slow") == true)

    }

    @Test func likePatterns() throws {
        let db = Self.shared
        var (t, e, rows) = (Duration.zero, (any Error)?.none, 0)
        // A 10 KB LIKE pattern without wildcards is a comparison.
        (t, e, rows) = Self.run(db, "SELECT name FROM docs WHERE description LIKE $p", ["p": .string(String(repeating: "x", count: 10_000))])
        #expect(t < Self.limit && e == nil && rows == 0)
        (t, e, rows) = Self.run(db, "SELECT name FROM docs WHERE description LIKE $p",
                                ["p": .string("%" + String(repeating: "a_", count: 5_000) + "%")])
        #expect(t < Self.limit && e == nil && rows == 0)

    }

    @Test func longInLists() throws {
        let db = Self.shared
        var (t, e, rows) = (Duration.zero, (any Error)?.none, 0)
        // IN with 10,000 values: a parameter array and a literal list, both on the index.
        let cities = (0..<10_000).map { Value.string("city\($0)") }
        (t, e, rows) = Self.run(db, "SELECT name FROM docs WHERE city IN $p", ["p": .array(cities)])
        #expect(t < Self.limit && e == nil && rows == Self.documents)
        let literal = "SELECT name FROM docs WHERE city IN (" + (0..<10_000).map { "'city\($0 + 7)'" }.joined(separator: ", ") + ")"
        (t, e, rows) = Self.run(db, literal)
        #expect(t < Self.limit && e == nil && rows > 0)

    }

    @Test func hugeConstantKeys() throws {
        let db = Self.shared
        var (t, e, rows) = (Duration.zero, (any Error)?.none, 0)
        // GROUP BY a 100 KB parameter.
        (t, e, rows) = Self.run(db, "SELECT COUNT(*) FROM docs GROUP BY $p", ["p": .string(String(repeating: "g", count: 100_000))])
        #expect(t < Self.limit && e == nil && rows == 1)

        (t, e, rows) = Self.run(db, "SELECT name FROM docs ORDER BY $p, n LIMIT 2", ["p": .string(String(repeating: "g", count: 100_000))])
        #expect(t < Self.limit && e == nil && rows == 2)
    }

    @Test func longFullTextQuery() throws {
        let db = Self.shared
        var (t, e, rows) = (Duration.zero, (any Error)?.none, 0)
        // MATCH with a 10,000-word phrase.
        let phrase = "\"" + (0..<10_000).map { _ in "banana" }.joined(separator: " ") + "\""
        (t, e, _) = Self.run(db, "SELECT name FROM docs WHERE MATCH(ft, $q)", ["q": .string(phrase)])
        #expect(t < Self.limit)
        #expect((e as? QueryError)?.message.contains("full-text query too long: 10000 words (at most 256") == true)
        // The longest accepted phrase runs quickly.
        let longest = "\"" + (0..<CompiledFullTextQuery.maxWords).map { _ in "banana" }.joined(separator: " ") + "\""
        (t, e, rows) = Self.run(db, "SELECT name FROM docs WHERE MATCH(ft, $q)", ["q": .string(longest)])
        #expect(t < Self.limit && e == nil && rows == 0)
        // A query that is not a string is an error, not "no rows".
        for bad: Value in [1, .null, ["a"]] {
            (t, e, rows) = Self.run(db, "SELECT name FROM docs WHERE MATCH(ft, $q)", ["q": bad])
            #expect((e as? QueryError)?.message.contains("needs a string query") == true)
        }
        (t, e, rows) = Self.run(db, "SELECT name FROM docs WHERE MATCH(ft, $q)")
        #expect((e as? QueryError)?.message.contains("needs a string query, not MISSING") == true)
    }

    @Test func longStatements() throws {
        let db = Self.shared
        var (t, e, rows) = (Duration.zero, (any Error)?.none, 0)
        // 20,000 SELECT items.
        let items = "SELECT " + (0..<20_000).map { "n + \($0)" }.joined(separator: ", ") + " FROM docs LIMIT 1"
        (t, e, rows) = Self.run(db, items)
        #expect(t < Self.limit && e == nil && rows == 1)

        // Flat chains of 10,000 ORs, ANDs, + and ||.
        let ors = "SELECT name FROM docs WHERE " + (0..<10_000).map { "n = \($0 * 3)" }.joined(separator: " OR ") + " LIMIT 5"
        (t, e, rows) = Self.run(db, ors)
        #expect(t < Self.limit && e == nil && rows == 5)
        let ands = "SELECT name FROM docs WHERE " + (0..<10_000).map { "n >= \(-$0)" }.joined(separator: " AND ") + " LIMIT 5"
        (t, e, rows) = Self.run(db, ands)
        #expect(t < Self.limit && e == nil && rows == 5)
        // Arithmetic is not associative (overflow, rounding): a flat chain stays a left-deep
        // tree, refused past 1,000 operators with an error saying how to group it…
        let sum = "SELECT " + (0..<10_000).map { _ in "n" }.joined(separator: " + ") + " AS s FROM docs LIMIT 3"
        (t, e, rows) = Self.run(db, sum)
        #expect(t < Self.limit && (e as? QueryError)?.message.contains("group the terms in parentheses") == true)
        // …and grouped, 10,000 terms are fine.
        let grouped = "SELECT " + (0..<100).map { _ in "(" + (0..<100).map { _ in "n" }.joined(separator: " + ") + ")" }
            .joined(separator: " + ") + " AS s FROM docs LIMIT 3"
        (t, e, rows) = Self.run(db, grouped)
        #expect(t < Self.limit && e == nil && rows == 3)
        let concat = "SELECT " + (0..<10_000).map { _ in "city" }.joined(separator: " || ") + " AS s FROM docs LIMIT 3"
        (t, e, rows) = Self.run(db, concat)
        #expect(t < Self.limit && e == nil && rows == 3)
    }
}
