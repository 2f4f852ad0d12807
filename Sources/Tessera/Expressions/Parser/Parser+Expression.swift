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
    func expression() throws -> Expr {
        try parseExpr(0).expr
    }

    // The functions on the recursion path (parseExpr → prefix → primary → parenthesized,
    // call, literals, CASE, ANY … → parseExpr) are kept lean: few locals, no Token copies,
    // no string building (errors are built by the `fail…` helpers). Debug builds give every
    // local and temporary its own stack slot, and nesting multiplies frame sizes.

    /// An expression whose operators all have level ≥ `minLevel`.
    func parseExpr(_ minLevel: Int) throws -> Node {
        // No `defer`: after an error the parser is dropped, so `depth` only needs to be
        // right on the way out of successful calls.
        depth += 1
        if depth > Parser.maxDepth { try failNested(index) }
        var node = try prefix()
        while let level = try infixLevel(minLevel), level >= minLevel {
            if let op = associativeOperator() {
                node = try chain(op, node, level)
                continue
            }
            node = try infixStep(node, level)
        }
        depth -= 1
        return node
    }

    /// OR, AND and `||` at the current token: operators whose grouping does not change the
    /// result, so a long flat chain of them can be a balanced tree.
    private func associativeOperator() -> BinaryOperator? {
        switch kind {
        case .keyword(.or): .or
        case .keyword(.and): .and
        case .symbol(.concat): .concat
        default: nil
        }
    }

    /// Chains longer than this become balanced trees (shorter ones fold to the left, as
    /// written): `a OR b OR … ` with 10,000 terms is a tree 14 levels tall, not 10,000.
    static let balancedChainLength = 32

    /// `lhs op x op y …` for an associative `op` of `level`, read in a loop (not recursion).
    @inline(never)
    private func chain(_ op: BinaryOperator, _ lhs: Node, _ level: Int) throws -> Node {
        var operands = [lhs]
        while associativeOperator() == op {
            let at = index
            skip()
            let r = try parseExpr(level + 1)
            operands.append(r)
            if operands.count <= Parser.balancedChainLength, max(lhs.height, r.height) + operands.count > Parser.maxHeight {
                try failNested(at)
            }
        }
        if operands.count <= Parser.balancedChainLength {
            var node = operands[0]
            for r in operands.dropFirst() { node = (.binary(op, node.expr, r.expr), max(node.height, r.height) + 1) }
            return node
        }
        var levels = 0
        while 1 << levels < operands.count { levels += 1 }
        let height = (operands.map(\.height).max() ?? 0) + levels
        if height > Parser.maxHeight { try failNested(index) }
        return (Expr.balancedChain(op, operands.map(\.expr)[...]), height)
    }

    /// Applies the operator at the current token to `node`, with the height check.
    @inline(never)
    private func infixStep(_ node: Node, _ level: Int) throws -> Node {
        let at = index
        let step = try infix(node.expr, level)
        let height = max(node.height, step.height) + 1
        if height > Parser.maxHeight { try failChain(at) }
        return (step.expr, height)
    }

    /// The level of the infix or postfix operator at the current token, or nil.
    private func infixLevel(_ minLevel: Int) throws -> Int? {
        switch kind {
        case .keyword(.collate): return 1
        case .keyword(.or): return 2
        case .keyword(.and): return 3
        case .keyword(.is), .keyword(.in), .keyword(.like), .keyword(.between): return 5
        case .keyword(.not):
            switch kind(1) {
            case .keyword(.null), .keyword(.in), .keyword(.like), .keyword(.between): return 5
            default:
                if minLevel <= 5 { try failAfterNot() }
                return nil
            }
        case .symbol(.equal), .symbol(.doubleEqual), .symbol(.notEqual), .symbol(.lessGreater): return 5
        case .symbol(.less), .symbol(.lessOrEqual), .symbol(.greater), .symbol(.greaterOrEqual): return 6
        case .symbol(.plus), .symbol(.minus): return 7
        case .symbol(.star), .symbol(.slash), .symbol(.percent): return 8
        case .symbol(.concat): return 9
        default: return nil
        }
    }

    /// Applies the operator at the current token (of `level`) to `lhs`. Returns the new tree
    /// and the height of the tallest operand read.
    @inline(never)
    private func infix(_ lhs: Expr, _ level: Int) throws -> Node {
        let k = kind
        skip()
        switch k {
        case .keyword(.collate): return (.collate(lhs, try collations()), 0)
        case .keyword(.or): return try binaryRest(.or, lhs, level)
        case .keyword(.and): return try binaryRest(.and, lhs, level)
        case .keyword(.is): return try isRest(lhs)
        case .keyword(.not): return try notRest(lhs)
        case .keyword(.in): return try inRest(lhs, negated: false)
        case .keyword(.like): return try likeRest(lhs, negated: false)
        case .keyword(.between): return try betweenRest(lhs, negated: false)
        default: return try binaryRest(Parser.binaryOperator(k), lhs, level)
        }
    }

    private static func binaryOperator(_ k: TokenKind) -> BinaryOperator {
        switch k {
        case .symbol(.equal), .symbol(.doubleEqual): .equal
        case .symbol(.notEqual), .symbol(.lessGreater): .notEqual
        case .symbol(.less): .less
        case .symbol(.lessOrEqual): .lessOrEqual
        case .symbol(.greater): .greater
        case .symbol(.greaterOrEqual): .greaterOrEqual
        case .symbol(.plus): .add
        case .symbol(.minus): .subtract
        case .symbol(.star): .multiply
        case .symbol(.slash): .divide
        case .symbol(.percent): .modulo
        default: .concat
        }
    }

    /// The right operand of a left-associative binary operator of `level`.
    @inline(never)
    private func binaryRest(_ op: BinaryOperator, _ lhs: Expr, _ level: Int) throws -> Node {
        let r = try parseExpr(level + 1)
        return (.binary(op, lhs, r.expr), r.height)
    }

    /// After IS: `[NOT] NULL|MISSING|VALUED`, or `[NOT] expr`.
    @inline(never)
    private func isRest(_ lhs: Expr) throws -> Node {
        let negated = accept(.not)
        let test: TestKind?
        switch kind {
        case .keyword(.null): test = .null
        case .keyword(.missing): test = .missing
        case .keyword(.valued): test = .valued
        default: test = nil
        }
        if let test {
            skip()
            return (.test(lhs, test, negated: negated), 0)
        }
        return try binaryRest(negated ? .isNot : .is, lhs, 5)
    }

    /// After a postfix NOT: `NULL`, `IN …`, `LIKE …` or `BETWEEN …`.
    @inline(never)
    private func notRest(_ lhs: Expr) throws -> Node {
        let k = kind
        skip()
        switch k {
        case .keyword(.null): return (.test(lhs, .null, negated: true), 0)
        case .keyword(.in): return try inRest(lhs, negated: true)
        case .keyword(.like): return try likeRest(lhs, negated: true)
        default: return try betweenRest(lhs, negated: true)
        }
    }

    /// After `[NOT] LIKE`: the pattern.
    @inline(never)
    private func likeRest(_ lhs: Expr, negated: Bool) throws -> Node {
        let r = try parseExpr(6)
        return (.like(lhs, r.expr, negated: negated), r.height)
    }

    /// After `[NOT] IN`: `(e, …)`, `[e, …]`, or a bare array-valued primary.
    @inline(never)
    private func inRest(_ lhs: Expr, negated: Bool) throws -> Node {
        if at(.leftParen) {
            if kind(1) == .keyword(.select) { try failSubquery(index + 1) }
            skip()
            let list = try expressionList(until: .rightParen)
            return (.inList(lhs, list.expressions, negated: negated), list.height)
        }
        if accept(.leftBracket) {
            let list = try expressionList(until: .rightBracket)
            return (.inList(lhs, list.expressions, negated: negated), list.height)
        }
        if !startsExpression(kind) { try failExpected("'(', '[' or an array expression after IN") }
        let r = try primaryWithPath()
        return (.inArray(lhs, r.expr, negated: negated), r.height)
    }

    /// After `[NOT] BETWEEN`: `low AND high`.
    @inline(never)
    private func betweenRest(_ lhs: Expr, negated: Bool) throws -> Node {
        let low = try parseExpr(6)
        try require(.and, "AND in BETWEEN … AND …")
        let high = try parseExpr(6)
        return (.between(lhs, low.expr, high.expr, negated: negated), max(low.height, high.height))
    }

    /// Comma-separated expressions up to the closing symbol (which is consumed); may be empty.
    @inline(never)
    private func expressionList(until close: Symbol) throws -> (expressions: [Expr], height: Int) {
        var list: [Expr] = []
        var h = 0
        if accept(close) { return (list, h) }
        while true {
            let e = try parseExpr(0)
            list.append(e.expr)
            h = max(h, e.height)
            if accept(close) { return (list, h) }
            if !accept(.comma) { try failListSeparator(close) }
        }
    }

    // MARK: - Collations

    /// After COLLATE: one collation name, or several in parentheses.
    private func collations() throws -> [CollationKeyword] {
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
    private func collation() throws -> CollationKeyword {
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
    private func prefix() throws -> Node {
        switch kind {
        case .keyword(.not): return try unaryRest(.not, operandLevel: 5)
        case .symbol(.plus): return try unaryRest(.plus, operandLevel: 10)
        case .symbol(.minus):
            // `-` directly before a number is a negative literal (`-10`, `-9223372036854775808`).
            if kind(1) == .integer || kind(1) == .decimal { return try literal(negative: true) }
            return try unaryRest(.negate, operandLevel: 10)
        default: return try primaryWithPath()
        }
    }

    /// A prefix operator and its operand.
    @inline(never)
    private func unaryRest(_ op: UnaryOperator, operandLevel: Int) throws -> Node {
        skip()
        let r = try parseExpr(operandLevel)
        return (.unary(op, r.expr), r.height + 1)
    }

    /// A number, string, TRUE, FALSE, NULL or MISSING token (after `-` when `negative`).
    @inline(never)
    private func literal(negative: Bool) throws -> Node {
        if negative { skip() }
        let t = advance()
        let v: Value
        switch t.kind {
        case .integer, .decimal:
            let text = negative ? "-" + t.text : t.text
            if t.kind == .integer, let i = Int64(text) {
                v = .int(i)
            } else if let d = Double(text) {
                v = .double(d)
            } else {
                throw error("malformed number", at: t)
            }
        case .string: v = .string(t.text)
        case .keyword(.true): v = .bool(true)
        case .keyword(.false): v = .bool(false)
        case .keyword(.null): v = .null
        default: v = .missing
        }
        return (.literal(v), 1)
    }

    /// A primary (level 11) followed by its `.name` / `[n]` path.
    func primaryWithPath() throws -> Node {
        let base = try primary()
        return try memberPath(base)
    }

    /// A primary without its path.
    private func primary() throws -> Node {
        switch kind {
        case .integer, .decimal, .string, .keyword(.true), .keyword(.false), .keyword(.null), .keyword(.missing):
            return try literal(negative: false)
        case .parameter: return parameter()
        case .keyword(.case): return try caseExpression()
        case .keyword(.any), .keyword(.every): return try quantified()
        case .identifier: return try identifierPrimary()
        case .quotedIdentifier: return try propertyPath()
        case .symbol(.leftParen): return try parenthesized()
        case .symbol(.leftBracket): return try arrayLiteral()
        case .symbol(.leftBrace): return try objectLiteral()
        default: try failNotAnExpression()
        }
    }

    /// `$name`.
    private func parameter() -> Node {
        let t = advance()
        return (.parameter(t.text, t.location), 1)
    }

    /// A call, a SOME quantifier or a property path.
    @inline(never)
    private func identifierPrimary() throws -> Node {
        if kind(1) == .symbol(.leftParen) { return try call() }
        if isQuantifierAfterSome() { return try quantified() }
        return try propertyPath()
    }

    /// `( expr )`.
    @inline(never)
    private func parenthesized() throws -> Node {
        if kind(1) == .keyword(.select) { try failSubquery(index + 1) }
        skip()
        let inner = try parseExpr(0)
        if at(.comma) { try fail("unexpected ',' (a parenthesised list is only allowed after IN)") }
        try require(.rightParen, "')'")
        return inner
    }

    /// `[e, …]`.
    @inline(never)
    private func arrayLiteral() throws -> Node {
        skip()
        let list = try expressionList(until: .rightBracket)
        return (.array(list.expressions), list.height + 1)
    }

    /// `SOME v IN …` or `SOME AND EVERY …` (SOME is not reserved: `some` alone is a property).
    private func isQuantifierAfterSome() -> Bool {
        guard current.isWord("SOME") else { return false }
        if kind(1) == .keyword(.and), kind(2) == .keyword(.every) { return true }
        return (kind(1) == .identifier || kind(1) == .quotedIdentifier) && kind(2) == .keyword(.in)
    }

    /// `.name` / `[n]` steps after a primary that is not a property path. `[n]` may only
    /// follow a property path or a `.name` step (SPEC §1.4).
    private func memberPath(_ base: Node) throws -> Node {
        if at(.leftBracket) { try fail("an array index [n] can only follow a property path") }
        guard at(.dot) else { return base }
        var components: [PathComponent] = []
        try pathSteps(&components)
        return (.member(base.expr, components), base.height + 1)
    }

    /// `name (.name | [n])*`.
    private func propertyPath() throws -> Node {
        let first = advance()
        var components: [PathComponent] = [.key(first.text)]
        try pathSteps(&components)
        return (.property(components, first.location), 1)
    }

    /// Appends `.name` and `[n]` steps.
    private func pathSteps(_ components: inout [PathComponent]) throws {
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
    private func arrayIndex() throws -> Int {
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
    @inline(never)
    private func objectLiteral() throws -> Node {
        skip()
        var members: [ObjectMember] = []
        var h = 0
        if accept(.rightBrace) { return (.object(members), 1) }
        while true {
            if kind != .string { try failObjectKey() }
            let key = advance().text
            try require(.colon, "':' after an object key")
            let v = try parseExpr(0)
            members.append(ObjectMember(key: key, value: v.expr))
            h = max(h, v.height)
            if accept(.rightBrace) { return (.object(members), h + 1) }
            if !accept(.comma) { try failExpected("',' or '}'") }
        }
    }

    /// `CASE [operand] (WHEN e THEN e)+ [ELSE e] END`.
    @inline(never)
    private func caseExpression() throws -> Node {
        skip()
        var h = 0
        var operand: Expr?
        if at(.end) || at(.else) { try failExpected("WHEN") }
        if !at(.when) {
            let o = try parseExpr(0)
            operand = o.expr
            h = o.height
        }
        var clauses: [WhenClause] = []
        while accept(.when) {
            let w = try parseExpr(0)
            try require(.then, "THEN")
            let r = try parseExpr(0)
            clauses.append(WhenClause(when: w.expr, then: r.expr))
            h = max(h, w.height, r.height)
        }
        if clauses.isEmpty { try failExpected("WHEN") }
        var elseExpr: Expr?
        if accept(.else) {
            let e = try parseExpr(0)
            elseExpr = e.expr
            h = max(h, e.height)
        }
        try require(.end, "WHEN, ELSE or END")
        return (.caseWhen(operand: operand, clauses, else: elseExpr), h + 1)
    }

    /// `(ANY | SOME | EVERY | ANY AND EVERY | SOME AND EVERY) v IN e SATISFIES p END`.
    @inline(never)
    private func quantified() throws -> Node {
        var q: Quantifier = at(.every) ? .every : .any
        skip()
        if q == .any, at(.and), kind(1) == .keyword(.every) {
            skip()
            skip()
            q = .anyAndEvery
        }
        let variable = try nameText("a variable name")
        try require(.in, "IN after the variable")
        let array = try parseExpr(0)
        try require(.satisfies, "SATISFIES")
        let condition = try parseExpr(0)
        try require(.end, "END")
        return (.quantified(q, variable: variable, in: array.expr, satisfies: condition.expr),
                max(array.height, condition.height) + 1)
    }

    /// `name(args)`, including `COUNT(*)`, `META([alias])`, `MATCH(index, q)`, `RANK(index)`.
    @inline(never)
    private func call() throws -> Node {
        let nameIndex = index
        let name = asciiUppercased(tokens[index].text)
        skip()
        skip()  // (
        if at(.select) { try failSubquery(index) }
        if name == "META" {
            if accept(.rightParen) { return try metaPath(alias: nil, nameIndex) }
            if kind == .identifier || kind == .quotedIdentifier, kind(1) == .symbol(.rightParen) {
                let alias = advance().text
                skip()
                return try metaPath(alias: alias, nameIndex)
            }
        }
        let args = try callArguments(name, nameIndex)
        return try memberPath(Parser.callNode(name, args.expressions, args.height, tokens[nameIndex].location))
    }

    /// The arguments of a call after `(`, through `)`; `COUNT(*)` has none.
    private func callArguments(_ name: String, _ nameIndex: Int) throws -> (expressions: [Expr], height: Int) {
        if at(.star), kind(1) == .symbol(.rightParen) {
            guard name == "COUNT" else { throw error("'*' is only allowed in COUNT(*)") }
            skip()
            skip()
            return ([], 0)
        }
        if at(.distinct) { throw error("\(name)(DISTINCT …) is not supported") }
        let args = try expressionList(until: .rightParen)
        if args.expressions.count > Parser.maxArguments {
            throw error("too many arguments to \(name) (at most \(Parser.maxArguments))", at: tokens[nameIndex])
        }
        return args
    }

    /// The node of a call: MATCH/RANK of the right shape get their own nodes; anything else
    /// (META with other arguments, MATCH/RANK of the wrong shape) stays a call for the
    /// analyzer to report (arity is a semantic error, SPEC §12).
    private static func callNode(_ name: String, _ args: [Expr], _ h: Int, _ location: SourceLocation) -> Node {
        if name == "MATCH", args.count == 2, let ref = indexReference(args[0]) {
            return (.match(ref, args[1]), h + 1)
        }
        if name == "RANK", args.count == 1, let ref = indexReference(args[0]) {
            return (.rank(ref), 1)
        }
        return (.call(name, args, location), h + 1)
    }

    /// `idx` or `alias.idx` as written for MATCH/RANK.
    private static func indexReference(_ e: Expr) -> IndexReference? {
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
    private func metaPath(alias: String?, _ nameIndex: Int) throws -> Node {
        var key: MetaKey?
        if current.isSymbol(.dot), peek().isIdentifier {
            let upper = asciiUppercased(peek().text)
            if let k = MetaKey.allCases.first(where: { asciiUppercased($0.rawValue) == upper }) {
                key = k
                advance(); advance()
            }
        }
        let base: Expr = .meta(alias: alias, key: key, tokens[nameIndex].location)
        guard current.isSymbol(.dot) || (key != nil && current.isSymbol(.leftBracket)) else {
            if current.isSymbol(.leftBracket) { throw error("an array index [n] can only follow a property path") }
            return (base, 1)
        }
        var components: [PathComponent] = []
        try pathSteps(&components)
        return (.member(base, components), 2)
    }

    // MARK: - Failures (kept out of the recursive functions' frames)

    /// A chain of left-associative operators (arithmetic, comparisons) too long for the tree
    /// height limit: say so, and how to write it instead.
    @inline(never)
    func failChain(_ i: Int) throws -> Never {
        throw error("expression nested too deeply: more than \(Parser.maxHeight) operators in one chain of + - * / % "
            + "or comparisons (evaluated left to right; group the terms in parentheses, such as (a + b + …) + (c + …))", at: tokens[i])
    }

    /// Throws "expression nested too deeply" at token `i`.
    @inline(never)
    func failNested(_ i: Int) throws -> Never {
        throw error("expression nested too deeply", at: tokens[i])
    }

    /// Throws `message` at the current token.
    @inline(never)
    func fail(_ message: String) throws -> Never {
        throw error(message)
    }

    /// Throws "expected …, found …" at the current token.
    @inline(never)
    func failExpected(_ what: String) throws -> Never {
        throw unexpected(what)
    }

    /// Throws "subqueries are not supported" at token `i`.
    @inline(never)
    func failSubquery(_ i: Int) throws -> Never {
        throw error("subqueries are not supported", at: tokens[i])
    }

    @inline(never)
    private func failAfterNot() throws -> Never {
        throw error("expected NULL, IN, LIKE or BETWEEN after NOT, found \(describe(peek()))", at: peek())
    }

    @inline(never)
    private func failListSeparator(_ close: Symbol) throws -> Never {
        throw unexpected("',' or '\(close.rawValue)'")
    }

    @inline(never)
    private func failObjectKey() throws -> Never {
        throw error("object literal keys must be string literals, found \(describe(current))")
    }

    @inline(never)
    private func failNotAnExpression() throws -> Never {
        switch kind {
        case .symbol(.star):
            throw error("'*' is only allowed as a SELECT result or in COUNT(*)")
        case .keyword(let k):
            let enders: [Keyword] = [.from, .where, .group, .order, .limit, .offset, .having, .then, .else, .end,
                                     .when, .satisfies, .and, .or, .as, .on, .join, .asc, .desc, .by, .in, .is,
                                     .like, .between, .collate]
            if enders.contains(k) { throw unexpected("an expression") }
            throw error("expected an expression, found \(describe(current)) (a reserved word; put it in backticks to use it as a name)")
        default:
            throw unexpected("an expression")
        }
    }
}
