// QueryBuilder expressions with Couchbase Lite's Swift names (SPEC §11). Every builder value
// wraps an `Expr`, the same AST the SQL++ parser produces, so a builder query equals its
// SQL++ twin node for node.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Anything that is a query expression: builder values and their results.
public protocol ExpressionProtocol: Sendable {}

/// A built expression.
public struct QueryExpression: ExpressionProtocol, Hashable {
    /// The expression's AST.
    let expr: Expr
    /// Wraps an AST node.
    init(_ expr: Expr) { self.expr = expr }
}

// MARK: - Operators

extension ExpressionProtocol {
    private func binary(_ op: BinaryOperator, _ other: ExpressionProtocol) -> QueryExpression {
        QueryExpression(.binary(op, expr, other.expr))
    }

    /// `self + e`.
    public func add(_ expression: ExpressionProtocol) -> QueryExpression { binary(.add, expression) }
    /// `self - e`.
    public func subtract(_ expression: ExpressionProtocol) -> QueryExpression { binary(.subtract, expression) }
    /// `self * e`.
    public func multiply(_ expression: ExpressionProtocol) -> QueryExpression { binary(.multiply, expression) }
    /// `self / e`.
    public func divide(_ expression: ExpressionProtocol) -> QueryExpression { binary(.divide, expression) }
    /// `self % e`.
    public func modulo(_ expression: ExpressionProtocol) -> QueryExpression { binary(.modulo, expression) }
    /// `self || e` (Tessera addition: string concatenation).
    public func concat(_ expression: ExpressionProtocol) -> QueryExpression { binary(.concat, expression) }

    /// `self = e`.
    public func equalTo(_ expression: ExpressionProtocol) -> QueryExpression { binary(.equal, expression) }
    /// `self != e`.
    public func notEqualTo(_ expression: ExpressionProtocol) -> QueryExpression { binary(.notEqual, expression) }
    /// `self < e`.
    public func lessThan(_ expression: ExpressionProtocol) -> QueryExpression { binary(.less, expression) }
    /// `self <= e`.
    public func lessThanOrEqualTo(_ expression: ExpressionProtocol) -> QueryExpression { binary(.lessOrEqual, expression) }
    /// `self > e`.
    public func greaterThan(_ expression: ExpressionProtocol) -> QueryExpression { binary(.greater, expression) }
    /// `self >= e`.
    public func greaterThanOrEqualTo(_ expression: ExpressionProtocol) -> QueryExpression {
        binary(.greaterOrEqual, expression)
    }

    /// `self IS e`: MISSING-aware equality. `is(Expression.value(nil))` is `self IS NULL`
    /// and an `Expression.value(Value.missing)` operand gives `self IS MISSING`, as in CBL.
    public func `is`(_ expression: ExpressionProtocol) -> QueryExpression {
        switch expression.expr {
        case .literal(.null): QueryExpression(.test(expr, .null, negated: false))
        case .literal(.missing): QueryExpression(.test(expr, .missing, negated: false))
        default: binary(.is, expression)
        }
    }

    /// `self IS NOT e` (`IS NOT NULL` / `IS NOT MISSING` for those literals).
    public func isNot(_ expression: ExpressionProtocol) -> QueryExpression {
        switch expression.expr {
        case .literal(.null): QueryExpression(.test(expr, .null, negated: true))
        case .literal(.missing): QueryExpression(.test(expr, .missing, negated: true))
        default: binary(.isNot, expression)
        }
    }

    /// `self IS VALUED` (neither NULL nor MISSING).
    public func isValued() -> QueryExpression { QueryExpression(.test(expr, .valued, negated: false)) }
    /// `self IS NOT VALUED`.
    public func isNotValued() -> QueryExpression { QueryExpression(.test(expr, .valued, negated: true)) }

    /// `self AND e`.
    public func and(_ expression: ExpressionProtocol) -> QueryExpression { binary(.and, expression) }
    /// `self OR e`.
    public func or(_ expression: ExpressionProtocol) -> QueryExpression { binary(.or, expression) }

    /// `self BETWEEN e1 AND e2`.
    public func between(_ expression1: ExpressionProtocol, and expression2: ExpressionProtocol) -> QueryExpression {
        QueryExpression(.between(expr, expression1.expr, expression2.expr, negated: false))
    }

    /// `self IN (e, …)`.
    public func `in`(_ expressions: [ExpressionProtocol]) -> QueryExpression {
        QueryExpression(.inList(expr, expressions.map(\.expr), negated: false))
    }

    /// `self LIKE pattern` (case-sensitive; `%`, `_`, `\` escapes).
    public func like(_ expression: ExpressionProtocol) -> QueryExpression {
        QueryExpression(.like(expr, expression.expr, negated: false))
    }

