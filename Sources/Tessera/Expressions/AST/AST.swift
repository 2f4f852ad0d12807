// The typed AST of SQL++ for mobile. The parser and the QueryBuilder both produce it; the
// analyzer checks it; the planner and executor consume it; the printer turns it back into
// canonical SQL++ text (EXPLAIN, index definitions, error messages).
//
// Source locations ride along on the nodes that can fail semantic checks (properties,
// calls, parameters, meta, match/rank, sources) but never take part in equality: an AST
// built by QueryBuilder equals the one parsed from the equivalent SQL++.

/// A position in query text: UTF-8 byte offset and 1-based line and column (in characters).
public struct SourceLocation: Sendable, Hashable, CustomStringConvertible {
    /// UTF-8 byte offset from the start of the text.
    public var offset: Int
    /// 1-based line.
    public var line: Int
    /// 1-based column, counted in Unicode scalars.
    public var column: Int

    /// Creates a location.
    public init(offset: Int, line: Int, column: Int) {
        self.offset = offset
        self.line = line
        self.column = column
    }

    /// The location of synthesized nodes (QueryBuilder).
    static let none = SourceLocation(offset: -1, line: 0, column: 0)

    /// Locations never affect AST equality.
    public static func == (_: SourceLocation, _: SourceLocation) -> Bool { true }
    /// Locations never affect hashing.
    public func hash(into _: inout Hasher) {}

    /// `line L, column C`.
    public var description: String { "line \(line), column \(column)" }
}

/// The metadata keys of `meta()`.
enum MetaKey: String, Sendable, Hashable, CaseIterable {
    case id, sequence, deleted, expiration, revisionID
}

/// Unary operators.
enum UnaryOperator: String, Sendable, Hashable {
    /// `-x`
    case negate = "-"
    /// `+x`
    case plus = "+"
    /// `NOT x`
    case not = "NOT"
}

/// Binary operators (LIKE, IN, BETWEEN and IS-tests have their own nodes).
enum BinaryOperator: String, Sendable, Hashable {
    case or = "OR", and = "AND"
    case equal = "=", notEqual = "!="
    case less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case add = "+", subtract = "-", multiply = "*", divide = "/", modulo = "%"
    case concat = "||"
    /// `a IS b` (MISSING-aware equality).
    case `is` = "IS"
    /// `a IS NOT b`.
    case isNot = "IS NOT"
}

/// Postfix tests: `IS [NOT] NULL`, `IS [NOT] MISSING`, `IS [NOT] VALUED`.
enum TestKind: String, Sendable, Hashable {
    case null = "NULL", missing = "MISSING", valued = "VALUED"
}

/// `ANY`, `EVERY`, `ANY AND EVERY` (SOME is a synonym of ANY).
enum Quantifier: String, Sendable, Hashable {
    case any = "ANY", every = "EVERY", anyAndEvery = "ANY AND EVERY"
}

/// `WHEN cond THEN result`.
struct WhenClause: Sendable, Hashable {
    /// The condition (searched CASE) or the value compared with the operand (simple CASE).
    var when: Expr
    /// The result.
    var then: Expr
    /// Creates a clause.
    init(when: Expr, then: Expr) { self.when = when; self.then = then }
}

/// A member of an object literal.
struct ObjectMember: Sendable, Hashable {
    /// The key.
    var key: String
    /// The value expression.
    var value: Expr
    /// Creates a member.
    init(key: String, value: Expr) { self.key = key; self.value = value }
}

/// A reference to a full-text index in `match()` / `rank()`: `idx` or `alias.idx`.
struct IndexReference: Sendable, Hashable {
    /// The source alias, when written `alias.idx`.
    var alias: String?
    /// The index name.
    var name: String
    /// Where it was written.
    var location: SourceLocation
    /// Creates a reference.
    init(alias: String? = nil, name: String, location: SourceLocation = .none) {
        self.alias = alias; self.name = name; self.location = location
    }
}

