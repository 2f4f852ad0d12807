// Name resolution and semantic checks (SPEC §4, §7, §8, §10.2, §12): turns a parsed
// `SelectStatement` into an `AnalyzedQuery` whose expressions are `BoundExpr`s.

/// One data source of a query, in FROM/JOIN/UNNEST order.
struct SourceInfo: Sendable {
    enum Kind: Sendable {
        /// A collection (FROM or JOIN).
        case collection(CollectionKey)
        /// An UNNEST of `path` (bound against earlier sources).
        case unnest(BoundExpr)
    }

    var index: Int
    /// The alias the query uses (explicit, else the name as written).
    var alias: String
    var explicitAlias: Bool
    var kind: Kind
    /// For JOINs: the kind and the ON condition.
    var join: JoinKind?
    var on: BoundExpr?
    /// Scope and collection as written in FROM (for "scope.coll" path matching).
    var writtenScope: String?
    var writtenName: String
    /// Tombstones are visible when the query mentions `meta(src).deleted` or bare `meta(src)`.
    var includeDeleted = false

    var collectionKey: CollectionKey? {
        if case .collection(let k) = kind { return k }
        return nil
    }
}

/// An aggregate call moved out of the expressions: `name(args)`; no args = `COUNT(*)`.
struct AggregateCall: Hashable, Sendable {
    var name: String
    var args: [BoundExpr]
}

/// A result column: its name and expression (or a star).
struct ColumnInfo: Sendable {
    enum Kind: Sendable {
        case expression(BoundExpr)
        /// `*` (nil: every source) or `alias.*`.
        case star(Int?)
    }
    var name: String
    var kind: Kind
}

/// A query after analysis: resolved sources, columns, clauses and aggregate slots.
struct AnalyzedQuery: Sendable {
    var statement: SelectStatement
    var text: String?
    var sources: [SourceInfo]
    var columns: [ColumnInfo]
    var distinct: Bool
    var whereClause: BoundExpr?
    var groupBy: [BoundExpr]
    var having: BoundExpr?
    var orderBy: [(expr: BoundExpr, descending: Bool)]
    var limit: BoundExpr?
    var offset: BoundExpr?
    var aggregates: [AggregateCall]
    var variableCount: Int
    var parameterNames: Set<String>

    /// True if the query groups (GROUP BY or any aggregate).
    var isAggregating: Bool { !groupBy.isEmpty || !aggregates.isEmpty }
}

/// What the analyzer needs to know about the database.
struct AnalyzerCatalog {
    var databaseName: String
    var collections: Set<CollectionKey>
    /// Full-text index names per collection.
    var fullTextIndexes: [CollectionKey: Set<String>]
    /// MATCH and RANK may name a full-text index that does not exist (the index advisor
    /// proposes it): the analyzer records it in `missingFullTextIndexes` instead of failing.
    var acceptsMissingFullTextIndexes = false
}

struct Analyzer {
    let catalog: AnalyzerCatalog
    let text: String?

    private var sources: [SourceInfo] = []
    private var variables: [(name: String, slot: Int)] = []
    private var variableCount = 0
    private var aggregates: [AggregateCall] = []
    private var resultAliases: [(name: String, expr: BoundExpr)] = []
    private var allowResultAliases = false
    private var allowAggregates = false
    private var clause = "SELECT"
    private var parameterNames: Set<String> = []
    private var matches: [(source: Int, index: String)] = []

    init(catalog: AnalyzerCatalog, text: String?) {
        self.catalog = catalog
        self.text = text
    }

    private func error(_ message: String, _ loc: SourceLocation? = nil, token: String? = nil) -> QueryError {
        QueryError(.semantic, message, at: loc.flatMap { $0.line > 0 ? $0 : nil }, token: token, source: text)
    }

    // MARK: - Statement