    /// `REGEXP_LIKE(self, pattern)`.
    public func regex(_ expression: ExpressionProtocol) -> QueryExpression {
        QueryExpression(.call("REGEXP_LIKE", [expr, expression.expr], .none))
    }

    /// `self COLLATE …`.
    public func collate(_ collation: CollationProtocol) -> QueryExpression {
        QueryExpression(.collate(expr, collation.collationKeywords))
    }
}

// MARK: - Factories

/// Factories of expressions: properties, literals, parameters, NOT.
///
/// ```swift
/// Expression.property("type").equalTo(Expression.string("hotel"))
///     .and(Expression.property("city").in([Expression.string("Paris"), Expression.string("Nice")]))
/// ```
public enum Expression {
    /// A property path; dots separate components, `[n]` indexes arrays, and a backslash
    /// makes the next character literal (`"first\\.name"` is the one key `first.name`).
    public static func property(_ property: String) -> PropertyExpression {
        PropertyExpression(components: parsePropertyPath(property))
    }

    /// The whole document (`SELECT *` as a result; `.from("x")` for one source).
    public static func all() -> PropertyExpression {
        PropertyExpression(components: [], isAll: true)
    }

    /// A literal from a Swift value: nil (NULL), `Value`, String, Bool, integers, Double,
    /// Float, `Date` (ISO-8601 string), arrays and dictionaries of those, or expressions.
    ///
    /// - Precondition: `value` is one of the supported types.
    public static func value(_ value: Any?) -> QueryExpression { QueryExpression(builderExpr(value)) }
    /// A string literal (nil is NULL).
    public static func string(_ value: String?) -> QueryExpression {
        QueryExpression(.literal(value.map { .string($0) } ?? .null))
    }
    /// An integer literal.
    public static func int(_ value: Int) -> QueryExpression { QueryExpression(.literal(.int(Int64(value)))) }
    /// A 64-bit integer literal.
    public static func int64(_ value: Int64) -> QueryExpression { QueryExpression(.literal(.int(value))) }
    /// A floating-point literal.
    public static func double(_ value: Double) -> QueryExpression { QueryExpression(.literal(.double(value))) }
    /// A floating-point literal.
    public static func float(_ value: Float) -> QueryExpression { QueryExpression(.literal(.double(Double(value)))) }
    /// A number literal (nil is NULL): integers stay integers.
    public static func number(_ value: (any Numeric & Sendable)?) -> QueryExpression {
        guard let value else { return QueryExpression(.literal(.null)) }
        return QueryExpression(builderExpr(value))
    }
    /// A boolean literal.
    public static func boolean(_ value: Bool) -> QueryExpression { QueryExpression(.literal(.bool(value))) }
    /// A date as its ISO-8601 UTC string with milliseconds (`2018-10-23T18:33:01.123Z`); nil is NULL.
    public static func date(_ value: Date?) -> QueryExpression {
        QueryExpression(.literal(value.map { .string(iso8601($0)) } ?? .null))
    }
    /// An array literal (nil is NULL).
    public static func array(_ value: [Any]?) -> QueryExpression {
        guard let value else { return QueryExpression(.literal(.null)) }
        return QueryExpression(builderExpr(value))
    }
    /// An object literal (nil is NULL); members are ordered by key.
    public static func dictionary(_ value: [String: Any]?) -> QueryExpression {
        guard let value else { return QueryExpression(.literal(.null)) }
        return QueryExpression(builderExpr(value))
    }
    /// `$name`: bound later by name without `$`.
    public static func parameter(_ name: String) -> QueryExpression { QueryExpression(.parameter(name, .none)) }
    /// `NOT e`.
    public static func not(_ expression: ExpressionProtocol) -> QueryExpression {
        QueryExpression(.unary(.not, expression.expr))
    }
    /// `NOT e` (CBL's other name for `not`).
    public static func negated(_ expression: ExpressionProtocol) -> QueryExpression { not(expression) }
    /// A full-text index named in `FullTextFunction.match` / `rank`.
    public static func fullTextIndex(_ name: String) -> FullTextIndexExpression {
        FullTextIndexExpression(reference: IndexReference(name: name))
    }
}

/// A property path; `from(alias)` qualifies it with a source alias.
public struct PropertyExpression: ExpressionProtocol, Hashable {
    /// The path without the alias.
    let components: [PathComponent]
    /// The source alias, if qualified.
    let alias: String?
    /// True for `Expression.all()`.
    let isAll: Bool

    init(components: [PathComponent], alias: String? = nil, isAll: Bool = false) {
        self.components = components
        self.alias = alias
        self.isAll = isAll
    }

    /// The path as an AST property. `Expression.all()` is the alias alone, or an empty path
    /// (the whole document of the single source) without one.
    var expr: Expr {
        .property((alias.map { [PathComponent.key($0)] } ?? []) + components, .none)
    }

