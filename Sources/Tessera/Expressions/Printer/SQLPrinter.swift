// Canonical SQL++ text from the AST: upper-case keywords and function names, identifiers
// backticked only when needed, strings in single quotes with `''` inside, and the fewest
// parentheses that make the parser rebuild the same tree: `parse(print(ast)) == ast` for every
// AST the parser produces.

/// Prints statements and expressions as canonical SQL++.
///
/// ```swift
/// let e = try SQLParser.parseExpression("not a=1 or b in (1,2)")
/// SQLPrinter.print(e)   // "NOT a = 1 OR b IN (1, 2)"
/// ```
package enum SQLPrinter {
    /// The canonical text of a statement.
    ///
    /// - Parameter s: The statement.
    /// - Returns: One line of SQL++.
    package static func print(_ s: SelectStatement) -> String {
        var w = SQLWriter()
        w.statement(s)
        return w.out
    }

    /// The canonical text of an expression.
    ///
    /// - Parameter e: The expression.
    /// - Returns: SQL++ text.
    static func print(_ e: Expr) -> String {
        var w = SQLWriter()
        w.expr(e, 0)
        return w.out
    }

    /// `name` as written in SQL++: plain when it is a valid identifier and not a reserved or
    /// contextual keyword, else in backticks with inner backticks doubled.
    static func identifier(_ name: String) -> String {
        SQLWriter.isPlainIdentifier(name) ? name : "`" + name.replacingAll("`", with: "``") + "`"
    }

    /// `s` as a single-quoted SQL++ string literal (`'` doubled inside).
    static func string(_ s: String) -> String {
        "'" + s.replacingAll("'", with: "''") + "'"
    }
}

extension String {
    /// Replaces every occurrence of the one-character `target` (no Foundation).
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        guard contains(target) else { return self }
        var out = ""
        out.reserveCapacity(count + 4)
        for ch in self {
            if ch == target { out += replacement } else { out.append(ch) }
        }
        return out
    }
}

/// The printer's state: the text so far.
struct SQLWriter {
    var out = ""

    /// Unreserved words the parser treats specially in some positions; backticking them
    /// keeps printed text unambiguous everywhere.
    static let contextualWords: Set<String> = [
        "ALL", "SOME", "EXISTS", "VALUE", "RAW", "ELEMENT", "MATCH", "REGEXP", "RLIKE", "NEST", "UNION",
        "INTERSECT", "EXCEPT", "MINUS", "FULL", "USE", "LET", "LETTING", "ESCAPE",
    ]

