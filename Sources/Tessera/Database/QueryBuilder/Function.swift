// QueryBuilder functions (SPEC §6, §11), plus `Function.call` for SQL++-only functions.

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
