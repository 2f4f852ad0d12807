// Tokens of SQL++ for mobile (SPEC §2).

/// The reserved words of SPEC §2: they are never identifiers unless backticked.
///
/// Unreserved keywords (`ALL SOME EXISTS`, function names, collation names, `VALUE`,
/// `MATCH`, …) are lexed as identifiers and recognised by the parser from context.
enum Keyword: String, Sendable, Hashable, CaseIterable {
    case and = "AND", any = "ANY", `as` = "AS", asc = "ASC", between = "BETWEEN", by = "BY"
    case `case` = "CASE", collate = "COLLATE", cross = "CROSS", desc = "DESC", distinct = "DISTINCT"
    case `else` = "ELSE", end = "END", every = "EVERY", `false` = "FALSE", from = "FROM"
    case group = "GROUP", having = "HAVING", `in` = "IN", inner = "INNER", `is` = "IS", join = "JOIN"
    case left = "LEFT", like = "LIKE", limit = "LIMIT", missing = "MISSING", natural = "NATURAL"
    case not = "NOT", null = "NULL", offset = "OFFSET", on = "ON", or = "OR", order = "ORDER"
    case outer = "OUTER", right = "RIGHT", satisfies = "SATISFIES", select = "SELECT", then = "THEN"
    case `true` = "TRUE", unnest = "UNNEST", using = "USING", valued = "VALUED", when = "WHEN"
    case `where` = "WHERE"

    /// Upper-cased spelling → keyword.
    static let byName: [String: Keyword] = {
        var d: [String: Keyword] = [:]
        for k in Keyword.allCases { d[k.rawValue] = k }
        return d
    }()

    /// The reserved word spelled by `name` (any case), if any.
    static func reserved(_ name: String) -> Keyword? {
        guard name.utf8.count <= 9 else { return nil }
        return byName[asciiUppercased(name)]
    }
}

/// Operators and punctuation.
enum Symbol: String, Sendable, Hashable {
    case equal = "=", doubleEqual = "==", notEqual = "!=", lessGreater = "<>"
    case less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case plus = "+", minus = "-", star = "*", slash = "/", percent = "%", concat = "||"
    case dot = ".", comma = ",", leftParen = "(", rightParen = ")"
    case leftBracket = "[", rightBracket = "]", leftBrace = "{", rightBrace = "}"
    case colon = ":", semicolon = ";"
}

/// What a token is.
enum TokenKind: Sendable, Hashable {
    /// A plain identifier (not reserved); `text` is the name as written.
    case identifier
    /// A backticked identifier; `text` is the name with doubled backticks undone.
    case quotedIdentifier
    /// A reserved word.
    case keyword(Keyword)
    /// A string literal; `text` is its value.
    case string
    /// An integer literal (digits only); `text` is the digits.
    case integer
    /// A number with a fraction or exponent; `text` is the literal as written.
    case decimal
    /// `$name`; `text` is the name without `$`.
    case parameter
    /// An operator or punctuation mark.
    case symbol(Symbol)
    /// The end of the text.
    case end
}

/// One token with its decoded text and position.
struct Token: Sendable {
    /// What it is.
    var kind: TokenKind
    /// Decoded text (see `TokenKind`).
    var text: String
    /// Where it starts.
    var location: SourceLocation
    /// UTF-8 offset one past its last byte.
    var endOffset: Int

    /// True for the given symbol.
    @inline(__always) func isSymbol(_ s: Symbol) -> Bool { kind == .symbol(s) }
    /// True for the given reserved word.
    @inline(__always) func isKeyword(_ k: Keyword) -> Bool { kind == .keyword(k) }
    /// True for an unquoted identifier spelled `word` (upper case) in any case.
    func isWord(_ word: String) -> Bool {
        kind == .identifier && text.utf8.count == word.utf8.count && asciiUppercased(text) == word
    }
    /// True for an identifier, quoted or not.
    var isIdentifier: Bool { kind == .identifier || kind == .quotedIdentifier }
}

/// ASCII upper-casing (keywords and function names are ASCII).
func asciiUppercased(_ s: String) -> String {
    var bytes = Array(s.utf8)
    for i in bytes.indices where bytes[i] >= 0x61 && bytes[i] <= 0x7A { bytes[i] -= 32 }
    return String(decoding: bytes, as: UTF8.self)
}
