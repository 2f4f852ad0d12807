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
        var d = IndexDefinition(name: name, type: .array, expressions: expressions ?? [])
        d.path = path
        return d
    }
}

extension IndexDefinition {
    /// The array path of an array index (`contacts[].phones`).
    public var path: String? {
        get { options["path"]?.stringValue }
        set { options["path"] = newValue.map(Value.string) }
    }
}
