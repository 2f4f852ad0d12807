// QueryBuilder: every construct yields the same AST as its SQL++ twin (SPEC §11).

#if canImport(FoundationEssentials)
import FoundationEssentials  // not Foundation: its ICU clashes with the engine's CICU module
#else
import Foundation
#endif
import Testing
@testable import Tessera

private func sql(_ text: String) throws -> SelectStatement { try SQLParser.parseStatement(text) }
private func sqlExpr(_ text: String) throws -> Expr { try SQLParser.parseExpression(text) }

private let hotels = DataSource.collection(name: "hotels")
private func p(_ name: String) -> PropertyExpression { Tessera.Expression.property(name) }

/// `SELECT * FROM _ WHERE <e>`, the frame for expression twins.
private func whereQuery(_ e: ExpressionProtocol) -> SelectStatement {
    QueryBuilder.select(SelectResult.all()).from(DataSource.collection(name: "_")).where(e).statement
}

@Suite("QueryBuilder")
struct QueryBuilderTests {
    /// Checks an expression twin both bare and inside a statement.
    func twin(_ e: ExpressionProtocol, _ text: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        #expect(e.expr == (try sqlExpr(text)), "\(text) vs \(SQLPrinter.print(e.expr))", sourceLocation: sourceLocation)
        #expect(whereQuery(e) == (try sql("SELECT * FROM _ WHERE " + text)), sourceLocation: sourceLocation)
    }

    // MARK: - Clauses

    @Test func selectResults() throws {
        let q = QueryBuilder.select(
            SelectResult.expression(p("name")).as("n"), SelectResult.property("city"),
            SelectResult.all(), SelectResult.all().from("h"), SelectResult.expression(Meta.id))
            .from(hotels.as("h"))
        #expect(q.statement == (try sql("SELECT name AS n, city, *, h.*, meta().id FROM hotels AS h")))
    }

    @Test func selectDistinctAndArrays() throws {
        let q = QueryBuilder.selectDistinct([SelectResult.property("a")]).from(hotels)
        #expect(q.statement == (try sql("SELECT DISTINCT a FROM hotels")))
        let q2 = QueryBuilder.select([SelectResult.property("a"), SelectResult.property("b")]).from(hotels)
        #expect(q2.statement == (try sql("SELECT a, b FROM hotels")))
    }

    @Test func expressionAllIsStar() throws {
        let q = QueryBuilder.select(SelectResult.expression(Tessera.Expression.all()),
                                    SelectResult.expression(Tessera.Expression.all().from("x")).as("doc"))
            .from(hotels.as("x"))
        #expect(q.statement == (try sql("SELECT *, x.* AS doc FROM hotels x")))
        #expect(Tessera.Expression.all().from("x").expr == (try sqlExpr("x")))
    }

    @Test func dataSources() throws {
        let q1 = QueryBuilder.select(SelectResult.all()).from(DataSource.collection(name: "hotels", scope: "inventory"))
        #expect(q1.statement == (try sql("SELECT * FROM inventory.hotels")))
        let q2 = QueryBuilder.select(SelectResult.all()).from(DataSource.collection(name: "travel-sample").as("t"))
        #expect(q2.statement == (try sql("SELECT * FROM `travel-sample` AS t")))
        let q3 = QueryBuilder.select(SelectResult.all()).from(DataSourceAs(scope: "_default", collection: "_default"))
        #expect(q3.statement == (try sql("SELECT * FROM _default._default")))
    }

    @Test func joins() throws {
        let on = p("city").from("h").equalTo(p("city").from("a"))
        let airports = DataSource.collection(name: "airports").as("a")
        let kinds: [(JoinProtocol, String)] = [
            (Join.join(airports).on(on), "JOIN"),
            (Join.innerJoin(airports).on(on), "INNER JOIN"),
            (Join.leftJoin(airports).on(on), "LEFT JOIN"),
            (Join.leftOuterJoin(airports).on(on), "LEFT OUTER JOIN"),
        ]
        for (j, word) in kinds {
            let q = QueryBuilder.select(SelectResult.all()).from(hotels.as("h")).join(j)
            #expect(q.statement == (try sql("SELECT * FROM hotels h \(word) airports a ON h.city = a.city")))
        }
        let cross = QueryBuilder.select(SelectResult.all()).from(hotels.as("h")).join(Join.crossJoin(airports))
        #expect(cross.statement == (try sql("SELECT * FROM hotels h CROSS JOIN airports a")))
        // Without .on: represented faithfully for the analyzer.
        let noOn = QueryBuilder.select(SelectResult.all()).from(hotels.as("h")).join(Join.join(airports))
        #expect(noOn.statement == (try sql("SELECT * FROM hotels h JOIN airports a")))
    }

