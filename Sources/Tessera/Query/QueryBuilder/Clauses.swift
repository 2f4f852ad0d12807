// QueryBuilder's clause values: results, data sources, joins, orderings (SPEC §11).

// MARK: - SELECT results

/// One SELECT result.
public protocol SelectResultProtocol: Sendable {
    /// The result column's AST.
    var column: ResultColumn { get }
}

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
    public let column: ResultColumn

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
    public let column: ResultColumn

    /// `alias.*`.
    public func from(_ alias: String?) -> SelectResultAs {
        SelectResultAs(column: .star(source: alias, alias: nil))
    }
}

// MARK: - Data sources

/// A FROM or JOIN source.
public protocol DataSourceProtocol: Sendable {
    /// The source's AST.
    var reference: DataSourceReference { get }
}

/// Factories of data sources.
public enum DataSource {
    /// The collection `name` in `scope` (nil: written without a scope, i.e. `_default`).
    ///
    /// ```swift
    /// DataSource.collection(name: "hotels", scope: "inventory").as("h")
    /// ```
    public static func collection(name: String, scope: String? = nil) -> DataSourceAs {
        DataSourceAs(scope: scope, collection: name)
    }
}

/// A collection source that can be given an alias.
public struct DataSourceAs: DataSourceProtocol, Hashable {
    /// The source's AST.
    public let reference: DataSourceReference

    /// The collection `collection` of `scope`, without alias.
    public init(scope: String?, collection: String) {
        reference = DataSourceReference(scope: scope, collection: collection)
    }

    private init(reference: DataSourceReference) { self.reference = reference }

    /// The same source under `alias`.
    public func `as`(_ alias: String?) -> DataSourceAs {
        var r = reference
        r.alias = alias
        return DataSourceAs(reference: r)
    }
}

// MARK: - Joins and UNNEST

/// A JOIN or UNNEST following FROM.
public protocol JoinProtocol: Sendable {
    /// The item's AST.
    var item: FromClauseItem { get }
}

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
    public var item: FromClauseItem { .join(kind, source, on: nil) }

    /// The join with condition `expression`.
    public func on(_ expression: ExpressionProtocol) -> JoinItem {
        JoinItem(item: .join(kind, source, on: expression.expr))
    }
}

/// A complete JOIN or UNNEST.
public struct JoinItem: JoinProtocol, Hashable {
    /// The item's AST.
    public let item: FromClauseItem
}

/// An UNNEST that can be given an alias.
public struct UnnestAs: JoinProtocol, Hashable {
    /// The item's AST.
    public let item: FromClauseItem

    /// `UNNEST path AS alias`.
    public func `as`(_ alias: String?) -> UnnestAs {
        guard case .unnest(let e, _, let loc) = item else { return self }
        return UnnestAs(item: .unnest(e, alias: alias, loc))
    }
}

// MARK: - ORDER BY

/// One ORDER BY key.
public protocol OrderingProtocol: Sendable {
    /// The key's AST.
    var term: OrderingTerm { get }
}

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
    public let term: OrderingTerm

    /// Ascending (the default).
    public func ascending() -> SortOrder { SortOrder(term: OrderingTerm(expression: term.expression, descending: false)) }
    /// Descending.
    public func descending() -> SortOrder { SortOrder(term: OrderingTerm(expression: term.expression, descending: true)) }
}
