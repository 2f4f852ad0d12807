/// An error in a query (or an index expression): what went wrong and where.
///
/// `kind` is `.syntax` for text outside the grammar and `.semantic` for valid syntax that
/// cannot run; the same strings are used by conformance fixtures (`"error": "syntax"`).
/// `description` renders the message with the source line and a caret under the token.
public struct QueryError: Error, Sendable, CustomStringConvertible {
    /// The class of error.
    public enum Kind: String, Sendable, Hashable {
        /// The text is not valid SQL++.
        case syntax
        /// Valid syntax that cannot run (unknown function, arity, unknown alias or index, …).
        case semantic
        /// A failure while running (for example a full-text query string error).
        case runtime
    }

    /// The class of error.
    public var kind: Kind
    /// A one-line explanation.
    public var message: String
    /// Where in `source` the error is, when known.
    public var location: SourceLocation?
    /// The offending token's text, when known.
    public var token: String?
    /// The query text the location refers to.
    public var source: String?

    /// Creates an error.
    public init(_ kind: Kind, _ message: String, at location: SourceLocation? = nil, token: String? = nil, source: String? = nil) {
        self.kind = kind
        self.message = message
        self.location = location
        self.token = token
        self.source = source
    }

    /// `kind error at line L, column C: message`, then the source line and a caret.
    public var description: String {
        var out = "\(kind.rawValue) error"
        if let location, location.line > 0 { out += " at \(location)" }
        out += ": \(message)"
        if let token, !token.isEmpty { out += " (near '\(token)')" }
        if let location, location.line > 0, let source {
            let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
            if location.line - 1 < lines.count {
                let line = lines[location.line - 1]
                out += "\n  " + line
                out += "\n  " + String(repeating: " ", count: max(0, location.column - 1)) + "^"
            }
        }
        return out
    }
}