    @Test func unnest() throws {
        let q = QueryBuilder.select(SelectResult.property("name"), SelectResult.property("interest"))
            .from(DataSource.collection(name: "_"))
            .join(Join.unnest(p("likes")).as("interest"))
        #expect(q.statement == (try sql("SELECT name, interest FROM _ UNNEST likes AS interest")))
        let chain = QueryBuilder.select(SelectResult.all())
            .from(DataSource.collection(name: "profiles").as("p"))
            .join(Join.unnest(p("contacts").from("p")).as("c"),
                  Join.unnest(p("phones").from("c")).as("ph"),
                  Join.leftJoin(hotels).on(Tessera.Expression.boolean(true)),
                  Join.unnest(p("x")))
            .where(p("type").from("ph").equalTo(Tessera.Expression.string("mobile")))
        #expect(chain.statement == (try sql(
            "SELECT * FROM profiles p UNNEST p.contacts AS c UNNEST c.phones AS ph LEFT JOIN hotels ON TRUE UNNEST x "
                + "WHERE ph.type = 'mobile'")))
    }

    @Test func fullChain() throws {
        let q = QueryBuilder
            .select(SelectResult.property("city"), SelectResult.expression(Function.count()).as("n"))
            .from(hotels)
            .where(p("type").equalTo(Tessera.Expression.string("hotel")))
            .groupBy(p("city"), p("country"))
            .having(Function.count().greaterThan(Tessera.Expression.int(10)))
            .orderBy(Ordering.property("n").descending(), Ordering.expression(p("city")).ascending(), Ordering.property("x"))
            .limit(Tessera.Expression.int(10), offset: Tessera.Expression.int(20))
        #expect(q.statement == (try sql(
            "SELECT city, COUNT(*) AS n FROM hotels WHERE type = 'hotel' GROUP BY city, country "
                + "HAVING COUNT(*) > 10 ORDER BY n DESC, city ASC, x LIMIT 10 OFFSET 20")))
    }

    @Test func routersSkipClauses() throws {
        let base = QueryBuilder.select(SelectResult.all()).from(hotels)
        #expect(base.limit(Tessera.Expression.parameter("n")).statement == (try sql("SELECT * FROM hotels LIMIT $n")))
        #expect(base.orderBy([Ordering.property("a")]).statement == (try sql("SELECT * FROM hotels ORDER BY a")))
        #expect(base.groupBy([p("a")]).limit(Tessera.Expression.int(1)).statement
            == (try sql("SELECT * FROM hotels GROUP BY a LIMIT 1")))
        #expect(base.where(p("a")).orderBy(Ordering.property("a")).limit(Tessera.Expression.int(1)).statement
            == (try sql("SELECT * FROM hotels WHERE a ORDER BY a LIMIT 1")))
        #expect(base.join([Join.crossJoin(hotels.as("b"))]).groupBy(p("a")).having(p("b")).limit(Tessera.Expression.int(1)).statement
            == (try sql("SELECT * FROM hotels CROSS JOIN hotels b GROUP BY a HAVING b LIMIT 1")))
    }

    // MARK: - Properties and literals

    @Test func properties() throws {
        try twin(p("name"), "name")
        try twin(p("address.city"), "address.city")
        try twin(p("first\\.name"), "`first.name`")
        try twin(p("a.b[2].c"), "a.b[2].c")
        try twin(p("a[-1]"), "a[-1]")
        try twin(p("x y.`q`"), "`x y`.```q```")
        try twin(p("name").from("h"), "h.name")
        try twin(p("a\\\\b"), "`a\\b`")
    }

    @Test func literals() throws {
        try twin(Tessera.Expression.string("it's"), "'it''s'")
        try twin(Tessera.Expression.string(nil), "NULL")
        try twin(Tessera.Expression.int(-10), "-10")
        try twin(Tessera.Expression.int64(Int64.min), "-9223372036854775808")
        try twin(Tessera.Expression.double(10.25), "10.25")
        try twin(Tessera.Expression.float(0.5), "0.5")
        try twin(Tessera.Expression.number(3), "3")
        try twin(Tessera.Expression.number(2.5), "2.5")
        try twin(Tessera.Expression.number(nil), "NULL")
        try twin(Tessera.Expression.boolean(true), "TRUE")
        try twin(Tessera.Expression.value(nil), "NULL")
        try twin(Tessera.Expression.value("x"), "'x'")
        try twin(Tessera.Expression.value(7), "7")
        try twin(Tessera.Expression.value(false), "FALSE")
        try twin(Tessera.Expression.value(Value.missing), "MISSING")
        try twin(Tessera.Expression.value([1, "a", [true]] as [Any]), "[1, 'a', [TRUE]]")
        try twin(Tessera.Expression.value(["b": 2, "a": [1]] as [String: Any]), "{'a': [1], 'b': 2}")
        try twin(Tessera.Expression.value(Value.array([.int(1), .object(["k": .null])])), "[1, {'k': NULL}]")
        try twin(Tessera.Expression.array([1, p("x")]), "[1, x]")
        try twin(Tessera.Expression.array(nil), "NULL")
        try twin(Tessera.Expression.dictionary(["k": "v", "e": Tessera.Expression.parameter("p")]), "{'e': $p, 'k': 'v'}")
        try twin(Tessera.Expression.dictionary(nil), "NULL")
        try twin(Tessera.Expression.parameter("limit"), "$limit")
    }

    @Test func dates() throws {
        let d = Date(timeIntervalSince1970: 1_540_319_581.123)
        try twin(Tessera.Expression.date(d), "'2018-10-23T18:33:01.123Z'")
        try twin(Tessera.Expression.date(Date(timeIntervalSince1970: 0)), "'1970-01-01T00:00:00.000Z'")
        try twin(Tessera.Expression.date(Date(timeIntervalSince1970: -1)), "'1969-12-31T23:59:59.000Z'")
        try twin(Tessera.Expression.date(Date(timeIntervalSince1970: 951_782_400)), "'2000-02-29T00:00:00.000Z'")
        try twin(Tessera.Expression.date(nil), "NULL")
        try twin(Tessera.Expression.value(d), "'2018-10-23T18:33:01.123Z'")
    }

    // MARK: - Operators

    @Test func arithmeticAndComparison() throws {
        let a = p("a"), b = p("b")
        try twin(a.add(b), "a + b")
        try twin(a.subtract(b), "a - b")
        try twin(a.multiply(b), "a * b")
        try twin(a.divide(b), "a / b")
        try twin(a.modulo(b), "a % b")
        try twin(a.concat(b), "a || b")
        try twin(a.equalTo(b), "a = b")
        try twin(a.notEqualTo(b), "a != b")
        try twin(a.lessThan(b), "a < b")
        try twin(a.lessThanOrEqualTo(b), "a <= b")
        try twin(a.greaterThan(b), "a > b")
        try twin(a.greaterThanOrEqualTo(b), "a >= b")
        try twin(a.add(b).multiply(Tessera.Expression.int(2)), "(a + b) * 2")
    }

    @Test func isAndLogic() throws {
        let a = p("a"), b = p("b")
        try twin(a.is(b), "a IS b")
        try twin(a.isNot(b), "a IS NOT b")
        try twin(p("callsign").is(Tessera.Expression.string("ANA")), "callsign IS 'ANA'")
        try twin(a.is(Tessera.Expression.value(nil)), "a IS NULL")
        try twin(a.isNot(Tessera.Expression.value(nil)), "a IS NOT NULL")
        try twin(a.is(Tessera.Expression.value(Value.missing)), "a IS MISSING")
        try twin(a.isNot(Tessera.Expression.value(Value.missing)), "a IS NOT MISSING")
        try twin(a.isValued(), "a IS VALUED")
        try twin(a.isNotValued(), "a IS NOT VALUED")
        try twin(a.and(b), "a AND b")
        try twin(a.or(b), "a OR b")
        try twin(a.or(b).and(p("c")), "(a OR b) AND c")
        try twin(Tessera.Expression.not(a.equalTo(b)), "NOT a = b")
        try twin(Tessera.Expression.negated(a), "NOT a")
    }

    @Test func betweenInLikeRegex() throws {
        let a = p("a")
        try twin(a.between(Tessera.Expression.int(1), and: Tessera.Expression.int(10)), "a BETWEEN 1 AND 10")
        try twin(a.in([Tessera.Expression.string("x"), Tessera.Expression.string("y")]), "a IN ('x', 'y')")
        try twin(a.in([]), "a IN []")
        try twin(a.like(Tessera.Expression.string("x%")), "a LIKE 'x%'")
        try twin(a.regex(Tessera.Expression.string("^x")), "REGEXP_LIKE(a, '^x')")
    }

    @Test func collations() throws {
        let a = p("name").equalTo(Tessera.Expression.string("fred"))
        try twin(a.collate(Collation.ascii()), "(name = 'fred') COLLATE (NOUNICODE CASE)")
        try twin(a.collate(Collation.ascii().ignoreCase(true)), "name = 'fred' COLLATE (NOUNICODE NOCASE)")
        try twin(a.collate(Collation.unicode()), "name = 'fred' COLLATE (UNICODE CASE DIAC)")
        try twin(a.collate(Collation.unicode().ignoreCase(true).ignoreAccents(true).locale("fr")),
                 "name = 'fred' COLLATE (UNICODE:fr NOCASE NODIAC)")
        try twin(a.collate(Collation.unicode().locale("fr_CA").ignoreAccents(true)),
                 "name = 'fred' COLLATE (UNICODE:fr_CA CASE NODIAC)")
        // The engine's Collation value works too.
        try twin(a.collate(Collation(unicode: true, ignoreCase: true)), "name = 'fred' COLLATE (UNICODE NOCASE DIAC)")
        // A collation keyword list rebuilds the same Collation.
        #expect(Collation(keywords: Collation.unicode().ignoreCase(true).locale("de").collationKeywords)
            == Collation(unicode: true, ignoreCase: true, locale: "de"))
        #expect(Collation(keywords: Collation.ascii().ignoreCase(true).collationKeywords) == Collation(ignoreCase: true))
    }

    // MARK: - Meta, arrays, functions, full text, CASE

    @Test func meta() throws {
        try twin(Meta.id, "meta().id")
        try twin(Meta.sequence, "meta().sequence")
        try twin(Meta.isDeleted, "meta().deleted")
        try twin(Meta.expiration, "meta().expiration")
        try twin(Meta.revisionID, "meta().revisionID")
        try twin(Meta.id.from("h"), "meta(h).id")
        try twin(Meta.isDeleted.from("h"), "META(h).DELETED")
    }

    @Test func arrayExpressions() throws {
        let v = ArrayExpression.variable("like")
        try twin(ArrayExpression.any(v).in(p("likes")).satisfies(v.equalTo(Tessera.Expression.string("Soccer"))),
                 "ANY `like` IN likes SATISFIES `like` = 'Soccer' END")
        try twin(ArrayExpression.every(v).in(p("likes")).satisfies(v.greaterThan(Tessera.Expression.int(0))),
                 "EVERY `like` IN likes SATISFIES `like` > 0 END")
        try twin(ArrayExpression.anyAndEvery(v).in(p("likes")).satisfies(v.isValued()),
                 "ANY AND EVERY `like` IN likes SATISFIES `like` IS VALUED END")
        let c = ArrayExpression.variable("c")
        try twin(ArrayExpression.any(c).in(p("contacts")).satisfies(ArrayExpression.variable("c.type").equalTo(Tessera.Expression.string("home"))),
                 "SOME c IN contacts SATISFIES c.type = 'home' END")
        try twin(ArrayFunction.contains(p("tags"), value: Tessera.Expression.string("x")), "ARRAY_CONTAINS(tags, 'x')")
        try twin(ArrayFunction.length(p("tags")), "array_length(tags)")
    }

    @Test func functions() throws {
        let x = p("x"), y = p("y")
        let cases: [(ExpressionProtocol, String)] = [
            (Function.count(), "COUNT(*)"), (Function.count(nil), "count()"), (Function.count(Tessera.Expression.all()), "COUNT(*)"),
            (Function.count(x), "COUNT(x)"), (Function.avg(x), "AVG(x)"), (Function.min(x), "MIN(x)"),
            (Function.max(x), "MAX(x)"), (Function.sum(x), "SUM(x)"),
            (Function.abs(x), "ABS(x)"), (Function.acos(x), "ACOS(x)"), (Function.asin(x), "ASIN(x)"),
            (Function.atan(x), "ATAN(x)"), (Function.atan2(y: y, x: x), "ATAN2(y, x)"), (Function.ceil(x), "CEIL(x)"),
            (Function.cos(x), "COS(x)"), (Function.degrees(x), "DEGREES(x)"), (Function.e(), "E()"),
            (Function.exp(x), "EXP(x)"), (Function.floor(x), "FLOOR(x)"), (Function.ln(x), "LN(x)"),
            (Function.log(x), "LOG(x)"), (Function.pi(), "PI()"), (Function.power(base: x, exponent: y), "POWER(x, y)"),
            (Function.radians(x), "RADIANS(x)"), (Function.round(x), "ROUND(x)"),
            (Function.round(x, digits: Tessera.Expression.int(1)), "ROUND(x, 1)"), (Function.sign(x), "SIGN(x)"),
            (Function.sin(x), "SIN(x)"), (Function.sqrt(x), "SQRT(x)"), (Function.tan(x), "TAN(x)"),
            (Function.trunc(x), "TRUNC(x)"), (Function.trunc(x, digits: Tessera.Expression.int(2)), "TRUNC(x, 2)"),
            (Function.contains(x, substring: Tessera.Expression.string("a")), "CONTAINS(x, 'a')"),
            (Function.length(x), "LENGTH(x)"), (Function.lower(x), "LOWER(x)"), (Function.ltrim(x), "LTRIM(x)"),
            (Function.rtrim(x), "RTRIM(x)"), (Function.trim(x), "TRIM(x)"), (Function.upper(x), "UPPER(x)"),
            (Function.stringToMillis(x), "STR_TO_MILLIS(x)"), (Function.stringToUTC(x), "STR_TO_UTC(x)"),
            (Function.millisToString(x), "MILLIS_TO_STR(x)"), (Function.millisToUTC(x), "MILLIS_TO_UTC(x)"),
            (Function.call("ifMissing", x, y), "IFMISSING(x, y)"), (Function.call("now_str"), "NOW_STR()"),
        ]
        for (e, text) in cases { try twin(e, text) }
    }

    @Test func fullText() throws {
        let q = QueryBuilder.select(SelectResult.expression(Meta.id), SelectResult.expression(FullTextFunction.rank(Tessera.Expression.fullTextIndex("descIdx").from("h"))))
            .from(hotels.as("h"))
            .where(FullTextFunction.match(Tessera.Expression.fullTextIndex("descIdx").from("h"), query: "wifi AND pool"))
            .orderBy(Ordering.expression(FullTextFunction.rank(Tessera.Expression.fullTextIndex("descIdx").from("h"))).descending())
        #expect(q.statement == (try sql(
            "SELECT meta().id, rank(h.descIdx) FROM hotels h WHERE match(h.descIdx, 'wifi AND pool') ORDER BY rank(h.descIdx) DESC")))
        try twin(FullTextFunction.match(Tessera.Expression.fullTextIndex("idx"), query: "it's"), "MATCH(idx, 'it''s')")
        try twin(FullTextFunction.match(Tessera.Expression.fullTextIndex("idx"), query: Tessera.Expression.parameter("q")), "MATCH(idx, $q)")
        try twin(FullTextFunction.rank(Tessera.Expression.fullTextIndex("my idx")), "RANK(`my idx`)")
    }

    @Test func caseExpressions() throws {
        try twin(CaseExpression.value(p("n"))
                    .when(Tessera.Expression.int(1), then: Tessera.Expression.string("one"))
                    .when(Tessera.Expression.int(2), then: Tessera.Expression.string("two"))
                    .else(Tessera.Expression.string("many")),
                 "CASE n WHEN 1 THEN 'one' WHEN 2 THEN 'two' ELSE 'many' END")
        try twin(CaseExpression.searched().when(p("a").greaterThan(Tessera.Expression.int(1)), then: Tessera.Expression.string("big")),
                 "CASE WHEN a > 1 THEN 'big' END")
    }

    @Test func builderStatementsPrintAndReparse() throws {
        let q = QueryBuilder.selectDistinct(SelectResult.expression(Function.lower(p("first\\.name"))).as("n"))
            .from(DataSource.collection(name: "people", scope: "crm").as("p"))
            .join(Join.leftJoin(DataSource.collection(name: "orders").as("o")).on(Meta.id.from("p").equalTo(p("customer").from("o"))))
            .where(p("age").between(Tessera.Expression.int(18), and: Tessera.Expression.int(65)).collate(Collation.unicode()))
            .orderBy(Ordering.property("n").descending())
            .limit(Tessera.Expression.parameter("limit"))
        let text = SQLPrinter.print(q.statement)
        #expect(text == "SELECT DISTINCT LOWER(`first.name`) AS n FROM crm.people AS p LEFT JOIN orders AS o "
            + "ON META(p).id = o.customer WHERE age BETWEEN 18 AND 65 COLLATE (UNICODE CASE DIAC) ORDER BY n DESC LIMIT $limit")
        #expect(try SQLParser.parseStatement(text) == q.statement)
    }
}
