

// Access-path choice for one collection source (SPEC §9.2, STYLE.md planner notes):
// split WHERE (and ON) into AND-terms, match each term to an index expression written the
// same way, build key ranges over a leading prefix of the index, check the partial-index
// rules, and pick the candidate with the best score (most constrained columns, then the
// fewest index entries).

/// A constraint on one index column, with value expressions evaluated when the scan starts.
enum ColumnConstraint {
    /// `=` (one value) or `IN` (several).
    case equal([BoundExpr])
    /// A range; nil sides are open. `excludeNullAndMissing` applies to relational operators.
    case range(lower: (BoundExpr, Bool)?, upper: (BoundExpr, Bool)?)
    /// `LIKE 'prefix%'`.
    case prefix(String)
}

/// The runtime part of an index scan: column constraints that become key ranges.
struct IndexScanKeys {
    /// Equality/IN constraints on the leading columns.
    var equalities: [[BoundExpr]]
    /// An optional range or prefix constraint on the next column.
    var rangeConstraint: ColumnConstraint?
    /// Columns whose one expression is an array (`x IN $array`): its elements are the values.
    var spread: Set<Int> = []
}

/// Matching a source's WHERE (and ON) terms to the expressions of a keyed index: which terms
/// constrain which column, and the partial-index rules. Shared by value and array indexes.
struct KeyedPlanning {
    let request: AccessRequest
    var query: AnalyzedQuery { request.query }
    var source: SourceInfo { request.source }
    var terms: [BoundExpr] { request.terms }

    /// Terms that may restrict this source's rows: WHERE terms (not for the inner side of a
    /// LEFT JOIN, whose unmatched rows must still appear) and the ON terms.
    var candidateTerms: [BoundExpr] {
        let leftOuter = source.join == .leftOuter
        return (leftOuter ? [] : terms.filter { !$0.referencedSources.contains { $0 > source.index } }) + onTerms
    }

    /// The ON terms of this source.
    var onTerms: [BoundExpr] { source.on?.conjuncts ?? [] }

    /// For partial-index implication: every top-level AND-term that constrains this source,
    /// rebased to slot 0.
    var implicationTerms: [BoundExpr] {
        let leftOuter = source.join == .leftOuter
        return ((leftOuter ? [] : (query.whereClause?.conjuncts ?? [])) + onTerms).compactMap { KeyedPlanning.rebase($0, from: source.index) }
    }

    /// The most key points (the product of the `IN` list sizes) a scan may look up.
    static let maxKeyPoints = InLimits.maxValues

    /// The columns of `used` constrained by `x IN <array>` (`IndexScanKeys.spread`).
    static func spreadColumns(_ used: [ColumnTerm]) -> Set<Int> {
        Set(used.compactMap { if case .inArray = $0.term { return $0.column } else { return nil } })
    }

    /// True if some equality column may hold several values (`IN`): the scan then does not
    /// deliver the order of the columns after it.
    static func multiValued(_ equalities: [[BoundExpr]], spread: Set<Int>) -> Bool {
        equalities.indices.contains { equalities[$0].count != 1 || spread.contains($0) }
    }