    mutating func analyze(_ s: SelectStatement) throws -> AnalyzedQuery {
        // Sources.
        try addCollectionSource(s.from, join: nil)
        for item in s.joins {
            switch item {
            case .join(let kind, let ref, let on):
                if kind == .cross && on != nil { throw error("CROSS JOIN must not have an ON clause", ref.location, token: ref.collection) }
                if kind != .cross && on == nil { throw error("\(kind.rawValue) needs an ON clause", ref.location, token: ref.collection) }
                try addCollectionSource(ref, join: kind)
                if let on {
                    clause = "ON"
                    let b = try bind(on)
                    try checkNoMatch(b, clause: "ON")
                    sources[sources.count - 1].on = b
                }
            case .unnest(let path, let alias, let loc):
                guard case .property(let comps, _) = path, !comps.isEmpty else {
                    throw error("UNNEST needs a property path", loc)
                }
                clause = "UNNEST"
                let bound = try bind(path)
                // SPEC §4: without AS, an UNNEST is aliased by the last component of its path.
                var implicit = SQLPathText.text(comps)
                if case .key(let last)? = comps.last { implicit = last }
                let name = alias ?? implicit
                try checkDuplicateAlias(name, loc)
                sources.append(SourceInfo(index: sources.count, alias: name, explicitAlias: alias != nil, kind: .unnest(bound),
                                          join: nil, on: nil, writtenScope: nil, writtenName: name))
            }
        }

        // Result columns (result aliases are not visible here).
        clause = "SELECT"
        allowAggregates = true
        var columns: [ColumnInfo] = []
        var unnamed = 0
        var explicitNames = Set<String>()
        var usedNames: [String: Int] = [:]
        // Explicit aliases keep their names; implicit names that collide get ` #2`, ` #3`.
        for col in s.columns {
            switch col {
            case .expression(_, let a?), .star(_, let a?): usedNames[a] = 1
            default: break
            }
        }
        for col in s.columns {
            switch col {
            case .star(let src, let alias):
                var slot: Int? = nil
                if let src {
                    guard let i = sourceIndex(forAlias: src) else { throw error("unknown alias '\(src)' in '\(src).*'", nil, token: src) }
                    slot = i
                }
                let name = alias ?? (slot.map { sources[$0].alias } ?? sources[0].alias)
                if slot == nil && alias == nil && sources.count > 1 {
                    // [T] one column per source.
                    for src in sources { columns.append(ColumnInfo(name: uniqueName(src.alias, &usedNames), kind: .star(src.index))) }
                    continue
                }
                columns.append(ColumnInfo(name: alias ?? uniqueName(name, &usedNames), kind: .star(slot ?? (sources.count == 1 ? 0 : nil))))
            case .expression(let e, let alias):
                let b = try bind(e)
                try checkNoMatch(b, clause: "SELECT")
                var name: String
                if let alias {
                    if explicitNames.contains(alias.lowercased()) { throw error("duplicate column name '\(alias)'", nil, token: alias) }
                    explicitNames.insert(alias.lowercased())
                    name = alias
                } else if let implicit = implicitName(e) {
                    name = uniqueName(implicit, &usedNames)
                } else {
                    unnamed += 1
                    name = "$\(unnamed)"
                }
                columns.append(ColumnInfo(name: name, kind: .expression(b)))
                if let alias { resultAliases.append((alias, b)) }
            }
        }
        allowAggregates = false

        // WHERE: result aliases visible, no aggregates; MATCH allowed at the top level.
        allowResultAliases = true
        var whereBound: BoundExpr?
        if let w = s.whereClause {
            clause = "WHERE"
            let b = try bind(w)
            try checkMatchPlacement(b)
            try checkNoAggregate(b, clause: "WHERE")
            whereBound = b
        }
        clause = "GROUP BY"
        let group = try s.groupBy.map { e -> BoundExpr in
            let b = try bind(e)
            try checkNoAggregate(b, clause: "GROUP BY")
            try checkNoMatch(b, clause: "GROUP BY")
            return b
        }
        allowAggregates = true
        var havingBound: BoundExpr?
        if let h = s.having {
            clause = "HAVING"
            havingBound = try bind(h)
            try checkNoMatch(havingBound!, clause: "HAVING")
        }
        clause = "ORDER BY"
        let order = try s.orderBy.map { t -> (expr: BoundExpr, descending: Bool) in
            let b = try bind(t.expression)
            try checkNoMatch(b, clause: "ORDER BY")
            return (b, t.descending)
        }
        allowAggregates = false
        clause = "LIMIT"
        let limit = try s.limit.map { try bindLimit($0, what: "LIMIT") }
        let offset = try s.offset.map { try bindLimit($0, what: "OFFSET") }

        // Tombstone visibility.
        for e in allExpressions(columns, whereBound, group, havingBound, order) {
            e.walk { node in
                if case .meta(let i, let key) = node, key == nil || key == .deleted { sources[i].includeDeleted = true }
            }
        }

        return AnalyzedQuery(statement: s, text: text, sources: sources, columns: columns, distinct: s.distinct,
                             whereClause: whereBound, groupBy: group, having: havingBound, orderBy: order,
                             limit: limit, offset: offset, aggregates: aggregates, variableCount: variableCount,
                             parameterNames: parameterNames)
    }

