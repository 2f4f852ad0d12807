// Compiles `BoundExpr` trees into closures, once per query. The active collation (from
// COLLATE suffixes) is decided here, at compile time, and captured by the closures.

enum ExpressionCompiler {
    /// Compiles `e` under the collation `c` (binary unless a COLLATE says otherwise).
    static func compile(_ e: BoundExpr, collation c: Collation = .binary) -> Evaluator {
        switch e {
        case .literal(let v):
            return { _ in v }

        case .parameter(let name):
            return { ctx in ctx.parameters[name] ?? .missing }

        case .sourcePath(let slot, let path):
            if path.isEmpty {
                return { ctx in
                    let s = ctx.slots + slot
                    if s.pointee.partial { ctx.completeBody(s) }
                    return s.pointee.wholeValue
                }
            }
            let compiled = CompiledPath(path)
            return { ctx in slotValue(ctx, ctx.slots + slot, compiled) }

        case .variablePath(let slot, let path):
            if path.isEmpty { return { ctx in ctx.variables[slot] } }
            return { ctx in ctx.variables[slot].value(at: path) }

        case .meta(let slot, let key):
            return { ctx in metaValue(ctx.slots + slot, key) }

        case .member(let base, let path):
            let b = compile(base, collation: c)
            return { ctx in b(ctx).value(at: path) }

        case .array(let elements):
            let es = elements.map { compile($0, collation: c) }
            return { ctx in
                var out: [Value] = []
                out.reserveCapacity(es.count)
                for f in es {
                    let v = f(ctx)
                    if !v.isMissing { out.append(v) }
                }
                return .array(out)
            }

        case .object(let members):
            let ms = members.map { ($0.key, compile($0.value, collation: c)) }
            return { ctx in
                var out: [String: Value] = [:]
                for (k, f) in ms {
                    let v = f(ctx)
                    if !v.isMissing { out[k] = v }
                }
                return .object(out)
            }

        case .unary(let op, let a):
            let f = compile(a, collation: c)
            switch op {
            case .not: return { ctx in Semantics.not(Semantics.truth(f(ctx))).value }
            case .negate: return { ctx in Semantics.negate(f(ctx)) }
            case .plus:
                return { ctx in
                    let v = f(ctx)
                    return v.isMissing ? .missing : (v.isNumber ? v : .null)
                }
            }

        case .binary(let op, let a, let b):
            return compileBinary(op, a, b, c)

        case .like(let a, let p, let negated):
            let fa = compile(a, collation: c), fp = compile(p, collation: c)
            if case .literal(.string(let pattern)) = p, pattern.utf8.count <= LikeLimits.maxPatternBytes {
                // A constant pattern (parameters are bound by now) is compiled once.
                let compiled = LikePattern(pattern, collation: c)
                return { ctx in
                    let r = Semantics.like(fa(ctx), compiled)
                    return negated ? Semantics.not(Semantics.truth(r)).value : r
                }
            }
            return { ctx in
                let pv = fp(ctx)
                if case .string(let s) = pv, s.utf8.count > LikeLimits.maxPatternBytes {
                    ctx.raise(LikeLimits.tooLong(s))
                    return .null
                }
                let r = Semantics.like(fa(ctx), pv, c)
                // NOT LIKE is NOT (x LIKE p): NULL becomes FALSE first, so NOT gives TRUE.
                return negated ? Semantics.not(Semantics.truth(r)).value : r
            }

        case .between(let a, let lo, let hi, let negated):
            let fa = compile(a, collation: c), fl = compile(lo, collation: c), fh = compile(hi, collation: c)
            return { ctx in
                let v = fa(ctx)
                let t = Semantics.and(Semantics.truth(Semantics.relational(.greaterOrEqual, v, fl(ctx), c)),
                                      Semantics.truth(Semantics.relational(.lessOrEqual, v, fh(ctx), c)))
                return (negated ? Semantics.not(t) : t).value
            }

        case .inList(let a, let list, let negated):
            let fa = compile(a, collation: c)
            if let set = InSet(list, collation: c) {
                return { ctx in
                    if set.tooLarge { ctx.raise(InLimits.tooMany(list.count)); return .null }
                    let t = set.contains(fa(ctx))
                    return (negated ? Semantics.not(t) : t).value
                }
            }
            let fs = list.map { compile($0, collation: c) }
            return { ctx in
                let x = fa(ctx)
                let t = Semantics.inList(x, fs.map { $0(ctx) }, c)
                return (negated ? Semantics.not(t) : t).value
            }

        case .inArray(let a, let arr, let negated):
            let fa = compile(a, collation: c), fr = compile(arr, collation: c)
            if case .literal(.array(let elements)) = arr, let set = InSet(elements.map(BoundExpr.literal), collation: c) {
                // A constant array (a bound parameter): a hash set, built once.
                return { ctx in
                    if set.tooLarge { ctx.raise(InLimits.tooMany(elements.count)); return .null }
                    let t = set.contains(fa(ctx))
                    return (negated ? Semantics.not(t) : t).value
                }
            }
            return { ctx in
                let x = fa(ctx), r = fr(ctx)
                let t: Truth
                switch r {
                case .missing: t = .missing
                case .null: return .null
                case .array(let list):
                    if list.count > InLimits.maxValues { ctx.raise(InLimits.tooMany(list.count)); return .null }
                    t = Semantics.inList(x, list, c)
                default: t = x.isMissing ? .missing : .false
                }
                return (negated ? Semantics.not(t) : t).value
            }

        case .test(let a, let kind, let negated):
            let f = compile(a, collation: c)
            return { ctx in Semantics.test(f(ctx), kind, negated: negated) }

        case .call(let name, let args):
            guard let def = FunctionRegistry.lookup(name) else { return { _ in .null } }
            let fs = args.map { compile($0, collation: c) }
            if let regex = RegexFunction.compile(name, args, fs) { return regex }
            let fctx = FunctionContext(collation: c)
            let eval = def.evaluate
            switch fs.count {
            case 0: return { _ in eval([], fctx) }
            case 1:
                let f0 = fs[0]
                return { ctx in eval([f0(ctx)], fctx) }
            case 2:
                let f0 = fs[0], f1 = fs[1]
                return { ctx in eval([f0(ctx), f1(ctx)], fctx) }
            default:
                return { ctx in eval(fs.map { $0(ctx) }, fctx) }
            }

        case .aggregate(let slot):
            return { ctx in ctx.aggregateValues[slot] }

        case .caseWhen(let operand, let whens, let els):
            let fo = operand.map { compile($0, collation: c) }
            let fw = whens.map { (compile($0.when, collation: c), compile($0.then, collation: c)) }
            let fe = els.map { compile($0, collation: c) }
            if let fo {
                return { ctx in
                    let x = fo(ctx)
                    for (w, t) in fw where Semantics.truth(Semantics.equals(x, w(ctx), c)) == .true { return t(ctx) }
                    return fe?(ctx) ?? .null
                }
            }
            return { ctx in
                for (w, t) in fw where Semantics.truth(w(ctx)) == .true { return t(ctx) }
                return fe?(ctx) ?? .null
            }

        case .quantified(let q, let slot, let arr, let pred):
            let fa = compile(arr, collation: c), fp = compile(pred, collation: c)
            return { ctx in
                let a = fa(ctx)
                let elements: [Value]
                switch a {
                case .missing: return .missing
                case .null: return .null
                case .array(let x): elements = x
                default: elements = []
                }
                let saved = ctx.variables[slot]
                defer { ctx.variables[slot] = saved }
                switch q {
                case .any:
                    for e in elements {
                        ctx.variables[slot] = e
                        if Semantics.truth(fp(ctx)) == .true { return .bool(true) }
                    }
                    return .bool(false)
                case .every, .anyAndEvery:
                    if q == .anyAndEvery && elements.isEmpty { return .bool(false) }
                    for e in elements {
                        ctx.variables[slot] = e
                        if Semantics.truth(fp(ctx)) == .false { return .bool(false) }
                    }
                    return .bool(true)
                }
            }

        case .collate(let inner, let collation):
            return compile(inner, collation: collation)

        case .match(let slot, let index, let query):
            let name = index.lowercased()
            let fq = compile(query, collation: c)
            return { ctx in
                let s = ctx.slots[slot]
                if s.state == .absent { return .bool(false) }
                if s.drivingIndex == name { return .bool(s.matched) }
                // Another full-text index of the same source: look the document up in its matches.
                let qv = fq(ctx)
                guard case .string(let q) = qv else {
                    ctx.raise(FullTextQueryValue.notAString(qv, index: index))
                    return .bool(false)
                }
                return .bool(ctx.fullTextMatches(slot: slot, index: index, query: q)[Array(s.idString.utf8)] != nil)
            }

        case .rank(let slot, let index):
            let name = index.lowercased()
            return { ctx in
                let s = ctx.slots[slot]
                if s.state == .absent { return .missing }
                if s.drivingIndex == name { return .double(s.rank) }
                // The rank of a MATCH that filters rather than drives: from its cached matches.
                for (key, ranks) in ctx.fullTextCache where key.hasPrefix(name + "\u{0}") {
                    if let r = ranks[Array(s.idString.utf8)] { return .double(r) }
                }
                return .double(0)
            }
        }
    }

