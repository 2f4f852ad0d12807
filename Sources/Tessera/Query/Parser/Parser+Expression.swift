// Expressions: precedence climbing over the levels of SPEC §3 (lowest first):
//
//   1 COLLATE (postfix)   2 OR   3 AND   4 prefix NOT
//   5 = == != <> IS [NOT], IS [NOT] NULL|MISSING|VALUED, NOT NULL, [NOT] IN|LIKE|BETWEEN
//   6 < <= > >=   7 + -   8 * / %   9 ||   10 unary - +   11 primaries and .paths
//
// Binary operators are left-associative. An operator at level L takes operands of level
// L+1 or higher on its right. Prefix operators may appear wherever an operand is expected
// and extend as far right as their own level allows (`a = NOT b` is `a = (NOT b)`), and a
// postfix operator (COLLATE, IS NULL, …) applies to everything to its left; the result may
// then be the left operand of a following operator, as in yacc-style grammars. The printer
// always parenthesises such cases, so printed text never relies on it.

extension Parser {
    /// A full expression (COLLATE included).
    mutating func expression() throws(QueryError) -> Expr {
        try parseExpr(0).expr
    }

    /// An expression whose operators all have level ≥ `minLevel`.
    mutating func parseExpr(_ minLevel: Int) throws(QueryError) -> Node {
        depth += 1
        defer { depth -= 1 }
        if depth > Parser.maxDepth { throw error("expression nested too deeply") }

        var (lhs, height) = try prefix()
        while true {
            let t = current
            let level: Int
            switch t.kind {
            case .keyword(.collate): level = 1
            case .keyword(.or): level = 2
            case .keyword(.and): level = 3
            case .keyword(.is), .keyword(.in), .keyword(.like), .keyword(.between): level = 5
            case .keyword(.not):
                switch peek().kind {
                case .keyword(.null), .keyword(.in), .keyword(.like), .keyword(.between): level = 5
                default:
                    if minLevel <= 5 {
                        throw error("expected NULL, IN, LIKE or BETWEEN after NOT, found \(describe(peek()))", at: peek())
                    }
                    return (lhs, height)
                }
            case .symbol(.equal), .symbol(.doubleEqual), .symbol(.notEqual), .symbol(.lessGreater): level = 5
            case .symbol(.less), .symbol(.lessOrEqual), .symbol(.greater), .symbol(.greaterOrEqual): level = 6
            case .symbol(.plus), .symbol(.minus): level = 7
            case .symbol(.star), .symbol(.slash), .symbol(.percent): level = 8
            case .symbol(.concat): level = 9
            default: return (lhs, height)
            }
            if level < minLevel { return (lhs, height) }
            advance()

            var childHeight = 0
            switch t.kind {
            case .keyword(.collate):
                lhs = .collate(lhs, try collations())
            case .keyword(.or), .keyword(.and):
                let r = try parseExpr(level + 1)
                lhs = .binary(t.isKeyword(.or) ? .or : .and, lhs, r.expr)
                childHeight = r.height
            case .symbol(let s):
                let op: BinaryOperator
                switch s {
                case .equal, .doubleEqual: op = .equal
                case .notEqual, .lessGreater: op = .notEqual
                case .less: op = .less
                case .lessOrEqual: op = .lessOrEqual
                case .greater: op = .greater
                case .greaterOrEqual: op = .greaterOrEqual
                case .plus: op = .add
                case .minus: op = .subtract
                case .star: op = .multiply
                case .slash: op = .divide
                case .percent: op = .modulo
                default: op = .concat
                }
                let r = try parseExpr(level + 1)
                lhs = .binary(op, lhs, r.expr)
                childHeight = r.height
            case .keyword(.is):
                let negated = accept(.not)
                if let kind = testKind(current) {
                    advance()
                    lhs = .test(lhs, kind, negated: negated)
                } else {
                    let r = try parseExpr(6)
                    lhs = .binary(negated ? .isNot : .is, lhs, r.expr)
                    childHeight = r.height
                }
            case .keyword(.not):
                let next = advance()
                switch next.kind {
                case .keyword(.null): lhs = .test(lhs, .null, negated: true)
                case .keyword(.in): (lhs, childHeight) = try inRest(lhs, negated: true)
                case .keyword(.like):
                    let r = try parseExpr(6)
                    lhs = .like(lhs, r.expr, negated: true)
                    childHeight = r.height
                default:
                    (lhs, childHeight) = try betweenRest(lhs, negated: true)
                }
            case .keyword(.in):
                (lhs, childHeight) = try inRest(lhs, negated: false)
            case .keyword(.like):
                let r = try parseExpr(6)
                lhs = .like(lhs, r.expr, negated: false)
                childHeight = r.height
            default: // BETWEEN
                (lhs, childHeight) = try betweenRest(lhs, negated: false)
            }
            height = max(height, childHeight) + 1
            if height > Parser.maxHeight { throw error("expression nested too deeply", at: t) }
        }
    }

