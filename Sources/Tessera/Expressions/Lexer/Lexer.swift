// The SQL++ lexer (SPEC §2): UTF-8 bytes in, tokens with source locations out.
//
// No comments, no backslash escapes. Strings use '…' or "…" with the delimiter doubled
// inside; identifiers are `[A-Za-z_][A-Za-z0-9_$]*` or backticked with doubled backticks;
// parameters are `$name`. A `-` is always an operator here: the parser folds `-` followed by
// a number into a negative literal.

/// Splits SQL++ text into tokens.
struct Lexer {
    /// The text, as UTF-8.
    private let bytes: [UInt8]
    /// The text, for error messages.
    private let source: String
    /// Current byte offset.
    private var offset = 0
    /// Current 1-based line.
    private var line = 1
    /// Current 1-based column (Unicode scalars).
    private var column = 1

    private init(_ source: String) {
        self.source = source
        self.bytes = Array(source.utf8)
    }

    /// All tokens of `text`, ending with one `.end` token.
    ///
    /// - Throws: `QueryError` of kind `.syntax` for a character or literal outside §2.
    static func tokenize(_ text: String) throws(QueryError) -> [Token] {
        var lexer = Lexer(text)
        var tokens: [Token] = []
        tokens.reserveCapacity(lexer.bytes.count / 3 + 2)
        while true {
            let t = try lexer.next()
            tokens.append(t)
            if case .end = t.kind { return tokens }
        }
    }

    // MARK: - Scanning

    private var location: SourceLocation { SourceLocation(offset: offset, line: line, column: column) }

    private func peek(_ ahead: Int = 0) -> UInt8? {
        let j = offset + ahead
        return j < bytes.count ? bytes[j] : nil
    }

    private mutating func advance() {
        let b = bytes[offset]
        offset += 1
        if b == 0x0A {
            line += 1
            column = 1
        } else if b & 0xC0 != 0x80 {
            column += 1
        }
    }

    private func text(_ from: Int, _ to: Int) -> String {
        String(decoding: bytes[from..<to], as: UTF8.self)
    }

    @inline(never)
    private func error(_ message: String, at loc: SourceLocation, token: String?) -> QueryError {
        QueryError(.syntax, message, at: loc, token: token, source: source)
    }

    private static func isIdentStart(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F
    }
    private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
    private static func isIdentChar(_ b: UInt8) -> Bool { isIdentStart(b) || isDigit(b) || b == 0x24 }

    private mutating func next() throws(QueryError) -> Token {
        // Whitespace: space, TAB, CR, LF.
        while let b = peek(), b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0A { advance() }
        let start = location
        guard let b = peek() else {
            return Token(kind: .end, text: "", location: start, endOffset: offset)
        }
        if Lexer.isIdentStart(b) {
            while let c = peek(), Lexer.isIdentChar(c) { advance() }
            let name = text(start.offset, offset)
            if let k = Keyword.reserved(name) {
                return Token(kind: .keyword(k), text: name, location: start, endOffset: offset)
            }
            return Token(kind: .identifier, text: name, location: start, endOffset: offset)
        }
        if Lexer.isDigit(b) || (b == 0x2E && peek(1).map(Lexer.isDigit) == true) {
            return try number(start)
        }
        switch b {
        case 0x27, 0x22: return try quoted(start, delimiter: b, kind: .string)
        case 0x60: return try quoted(start, delimiter: b, kind: .quotedIdentifier)
        case 0x24: return try parameter(start)
        default: return try symbol(start, b)
        }
    }

    private mutating func number(_ start: SourceLocation) throws(QueryError) -> Token {
        var isInteger = true
        while let c = peek(), Lexer.isDigit(c) { advance() }
        if peek() == 0x2E {
            isInteger = false
            advance()
            while let c = peek(), Lexer.isDigit(c) { advance() }
        }
        if let e = peek(), e == 0x45 || e == 0x65 {
            isInteger = false
            advance()
            if let s = peek(), s == 0x2B || s == 0x2D { advance() }
            guard let d = peek(), Lexer.isDigit(d) else {
                throw error("malformed number: the exponent needs digits", at: start, token: text(start.offset, offset))
            }
            while let c = peek(), Lexer.isDigit(c) { advance() }
        }
        if let c = peek(), Lexer.isIdentChar(c) || c == 0x2E {
            while let c = peek(), Lexer.isIdentChar(c) || c == 0x2E { advance() }
            throw error("malformed number", at: start, token: text(start.offset, offset))
        }
        return Token(kind: isInteger ? .integer : .decimal, text: text(start.offset, offset), location: start, endOffset: offset)
    }