    private func allExpressions(_ cols: [ColumnInfo], _ w: BoundExpr?, _ g: [BoundExpr], _ h: BoundExpr?,
                                _ o: [(expr: BoundExpr, descending: Bool)]) -> [BoundExpr] {
        var out: [BoundExpr] = []
        for c in cols { if case .expression(let e) = c.kind { out.append(e) } }
        if let w { out.append(w) }
        out += g
        if let h { out.append(h) }
        out += o.map(\.expr)
        for s in sources { if let on = s.on { out.append(on) }; if case .unnest(let p) = s.kind { out.append(p) } }
        out += aggregates.flatMap(\.args)
        return out
    }

    private func uniqueName(_ name: String, _ used: inout [String: Int]) -> String {
        let n = (used[name] ?? 0) + 1
        used[name] = n
        return n == 1 ? name : "\(name) #\(n)"
    }

    /// SPEC §8 rules 2 and 4: a property path gives its last key, meta(..).key the key.
    private func implicitName(_ e: Expr) -> String? {
        switch e {
        case .property(let comps, _):
            guard case .key(let k)? = comps.last else { return nil }
            return k
        case .meta(_, let key?, _): return key.rawValue
        case .collate(let inner, _): return implicitName(inner)
        default: return nil
        }
    }

    // MARK: - Sources

    private mutating func addCollectionSource(_ ref: DataSourceReference, join: JoinKind?) throws {
        let key = try resolveCollection(ref)
        let alias = ref.alias ?? ref.collection
        try checkDuplicateAlias(alias, ref.location)
        sources.append(SourceInfo(index: sources.count, alias: alias, explicitAlias: ref.alias != nil, kind: .collection(key),
                                  join: join, on: nil, writtenScope: ref.scope, writtenName: ref.collection))
    }

    private func resolveCollection(_ ref: DataSourceReference) throws -> CollectionKey {
        let d = CollectionKey.defaultName
        var scope = ref.scope
        if scope == "_" { scope = d }
        let name = ref.collection
        let key: CollectionKey
        if scope == nil && (name == "_" || name == d || name == catalog.databaseName) {
            key = .defaultCollection
        } else if scope == d && (name == "_" || name == d) {
            key = .defaultCollection
        } else {
            key = CollectionKey(unchecked: scope ?? d, name)
        }
        guard catalog.collections.contains(key) else {
            let written = (ref.scope.map { $0 + "." } ?? "") + ref.collection
            throw error("no such collection '\(written)'", ref.location, token: written)
        }
        return key
    }

