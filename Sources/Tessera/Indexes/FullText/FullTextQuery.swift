/// A parsed full-text query (SPEC §10.3): the second argument of `MATCH(index, query)`.
///
/// | Syntax | Meaning |
/// |---|---|
/// | `couchbase database` | both terms (implicit AND) |
/// | `a AND b`, `a OR b`, `a NOT b` | upper case only; NOT is binary: a without b |
/// | `( … )` | grouping; precedence NEAR > NOT > AND (explicit or implicit) > OR |
/// | `"linux applications"` | phrase: consecutive tokens in order |
/// | `lin*` | prefix (also inside phrases); never dropped as a stop word |
/// | `a NEAR b`, `a NEAR/3 b` | at most 10 (or n) tokens between; operands are terms, prefixes, phrases |
/// | `title:linux`, `title: (a OR b)` | limited to the column of expression `title` |
///
/// Lower-case `and`, `or`, `not`, `near` are ordinary words; a leading `-` is not an operator
/// (`-foo` is the term `foo`). Parsing is purely syntactic; `compile(tokenizer:columns:)`
/// then runs every word through the index's tokenizer and resolves column names.
///
/// ```swift
/// let q = try FullTextQuery.parse(#"("couchbase database" OR "sqlite library") AND linux"#)
/// q.root.description   // AND(OR("couchbase database", "sqlite library"), linux)
/// ```
package struct FullTextQuery: Sendable, Hashable, CustomStringConvertible {
    /// The query's syntax tree.
    var root: Node
    /// The query text.
    var source: String

    /// A node of the syntax tree. Words and phrases keep their raw text; the tokenizer runs
    /// at compile time.
    indirect enum Node: Sendable, Hashable, CustomStringConvertible {
        /// A bare word as written (`linux`, `lin*`, `don't`); a trailing `*` makes its last
        /// token a prefix.
        case word(String, location: SourceLocation)
        /// A quoted phrase's content (`linux applications`, `lin* app*`).
        case phrase(String, location: SourceLocation)
        /// All operands (explicit or implicit AND).
        case and([Node])
        /// Any operand.
        case or([Node])
        /// The left operand without the right one.
        case not(Node, Node)
        /// Operands in a chain, each pair within its distance: `a NEAR/3 b NEAR c` is
        /// `.near([a, b, c], distances: [3, 10])`.
        case near([Node], distances: [Int])
        /// An operand limited to one column (`title:linux`).
        case column(String, Node, location: SourceLocation)

        /// An S-expression: `AND(a, OR(b, "c d"), NOT(e, f*), NEAR/3(g, h), title:i)`.
        var description: String {
            switch self {
            case .word(let w, _): return w
            case .phrase(let p, _): return "\"\(p)\""
            case .and(let xs): return "AND(" + xs.map(\.description).joined(separator: ", ") + ")"
            case .or(let xs): return "OR(" + xs.map(\.description).joined(separator: ", ") + ")"
            case .not(let a, let b): return "NOT(\(a), \(b))"
            case .near(let xs, let ds):
                if let d = ds.first, ds.allSatisfy({ $0 == d }) {
                    return "NEAR/\(d)(" + xs.map(\.description).joined(separator: ", ") + ")"
                }
                var s = "NEAR(" + xs[0].description
                for (d, x) in zip(ds, xs.dropFirst()) { s += " /\(d) \(x)" }
                return s + ")"
            case .column(let c, let x, _): return "\(c):\(x)"
            }
        }
    }

    /// Creates a query from a syntax tree.
    init(root: Node, source: String) {
        self.root = root
        self.source = source
    }

    /// The syntax tree's S-expression.
    package var description: String { root.description }

    /// Parses a full-text query string.
    ///
    /// - Throws: `QueryError` of kind `.syntax`, located within `text`, for an empty query,
    ///   unbalanced parentheses, an operator without an operand, an unterminated quote, a bad
    ///   `NEAR/n`, or a `NEAR` operand that is not a term, prefix or phrase.
    package static func parse(_ text: String) throws -> FullTextQuery {
        var parser = FullTextQueryParser(text)
        return FullTextQuery(root: try parser.parseQuery(), source: text)
    }

    /// Turns raw user input into a safe query: every word becomes a term (or a prefix, when
    /// `*` directly follows it), with no operators, quotes, parentheses or columns, so the
    /// result always parses (unless it is empty) and matches documents holding all the words.
    ///
    /// ```swift
    /// FullTextQuery.safePattern(fromUserText: #"Don't "panic" (NOT now) lin* title:x"#)
    /// // "Don t panic not now lin* title x"
    /// ```
    ///
    /// Words are split exactly as the tokenizer splits text; upper-case `AND OR NOT NEAR`
    /// are lower-cased so they become plain words. Returns `""` for input without words.
    static func safePattern(fromUserText text: String) -> String {
        var words: [String] = []
        var current = String.UnicodeScalarView()
        var pendingPrefix = false
        func finish() {
            guard !current.isEmpty else { return }
            var w = String(current)
            if w == "AND" || w == "OR" || w == "NOT" || w == "NEAR" { w = w.lowercased() }
            words.append(pendingPrefix ? w + "*" : w)
            current = String.UnicodeScalarView()
            pendingPrefix = false
        }
        var afterWord = false
        for s in text.unicodeScalars {
            switch FullTextUnicode.scalarClass(s) {
            case .token:
                current.append(s)
                afterWord = true
            case .mark where !current.isEmpty:
                current.append(s)
            default:
                if s == "*" && afterWord && !current.isEmpty { pendingPrefix = true }
                finish()
                afterWord = false
            }
        }
        finish()
        return words.joined(separator: " ")
    }
}

