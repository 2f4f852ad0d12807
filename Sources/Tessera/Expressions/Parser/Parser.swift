// The SQL++ parser: hand-written recursive descent for statements, precedence climbing
// (Pratt) for expressions. Grammar and precedence: SPEC §3; lexical rules: SPEC §2.
//
// The parser builds the AST of AST.swift and reports only *syntax* errors. Things that are
// syntactically well formed but wrong (a CROSS JOIN with ON, an INNER JOIN without ON, an
// UNNEST of a non-path, an unknown function or meta key, MATCH with three arguments) are
// represented faithfully so that the analyzer can report them as *semantic* errors.

/// Parser state over the token array of one text (a class: `self` is then one pointer, where a
/// struct would be copied onto the stack at every non-mutating call in debug builds).
final class Parser {
    /// The text being parsed (for error messages).
    let source: String
    /// The text as UTF-8 (token spellings for error messages).
    let utf8: [UInt8]
    /// All tokens, ending with `.end`.
    let tokens: [Token]
    /// The kinds of `tokens` (cheap to inspect: no String copies).
    let kinds: [TokenKind]
    /// Index of the current token.
    var index = 0
    /// Current expression nesting (recursion) depth.
    var depth = 0

    /// Deepest expression nesting accepted (parentheses, operands, arguments, …).
    static let maxDepth = 256
    /// Tallest expression tree accepted (long operator chains make tall left-deep trees).
    static let maxHeight = 1000
    /// Most arguments a function call may have.
    static let maxArguments = 127

    /// An expression and the height of its tree.
    typealias Node = (expr: Expr, height: Int)

    /// Tokenizes `source`.
    init(_ source: String) throws {
        self.source = source
        self.utf8 = Array(source.utf8)
        self.tokens = try Lexer.tokenize(source)
        self.kinds = tokens.map(\.kind)
    }

    // MARK: - Tokens

    /// The current token.
    var current: Token { tokens[index] }

    /// The token `n` places ahead (the `.end` token past the end).
    func peek(_ n: Int = 1) -> Token { tokens[min(index + n, tokens.count - 1)] }

    /// True at the end of the text.
    var atEnd: Bool { if case .end = current.kind { true } else { false } }

    /// The current token's kind.
    var kind: TokenKind { kinds[index] }

    /// The kind of the token `n` places ahead (`.end` past the end).
    func kind(_ n: Int) -> TokenKind { kinds[min(index + n, kinds.count - 1)] }

    /// True when the current token is the symbol.
    func at(_ s: Symbol) -> Bool { kinds[index] == .symbol(s) }

    /// True when the current token is the reserved word.
    func at(_ k: Keyword) -> Bool { kinds[index] == .keyword(k) }

    /// Moves to the next token.
    func skip() {
        if index < kinds.count - 1 { index += 1 }
    }

    /// Consumes the symbol or fails with "expected `what`".
    func require(_ s: Symbol, _ what: String) throws {
        guard at(s) else { throw unexpected(what) }
        skip()
    }

    /// Consumes the reserved word or fails with "expected `what`".
    func require(_ k: Keyword, _ what: String) throws {
        guard at(k) else { throw unexpected(what) }
        skip()
    }

    /// Moves to the next token and returns the one left behind.
    @discardableResult
    func advance() -> Token {
        let t = tokens[index]
        if index < tokens.count - 1 { index += 1 }
        return t
    }

    /// Consumes the symbol if it is current.
    func accept(_ s: Symbol) -> Bool {
        if current.isSymbol(s) { advance(); return true }
        return false
    }

    /// Consumes the reserved word if it is current.
    func accept(_ k: Keyword) -> Bool {
        if current.isKeyword(k) { advance(); return true }
        return false
    }

    /// Consumes the symbol or fails with "expected …".
    @discardableResult
    func expect(_ s: Symbol, _ what: String? = nil) throws -> Token {
        guard current.isSymbol(s) else { throw unexpected(what ?? "'\(s.rawValue)'") }
        return advance()
    }

    /// Consumes the reserved word or fails with "expected …".
    @discardableResult
    func expect(_ k: Keyword, _ what: String? = nil) throws -> Token {
        guard current.isKeyword(k) else { throw unexpected(what ?? k.rawValue) }
        return advance()
    }

    // MARK: - Errors

    /// The token as written in the source.
    func spelling(_ t: Token) -> String {
        if case .end = t.kind { return "" }
        let a = max(0, min(t.location.offset, utf8.count)), b = max(a, min(t.endOffset, utf8.count))
        return String(decoding: utf8[a..<b], as: UTF8.self)
    }

