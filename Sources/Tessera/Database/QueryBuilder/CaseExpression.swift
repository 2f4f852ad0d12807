// QueryBuilder CASE (a Tessera addition).

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
    var expr: Expr {
        precondition(!clauses.isEmpty, "CASE needs at least one WHEN clause")
        return .caseWhen(operand: operand, clauses, else: elseExpr)
    }
}
