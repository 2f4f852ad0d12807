// QueryBuilder functions, meta properties, array quantifiers, full-text functions and
// (Tessera additions) CASE and arbitrary SQL++ function calls.

// MARK: - Meta

/// Document metadata: `Meta.id` is `META().id`; `.from("x")` is `META(x).id`.
public enum Meta {
    /// The document ID.
    public static var id: MetaExpression { MetaExpression(key: .id) }
    /// The sequence number.
    public static var sequence: MetaExpression { MetaExpression(key: .sequence) }
    /// TRUE for a deleted document (tombstone).
    public static var isDeleted: MetaExpression { MetaExpression(key: .deleted) }
    /// The expiration time (ms since the epoch), MISSING if unset.
    public static var expiration: MetaExpression { MetaExpression(key: .expiration) }
    /// The revision ID.
    public static var revisionID: MetaExpression { MetaExpression(key: .revisionID) }
}

/// One metadata key, optionally of a named source.
public struct MetaExpression: ExpressionProtocol, Hashable {
    /// The key.
    public let key: MetaKey
    /// The source alias.
    public let alias: String?

    init(key: MetaKey, alias: String? = nil) {
        self.key = key
        self.alias = alias
    }

    /// `META(alias).key`.
    public var expr: Expr { .meta(alias: alias, key: key, .none) }

    /// The key of the source `alias`.
    public func from(_ alias: String?) -> MetaExpression { MetaExpression(key: key, alias: alias) }
}

// MARK: - ANY / EVERY

/// `ANY`, `EVERY` and `ANY AND EVERY` over an array, and their variables.
///
/// ```swift
/// let v = ArrayExpression.variable("like")
/// ArrayExpression.any(v).in(Expression.property("likes")).satisfies(v.equalTo(Expression.string("Soccer")))
/// ```
public enum ArrayExpression {
    /// `ANY variable IN … SATISFIES … END`.
    public static func any(_ variable: VariableExpression) -> ArrayExpressionIn {
        ArrayExpressionIn(quantifier: .any, variable: variable.name)
    }
    /// `EVERY variable IN … SATISFIES … END`.
    public static func every(_ variable: VariableExpression) -> ArrayExpressionIn {
        ArrayExpressionIn(quantifier: .every, variable: variable.name)
    }
    /// `ANY AND EVERY variable IN … SATISFIES … END`.
    public static func anyAndEvery(_ variable: VariableExpression) -> ArrayExpressionIn {
        ArrayExpressionIn(quantifier: .anyAndEvery, variable: variable.name)
    }
    /// A variable (or a path below it, `"v.name"`) for use in `SATISFIES`.
    public static func variable(_ name: String) -> VariableExpression {
        VariableExpression(components: parsePropertyPath(name))
    }
}

/// A quantifier variable, or a path starting with one.
public struct VariableExpression: ExpressionProtocol, Hashable {
    let components: [PathComponent]

    /// The variable's name (the path's first key).
    public var name: String {
        if case .key(let k) = components.first { return k }
        return ""
    }

    /// The path as an AST property (the analyzer resolves the variable).
    public var expr: Expr { .property(components, .none) }
}

/// `ANY v` waiting for `IN array`.
public struct ArrayExpressionIn: Sendable, Hashable {
    let quantifier: Quantifier
    let variable: String

    /// The array to range over.
    public func `in`(_ expression: ExpressionProtocol) -> ArrayExpressionSatisfies {
        ArrayExpressionSatisfies(quantifier: quantifier, variable: variable, array: expression.expr)
    }
}

/// `ANY v IN array` waiting for `SATISFIES condition`.
public struct ArrayExpressionSatisfies: Sendable, Hashable {
    let quantifier: Quantifier
    let variable: String
    let array: Expr

    /// The whole quantified expression.
    public func satisfies(_ expression: ExpressionProtocol) -> QueryExpression {
        QueryExpression(.quantified(quantifier, variable: variable, in: array, satisfies: expression.expr))
    }
}

// MARK: - Functions

/// `ARRAY_CONTAINS` and `ARRAY_LENGTH`.
public enum ArrayFunction {
    /// `ARRAY_CONTAINS(expression, value)`.
    public static func contains(_ expression: ExpressionProtocol, value: ExpressionProtocol) -> QueryExpression {
        call("ARRAY_CONTAINS", expression, value)
    }
    /// `ARRAY_LENGTH(expression)`.
    public static func length(_ expression: ExpressionProtocol) -> QueryExpression { call("ARRAY_LENGTH", expression) }
}

private func call(_ name: String, _ args: ExpressionProtocol...) -> QueryExpression {
    QueryExpression(.call(name, args.map(\.expr), .none))
}