    /// A phrase naming the token for messages.
    func describe(_ t: Token) -> String {
        switch t.kind {
        case .end: return "end of query"
        case .string: return "string \(spelling(t))"
        case .integer, .decimal: return "number \(spelling(t))"
        case .parameter: return "parameter \(spelling(t))"
        case .keyword: return "'\(asciiUppercased(t.text))'"
        default: return "'\(spelling(t))'"
        }
    }

    /// A syntax error at token `t`.
    @inline(never)
    func error(_ message: String, at t: Token) -> QueryError {
        QueryError(.syntax, message, at: t.location, token: spelling(t), source: source)
    }

    /// A syntax error at the current token.
    @inline(never)
    func error(_ message: String) -> QueryError { error(message, at: current) }

    /// "expected X, found Y" at the current token, or a specific message for words that
    /// start unsupported constructs (UNION, NEST, infix MATCH, …).
    @inline(never)
    func unexpected(_ expected: String) -> QueryError {
        if let m = unsupportedConstruct(current) { return error(m) }
        return error("expected \(expected), found \(describe(current))")
    }

    /// A message for a token that begins a construct SQL++ for mobile does not have.
    func unsupportedConstruct(_ t: Token) -> String? {
        switch t.kind {
        case .keyword(.right): return "RIGHT JOIN is not supported (swap the sources and use LEFT JOIN)"
        case .keyword(.natural): return "NATURAL JOIN is not supported (use JOIN … ON)"
        case .keyword(.using): return "JOIN … USING is not supported (use JOIN … ON)"
        case .identifier:
            switch asciiUppercased(t.text) {
            case "MATCH": return "infix MATCH is not supported (use MATCH(indexName, query))"
            case "REGEXP", "RLIKE": return "there is no \(asciiUppercased(t.text)) operator (use REGEXP_LIKE(string, pattern))"
            case "NEST", "UNNEST": return "NEST is not supported"
            case "UNION", "INTERSECT", "EXCEPT", "MINUS": return "\(asciiUppercased(t.text)) is not supported"
            case "FULL": return "FULL JOIN is not supported"
            case "USE": return "USE KEYS / USE INDEX is not supported"
            case "LET", "LETTING": return "\(asciiUppercased(t.text)) is not supported"
            case "ESCAPE": return "LIKE … ESCAPE is not supported (the escape character is always '\\')"
            default: return nil
            }
        default: return nil
        }
    }

    // MARK: - Names

    /// An identifier (plain or backticked) used as a name; a reserved word gets a hint.
    func name(_ what: String) throws -> Token {
        if current.isIdentifier { return advance() }
        if case .keyword = current.kind {
            throw error("'\(current.text)' is a reserved word; put it in backticks (`\(current.text)`) to use it as \(what)")
        }
        throw unexpected(what)
    }

    /// The text of an identifier used as a name (see `name(_:)`).
    func nameText(_ what: String) throws -> String {
        if kind == .identifier || kind == .quotedIdentifier { return advance().text }
        return try name(what).text
    }

    /// An optional `[AS] alias`. Without AS, an identifier is taken as the alias unless it is a
    /// word that starts an unsupported construct and `followers` says it cannot be an alias.
    func optionalAlias(followers: (Token) -> Bool) throws -> String? {
        if accept(.as) { return try name("an alias").text }
        guard current.isIdentifier else { return nil }
        if current.kind == .identifier, let m = unsupportedConstruct(current) {
            let next = peek()
            let fullJoin = current.isWord("FULL") && (next.isKeyword(.join) || next.isKeyword(.outer))
            if fullJoin || !followers(next) { throw error(m) }
        }
        return advance().text
    }
}

// MARK: - Statements

extension Parser {
    /// `statement [;]` up to the end of the text.
    func statement() throws -> SelectStatement {
        guard current.isKeyword(.select) else {
            if current.kind == .identifier {
                let w = asciiUppercased(current.text)
                if w == "EXPLAIN" { throw error("EXPLAIN is not supported in SQL++ text (use Query.explain())") }
                let others: Set<String> = ["INSERT", "UPDATE", "DELETE", "UPSERT", "MERGE", "CREATE", "DROP", "ALTER",
                                           "PREPARE", "EXECUTE", "GRANT", "REVOKE", "BUILD", "INFER", "WITH"]
                if others.contains(w) { throw error("only SELECT statements are supported (not \(w))") }
            }
            throw unexpected("SELECT")
        }
        advance()
        var distinct = false
        if accept(.distinct) {
            distinct = true
        } else if current.isWord("ALL"), !isResultEnd(peek()) || startsArrayLiteral(after: 1) {
            advance()
        }
        if current.isWord("VALUE") || current.isWord("RAW") || current.isWord("ELEMENT"), startsExpression(peek().kind) {
            throw error("SELECT \(asciiUppercased(current.text)) is not supported")
        }
        var columns: [ResultColumn] = []
        repeat {
            columns.append(try resultColumn())
        } while accept(.comma)

        guard current.isKeyword(.from) else {
            switch current.kind {
            case .end, .symbol(.semicolon), .keyword(.where), .keyword(.group), .keyword(.order),
                 .keyword(.limit), .keyword(.offset), .keyword(.having):
                throw error("a SELECT statement needs a FROM clause")
            default:
                throw unexpected("',' or FROM")
            }
        }
        advance()
        var stmt = SelectStatement(from: try dataSource())
        stmt.distinct = distinct
        stmt.columns = columns

        // JOINs and UNNESTs, in any order.
        while true {
            if let item = try joinOrUnnest() { stmt.joins.append(item) } else { break }
        }
        try clauses(&stmt)
        return stmt
    }

