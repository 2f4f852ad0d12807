// The QueryBuilder chain (SPEC §11): `QueryBuilder.select(…).from(…).join(…).where(…)
// .groupBy(…).having(…).orderBy(…).limit(…)`. Each stage is a value holding the
// `SelectStatement` built so far; the stages after FROM are complete statements.

/// Entry point of the QueryBuilder DSL.
///
/// ```swift
/// let q = QueryBuilder
///     .select(SelectResult.property("name"))
///     .from(DataSource.collection(name: "hotels"))
///     .where(Expression.property("city").equalTo(Expression.string("Paris")))
///     .orderBy(Ordering.property("name"))
/// let rows = try db.createQuery(q).execute().allResults()
/// ```
///
/// A builder query compiles to the same statement as its SQL++ twin.
public enum QueryBuilder {
    /// `SELECT results`.
    ///
    /// - Precondition: at least one result.
    public static func select(_ results: SelectResultProtocol...) -> Select { select(results) }
    /// `SELECT results`.
    public static func select(_ results: [SelectResultProtocol]) -> Select { Select(distinct: false, results) }
    /// `SELECT DISTINCT results`.
    public static func selectDistinct(_ results: SelectResultProtocol...) -> Select { selectDistinct(results) }
    /// `SELECT DISTINCT results`.
    public static func selectDistinct(_ results: [SelectResultProtocol]) -> Select { Select(distinct: true, results) }
}

/// A QueryBuilder chain that is a whole statement (every stage from `from` on); run it with
/// `Database.createQuery(_:)`.
public protocol QueryBuilderStatement: Sendable {}

extension Database {
    /// Compiles a query built with `QueryBuilder`.
    ///
    /// - Throws: `QueryError` of kind `.semantic` (an unknown collection, say).
    public func createQuery(_ query: any QueryBuilderStatement) throws -> Query {
        try createQuery(statement: query.statement)
    }
}

/// The SELECT clause, waiting for FROM.
public struct Select: Sendable, Hashable {
    /// `SELECT DISTINCT`.
    let distinct: Bool
    /// The results.
    let columns: [ResultColumn]

    init(distinct: Bool, _ results: [SelectResultProtocol]) {
        precondition(!results.isEmpty, "QueryBuilder.select needs at least one result")
        self.distinct = distinct
        self.columns = results.map(\.column)
    }

    /// `FROM dataSource`.
    public func from(_ dataSource: DataSourceProtocol) -> From {
        var s = SelectStatement(from: dataSource.reference)
        s.distinct = distinct
        s.columns = columns
        return From(statement: s)
    }
}

// MARK: - Routers

/// Stages that can be followed by JOINs.
public protocol JoinRouter: QueryBuilderStatement {}
/// Stages that can be followed by WHERE.
public protocol WhereRouter: QueryBuilderStatement {}
/// Stages that can be followed by GROUP BY.
public protocol GroupByRouter: QueryBuilderStatement {}
/// Stages that can be followed by HAVING.
public protocol HavingRouter: QueryBuilderStatement {}
/// Stages that can be followed by ORDER BY.
public protocol OrderByRouter: QueryBuilderStatement {}
/// Stages that can be followed by LIMIT.
public protocol LimitRouter: QueryBuilderStatement {}

extension JoinRouter {
    /// Adds JOINs / UNNESTs, in order.
    public func join(_ joins: JoinProtocol...) -> Joins { join(joins) }
    /// Adds JOINs / UNNESTs, in order.
    public func join(_ joins: [JoinProtocol]) -> Joins {
        var s = statement
        s.joins += joins.map(\.item)
        return Joins(statement: s)
    }
}

extension WhereRouter {
    /// `WHERE expression`.
    public func `where`(_ expression: ExpressionProtocol) -> Where {
        var s = statement
        s.whereClause = expression.expr
        return Where(statement: s)
    }
}

extension GroupByRouter {
    /// `GROUP BY expressions`.
    public func groupBy(_ expressions: ExpressionProtocol...) -> GroupBy { groupBy(expressions) }
    /// `GROUP BY expressions`.
    public func groupBy(_ expressions: [ExpressionProtocol]) -> GroupBy {
        var s = statement
        s.groupBy = expressions.map(\.expr)
        return GroupBy(statement: s)
    }
}

extension HavingRouter {
    /// `HAVING expression`.
    public func having(_ expression: ExpressionProtocol) -> Having {
        var s = statement
        s.having = expression.expr
        return Having(statement: s)
    }
}

extension OrderByRouter {
    /// `ORDER BY orderings`.
    public func orderBy(_ orderings: OrderingProtocol...) -> OrderBy { orderBy(orderings) }
    /// `ORDER BY orderings`.
    public func orderBy(_ orderings: [OrderingProtocol]) -> OrderBy {
        var s = statement
        s.orderBy = orderings.map(\.term)
        return OrderBy(statement: s)
    }
}

extension LimitRouter {
    /// `LIMIT limit [OFFSET offset]`.
    public func limit(_ limit: ExpressionProtocol, offset: ExpressionProtocol? = nil) -> Limit {
        var s = statement
        s.limit = limit.expr
        s.offset = offset?.expr
        return Limit(statement: s)
    }
}

// MARK: - Stages

/// `SELECT … FROM …`.
public struct From: JoinRouter, WhereRouter, GroupByRouter, OrderByRouter, LimitRouter, Hashable {
    /// The statement built so far.
    let statement: SelectStatement
}

/// `… FROM … JOIN …`.
public struct Joins: WhereRouter, GroupByRouter, OrderByRouter, LimitRouter, Hashable {
    /// The statement built so far.
    let statement: SelectStatement
}

/// `… WHERE …`.
public struct Where: GroupByRouter, OrderByRouter, LimitRouter, Hashable {
    /// The statement built so far.
    let statement: SelectStatement
}

/// `… GROUP BY …`.
public struct GroupBy: HavingRouter, OrderByRouter, LimitRouter, Hashable {
    /// The statement built so far.
    let statement: SelectStatement
}

/// `… HAVING …`.
public struct Having: OrderByRouter, LimitRouter, Hashable {
    /// The statement built so far.
    let statement: SelectStatement
}

/// `… ORDER BY …`.
public struct OrderBy: LimitRouter, Hashable {
    /// The statement built so far.
    let statement: SelectStatement
}

/// `… LIMIT … [OFFSET …]`.
public struct Limit: QueryBuilderStatement, Hashable {
    /// The statement built so far.
    let statement: SelectStatement
}