// MARK: - Lexer and parser

/// The recursive-descent parser of full-text query strings (over UTF-8 bytes).
struct FullTextQueryParser {
    enum Kind: Equatable {
        case word(String)
        case phrase(String)
        case column(String)
        case lparen, rparen, and, or, not
        case near(Int)
        case end
    }

    struct Token {
        var kind: Kind
        /// UTF-8 offset in the source.
        var offset: Int
        /// The token as written.
        var text: String
    }

    let source: String
    let bytes: [UInt8]
    var tokens: [Token] = []
    var index = 0
    /// Height of the tree above the operand being parsed: groups, column filters and NOT
    /// operators. Bounded so that no query text can exhaust the stack (here or in the
    /// recursive passes over the tree that follow).
    var depth = 0
    static let maxDepth = 256

    init(_ source: String) {
        self.source = source
        self.bytes = Array(source.utf8)
    }

    // MARK: Errors and locations

    /// Where the last node location was computed: node offsets only grow, so each scan
    /// starts there instead of at the start of the text (which made long queries quadratic).
    var scanned = SourceLocation(offset: 0, line: 1, column: 1)

    /// The location of a node at `offset`, continuing the scan of earlier nodes.
    mutating func nodeLocation(_ offset: Int) -> SourceLocation {
        let from = offset >= scanned.offset ? scanned : SourceLocation(offset: 0, line: 1, column: 1)
        let here = location(offset, from: from)
        scanned = here
        return here
    }

    /// Line and column (in scalars, 1-based) of a UTF-8 offset, scanning from `from`.
    func location(_ offset: Int, from: SourceLocation = SourceLocation(offset: 0, line: 1, column: 1)) -> SourceLocation {
        var line = from.line
        var column = from.column
        var i = from.offset
        while i < offset && i < bytes.count {
            let b = bytes[i]
            if b == 0x0A {
                line += 1
                column = 1
            } else if b & 0xC0 != 0x80 {
                column += 1
            }
            i += 1
        }
        return SourceLocation(offset: offset, line: line, column: column)
    }

    @inline(never)
    func error(_ message: String, at offset: Int, token: String?) -> QueryError {
        QueryError(.syntax, message, at: location(offset), token: token, source: source)
    }