    private func checkDuplicateAlias(_ alias: String, _ loc: SourceLocation) throws {
        if sources.contains(where: { $0.alias.lowercased() == alias.lowercased() }) {
            throw error("duplicate alias '\(alias)'", loc, token: alias)
        }
    }

    private func sourceIndex(forAlias name: String) -> Int? {
        let l = name.lowercased()
        return sources.firstIndex { $0.alias.lowercased() == l }
    }

    private var collectionSources: [SourceInfo] { sources.filter { $0.collectionKey != nil } }

    // MARK: - Expressions

    mutating func bind(_ e: Expr) throws -> BoundExpr {
        switch e {
        case .literal(let v): return .literal(v)
        case .parameter(let name, _):
            parameterNames.insert(name)
            return .parameter(name)
        case .property(let comps, let loc): return try bindPath(comps, loc)
        case .meta(let alias, let key, let loc):
            let slot: Int
            if let alias {
                guard let i = sourceIndex(forAlias: alias), sources[i].collectionKey != nil else {
                    throw error("meta(\(alias)): '\(alias)' is not a data source alias", loc, token: alias)
                }
                slot = i
            } else {
                slot = 0
            }
            return .meta(slot, key)
        case .member(let base, let path):
            if case .meta(_, nil, let loc) = base, case .key(let k)? = path.first,
               !MetaKey.allCases.contains(where: { $0.rawValue.lowercased() == k.lowercased() }) {
                throw error("unknown meta key '\(k)': meta() has \(MetaKey.allCases.map(\.rawValue).joined(separator: ", "))", loc, token: k)
            }
            return .member(try bind(base), path)
        case .array(let a): return .array(try a.map { try bind($0) })
        case .object(let m): return .object(try m.map { BoundMember(key: $0.key, value: try bind($0.value)) })
        case .unary(let op, let a): return .unary(op, try bind(a))
        case .binary(let op, let a, let b): return .binary(op, try bind(a), try bind(b))
        case .like(let a, let b, let n): return .like(try bind(a), try bind(b), negated: n)
        case .between(let a, let b, let c, let n): return .between(try bind(a), try bind(b), try bind(c), negated: n)
        case .inList(let a, let l, let n): return .inList(try bind(a), try l.map { try bind($0) }, negated: n)
        case .inArray(let a, let b, let n): return .inArray(try bind(a), try bind(b), negated: n)
        case .test(let a, let k, let n): return .test(try bind(a), k, negated: n)
        case .call(let name, let args, let loc): return try bindCall(name, args, loc)
        case .caseWhen(let op, let whens, let els):
            return .caseWhen(try op.map { try bind($0) },
                             try whens.map { BoundWhen(when: try bind($0.when), then: try bind($0.then)) },
                             try els.map { try bind($0) })
        case .quantified(let q, let v, let arr, let pred):
            let a = try bind(arr)
            let slot = variableCount
            variableCount += 1
            variables.append((v, slot))
            defer { variables.removeLast() }
            return .quantified(q, variable: slot, a, try bind(pred))
        case .collate(let inner, let kws): return .collate(try bind(inner), Collation(keywords: kws))
        case .match(let ref, let q):
            let slot = try fullTextSource(ref)
            if matches.contains(where: { $0.source == slot && $0.index.lowercased() == ref.name.lowercased() }) {
                throw error("two MATCH() on the same index '\(ref.name)'", ref.location, token: ref.name)
            }
            matches.append((slot, ref.name))
            return .match(source: slot, index: ref.name, try bind(q))
        case .rank(let ref):
            let slot = try fullTextSource(ref)
            return .rank(source: slot, index: ref.name)
        }
    }

    /// Full-text indexes MATCH or RANK named that do not exist (only recorded when the catalogue
    /// `acceptsMissingFullTextIndexes`), in the order first named.
    private(set) var missingFullTextIndexes: [(collection: CollectionKey, name: String)] = []