    /// The constraints an index scan can use: `=`/`IN` on leading columns (at most
    /// `maxKeyPoints` key points in all; an `IN <array>` counts as one, checked when the scan
    /// starts), then one range (one lower and one upper bound) or `LIKE` prefix on the
    /// next column. Returns the equality values per column, the terms used, and the range.
    static func constrainPrefix(_ byColumn: [Int: [ColumnTerm]], columns: Int)
        -> (equalities: [[BoundExpr]], used: [ColumnTerm], range: ColumnConstraint?)
    {
        var equalities: [[BoundExpr]] = []
        var used: [ColumnTerm] = []
        var column = 0
        var rangeConstraint: ColumnConstraint?
        var points = 1
        while column < columns, let ts = byColumn[column] {
            if let eq = ts.first(where: { if case .equal = $0.constraint { return true } else { return false } }),
               case .equal(let values) = eq.constraint, points * values.count <= maxKeyPoints {
                equalities.append(values)
                points *= values.count
                used.append(eq)
                column += 1
                continue
            }
            var lower: (BoundExpr, Bool)?
            var upper: (BoundExpr, Bool)?
            for t in ts {
                switch t.constraint {
                case .range(let lo, let hi):
                    if rangeConstraint != nil { continue } // a LIKE prefix already constrains this column
                    if lo != nil && lower != nil || hi != nil && upper != nil { continue }
                    if let lo { lower = lo }
                    if let hi { upper = hi }
                    used.append(t)
                case .prefix(let p):
                    if rangeConstraint == nil && lower == nil && upper == nil {
                        rangeConstraint = .prefix(p)
                        used.append(t)
                    }
                case .equal: break
                }
            }
            if lower != nil || upper != nil { rangeConstraint = .range(lower: lower, upper: upper) }
            break
        }
        return (equalities, used, rangeConstraint)
    }
}

extension KeyedPlanning {

    /// Rewrites `e` so that source `slot` becomes slot 0 (the index's own slot).
    static func rebase(_ e: BoundExpr, from slot: Int) -> BoundExpr? {
        var ok = true
        func r(_ e: BoundExpr) -> BoundExpr {
            switch e {
            case .sourcePath(let s, let p):
                if s != slot { ok = false }
                return .sourcePath(0, p)
            case .meta(let s, let k):
                if s != slot { ok = false }
                return .meta(0, k)
            case .literal, .parameter, .variablePath: return e
            case .aggregate, .match, .rank: ok = false; return e
            case .member(let b, let p): return .member(r(b), p)
            case .array(let a): return .array(a.map(r))
            case .object(let m): return .object(m.map { BoundMember(key: $0.key, value: r($0.value)) })
            case .unary(let op, let a): return .unary(op, r(a))
            case .binary(let op, let a, let b): return .binary(op, r(a), r(b))
            case .like(let a, let b, let n): return .like(r(a), r(b), negated: n)
            case .between(let a, let b, let c, let n): return .between(r(a), r(b), r(c), negated: n)
            case .inList(let a, let l, let n): return .inList(r(a), l.map(r), negated: n)
            case .inArray(let a, let b, let n): return .inArray(r(a), r(b), negated: n)
            case .test(let a, let k, let n): return .test(r(a), k, negated: n)
            case .call(let name, let args): return .call(name, args.map(r))
            case .caseWhen(let o, let w, let el):
                return .caseWhen(o.map(r), w.map { BoundWhen(when: r($0.when), then: r($0.then)) }, el.map(r))
            case .quantified(let q, let v, let a, let p): return .quantified(q, variable: v, r(a), r(p))
            case .collate(let a, let c): return .collate(r(a), c)
            }
        }
        let out = r(e)
        return ok ? out : nil
    }

    /// True if `e` can be evaluated before source `slot` is bound (constants, parameters, earlier sources).
    func isValueSide(_ e: BoundExpr) -> Bool {
        var ok = true
        e.walk { n in
            switch n {
            case .sourcePath(let s, _), .meta(let s, _): if s >= source.index { ok = false }
            case .variablePath, .aggregate, .match, .rank: ok = false
            default: break
            }
        }
        return ok
    }

    /// Structural equality up to commutative `=`/`!=` and the order of AND/OR operands.
    static func equivalent(_ a: BoundExpr, _ b: BoundExpr) -> Bool {
        if a == b { return true }
        switch (a, b) {
        case (.binary(let o1, let x1, let y1), .binary(let o2, let x2, let y2)) where o1 == o2:
            switch o1 {
            case .equal, .notEqual:
                return (equivalent(x1, x2) && equivalent(y1, y2)) || (equivalent(x1, y2) && equivalent(y1, x2))
            case .and, .or:
                let l = flatten(a, o1), r = flatten(b, o1)
                guard l.count == r.count else { return false }
                var remaining = r
                for t in l {
                    guard let i = remaining.firstIndex(where: { equivalent(t, $0) }) else { return false }
                    remaining.remove(at: i)
                }
                return true
            default:
                return equivalent(x1, x2) && equivalent(y1, y2)
            }
        default:
            return false
        }
    }

