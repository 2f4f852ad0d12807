#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The built-in function library of SPEC §6: one table of every function the analyzer may
// resolve, with arity, kind and the closure the executor calls.
//
// Argument rules that hold unless a function says otherwise (SPEC §6): a MISSING argument
// gives MISSING, else a NULL argument gives NULL, else an argument of the wrong type gives NULL.
// Date functions (§6.8) give NULL for MISSING as well. Wrong arity and unknown names are
// compile errors, which the analyzer raises from `minArgs`/`maxArgs` and a nil lookup.

/// The time zone that date functions use for strings without an offset and for
/// `MILLIS_TO_STR` (SPEC §6.8: "device local time").
enum QueryTimeZone: Sendable, Hashable {
    /// The process's local zone, read through the C library on every call so that a changed
    /// `TZ` environment variable (after `tzset()`) takes effect.
    case local
    /// A fixed offset from UTC in minutes (east positive), e.g. `-300` for UTC−5.
    case fixed(offsetMinutes: Int)

    /// UTC.
    static let utc = QueryTimeZone.fixed(offsetMinutes: 0)
}

/// What a function call may need from the query around it.
struct FunctionContext: Sendable {
    /// The collation in force at the call (a surrounding `COLLATE`); `CONTAINS` honours it.
    var collation: Collation
    /// The zone date functions use when a string carries no offset.
    var timeZone: QueryTimeZone

    /// Creates a context.
    /// - Parameters:
    ///   - collation: the active collation (default binary).
    ///   - timeZone: the zone for zone-less dates (default: the process's local zone).
    init(collation: Collation = .binary, timeZone: QueryTimeZone = .local) {
        self.collation = collation
        self.timeZone = timeZone
    }

    /// Binary collation, local time zone.
    static let standard = FunctionContext()
}

/// One built-in function: its canonical upper-case name, arity and evaluator.
///
/// Aggregates (`isAggregate`) are normally run through ``AggregateState`` row by row; their
/// `evaluate` folds its arguments as if each were one row (`MAX(1, 3, 2)` → 3), which is what
/// a constant-folding pass may use.
struct FunctionDefinition: Sendable {
    /// The canonical name, upper case (`"ARRAY_LENGTH"`; an alias keeps its own name).
    let name: String
    /// Fewest arguments accepted.
    let minArgs: Int
    /// Most arguments accepted (at most ``FunctionRegistry/maxArguments``).
    let maxArgs: Int
    /// True for COUNT, SUM, AVG, MIN, MAX, ARRAY_AGG.
    let isAggregate: Bool
    /// True when CBL's QueryBuilder has no such function ("SQL++ only" in SPEC §6).
    let sqlOnly: Bool
    /// Computes the result from evaluated arguments (never throws: bad input gives NULL).
    let evaluate: @Sendable (_ args: [Value], _ ctx: FunctionContext) -> Value

    /// Creates a definition.
    init(
        name: String, minArgs: Int, maxArgs: Int, isAggregate: Bool = false, sqlOnly: Bool = true,
        evaluate: @escaping @Sendable (_ args: [Value], _ ctx: FunctionContext) -> Value
    ) {
        self.name = name
        self.minArgs = minArgs
        self.maxArgs = maxArgs
        self.isAggregate = isAggregate
        self.sqlOnly = sqlOnly
        self.evaluate = evaluate
    }

    /// True when `count` arguments are acceptable.
    @inlinable func accepts(argumentCount count: Int) -> Bool { count >= minArgs && count <= maxArgs }
}

/// Function-call syntax that is not an ordinary function: the executor and analyzer handle
/// these themselves (SPEC §6.9, §10.2, §1.2).
enum SpecialFunction: String, Sendable, Hashable, CaseIterable {
    /// `MATCH(index, query)`: full-text predicate.
    case match = "MATCH"
    /// `RANK(index)`: full-text relevance.
    case rank = "RANK"
    /// `META([alias])`: document metadata.
    case meta = "META"
}

/// How a name written as a call resolves.
enum FunctionResolution: Sendable {
    /// A scalar function of the registry.
    case scalar(FunctionDefinition)
    /// An aggregate function of the registry.
    case aggregate(FunctionDefinition)
    /// MATCH, RANK or META.
    case special(SpecialFunction)
    /// Not a function (including the enterprise-only functions of SPEC §6.9).
    case unknown
}