    /// True when `name` can be written without backticks.
    static func isPlainIdentifier(_ name: String) -> Bool {
        var first = true
        for b in name.utf8 {
            let letter = (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F
            let digit = b >= 0x30 && b <= 0x39
            if first ? !letter : !(letter || digit || b == 0x24) { return false }
            first = false
        }
        if first { return false }
        if Keyword.reserved(name) != nil { return false }
        if name.utf8.count <= 9, contextualWords.contains(asciiUppercased(name)) { return false }
        return true
    }

    mutating func name(_ s: String) { out += SQLPrinter.identifier(s) }

    // MARK: - Statement

    mutating func statement(_ s: SelectStatement) {
        out += s.distinct ? "SELECT DISTINCT " : "SELECT "
        for (i, c) in s.columns.enumerated() {
            if i > 0 { out += ", " }
            switch c {
            case .star(let source, let alias):
                if let source { name(source); out += "." }
                out += "*"
                if let alias { out += " AS "; name(alias) }
            case .expression(let e, let alias):
                expr(e, 0)
                if let alias { out += " AS "; name(alias) }
            }
        }
        out += " FROM "
        source(s.from)
        for item in s.joins {
            switch item {
            case .join(let kind, let src, let on):
                switch kind {
                case .inner: out += " JOIN "
                case .leftOuter: out += " LEFT JOIN "
                case .cross: out += " CROSS JOIN "
                }
                source(src)
                if let on { out += " ON "; expr(on, 0) }
            case .unnest(let e, let alias, _):
                out += " UNNEST "
                expr(e, 0)
                if let alias { out += " AS "; name(alias) }
            }
        }
        if let w = s.whereClause { out += " WHERE "; expr(w, 0) }
        if !s.groupBy.isEmpty {
            out += " GROUP BY "
            list(s.groupBy)
        }
        if let h = s.having { out += " HAVING "; expr(h, 0) }
        if !s.orderBy.isEmpty {
            out += " ORDER BY "
            for (i, t) in s.orderBy.enumerated() {
                if i > 0 { out += ", " }
                expr(t.expression, 0)
                if t.descending { out += " DESC" }
            }
        }
        if let l = s.limit { out += " LIMIT "; expr(l, 0) }
        if let o = s.offset { out += " OFFSET "; expr(o, 0) }
    }

    mutating func source(_ r: DataSourceReference) {
        if let scope = r.scope { name(scope); out += "." }
        name(r.collection)
        if let alias = r.alias { out += " AS "; name(alias) }
    }

    mutating func list(_ es: [Expr]) {
        for (i, e) in es.enumerated() {
            if i > 0 { out += ", " }
            expr(e, 0)
        }
    }

    // MARK: - Expressions

    /// The precedence level of SPEC §3 (1 lowest … 11 primaries).
    static func level(_ e: Expr) -> Int {
        switch e {
        case .collate: 1
        case .binary(let op, _, _): level(op)
        case .unary(let op, _): op == .not ? 4 : 10
        case .like, .between, .inList, .inArray, .test: 5
        case .literal(let v):
            // A negative number reads as unary minus.
            switch v {
            case .int(let i) where i < 0: 10
            case .double(let d) where d.sign == .minus: 10
            default: 11
            }
        default: 11
        }
    }

    /// The precedence level of a binary operator.
    static func level(_ op: BinaryOperator) -> Int {
        switch op {
        case .or: 2
        case .and: 3
        case .equal, .notEqual, .is, .isNot: 5
        case .less, .lessOrEqual, .greater, .greaterOrEqual: 6
        case .add, .subtract: 7
        case .multiply, .divide, .modulo: 8
        case .concat: 9
        }
    }

    /// Prints `e`, in parentheses when its level is below `minLevel`.
    ///
    /// Each case is printed by its own small function: debug builds give every local its own
    /// stack slot, and the recursion is as deep as the tree is tall.
    mutating func expr(_ e: Expr, _ minLevel: Int) {
        if SQLWriter.level(e) < minLevel {
            parenthesized(e)
            return
        }
        // Cases are matched without bindings here; each printer function takes its own
        // payload apart, so this frame stays small.
        switch e {
        case .literal: literalNode(e)
        case .parameter, .property, .meta: leaf(e)
        case .member: member(e)
        case .array: array(e)
        case .object: object(e)
        case .unary: unary(e)
        case .binary: binary(e)
        case .like: like(e)
        case .between: between(e)
        case .inList: inList(e)
        case .inArray: inArray(e)
        case .test: test(e)
        case .call: call(e)
        case .caseWhen: caseWhen(e)
        case .quantified: quantified(e)
        case .collate: collate(e)
        case .match, .rank: fullText(e)
        }
    }

    @inline(never)
    mutating func literalNode(_ e: Expr) {
        if case .literal(let v) = e { literal(v) }
    }

    /// Parameters, property paths and `META()`.
    @inline(never)
    mutating func leaf(_ e: Expr) {
        switch e {
        case .parameter(let n, _): out += "$" + n
        case .property(let comps, _): path(comps, leadingDot: false)
        case .meta(let alias, let key, _):
            out += "META("
            if let alias { name(alias) }
            out += ")"
            if let key { out += "." + key.rawValue }
        default: break
        }
    }

    @inline(never)
    mutating func parenthesized(_ e: Expr) {
        out += "("
        expr(e, 0)
        out += ")"
    }

    @inline(never)
    mutating func member(_ e: Expr) {
        guard case .member(let base, let comps) = e else { return }
        memberBase(base)
        path(comps, leadingDot: true)
    }

    @inline(never)
    mutating func array(_ e: Expr) {
        guard case .array(let items) = e else { return }
        out += "["
        list(items)
        out += "]"
    }

    @inline(never)
    mutating func object(_ e: Expr) {
        guard case .object(let members) = e else { return }
        out += "{"
        for (i, m) in members.enumerated() {
            if i > 0 { out += ", " }
            out += SQLPrinter.string(m.key) + ": "
            expr(m.value, 0)
        }
        out += "}"
    }

    @inline(never)
    mutating func unary(_ e: Expr) {
        guard case .unary(let op, let x) = e else { return }
        if op == .not {
            out += "NOT "
            // A prefix operand needs no parentheses: the parser reads prefixes anywhere.
            if case .unary(.not, _) = x { expr(x, 4) } else { expr(x, 5) }
            return
        }
        out += op.rawValue
        // `-(5)` keeps unary minus on a number (`-5` is a literal) and `-(-a)` avoids `--a`.
        out += SQLWriter.signOperand(x)
    }

    /// The operand of unary `-`/`+` as text.
    @inline(never)
    static func signOperand(_ x: Expr) -> String {
        let operand = render(x, 10)
        if let first = operand.utf8.first, (first >= 0x30 && first <= 0x39) || first == 0x2E
            || first == 0x2D || first == 0x2B {
            return "(" + render(x, 0) + ")"
        }
        return operand
    }

    @inline(never)
    mutating func binary(_ e: Expr) {
        guard case .binary(let op, let l, let r) = e else { return }
        if op == .or || op == .and || op == .concat {
            associative(e)
            return
        }
        let lv = SQLWriter.level(op)
        expr(l, lv)
        out += " "
        out += op.rawValue
        out += " "
        if op == .is || op == .isNot {
            out += SQLWriter.isOperand(r)
        } else {
            expr(r, lv + 1)
        }
    }

    /// OR, AND, `||`: a long chain the parser balanced is written flat (it parses back the
    /// same); inside a longer chain it is parenthesized (written flat it would be balanced
    /// together with it).
    @inline(never)
    mutating func associative(_ e: Expr) {
        guard case .binary(let op, let l, let r) = e else { return }
        let lv = SQLWriter.level(op)
        if let operands = e.balancedChainOperands {
            for (i, o) in operands.enumerated() {
                if i > 0 { out += " " + op.rawValue + " " }
                expr(o, i == 0 ? lv : lv + 1)
            }
            return
        }
        if case .binary(op, _, _) = l, l.balancedChainOperands != nil { parenthesized(l) } else { expr(l, lv) }
        out += " " + op.rawValue + " "
        expr(r, lv + 1)
    }

    /// The right operand of IS / IS NOT as text: `a IS NULL…` / `a IS MISSING…` would read
    /// as the postfix tests, so such operands get parentheses.
    @inline(never)
    static func isOperand(_ r: Expr) -> String {
        let right = render(r, 6)
        if startsWithWord(right, "NULL") || startsWithWord(right, "MISSING") { return "(" + render(r, 0) + ")" }
        return right
    }

    @inline(never)
    mutating func like(_ e: Expr) {
        guard case .like(let x, let p, let negated) = e else { return }
        expr(x, 5)
        out += negated ? " NOT LIKE " : " LIKE "
        expr(p, 6)
    }

    @inline(never)
    mutating func between(_ e: Expr) {
        guard case .between(let x, let lo, let hi, let negated) = e else { return }
        expr(x, 5)
        out += negated ? " NOT BETWEEN " : " BETWEEN "
        expr(lo, 6)
        out += " AND "
        expr(hi, 6)
    }

    @inline(never)
    mutating func inList(_ e: Expr) {
        guard case .inList(let x, let items, let negated) = e else { return }
        expr(x, 5)
        out += negated ? " NOT IN " : " IN "
        if items.isEmpty {
            out += "[]"
        } else {
            out += "("
            list(items)
            out += ")"
        }
    }

    @inline(never)
    mutating func inArray(_ e: Expr) {
        guard case .inArray(let x, let arr, let negated) = e else { return }
        expr(x, 5)
        out += negated ? " NOT IN " : " IN "
        if SQLWriter.isBareArrayOperand(arr) {
            expr(arr, 11)
        } else {
            // No SQL++ spelling keeps this node: a parenthesised operand reads as a
            // one-element IN list.
            parenthesized(arr)
        }
    }

    @inline(never)
    mutating func test(_ e: Expr) {
        guard case .test(let x, let kind, let negated) = e else { return }
        expr(x, 5)
        out += negated ? " IS NOT " : " IS "
        out += kind.rawValue
    }

    @inline(never)
    mutating func call(_ e: Expr) {
        guard case .call(let n, let args, _) = e else { return }
        out += n
        out += "("
        if args.isEmpty && n == "COUNT" { out += "*" } else { list(args) }
        out += ")"
    }

    @inline(never)
    mutating func caseWhen(_ e: Expr) {
        guard case .caseWhen(let operand, let clauses, let elseExpr) = e else { return }
        out += "CASE"
        if let operand {
            out += " "
            expr(operand, 0)
        }
        for c in clauses {
            out += " WHEN "
            expr(c.when, 0)
            out += " THEN "
            expr(c.then, 0)
        }
        if let elseExpr {
            out += " ELSE "
            expr(elseExpr, 0)
        }
        out += " END"
    }

    @inline(never)
    mutating func quantified(_ e: Expr) {
        guard case .quantified(let q, let variable, let arr, let cond) = e else { return }
        out += q.rawValue
        out += " "
        name(variable)
        out += " IN "
        expr(arr, 0)
        out += " SATISFIES "
        expr(cond, 0)
        out += " END"
    }

    @inline(never)
    mutating func collate(_ e: Expr) {
        guard case .collate(let x, let keywords) = e else { return }
        expr(x, 1)
        out += " COLLATE "
        if keywords.count == 1 {
            collation(keywords[0])
        } else {
            out += "("
            for (i, k) in keywords.enumerated() {
                if i > 0 { out += " " }
                collation(k)
            }
            out += ")"
        }
    }

    /// `MATCH(index, query)` and `RANK(index)`.
    @inline(never)
    mutating func fullText(_ e: Expr) {
        switch e {
        case .match(let ref, let q):
            out += "MATCH("
            indexReference(ref)
            out += ", "
            expr(q, 0)
            out += ")"
        case .rank(let ref):
            out += "RANK("
            indexReference(ref)
            out += ")"
        default: break
        }
    }

    /// `e` printed on its own at `minLevel`.
    static func render(_ e: Expr, _ minLevel: Int) -> String {
        var w = SQLWriter()
        w.expr(e, minLevel)
        return w.out
    }

    /// True when `text` starts with the keyword `word` (followed by a non-identifier byte).
    static func startsWithWord(_ text: String, _ word: String) -> Bool {
        let t = Array(text.utf8), w = Array(word.utf8)
        guard t.count >= w.count, Array(t[0..<w.count]) == w else { return false }
        guard t.count > w.count else { return true }
        let b = t[w.count]
        let identChar = (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F || (b >= 0x30 && b <= 0x39) || b == 0x24
        return !identChar
    }

    /// True when `e` prints as a primary that does not start with `(` or `[`, so that it can
    /// follow IN without being read as a list.
    static func isBareArrayOperand(_ e: Expr) -> Bool {
        switch e {
        case .parameter, .property, .meta, .call, .caseWhen, .quantified, .match, .rank, .object: return true
        case .literal(let v):
            switch v {
            case .array, .object: return false
            default: return level(e) == 11
            }
        case .member(let base, let comps):
            guard case .key = comps.first else {
                if case .meta(_, let key, _) = base, key != nil { return true }
                return false
            }
            return !memberBaseNeedsParentheses(base)
        default: return false
        }
    }

    /// True when `base` must be parenthesised before a `.name` step so that the parser keeps
    /// the member node (a property path would absorb the step; `META()` would take it as
    /// its key; `(e)` or `-5` would not be a primary).
    static func memberBaseNeedsParentheses(_ base: Expr) -> Bool {
        switch base {
        case .property, .member: return true
        case .meta(_, let key, _): return key == nil
        case .literal(let v):
            switch v {
            case .array, .object: return false
            default: return level(base) < 11
            }
        default: return level(base) < 11
        }
    }

    mutating func memberBase(_ base: Expr) {
        if SQLWriter.memberBaseNeedsParentheses(base) {
            out += "("
            expr(base, 0)
            out += ")"
            return
        }
        expr(base, 11)
        // `5.x` would lex as the number `5.` followed by `x`.
        if case .literal(let v) = base, v.isNumber { out += " " }
    }

    mutating func path(_ comps: [PathComponent], leadingDot: Bool) {
        for (i, c) in comps.enumerated() {
            switch c {
            case .key(let k):
                if i > 0 || leadingDot { out += "." }
                name(k)
            case .index(let n):
                out += "[\(n)]"
            }
        }
    }

    mutating func indexReference(_ ref: IndexReference) {
        if let alias = ref.alias { name(alias); out += "." }
        name(ref.name)
    }

    mutating func collation(_ k: CollationKeyword) {
        switch k {
        case .unicode(let locale):
            out += "UNICODE"
            if let locale {
                out += ":"
                // Any identifier-shaped locale may be written plainly, reserved words included.
                if SQLWriter.isLocaleWord(locale) { out += locale } else { name(locale) }
            }
        case .noUnicode: out += "NOUNICODE"
        case .caseSensitive: out += "CASE"
        case .noCase: out += "NOCASE"
        case .diac: out += "DIAC"
        case .noDiac: out += "NODIAC"
        }
    }

    static func isLocaleWord(_ s: String) -> Bool {
        var first = true
        for b in s.utf8 {
            let letter = (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F
            let digit = b >= 0x30 && b <= 0x39
            if first ? !letter : !(letter || digit || b == 0x24) { return false }
            first = false
        }
        return !first
    }

    mutating func literal(_ v: Value) {
        switch v {
        case .missing: out += "MISSING"
        case .null: out += "NULL"
        case .bool(let b): out += b ? "TRUE" : "FALSE"
        case .int(let i): out += String(i)
        case .double(let d): out += SQLWriter.double(d)
        case .string(let s): out += SQLPrinter.string(s)
        case .array(let a):
            out += "["
            for (i, x) in a.enumerated() {
                if i > 0 { out += ", " }
                literal(x)
            }
            out += "]"
        case .object(let o):
            out += "{"
            for (i, k) in o.keys.sorted().enumerated() {
                if i > 0 { out += ", " }
                out += SQLPrinter.string(k) + ": "
                literal(o[k]!)
            }
            out += "}"
        }
    }

    /// A Double as a SQL++ number literal that reads back as the same Double.
    static func double(_ d: Double) -> String {
        if d.isNaN { return "NULL" }  // no SQL++ spelling
        if d.isInfinite { return d < 0 ? "-1e999" : "1e999" }
        let s = "\(d)"  // shortest round-trip form: "1.0", "1e-05", "1.5e+300"
        if s.utf8.contains(where: { $0 == 0x2E || $0 == 0x65 || $0 == 0x45 }) { return s }
        return s + ".0"
    }
}
