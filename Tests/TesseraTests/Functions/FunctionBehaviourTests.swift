import Testing
@testable import Tessera

/// Calls the registry directly: SPEC §6 and §13 (items 9–11) examples, edge cases the
/// fixtures cannot express, and the MISSING/NULL/wrong-type rule for every function.
@Suite("Function behaviour")
struct FunctionBehaviourTests {
    static let ctx = FunctionContext(collation: .binary, timeZone: .utc)

    func call(_ name: String, _ args: Value..., ctx: FunctionContext = Self.ctx) -> Value {
        guard let f = FunctionRegistry.lookup(name) else { Issue.record("no function \(name)"); return .missing }
        return f.evaluate(args, ctx)
    }

    /// Identity of results: same type class and value (numbers by value), MISSING distinct.
    func same(_ a: Value, _ b: Value) -> Bool { a.isMissing == b.isMissing && a == b }

    // MARK: - The default argument rules, for every ordinary function

    /// A wrong-typed argument for each function (first argument).
    static let wrongType: [String: [Value]] = [
        "ARRAY_CONTAINS": ["x", 1], "ARRAY_COUNT": ["x"], "ARRAY_LENGTH": [5], "ARRAY_SUM": [true], "ARRAY_AVG": ["a"],
        "ARRAY_MAX": [1], "ARRAY_MIN": [["a": 1]], "ARRAY_IFNULL": ["a"],
        "ABS": ["1"], "ACOS": ["1"], "ASIN": [true], "ATAN": [[1]], "ATAN2": ["1", 1], "CEIL": ["1"], "COS": ["0"],
        "DEGREES": ["x"], "EXP": ["x"], "FLOOR": ["x"], "LN": ["x"], "LOG": ["x"], "POWER": ["2", 2], "RADIANS": ["x"],
        "ROUND": ["1"], "ROUND_EVEN": ["1"], "SIGN": ["1"], "SIN": ["0"], "SQRT": ["4"], "TAN": ["0"], "TRUNC": ["1"],
        "DIV": ["1", 1], "IDIV": ["1", 1],
        "CONTAINS": [1, "1"], "LENGTH": [1], "LOWER": [1], "UPPER": [1], "LTRIM": [1], "RTRIM": [1], "TRIM": [1],
        "REGEXP_CONTAINS": [1, "1"], "REGEXP_LIKE": [1, "1"], "REGEXP_POSITION": [1, "1"], "REGEXP_REPLACE": [1, "1", "2"],
        "STR_TO_MILLIS": [1], "STR_TO_UTC": [1], "STR_TO_TZ": [1, 0], "MILLIS_TO_STR": ["0"], "MILLIS_TO_UTC": ["0"],
        "MILLIS_TO_TZ": ["0", 0], "DATE_DIFF_STR": [1, 2, "day"], "DATE_DIFF_MILLIS": ["1", "2", "day"],
        "DATE_ADD_STR": [1, 1, "day"], "DATE_ADD_MILLIS": ["1", 1, "day"],
    ]

    static let dateFunctions: Set<String> = ["STR_TO_MILLIS", "STR_TO_UTC", "STR_TO_TZ", "MILLIS_TO_STR", "MILLIS_TO_UTC",
                                             "MILLIS_TO_TZ", "DATE_DIFF_STR", "DATE_DIFF_MILLIS", "DATE_ADD_STR", "DATE_ADD_MILLIS"]

    @Test(arguments: Array(wrongType.keys).sorted())
    func defaultArgumentRules(name: String) throws {
        let f = try #require(FunctionRegistry.lookup(name))
        let wrong = Self.wrongType[name]!
        #expect(f.accepts(argumentCount: wrong.count))
        // Wrong type → NULL.
        #expect(same(f.evaluate(wrong, Self.ctx), .null), "\(name) wrong type")
        // MISSING and NULL in each position.
        for i in wrong.indices {
            var m = wrong, n = wrong
            m[i] = .missing
            n[i] = .null
            let expectMissing: Value = Self.dateFunctions.contains(name) ? .null : .missing
            #expect(same(f.evaluate(m, Self.ctx), expectMissing), "\(name) MISSING at \(i)")
            #expect(same(f.evaluate(n, Self.ctx), .null), "\(name) NULL at \(i)")
        }
    }

    // MARK: - SPEC examples