/// Aggregate, math, string and date functions (SPEC §6, §11).
///
/// ```swift
/// Function.lower(Expression.property("name")).like(Expression.string("a%"))
/// ```
public enum Function {
    /// `COUNT(expression)`; nil (or `Expression.all()`) is `COUNT(*)`.
    public static func count(_ expression: ExpressionProtocol? = nil) -> QueryExpression {
        guard let expression else { return call("COUNT") }
        if let p = expression as? PropertyExpression, p.isAll, p.alias == nil { return call("COUNT") }
        return call("COUNT", expression)
    }
    /// `AVG(expression)`.
    public static func avg(_ expression: ExpressionProtocol) -> QueryExpression { call("AVG", expression) }
    /// `MIN(expression)`.
    public static func min(_ expression: ExpressionProtocol) -> QueryExpression { call("MIN", expression) }
    /// `MAX(expression)`.
    public static func max(_ expression: ExpressionProtocol) -> QueryExpression { call("MAX", expression) }
    /// `SUM(expression)`.
    public static func sum(_ expression: ExpressionProtocol) -> QueryExpression { call("SUM", expression) }

    /// `ABS(expression)`.
    public static func abs(_ expression: ExpressionProtocol) -> QueryExpression { call("ABS", expression) }
    /// `ACOS(expression)`.
    public static func acos(_ expression: ExpressionProtocol) -> QueryExpression { call("ACOS", expression) }
    /// `ASIN(expression)`.
    public static func asin(_ expression: ExpressionProtocol) -> QueryExpression { call("ASIN", expression) }
    /// `ATAN(expression)`.
    public static func atan(_ expression: ExpressionProtocol) -> QueryExpression { call("ATAN", expression) }
    /// `ATAN2(y, x)`.
    public static func atan2(y: ExpressionProtocol, x: ExpressionProtocol) -> QueryExpression { call("ATAN2", y, x) }
    /// `CEIL(expression)`.
    public static func ceil(_ expression: ExpressionProtocol) -> QueryExpression { call("CEIL", expression) }
    /// `COS(expression)`.
    public static func cos(_ expression: ExpressionProtocol) -> QueryExpression { call("COS", expression) }
    /// `DEGREES(expression)`.
    public static func degrees(_ expression: ExpressionProtocol) -> QueryExpression { call("DEGREES", expression) }
    /// `E()`.
    public static func e() -> QueryExpression { call("E") }
    /// `EXP(expression)`.
    public static func exp(_ expression: ExpressionProtocol) -> QueryExpression { call("EXP", expression) }
    /// `FLOOR(expression)`.
    public static func floor(_ expression: ExpressionProtocol) -> QueryExpression { call("FLOOR", expression) }
    /// `LN(expression)`.
    public static func ln(_ expression: ExpressionProtocol) -> QueryExpression { call("LN", expression) }
    /// `LOG(expression)` (base 10).
    public static func log(_ expression: ExpressionProtocol) -> QueryExpression { call("LOG", expression) }
    /// `PI()`.
    public static func pi() -> QueryExpression { call("PI") }
    /// `POWER(base, exponent)`.
    public static func power(base: ExpressionProtocol, exponent: ExpressionProtocol) -> QueryExpression {
        call("POWER", base, exponent)
    }
    /// `RADIANS(expression)`.
    public static func radians(_ expression: ExpressionProtocol) -> QueryExpression { call("RADIANS", expression) }
    /// `ROUND(expression [, digits])`.
    public static func round(_ expression: ExpressionProtocol, digits: ExpressionProtocol? = nil) -> QueryExpression {
        if let digits { return call("ROUND", expression, digits) }
        return call("ROUND", expression)
    }
    /// `SIGN(expression)`.
    public static func sign(_ expression: ExpressionProtocol) -> QueryExpression { call("SIGN", expression) }
    /// `SIN(expression)`.
    public static func sin(_ expression: ExpressionProtocol) -> QueryExpression { call("SIN", expression) }
    /// `SQRT(expression)`.
    public static func sqrt(_ expression: ExpressionProtocol) -> QueryExpression { call("SQRT", expression) }
    /// `TAN(expression)`.
    public static func tan(_ expression: ExpressionProtocol) -> QueryExpression { call("TAN", expression) }
    /// `TRUNC(expression [, digits])`.
    public static func trunc(_ expression: ExpressionProtocol, digits: ExpressionProtocol? = nil) -> QueryExpression {
        if let digits { return call("TRUNC", expression, digits) }
        return call("TRUNC", expression)
    }

