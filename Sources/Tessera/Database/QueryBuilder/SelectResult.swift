// QueryBuilder SELECT results (SPEC §11).

/// One SELECT result.
public protocol SelectResultProtocol: Sendable {}

/// Factories of SELECT results.
///
/// ```swift
/// QueryBuilder.select(SelectResult.property("name"), SelectResult.expression(Meta.id).as("docID"))
/// ```
public enum SelectResult {
    /// An expression result; `Expression.all()` (optionally `.from(alias)`) is `*` / `alias.*`.
    public static func expression(_ expression: ExpressionProtocol) -> SelectResultAs {
        if let p = expression as? PropertyExpression, p.isAll {
            return SelectResultAs(column: .star(source: p.alias, alias: nil))
        }
        return SelectResultAs(column: .expression(expression.expr, alias: nil))
    }

    /// A property result (`Expression.property(p)`).
    public static func property(_ property: String) -> SelectResultAs {
        expression(Expression.property(property))
    }

    /// `*`; `.from(alias)` for `alias.*`.
    public static func all() -> SelectResultFrom { SelectResultFrom(column: .star(source: nil, alias: nil)) }
}

/// A result that can be renamed with `as`.
public struct SelectResultAs: SelectResultProtocol, Hashable {
    /// The result column's AST.
    let column: ResultColumn

    /// The result named `alias` (`expr AS alias`).
    public func `as`(_ alias: String?) -> SelectResultAs {
        switch column {
        case .star(let source, _): SelectResultAs(column: .star(source: source, alias: alias))
        case .expression(let e, _): SelectResultAs(column: .expression(e, alias: alias))
        }
    }
}

/// `*`, which `from` turns into `alias.*`.
public struct SelectResultFrom: SelectResultProtocol, Hashable {
    /// The result column's AST.
    let column: ResultColumn

    /// `alias.*`.
    public func from(_ alias: String?) -> SelectResultAs {
        SelectResultAs(column: .star(source: alias, alias: nil))
    }
}