    /// NULL, MISSING or VALUED after IS [NOT].
    private func testKind(_ t: Token) -> TestKind? {
        switch t.kind {
        case .keyword(.null): .null
        case .keyword(.missing): .missing
        case .keyword(.valued): .valued
        default: nil
        }
    }

    /// After `[NOT] IN`: `(e, …)`, `[e, …]`, or a bare array-valued primary.
    private mutating func inRest(_ lhs: Expr, negated: Bool) throws(QueryError) -> Node {
        if current.isSymbol(.leftParen) {
            if peek().isKeyword(.select) { throw error("subqueries are not supported", at: peek()) }
            advance()
            let (list, h) = try expressionList(until: .rightParen)
            return (.inList(lhs, list, negated: negated), h)
        }
        if accept(.leftBracket) {
            let (list, h) = try expressionList(until: .rightBracket)
            return (.inList(lhs, list, negated: negated), h)
        }
        guard startsExpression(current) else { throw unexpected("'(', '[' or an array expression after IN") }
        let r = try primaryWithPath()
        return (.inArray(lhs, r.expr, negated: negated), r.height)
    }

    /// After `[NOT] BETWEEN`: `low AND high`.
    private mutating func betweenRest(_ lhs: Expr, negated: Bool) throws(QueryError) -> Node {
        let low = try parseExpr(6)
        try expect(.and, "AND in BETWEEN … AND …")
        let high = try parseExpr(6)
        return (.between(lhs, low.expr, high.expr, negated: negated), max(low.height, high.height))
    }

    /// Comma-separated expressions up to the closing symbol (which is consumed); may be empty.
    /// Returns the list and the tallest element's height.
    private mutating func expressionList(until close: Symbol) throws(QueryError) -> ([Expr], Int) {
        var list: [Expr] = []
        var h = 0
        if accept(close) { return (list, h) }
        while true {
            let e = try parseExpr(0)
            list.append(e.expr)
            h = max(h, e.height)
            if accept(close) { return (list, h) }
            guard accept(.comma) else { throw unexpected("',' or '\(close.rawValue)'") }
        }
    }

    // MARK: - Collations

    /// After COLLATE: one collation name, or several in parentheses.
    private mutating func collations() throws(QueryError) -> [CollationKeyword] {
        if accept(.leftParen) {
            var list: [CollationKeyword] = []
            while !accept(.rightParen) {
                if current.isSymbol(.comma) {
                    throw error("collations inside COLLATE ( … ) are separated by spaces, not commas")
                }
                list.append(try collation())
            }
            if list.isEmpty { throw error("expected a collation name in COLLATE ( … )", at: tokensBefore()) }
            return list
        }
        let c = try collation()
        if isCollationName(current) {
            throw error("several collations need parentheses: COLLATE (\(spelling(peek(-1))) \(spelling(current)) …)")
        }
        return [c]
    }

    /// The token before the current one.
    private func tokensBefore() -> Token { peek(-1) }

    private func isCollationName(_ t: Token) -> Bool {
        if t.isKeyword(.case) { return true }
        guard t.kind == .identifier else { return false }
        return ["UNICODE", "NOUNICODE", "NOCASE", "DIAC", "NODIAC"].contains(asciiUppercased(t.text))
    }

