import Testing
@testable import Tessera

@Suite("Full-text: query parser")
struct FullTextQueryParserTests {
    @Test(arguments: [
        ("couchbase database", "AND(couchbase, database)"),
        ("a AND b", "AND(a, b)"),
        ("a OR b", "OR(a, b)"),
        ("a NOT b", "NOT(a, b)"),
        ("a and b or c not d near e", "AND(a, and, b, or, c, not, d, near, e)"),
        ("a OR b c", "OR(a, AND(b, c))"),
        ("a b OR c", "OR(AND(a, b), c)"),
        ("a AND b OR c AND d", "OR(AND(a, b), AND(c, d))"),
        ("a NOT b c", "AND(NOT(a, b), c)"),
        ("a NOT b NOT c", "NOT(NOT(a, b), c)"),
        ("a OR b NOT c", "OR(a, NOT(b, c))"),
        ("(a OR b) c", "AND(OR(a, b), c)"),
        ("((a))", "a"),
        ("\"linux applications\"", "\"linux applications\""),
        ("lin*", "lin*"),
        ("\"lin* app*\"", "\"lin* app*\""),
        ("a NEAR b", "NEAR/10(a, b)"),
        ("a NEAR/3 b", "NEAR/3(a, b)"),
        ("a NEAR/0 \"b c\"", "NEAR/0(a, \"b c\")"),
        ("a NEAR/2 b NEAR/5 c", "NEAR(a /2 b /5 c)"),
        ("a NEAR b NOT c", "NOT(NEAR/10(a, b), c)"),
        ("x a NEAR b", "AND(x, NEAR/10(a, b))"),
        ("(a) NEAR (\"b c\")", "NEAR/10(a, \"b c\")"),
        ("title:linux", "title:linux"),
        ("title: linux", "title:linux"),
        ("title:\"a b\"", "title:\"a b\""),
        ("title:(a OR b) c", "AND(title:OR(a, b), c)"),
        ("title:lin* NEAR body:x", "NEAR/10(title:lin*, body:x)"),
        ("-foo", "-foo"),
        ("don't", "don't"),
        ("a\nOR\tb", "OR(a, b)"),
        ("(\"couchbase database\" OR \"sqlite library\") AND linux",
         "AND(OR(\"couchbase database\", \"sqlite library\"), linux)"),
        ("café\"crème\"", "AND(café, \"crème\")"),
        ("\"\"", "\"\""),
    ])
    func validForms(query: String, tree: String) throws {
        #expect(try FullTextQuery.parse(query).description == tree)
    }

    /// (query, UTF-8 offset, line, column, token)
    @Test(arguments: [
        ("", 0, 1, 1, nil),
        ("   ", 0, 1, 1, nil),
        ("(a", 0, 1, 1, "("),
        ("a)", 1, 1, 2, ")"),
        ("a (b c", 2, 1, 3, "("),
        ("a AND", 2, 1, 3, "AND"),
        ("OR b", 0, 1, 1, "OR"),
        ("a NOT", 2, 1, 3, "NOT"),
        ("a OR OR b", 2, 1, 3, "OR"),
        ("a NEAR", 2, 1, 3, "NEAR"),
        ("a \"b c", 2, 1, 3, "\"b c"),
        ("()", 0, 1, 1, "()"),
        ("a ()", 2, 1, 3, "()"),
        ("a NEAR/x b", 2, 1, 3, "NEAR/x"),
        ("a NEAR/ b", 2, 1, 3, "NEAR/"),
        ("(a OR b) NEAR c", 9, 1, 10, "NEAR"),
        ("a NEAR (b OR c)", 2, 1, 3, "NEAR"),
        ("a NEAR b c NEAR (d e)", 11, 1, 12, "NEAR"),
        ("title:", 0, 1, 1, "title:"),
        ("a\n  AND", 4, 2, 3, "AND"),
        ("éé AND", 5, 1, 4, "AND"),
        ("a (b OR c))", 10, 1, 11, ")"),
    ] as [(String, Int, Int, Int, String?)])
    func syntaxErrors(query: String, offset: Int, line: Int, column: Int, token: String?) throws {
        let error = try #require(throws: QueryError.self) { try FullTextQuery.parse(query) }
        #expect(error.kind == .syntax)
        #expect(error.location?.offset == offset)
        #expect(error.location?.line == line)
        #expect(error.location?.column == column)
        #expect(error.token == token)
        #expect(error.source == query)
    }