    static func flatten(_ e: BoundExpr, _ op: BinaryOperator) -> [BoundExpr] {
        if case .binary(let o, let a, let b) = e, o == op { return flatten(a, op) + flatten(b, op) }
        return [e]
    }

    /// SPEC §9.2: can a partial index with condition `w` serve a query whose AND-terms are `q`?
    /// Returns the query terms the index proves (rule 1 exact matches), or nil if unusable.
    static func implies(query q: [BoundExpr], indexWhere w: BoundExpr) -> [BoundExpr]? {
        let (proven, missing) = implication(query: q, indexWhere: w)
        return missing == nil ? proven : nil
    }

    /// The query terms the index proves, and the first AND-term of `w` that neither rule
    /// satisfies (nil when `q` implies `w`).
    static func implication(query q: [BoundExpr], indexWhere w: BoundExpr) -> (proven: [BoundExpr], missing: BoundExpr?) {
        var proven: [BoundExpr] = []
        for term in w.conjuncts {
            // Rule 1: the same term at the top level of Q.
            if let match = q.first(where: { equivalent($0, term) }) {
                proven.append(match)
                continue
            }
            // Rule 1, OR form: a term of Q equals one branch of W's OR.
            if case .binary(.or, _, _) = term {
                let branches = flatten(term, .or)
                if q.contains(where: { t in branches.contains { equivalent($0, t) } }) { continue }
            }
            // Rule 2: `x IS NOT MISSING` follows from a comparison of x (never TRUE when x is MISSING).
            if case .test(let x, .missing, negated: true) = term {
                if q.contains(where: { comparesOperand($0, x) }) { continue }
            }
            return (proven, term)
        }
        return (proven, nil)
    }

    /// The operands a term compares with a value: both sides of `= < <= > >=`, the left of
    /// `IN`, `LIKE`, `BETWEEN` and `IS` (the expressions an index on them could serve).
    static func comparedOperands(_ t: BoundExpr) -> [BoundExpr] {
        switch t {
        case .binary(let op, let a, let b):
            switch op {
            case .equal, .less, .lessOrEqual, .greater, .greaterOrEqual: return [a, b]
            default: return []
            }
        case .inList(let a, _, false), .like(let a, _, false), .between(let a, _, _, false), .test(let a, _, _): return [a]
        default: return []
        }
    }

    /// True if `t` is `x op e` / `e op x` with op in `= != < <= > >=`, or `x IN`, `x LIKE`, `x BETWEEN`.
    static func comparesOperand(_ t: BoundExpr, _ x: BoundExpr) -> Bool {
        switch t {
        case .binary(let op, let a, let b):
            switch op {
            case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
                return a == x || b == x
            default: return false
            }
        case .inList(let a, _, _), .inArray(let a, _, _), .like(let a, _, _), .between(let a, _, _, _):
            return a == x
        default: return false
        }
    }

    // MARK: - Term matching

    /// A term that constrains index column `column`.
    struct ColumnTerm {
        var column: Int
        var constraint: ColumnConstraint
        var term: BoundExpr
        /// The range is exactly the term (it can leave the filter).
        var exact: Bool
        var text: String
    }