    /// `UNICODE[:locale] NOUNICODE CASE NOCASE DIAC NODIAC`.
    private mutating func collation() throws(QueryError) -> CollationKeyword {
        let t = current
        let word: String
        switch t.kind {
        case .keyword(.case): word = "CASE"
        case .identifier: word = asciiUppercased(t.text)
        default: throw unexpected("a collation (UNICODE, NOUNICODE, CASE, NOCASE, DIAC or NODIAC)")
        }
        let result: CollationKeyword
        switch word {
        case "UNICODE":
            advance()
            guard accept(.colon) else { return .unicode(locale: nil) }
            switch current.kind {
            case .identifier, .quotedIdentifier, .keyword: return .unicode(locale: advance().text)
            default: throw unexpected("a locale name after UNICODE:")
            }
        case "NOUNICODE": result = .noUnicode
        case "CASE": result = .caseSensitive
        case "NOCASE": result = .noCase
        case "DIAC": result = .diac
        case "NODIAC": result = .noDiac
        case "DIACRITIC", "NODIACRITIC":
            throw error("'\(t.text)' is not a collation (use DIAC or NODIAC)")
        default:
            throw error("unknown collation '\(t.text)' (expected UNICODE, NOUNICODE, CASE, NOCASE, DIAC or NODIAC)")
        }
        advance()
        if current.isSymbol(.colon) { throw error("only UNICODE takes a locale (UNICODE:fr)") }
        return result
    }

    // MARK: - Prefix operators and primaries

    /// `NOT e`, `-e`, `+e`, or a primary with its path.
    private mutating func prefix() throws(QueryError) -> Node {
        let t = current
        switch t.kind {
        case .keyword(.not):
            advance()
            let r = try parseExpr(5)
            return (.unary(.not, r.expr), r.height + 1)
        case .symbol(.minus):
            advance()
            // `-` directly before a number is a negative literal (`-10`, `-9223372036854775808`).
            if current.kind == .integer || current.kind == .decimal {
                let n = advance()
                return (.literal(try number(n, negative: true)), 1)
            }
            let r = try parseExpr(10)
            return (.unary(.negate, r.expr), r.height + 1)
        case .symbol(.plus):
            advance()
            let r = try parseExpr(10)
            return (.unary(.plus, r.expr), r.height + 1)
        default:
            return try primaryWithPath()
        }
    }

    /// The value of a number token: Int when it has no fraction or exponent and fits in
    /// Int64, else Double.
    private func number(_ t: Token, negative: Bool) throws(QueryError) -> Value {
        let text = negative ? "-" + t.text : t.text
        if t.kind == .integer, let i = Int64(text) { return .int(i) }
        guard let d = Double(text) else { throw error("malformed number", at: t) }
        return .double(d)
    }

    /// A primary (level 11) followed by its `.name` / `[n]` path.
    mutating func primaryWithPath() throws(QueryError) -> Node {
        let t = current
        switch t.kind {
        case .integer, .decimal:
            advance()
            return try memberPath((.literal(try number(t, negative: false)), 1))
        case .string:
            advance()
            return try memberPath((.literal(.string(t.text)), 1))
        case .keyword(.true), .keyword(.false), .keyword(.null), .keyword(.missing):
            advance()
            let v: Value = t.isKeyword(.true) ? .bool(true) : t.isKeyword(.false) ? .bool(false)
                : t.isKeyword(.null) ? .null : .missing
            return try memberPath((.literal(v), 1))
        case .parameter:
            advance()
            return try memberPath((.parameter(t.text, t.location), 1))
        case .keyword(.case):
            return try memberPath(try caseExpression())
        case .keyword(.any), .keyword(.every):
            return try memberPath(try quantified())
        case .identifier:
            if t.isWord("SOME"), isQuantifierAfterSome() { return try memberPath(try quantified()) }
            if peek().isSymbol(.leftParen) { return try call() }
            return try propertyPath()
        case .quotedIdentifier:
            return try propertyPath()
        case .symbol(.leftParen):
            if peek().isKeyword(.select) { throw error("subqueries are not supported", at: peek()) }
            advance()
            let inner = try parseExpr(0)
            if current.isSymbol(.comma) {
                throw error("unexpected ',' (a parenthesised list is only allowed after IN)")
            }
            try expect(.rightParen, "')'")
            return try memberPath(inner)
        case .symbol(.leftBracket):
            advance()
            let (list, h) = try expressionList(until: .rightBracket)
            return try memberPath((.array(list), h + 1))
        case .symbol(.leftBrace):
            return try memberPath(try objectLiteral())
        case .symbol(.star):
            throw error("'*' is only allowed as a SELECT result or in COUNT(*)")
        case .keyword(let k):
            if startsKeywordlessContext(k) { throw unexpected("an expression") }
            throw error("expected an expression, found \(describe(t)) (a reserved word; put it in backticks to use it as a name)")
        default:
            throw unexpected("an expression")
        }
    }