    /// `path op literal` (either way round) under the binary collation, compared in place in
    /// the document without building a `Value` for the property: the shape of most filters.
    private static func compilePathLiteralComparison(_ op: BinaryOperator, _ a: BoundExpr, _ b: BoundExpr, _ c: Collation) -> Evaluator? {
        guard c.isBinary else { return nil }
        var op = op
        let slot: Int, path: [PathComponent], literal: Value
        if case .sourcePath(let s, let p) = a, !p.isEmpty, case .literal(let v) = b {
            (slot, path, literal) = (s, p, v)
        } else if case .sourcePath(let s, let p) = b, !p.isEmpty, case .literal(let v) = a {
            (slot, path, literal) = (s, p, v)
            switch op {
            case .less: op = .greater
            case .lessOrEqual: op = .greaterOrEqual
            case .greater: op = .less
            case .greaterOrEqual: op = .lessOrEqual
            default: break
            }
        } else {
            return nil
        }
        let cp = CompiledPath(path)
        let generic: (Value) -> Value
        switch op {
        case .equal: generic = { Semantics.equals($0, literal, c) }
        case .notEqual: generic = { v in
            let r = Semantics.equals(v, literal, c)
            if case .bool(let x) = r { return .bool(!x) }
            return r
        }
        case .less, .lessOrEqual, .greater, .greaterOrEqual: generic = { Semantics.relational(op, $0, literal, c) }
        default: return nil
        }
        if literal.isMissing { return { _ in .missing } }
        switch literal {
        case .string(let text) where op == .equal || op == .notEqual:
            let bytes = Array(text.utf8)
            let negate = op == .notEqual
            return { ctx in
                let s = ctx.slots + slot
                guard s.pointee.state == .document else { return generic(slotValue(ctx, s, cp)) }
                guard let bv = slotBinary(ctx, s, cp) else { return .missing }
                if bv.kind == .string {
                    let same = bv.withUTF8 { $0.elementsEqual(bytes) } ?? false
                    return .bool(same != negate)
                }
                return .bool(negate) // a value of another type (NULL included) is never equal
            }
        case .int, .double:
            return { ctx in
                let s = ctx.slots + slot
                guard s.pointee.state == .document else { return generic(slotValue(ctx, s, cp)) }
                guard let bv = slotBinary(ctx, s, cp) else { return .missing }
                return generic(bv.number ?? bv.toValue())
            }
        default:
            return { ctx in generic(slotValue(ctx, ctx.slots + slot, cp)) }
        }
    }

