// The analyzer's output form of an expression: every name resolved to a source slot,
// a quantifier variable, a metadata key or a parameter; aggregates moved out to slots.
// The planner matches index expressions against this form (structural equality), and the
// compiler turns it into evaluation closures.

/// A resolved expression.
indirect enum BoundExpr: Hashable, Sendable {
    case literal(Value)
    case parameter(String)
    /// A path inside the value of source `slot` (the document body, or the UNNEST element).
    case sourcePath(Int, [PathComponent])
    /// A path inside the value bound to quantifier variable `slot`.
    case variablePath(Int, [PathComponent])
    /// `meta(source)` (nil key: the whole object) or `meta(source).key`.
    case meta(Int, MetaKey?)
    case member(BoundExpr, [PathComponent])
    case array([BoundExpr])
    case object([BoundMember])
    case unary(UnaryOperator, BoundExpr)
    case binary(BinaryOperator, BoundExpr, BoundExpr)
    case like(BoundExpr, BoundExpr, negated: Bool)
    case between(BoundExpr, BoundExpr, BoundExpr, negated: Bool)
    case inList(BoundExpr, [BoundExpr], negated: Bool)
    case inArray(BoundExpr, BoundExpr, negated: Bool)
    case test(BoundExpr, TestKind, negated: Bool)
    /// A scalar function call (upper-case name, resolved in the registry by the compiler).
    case call(String, [BoundExpr])
    /// The value of aggregate number `slot` for the current group.
    case aggregate(Int)
    case caseWhen(BoundExpr?, [BoundWhen], BoundExpr?)
    case quantified(Quantifier, variable: Int, BoundExpr, BoundExpr)
    case collate(BoundExpr, Collation)
    /// `MATCH(index, query)` on source `slot`.
    case match(source: Int, index: String, BoundExpr)
    /// `RANK(index)` on source `slot`.
    case rank(source: Int, index: String)

    /// Calls `visit` on this node and every sub-expression (pre-order).
    func walk(_ visit: (BoundExpr) -> Void) {
        visit(self)
        switch self {
        case .literal, .parameter, .sourcePath, .variablePath, .meta, .aggregate, .rank: break
        case .member(let e, _), .unary(_, let e), .test(let e, _, _), .collate(let e, _), .match(_, _, let e): e.walk(visit)
        case .array(let a), .call(_, let a): a.forEach { $0.walk(visit) }
        case .object(let m): m.forEach { $0.value.walk(visit) }
        case .binary(_, let a, let b), .like(let a, let b, _), .inArray(let a, let b, _): a.walk(visit); b.walk(visit)
        case .between(let a, let b, let c, _): a.walk(visit); b.walk(visit); c.walk(visit)
        case .inList(let a, let l, _): a.walk(visit); l.forEach { $0.walk(visit) }
        case .caseWhen(let o, let w, let e):
            o?.walk(visit)
            for x in w { x.when.walk(visit); x.then.walk(visit) }
            e?.walk(visit)
        case .quantified(_, _, let a, let p): a.walk(visit); p.walk(visit)
        }
    }

    /// Rebuilds the tree bottom-up, replacing every node for which `f` returns a value.
    func replacing(_ f: (BoundExpr) -> BoundExpr?) -> BoundExpr {
        if let r = f(self) { return r }
        func m(_ e: BoundExpr) -> BoundExpr { e.replacing(f) }
        switch self {
        case .literal, .parameter, .sourcePath, .variablePath, .meta, .aggregate, .rank: return self
        case .member(let b, let p): return .member(m(b), p)
        case .array(let a): return .array(a.map(m))
        case .object(let ms): return .object(ms.map { BoundMember(key: $0.key, value: m($0.value)) })
        case .unary(let op, let a): return .unary(op, m(a))
        case .binary(let op, let a, let b): return .binary(op, m(a), m(b))
        case .like(let a, let b, let n): return .like(m(a), m(b), negated: n)
        case .between(let a, let b, let c, let n): return .between(m(a), m(b), m(c), negated: n)
        case .inList(let a, let l, let n): return .inList(m(a), l.map(m), negated: n)
        case .inArray(let a, let b, let n): return .inArray(m(a), m(b), negated: n)
        case .test(let a, let k, let n): return .test(m(a), k, negated: n)
        case .call(let name, let args): return .call(name, args.map(m))
        case .caseWhen(let o, let w, let e):
            return .caseWhen(o.map(m), w.map { BoundWhen(when: m($0.when), then: m($0.then)) }, e.map(m))
        case .quantified(let q, let v, let a, let p): return .quantified(q, variable: v, m(a), m(p))
        case .collate(let a, let c): return .collate(m(a), c)
        case .match(let s, let i, let q): return .match(source: s, index: i, m(q))
        }
    }

    /// The expression with every `$parameter` replaced by its bound value (MISSING if unbound),
    /// so that comparisons with parameters take the same fast paths as literals.
    func bindingParameters(_ params: [String: Value]) -> BoundExpr {
        replacing { e in
            if case .parameter(let name) = e { return .literal(params[name] ?? .missing) }
            return nil
        }
    }

    /// The source slots this expression reads.
    var referencedSources: Set<Int> {
        var s = Set<Int>()
        walk { e in
            switch e {
            case .sourcePath(let i, _), .meta(let i, _), .match(let i, _, _), .rank(let i, _): s.insert(i)
            default: break
            }
        }
        return s
    }

    /// True if the expression contains no source, variable, aggregate, match or rank reference
    /// (its value is the same for every row; parameters allowed).
    var isConstant: Bool {
        var constant = true
        walk { e in
            switch e {
            case .sourcePath, .variablePath, .meta, .aggregate, .match, .rank: constant = false
            default: break
            }
        }
        return constant
    }

    /// Splits a condition into its top-level AND-terms.
    var conjuncts: [BoundExpr] {
        if case .binary(.and, let a, let b) = self { return a.conjuncts + b.conjuncts }
        return [self]
    }
}

/// A member of a bound object literal.
struct BoundMember: Hashable, Sendable {
    var key: String
    var value: BoundExpr
}

/// A bound WHEN/THEN pair.
struct BoundWhen: Hashable, Sendable {
    var when: BoundExpr
    var then: BoundExpr
}

extension Value {
    /// Follows a path of members and indexes; MISSING as soon as a step does not apply.
    func value(at path: [PathComponent]) -> Value {
        var cur = self
        for c in path {
            switch c {
            case .key(let k): cur = cur[k]
            case .index(let i): cur = cur[i]
            }
            if case .missing = cur { return .missing }
        }
        return cur
    }
}
