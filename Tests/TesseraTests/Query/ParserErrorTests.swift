// Bad queries: each must fail with a *syntax* QueryError at the expected line and column
// (1-based, columns in Unicode scalars), with a message that says what is wrong.

import Testing
@testable import Tessera

struct BadQuery: Sendable, CustomTestStringConvertible {
    let text: String
    let line: Int
    let column: Int
    let message: String
    init(_ text: String, line: Int, column: Int, _ message: String) {
        self.text = text; self.line = line; self.column = column; self.message = message
    }
    var testDescription: String { text }
}

let badQueries: [BadQuery] = [
        BadQuery("SELECT a", line: 1, column: 9, "FROM clause"),
        BadQuery("SELECT a FROM", line: 1, column: 14, "collection name"),
        BadQuery("SELECT FROM _", line: 1, column: 8, "expected an expression"),
        BadQuery("SELECT * FROM _ WHERE", line: 1, column: 22, "expected an expression"),
        BadQuery("SELECT * FROM a RIGHT JOIN b ON a.x = b.x", line: 1, column: 17, "RIGHT JOIN"),
        BadQuery("SELECT * FROM a FULL JOIN b ON TRUE", line: 1, column: 17, "FULL JOIN"),
        BadQuery("SELECT * FROM a FULL OUTER JOIN b ON TRUE", line: 1, column: 17, "FULL JOIN"),
        BadQuery("SELECT * FROM a NATURAL JOIN b", line: 1, column: 17, "NATURAL JOIN"),
        BadQuery("SELECT * FROM a JOIN b USING (x)", line: 1, column: 24, "USING"),
        BadQuery("SELECT * FROM a, b", line: 1, column: 16, "comma joins"),
        BadQuery("SELECT * FROM (SELECT * FROM b)", line: 1, column: 15, "subqueries"),
        BadQuery("SELECT * FROM _ WHERE x IN (SELECT y FROM b)", line: 1, column: 29, "subqueries"),
        BadQuery("SELECT * FROM _ WHERE EXISTS (SELECT y FROM b)", line: 1, column: 31, "subqueries"),
        BadQuery("SELECT VALUE x FROM _", line: 1, column: 8, "SELECT VALUE"),
        BadQuery("SELECT DISTINCT VALUE x FROM _", line: 1, column: 17, "SELECT VALUE"),
        BadQuery("SELECT * FROM a NEST b ON a.x = b.x", line: 1, column: 17, "NEST"),
        BadQuery("SELECT * FROM a UNION SELECT * FROM b", line: 1, column: 17, "UNION"),
        BadQuery("SELECT * FROM a WHERE x = 1 UNION SELECT * FROM b", line: 1, column: 29, "UNION"),
        BadQuery("SELECT * FROM a USE KEYS 'k1'", line: 1, column: 17, "USE KEYS"),
        BadQuery("SELECT * FROM _ WHERE a MATCH 'x'", line: 1, column: 25, "infix MATCH"),
        BadQuery("SELECT * FROM _ WHERE a REGEXP 'x'", line: 1, column: 25, "REGEXP_LIKE"),
        BadQuery("SELECT * FROM _ WHERE a << 2", line: 1, column: 25, "bitwise"),
        BadQuery("SELECT * FROM _ WHERE a >> 2", line: 1, column: 25, "bitwise"),
        BadQuery("SELECT * FROM _ WHERE a & 2", line: 1, column: 25, "bitwise"),
        BadQuery("SELECT * FROM _ WHERE a | 2", line: 1, column: 25, "bitwise"),
        BadQuery("SELECT * FROM _ HAVING COUNT(*) > 1", line: 1, column: 17, "requires GROUP BY"),
        BadQuery("SELECT * FROM _ GROUP BY a HAVING COUNT(*) > 100 WHERE state = 'CA'", line: 1, column: 50, "WHERE must come before"),
        BadQuery("SELECT a FROM _ ORDER BY a WHERE b", line: 1, column: 28, "must come before ORDER BY"),
        BadQuery("SELECT a FROM _ LIMIT 1 LIMIT 2", line: 1, column: 25, "duplicate LIMIT"),
        BadQuery("SELECT a FROM _ WHERE a WHERE b", line: 1, column: 25, "duplicate WHERE"),
        BadQuery("SELECT a COLLATE UNICODE NOCASE FROM _", line: 1, column: 26, "parentheses"),
        BadQuery("SELECT a COLLATE DIACRITIC FROM _", line: 1, column: 18, "DIAC or NODIAC"),
        BadQuery("SELECT a COLLATE () FROM _", line: 1, column: 19, "collation name"),
        BadQuery("SELECT a COLLATE (UNICODE, NOCASE) FROM _", line: 1, column: 26, "separated by spaces"),
        BadQuery("SELECT a COLLATE NOCASE:fr FROM _", line: 1, column: 24, "only UNICODE"),
        BadQuery("SELECT select FROM _", line: 1, column: 8, "reserved word"),
        BadQuery("SELECT a FROM from", line: 1, column: 15, "reserved word"),
        BadQuery("SELECT a.from FROM _", line: 1, column: 10, "reserved word"),
        BadQuery("SELECT {a: 1} FROM _", line: 1, column: 9, "string literals"),
        BadQuery("SELECT 'abc FROM _", line: 1, column: 8, "unterminated string"),
        BadQuery("SELECT `abc FROM _", line: 1, column: 8, "unterminated quoted identifier"),
        BadQuery("SELECT $ FROM _", line: 1, column: 8, "parameter name"),
        BadQuery("SELECT $1 FROM _", line: 1, column: 8, "parameter name"),
        BadQuery("SELECT 1e FROM _", line: 1, column: 8, "malformed number"),
        BadQuery("SELECT 12abc FROM _", line: 1, column: 8, "malformed number"),
        BadQuery("SELECT a[1.5] FROM _", line: 1, column: 10, "integer literal"),
        BadQuery("SELECT a[b] FROM _", line: 1, column: 10, "integer literal"),
        BadQuery("SELECT f(x)[0] FROM _", line: 1, column: 12, "property path"),
        BadQuery("SELECT (a)[0] FROM _", line: 1, column: 11, "property path"),
        BadQuery("SELECT a FROM _ /* c */", line: 1, column: 17, "no comments"),
        BadQuery("SELECT a FROM _ # c", line: 1, column: 17, "no comments"),
        BadQuery("SELECT a NOT b FROM _", line: 1, column: 14, "after NOT"),
        BadQuery("SELECT a BETWEEN 1 FROM _", line: 1, column: 20, "AND in BETWEEN"),
        BadQuery("SELECT CASE WHEN a THEN b FROM _", line: 1, column: 27, "END"),
        BadQuery("SELECT CASE END FROM _", line: 1, column: 13, "WHEN"),
        BadQuery("SELECT ANY v IN a v = 1 END FROM _", line: 1, column: 19, "SATISFIES"),
        BadQuery("SELECT COUNT(DISTINCT a) FROM _", line: 1, column: 14, "DISTINCT"),
        BadQuery("SELECT f(*) FROM _", line: 1, column: 10, "COUNT(*)"),
        BadQuery("SELECT a, FROM _", line: 1, column: 11, "expected an expression"),
        BadQuery("SELECT a\nFROM _\nWHERE a ==\n  AND b", line: 4, column: 3, "expected an expression"),
        BadQuery("SELECT 'héllo' = é FROM _", line: 1, column: 18, "unexpected character 'é'"),
        BadQuery("SELECT a FROM _ ;;", line: 1, column: 18, "after ';'"),
        BadQuery("SELECT a FROM _ WHERE (a, b) IN ((1, 2))", line: 1, column: 25, "only allowed after IN"),
        BadQuery("SELECT a FROM a JOIN b ON a.x = b.x, c", line: 1, column: 36, "comma joins"),
        BadQuery("EXPLAIN SELECT a FROM _", line: 1, column: 1, "EXPLAIN"),
        BadQuery("DELETE FROM _", line: 1, column: 1, "only SELECT"),
        BadQuery("SELECT a FROM a.b.c", line: 1, column: 18, "scope.collection"),
        BadQuery("SELECT * FROM _ WHERE a IN", line: 1, column: 27, "after IN"),
        BadQuery("SELECT * FROM _ WHERE a IS", line: 1, column: 27, "expected an expression"),
        BadQuery("SELECT * FROM _ WHERE a = 'x' AND", line: 1, column: 34, "expected an expression"),
        BadQuery("SELECT * FROM _ OUTER JOIN b ON TRUE", line: 1, column: 17, "LEFT OUTER JOIN"),
        BadQuery("SELECT COUNT(a.*) FROM _", line: 1, column: 16, "alias.*"),
        BadQuery("SELECT a FROM _ WHERE a = 1 JOIN b ON TRUE", line: 1, column: 29, "right after FROM"),
        BadQuery("SELECT * FROM _ WHERE a != !b", line: 1, column: 28, "'!'"),
        BadQuery("SELECT * FROM _ WHERE x IN 1, 2", line: 1, column: 29, "expected"),
        BadQuery("SELECT a FROM _\r\nWHERE\r\n\tb ! c", line: 3, column: 4, "'!'"),
]

