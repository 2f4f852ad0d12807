// QueryBuilder expressions with Couchbase Lite's Swift names (SPEC §11). Every builder value
// wraps an `Expr`, the same AST the SQL++ parser produces, so a builder query equals its
// SQL++ twin node for node.

/// Anything that is a query expression: builder values and their results.
public protocol ExpressionProtocol: Sendable {
    /// The expression's AST.
    var expr: Expr { get }
}

/// A built expression.
public struct QueryExpression: ExpressionProtocol, Hashable {
    /// The expression's AST.
    public let expr: Expr
    /// Wraps an AST node.
    public init(_ expr: Expr) { self.expr = expr }
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