    /// Matches one AND-term against index expressions (rebased to slot 0).
    func match(term: BoundExpr, expressions: [BoundExpr], slot: Int? = nil, columnName: (Int) -> String) -> ColumnTerm? {
        let slot = slot ?? source.index
        func col(_ e: BoundExpr) -> Int? {
            guard let r = KeyedPlanning.rebase(e, from: slot) else { return nil }
            return expressions.firstIndex(of: r)
        }
        func flip(_ op: BinaryOperator) -> BinaryOperator {
            switch op {
            case .less: .greater
            case .lessOrEqual: .greaterOrEqual
            case .greater: .less
            case .greaterOrEqual: .lessOrEqual
            default: op
            }
        }
        switch term {
        case .binary(let op, let a, let b):
            var column: Int?
            var value: BoundExpr?
            var o = op
            if let c = col(a), isValueSide(b) { column = c; value = b } else if let c = col(b), isValueSide(a) { column = c; value = a; o = flip(op) }
            guard let c = column, let v = value else { return nil }
            // `x = MISSING` / `x < NULL` are never TRUE: leave them to the filter.
            if case .literal(let lit) = v, lit.isMissing || (lit.isNull && o != .equal) { return nil }
            let name = columnName(c)
            switch o {
            case .equal: return ColumnTerm(column: c, constraint: .equal([v]), term: term, exact: true, text: "\(name)=?")
            case .less: return ColumnTerm(column: c, constraint: .range(lower: nil, upper: (v, false)), term: term, exact: true, text: "\(name)<?")
            case .lessOrEqual: return ColumnTerm(column: c, constraint: .range(lower: nil, upper: (v, true)), term: term, exact: true, text: "\(name)<=?")
            case .greater: return ColumnTerm(column: c, constraint: .range(lower: (v, false), upper: nil), term: term, exact: true, text: "\(name)>?")
            case .greaterOrEqual: return ColumnTerm(column: c, constraint: .range(lower: (v, true), upper: nil), term: term, exact: true, text: "\(name)>=?")
            default: return nil
            }
        case .between(let a, let lo, let hi, negated: false):
            guard let c = col(a), isValueSide(lo), isValueSide(hi) else { return nil }
            return ColumnTerm(column: c, constraint: .range(lower: (lo, true), upper: (hi, true)), term: term, exact: true,
                              text: "\(columnName(c))>=? AND \(columnName(c))<=?")
        case .inList(let a, let list, negated: false):
            guard let c = col(a), list.allSatisfy(isValueSide), !list.isEmpty, list.count <= InLimits.maxValues else { return nil }
            return ColumnTerm(column: c, constraint: .equal(list), term: term, exact: true, text: "\(columnName(c)) IN (\(list.count))")
        case .inArray(let a, let array, negated: false):
            // `x IN $values`: the array's elements are the key points (`IndexScanKeys.spread`).
            guard let c = col(a), isValueSide(array) else { return nil }
            return ColumnTerm(column: c, constraint: .equal([array]), term: term, exact: true, text: "\(columnName(c)) IN ?")
        case .like(let a, .literal(.string(let pattern)), negated: false):
            guard let c = col(a), let prefix = KeyedPlanning.likePrefix(pattern) else { return nil }
            // A number on the left of LIKE matches as its text: keep such patterns off the index.
            if let f = prefix.text.unicodeScalars.first, f == "-" || f == "+" || f == "." || ("0"..."9").contains(f) { return nil }
            if prefix.exact {
                return ColumnTerm(column: c, constraint: .equal([.literal(.string(prefix.text))]), term: term, exact: true, text: "\(columnName(c))=?")
            }
            return ColumnTerm(column: c, constraint: .prefix(prefix.text), term: term, exact: prefix.wholePattern,
                              text: "\(columnName(c)) LIKE '\(prefix.text)%'")
        case .test(let a, let kind, let negated):
            guard let c = col(a) else { return nil }
            let name = columnName(c)
            let null = BoundExpr.literal(.null), missing = BoundExpr.literal(.missing)
            switch (kind, negated) {
            case (.null, false): return ColumnTerm(column: c, constraint: .equal([null]), term: term, exact: true, text: "\(name) IS NULL")
            case (.missing, false): return ColumnTerm(column: c, constraint: .equal([missing]), term: term, exact: true, text: "\(name) IS MISSING")
            case (.null, true), (.valued, false):
                return ColumnTerm(column: c, constraint: .range(lower: (null, false), upper: nil), term: term, exact: true, text: "\(name) IS NOT NULL")
            case (.missing, true):
                return ColumnTerm(column: c, constraint: .range(lower: (missing, false), upper: nil), term: term, exact: true, text: "\(name) IS NOT MISSING")
            case (.valued, true):
                return ColumnTerm(column: c, constraint: .range(lower: (missing, true), upper: (null, true)), term: term, exact: true, text: "\(name) IS NOT VALUED")
            }
        default:
            return nil
        }
    }

