import Testing
@testable import Tessera

/// The registry table: names, aliases, arity, kinds (SPEC §6, §6.9).
@Suite("Function registry")
struct FunctionRegistryTests {
    @Test func lookupIsCaseInsensitive() {
        #expect(FunctionRegistry.lookup("lower")?.name == "LOWER")
        #expect(FunctionRegistry.lookup("Array_Length")?.name == "ARRAY_LENGTH")
        #expect(FunctionRegistry.lookup("LOWER") != nil)
    }

    @Test(arguments: ["IS_ARRAY", "IS_ATOM", "IS_BOOLEAN", "IS_NUMBER", "IS_OBJECT", "IS_STRING", "TYPENAME",
                      "TO_ARRAY", "TO_ATOM", "TO_BOOLEAN", "TO_NUMBER", "TO_OBJECT", "TO_STRING"])
    func liteCoreAliasesExist(name: String) throws {
        let alias = try #require(FunctionRegistry.lookup(name))
        let canonical = try #require(FunctionRegistry.lookup(name == "TYPENAME" ? "TYPE" : name.replacingOccurrences(of: "_", with: "")))
        for v: Value in [.missing, .null, true, 0, 1.5, "", "12", [1], ["a": 1], [:]] {
            #expect(alias.evaluate([v], .standard) == canonical.evaluate([v], .standard), "\(name)(\(v))")
        }
    }

    @Test func specialFormsAreNotOrdinaryFunctions() {
        for name in ["MATCH", "match", "Rank", "META"] {
            #expect(FunctionRegistry.lookup(name) == nil)
            #expect(FunctionRegistry.specialFunction(name) != nil)
            if case .special = FunctionRegistry.resolve(name) {} else { Issue.record("\(name) should resolve as special") }
        }
        #expect(FunctionRegistry.specialFunction("LOWER") == nil)
    }

    @Test(arguments: ["PREDICTION", "EUCLIDEAN_DISTANCE", "COSINE_DISTANCE", "APPROX_VECTOR_DISTANCE", "NO_SUCH_FUNCTION", "ISVALUED", "SUBSTR", "NULLF", "IFMISSINGRONULL"])
    func enterpriseAndUnknownFunctionsAreAbsent(name: String) {
        #expect(FunctionRegistry.lookup(name) == nil)
        if case .unknown = FunctionRegistry.resolve(name) {} else { Issue.record("\(name) should be unknown") }
    }

    @Test func aggregatesAreMarked() {
        for name in ["COUNT", "SUM", "AVG", "MIN", "MAX", "ARRAY_AGG"] {
            #expect(FunctionRegistry.isAggregate(name))
            if case .aggregate = FunctionRegistry.resolve(name) {} else { Issue.record("\(name) should be an aggregate") }
        }
        #expect(!FunctionRegistry.isAggregate("ARRAY_COUNT"))
        #expect(FunctionRegistry.lookup("COUNT")?.minArgs == 0)
        #expect(FunctionRegistry.lookup("COUNT")?.maxArgs == 1)
    }

    @Test func arities() throws {
        let expected: [String: (Int, Int)] = [
            "CONCAT": (2, 127), "ARRAY_OF": (0, 127), "IFMISSING": (2, 127), "GREATEST": (2, 127),
            "ROUND": (1, 2), "TRUNC": (1, 2), "ROUND_EVEN": (1, 2), "E": (0, 0), "PI": (0, 0), "ATAN2": (2, 2),
            "LTRIM": (1, 1), "TRIM": (1, 1), "REGEXP_REPLACE": (3, 4), "STR_TO_UTC": (1, 2), "STR_TO_TZ": (2, 3),
            "MILLIS_TO_TZ": (2, 3), "DATE_ADD_STR": (3, 4), "DATE_ADD_MILLIS": (3, 3), "DATE_DIFF_STR": (3, 3),
            "MISSINGIF": (2, 2), "NULLIF": (2, 2), "ARRAY_CONTAINS": (2, 2), "CONTAINS": (2, 2),
        ]
        for (name, (lo, hi)) in expected {
            let f = try #require(FunctionRegistry.lookup(name))
            #expect(f.minArgs == lo && f.maxArgs == hi, "\(name)")
            #expect(f.accepts(argumentCount: lo) && !f.accepts(argumentCount: hi + 1))
        }
    }

    @Test func sqlOnlyFlags() throws {
        for name in ["LOWER", "ROUND", "TRUNC", "CONTAINS", "ARRAY_CONTAINS", "ARRAY_LENGTH", "REGEXP_LIKE", "STR_TO_MILLIS",
                     "STR_TO_UTC", "MILLIS_TO_STR", "MILLIS_TO_UTC", "COUNT", "AVG"] {
            #expect(try #require(FunctionRegistry.lookup(name)).sqlOnly == false, "\(name)")
        }
        for name in ["ROUND_EVEN", "DIV", "IDIV", "ARRAY_AGG", "MILLIS_TO_TZ", "STR_TO_TZ", "DATE_ADD_STR", "IFMISSING",
                     "TYPE", "REGEXP_CONTAINS", "ARRAY_SUM", "CONCAT"] {
            #expect(try #require(FunctionRegistry.lookup(name)).sqlOnly == true, "\(name)")
        }
    }

    @Test func namesAreUpperCaseAndComplete() {
        let names = FunctionRegistry.allNames
        #expect(names.count >= 90)
        for n in names { #expect(n == n.uppercased()) }
        for n in ["ABS", "ACOS", "ASIN", "ATAN", "CEIL", "COS", "DEGREES", "EXP", "FLOOR", "LN", "LOG", "RADIANS", "SIGN",
                  "SIN", "SQRT", "TAN", "POWER", "ARRAY_IFNULL", "ARRAY_MAX", "ARRAY_MIN", "ARRAY_AVG", "ARRAY_COUNT",
                  "IFNULL", "IFMISSINGORNULL", "LEAST", "LENGTH", "UPPER", "RTRIM", "REGEXP_POSITION",
                  "ISARRAY", "ISATOM", "ISBOOLEAN", "ISNUMBER", "ISOBJECT", "ISSTRING", "TOARRAY", "TOATOM",
                  "TOBOOLEAN", "TONUMBER", "TOOBJECT", "TOSTRING", "DATE_DIFF_MILLIS"] {
            #expect(names.contains(n), "\(n)")
        }
    }
}
