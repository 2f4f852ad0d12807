/// The kinds of index.
public enum IndexType: String, Sendable, Hashable {
    /// A value index over one or more expressions (optionally partial).
    case value
    /// An array index over the elements of a (nested) array, for UNNEST.
    case array
    /// A full-text index.
    case fullText = "fulltext"
}

/// A stored index definition: what the catalogue persists and what `index(withName:)` reports.
public struct IndexDefinition: Sendable, Hashable {
    /// The index name (unique per collection).
    public var name: String
    /// The kind of index.
    public var type: IndexType
    /// The indexed expressions as SQL++ text (value, full-text; array: per-element expressions).
    public var expressions: [String]
    /// The partial-index condition (value and full-text only).
    public var whereClause: String?
    /// The array path (array indexes).
    public var path: String?
    /// Full-text language ("" = none).
    public var language: String?
    /// Full-text accent folding.
    public var ignoreAccents: Bool

    /// Creates a definition.
    public init(name: String, type: IndexType, expressions: [String], whereClause: String? = nil,
                path: String? = nil, language: String? = nil, ignoreAccents: Bool = false) {
        self.name = name
        self.type = type
        self.expressions = expressions
        self.whereClause = whereClause
        self.path = path
        self.language = language
        self.ignoreAccents = ignoreAccents
    }

    var json: Value {
        var o: [String: Value] = ["name": .string(name), "type": .string(type.rawValue),
                                  "expressions": .array(expressions.map(Value.string))]
        if let w = whereClause { o["where"] = .string(w) }
        if let p = path { o["path"] = .string(p) }
        if let l = language { o["language"] = .string(l) }
        if ignoreAccents { o["ignoreAccents"] = .bool(true) }
        return .object(o)
    }

    init?(json: Value) {
        guard let name = json["name"].stringValue, let t = json["type"].stringValue, let type = IndexType(rawValue: t) else { return nil }
        self.init(name: name, type: type, expressions: (json["expressions"].arrayValue ?? []).compactMap(\.stringValue),
                  whereClause: json["where"].stringValue, path: json["path"].stringValue,
                  language: json["language"].stringValue, ignoreAccents: json["ignoreAccents"].boolValue ?? false)
    }
}