    @Test func errorMessagesSayWhatIsWrong() throws {
        func message(_ q: String) throws -> String {
            try #require(throws: QueryError.self) { try FullTextQuery.parse(q) }.message
        }
        #expect(try message("").contains("empty"))
        #expect(try message("(a").contains("unbalanced"))
        #expect(try message("a)").contains("unbalanced"))
        #expect(try message("a \"b").contains("unterminated"))
        #expect(try message("a AND").contains("AND must be followed"))
        #expect(try message("(a b) NEAR c").contains("NEAR operands"))
        let e = try #require(throws: QueryError.self) { try FullTextQuery.parse("linux AND") }
        #expect(e.description.contains("line 1, column 7"))
        #expect(e.description.contains("\n  linux AND\n        ^"))
    }

    @Test func safePattern() throws {
        #expect(FullTextQuery.safePattern(fromUserText: #"Don't "panic" (NOT now) lin* title:x"#)
                == "Don t panic not now lin* title x")
        #expect(FullTextQuery.safePattern(fromUserText: "a AND b OR c NEAR/3 d") == "a and b or c near 3 d")
        #expect(FullTextQuery.safePattern(fromUserText: "-foo *bar baz** ***") == "foo bar baz*")
        #expect(FullTextQuery.safePattern(fromUserText: "((\"") == "")
        #expect(FullTextQuery.safePattern(fromUserText: "café-crème") == "café crème")
        // Whatever the input, a non-empty safe pattern parses and contains only words.
        var rng = SplitMix64(seed: 7)
        let alphabet = Array("aZé (\")*:-/ANDORNOTNEAR \t\n'3.")
        for _ in 0..<500 {
            let text = String((0..<Int.random(in: 0..<30, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            let safe = FullTextQuery.safePattern(fromUserText: text)
            if safe.isEmpty { continue }
            let q = try FullTextQuery.parse(safe)
            #expect(!q.description.contains("OR(") && !q.description.contains("NOT(") && !q.description.contains(":"),
                    "\(text) → \(safe)")
        }
    }

    @Test func compileRunsWordsThroughTheTokenizer() throws {
        let en = FullTextTokenizer(language: "en")
        func compiled(_ q: String, _ columns: [String] = ["title", "body"]) throws -> String {
            try CompiledFullTextQuery(q, tokenizer: en, columns: columns).debugDescription
        }
        #expect(try compiled("Running dogs") == "AND(run, dog)")
        #expect(try compiled("don't") == "\"don t\"")
        #expect(try compiled("e-mail*") == "\"e mail*\"")
        #expect(try compiled("\"kind of magic\"") == "\"kind magic\"")   // stop words take no position
        #expect(try compiled("\"the linux kernel\"") == "\"linux kernel\"")
        #expect(try compiled("happy*") == "happi|happy*")
        #expect(try compiled("running*") == "run*")
        #expect(try compiled("the*") == "the*")
        #expect(try compiled("the") == "EMPTY")
        #expect(try CompiledFullTextQuery("the of", tokenizer: en, columns: []).isEmpty)
        #expect(try compiled("a NOT the") == "EMPTY")
        #expect(try compiled("linux NOT the") == "linux")
        #expect(try compiled("the NOT linux") == "EMPTY")
        #expect(try compiled("linux OR the") == "linux")
        #expect(try compiled("the NEAR linux") == "linux")
        #expect(try compiled("x NEAR/2 the NEAR/5 y") == "NEAR(x /5 y)")
        #expect(try compiled("title:linux body:kernel") == "AND(#0:linux, #1:kernel)")
        #expect(try compiled("TITLE:linux") == "#0:linux")
        #expect(try compiled("title:(body:x)") == "NEVER")
        #expect(try compiled("title:(linux OR body:x) kernel") == "AND(#0:linux, kernel)")
        let e = try #require(throws: QueryError.self) { try compiled("a nope:x") }
        #expect(e.kind == .semantic)
        #expect(e.location?.offset == 2)
        #expect(e.token == "nope:")
    }
}