    /// The literal prefix of a LIKE pattern: `'abc%'` → abc (whole pattern), `'abc%d'` → abc
    /// (not whole), `'abc'` → exact. Nil when the pattern starts with a wildcard.
    static func likePrefix(_ pattern: String) -> (text: String, exact: Bool, wholePattern: Bool)? {
        var out = ""
        var it = Array(pattern.unicodeScalars)[...]
        while let c = it.first {
            if c == "\\" {
                it.removeFirst()
                guard let n = it.first else { return nil }
                out.unicodeScalars.append(n)
                it.removeFirst()
                continue
            }
            if c == "%" || c == "_" {
                if out.isEmpty { return nil }
                let rest = it.dropFirst()
                return (out, false, c == "%" && rest.isEmpty)
            }
            out.unicodeScalars.append(c)
            it.removeFirst()
        }
        return (out, true, true)
    }
}

extension KeyedPlanning {
    /// The expressions a covering check must see: every one the query reads, except the
    /// `satisfied` WHERE terms (nil when a column is `*`).
    func queryExpressions(excluding satisfied: [BoundExpr]) -> [BoundExpr]? {
        let q = query
        var exprs: [BoundExpr] = []
        for c in q.columns {
            switch c.kind {
            case .expression(let e): exprs.append(e)
            case .star: return nil
            }
        }
        exprs += (q.whereClause?.conjuncts ?? []).filter { !satisfied.contains($0) }
        exprs += q.groupBy + (q.having.map { [$0] } ?? []) + q.orderBy.map(\.expr) + q.aggregates.flatMap(\.args)
        return exprs
    }

    /// True if the query reads nothing from its sources but what `covered` accepts: it is
    /// asked about each property path and `meta()` that the columns, the WHERE terms other
    /// than `satisfied`, GROUP BY, HAVING, ORDER BY and aggregate arguments read (`SELECT *`
    /// reads everything). Shared by the covering tests of value, array and primary-key paths.
    func readsOnly(excluding satisfied: [BoundExpr] = [], _ covered: (BoundExpr) -> Bool) -> Bool {
        guard let exprs = queryExpressions(excluding: satisfied) else { return false }
        return exprs.allSatisfy { e in
            KeyedPlanning.readsOnly(e) { n in
                switch n {
                case .sourcePath, .meta: return covered(n)
                default: return nil
                }
            }
        }
    }

    /// True if `e` reads nothing but what `leaf` accepts: `leaf` decides a node (true: read
    /// from the index, false: needs the document) or returns nil to look inside it. Literals,
    /// parameters, variables and aggregate results need nothing; MATCH and RANK need the
    /// document's source.
    static func readsOnly(_ e: BoundExpr, _ leaf: (BoundExpr) -> Bool?) -> Bool {
        if let decided = leaf(e) { return decided }
        func covered(_ e: BoundExpr) -> Bool { readsOnly(e, leaf) }
        switch e {
        case .sourcePath, .meta, .match, .rank: return false
        case .literal, .parameter, .variablePath, .aggregate: return true
        case .member(let b, _), .unary(_, let b), .test(let b, _, _), .collate(let b, _): return covered(b)
        case .array(let a), .call(_, let a): return a.allSatisfy(covered)
        case .object(let m): return m.allSatisfy { covered($0.value) }
        case .binary(_, let a, let b), .like(let a, let b, _), .inArray(let a, let b, _): return covered(a) && covered(b)
        case .between(let a, let b, let c, _): return covered(a) && covered(b) && covered(c)
        case .inList(let a, let l, _): return covered(a) && l.allSatisfy(covered)
        case .caseWhen(let o, let w, let el):
            return (o.map(covered) ?? true) && w.allSatisfy { covered($0.when) && covered($0.then) } && (el.map(covered) ?? true)
        case .quantified(_, _, let a, let p): return covered(a) && covered(p)
        }
    }
}
