// The index advisor (issue 20): for each collection a query reads, candidate index
// definitions are made from its WHERE terms (equalities first, then a range), its ORDER BY
// (with LIMIT), its GROUP BY and its UNNEST chains (and, for a MATCH naming a full-text
// index that does not exist, that index over the longest text property); each is built inside a write
// transaction that is then rolled back, the query is planned against it, and the one the
// plan uses with the fewest estimated rows read is proposed — when it reads fewer than today.
// Nothing is ever created: the transaction is always aborted.

/// An index the advisor proposes for a query (`Database.adviseIndexes(for:)`).
public struct IndexAdvice: Sendable {
    /// `scope.collection` the index is for.
    public var collection: String
    /// A suggested name (not used by any index of the collection).
    public var name: String
    /// The index in the configuration API's terms: pass it to `Collection.createIndex(withName:config:)`.
    public var configuration: any IndexConfiguration
    /// The configuration as Swift source (`ValueIndexConfiguration(["city"])`).
    public var swiftConfiguration: String
    /// The same as a command line (`tessera index create DB NAME --collection hotels --value "city"`).
    public var command: String
    /// The rows the query is estimated to read with the current indexes.
    public var estimatedRowsBefore: Int
    /// The rows it is estimated to read once this index exists.
    public var estimatedRowsAfter: Int
    /// `estimatedRowsBefore − estimatedRowsAfter`.
    public var benefit: Int { estimatedRowsBefore - estimatedRowsAfter }
}

extension Database {
    /// Proposes the indexes the planner would use for `query` to read fewer rows, best first
    /// (at most one per collection the query reads). Each proposal was checked by planning
    /// the query against the index built in a transaction that is rolled back: nothing is
    /// created, and the database is not changed.
    ///
    /// ```swift
    /// let q = try db.createQuery("SELECT name FROM hotels WHERE city = 'Paris' ORDER BY price LIMIT 10")
    /// for advice in try db.adviseIndexes(for: q) {
    ///     print(advice.swiftConfiguration, advice.estimatedRowsBefore, "→", advice.estimatedRowsAfter)
    /// }
    /// ```
    ///
    /// - Throws: `DatabaseError(.readOnly)` on a read-only database (the trial needs a write
    ///   transaction), `.busy` inside `inBatch` (rolling back would undo the
    ///   batch), `QueryError` when the query cannot be planned.
    public func adviseIndexes(for query: Query) throws -> [IndexAdvice] {
        guard currentWrite() == nil else {
            throw DatabaseError(.busy, "adviseIndexes cannot run inside inBatch: its trial transaction would undo the batch")
        }
        _ = try refreshCatalogIfStale()
        var found: [IndexAdvice] = []
        do {
            try write { ctx in
                found = try IndexAdvisor(database: self, ctx: ctx, query: query).advise()
                throw AdvisorRollback()
            }
        } catch is AdvisorRollback {}
        return found.sorted { $0.benefit > $1.benefit }
    }

    /// Proposes indexes for the SQL++ query `sql` run with `parameters`, like
    /// `adviseIndexes(for:)`; the query may also name, in MATCH and RANK, a full-text index
    /// that does not exist yet (which `createQuery` rejects): the advice is then that index,
    /// over the collection's longest text property in a sample of its documents.
    ///
    /// - Throws: `QueryError` for a syntax error or when the query cannot be planned, and as
    ///   `adviseIndexes(for:)`.
    public func adviseIndexes(for sql: String, parameters: Parameters? = nil) throws -> [IndexAdvice] {
        let query = Query(unanalysed: try SQLParser.parseStatement(sql), text: sql, database: self)
        query.parameters = parameters
        return try adviseIndexes(for: query)
    }
}

/// Thrown to roll the advisor's trial transaction back.
private struct AdvisorRollback: Error {}

struct IndexAdvisor {
    let database: Database
    let ctx: WriteContext
    let query: Query

    /// A candidate definition for one collection source.
    struct Candidate {
        var type: IndexType
        var expressions: [String]
        var whereClause: String?
        var path: String?
    }