/// A SQL++ expression.
indirect enum Expr: Sendable, Hashable {
    /// A literal scalar (also `TRUE FALSE NULL MISSING`).
    case literal(Value)
    /// `$name`.
    case parameter(String, SourceLocation)
    /// A property path as written: `a.b[0].c`. The first component may name an alias; the
    /// analyzer decides. QueryBuilder's `.from("x")` prepends `x`.
    case property([PathComponent], SourceLocation)
    /// `meta()` / `meta(alias)`, optionally followed by `.key`.
    case meta(alias: String?, key: MetaKey?, SourceLocation)
    /// A path applied to the value of another expression: `{'x':1}.x`, `f(a).b`, `(e)[0]`.
    case member(Expr, [PathComponent])
    /// `[e, …]`.
    case array([Expr])
    /// `{'k': e, …}`.
    case object([ObjectMember])
    /// A prefix operator.
    case unary(UnaryOperator, Expr)
    /// An infix operator.
    case binary(BinaryOperator, Expr, Expr)
    /// `x [NOT] LIKE pattern`.
    case like(Expr, Expr, negated: Bool)
    /// `x [NOT] BETWEEN low AND high`.
    case between(Expr, Expr, Expr, negated: Bool)
    /// `x [NOT] IN (e, …)` or `x [NOT] IN [e, …]`.
    case inList(Expr, [Expr], negated: Bool)
    /// `x [NOT] IN arrayExpression` (a bare array-valued expression) [T].
    case inArray(Expr, Expr, negated: Bool)
    /// `x IS [NOT] NULL|MISSING|VALUED` (and `x NOT NULL`).
    case test(Expr, TestKind, negated: Bool)
    /// A function call; `name` is upper-case. `COUNT(*)` is `COUNT` with no arguments.
    case call(String, [Expr], SourceLocation)
    /// `CASE [operand] WHEN … THEN … [ELSE …] END`.
    case caseWhen(operand: Expr?, [WhenClause], else: Expr?)
    /// `ANY|EVERY|ANY AND EVERY v IN array SATISFIES condition END`.
    case quantified(Quantifier, variable: String, in: Expr, satisfies: Expr)
    /// `expr COLLATE c` / `COLLATE (c c …)`.
    case collate(Expr, [CollationKeyword])
    /// `MATCH(index, query)`.
    case match(IndexReference, Expr)
    /// `RANK(index)`.
    case rank(IndexReference)
}

/// One column of SELECT.
enum ResultColumn: Sendable, Hashable {
    /// `*` or `alias.*`, optionally renamed.
    case star(source: String?, alias: String?)
    /// An expression, optionally `AS alias`.
    case expression(Expr, alias: String?)
}

/// `[scope.]collection [AS alias]` in FROM or JOIN.
struct DataSourceReference: Sendable, Hashable {
    /// The scope as written (nil when omitted).
    var scope: String?
    /// The collection as written (`_` and `_default` included).
    var collection: String
    /// The explicit alias.
    var alias: String?
    /// Where it was written.
    var location: SourceLocation
    /// Creates a data source reference.
    init(scope: String? = nil, collection: String, alias: String? = nil, location: SourceLocation = .none) {
        self.scope = scope; self.collection = collection; self.alias = alias; self.location = location
    }
}

/// Kinds of JOIN.
enum JoinKind: String, Sendable, Hashable {
    case inner = "INNER JOIN", leftOuter = "LEFT OUTER JOIN", cross = "CROSS JOIN"
}

/// A JOIN or UNNEST following FROM, in the order written.
enum FromClauseItem: Sendable, Hashable {
    /// `[INNER|LEFT [OUTER]|CROSS] JOIN source [ON condition]`.
    case join(JoinKind, DataSourceReference, on: Expr?)
    /// `UNNEST path [AS alias]`.
    case unnest(Expr, alias: String?, SourceLocation)
}

/// One ORDER BY key.
struct OrderingTerm: Sendable, Hashable {
    /// The key expression (may carry a COLLATE).
    var expression: Expr
    /// DESC.
    var descending: Bool
    /// Creates a key.
    init(expression: Expr, descending: Bool = false) {
        self.expression = expression; self.descending = descending
    }
}

/// A whole SELECT statement.
package struct SelectStatement: Sendable, Hashable {
    /// `SELECT DISTINCT`.
    var distinct: Bool = false
    /// The result columns.
    var columns: [ResultColumn] = []
    /// The FROM source.
    var from: DataSourceReference
    /// JOINs and UNNESTs in written order.
    var joins: [FromClauseItem] = []
    /// WHERE.
    var whereClause: Expr?
    /// GROUP BY.
    var groupBy: [Expr] = []
    /// HAVING.
    var having: Expr?
    /// ORDER BY.
    var orderBy: [OrderingTerm] = []
    /// LIMIT.
    var limit: Expr?
    /// OFFSET.
    var offset: Expr?

    /// Creates a statement reading `from`.
    init(from: DataSourceReference) { self.from = from }
}

extension Expr {
    /// A balanced tree of `op` over `operands` (left to right): how the parser builds a
    /// flat chain of more than `Parser.balancedChainLength` ORs, ANDs or `||`s.
    static func balancedChain(_ op: BinaryOperator, _ operands: ArraySlice<Expr>) -> Expr {
        if operands.count == 1 { return operands[operands.startIndex] }
        let mid = operands.startIndex + operands.count / 2
        return .binary(op, balancedChain(op, operands[..<mid]), balancedChain(op, operands[mid...]))
    }

    /// The operands of a chain the parser would build from `o1 op o2 op …` written flat:
    /// a balanced tree of an OR, AND or `||` over more than `Parser.balancedChainLength`
    /// operands (the printer writes it flat, so that it parses back to the same tree).
    var balancedChainOperands: [Expr]? {
        guard case .binary(let op, _, _) = self, op == .or || op == .and || op == .concat else { return nil }
        var operands: [Expr] = []
        var stack = [self]
        while let e = stack.popLast() {
            if case .binary(op, let l, let r) = e {
                stack.append(r)
                stack.append(l)
            } else {
                operands.append(e)
            }
        }
        guard operands.count > Parser.balancedChainLength, Expr.balancedChain(op, operands[...]) == self else { return nil }
        return operands
    }
}