/// The table of built-in functions.
///
/// ```swift
/// let f = FunctionRegistry.lookup("lower")!          // case-insensitive
/// f.evaluate(["ÉCOLE"], .standard)                  // "école"
/// ```
enum FunctionRegistry {
    /// The most arguments any call may have (SPEC §3).
    static let maxArguments = 127

    /// The definition of an ordinary (scalar or aggregate) function, case-insensitively;
    /// nil for unknown names and for MATCH, RANK and META (see ``specialFunction(_:)``).
    static func lookup(_ name: String) -> FunctionDefinition? {
        table[upperASCII(name)]
    }

    /// MATCH, RANK or META when `name` is one of them (case-insensitive).
    static func specialFunction(_ name: String) -> SpecialFunction? {
        SpecialFunction(rawValue: upperASCII(name))
    }

    /// Resolves a called name to a scalar, aggregate, special form or nothing.
    static func resolve(_ name: String) -> FunctionResolution {
        if let s = specialFunction(name) { return .special(s) }
        guard let def = lookup(name) else { return .unknown }
        return def.isAggregate ? .aggregate(def) : .scalar(def)
    }

    /// True for the aggregate functions (COUNT, SUM, AVG, MIN, MAX, ARRAY_AGG).
    static func isAggregate(_ name: String) -> Bool { lookup(name)?.isAggregate ?? false }

    /// Every registered name (aliases included), sorted.
    static var allNames: [String] { table.keys.sorted() }

    // MARK: - The table

    private static let table: [String: FunctionDefinition] = {
        var t: [String: FunctionDefinition] = [:]
        for d in definitions {
            precondition(t[d.name] == nil, "duplicate function \(d.name)")
            precondition(d.maxArgs <= maxArguments && d.minArgs <= d.maxArgs)
            t[d.name] = d
        }
        return t
    }()

    private static let many = maxArguments

