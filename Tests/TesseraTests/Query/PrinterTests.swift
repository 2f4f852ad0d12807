// Printer: canonical spelling, quoting, parentheses, and parse(print(ast)) == ast for 10,000
// seeded random ASTs.

import Testing
@testable import Tessera

@Suite("SQL++ printer")
struct PrinterTests {
    @Test func identifiersAreQuotedOnlyWhenNeeded() {
        #expect(SQLPrinter.identifier("name") == "name")
        #expect(SQLPrinter.identifier("_id") == "_id")
        #expect(SQLPrinter.identifier("a$b") == "a$b")
        #expect(SQLPrinter.identifier("first.name") == "`first.name`")
        #expect(SQLPrinter.identifier("x y") == "`x y`")
        #expect(SQLPrinter.identifier("a`b") == "`a``b`")
        #expect(SQLPrinter.identifier("select") == "`select`")
        #expect(SQLPrinter.identifier("Where") == "`Where`")
        #expect(SQLPrinter.identifier("some") == "`some`")
        #expect(SQLPrinter.identifier("1a") == "`1a`")
        #expect(SQLPrinter.identifier("") == "``")
        #expect(SQLPrinter.identifier("é") == "`é`")
    }

    @Test func stringsDoubleTheirDelimiter() {
        #expect(SQLPrinter.string("it's") == "'it''s'")
        #expect(SQLPrinter.string("say \"hi\"") == "'say \"hi\"'")
        #expect(SQLPrinter.string(#"a\n"#) == #"'a\n'"#)
    }

    @Test func literals() {
        #expect(SQLPrinter.print(.literal(.int(-10))) == "-10")
        #expect(SQLPrinter.print(.literal(.double(10.25))) == "10.25")
        #expect(SQLPrinter.print(.literal(.double(1))) == "1.0")
        #expect(SQLPrinter.print(.literal(.double(1e300))) == "1e+300")
        #expect(SQLPrinter.print(.literal(.double(.infinity))) == "1e999")
        #expect(SQLPrinter.print(.literal(.missing)) == "MISSING")
        #expect(SQLPrinter.print(.literal([1, "a", ["k": true]])) == "[1, 'a', {'k': TRUE}]")
    }

    @Test func parenthesesOnlyWhereNeeded() {
        let a = prop("a"), b = prop("b"), c = prop("c")
        #expect(SQLPrinter.print(bin(.multiply, bin(.add, a, b), c)) == "(a + b) * c")
        #expect(SQLPrinter.print(bin(.add, a, bin(.multiply, b, c))) == "a + b * c")
        #expect(SQLPrinter.print(bin(.subtract, a, bin(.subtract, b, c))) == "a - (b - c)")
        #expect(SQLPrinter.print(bin(.subtract, bin(.subtract, a, b), c)) == "a - b - c")
        #expect(SQLPrinter.print(.unary(.not, bin(.equal, a, b))) == "NOT a = b")
        #expect(SQLPrinter.print(bin(.equal, .unary(.not, a), b)) == "(NOT a) = b")
        #expect(SQLPrinter.print(.unary(.not, bin(.and, a, b))) == "NOT (a AND b)")
        #expect(SQLPrinter.print(.collate(bin(.and, a, b), [.noCase])) == "a AND b COLLATE NOCASE")
        #expect(SQLPrinter.print(bin(.and, a, .collate(b, [.noCase]))) == "a AND (b COLLATE NOCASE)")
        #expect(SQLPrinter.print(.collate(a, [.unicode(locale: "fr"), .noCase])) == "a COLLATE (UNICODE:fr NOCASE)")
        #expect(SQLPrinter.print(.unary(.negate, .literal(5))) == "-(5)")
        #expect(SQLPrinter.print(.unary(.negate, .unary(.negate, a))) == "-(-a)")
        #expect(SQLPrinter.print(bin(.is, a, .literal(.null))) == "a IS (NULL)")
        #expect(SQLPrinter.print(.member(a, [.key("b")])) == "(a).b")
        #expect(SQLPrinter.print(.member(.literal(5), [.key("b")])) == "5 .b")
        #expect(SQLPrinter.print(.member(.meta(alias: nil, key: nil, .none), [.key("id")])) == "(META()).id")
        #expect(SQLPrinter.print(.inList(a, [], negated: true)) == "a NOT IN []")
        #expect(SQLPrinter.print(.call("COUNT", [], .none)) == "COUNT(*)")
    }

    @Test func hazardsAreParenthesised() throws {
        // Each of these would read back differently without parentheses.
        let trees: [Expr] = [
            bin(.is, prop("a"), .member(.literal(.null), [.key("x")])),
            bin(.isNot, prop("a"), bin(.concat, .literal(.missing), prop("b"))),
            .unary(.negate, .member(.literal(5), [.key("x")])),
            .unary(.plus, .literal(-5)),
            .member(.member(prop("a"), [.key("b")]), [.key("c")]),
            bin(.concat, .test(prop("a"), .null, negated: false), prop("b")),
            bin(.equal, .collate(prop("a"), [.noCase]), prop("b")),
        ]
        for t in trees {
            let text = SQLPrinter.print(t)
            #expect(try SQLParser.parseExpression(text) == t, "\(text)")
        }
    }

    @Test func tenThousandRandomStatementsRoundTrip() throws {
        var gen = RandomAST(seed: 0x7E55_E7A)
        var failures = 0
        for i in 0..<10_000 {
            let stmt = gen.statement(depth: i % 5)
            let text = SQLPrinter.print(stmt)
            do {
                let back = try SQLParser.parseStatement(text)
                if back != stmt {
                    failures += 1
                    if failures <= 5 { Issue.record("mismatch #\(i): \(text)\n  reprinted: \(SQLPrinter.print(back))") }
                }
            } catch {
                failures += 1
                if failures <= 5 { Issue.record("#\(i) does not parse: \(text)\n\(error)") }
            }
        }
        #expect(failures == 0)
    }

    @Test func randomExpressionsRoundTrip() throws {
        var gen = RandomAST(seed: 42)
        for i in 0..<2_000 {
            let e = gen.expr(6)
            let text = SQLPrinter.print(e)
            let back = try SQLParser.parseExpression(text)
            #expect(back == e, "#\(i): \(text)")
            if back != e { break }
        }
    }
}