    /// True when the token at offset `n` is a `[` that opens an array literal rather than an
    /// index step (`[3]`, `[-1]`): `SELECT ALL [a, b]` selects an array, `SELECT ALL[0]` reads
    /// element 0 of the property `ALL`.
    private func startsArrayLiteral(after n: Int) -> Bool {
        guard case .symbol(.leftBracket) = peek(n).kind else { return false }
        var i = n + 1
        if case .symbol(.minus) = peek(i).kind { i += 1 }
        if peek(i).kind == .integer, case .symbol(.rightBracket) = peek(i + 1).kind { return false }
        return true
    }

    /// True for tokens that may follow a result column (so the word before was not `ALL`).
    private func isResultEnd(_ t: Token) -> Bool {
        switch t.kind {
        case .symbol(.comma), .symbol(.dot), .symbol(.leftBracket), .keyword(.from), .keyword(.as), .end: true
        default: false
        }
    }

    /// True for tokens that can start an expression.
    func startsExpression(_ kind: TokenKind) -> Bool {
        switch kind {
        case .identifier, .quotedIdentifier, .string, .integer, .decimal, .parameter: return true
        case .keyword(let k): return [.true, .false, .null, .missing, .case, .any, .every, .not].contains(k)
        case .symbol(let s): return [.leftParen, .leftBracket, .leftBrace, .minus, .plus].contains(s)
        case .end: return false
        }
    }

    /// `*`, `alias.*` or `expr`, each with an optional `[AS] alias`.
    private func resultColumn() throws -> ResultColumn {
        let followers: (Token) -> Bool = { t in
            switch t.kind {
            case .symbol(.comma), .keyword(.from): true
            default: false
            }
        }
        if accept(.star) {
            return .star(source: nil, alias: try optionalAlias(followers: followers))
        }
        if current.isIdentifier, peek().isSymbol(.dot), peek(2).isSymbol(.star) {
            let source = advance().text
            advance(); advance()
            return .star(source: source, alias: try optionalAlias(followers: followers))
        }
        let e = try expression()
        return .expression(e, alias: try optionalAlias(followers: followers))
    }

    /// True for tokens that may follow a data source (so the word before it was an alias).
    private static func followsSource(_ t: Token) -> Bool {
        switch t.kind {
        case .keyword(let k):
            return [.join, .inner, .left, .cross, .right, .natural, .unnest, .where, .group, .having,
                    .order, .limit, .offset, .on, .using].contains(k)
        case .symbol(.comma), .symbol(.semicolon), .end: return true
        default: return false
        }
    }

    /// `name['.'name] [[AS] alias]`.
    private func dataSource() throws -> DataSourceReference {
        if current.isSymbol(.leftParen), peek().isKeyword(.select) {
            throw error("subqueries are not supported")
        }
        let first = try name("a collection name")
        var ref = DataSourceReference(collection: first.text, location: first.location)
        if accept(.dot) {
            let second = try name("a collection name")
            ref.scope = first.text
            ref.collection = second.text
            if current.isSymbol(.dot) {
                throw error("a data source is 'collection' or 'scope.collection'")
            }
        }
        ref.alias = try optionalAlias(followers: Parser.followsSource)
        return ref
    }