    @Test func mathExamples() {
        #expect(call("ROUND", 12.5) == 13)
        #expect(call("ROUND", -2.5) == -3)
        #expect(call("ROUND", 1.85, 1) == 1.9)
        #expect(call("ROUND", 1.75) == 2)          // §13 item 10
        #expect(call("ROUND", 1.75, 1) == 1.8)     // §13 item 10
        #expect(call("ROUND_EVEN", 12.5) == 12)
        #expect(call("ROUND_EVEN", 11.5) == 12)
        #expect(call("ROUND_EVEN", 8.83, -1) == 10)
        #expect(call("TRUNC", -7.9) == -7)
        #expect(call("TRUNC", 7.987, 2) == 7.98)
        #expect(call("IDIV", -3.9, 2.1) == -1)
        #expect(same(call("IDIV", 1, 0.99), .null))
        #expect(same(call("DIV", 1, 0), .null))
        #expect(call("DIV", 5, 2) == 2.5)
        #expect(same(call("ACOS", 3), .null))
        #expect(same(call("SQRT", -1), .null))
        #expect(same(call("LN", 0), .null))
        #expect(call("LOG", 1000) == 3)
        #expect(call("EXP", 0) == 1)               // §13 item 9: EXP(x) = e^x
        #expect(call("POWER", 2, 3) == 8)          // §13 item 9: POWER(a, b) = a^b
        #expect(call("POWER", 3, 2) == 9)
        #expect(call("SIGN", -0.5) == -1)
        #expect(call("E") == .double(2.718281828459045))
        #expect(call("PI") == .double(Double.pi))
    }

    @Test func roundingIsDecimalAsWritten() {
        #expect(call("ROUND", 2.675, 2) == 2.68)
        #expect(call("ROUND", 1.005, 2) == 1.01)
        #expect(call("ROUND", 0.0005, 3) == 0.001)
        #expect(call("ROUND", 0.0004, 3) == 0)
        #expect(call("ROUND", 999.5) == 1000)
        #expect(call("ROUND", -0.4) == 0)
        #expect(call("ROUND", 1e300, 2) == 1e300)
        #expect(call("ROUND", 123.456, 400) == 123.456)
        #expect(call("ROUND_EVEN", 0.125, 2) == 0.12)
        #expect(call("ROUND_EVEN", 0.135, 2) == 0.14)
        #expect(call("ROUND_EVEN", 25, -1) == 20)
        #expect(call("ROUND_EVEN", 35, -1) == 40)
        #expect(call("ROUND", -25, -1) == -30)
        #expect(call("TRUNC", -1299, -2) == -1200)
        #expect(call("ROUND", Value.int(.max), -1) == .double(9.22337203685477581e18))
        #expect(call("ROUND", 1.5, 0.9) == 2)    // digits truncated to 0
    }

    /// SPEC §6.4: math results are Doubles whatever the argument's type (as in Couchbase
    /// Lite); IDIV is the integer division. SPEC §5.5: `-0.0` is kept.
    @Test func mathResultsAreDoubles() {
        func isDouble(_ v: Value) -> Bool { if case .double = v { return true } else { return false } }
        for (name, args) in [("ABS", [Value.int(-4)]), ("CEIL", [5]), ("FLOOR", [2.5]), ("ROUND", [2]), ("TRUNC", [7]),
                             ("SIGN", [-3]), ("SQRT", [16]), ("POWER", [2, 10]), ("ROUND", [-25, -1]), ("DIV", [6, 3])] as [(String, [Value])] {
            let f = FunctionRegistry.lookup(name)!
            #expect(isDouble(f.evaluate(args, Self.ctx)), "\(name)\(args) → \(f.evaluate(args, Self.ctx))")
        }
        #expect(call("ABS", Value.int(-9_007_199_254_740_993)) == .double(9_007_199_254_740_992))
        #expect(call("POWER", 3, 39) == .double(Double(Int64(4_052_555_153_018_976_267))))
        #expect(call("IDIV", 7, 2) == .int(3))
        #expect(call("IDIV", Value.int(.min), -1) == .double(9.223372036854775808e18))
        let z = call("ROUND", -0.3)
        #expect(z == .double(0) && z.doubleValue?.sign == .minus)
        #expect(call("TOSTRING", call("ROUND", -0.3)) == "-0.0")
        #expect(call("TOSTRING", call("ABS", -3)) == "3.0")
    }