    func advise() throws -> [IndexAdvice] {
        let (q, missing) = try query.analyze(ctx.catalog, acceptingMissingFullTextIndexes: true)
        if !missing.isEmpty { return try adviseFullText(missing) }
        let params = try query.boundParameters(for: q).dictionary
        var stores: [CollectionKey: CollectionStore] = [:]
        for s in q.sources { if let k = s.collectionKey { stores[k] = try ctx.store(k) } }
        let (beforeRows, beforeCost, _) = try evaluate(q, stores: stores, params: params, trial: nil)
        var out: [IndexAdvice] = []
        var done = Set<CollectionKey>()
        var serial = 0
        for src in q.sources {
            guard let key = src.collectionKey, let store = stores[key], !done.contains(key) else { continue }
            var best: (Candidate, rows: Int, cost: Double)?
            for c in candidates(q, src) {
                serial += 1
                let def = definition(c, name: "__advisor_trial_\(serial)")
                guard (try? IndexStore.validate(def, collection: key)) != nil else { continue }
                let index = try IndexStore.open(def, collection: key, txn: ctx.txn)
                try index.backfill(txn: ctx.txn, docs: store.documents, meta: database.metaTable)
                var trial = stores
                trial[key] = store.with(indexes: store.indexes + [index])
                let (rows, cost, used) = try evaluate(q, stores: trial, params: params, trial: index)
                guard used, cost < beforeCost, rows < beforeRows else { continue }
                // A candidate must be clearly cheaper (a tenth) to beat a simpler one.
                if let b = best {
                    let tolerance = max(1, 0.1 * b.cost)
                    let better = simpler(c, than: b.0) ? cost < b.cost + tolerance : cost < b.cost - tolerance
                    if !better { continue }
                }
                best = (c, rows, cost)
            }
            if let (c, rows, _) = best {
                done.insert(key)
                let name = suggestedName(c, collection: key, existing: Set(store.indexes.map(\.definition.name)))
                out.append(advice(c, name: name, collection: key, before: beforeRows, after: rows))
            }
        }
        return out
    }

    /// MATCH names full-text indexes that do not exist, so the query cannot run: each is
    /// proposed under that name over its collection's longest text property (from a sample of
    /// documents), built in the trial transaction, and the query planned against them. Rows
    /// before: the collection's documents (what a scan with LIKE or CONTAINS would read).
    private func adviseFullText(_ missing: [(collection: CollectionKey, name: String)]) throws -> [IndexAdvice] {
        var catalog = ctx.catalog
        var made: [(Candidate, CollectionKey, name: String, IndexStore)] = []
        for (key, name) in missing {
            guard let store = catalog.collections[key], let field = try longestTextProperty(store) else { return [] }
            let c = Candidate(type: .fullText, expressions: [field])
            let def = definition(c, name: name)
            guard (try? IndexStore.validate(def, collection: key)) != nil else { return [] }
            let index = try IndexStore.open(def, collection: key, txn: ctx.txn)
            try index.backfill(txn: ctx.txn, docs: store.documents, meta: database.metaTable)
            catalog.collections[key] = store.with(indexes: store.indexes + [index])
            made.append((c, key, name, index))
        }
        let q = try query.analyze(catalog, acceptingMissingFullTextIndexes: false).query
        let params = try query.boundParameters(for: q).dictionary
        var stores: [CollectionKey: CollectionStore] = [:]
        for s in q.sources { if let k = s.collectionKey { stores[k] = catalog.collections[k] } }
        var out: [IndexAdvice] = []
        for (c, key, name, index) in made {
            var (rows, _, used) = try evaluate(q, stores: stores, params: params, trial: index)
            guard used, let store = stores[key] else { continue }
            // The planner has no estimate for a full-text search: count its matches in the
            // trial index when the searched text is known.
            if let text = matchText(q, index: name, params: params), let found = try index.kind.matches(index, snapshot: ctx.txn, query: text) {
                rows = found.count
            }
            let before = try ctx.txn.count(store.docs)
            out.append(advice(c, name: name, collection: key, before: before, after: min(rows, before)))
        }
        return out
    }

    /// The text a WHERE term `MATCH(index, text)` searches, when it is a literal or a parameter.
    private func matchText(_ q: AnalyzedQuery, index: String, params: [String: Value]) -> String? {
        for t in q.whereClause?.conjuncts ?? [] {
            guard case .match(_, let n, let e) = t, n.lowercased() == index.lowercased() else { continue }
            if case .literal(.string(let s)) = e.bindingParameters(params) { return s }
        }
        return nil
    }