    /// Reserved words that end an expression (so "expected an expression" is the right message).
    private func startsKeywordlessContext(_ k: Keyword) -> Bool {
        [.from, .where, .group, .order, .limit, .offset, .having, .then, .else, .end, .when, .satisfies,
         .and, .or, .as, .on, .join, .asc, .desc, .by, .in, .is, .like, .between, .collate].contains(k)
    }

    /// `SOME v IN …` or `SOME AND EVERY …` (SOME is not reserved: `some` alone is a property).
    private func isQuantifierAfterSome() -> Bool {
        if peek().isKeyword(.and), peek(2).isKeyword(.every) { return true }
        return peek().isIdentifier && peek(2).isKeyword(.in)
    }

    /// `.name` / `[n]` steps after a primary that is not a property path. `[n]` may only
    /// follow a property path or a `.name` step (SPEC §1.4).
    private mutating func memberPath(_ base: Node) throws(QueryError) -> Node {
        if current.isSymbol(.leftBracket) {
            throw error("an array index [n] can only follow a property path")
        }
        guard current.isSymbol(.dot) else { return base }
        var components: [PathComponent] = []
        try pathSteps(&components)
        return (.member(base.expr, components), base.height + 1)
    }

    /// `name (.name | [n])*`.
    private mutating func propertyPath() throws(QueryError) -> Node {
        let first = advance()
        var components: [PathComponent] = [.key(first.text)]
        try pathSteps(&components)
        return (.property(components, first.location), 1)
    }

    /// Appends `.name` and `[n]` steps.
    private mutating func pathSteps(_ components: inout [PathComponent]) throws(QueryError) {
        while true {
            if accept(.dot) {
                if current.isSymbol(.star) { throw error("'.*' is only allowed as a SELECT result (alias.*)") }
                components.append(.key(try name("a property name").text))
            } else if current.isSymbol(.leftBracket) {
                advance()
                components.append(.index(try arrayIndex()))
                try expect(.rightBracket, "']'")
            } else {
                return
            }
        }
    }

    /// The integer literal of `[n]` (negative allowed).
    private mutating func arrayIndex() throws(QueryError) -> Int {
        let negative = accept(.minus)
        let t = current
        guard t.kind == .integer else {
            throw error("an array index must be an integer literal, found \(describe(t))")
        }
        advance()
        guard let i = Int(negative ? "-" + t.text : t.text) else {
            throw error("array index out of range", at: t)
        }
        return i
    }

    // MARK: - Compound primaries

    /// `{'k': e, …}` (keys must be string literals).
    private mutating func objectLiteral() throws(QueryError) -> Node {
        advance()
        var members: [ObjectMember] = []
        var h = 0
        if accept(.rightBrace) { return (.object(members), 1) }
        while true {
            guard current.kind == .string else {
                throw error("object literal keys must be string literals, found \(describe(current))")
            }
            let key = advance().text
            try expect(.colon, "':' after an object key")
            let v = try parseExpr(0)
            members.append(ObjectMember(key: key, value: v.expr))
            h = max(h, v.height)
            if accept(.rightBrace) { return (.object(members), h + 1) }
            guard accept(.comma) else { throw unexpected("',' or '}'") }
        }
    }

    /// `CASE [operand] (WHEN e THEN e)+ [ELSE e] END`.
    private mutating func caseExpression() throws(QueryError) -> Node {
        advance()
        var h = 0
        var operand: Expr?
        if current.isKeyword(.end) || current.isKeyword(.else) { throw unexpected("WHEN") }
        if !current.isKeyword(.when) {
            let o = try parseExpr(0)
            operand = o.expr
            h = o.height
        }
        var clauses: [WhenClause] = []
        while accept(.when) {
            let w = try parseExpr(0)
            try expect(.then, "THEN")
            let r = try parseExpr(0)
            clauses.append(WhenClause(when: w.expr, then: r.expr))
            h = max(h, w.height, r.height)
        }
        if clauses.isEmpty { throw unexpected("WHEN") }
        var elseExpr: Expr?
        if accept(.else) {
            let e = try parseExpr(0)
            elseExpr = e.expr
            h = max(h, e.height)
        }
        try expect(.end, "WHEN, ELSE or END")
        return (.caseWhen(operand: operand, clauses, else: elseExpr), h + 1)
    }

