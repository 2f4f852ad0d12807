import Testing
@testable import Tessera

/// The pieces behind "hostile queries cannot hang the app" (issue #18): linear LIKE, IN as a
/// hash set and on an index, the limits and their errors, LIMIT/MATCH parameters that are
/// errors rather than silent, flat chains, and errors quoting only around the position.
@Suite("Hostile input")
struct HostileInputTests {
    // MARK: - LIKE

    /// The linear matcher agrees with the reference backtracking matcher on random patterns.
    @Test func likePatternAgreesWithBacktracking() {
        var r = SplitMix64(seed: 1818)
        let alphabet: [Character] = ["a", "b", "é", "%", "_", "\\", "A"]
        for _ in 0..<20_000 {
            let pattern = String((0..<r.int(0...8)).map { _ in r.pick(alphabet) })
            let text = String((0..<r.int(0...10)).map { _ in r.pick(["a", "b", "é", "A", "%", "_"] as [Character]) })
            for collation in [Collation.binary, Collation(ignoreCase: true)] {
                let fold: (Unicode.Scalar) -> Unicode.Scalar = { c in
                    collation.ignoreCase && c.value >= 65 && c.value <= 90 ? Unicode.Scalar(c.value + 32)! : c
                }
                let reference = wildcardMatch(text.unicodeScalars.map(fold), likeTokens(pattern.unicodeScalars.map(fold)), equal: ==)
                #expect(LikePattern(pattern, collation: collation).matches(text) == reference, "'\(text)' LIKE '\(pattern)'")
            }
        }
    }

    @Test func likeIsLinearInTheText() {
        let text = String(repeating: "a", count: 200_000)
        let clock = ContinuousClock()
        for pattern in ["%" + String(repeating: "a", count: 500) + "b%", "%" + String(repeating: "a_", count: 300) + "b%",
                        String(repeating: "%a", count: 2_000) + "b", String(repeating: "x", count: 10_000)] {
            let p = LikePattern(pattern, collation: .binary)
            let elapsed = clock.measure { #expect(!p.matches(text)) }
            print("like: \(elapsed) for a \(pattern.count)-character pattern on 200,000 characters")
            #expect(elapsed < .seconds(3))
        }
    }

    @Test func longPatternsAndListsAreClearErrors() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "t")
        try c.save(id: "a", json: #"{"s": "abc", "n": 1}"#)
        func failure(_ sql: String, _ params: [String: Value]) -> String? {
            do {
                let q = try db.createQuery(sql)
                q.parameters = Parameters(params)
                _ = try q.execute().allResults()
                return nil
            } catch {
                return "\(error)"
            }
        }
        let longLike = String(repeating: "a", count: LikeLimits.maxPatternBytes + 1)
        #expect(failure("SELECT s FROM t WHERE s LIKE $p", ["p": .string(longLike)])?.contains("LIKE pattern too long") == true)
        #expect(failure("SELECT s FROM t WHERE s LIKE $p", ["p": .string(String(longLike.dropLast()))]) == nil)
        let longRegex = String(repeating: "a", count: RegexLimits.maxPatternLength + 1)
        #expect(failure("SELECT s FROM t WHERE REGEXP_LIKE(s, $p)", ["p": .string(longRegex)])?.contains("regular expression too long") == true)
        let many = Value.array((0...InLimits.maxValues).map { .int(Int64($0)) })
        #expect(failure("SELECT s FROM t WHERE n IN $p", ["p": many])?.contains("IN list too long: 100001 values") == true)
        try c.createIndex(withName: "byN", config: ValueIndexConfiguration(["n"]))
        #expect(failure("SELECT s FROM t WHERE n IN $p", ["p": many])?.contains("IN list too long: 100001 values") == true)
    }

    // MARK: - IN

    /// The hash set gives what the linear search gives: SQL++ equality (1 = 1.0), NULL and
    /// MISSING elements, arrays and objects.
    @Test func inSetAgreesWithLinearSearch() {
        var r = SplitMix64(seed: 77)
        let pool: [Value] = [1, 1.0, 2, 2.5, "1", "a", "A", true, false, .null, .missing, [1], [1.0], ["k": 1], ["k": 1.0], .double(.nan)]
        for _ in 0..<2_000 {
            let list = (0..<r.int(8...20)).map { _ in r.pick(pool) }
            let x = r.pick(pool)
            let set = InSet(list.map(BoundExpr.literal), collation: .binary)!
            #expect(set.contains(x) == Semantics.inList(x, list, .binary), "\(x) IN \(list)")
        }
    }