    // MARK: Lexer

    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }

    mutating func lex() throws(QueryError) {
        var i = 0
        let n = bytes.count
        while i < n {
            let b = bytes[i]
            if FullTextQueryParser.isSpace(b) {
                i += 1
                continue
            }
            switch b {
            case UInt8(ascii: "("):
                tokens.append(Token(kind: .lparen, offset: i, text: "("))
                i += 1
            case UInt8(ascii: ")"):
                tokens.append(Token(kind: .rparen, offset: i, text: ")"))
                i += 1
            case UInt8(ascii: "\""):
                guard let close = bytes[(i + 1)...].firstIndex(of: UInt8(ascii: "\"")) else {
                    throw error("unterminated phrase: missing closing quote", at: i,
                                token: String(decoding: bytes[i...].prefix(20), as: UTF8.self))
                }
                let content = String(decoding: bytes[(i + 1)..<close], as: UTF8.self)
                tokens.append(Token(kind: .phrase(content), offset: i, text: "\"" + content + "\""))
                i = close + 1
            default:
                var j = i
                while j < n {
                    let c = bytes[j]
                    if FullTextQueryParser.isSpace(c) || c == UInt8(ascii: "(") || c == UInt8(ascii: ")")
                        || c == UInt8(ascii: "\"")
                    {
                        break
                    }
                    j += 1
                }
                try lexWord(from: i, to: j)
                i = j
            }
        }
        tokens.append(Token(kind: .end, offset: n, text: ""))
    }

    mutating func lexWord(from start: Int, to end: Int) throws(QueryError) {
        let text = String(decoding: bytes[start..<end], as: UTF8.self)
        switch text {
        case "AND": tokens.append(Token(kind: .and, offset: start, text: text)); return
        case "OR": tokens.append(Token(kind: .or, offset: start, text: text)); return
        case "NOT": tokens.append(Token(kind: .not, offset: start, text: text)); return
        case "NEAR":
            tokens.append(Token(kind: .near(FullTextSearch.defaultNearDistance), offset: start, text: text))
            return
        default: break
        }
        if text.hasPrefix("NEAR/") {
            let digits = text.dropFirst(5)
            guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), digits.count <= 9,
                let d = Int(digits)
            else {
                throw error("invalid NEAR distance: expected NEAR/n with n a non-negative integer", at: start, token: text)
            }
            tokens.append(Token(kind: .near(d), offset: start, text: text))
            return
        }
        // `column:rest` — the column applies to `rest`, or to the next operand if `rest` is empty.
        if let colon = bytes[start..<end].firstIndex(of: UInt8(ascii: ":")), colon > start {
            let name = String(decoding: bytes[start..<colon], as: UTF8.self)
            tokens.append(Token(kind: .column(name), offset: start, text: name + ":"))
            if colon + 1 < end {
                let rest = String(decoding: bytes[(colon + 1)..<end], as: UTF8.self)
                tokens.append(Token(kind: .word(rest), offset: colon + 1, text: rest))
            }
            return
        }
        tokens.append(Token(kind: .word(text), offset: start, text: text))
    }

    // MARK: Parser

    var peek: Token { tokens[index] }

    mutating func advance() -> Token {
        let t = tokens[index]
        if index < tokens.count - 1 { index += 1 }
        return t
    }

    static func startsOperand(_ k: Kind) -> Bool {
        switch k {
        case .word, .phrase, .column, .lparen: true
        default: false
        }
    }

    /// After an operator token: the next token must start an operand.
    func requireOperand(after op: Token) throws(QueryError) {
        guard FullTextQueryParser.startsOperand(peek.kind) else {
            throw error("\(op.text) must be followed by a term, phrase or group", at: op.offset, token: op.text)
        }
    }

    mutating func parseQuery() throws(QueryError) -> FullTextQuery.Node {
        try lex()
        if peek.kind == .end { throw error("empty full-text query", at: 0, token: nil) }
        let node = try parseOr()
        if peek.kind != .end {
            let t = peek
            if t.kind == .rparen { throw error("unbalanced parentheses: unexpected ')'", at: t.offset, token: t.text) }
            throw error("unexpected \(t.text)", at: t.offset, token: t.text)
        }
        return node
    }

    mutating func parseOr() throws(QueryError) -> FullTextQuery.Node {
        var items = [try parseAnd()]
        while peek.kind == .or {
            let op = advance()
            try requireOperand(after: op)
            items.append(try parseAnd())
        }
        return items.count == 1 ? items[0] : .or(items)
    }

    mutating func parseAnd() throws(QueryError) -> FullTextQuery.Node {
        var items = [try parseNot()]
        while true {
            if peek.kind == .and {
                let op = advance()
                try requireOperand(after: op)
                items.append(try parseNot())
            } else if FullTextQueryParser.startsOperand(peek.kind) {
                items.append(try parseNot())
            } else {
                break
            }
        }
        return items.count == 1 ? items[0] : .and(items)
    }

    mutating func parseNot() throws(QueryError) -> FullTextQuery.Node {
        var left = try parseNear()
        let outer = depth
        defer { depth = outer }
        while peek.kind == .not {
            let op = advance()
            try requireOperand(after: op)
            try deeper(at: op)
            left = .not(left, try parseNear())
        }
        return left
    }

    /// One more level of tree height; an error past `maxDepth`.
    mutating func deeper(at t: Token) throws(QueryError) {
        depth += 1
        if depth > FullTextQueryParser.maxDepth {
            throw error("full-text query nested too deeply (more than \(FullTextQueryParser.maxDepth) levels)", at: t.offset, token: t.text)
        }
    }

    mutating func parseNear() throws(QueryError) -> FullTextQuery.Node {
        let first = try parsePrimary()
        guard case .near = peek.kind else { return first }
        var operands = [first]
        var distances: [Int] = []
        while case .near(let d) = peek.kind {
            let op = advance()
            guard FullTextQueryParser.isNearOperand(operands[operands.count - 1]) else {
                throw error("NEAR operands must be terms, prefixes or phrases", at: op.offset, token: op.text)
            }
            try requireOperand(after: op)
            let next = try parsePrimary()
            guard FullTextQueryParser.isNearOperand(next) else {
                throw error("NEAR operands must be terms, prefixes or phrases", at: op.offset, token: op.text)
            }
            operands.append(next)
            distances.append(d)
        }
        return .near(operands, distances: distances)
    }

    static func isNearOperand(_ n: FullTextQuery.Node) -> Bool {
        switch n {
        case .word, .phrase: true
        case .column(_, let inner, _): isNearOperand(inner)
        default: false
        }
    }

    mutating func parsePrimary() throws(QueryError) -> FullTextQuery.Node {
        let t = advance()
        switch t.kind {
        case .word(let w):
            return .word(w, location: nodeLocation(t.offset))
        case .phrase(let p):
            return .phrase(p, location: nodeLocation(t.offset))
        case .column(let name):
            guard FullTextQueryParser.startsOperand(peek.kind) else {
                throw error("'\(name):' must be followed by a term, phrase or group", at: t.offset, token: t.text)
            }
            try deeper(at: t)
            defer { depth -= 1 }
            let here = nodeLocation(t.offset)
            return .column(name, try parsePrimary(), location: here)
        case .lparen:
            if peek.kind == .rparen { throw error("empty parentheses", at: t.offset, token: "()") }
            try deeper(at: t)
            defer { depth -= 1 }
            let inner = try parseOr()
            guard peek.kind == .rparen else {
                if peek.kind == .end {
                    throw error("unbalanced parentheses: '(' is never closed", at: t.offset, token: "(")
                }
                throw error("unexpected \(peek.text)", at: peek.offset, token: peek.text)
            }
            _ = advance()
            return inner
        case .rparen:
            throw error("unbalanced parentheses: unexpected ')'", at: t.offset, token: t.text)
        case .and, .or, .not, .near:
            throw error("\(t.text) needs a term before it", at: t.offset, token: t.text)
        case .end:
            throw error("unexpected end of query", at: t.offset, token: nil)
        }
    }
}
