// Parser → AST: exact trees for precedence, literals, paths, special forms and §13 gotchas.

import Testing
@testable import Tessera

// MARK: - AST shorthands

/// A property path from dotted names (no escapes).
func prop(_ path: String) -> Expr {
    .property(path.split(separator: ".").map { .key(String($0)) }, .none)
}
func lit(_ v: Value) -> Expr { .literal(v) }
func bin(_ op: BinaryOperator, _ l: Expr, _ r: Expr) -> Expr { .binary(op, l, r) }
func call(_ name: String, _ args: Expr...) -> Expr { .call(name, args, .none) }
func parse(_ text: String) throws -> Expr { try SQLParser.parseExpression(text) }

@Suite("Parser AST")
struct ParserTests {
    // MARK: Precedence (SPEC §3 table)

    @Test func orBelowAnd() throws {
        #expect(try parse("a OR b AND c") == bin(.or, prop("a"), bin(.and, prop("b"), prop("c"))))
        #expect(try parse("a AND b OR c") == bin(.or, bin(.and, prop("a"), prop("b")), prop("c")))
    }

    @Test func prefixNotIsLooserThanComparisons() throws {
        // [T] NOT a = b is NOT (a = b)
        #expect(try parse("NOT a = b") == .unary(.not, bin(.equal, prop("a"), prop("b"))))
        #expect(try parse("NOT a AND b") == bin(.and, .unary(.not, prop("a")), prop("b")))
        #expect(try parse("NOT a IS NULL") == .unary(.not, .test(prop("a"), .null, negated: false)))
        #expect(try parse("NOT a < b + 1")
            == .unary(.not, bin(.less, prop("a"), bin(.add, prop("b"), lit(1)))))
        #expect(try parse("a = NOT b") == bin(.equal, prop("a"), .unary(.not, prop("b"))))
    }

    @Test func equalityBelowRelational() throws {
        #expect(try parse("a < b = c < d")
            == bin(.equal, bin(.less, prop("a"), prop("b")), bin(.less, prop("c"), prop("d"))))
        #expect(try parse("a = b = c") == bin(.equal, bin(.equal, prop("a"), prop("b")), prop("c")))
        #expect(try parse("a == b") == bin(.equal, prop("a"), prop("b")))
        #expect(try parse("a <> b") == bin(.notEqual, prop("a"), prop("b")))
    }

    @Test func arithmeticLevels() throws {
        #expect(try parse("a + b * c") == bin(.add, prop("a"), bin(.multiply, prop("b"), prop("c"))))
        #expect(try parse("a - b - c") == bin(.subtract, bin(.subtract, prop("a"), prop("b")), prop("c")))
        #expect(try parse("a / b % c") == bin(.modulo, bin(.divide, prop("a"), prop("b")), prop("c")))
        // || binds tighter than * (level 9 above 8)
        #expect(try parse("a * b || c") == bin(.multiply, prop("a"), bin(.concat, prop("b"), prop("c"))))
        #expect(try parse("a + b < c") == bin(.less, bin(.add, prop("a"), prop("b")), prop("c")))
    }

    @Test func unaryMinusAboveConcat() throws {
        #expect(try parse("-a || b") == bin(.concat, .unary(.negate, prop("a")), prop("b")))
        #expect(try parse("-a.b") == .unary(.negate, prop("a.b")))
        #expect(try parse("+a") == .unary(.plus, prop("a")))
        #expect(try parse("- -a") == .unary(.negate, .unary(.negate, prop("a"))))
        #expect(try parse("-(5)") == .unary(.negate, lit(5)))
        #expect(try parse("a - -1") == bin(.subtract, prop("a"), lit(-1)))
        #expect(try parse("a-1") == bin(.subtract, prop("a"), lit(1)))
    }

    @Test func collateIsLowestAndPostfix() throws {
        // SPEC §5.7: affects both comparisons.
        #expect(try parse("a = 'x' AND b = 'y' COLLATE NOCASE")
            == .collate(bin(.and, bin(.equal, prop("a"), lit("x")), bin(.equal, prop("b"), lit("y"))), [.noCase]))
        #expect(try parse("NOT a COLLATE NOCASE") == .collate(.unary(.not, prop("a")), [.noCase]))
        #expect(try parse("(a COLLATE NOCASE) = b") == bin(.equal, .collate(prop("a"), [.noCase]), prop("b")))
        // A postfix result may be the left operand of what follows.
        #expect(try parse("a COLLATE NOCASE = b") == bin(.equal, .collate(prop("a"), [.noCase]), prop("b")))
        #expect(try parse("a COLLATE (UNICODE:fr_CA NOCASE NODIAC)")
            == .collate(prop("a"), [.unicode(locale: "fr_CA"), .noCase, .noDiac]))
        #expect(try parse("a collate unicode") == .collate(prop("a"), [.unicode(locale: nil)]))
        #expect(try parse("a COLLATE CASE") == .collate(prop("a"), [.caseSensitive]))
        #expect(try parse("a COLLATE (NOUNICODE DIAC)") == .collate(prop("a"), [.noUnicode, .diac]))
    }

    // MARK: Literals (SPEC §2)

    @Test func numbers() throws {
        #expect(try parse("10") == lit(.int(10)))
        #expect(try parse("-10") == lit(.int(-10)))
        #expect(try parse("10.25") == lit(.double(10.25)))
        #expect(try parse(".25") == lit(.double(0.25)))
        #expect(try parse("10.25E+2") == lit(.double(1025)))
        #expect(try parse("1625e-02") == lit(.double(16.25)))
        #expect(try parse("9223372036854775807") == lit(.int(.max)))
        #expect(try parse("-9223372036854775808") == lit(.int(.min)))
        if case .literal(.double(let d)) = try parse("9223372036854775808") {
            #expect(d == 9223372036854775808.0)
        } else {
            Issue.record("out of Int64 range must be a Double")
        }
        if case .literal(.int) = try parse("1.0") { Issue.record("1.0 must be a Double") }
        if case .literal(.int) = try parse("1e2") { Issue.record("1e2 must be a Double") }
    }

    @Test func strings() throws {
        #expect(try parse("'it''s'") == lit("it's"))
        #expect(try parse("\"say \"\"hi\"\"\"") == lit("say \"hi\""))
        #expect(try parse("\"it's\"") == lit("it's"))
        // No backslash escapes: three characters.
        #expect(try parse(#"'a\n'"#) == lit(.string(#"a\n"#)))
        #expect(try parse("''") == lit(""))
        #expect(try parse("'multi\nline'") == lit("multi\nline"))
    }

    @Test func keywordsAndLiterals() throws {
        #expect(try parse("TRUE") == lit(true))
        #expect(try parse("false") == lit(false))
        #expect(try parse("Null") == lit(.null))
        #expect(try parse("missing") == lit(.missing))
        #expect(try parse("[1, 'a']") == .array([lit(1), lit("a")]))
        #expect(try parse("[]") == .array([]))
        #expect(try parse("{'k': 1, \"k2\": [true]}")
            == .object([ObjectMember(key: "k", value: lit(1)), ObjectMember(key: "k2", value: .array([lit(true)]))]))
        #expect(try parse("{}") == .object([]))
    }

    @Test func parameters() throws {
        #expect(try parse("$name") == .parameter("name", .none))
        // [T] reserved words are valid after $.
        #expect(try parse("$limit") == .parameter("limit", .none))
        #expect(try parse("$p.x") == .member(.parameter("p", .none), [.key("x")]))
    }

    // MARK: Paths (SPEC §1.4)

    @Test func paths() throws {
        #expect(try parse("a.b[2].c") == .property([.key("a"), .key("b"), .index(2), .key("c")], .none))
        #expect(try parse("a[-1]") == .property([.key("a"), .index(-1)], .none))
        #expect(try parse("`first.name`.`x y`") == .property([.key("first.name"), .key("x y")], .none))
        #expect(try parse("`a``b`") == .property([.key("a`b")], .none))
        #expect(try parse("`select`") == .property([.key("select")], .none))
        #expect(try parse("Name") != prop("name"))  // case-sensitive
        #expect(try parse("{'x':1}.x") == .member(.object([ObjectMember(key: "x", value: lit(1))]), [.key("x")]))
        #expect(try parse("f(a).b[0]") == .member(call("F", prop("a")), [.key("b"), .index(0)]))
        #expect(try parse("(a).b") == .member(prop("a"), [.key("b")]))
        #expect(try parse("(a + b).c") == .member(bin(.add, prop("a"), prop("b")), [.key("c")]))
        #expect(try parse("'abc'.x") == .member(lit("abc"), [.key("x")]))
        #expect(try parse("a . b") == prop("a.b"))
    }

    // MARK: Predicates

    @Test func isForms() throws {
        #expect(try parse("a IS NULL") == .test(prop("a"), .null, negated: false))
        #expect(try parse("a IS NOT NULL") == .test(prop("a"), .null, negated: true))
        #expect(try parse("a NOT NULL") == .test(prop("a"), .null, negated: true))
        #expect(try parse("a IS MISSING") == .test(prop("a"), .missing, negated: false))
        #expect(try parse("a IS NOT MISSING") == .test(prop("a"), .missing, negated: true))
        #expect(try parse("a IS VALUED") == .test(prop("a"), .valued, negated: false))
        #expect(try parse("a IS NOT VALUED") == .test(prop("a"), .valued, negated: true))
        // §13.15: any right operand.
        #expect(try parse("callsign IS 'ANA'") == bin(.is, prop("callsign"), lit("ANA")))
        #expect(try parse("a IS NOT b + 1") == bin(.isNot, prop("a"), bin(.add, prop("b"), lit(1))))
        #expect(try parse("a IS (NULL)") == bin(.is, prop("a"), lit(.null)))
    }

    @Test func inForms() throws {
        #expect(try parse("x IN (1, 2)") == .inList(prop("x"), [lit(1), lit(2)], negated: false))
        #expect(try parse("x NOT IN [1, 2]") == .inList(prop("x"), [lit(1), lit(2)], negated: true))
        // [T] a bare array expression.
        #expect(try parse("x IN tags") == .inArray(prop("x"), prop("tags"), negated: false))
        #expect(try parse("meta(r).id IN p.reviewList")
            == .inArray(.meta(alias: "r", key: .id, .none), prop("p.reviewList"), negated: false))
        #expect(try parse("x NOT IN $list") == .inArray(prop("x"), .parameter("list", .none), negated: true))
        // `x IN (tags)` is a one-element list.
        #expect(try parse("x IN (tags)") == .inList(prop("x"), [prop("tags")], negated: false))
        #expect(try parse("x IN (1, 2) AND y") == bin(.and, .inList(prop("x"), [lit(1), lit(2)], negated: false), prop("y")))
    }

    @Test func likeAndBetween() throws {
        #expect(try parse("a LIKE 'x%'") == .like(prop("a"), lit("x%"), negated: false))
        #expect(try parse("a NOT LIKE b || '%'") == .like(prop("a"), bin(.concat, prop("b"), lit("%")), negated: true))
        #expect(try parse("a BETWEEN 1 AND 2 AND b")
            == bin(.and, .between(prop("a"), lit(1), lit(2), negated: false), prop("b")))
        #expect(try parse("a NOT BETWEEN b + 1 AND c * 2")
            == .between(prop("a"), bin(.add, prop("b"), lit(1)), bin(.multiply, prop("c"), lit(2)), negated: true))
    }

    // MARK: Special forms

    @Test func caseExpressions() throws {
        #expect(try parse("CASE x WHEN 1 THEN 'a' ELSE 'b' END")
            == .caseWhen(operand: prop("x"), [WhenClause(when: lit(1), then: lit("a"))], else: lit("b")))
        #expect(try parse("CASE WHEN a THEN b WHEN c THEN d END")
            == .caseWhen(operand: nil, [WhenClause(when: prop("a"), then: prop("b")),
                                        WhenClause(when: prop("c"), then: prop("d"))], else: nil))
    }

    @Test func quantifiers() throws {
        let body = bin(.equal, prop("v"), lit(1))
        #expect(try parse("ANY v IN a SATISFIES v = 1 END") == .quantified(.any, variable: "v", in: prop("a"), satisfies: body))
        #expect(try parse("SOME v IN a SATISFIES v = 1 END") == .quantified(.any, variable: "v", in: prop("a"), satisfies: body))
        #expect(try parse("EVERY v IN a SATISFIES v = 1 END") == .quantified(.every, variable: "v", in: prop("a"), satisfies: body))
        #expect(try parse("ANY AND EVERY v IN a SATISFIES v = 1 END")
            == .quantified(.anyAndEvery, variable: "v", in: prop("a"), satisfies: body))
        #expect(try parse("some and every v in a satisfies v = 1 end")
            == .quantified(.anyAndEvery, variable: "v", in: prop("a"), satisfies: body))
        // SOME is not reserved.
        #expect(try parse("some") == prop("some"))
        #expect(try parse("some + 1") == bin(.add, prop("some"), lit(1)))
    }

    @Test func calls() throws {
        #expect(try parse("lower(name)") == call("LOWER", prop("name")))
        #expect(try parse("count(*)") == call("COUNT"))
        #expect(try parse("COUNT()") == call("COUNT"))
        #expect(try parse("pi()") == call("PI"))
        #expect(try parse("ifMissing(a, b, c)") == call("IFMISSING", prop("a"), prop("b"), prop("c")))
        // Unknown names and arity are the analyzer's business.
        #expect(try parse("nosuchfunction(1)") == call("NOSUCHFUNCTION", lit(1)))
    }

    @Test func meta() throws {
        #expect(try parse("meta()") == .meta(alias: nil, key: nil, .none))
        #expect(try parse("meta(h)") == .meta(alias: "h", key: nil, .none))
        #expect(try parse("META().id") == .meta(alias: nil, key: .id, .none))
        // Keys match case-insensitively and are normalised.
        #expect(try parse("meta(h).REVISIONID") == .meta(alias: "h", key: .revisionID, .none))
        #expect(try parse("Meta().Deleted") == .meta(alias: nil, key: .deleted, .none))
        #expect(try parse("meta().expiration") == .meta(alias: nil, key: .expiration, .none))
        #expect(try parse("meta().sequence") == .meta(alias: nil, key: .sequence, .none))
        // Another key stays a member step: the analyzer reports it (semantic error).
        #expect(try parse("meta().bogus") == .member(.meta(alias: nil, key: nil, .none), [.key("bogus")]))
        #expect(try parse("meta().id.x") == .member(.meta(alias: nil, key: .id, .none), [.key("x")]))
        #expect(try parse("meta(a, b)") == call("META", prop("a"), prop("b")))
    }

    @Test func fullText() throws {
        #expect(try parse("match(idx, 'q')") == .match(IndexReference(name: "idx"), lit("q")))
        #expect(try parse("MATCH(h.idx, $q)") == .match(IndexReference(alias: "h", name: "idx"), .parameter("q", .none)))
        #expect(try parse("rank(`my idx`)") == .rank(IndexReference(name: "my idx")))
        // Wrong shapes are left for the analyzer as calls.
        #expect(try parse("match(a, b, c)") == call("MATCH", prop("a"), prop("b"), prop("c")))
        #expect(try parse("rank()") == call("RANK"))
        #expect(try parse("rank(1)") == call("RANK", lit(1)))
    }

    // MARK: Statements

    @Test func statementShape() throws {
        let s = try SQLParser.parseStatement(
            "SELECT DISTINCT h.*, name n, count(*) AS c FROM inventory.hotels h "
                + "LEFT OUTER JOIN airports AS a ON a.city = h.city CROSS JOIN x ON TRUE JOIN y "
                + "UNNEST h.likes AS l UNNEST reviews "
                + "WHERE a.x > 1 GROUP BY h.city, a.y HAVING c > 2 ORDER BY c DESC, n OFFSET 2 LIMIT $n;")
        #expect(s.distinct)
        #expect(s.columns == [.star(source: "h", alias: nil), .expression(prop("name"), alias: "n"),
                              .expression(call("COUNT"), alias: "c")])
        #expect(s.from == DataSourceReference(scope: "inventory", collection: "hotels", alias: "h"))
        #expect(s.joins == [
            .join(.leftOuter, DataSourceReference(collection: "airports", alias: "a"), on: bin(.equal, prop("a.city"), prop("h.city"))),
            // Faithful: CROSS JOIN with ON and JOIN without ON are semantic errors for the analyzer.
            .join(.cross, DataSourceReference(collection: "x"), on: lit(true)),
            .join(.inner, DataSourceReference(collection: "y"), on: nil),
            .unnest(prop("h.likes"), alias: "l", .none),
            .unnest(prop("reviews"), alias: nil, .none),
        ])
        #expect(s.whereClause == bin(.greater, prop("a.x"), lit(1)))
        #expect(s.groupBy == [prop("h.city"), prop("a.y")])
        #expect(s.having == bin(.greater, prop("c"), lit(2)))
        #expect(s.orderBy == [OrderingTerm(expression: prop("c"), descending: true), OrderingTerm(expression: prop("n"))])
        #expect(s.limit == .parameter("n", .none))
        #expect(s.offset == lit(2))
    }

    @Test func selectAllIsNotDistinct() throws {
        let s = try SQLParser.parseStatement("SELECT ALL a FROM _")
        #expect(!s.distinct)
        #expect(s.columns == [.expression(prop("a"), alias: nil)])
        // `all` alone is a property.
        #expect(try SQLParser.parseStatement("SELECT all FROM _").columns == [.expression(prop("all"), alias: nil)])
    }

    @Test func unnestOfAnyExpressionIsKeptForTheAnalyzer() throws {
        let s = try SQLParser.parseStatement("SELECT * FROM _ UNNEST lower(x) AS y")
        #expect(s.joins == [.unnest(call("LOWER", prop("x")), alias: "y", .none)])
    }

    @Test func expressionList() throws {
        #expect(try SQLParser.parseExpressionList("type, address.city, lower(name)")
            == [prop("type"), prop("address.city"), call("LOWER", prop("name"))])
        #expect(try SQLParser.parseExpressionList("a") == [prop("a")])
    }

    // MARK: Locations

    @Test func locationsAreLineColumnOffset() throws {
        let text = "SELECT `é`, x\n  FROM coll c\n WHERE lower(y) AND $p AND match(i, 'q')"
        let s = try SQLParser.parseStatement(text)
        guard case .expression(.property(_, let l1), _) = s.columns[0],
              case .expression(.property(_, let l2), _) = s.columns[1] else {
            Issue.record("shape"); return
        }
        #expect((l1.offset, l1.line, l1.column) == (7, 1, 8))
        #expect((l2.offset, l2.line, l2.column) == (13, 1, 13))  // é is 2 bytes but 1 column
        #expect((s.from.location.line, s.from.location.column) == (2, 8))
        guard case .binary(.and, .binary(.and, .call(_, let args, let lc), .parameter(_, let lp)), .match(let ref, _)) = s.whereClause,
              case .property(_, let ly) = args[0] else {
            Issue.record("shape"); return
        }
        #expect((lc.line, lc.column) == (3, 8))
        #expect((ly.line, ly.column) == (3, 14))
        #expect((lp.line, lp.column) == (3, 21))
        #expect((ref.location.line, ref.location.column) == (3, 34))
    }
}