    /// The same path relative to the source `alias` (`alias.path`).
    public func from(_ alias: String?) -> PropertyExpression {
        PropertyExpression(components: components, alias: alias, isAll: isAll)
    }
}

/// A full-text index reference: `idx` or, with `from`, `alias.idx`.
public struct FullTextIndexExpression: Sendable, Hashable {
    /// The reference.
    let reference: IndexReference
    /// The index of the source `alias`.
    public func from(_ alias: String) -> FullTextIndexExpression {
        FullTextIndexExpression(reference: IndexReference(alias: alias, name: reference.name))
    }
}

// MARK: - Conversions

/// Splits a QueryBuilder property string into path components: `.` separates keys, `[n]`
/// indexes, `\` makes the next character literal.
func parsePropertyPath(_ path: String) -> [PathComponent] {
    var components: [PathComponent] = []
    var key = ""
    var pendingKey = false  // a key has started (possibly empty after a dot)
    var chars = Array(path)
    var i = 0
    func flush() {
        if pendingKey || !key.isEmpty { components.append(.key(key)) }
        key = ""
        pendingKey = false
    }
    while i < chars.count {
        let c = chars[i]
        if c == "\\", i + 1 < chars.count {
            key.append(chars[i + 1])
            pendingKey = true
            i += 2
        } else if c == "." {
            flush()
            pendingKey = true
            i += 1
        } else if c == "[", let close = chars[(i + 1)...].firstIndex(of: "]"),
                  let n = Int(String(chars[(i + 1)..<close])) {
            flush()
            components.append(.index(n))
            i = close + 1
        } else {
            key.append(c)
            pendingKey = true
            i += 1
        }
    }
    flush()
    chars.removeAll()
    return components
}

/// The AST of a Swift value given to `Expression.value` and friends.
func builderExpr(_ value: Any?) -> Expr {
    guard let value else { return .literal(.null) }
    switch value {
    case let e as ExpressionProtocol: return e.expr
    case let e as Expr: return e
    case let v as Value: return valueExpr(v)
    case let d as Date: return .literal(.string(iso8601(d)))
    case let b as Bool: return .literal(.bool(b))
    case let s as String: return .literal(.string(s))
    case let s as Substring: return .literal(.string(String(s)))
    case let i as Int: return .literal(.int(Int64(i)))
    case let i as Int64: return .literal(.int(i))
    case let i as Int32: return .literal(.int(Int64(i)))
    case let i as Int16: return .literal(.int(Int64(i)))
    case let i as Int8: return .literal(.int(Int64(i)))
    case let i as UInt: return .literal(i <= UInt(Int64.max) ? .int(Int64(i)) : .double(Double(i)))
    case let i as UInt64: return .literal(i <= UInt64(Int64.max) ? .int(Int64(i)) : .double(Double(i)))
    case let i as UInt32: return .literal(.int(Int64(i)))
    case let i as UInt16: return .literal(.int(Int64(i)))
    case let i as UInt8: return .literal(.int(Int64(i)))
    case let d as Double: return .literal(.double(d))
    case let f as Float: return .literal(.double(Double(f)))
    case is JSONNull: return .literal(.null)
    case let a as [Any?]: return .array(a.map(builderExpr))
    case let a as [Any]: return .array(a.map { builderExpr($0) })
    case let d as [String: Any?]:
        return .object(d.keys.sorted().map { ObjectMember(key: $0, value: builderExpr(d[$0]!)) })
    case let d as [String: Any]:
        return .object(d.keys.sorted().map { ObjectMember(key: $0, value: builderExpr(d[$0]!)) })
    default:
        preconditionFailure("Expression.value: unsupported type \(type(of: value))")
    }
}

/// A `Value` as the AST the parser builds for its literal: arrays and objects become
/// array/object literal nodes.
func valueExpr(_ v: Value) -> Expr {
    switch v {
    case .array(let a): return .array(a.map(valueExpr))
    case .object(let o): return .object(o.keys.sorted().map { ObjectMember(key: $0, value: valueExpr(o[$0]!)) })
    default: return .literal(v)
    }
}

/// `yyyy-MM-ddTHH:mm:ss.SSSZ` in UTC (Couchbase Lite's date format).
func iso8601(_ date: Date) -> String {
    let totalMillis = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    var days = totalMillis / 86_400_000
    var ms = totalMillis % 86_400_000
    if ms < 0 { ms += 86_400_000; days -= 1 }
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let day = doy - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
    func pad(_ n: Int64, _ width: Int) -> String {
        let s = String(n)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }
    return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(ms / 3_600_000, 2)):\(pad(ms / 60_000 % 60, 2))"
        + ":\(pad(ms / 1000 % 60, 2)).\(pad(ms % 1000, 3))Z"
}