    /// The top-level string property with the most words per document in a sample of the
    /// collection's first 1,000 documents (at least two on average), as a SQL++ path; nil if none.
    private func longestTextProperty(_ store: CollectionStore) throws -> String? {
        var words: [[UInt8]: Int] = [:]
        var sampled = 0
        try ctx.txn.withCursor(store.docs) { c in
            var ok = try c.first()
            let pieces = RecordBuffer()
            while ok && sampled < 1_000 {
                if let h = DocumentRecord.header(c.value), !h.deleted,
                   let root = BinaryValue.root(DocumentRecord.body(
                       try RecordAssembly.whole(c.value, id: c.key, tails: store.tails, txn: ctx.txn, buffer: pieces))) {
                    sampled += 1
                    for (k, v) in root.members {
                        guard let n = v.withUTF8({ IndexAdvisor.wordCount($0) }), n > 0 else { continue }
                        words[Array(k), default: 0] += n
                    }
                }
                ok = try c.next()
            }
        }
        guard sampled > 0, let best = words.max(by: { $0.value < $1.value || ($0.value == $1.value && $0.key.lexicographicallyPrecedes($1.key) == false) }),
              best.value >= 2 * sampled else { return nil }
        return IndexAdvisor.pathText(String(decoding: best.key, as: UTF8.self))
    }

    /// Runs of letters or digits in UTF-8 text (bytes ≥ 0x80 count as letters).
    static func wordCount(_ text: UnsafeRawBufferPointer) -> Int {
        var n = 0, inWord = false
        for b in text {
            let letter = b >= 0x80 || (b >= 0x30 && b <= 0x39) || (b | 0x20 >= 0x61 && b | 0x20 <= 0x7A)
            if letter && !inWord { n += 1 }
            inWord = letter
        }
        return n
    }

    /// A property name as a SQL++ path: as written when it is an identifier, else in backticks.
    static func pathText(_ name: String) -> String {
        let plain = name.unicodeScalars.enumerated().allSatisfy { i, ch in
            ch == "_" || ("a"..."z").contains(ch) || ("A"..."Z").contains(ch) || (i > 0 && ("0"..."9").contains(ch))
        }
        if plain && !name.isEmpty { return name }
        var out = "`"
        for ch in name { if ch == "`" { out.append("`") }; out.append(ch) }
        return out + "`"
    }

    /// Rows and cost estimated for the collection sources of the plan, and whether it uses `trial`.
    private func evaluate(_ q: AnalyzedQuery, stores: [CollectionKey: CollectionStore], params: [String: Value],
                          trial: IndexStore?) throws -> (Int, Double, Bool) {
        let plan = try Planner(query: q, stores: stores, parameters: params, txn: ctx.txn, counters: database.metaTable).plan()
        var rows = 0, cost = 0.0, used = false
        for sp in plan.sources {
            if let e = sp.estimate { rows += e.rows; cost += e.cost }
            if case .index(let p) = sp.access, let trial {
                if p.index === trial { used = true }
                if let u = p as? MultiIndexOrPlan, u.branches.contains(where: { $0.index === trial }) { used = true }
            }
        }
        if plan.aggregateShortcut != nil {
            // Read from counters or index ends: nothing to improve.
            return (0, 0, used)
        }
        return (rows, cost, used)
    }

    private func simpler(_ a: Candidate, than b: Candidate) -> Bool {
        ((a.whereClause == nil ? 0 : 1), a.expressions.count) < ((b.whereClause == nil ? 0 : 1), b.expressions.count)
    }

    // MARK: - Candidates

    private func printer(_ collection: CollectionKey) -> BoundExprPrinter {
        BoundExprPrinter(sources: [SourceInfo(index: 0, alias: "", explicitAlias: false, kind: .collection(collection),
                                              join: nil, on: nil, writtenScope: nil, writtenName: "")])
    }