    @Test func conditionalExamples() {
        #expect(call("IFMISSING", .missing, .missing) == .null)
        #expect(same(call("IFNULL", .null, .missing, 1), .missing))
        #expect(call("IFMISSINGORNULL", .missing, .null, 0) == 0)
        #expect(same(call("MISSINGIF", 3, 3), .missing))
        #expect(call("MISSINGIF", 3, 4) == 3)
        #expect(same(call("NULLIF", 3, 3), .null))
        #expect(call("NULLIF", 3, 4) == 3)
        #expect(same(call("GREATEST", 1, .missing, 3), .missing))
        #expect(call("GREATEST", "a", [1], 9) == [1])
        #expect(call("LEAST", "a", [1], 9) == 9)
    }

    @Test func arrayExamples() {
        #expect(call("ARRAY_CONTAINS", ["James", "Mary"], "James") == true)   // §13 item 3 / 9
        #expect(call("ARRAY_COUNT", [1, nil, 2]) == 2)
        #expect(call("ARRAY_LENGTH", [1, nil, 2]) == 3)
        #expect(call("ARRAY_SUM", [1, 2, 3]) == .int(6))
        #expect(call("ARRAY_SUM", [Value.int(.max), 1]) == .double(9.223372036854775808e18))
        #expect(call("ARRAY_AVG", []) == .null)
        #expect(call("ARRAY_MAX", [-3, -1, -2]) == -1)
        #expect(call("ARRAY_MIN", ["b", 2, nil]) == 2)
        #expect(call("ARRAY_IFNULL", [nil, "x"]) == "x")
        #expect(call("ARRAY_OF", 1, .missing, nil) == [1, nil])
        #expect(call("ARRAY_CONTAINS", [true], 1) == false)
        #expect(call("ARRAY_CONTAINS", [1.0], 1) == true)
    }

    @Test func stringExamples() {
        #expect(call("LENGTH", "naïve 😀") == 7)
        #expect(call("LOWER", "ÀÉÎ İ") == .string("àéî i̇"))
        #expect(call("LOWER", "ΣΑΣ ΣΑΣ") == "σας σας")
        #expect(call("UPPER", "ǆ straße") == "Ǆ STRASSE")
        #expect(call("TRIM", "\u{00A0}\u{2003} x \u{3000}") == "x")
        #expect(call("CONTAINS", "Éclair", "éc") == false)
        #expect(call("CONTAINS", "Éclair", "éc", ctx: FunctionContext(collation: Collation(unicode: true, ignoreCase: true), timeZone: .utc)) == true)
        #expect(call("CONTAINS", "Éclair", "éC", ctx: FunctionContext(collation: Collation(ignoreCase: true), timeZone: .utc)) == false)
        #expect(call("CONTAINS", "ÉClair", "Écl", ctx: FunctionContext(collation: Collation(ignoreCase: true), timeZone: .utc)) == true)
        #expect(call("CONCAT", "a", 1, 2.5, true, nil, [1], ["k": "v"]) == "a12.5truenull[1]{\"k\":\"v\"}")
        #expect(same(call("CONCAT", "a", .missing), .missing))
        #expect(concatenate(99, "x") == "99x")
        #expect(concatenate(123.45, "") == "123.45")
        #expect(same(concatenate(.missing, "x"), .missing))
        #expect(concatenate(.null, "x") == "nullx")
    }

    @Test func typeExamples() {
        #expect(call("TYPE", .missing) == "missing")
        #expect(call("TYPE", .null) == "null")
        #expect(call("TOATOM", [[1]]) == [1])
        #expect(call("TOATOM", ["k": [1, 2]]) == [1, 2])
        #expect(call("TOBOOLEAN", .double(.nan)) == false)
        #expect(call("TOBOOLEAN", [:]) == false)
        #expect(call("TONUMBER", "9223372036854775807") == .int(.max))
        #expect(call("TONUMBER", "9223372036854775808") == .double(9.223372036854775808e18))
        #expect(call("TONUMBER", ".5") == 0.5)
        #expect(call("TONUMBER", "+3") == 3)
        #expect(call("TONUMBER", "1e400") == .null)
        #expect(call("TONUMBER", "NaN") == .null)
        #expect(call("TONUMBER", "0x10") == .null)
        #expect(call("TOSTRING", 4.5) == "4.5")
        #expect(call("TOSTRING", 1e21) == "1e+21")
        #expect(call("TOSTRING", 0.1) == "0.1")
        #expect(call("TOSTRING", 2.0) == "2.0")
        #expect(call("TOSTRING", 1426400835383.0) == "1426400835383.0")
        #expect(call("TOSTRING", 99) == "99")
        #expect(call("TOOBJECT", [1]) == [:])
        #expect(call("TOARRAY", ["a": 1]) == [["a": 1]])
    }

