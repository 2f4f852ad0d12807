// QueryBuilder document metadata (SPEC §1.2, §11).

/// Document metadata: `Meta.id` is `META().id`; `.from("x")` is `META(x).id`.
public enum Meta {
    /// The document ID.
    public static var id: MetaExpression { MetaExpression(key: .id) }
    /// The sequence number.
    public static var sequence: MetaExpression { MetaExpression(key: .sequence) }
    /// TRUE for a deleted document (tombstone).
    public static var isDeleted: MetaExpression { MetaExpression(key: .deleted) }
    /// The expiration time (ms since the epoch), MISSING if unset.
    public static var expiration: MetaExpression { MetaExpression(key: .expiration) }
    /// The revision ID.
    public static var revisionID: MetaExpression { MetaExpression(key: .revisionID) }
}

/// One metadata key, optionally of a named source.
public struct MetaExpression: ExpressionProtocol, Hashable {
    /// The key.
    let key: MetaKey
    /// The source alias.
    let alias: String?

    init(key: MetaKey, alias: String? = nil) {
        self.key = key
        self.alias = alias
    }

    /// `META(alias).key`.
    var expr: Expr { .meta(alias: alias, key: key, .none) }

    /// The key of the source `alias`.
    public func from(_ alias: String?) -> MetaExpression { MetaExpression(key: key, alias: alias) }
}