    /// Every function. `qb` marks those CBL's QueryBuilder also offers (not SQL++ only).
    private static let definitions: [FunctionDefinition] = {
        typealias F = BuiltinFunctions
        func fn(_ name: String, _ minArgs: Int, _ maxArgs: Int, qb: Bool = false,
                _ body: @escaping @Sendable ([Value], FunctionContext) -> Value) -> FunctionDefinition {
            FunctionDefinition(name: name, minArgs: minArgs, maxArgs: maxArgs, sqlOnly: !qb, evaluate: body)
        }
        func agg(_ name: String, _ minArgs: Int, qb: Bool) -> FunctionDefinition {
            FunctionDefinition(name: name, minArgs: minArgs, maxArgs: 1, isAggregate: true, sqlOnly: !qb) { args, _ in
                var s = AggregateState(function: name, countStar: args.isEmpty)
                if args.isEmpty { return s.result() }
                for a in args { s.add(a) }
                return s.result()
            }
        }
        func unary(_ name: String, qb: Bool = true, _ op: @escaping @Sendable (Double) -> Double) -> FunctionDefinition {
            fn(name, 1, 1, qb: qb) { a, _ in F.unaryMath(a[0], op) }
        }
        var d: [FunctionDefinition] = []

        // §6.1 Aggregates
        d += [agg("COUNT", 0, qb: true), agg("SUM", 1, qb: true), agg("AVG", 1, qb: true),
              agg("MIN", 1, qb: true), agg("MAX", 1, qb: true), agg("ARRAY_AGG", 1, qb: false)]

        // §6.2 Arrays
        d += [
            fn("ARRAY_CONTAINS", 2, 2, qb: true) { a, _ in F.arrayContains(a[0], a[1]) },
            fn("ARRAY_COUNT", 1, 1) { a, _ in F.arrayCount(a[0]) },
            fn("ARRAY_LENGTH", 1, 1, qb: true) { a, _ in F.arrayLength(a[0]) },
            fn("ARRAY_SUM", 1, 1) { a, _ in F.arraySum(a[0]) },
            fn("ARRAY_AVG", 1, 1) { a, _ in F.arrayAvg(a[0]) },
            fn("ARRAY_MAX", 1, 1) { a, _ in F.arrayMinMax(a[0], max: true) },
            fn("ARRAY_MIN", 1, 1) { a, _ in F.arrayMinMax(a[0], max: false) },
            fn("ARRAY_IFNULL", 1, 1) { a, _ in F.arrayIfNull(a[0]) },
            fn("ARRAY_OF", 0, many) { a, _ in F.arrayOf(a) },
        ]

        // §6.3 Conditionals
        d += [
            fn("IFMISSING", 2, many) { a, _ in F.ifMissing(a) },
            fn("IFNULL", 2, many) { a, _ in F.ifNull(a) },
            fn("IFMISSINGORNULL", 2, many) { a, _ in F.ifMissingOrNull(a) },
            fn("MISSINGIF", 2, 2) { a, _ in F.missingIf(a[0], a[1]) },
            fn("NULLIF", 2, 2) { a, _ in F.nullIf(a[0], a[1]) },
            fn("GREATEST", 2, many) { a, _ in F.greatestOrLeast(a, greatest: true) },
            fn("LEAST", 2, many) { a, _ in F.greatestOrLeast(a, greatest: false) },
        ]

        // §6.4 Math
        d += [
            fn("ABS", 1, 1, qb: true) { a, _ in F.abs(a[0]) },
            unary("ACOS") { acos($0) },
            unary("ASIN") { asin($0) },
            unary("ATAN") { atan($0) },
            fn("ATAN2", 2, 2, qb: true) { a, _ in F.binaryMath(a[0], a[1]) { atan2($0, $1) } },
            fn("CEIL", 1, 1, qb: true) { a, _ in F.integralRounding(a[0], .up) },
            unary("COS") { cos($0) },
            unary("DEGREES") { $0 * 180 / Double.pi },
            fn("E", 0, 0, qb: true) { _, _ in .double(M_E) },
            unary("EXP") { exp($0) },
            fn("FLOOR", 1, 1, qb: true) { a, _ in F.integralRounding(a[0], .down) },
            unary("LN") { log($0) },
            unary("LOG") { log10($0) },
            fn("PI", 0, 0, qb: true) { _, _ in .double(Double.pi) },
            fn("POWER", 2, 2, qb: true) { a, _ in F.power(a[0], a[1]) },
            unary("RADIANS") { $0 * Double.pi / 180 },
            fn("ROUND", 1, 2, qb: true) { a, _ in F.round(a, mode: .halfAwayFromZero) },
            fn("ROUND_EVEN", 1, 2) { a, _ in F.round(a, mode: .halfEven) },
            fn("SIGN", 1, 1, qb: true) { a, _ in F.sign(a[0]) },
            unary("SIN") { sin($0) },
            unary("SQRT") { $0.squareRoot() },
            unary("TAN") { tan($0) },
            fn("TRUNC", 1, 2, qb: true) { a, _ in F.round(a, mode: .towardZero) },
            fn("DIV", 2, 2) { a, _ in F.div(a[0], a[1]) },
            fn("IDIV", 2, 2) { a, _ in F.idiv(a[0], a[1]) },
        ]

        // §6.5 Strings
        d += [
            fn("CONTAINS", 2, 2, qb: true) { a, ctx in F.contains(a[0], a[1], collation: ctx.collation) },
            fn("LENGTH", 1, 1, qb: true) { a, _ in F.length(a[0]) },
            fn("LOWER", 1, 1, qb: true) { a, _ in F.lower(a[0]) },
            fn("UPPER", 1, 1, qb: true) { a, _ in F.upper(a[0]) },
            fn("LTRIM", 1, 1, qb: true) { a, _ in F.trim(a[0], leading: true, trailing: false) },
            fn("RTRIM", 1, 1, qb: true) { a, _ in F.trim(a[0], leading: false, trailing: true) },
            fn("TRIM", 1, 1, qb: true) { a, _ in F.trim(a[0], leading: true, trailing: true) },
            fn("CONCAT", 2, many) { a, _ in concatenate(a) },
        ]

        // §6.6 Regular expressions
        d += [
            fn("REGEXP_CONTAINS", 2, 2) { a, _ in F.regexpContains(a[0], a[1]) },
            fn("REGEXP_LIKE", 2, 2, qb: true) { a, _ in F.regexpLike(a[0], a[1]) },
            fn("REGEXP_POSITION", 2, 2) { a, _ in F.regexpPosition(a[0], a[1]) },
            fn("REGEXP_REPLACE", 3, 4) { a, _ in F.regexpReplace(a) },
        ]

        // §6.7 Types, with the LiteCore aliases
        let typeFunctions: [(String, String?, @Sendable (Value) -> Value)] = [
            ("ISARRAY", "IS_ARRAY", { F.typeTest($0) { $0.arrayValue != nil } }),
            ("ISATOM", "IS_ATOM", { F.typeTest($0) { v in switch v { case .bool, .int, .double, .string: true; default: false } } }),
            ("ISBOOLEAN", "IS_BOOLEAN", { F.typeTest($0) { $0.boolValue != nil } }),
            ("ISNUMBER", "IS_NUMBER", { F.typeTest($0) { $0.isNumber } }),
            ("ISOBJECT", "IS_OBJECT", { F.typeTest($0) { $0.objectValue != nil } }),
            ("ISSTRING", "IS_STRING", { F.typeTest($0) { $0.stringValue != nil } }),
            ("TYPE", "TYPENAME", { .string($0.typeName) }),
            ("TOARRAY", "TO_ARRAY", { F.toArray($0) }),
            ("TOATOM", "TO_ATOM", { F.toAtom($0) }),
            ("TOBOOLEAN", "TO_BOOLEAN", { F.toBoolean($0) }),
            ("TONUMBER", "TO_NUMBER", { F.toNumber($0) }),
            ("TOOBJECT", "TO_OBJECT", { F.toObject($0) }),
            ("TOSTRING", "TO_STRING", { F.toStringValue($0) }),
        ]
        for (name, alias, body) in typeFunctions {
            d.append(fn(name, 1, 1) { a, _ in body(a[0]) })
            if let alias { d.append(fn(alias, 1, 1) { a, _ in body(a[0]) }) }
        }

        // §6.8 Dates
        d += [
            fn("STR_TO_MILLIS", 1, 1, qb: true) { a, ctx in F.strToMillis(a[0], ctx) },
            fn("STR_TO_UTC", 1, 2, qb: true) { a, ctx in F.strToZone(a[0], nil, optionalArgument(a, 1), ctx, utc: true) },
            fn("STR_TO_TZ", 2, 3) { a, ctx in F.strToZone(a[0], a[1], optionalArgument(a, 2), ctx, utc: false) },
            fn("MILLIS_TO_STR", 1, 2, qb: true) { a, ctx in F.millisToString(a[0], nil, optionalArgument(a, 1), ctx, mode: .local) },
            fn("MILLIS_TO_UTC", 1, 2, qb: true) { a, ctx in F.millisToString(a[0], nil, optionalArgument(a, 1), ctx, mode: .utc) },
            fn("MILLIS_TO_TZ", 2, 3) { a, ctx in F.millisToString(a[0], a[1], optionalArgument(a, 2), ctx, mode: .offset) },
            fn("DATE_DIFF_STR", 3, 3) { a, _ in F.dateDiffStr(a[0], a[1], a[2]) },
            fn("DATE_DIFF_MILLIS", 3, 3) { a, _ in F.dateDiffMillis(a[0], a[1], a[2]) },
            fn("DATE_ADD_STR", 3, 4) { a, _ in F.dateAddStr(a[0], a[1], a[2], optionalArgument(a, 3)) },
            fn("DATE_ADD_MILLIS", 3, 3) { a, _ in F.dateAddMillis(a[0], a[1], a[2]) },
        ]
        return d
    }()

    /// ASCII upper-casing (function names are ASCII; anything else simply fails to match).
    static func upperASCII(_ s: String) -> String {
        var bytes = Array(s.utf8)
        for i in bytes.indices where bytes[i] >= 97 && bytes[i] <= 122 { bytes[i] -= 32 }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Namespace of the built-in function implementations (one extension file per SPEC section).
enum BuiltinFunctions {}