    /// `CONTAINS(expression, substring)`.
    public static func contains(_ expression: ExpressionProtocol, substring: ExpressionProtocol) -> QueryExpression {
        call("CONTAINS", expression, substring)
    }
    /// `LENGTH(expression)`.
    public static func length(_ expression: ExpressionProtocol) -> QueryExpression { call("LENGTH", expression) }
    /// `LOWER(expression)`.
    public static func lower(_ expression: ExpressionProtocol) -> QueryExpression { call("LOWER", expression) }
    /// `LTRIM(expression)`.
    public static func ltrim(_ expression: ExpressionProtocol) -> QueryExpression { call("LTRIM", expression) }
    /// `RTRIM(expression)`.
    public static func rtrim(_ expression: ExpressionProtocol) -> QueryExpression { call("RTRIM", expression) }
    /// `TRIM(expression)`.
    public static func trim(_ expression: ExpressionProtocol) -> QueryExpression { call("TRIM", expression) }
    /// `UPPER(expression)`.
    public static func upper(_ expression: ExpressionProtocol) -> QueryExpression { call("UPPER", expression) }

    /// `STR_TO_MILLIS(expression)`.
    public static func stringToMillis(_ expression: ExpressionProtocol) -> QueryExpression {
        call("STR_TO_MILLIS", expression)
    }
    /// `STR_TO_UTC(expression)`.
    public static func stringToUTC(_ expression: ExpressionProtocol) -> QueryExpression { call("STR_TO_UTC", expression) }
    /// `MILLIS_TO_STR(expression)`.
    public static func millisToString(_ expression: ExpressionProtocol) -> QueryExpression {
        call("MILLIS_TO_STR", expression)
    }
    /// `MILLIS_TO_UTC(expression)`.
    public static func millisToUTC(_ expression: ExpressionProtocol) -> QueryExpression {
        call("MILLIS_TO_UTC", expression)
    }

    /// Any SQL++ function by name (Tessera addition for functions that CBL's QueryBuilder
    /// lacks): `Function.call("ifmissing", a, b)` is `IFMISSING(a, b)`.
    public static func call(_ name: String, _ arguments: ExpressionProtocol...) -> QueryExpression {
        QueryExpression(.call(asciiUppercased(name), arguments.map(\.expr), .none))
    }
}

/// `MATCH()` and `RANK()` of a full-text index.
///
/// ```swift
/// FullTextFunction.match(Expression.fullTextIndex("descIdx").from("h"), query: "wifi AND pool")
/// ```
public enum FullTextFunction {
    /// `MATCH(index, 'query')`.
    public static func match(_ index: FullTextIndexExpression, query: String) -> QueryExpression {
        QueryExpression(.match(index.reference, .literal(.string(query))))
    }
    /// `MATCH(index, query)` with any query expression (a parameter, say).
    public static func match(_ index: FullTextIndexExpression, query: ExpressionProtocol) -> QueryExpression {
        QueryExpression(.match(index.reference, query.expr))
    }
    /// `RANK(index)`.
    public static func rank(_ index: FullTextIndexExpression) -> QueryExpression {
        QueryExpression(.rank(index.reference))
    }
}

// MARK: - CASE

/// `CASE` expressions (Tessera addition).
///
/// ```swift
/// CaseExpression.value(Expression.property("n"))
///     .when(Expression.int(1), then: Expression.string("one"))
///     .else(Expression.string("many"))
/// ```
public enum CaseExpression {
    /// A simple CASE comparing `operand` with each WHEN value.
    public static func value(_ operand: ExpressionProtocol) -> CaseBuilder { CaseBuilder(operand: operand.expr) }
    /// A searched CASE taking the first TRUE WHEN condition.
    public static func searched() -> CaseBuilder { CaseBuilder(operand: nil) }
}

/// A CASE under construction; usable as an expression once it has a WHEN clause.
public struct CaseBuilder: ExpressionProtocol, Hashable {
    let operand: Expr?
    var clauses: [WhenClause] = []
    var elseExpr: Expr?

    /// Adds `WHEN condition THEN result`.
    public func when(_ condition: ExpressionProtocol, then result: ExpressionProtocol) -> CaseBuilder {
        var c = self
        c.clauses.append(WhenClause(when: condition.expr, then: result.expr))
        return c
    }

    /// Sets `ELSE result`.
    public func `else`(_ result: ExpressionProtocol) -> CaseBuilder {
        var c = self
        c.elseExpr = result.expr
        return c
    }

    /// The CASE expression.
    ///
    /// - Precondition: at least one `when`.
    public var expr: Expr {
        precondition(!clauses.isEmpty, "CASE needs at least one WHEN clause")
        return .caseWhen(operand: operand, clauses, else: elseExpr)
    }
}
