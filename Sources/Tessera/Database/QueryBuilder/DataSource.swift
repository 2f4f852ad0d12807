// QueryBuilder data sources (SPEC §11).

/// A FROM or JOIN source.
public protocol DataSourceProtocol: Sendable {}

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
    let reference: DataSourceReference

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