    private func candidates(_ q: AnalyzedQuery, _ src: SourceInfo) -> [Candidate] {
        guard let key = src.collectionKey else { return [] }
        let p = printer(key)
        let terms = (q.whereClause?.conjuncts ?? []).map(Planner.orAsIn)
        let request = AccessRequest(query: q, source: src, terms: terms, parameters: [:], snapshot: ctx.txn, docs: DocumentTables(records: .placeholder, tails: .placeholder), ids: .placeholder,
                                    meta: database.metaTable)
        let planning = KeyedPlanning(request: request)
        var equalities: [(BoundExpr, BoundExpr)] = [] // (expression, term)
        var ranges: [BoundExpr] = []
        for t in planning.candidateTerms {
            for subject in KeyedPlanning.comparedOperands(t) {
                guard let r = KeyedPlanning.rebase(subject, from: src.index), IndexAdvisor.indexable(r),
                      let m = planning.match(term: t, expressions: [r], columnName: { _ in "" }) else { continue }
                if case .equal = m.constraint {
                    if !equalities.contains(where: { $0.0 == r }) { equalities.append((r, t)) }
                } else if !ranges.contains(r) {
                    ranges.append(r)
                }
            }
        }
        var out: [[BoundExpr]] = []
        let eq = equalities.map(\.0)
        if !eq.isEmpty || !ranges.isEmpty { out.append(eq + ranges.prefix(1)) }
        for e in eq + ranges { out.append([e]) }
        // ORDER BY (with LIMIT) after the equalities, on a lone source.
        if q.sources.count == 1, q.limit != nil, !q.orderBy.isEmpty,
           q.orderBy.allSatisfy({ $0.descending == q.orderBy[0].descending }) {
            let keys = q.orderBy.compactMap { KeyedPlanning.rebase($0.expr, from: src.index) }
            if keys.count == q.orderBy.count, keys.allSatisfy(IndexAdvisor.indexable) { out.append(eq + keys.filter { !eq.contains($0) }) }
        }
        // GROUP BY keys (read in key order, covering when they are all the query reads).
        if q.sources.count == 1, !q.groupBy.isEmpty {
            let keys = q.groupBy.compactMap { KeyedPlanning.rebase($0, from: src.index) }
            if keys.count == q.groupBy.count, keys.allSatisfy(IndexAdvisor.indexable) { out.append(keys) }
        }
        var result: [Candidate] = []
        for exprs in out where !exprs.isEmpty {
            let c = Candidate(type: .value, expressions: exprs.map { p.print($0) })
            if !result.contains(where: { $0.expressions == c.expressions && $0.whereClause == nil }) { result.append(c) }
        }
        // Partial: the other columns, for the documents of one `x = constant` term (rule 1).
        for (e, term) in equalities {
            guard case .binary(.equal, _, let v) = term, v.isLiteral, let w = KeyedPlanning.rebase(term, from: src.index) else { continue }
            let rest = (eq + ranges.prefix(1)).filter { $0 != e }
            if rest.isEmpty { continue }
            var condition = p.print(w)
            if condition.hasPrefix("(") && condition.hasSuffix(")") { condition = String(condition.dropFirst().dropLast()) }
            result.append(Candidate(type: .value, expressions: rest.map { p.print($0) }, whereClause: condition))
            break
        }
        result += arrayCandidates(q, src, planning: planning)
        return result
    }

    /// Array indexes for the UNNEST chains that start at `src`, with the element expressions
    /// the WHERE constrains on their innermost alias.
    private func arrayCandidates(_ q: AnalyzedQuery, _ src: SourceInfo, planning: KeyedPlanning) -> [Candidate] {
        guard src.join != .leftOuter, let key = src.collectionKey else { return [] }
        var out: [Candidate] = []
        func walk(parent: Int, levels: [String]) {
            for u in q.sources where u.index > parent {
                guard case .unnest(.sourcePath(let p, let comps)) = u.kind, p == parent, !comps.isEmpty else { continue }
                let path = levels + [SQLPathText.text(comps)]
                var exprs: [String] = []
                var element = false
                for t in (q.whereClause?.conjuncts ?? []).map(Planner.orAsIn) where t.referencedSources.contains(u.index) {
                    for subject in KeyedPlanning.comparedOperands(t) {
                        guard let r = KeyedPlanning.rebase(subject, from: u.index),
                              planning.match(term: t, expressions: [r], slot: u.index, columnName: { _ in "" }) != nil else { continue }
                        if case .sourcePath(_, let ep) = r {
                            if ep.isEmpty { element = true } else if !exprs.contains(SQLPathText.text(ep)) { exprs.append(SQLPathText.text(ep)) }
                        } else if IndexAdvisor.indexable(r) {
                            let text = printer(key).print(r)
                            if !exprs.contains(text) { exprs.append(text) }
                        }
                    }
                }
                if element { out.append(Candidate(type: .array, expressions: [], path: path.joined(separator: "[]."))) }
                if !exprs.isEmpty { out.append(Candidate(type: .array, expressions: exprs, path: path.joined(separator: "[]."))) }
                walk(parent: u.index, levels: path)
            }
        }
        walk(parent: src.index, levels: [])
        return out
    }

