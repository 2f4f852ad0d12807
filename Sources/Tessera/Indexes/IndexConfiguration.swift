/// A description of an index to create with `Collection.createIndex(withName:config:)`.
public protocol IndexConfiguration: Sendable {
    /// The stored definition this configuration creates under `name`.
    func definition(name: String) -> IndexDefinition
}

/// A value index over one or more SQL++ expressions, optionally partial (`where`).
///
/// ```swift
/// try hotels.createIndex(withName: "HotelCityIndex",
///                        config: ValueIndexConfiguration(["city"], where: "type = 'hotel'"))
/// ```
public struct ValueIndexConfiguration: IndexConfiguration {
    /// The indexed expressions (a string may hold a comma-separated list).
    public var expressions: [String]
    /// The partial-index condition.
    public var whereClause: String?

    /// Creates a value index configuration.
    public init(_ expressions: [String], where whereClause: String? = nil) {
        self.expressions = expressions
        self.whereClause = whereClause
    }

    /// The stored definition.
    public func definition(name: String) -> IndexDefinition {
        IndexDefinition(name: name, type: .value, expressions: expressions, whereClause: whereClause)
    }
}

/// A full-text index over text properties, optionally partial.
public struct FullTextIndexConfiguration: IndexConfiguration {
    /// The indexed expressions (each one a column for `column:term` searches).
    public var expressions: [String]
    /// The partial-index condition.
    public var whereClause: String?
    /// Strip diacritics when indexing and searching.
    public var ignoreAccents: Bool
    /// Stemming and stop-word language: ISO code or English name; `""` = none; nil = `"en"`.
    public var language: String?

    /// Creates a full-text index configuration.
    public init(_ expressions: [String], where whereClause: String? = nil, ignoreAccents: Bool? = false, language: String? = nil) {
        self.expressions = expressions
        self.whereClause = whereClause
        self.ignoreAccents = ignoreAccents ?? false
        self.language = language
    }

    /// The stored definition.
    public func definition(name: String) -> IndexDefinition {
        IndexDefinition(name: name, type: .fullText, expressions: expressions, whereClause: whereClause,
                        language: language ?? "en", ignoreAccents: ignoreAccents)
    }
}

/// An array index for UNNEST queries: every element of the array at `path`.
///
/// `path` joins nested array levels with `[]` (`contacts[].phones`); `expressions` are
/// evaluated on each innermost element, or nil to index scalar elements themselves.
public struct ArrayIndexConfiguration: IndexConfiguration {
    /// The array path.
    public var path: String
    /// Per-element expressions, or nil.
    public var expressions: [String]?

    /// Creates an array index configuration.
    public init(path: String, expressions: [String]? = nil) {
        self.path = path
        self.expressions = expressions
    }

    /// The stored definition.
    public func definition(name: String) -> IndexDefinition {
        IndexDefinition(name: name, type: .array, expressions: expressions ?? [], path: path)
    }
}