    @Test func inParameterArrayUsesTheIndex() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "t")
        try db.inBatch {
            for i in 0..<300 { try c.save(id: "d\(i)", properties: ["city": .string("c\(i % 30)"), "n": .int(Int64(i))]) }
        }
        try c.createIndex(withName: "byCity", config: ValueIndexConfiguration(["city"]))
        try c.createIndex(withName: "byN", config: ValueIndexConfiguration(["n"]))
        let q = try db.createQuery("SELECT META().id AS id FROM t WHERE city IN $p")
        #expect(try q.explainPlan().indexesUsed == ["byCity"])
        let idQuery = try db.createQuery("SELECT n FROM t WHERE META().id IN $p ORDER BY n")
        #expect(try idQuery.explainPlan().sources.first?.access == .primaryKeyLookup)
        let literal = try db.createQuery("SELECT n FROM t WHERE n IN (" + (0..<5_000).map(String.init).joined(separator: ", ") + ")")
        #expect(try literal.explainPlan().indexesUsed == ["byN"])
        #expect(try literal.execute().allResults().count == 300)
        // The same rows as a full scan, for arrays with duplicates, other types, NULL, nothing.
        for p: Value in [["c1", "c2", "c1", 3, .null], [], "c1", .null, 5, ["c7"], [1.0, "c29"]] {
            q.parameters = Parameters(["p": p])
            let viaIndex = Set(try q.execute().allResults().map { $0.string(forKey: "id")! })
            let scan = try db.createQuery("SELECT META().id AS id FROM t WHERE (city || '') IN $p")
            scan.parameters = Parameters(["p": p])
            let viaScan = Set(try scan.execute().allResults().map { $0.string(forKey: "id")! })
            #expect(viaIndex == viaScan, "\(p)")
        }
        idQuery.parameters = Parameters(["p": ["d3", "d1", "d3", 7, "nope"]])
        #expect(try idQuery.execute().allResults().map { $0.int(forKey: "n") } == [1, 3])
        // Several values do not deliver the order of the columns after them.
        try c.createIndex(withName: "byCityN", config: ValueIndexConfiguration(["city", "n"]))
        let ordered = try db.createQuery("SELECT n FROM t WHERE city IN $p ORDER BY n LIMIT 4")
        ordered.parameters = Parameters(["p": ["c2", "c1"]])
        #expect(try ordered.execute().allResults().map { $0.int(forKey: "n") } == [1, 2, 31, 32])
    }

    // MARK: - LIMIT, OFFSET and MATCH parameters

    @Test func limitWithAnUnboundOrNullParameterIsAnError() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        try db.createCollection(name: "t").save(id: "a", json: "{}")
        for sql in ["SELECT * FROM t LIMIT $p", "SELECT * FROM t OFFSET $p", "SELECT * FROM t LIMIT 5 OFFSET $p"] {
            let q = try db.createQuery(sql)
            for params in [Parameters(), Parameters().setValue(.null, forName: "p")] {
                q.parameters = params
                #expect(throws: QueryError.self) { _ = try q.execute() }
            }
            q.parameters = Parameters().setInt(1, forName: "p")
            #expect(try q.execute().allResults().count <= 1)
        }
    }

    // MARK: - Chains and error messages

    @Test func longFlatChainsParseAndPrintBack() throws {
        for op in ["OR", "AND", "||"] {
            let text = (0..<10_000).map { "a\($0)" }.joined(separator: " \(op) ")
            let e = try SQLParser.parseExpression(text)
            // Printed flat, it parses back to the same tree.
            #expect(SQLPrinter.print(e) == text)
            #expect(try SQLParser.parseExpression(SQLPrinter.print(e)) == e)
            // Inside a longer chain, a balanced chain keeps its parentheses.
            let nested = "(\(text)) \(op) b"
            let n = try SQLParser.parseExpression(nested)
            #expect(try SQLParser.parseExpression(SQLPrinter.print(n)) == n)
        }
        // Short chains keep their shape.
        #expect(SQLPrinter.print(try SQLParser.parseExpression("a OR (b OR c)")) == "a OR (b OR c)")
        // Deep nesting still has its limit.
        let deep = String(repeating: "(", count: 300) + "a" + String(repeating: ")", count: 300)
        #expect(throws: QueryError.self) { try SQLParser.parseExpression(deep) }
    }

    @Test func chainsEvaluateLikeTheirLeftFold() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        try db.createCollection(name: "t").save(id: "a", json: #"{"x": 1, "s": "q", "z": null}"#)
        func one(_ sql: String) throws -> Value { try db.createQuery(sql).execute().allResults().first?[0] ?? .missing }
        let terms = (0..<100).map { _ in "x = 2" }
        #expect(try one("SELECT " + terms.joined(separator: " OR ") + " OR x = 1 FROM t") == true)
        #expect(try one("SELECT " + terms.joined(separator: " OR ") + " OR nope FROM t").isMissing)
        #expect(try one("SELECT " + (terms.map { _ in "x = 1" }).joined(separator: " AND ") + " AND z FROM t") == false)
        #expect(try one("SELECT " + (0..<100).map { _ in "s" }.joined(separator: " || ") + " FROM t") == .string(String(repeating: "q", count: 100)))
        #expect(try one("SELECT " + (0..<100).map { _ in "s" }.joined(separator: " || ") + " || z FROM t") == .string(String(repeating: "q", count: 100) + "null"))
    }

    @Test func errorsInLongQueriesQuoteOnlyAroundThePosition() {
        let long = "SELECT " + String(repeating: "a + ", count: 250_000) + " FROM t WHERE x <<< 1"
        do {
            _ = try SQLParser.parseStatement(long)
            Issue.record("parsed")
        } catch {
            let text = error.description
            #expect(text.count < 600, "\(text.count) characters")
            #expect(text.contains("…"))
        }
        let hugeToken = "SELECT '" + String(repeating: "z", count: 1_000_000)
        do {
            _ = try SQLParser.parseStatement(hugeToken)
            Issue.record("parsed")
        } catch {
            #expect(error.description.count < 600)
        }
        // The caret still points at the token.
        let err = QueryError(.syntax, "bad", at: SourceLocation(offset: 0, line: 1, column: 500), token: "x",
                             source: String(repeating: "a", count: 499) + "x" + String(repeating: "b", count: 500))
        let lines = err.description.split(separator: "\n")
        let caret = lines[2].firstIndex(of: "^").map { lines[2].distance(from: lines[2].startIndex, to: $0) }!
        let x = lines[1].firstIndex(of: "x").map { lines[1].distance(from: lines[1].startIndex, to: $0) }!
        #expect(caret == x)
    }
}
