/// The kind of an index, as the catalogue stores it. An open set: each registered index kind
/// (`IndexKinds.all`) has one.
public struct IndexType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The stored tag (`"value"`, `"array"`, `"fulltext"`).
    public let rawValue: String
    /// A type from its stored tag.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// A value index over one or more expressions (optionally partial).
    public static let value = IndexType(rawValue: "value")
    /// An array index over the elements of a (nested) array, for UNNEST.
    public static let array = IndexType(rawValue: "array")
    /// A full-text index.
    public static let fullText = IndexType(rawValue: "fulltext")
    /// The stored tag.
    public var description: String { rawValue }
}

/// A stored index definition: what the catalogue persists and what `index(withName:)` reports.
public struct IndexDefinition: Sendable, Hashable {
    /// The index name (unique per collection).
    public var name: String
    /// The kind of index.
    public var type: IndexType
    /// The indexed expressions as SQL++ text (value, full-text; array: per-element expressions).
    public var expressions: [String]
    /// The partial-index condition, for kinds that take one.
    public var whereClause: String?
    /// The kind's own options, as stored (array indexes: `path`; full text: `language`,
    /// `ignoreAccents`). Each kind's folder adds typed accessors for its options.
    public var options: [String: Value]

    /// Creates a definition.
    public init(name: String, type: IndexType, expressions: [String], whereClause: String? = nil,
                options: [String: Value] = [:]) {
        self.name = name
        self.type = type
        self.expressions = expressions
        self.whereClause = whereClause
        self.options = options
    }

    /// The keys the catalogue stores for every kind; any other key is a kind option.
    static let commonKeys: Set<String> = ["name", "type", "expressions", "where"]

    /// A one-line description of the kind-specific parts (`value (city, name)`), as
    /// `tessera index list` prints it.
    public var summary: String {
        guard let kind = try? IndexKinds.kind(of: type) else { return type.rawValue }
        return kind.summary(self)
    }

    var json: Value {
        var o: [String: Value] = ["name": .string(name), "type": .string(type.rawValue),
                                  "expressions": .array(expressions.map(Value.string))]
        if let w = whereClause { o["where"] = .string(w) }
        for (k, v) in options where !IndexDefinition.commonKeys.contains(k) { o[k] = v }
        return .object(o)
    }

    init?(json: Value) {
        guard let name = json["name"].stringValue, let t = json["type"].stringValue, case .object(let o) = json else { return nil }
        var options: [String: Value] = [:]
        for (k, v) in o where !IndexDefinition.commonKeys.contains(k) { options[k] = v }
        self.init(name: name, type: IndexType(rawValue: t), expressions: (json["expressions"].arrayValue ?? []).compactMap(\.stringValue),
                  whereClause: json["where"].stringValue, options: options)
    }
}
