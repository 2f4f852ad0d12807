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

    /// `kind error at line L, column C: message`, then the source line and a caret. In a
    /// long line only the text around the error is quoted (`…` marks what is left out), and a
    /// long token is shortened: an error in a 1 MB query does not echo the whole query.
    public var description: String {
        var out = "\(kind.rawValue) error"
        if let location, location.line > 0 { out += " at \(location)" }
        out += ": \(message)"
        if let token, !token.isEmpty { out += " (near '\(QueryError.shortened(token))')" }
        if let location, location.line > 0, let source {
            let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
            if location.line - 1 < lines.count {
                let (line, caret) = QueryError.excerpt(lines[location.line - 1], column: location.column)
                out += "\n  " + line
                out += "\n  " + String(repeating: " ", count: caret) + "^"
            }
        }
        return out
    }

    /// Characters of context quoted on each side of the error position.
    static let context = 60

    /// `token`, or its first characters and `…` when it is long.
    static func shortened(_ token: String) -> String {
        let scalars = token.unicodeScalars
        guard scalars.count > 2 * context else { return token }
        return String(String.UnicodeScalarView(scalars.prefix(2 * context))) + "…"
    }

    /// The part of `line` around 1-based `column` (in Unicode scalars) and the caret's offset in it.
    static func excerpt(_ line: Substring, column: Int) -> (String, Int) {
        let scalars = Array(line.unicodeScalars)
        let at = max(0, column - 1)
        guard scalars.count > 2 * context + 20 else { return (String(line), at) }
        let start = max(0, at - context), end = min(scalars.count, at + context)
        var text = String(String.UnicodeScalarView(scalars[start..<end]))
        var caret = at - start
        if start > 0 { text = "…" + text; caret += 1 }
        if end < scalars.count { text += "…" }
        return (text, caret)
    }
}