    /// An expression an index definition can hold: it reads the document (slot 0) only, no
    /// parameters, no `meta()` (the primary key serves `meta().id`).
    static func indexable(_ e: BoundExpr) -> Bool {
        var ok = true, reads = false
        e.walk { n in
            switch n {
            case .sourcePath(let s, _): if s == 0 { reads = true } else { ok = false }
            case .meta, .parameter, .variablePath, .aggregate, .match, .rank: ok = false
            default: break
            }
        }
        return ok && reads
    }

    // MARK: - Output

    private func definition(_ c: Candidate, name: String) -> IndexDefinition {
        if c.type == .array {
            return ArrayIndexConfiguration(path: c.path ?? "", expressions: c.expressions.isEmpty ? nil : c.expressions).definition(name: name)
        }
        if c.type == .fullText { return FullTextIndexConfiguration(c.expressions).definition(name: name) }
        return ValueIndexConfiguration(c.expressions, where: c.whereClause).definition(name: name)
    }

    private func suggestedName(_ c: Candidate, collection: CollectionKey, existing: Set<String>) -> String {
        var parts = [collection.name] + (c.type == .array ? [c.path ?? ""] : []) + c.expressions
        if c.whereClause != nil { parts.append("partial") }
        var base = ""
        for ch in parts.joined(separator: "_").unicodeScalars {
            let alnum = ("a"..."z").contains(ch) || ("A"..."Z").contains(ch) || ("0"..."9").contains(ch)
            if alnum { base.unicodeScalars.append(ch) } else if !base.hasSuffix("_") { base += "_" }
        }
        while base.hasSuffix("_") { base.removeLast() }
        base = String(base.prefix(60))
        var name = base
        var n = 2
        while existing.contains(name) { name = base + "_\(n)"; n += 1 }
        return name
    }

    private func advice(_ c: Candidate, name: String, collection: CollectionKey, before: Int, after: Int) -> IndexAdvice {
        func quoted(_ s: String) -> String {
            var out = "\""
            for ch in s { if ch == "\\" || ch == "\"" { out.append("\\") }; out.append(ch) }
            return out + "\""
        }
        func shell(_ s: String) -> String {
            var out = "'"
            for ch in s { if ch == "'" { out += "'\\''" } else { out.append(ch) } }
            return out + "'"
        }
        let config: any IndexConfiguration
        var swift: String
        var command = "tessera index create DB \(name) --collection \(collection.scope == CollectionKey.defaultCollection.scope ? collection.name : collection.fullName)"
        if c.type == .array {
            config = ArrayIndexConfiguration(path: c.path ?? "", expressions: c.expressions.isEmpty ? nil : c.expressions)
            swift = "ArrayIndexConfiguration(path: \(quoted(c.path ?? ""))"
                + (c.expressions.isEmpty ? ")" : ", expressions: [" + c.expressions.map(quoted).joined(separator: ", ") + "])")
            command += " --array \(shell(c.path ?? ""))" + (c.expressions.isEmpty ? "" : " --expressions \(shell(c.expressions.joined(separator: ", ")))")
        } else if c.type == .fullText {
            config = FullTextIndexConfiguration(c.expressions)
            swift = "FullTextIndexConfiguration([" + c.expressions.map(quoted).joined(separator: ", ") + "])"
            command += " --fulltext \(shell(c.expressions.joined(separator: ", ")))"
        } else {
            config = ValueIndexConfiguration(c.expressions, where: c.whereClause)
            swift = "ValueIndexConfiguration([" + c.expressions.map(quoted).joined(separator: ", ") + "]"
                + (c.whereClause.map { ", where: " + quoted($0) } ?? "") + ")"
            command += " --value \(shell(c.expressions.joined(separator: ", ")))" + (c.whereClause.map { " --where \(shell($0))" } ?? "")
        }
        return IndexAdvice(collection: collection.fullName, name: name, configuration: config, swiftConfiguration: swift,
                           command: command, estimatedRowsBefore: before, estimatedRowsAfter: after)
    }
}
