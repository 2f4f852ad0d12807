// QueryBuilder expression factories: `Expression.property(…)`, literals, parameters, NOT.

import Foundation

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
    public let components: [PathComponent]
    /// The source alias, if qualified.
    public let alias: String?
    /// True for `Expression.all()`.
    public let isAll: Bool

    init(components: [PathComponent], alias: String? = nil, isAll: Bool = false) {
        self.components = components
        self.alias = alias
        self.isAll = isAll
    }

    /// The path as an AST property. `Expression.all()` is the alias alone, or an empty path
    /// (the whole document of the single source) without one.
    public var expr: Expr {
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
    public let reference: IndexReference
    /// The index of the source `alias`.
    public func from(_ alias: String) -> FullTextIndexExpression {
        FullTextIndexExpression(reference: IndexReference(alias: alias, name: reference.name))
    }
}
