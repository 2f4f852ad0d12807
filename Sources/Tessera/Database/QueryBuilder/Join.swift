// QueryBuilder JOINs and (a Tessera addition) UNNESTs (SPEC §11).

/// A JOIN or UNNEST following FROM.
public protocol JoinProtocol: Sendable {}

/// Factories of JOINs (and, as a Tessera addition, UNNESTs).
///
/// ```swift
/// Join.leftJoin(DataSource.collection(name: "airports").as("a"))
///     .on(Expression.property("dest").from("r").equalTo(Expression.property("faa").from("a")))
/// ```
public enum Join {
    /// `JOIN source ON …` (inner).
    public static func join(_ dataSource: DataSourceProtocol) -> JoinOn { JoinOn(kind: .inner, source: dataSource.reference) }
    /// `INNER JOIN source ON …`.
    public static func innerJoin(_ dataSource: DataSourceProtocol) -> JoinOn { join(dataSource) }
    /// `LEFT JOIN source ON …`.
    public static func leftJoin(_ dataSource: DataSourceProtocol) -> JoinOn {
        JoinOn(kind: .leftOuter, source: dataSource.reference)
    }
    /// `LEFT OUTER JOIN source ON …`.
    public static func leftOuterJoin(_ dataSource: DataSourceProtocol) -> JoinOn { leftJoin(dataSource) }
    /// `CROSS JOIN source`.
    public static func crossJoin(_ dataSource: DataSourceProtocol) -> JoinItem {
        JoinItem(item: .join(.cross, dataSource.reference, on: nil))
    }
    /// `UNNEST path` (Tessera addition); `.as(alias)` names the element.
    public static func unnest(_ path: ExpressionProtocol) -> UnnestAs {
        UnnestAs(item: .unnest(path.expr, alias: nil, .none))
    }
}

/// A JOIN waiting for its ON condition (without one it is a semantic error when run).
public struct JoinOn: JoinProtocol, Hashable {
    let kind: JoinKind
    let source: DataSourceReference

    /// The join without condition.
    var item: FromClauseItem { .join(kind, source, on: nil) }

    /// The join with condition `expression`.
    public func on(_ expression: ExpressionProtocol) -> JoinItem {
        JoinItem(item: .join(kind, source, on: expression.expr))
    }
}

/// A complete JOIN or UNNEST.
public struct JoinItem: JoinProtocol, Hashable {
    /// The item's AST.
    let item: FromClauseItem
}

/// An UNNEST that can be given an alias.
public struct UnnestAs: JoinProtocol, Hashable {
    /// The item's AST.
    let item: FromClauseItem

    /// `UNNEST path AS alias`.
    public func `as`(_ alias: String?) -> UnnestAs {
        guard case .unnest(let e, _, let loc) = item else { return self }
        return UnnestAs(item: .unnest(e, alias: alias, loc))
    }
}