    /// `(ANY | SOME | EVERY | ANY AND EVERY | SOME AND EVERY) v IN e SATISFIES p END`.
    private mutating func quantified() throws(QueryError) -> Node {
        let first = advance()
        var q: Quantifier = first.isKeyword(.every) ? .every : .any
        if q == .any, current.isKeyword(.and), peek().isKeyword(.every) {
            advance(); advance()
            q = .anyAndEvery
        }
        let variable = try name("a variable name").text
        try expect(.in, "IN after the variable of \(q.rawValue)")
        let array = try parseExpr(0)
        try expect(.satisfies, "SATISFIES")
        let condition = try parseExpr(0)
        try expect(.end, "END")
        return (.quantified(q, variable: variable, in: array.expr, satisfies: condition.expr),
                max(array.height, condition.height) + 1)
    }

    /// `name(args)`, including `COUNT(*)`, `META([alias])`, `MATCH(index, q)`, `RANK(index)`.
    private mutating func call() throws(QueryError) -> Node {
        let nameToken = advance()
        let name = asciiUppercased(nameToken.text)
        advance() // (
        if current.isKeyword(.select) { throw error("subqueries are not supported") }
        if name == "META" {
            if accept(.rightParen) { return try metaPath(alias: nil, nameToken) }
            if current.isIdentifier, peek().isSymbol(.rightParen) {
                let alias = advance().text
                advance()
                return try metaPath(alias: alias, nameToken)
            }
        }
        var args: [Expr] = []
        var h = 0
        if current.isSymbol(.star), peek().isSymbol(.rightParen) {
            guard name == "COUNT" else { throw error("'*' is only allowed in COUNT(*)") }
            advance(); advance()
        } else {
            if current.isKeyword(.distinct) { throw error("\(name)(DISTINCT …) is not supported") }
            (args, h) = try expressionList(until: .rightParen)
            if args.count > Parser.maxArguments {
                throw error("too many arguments to \(name) (at most \(Parser.maxArguments))", at: nameToken)
            }
        }
        let node: Node
        switch name {
        case "MATCH" where args.count == 2:
            if let ref = indexReference(args[0]) {
                node = (.match(ref, args[1]), h + 1)
            } else {
                node = (.call(name, args, nameToken.location), h + 1)
            }
        case "RANK" where args.count == 1:
            if let ref = indexReference(args[0]) {
                node = (.rank(ref), 1)
            } else {
                node = (.call(name, args, nameToken.location), h + 1)
            }
        default:
            // Includes META with other arguments and MATCH/RANK of the wrong shape: the
            // analyzer reports them (arity is a semantic error, SPEC §12).
            node = (.call(name, args, nameToken.location), h + 1)
        }
        return try memberPath(node)
    }

    /// `idx` or `alias.idx` as written for MATCH/RANK.
    private func indexReference(_ e: Expr) -> IndexReference? {
        guard case .property(let comps, let loc) = e else { return nil }
        switch comps.count {
        case 1:
            if case .key(let n) = comps[0] { return IndexReference(name: n, location: loc) }
        case 2:
            if case .key(let a) = comps[0], case .key(let n) = comps[1] {
                return IndexReference(alias: a, name: n, location: loc)
            }
        default: break
        }
        return nil
    }

    /// After `META(…)`: an optional `.key` (matched case-insensitively and normalised), then
    /// any further path. Another first name stays a member step for the analyzer to reject.
    private mutating func metaPath(alias: String?, _ at: Token) throws(QueryError) -> Node {
        var key: MetaKey?
        if current.isSymbol(.dot), peek().isIdentifier {
            let upper = asciiUppercased(peek().text)
            if let k = MetaKey.allCases.first(where: { asciiUppercased($0.rawValue) == upper }) {
                key = k
                advance(); advance()
            }
        }
        let base: Expr = .meta(alias: alias, key: key, at.location)
        guard current.isSymbol(.dot) || (key != nil && current.isSymbol(.leftBracket)) else {
            if current.isSymbol(.leftBracket) { throw error("an array index [n] can only follow a property path") }
            return (base, 1)
        }
        var components: [PathComponent] = []
        try pathSteps(&components)
        return (.member(base, components), 2)
    }
}
