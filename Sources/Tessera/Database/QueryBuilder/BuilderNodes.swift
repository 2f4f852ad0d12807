// The QueryBuilder protocols are public but their AST is not. Each public protocol has no
// requirements; Tessera's own conforming types also conform to an internal twin that carries
// the AST node, and the public protocol reads the node through that twin. A type outside
// Tessera that adopts a builder protocol has no node: using it is a programming error.

/// The twin of a public builder protocol `P`, as `value` (a conformer of `P`) must implement it.
func builderNode<Node>(_ value: Any, _ protocolName: String, as _: Node.Type) -> Node {
    guard let node = value as? Node else {
        preconditionFailure("\(type(of: value)) adopts \(protocolName), which only Tessera's QueryBuilder types implement")
    }
    return node
}

/// The AST behind a `CollationProtocol`.
protocol CollationNode: Sendable {
    /// The COLLATE keywords it stands for.
    var collationKeywords: [CollationKeyword] { get }
}

extension CollationProtocol {
    /// The COLLATE keywords it stands for.
    var collationKeywords: [CollationKeyword] { builderNode(self, "CollationProtocol", as: (any CollationNode).self).collationKeywords }
}

/// The AST behind a `DataSourceProtocol`.
protocol DataSourceNode: Sendable {
    /// The source's AST.
    var reference: DataSourceReference { get }
}

extension DataSourceProtocol {
    /// The source's AST.
    var reference: DataSourceReference { builderNode(self, "DataSourceProtocol", as: (any DataSourceNode).self).reference }
}

/// The AST behind a `ExpressionProtocol`.
protocol ExpressionNode: Sendable {
    /// The expression's AST.
    var expr: Expr { get }
}

extension ExpressionProtocol {
    /// The expression's AST.
    var expr: Expr { builderNode(self, "ExpressionProtocol", as: (any ExpressionNode).self).expr }
}

/// The AST behind a `JoinProtocol`.
protocol JoinNode: Sendable {
    /// The item's AST.
    var item: FromClauseItem { get }
}

extension JoinProtocol {
    /// The item's AST.
    var item: FromClauseItem { builderNode(self, "JoinProtocol", as: (any JoinNode).self).item }
}

/// The AST behind a `OrderingProtocol`.
protocol OrderingNode: Sendable {
    /// The key's AST.
    var term: OrderingTerm { get }
}

extension OrderingProtocol {
    /// The key's AST.
    var term: OrderingTerm { builderNode(self, "OrderingProtocol", as: (any OrderingNode).self).term }
}

/// The AST behind a `QueryBuilderStatement`.
protocol QueryBuilderStatementNode: Sendable {
    /// The statement built so far.
    var statement: SelectStatement { get }
}

extension QueryBuilderStatement {
    /// The statement built so far.
    var statement: SelectStatement { builderNode(self, "QueryBuilderStatement", as: (any QueryBuilderStatementNode).self).statement }
}

/// The AST behind a `SelectResultProtocol`.
protocol SelectResultNode: Sendable {
    /// The result column's AST.
    var column: ResultColumn { get }
}

extension SelectResultProtocol {
    /// The result column's AST.
    var column: ResultColumn { builderNode(self, "SelectResultProtocol", as: (any SelectResultNode).self).column }
}
// MARK: - Tessera's conformers

extension Collation: CollationNode {}
extension ASCIICollation: CollationNode {}
extension UnicodeCollation: CollationNode {}

extension DataSourceAs: DataSourceNode {}

extension QueryExpression: ExpressionNode {}
extension PropertyExpression: ExpressionNode {}
extension VariableExpression: ExpressionNode {}
extension MetaExpression: ExpressionNode {}
extension CaseBuilder: ExpressionNode {}

extension JoinOn: JoinNode {}
extension JoinItem: JoinNode {}
extension UnnestAs: JoinNode {}

extension SortOrder: OrderingNode {}

extension From: QueryBuilderStatementNode {}
extension Joins: QueryBuilderStatementNode {}
extension Where: QueryBuilderStatementNode {}
extension GroupBy: QueryBuilderStatementNode {}
extension Having: QueryBuilderStatementNode {}
extension OrderBy: QueryBuilderStatementNode {}
extension Limit: QueryBuilderStatementNode {}

extension SelectResultAs: SelectResultNode {}
extension SelectResultFrom: SelectResultNode {}