    /// One `JOIN` or `UNNEST`, or nil when none follows.
    private func joinOrUnnest() throws -> FromClauseItem? {
        let t = current
        let kind: JoinKind
        switch t.kind {
        case .keyword(.join):
            kind = .inner
        case .keyword(.inner):
            advance()
            guard current.isKeyword(.join) else { throw unexpected("JOIN after INNER") }
            kind = .inner
        case .keyword(.left):
            advance()
            _ = accept(.outer)
            guard current.isKeyword(.join) else { throw unexpected("JOIN after LEFT [OUTER]") }
            kind = .leftOuter
        case .keyword(.cross):
            advance()
            guard current.isKeyword(.join) else { throw unexpected("JOIN after CROSS") }
            kind = .cross
        case .keyword(.outer):
            throw error("OUTER JOIN must be written LEFT OUTER JOIN")
        case .keyword(.right), .keyword(.natural):
            throw error(unsupportedConstruct(t)!)
        case .identifier where t.isWord("FULL") || t.isWord("NEST"):
            throw error(unsupportedConstruct(t)!)
        case .symbol(.comma):
            throw error("comma joins are not supported (use JOIN … ON or UNNEST)")
        case .keyword(.unnest):
            advance()
            let loc = current.location
            let path = try expression()
            let alias = try optionalAlias(followers: Parser.followsSource)
            return .unnest(path, alias: alias, loc)
        default:
            return nil
        }
        advance() // JOIN
        let source = try dataSource()
        var on: Expr?
        if accept(.on) {
            on = try expression()
        } else if current.isKeyword(.using) {
            throw error(unsupportedConstruct(current)!)
        }
        return .join(kind, source, on: on)
    }

    /// WHERE, GROUP BY, HAVING, ORDER BY, LIMIT/OFFSET in that order, then `[;]` and the end.
    private func clauses(_ stmt: inout SelectStatement) throws {
        // 1 WHERE, 2 GROUP BY, 3 HAVING, 4 ORDER BY, 5 LIMIT/OFFSET.
        var rank = 0
        var lastName = ""
        func checkOrder(_ r: Int, _ name: String, _ p: Parser) throws {
            if r == rank, r != 5 { throw p.error("duplicate \(name) clause") }
            if r < rank { throw p.error("\(name) must come before \(lastName)") }
        }
        while true {
            let t = current
            switch t.kind {
            case .keyword(.where):
                try checkOrder(1, "WHERE", self)
                advance()
                stmt.whereClause = try expression()
                rank = 1; lastName = "WHERE"
            case .keyword(.group):
                try checkOrder(2, "GROUP BY", self)
                advance()
                try expect(.by, "BY after GROUP")
                repeat { stmt.groupBy.append(try expression()) } while accept(.comma)
                rank = 2; lastName = "GROUP BY"
            case .keyword(.having):
                if rank < 2 { throw error("HAVING requires GROUP BY") }
                try checkOrder(3, "HAVING", self)
                advance()
                stmt.having = try expression()
                rank = 3; lastName = "HAVING"
            case .keyword(.order):
                try checkOrder(4, "ORDER BY", self)
                advance()
                try expect(.by, "BY after ORDER")
                repeat {
                    let e = try expression()
                    var desc = false
                    if accept(.desc) { desc = true } else { _ = accept(.asc) }
                    stmt.orderBy.append(OrderingTerm(expression: e, descending: desc))
                } while accept(.comma)
                rank = 4; lastName = "ORDER BY"
            case .keyword(.limit):
                try checkOrder(5, "LIMIT", self)
                if stmt.limit != nil { throw error("duplicate LIMIT clause") }
                advance()
                stmt.limit = try expression()
                rank = 5; lastName = "LIMIT"
            case .keyword(.offset):
                try checkOrder(5, "OFFSET", self)
                if stmt.offset != nil { throw error("duplicate OFFSET clause") }
                advance()
                stmt.offset = try expression()
                rank = 5; lastName = "OFFSET"
            case .symbol(.semicolon):
                advance()
                guard atEnd else { throw error("unexpected \(describe(current)) after ';'") }
                return
            case .end:
                return
            case .keyword(.join), .keyword(.inner), .keyword(.left), .keyword(.cross), .keyword(.unnest):
                throw error("\(asciiUppercased(t.text)) must come right after FROM, before \(lastName.isEmpty ? "the other clauses" : lastName)")
            default:
                if stmt.joins.isEmpty, rank == 0, t.isSymbol(.comma) {
                    throw error("comma joins are not supported (use JOIN … ON or UNNEST)")
                }
                let rest = ["WHERE", "GROUP BY", "HAVING", "ORDER BY", "LIMIT", "OFFSET"]
                var allowed = (rank == 0 ? ["JOIN", "UNNEST"] : []) + rest.enumerated().compactMap { i, n in
                    let r = [1, 2, 3, 4, 5, 5][i]
                    if r <= rank && !(r == 5 && rank == 5) { return nil }
                    if n == "HAVING" && rank != 2 { return nil }
                    if n == "LIMIT" && stmt.limit != nil { return nil }
                    if n == "OFFSET" && stmt.offset != nil { return nil }
                    return n
                }
                allowed.append("end of query")
                let list = allowed.count == 1 ? allowed[0]
                    : allowed.dropLast().joined(separator: ", ") + " or " + allowed.last!
                throw unexpected(list)
            }
        }
    }
}
