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
        var d = IndexDefinition(name: name, type: .fullText, expressions: expressions, whereClause: whereClause)
        d.language = language ?? "en"
        d.ignoreAccents = ignoreAccents
        return d
    }
}


extension IndexDefinition {
    /// Full-text stemming and stop-word language: ISO code or English name; `""` = none.
    public var language: String? {
        get { options["language"]?.stringValue }
        set { options["language"] = newValue.map(Value.string) }
    }

    /// Full-text accent folding.
    public var ignoreAccents: Bool {
        get { options["ignoreAccents"]?.boolValue ?? false }
        set { options["ignoreAccents"] = newValue ? .bool(true) : nil }
    }
}