    private static func compileBinary(_ op: BinaryOperator, _ a: BoundExpr, _ b: BoundExpr, _ c: Collation) -> Evaluator {
        if let fast = compilePathLiteralComparison(op, a, b, c) { return fast }
        let fa = compile(a, collation: c), fb = compile(b, collation: c)
        switch op {
        case .and:
            return { ctx in
                let x = Semantics.truth(fa(ctx))
                if x == .false { return .bool(false) }
                return Semantics.and(x, Semantics.truth(fb(ctx))).value
            }
        case .or:
            return { ctx in
                let x = Semantics.truth(fa(ctx))
                if x == .true { return .bool(true) }
                return Semantics.or(x, Semantics.truth(fb(ctx))).value
            }
        case .equal:
            return { ctx in Semantics.equals(fa(ctx), fb(ctx), c) }
        case .notEqual:
            return { ctx in
                let r = Semantics.equals(fa(ctx), fb(ctx), c)
                if case .bool(let x) = r { return .bool(!x) }
                return r
            }
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            return { ctx in Semantics.relational(op, fa(ctx), fb(ctx), c) }
        case .add, .subtract, .multiply, .divide, .modulo:
            return { ctx in Semantics.arithmetic(op, fa(ctx), fb(ctx)) }
        case .concat:
            return { ctx in concatenate(fa(ctx), fb(ctx)) }
        case .is, .isNot:
            // `x IS NULL` / `x IS MISSING` written with a literal right side are the tests.
            let negated = op == .isNot
            if case .literal(.null) = b { return compile(.test(a, .null, negated: negated), collation: c) }
            if case .literal(.missing) = b { return compile(.test(a, .missing, negated: negated), collation: c) }
            return { ctx in .bool(Semantics.isOperator(fa(ctx), fb(ctx), c) != negated) }
        }
    }