@Suite("Parser errors")
struct ParserErrorTests {
    @Test func enoughBadQueries() {
        #expect(badQueries.count >= 40)
    }

    @Test(arguments: badQueries)
    func rejects(_ bad: BadQuery) {
        do {
            let s = try SQLParser.parseStatement(bad.text)
            Issue.record("parsed: \(SQLPrinter.print(s))")
        } catch {
            #expect(error.kind == .syntax)
            #expect(error.location?.line == bad.line, "\(error)")
            #expect(error.location?.column == bad.column, "\(error)")
            #expect(error.message.contains(bad.message), "\(error)")
            #expect(error.source == bad.text)
            // The byte offset agrees with line and column.
            if let loc = error.location {
                let prefix = String(decoding: Array(bad.text.utf8).prefix(loc.offset), as: UTF8.self)
                let lines = prefix.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
                #expect(lines.count == loc.line)
                #expect((lines.last?.count ?? 0) + 1 == loc.column)
            }
        }
    }

    @Test func descriptionShowsCaret() {
        do {
            _ = try SQLParser.parseStatement("SELECT a\nFROM _ WHERE a <<< 1")
            Issue.record("parsed")
        } catch {
            #expect(error.description.contains("line 2, column 16"))
            #expect(error.description.hasSuffix("FROM _ WHERE a <<< 1\n                 ^"))
        }
    }

