// QueryBuilder full-text functions (SPEC §10.2, §11).

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