    /// `meta(src)` / `meta(src).key` of a slot.
    static func metaValue(_ p: UnsafeMutablePointer<SourceSlot>, _ key: MetaKey?) -> Value {
        // The ID first, read through the pointer (a copy of the slot retains every field).
        if key == .id, p.pointee.state == .covered || (p.pointee.state == .document && p.pointee.record != nil) {
            return .string(SourceSlot.idString(p))
        }
        guard p.pointee.state == .document, let r = p.pointee.record else { return .missing }
        let s = p.pointee
        switch key {
        case .id?: return .string(s.idString)
        case .sequence?: return .int(Int64(bitPattern: r.sequence))
        case .deleted?: return .bool(r.deleted)
        case .expiration?: return r.expiration == 0 ? .missing : .int(r.expiration)
        case .revisionID?: return .string(r.revisionID)
        case nil:
            var o: [String: Value] = [
                "id": .string(s.idString), "sequence": .int(Int64(bitPattern: r.sequence)),
                "deleted": .bool(r.deleted), "revisionID": .string(r.revisionID),
            ]
            if r.expiration != 0 { o["expiration"] = .int(r.expiration) }
            return .object(o)
        }
    }
}

/// Limits on IN lists (README "Limits").
enum InLimits {
    /// The most values an IN list (written, or an array parameter) may hold.
    static let maxValues = 100_000

    /// The error for a longer list.
    static func tooMany(_ count: Int) -> QueryError {
        QueryError(.runtime, "IN list too long: \(count) values (at most \(maxValues))")
    }
}

/// The values of a constant IN list as a hash set (binary collation: `Value`'s hashing
/// agrees with SQL++ equality, so `1 IN [1.0]` holds). Short lists stay linear.
struct InSet {
    private let values: Set<Value>
    private let sawMissing: Bool
    /// More values than `InLimits.maxValues`: evaluating raises the limit error.
    let tooLarge: Bool

    /// Nil when the list is short, not constant, or compared under a non-binary collation.
    init?(_ list: [BoundExpr], collation: Collation) {
        guard collation.isBinary, list.count >= 8 else { return nil }
        var set = Set<Value>(minimumCapacity: min(list.count, InLimits.maxValues))
        var missing = false
        for e in list {
            guard case .literal(let v) = e else { return nil }
            if v.isMissing { missing = true } else { set.insert(v) }
        }
        tooLarge = list.count > InLimits.maxValues
        values = tooLarge ? [] : set
        sawMissing = missing
    }

    /// `x IN list` (SPEC §5.3): MISSING if x is; TRUE on a match; else MISSING if an element
    /// is; else FALSE.
    func contains(_ x: Value) -> Truth {
        if x.isMissing { return .missing }
        if values.contains(x) { return .true }
        return sawMissing ? .missing : .false
    }
}

/// The query of a MATCH must be a string at run time (a parameter may hold anything).
enum FullTextQueryValue {
    /// The error for a MATCH whose query is `value` (not a string).
    static func notAString(_ value: Value, index: String) -> QueryError {
        let what = value.isMissing ? "MISSING (an unbound parameter?)" : JSONWriter.string(value).prefix(40) + ""
        return QueryError(.semantic, "MATCH(\(index), …) needs a string query, not \(what)")
    }
}