    // MARK: - Truthiness, LIKE

    /// SPEC §5.1, through the one function the engine runs (`Semantics.truth`).
    @Test func truthiness() {
        func truth(_ v: Value) -> Value { Semantics.truth(v).value }
        #expect(truth(true) == true)
        #expect(truth(0) == false)
        #expect(truth(-2) == true)
        #expect(truth(.double(.nan)) == false)
        #expect(truth(0.0) == false)
        // The numeric prefix starts at the first character: ' 3' has none, so it is FALSE.
        for (s, t) in [("1", true), ("2x", true), ("abc", false), ("", false), ("0", false), ("0.0", false),
                       (" 3", false), ("-1", true), (".5", true), ("1e3", true), ("0e5", false), ("+", false), (".", false), ("0x1", false)] {
            #expect(truth(.string(s)) == .bool(t), "\(s)")
        }
        #expect(truth(.null) == false)
        #expect(truth([1]) == false)
        #expect(truth(["a": 1]) == false)
        #expect(truth(.missing).isMissing)
    }

    @Test func like() {
        let bin = Collation.binary
        #expect(likeMatch("abc", pattern: "a%", collation: bin))
        #expect(likeMatch("abc", pattern: "%", collation: bin))
        #expect(likeMatch("", pattern: "%", collation: bin))
        #expect(!likeMatch("", pattern: "_", collation: bin))
        #expect(likeMatch("abc", pattern: "_b_", collation: bin))
        #expect(!likeMatch("Abc", pattern: "a%", collation: bin))
        #expect(likeMatch("Abc", pattern: "a%", collation: Collation(ignoreCase: true)))
        #expect(likeMatch("a%c", pattern: "a\\%c", collation: bin))
        #expect(!likeMatch("abc", pattern: "a\\%c", collation: bin))
        #expect(likeMatch("a\\", pattern: "a\\", collation: bin))
        #expect(likeMatch("a\\b", pattern: "a\\\\b", collation: bin))
        #expect(likeMatch("mississippi", pattern: "%iss%ppi", collation: bin))
        #expect(!likeMatch("mississippi", pattern: "%iss%ppx", collation: bin))
        #expect(likeMatch("😀x", pattern: "_x", collation: bin))
        // Unicode: `_` is one grapheme, literals compare with the collator.
        let uni = Collation(unicode: true, ignoreCase: true, ignoreAccents: true)
        #expect(likeMatch("e\u{301}clair", pattern: "_clair", collation: uni))
        #expect(likeMatch("ÉCLAIR", pattern: "ecl%", collation: uni))
        #expect(likeMatch(1.5, pattern: "1._", collation: bin) == true)
        #expect(likeMatch(.null, pattern: "a", collation: bin) == .null)
        #expect(likeMatch(.missing, pattern: "a", collation: bin).isMissing)
        #expect(likeMatch(["a"], pattern: "a", collation: bin) == false)
        #expect(likeMatch("a", pattern: 1, collation: bin) == false)
    }