    private mutating func fullTextSource(_ ref: IndexReference) throws -> Int {
        var slot = 0
        if let alias = ref.alias {
            guard let i = sourceIndex(forAlias: alias), sources[i].collectionKey != nil else {
                throw error("unknown alias '\(alias)' in full-text index reference", ref.location, token: alias)
            }
            slot = i
        } else if collectionSources.count > 1 {
            // Without an alias, the index is looked up in every collection source; it must be unique.
            let hits = collectionSources.filter { catalog.fullTextIndexes[$0.collectionKey!]?.contains(ref.name) ?? false }
            if hits.count == 1 { slot = hits[0].index }
        }
        let key = sources[slot].collectionKey!
        guard catalog.fullTextIndexes[key]?.contains(ref.name) ?? false else {
            if catalog.acceptsMissingFullTextIndexes {
                if !missingFullTextIndexes.contains(where: { $0.collection == key && $0.name == ref.name }) {
                    missingFullTextIndexes.append((key, ref.name))
                }
                return slot
            }
            throw error("no full-text index '\(ref.name)' on collection '\(key)'", ref.location, token: ref.name)
        }
        return slot
    }

    private mutating func bindCall(_ name: String, _ args: [Expr], _ loc: SourceLocation) throws -> BoundExpr {
        let upper = name.uppercased()
        guard let def = FunctionRegistry.lookup(upper) else {
            throw error("unknown function '\(name)'", loc, token: name)
        }
        let isCountStar = upper == "COUNT" && args.isEmpty
        if !isCountStar && (args.count < def.minArgs || args.count > def.maxArgs) {
            let expected = def.minArgs == def.maxArgs ? "\(def.minArgs)" : (def.maxArgs >= 127 ? "at least \(def.minArgs)" : "\(def.minArgs) to \(def.maxArgs)")
            throw error("function \(upper) takes \(expected) argument\(def.maxArgs == 1 ? "" : "s"), not \(args.count)", loc, token: name)
        }
        if def.isAggregate {
            guard allowAggregates else { throw error("aggregate function \(upper) is not allowed in \(clause)", loc, token: name) }
            allowAggregates = false
            defer { allowAggregates = true }
            let bound = try args.map { try bind($0) }
            let call = AggregateCall(name: upper, args: bound)
            if let i = aggregates.firstIndex(of: call) { return .aggregate(i) }
            aggregates.append(call)
            return .aggregate(aggregates.count - 1)
        }
        return .call(def.name, try args.map { try bind($0) })
    }

    /// SPEC §4: resolve the first component against variables, aliases, result aliases,
    /// collection names, then the single collection source.
    private mutating func bindPath(_ comps: [PathComponent], _ loc: SourceLocation) throws -> BoundExpr {
        guard case .key(let first)? = comps.first else { throw error("invalid property path", loc) }
        let rest = Array(comps.dropFirst())
        let lower = first.lowercased()
        if let v = variables.last(where: { $0.name.lowercased() == lower }) {
            return .variablePath(v.slot, rest)
        }
        if let i = sourceIndex(forAlias: first) {
            return .sourcePath(i, rest)
        }
        if allowResultAliases, let r = resultAliases.first(where: { $0.name.lowercased() == lower }) {
            return rest.isEmpty ? r.expr : .member(r.expr, rest)
        }
        // `scope.coll` written in FROM without alias matches as two components.
        if comps.count >= 2, case .key(let second) = comps[1] {
            if let s = sources.first(where: { !$0.explicitAlias && $0.writtenScope == first && $0.writtenName == second }) {
                return .sourcePath(s.index, Array(comps.dropFirst(2)))
            }
        }
        let collections = collectionSources
        if collections.count == 1 {
            let slot = collections[0].index
            if comps.count == 1, let key = Analyzer.metaAliases[first] { return .meta(slot, key) }
            return .sourcePath(slot, comps)
        }
        throw error("property '\(SQLPathText.text(comps))' does not begin with a declared alias", loc, token: first)
    }

