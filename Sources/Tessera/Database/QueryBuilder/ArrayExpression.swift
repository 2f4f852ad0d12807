// QueryBuilder ANY / EVERY / ANY AND EVERY (SPEC §5.8, §11).

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
    var expr: Expr { .property(components, .none) }
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
