// QueryBuilder ORDER BY keys (SPEC §11).

/// One ORDER BY key.
public protocol OrderingProtocol: Sendable {}

/// Factories of ORDER BY keys.
///
/// ```swift
/// .orderBy(Ordering.property("name").ascending(), Ordering.expression(Meta.sequence).descending())
/// ```
public enum Ordering {
    /// Sort by `expression` (ascending unless `descending()`).
    public static func expression(_ expression: ExpressionProtocol) -> SortOrder {
        SortOrder(term: OrderingTerm(expression: expression.expr))
    }
    /// Sort by the property `property`.
    public static func property(_ property: String) -> SortOrder { expression(Expression.property(property)) }
}

/// An ORDER BY key whose direction can be chosen.
public struct SortOrder: OrderingProtocol, Hashable {
    /// The key's AST.
    let term: OrderingTerm

    /// Ascending (the default).
    public func ascending() -> SortOrder { SortOrder(term: OrderingTerm(expression: term.expression, descending: false)) }
    /// Descending.
    public func descending() -> SortOrder { SortOrder(term: OrderingTerm(expression: term.expression, descending: true)) }
}