    /// [LC] `_id`, `_sequence`, … mean the metadata keys.
    static let metaAliases: [String: MetaKey] = [
        "_id": .id, "_sequence": .sequence, "_deleted": .deleted, "_expiration": .expiration, "_revisionID": .revisionID,
    ]

    private mutating func bindLimit(_ e: Expr, what: String) throws -> BoundExpr {
        switch e {
        case .literal(.int): return try bind(e)
        case .unary(.negate, .literal(.int)): return try bind(e)
        case .parameter: return try bind(e)
        case .literal(let v):
            throw error("\(what) must be an integer, not \(v)", nil, token: v.description)
        default:
            throw error("\(what) must be an integer literal or a parameter", nil, token: what)
        }
    }

    /// Binds index expressions and a partial-index condition against one collection (slot 0).
    static func bindIndex(collection: CollectionKey, expressions: [Expr], where w: Expr?) throws -> ([BoundExpr], BoundExpr?, Int) {
        let catalog = AnalyzerCatalog(databaseName: "", collections: [collection], fullTextIndexes: [:])
        var a = Analyzer(catalog: catalog, text: nil)
        a.sources = [SourceInfo(index: 0, alias: collection.name, explicitAlias: false, kind: .collection(collection),
                                join: nil, on: nil, writtenScope: nil, writtenName: collection.name)]
        let exprs = try expressions.map { try a.bind($0) }
        let bw = try w.map { try a.bind($0) }
        return (exprs, bw, a.variableCount)
    }

    // MARK: - Placement checks

    private func checkNoAggregate(_ e: BoundExpr, clause: String) throws {
        var found = false
        e.walk { if case .aggregate = $0 { found = true } }
        if found { throw error("aggregate functions are not allowed in \(clause)") }
    }

    private func checkNoMatch(_ e: BoundExpr, clause: String) throws {
        var found: String?
        e.walk { if case .match(_, let idx, _) = $0 { found = idx } }
        if let found { throw error("MATCH(\(found), …) is only allowed in WHERE", nil, token: "MATCH") }
    }

    /// MATCH only at the top level of WHERE or in its top-level AND chain.
    private func checkMatchPlacement(_ w: BoundExpr) throws {
        for term in w.conjuncts {
            if case .match(_, _, let q) = term {
                try checkNoMatch(q, clause: "WHERE")
                continue
            }
            var nested: String?
            term.walk { if case .match(_, let idx, _) = $0 { nested = idx } }
            if let nested {
                throw error("MATCH(\(nested), …) must be at the top level of WHERE or in its top-level AND chain (not under OR, NOT, CASE or a function)", nil, token: "MATCH")
            }
        }
    }

    /// RANK(idx) needs a MATCH on the same index.
    func checkRanks(_ q: AnalyzedQuery) throws {
        for e in allExpressions(q.columns, nil, q.groupBy, q.having, q.orderBy) + (q.whereClause.map { [$0] } ?? []) {
            var bad: String?
            e.walk { node in
                if case .rank(let s, let idx) = node,
                   !matches.contains(where: { $0.source == s && $0.index.lowercased() == idx.lowercased() }) { bad = idx }
            }
            if let bad { throw error("RANK(\(bad)) needs a MATCH(\(bad), …) in WHERE", nil, token: "RANK") }
        }
        if let w = q.whereClause {
            var inWhere = false
            w.walk { if case .rank = $0 { inWhere = true } }
            if inWhere { throw error("RANK() is allowed in SELECT and ORDER BY only", nil, token: "RANK") }
        }
    }
}

/// Renders a path as SQL++ text (for names and messages).
enum SQLPathText {
    static func text(_ comps: [PathComponent]) -> String {
        var out = ""
        for c in comps {
            switch c {
            case .key(let k):
                if !out.isEmpty { out += "." }
                out += k
            case .index(let i): out += "[\(i)]"
            }
        }
        return out
    }
}