    /// A string (`'` or `"`) or a backticked identifier: the delimiter doubled inside stands
    /// for itself; there are no other escapes.
    private mutating func quoted(_ start: SourceLocation, delimiter: UInt8, kind: TokenKind) throws(QueryError) -> Token {
        advance()
        var value: [UInt8] = []
        var segment = offset
        while true {
            guard let c = peek() else {
                let what = kind == .string ? "unterminated string literal" : "unterminated quoted identifier"
                let shown = text(start.offset, min(bytes.count, start.offset + 20))
                throw error(what, at: start, token: shown)
            }
            if c == delimiter {
                value.append(contentsOf: bytes[segment..<offset])
                advance()
                if peek() == delimiter {
                    value.append(delimiter)
                    advance()
                    segment = offset
                    continue
                }
                break
            }
            advance()
        }
        return Token(kind: kind, text: String(decoding: value, as: UTF8.self), location: start, endOffset: offset)
    }

    private mutating func parameter(_ start: SourceLocation) throws(QueryError) -> Token {
        advance()
        guard let c = peek(), Lexer.isIdentStart(c) else {
            throw error("expected a parameter name after '$'", at: start, token: "$")
        }
        let nameStart = offset
        while let c = peek(), Lexer.isIdentStart(c) || Lexer.isDigit(c) { advance() }
        return Token(kind: .parameter, text: text(nameStart, offset), location: start, endOffset: offset)
    }

    private mutating func symbol(_ start: SourceLocation, _ b: UInt8) throws(QueryError) -> Token {
        let next = peek(1)
        var sym: Symbol
        var length = 1
        switch b {
        case 0x3D: // =
            if next == 0x3D { sym = .doubleEqual; length = 2 } else { sym = .equal }
        case 0x21: // !
            guard next == 0x3D else { throw error("unexpected character '!' (use NOT or !=)", at: start, token: "!") }
            sym = .notEqual; length = 2
        case 0x3C: // <
            if next == 0x3D { sym = .lessOrEqual; length = 2 }
            else if next == 0x3E { sym = .lessGreater; length = 2 }
            else if next == 0x3C { throw error("the bitwise operator '<<' is not supported", at: start, token: "<<") }
            else { sym = .less }
        case 0x3E: // >
            if next == 0x3D { sym = .greaterOrEqual; length = 2 }
            else if next == 0x3E { throw error("the bitwise operator '>>' is not supported", at: start, token: ">>") }
            else { sym = .greater }
        case 0x7C: // |
            guard next == 0x7C else { throw error("the bitwise operator '|' is not supported (use || to concatenate)", at: start, token: "|") }
            sym = .concat; length = 2
        case 0x26: throw error("the bitwise operator '&' is not supported (use AND)", at: start, token: "&")
        case 0x2B: sym = .plus
        case 0x2D: sym = .minus
        case 0x2A: sym = .star
        case 0x2F:
            if next == 0x2A || next == 0x2F {
                throw error("unexpected '/\(next == 0x2A ? "*" : "/")' (SQL++ has no comments)", at: start, token: next == 0x2A ? "/*" : "//")
            }
            sym = .slash
        case 0x25: sym = .percent
        case 0x2E: sym = .dot
        case 0x2C: sym = .comma
        case 0x28: sym = .leftParen
        case 0x29: sym = .rightParen
        case 0x5B: sym = .leftBracket
        case 0x5D: sym = .rightBracket
        case 0x7B: sym = .leftBrace
        case 0x7D: sym = .rightBrace
        case 0x3A: sym = .colon
        case 0x3B: sym = .semicolon
        default:
            // Decode the whole scalar for the message.
            var end = offset + 1
            while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
            let ch = text(offset, end)
            let hint = ch == "#" ? " (SQL++ has no comments)" : ""
            throw error("unexpected character '\(ch)'\(hint)", at: start, token: ch)
        }
        for _ in 0..<length { advance() }
        return Token(kind: .symbol(sym), text: sym.rawValue, location: start, endOffset: offset)
    }
}