    @Test func deepNestingIsAnErrorNotACrash() {
        let deep = "SELECT " + String(repeating: "(", count: 300) + "1" + String(repeating: ")", count: 300) + " FROM _"
        do {
            _ = try SQLParser.parseStatement(deep)
            Issue.record("parsed")
        } catch {
            #expect(error.kind == .syntax)
            #expect(error.message == "expression nested too deeply")
            #expect(error.location?.column == 8 + 256)
        }
        // 250 levels are fine.
        let ok = "SELECT " + String(repeating: "(", count: 250) + "1" + String(repeating: ")", count: 250) + " FROM _"
        #expect(throws: Never.self) { try SQLParser.parseStatement(ok) }
    }

    @Test func deepPrefixAndArrayNesting() {
        for text in [String(repeating: "NOT ", count: 5000) + "a",
                     String(repeating: "-", count: 5000) + "a",
                     String(repeating: "[", count: 5000),
                     String(repeating: "{'a':", count: 5000),
                     String(repeating: "f(", count: 5000),
                     String(repeating: "CASE WHEN ", count: 5000)] {
            #expect(throws: QueryError.self) { try SQLParser.parseExpression(text) }
        }
    }

    @Test func longOperatorChainsAreBounded() throws {
        // 900 terms: a tree of height 899 is accepted…
        let ok = (0..<900).map { "a\($0)" }.joined(separator: " AND ")
        let tall = try SQLParser.parseExpression(ok)
        // Printing, comparing and freeing such a tree is fine too.
        #expect(try SQLParser.parseExpression(SQLPrinter.print(tall)) == tall)
        // …100,000 terms would make a tree too tall to walk recursively.
        let long = Array(repeating: "1", count: 100_000).joined(separator: "+")
        do {
            _ = try SQLParser.parseExpression(long)
            Issue.record("parsed")
        } catch {
            #expect(error.message.hasPrefix("expression nested too deeply: more than 1000 operators in one chain"))
        }
    }

    @Test func tooManyArguments() throws {
        let ok = "f(" + Array(repeating: "1", count: 127).joined(separator: ",") + ")"
        _ = try SQLParser.parseExpression(ok)
        let bad = "f(" + Array(repeating: "1", count: 128).joined(separator: ",") + ")"
        #expect(throws: QueryError.self) { try SQLParser.parseExpression(bad) }
    }

    @Test func expressionEntryPointsRejectTrailingText() {
        #expect(throws: QueryError.self) { try SQLParser.parseExpression("a b") }
        #expect(throws: QueryError.self) { try SQLParser.parseExpression("") }
        #expect(throws: QueryError.self) { try SQLParser.parseExpression("a, b") }
        #expect(throws: QueryError.self) { try SQLParser.parseExpressionList("a,") }
        #expect(throws: QueryError.self) { try SQLParser.parseExpressionList("") }
        do {
            _ = try SQLParser.parseExpressionList("lower(name), city +")
            Issue.record("parsed")
        } catch {
            #expect(error.location?.column == 20)
        }
    }
}