    @Test func likeWorstCaseStaysFast() {
        let text = String(repeating: "a", count: 2000)
        let pattern = String(repeating: "%a", count: 30) + "b"
        let clock = ContinuousClock()
        let elapsed = clock.measure { #expect(!likeMatch(text, pattern: pattern, collation: .binary)) }
        #expect(elapsed < .seconds(2))
    }

    // MARK: - Regular expressions

    @Test func regularExpressions() {
        #expect(call("REGEXP_LIKE", "abc", "[a-c]+") == true)
        #expect(call("REGEXP_LIKE", "abcd", "[a-c]+") == false)
        #expect(call("REGEXP_CONTAINS", "abcd", "[a-c]+") == true)
        #expect(call("REGEXP_CONTAINS", "ab\ncd", "^cd") == false)
        #expect(call("REGEXP_POSITION", "😀😀x", "x") == 2)
        #expect(call("REGEXP_POSITION", "e\u{301}x", "x") == 2)
        #expect(call("REGEXP_REPLACE", "2024-01-05", "(\\d+)-(\\d+)-(\\d+)", "$3/$2/$1") == "05/01/2024")
        #expect(call("REGEXP_REPLACE", "abc", "b", "[$`|$']") == "a[a|c]c")
        #expect(call("REGEXP_REPLACE", "John Smith", "(?<first>\\w+) (?<last>\\w+)", "$<last> $<first>") == "Smith John")
        #expect(call("REGEXP_REPLACE", "abc", "(b)", "$2$1") == "a$2bc")
        #expect(call("REGEXP_REPLACE", "abc", "(b)", "$01") == "abc")
        #expect(call("REGEXP_REPLACE", "aaa", "a*?", "-") == "-a-a-a-")
        #expect(call("REGEXP_REPLACE", "😀a😀", "a", "b") == "😀b😀")
        #expect(call("REGEXP_REPLACE", "", "x*", "y") == "y")
        #expect(call("REGEXP_REPLACE", "a.b.c", "\\.", "", 1) == "ab.c")
        #expect(call("REGEXP_LIKE", "x", "[") == .null)
        #expect(call("REGEXP_LIKE", "", "") == true)
        // ECMAScript classes are ASCII: \d is [0-9], \w is [A-Za-z0-9_].
        #expect(call("REGEXP_LIKE", "123", "\\d+") == true)
        #expect(call("REGEXP_LIKE", "١٢٣", "\\d+") == false)
        #expect(call("REGEXP_LIKE", "é", "\\w") == false)
        #expect(call("REGEXP_LIKE", "é", "\\W") == true)
        #expect(call("REGEXP_LIKE", "1.5", "[\\d.]+") == true)
        #expect(call("REGEXP_LIKE", "x", "[^\\d]") == true)
        #expect(call("REGEXP_LIKE", "a\\d", "a\\\\d") == true)   // an escaped backslash stays literal
        #expect(call("REGEXP_LIKE", "a b", "a\\sb") == true)
        #expect(call("REGEXP_CONTAINS", "say hello", "\\bhello\\b") == true)
        #expect(call("REGEXP_LIKE", "aaa", "a{2,}?a") == true)
        #expect(call("REGEXP_LIKE", "abab", "(ab)\\1") == true)
        #expect(call("REGEXP_CONTAINS", "price: 10 USD", "\\d+(?= USD)") == true)
    }

    @Test func regexCacheIsThreadSafe() async {
        await withTaskGroup(of: Bool.self) { group in
            for t in 0..<8 {
                group.addTask {
                    var ok = true
                    for i in 0..<300 {
                        let pattern = "(\\d+)-\(i % 70)"
                        let r = FunctionRegistry.lookup("REGEXP_REPLACE")!.evaluate([.string("x\(t)-\(i % 70) 12-\(i % 70)"), .string(pattern), "<$1>"], .standard)
                        ok = ok && r == .string("x<\(t)> <12>")
                    }
                    return ok
                }
            }
            for await ok in group { #expect(ok) }
        }
    }

    // MARK: - Aggregates

    @Test func aggregateStates() {
        func run(_ f: String, _ values: [Value], star: Bool = false) -> Value {
            var s = AggregateState(function: f, countStar: star)
            for v in values { s.add(v) }
            return s.result()
        }
        let rows: [Value] = [1, 2.5, .null, "x", .missing, true, [1]]
        #expect(run("COUNT", rows, star: true) == 7)
        #expect(run("count", rows) == 6)
        #expect(run("SUM", rows) == 3.5)
        #expect(run("AVG", rows) == 1.75)
        #expect(run("MIN", rows) == true)
        #expect(run("MAX", rows) == [1])
        #expect(run("ARRAY_AGG", rows) == [1, 2.5, nil, "x", true, [1]])
        #expect(run("SUM", []) == .null)
        #expect(run("AVG", ["a"]) == .null)
        #expect(run("MIN", [.null, .missing]) == .null)
        #expect(run("COUNT", []) == 0)
        #expect(run("ARRAY_AGG", []) == [])
        #expect(run("SUM", [1, 2, 3]) == .int(6))
        #expect(run("SUM", [Value.int(.max), 1, -1]) == .double(9.223372036854775808e18))
        // MIN/MAX honour a collation.
        var s = AggregateState(function: "MIN", collation: Collation(unicode: true))
        for v: Value in ["b", "B", "a"] { s.add(v) }
        #expect(s.result() == "a")
        var t = AggregateState(function: "MIN")
        for v: Value in ["b", "B", "a"] { t.add(v) }
        #expect(t.result() == "B")
        // Registry form folds its arguments.
        #expect(call("MAX", 3) == 3)
        #expect(call("COUNT") == 0)
    }
}
