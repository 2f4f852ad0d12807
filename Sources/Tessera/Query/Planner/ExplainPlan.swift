/// A query plan as data (`Query.explainPlan()`), and its text form (`Query.explain()`).
public struct ExplainPlan: Sendable, CustomStringConvertible {
    /// How a source's rows are found.
    public enum Access: String, Sendable {
        /// Every document of the collection.
        case fullScan
        /// Point lookups in a value index (`=` / `IN`).
        case indexLookup
        /// A range or ordered scan of a value index.
        case indexScan
        /// A scan of an array index for an UNNEST chain.
        case arrayIndexScan
        /// Postings of a full-text index (`MATCH`).
        case fullText
        /// The elements of an array (UNNEST without index).
        case unnest
        /// Rows bound by an array-index scan of a later source.
        case boundByArrayIndex
        /// Lookups of document IDs in the documents table (`meta().id = ?`, `IN`).
        case primaryKeyLookup
        /// A scan of the documents table over an ID range or in ID order.
        case primaryKeyScan
        /// The union of several index lookups, one per branch of an OR (`branches`).
        case multiIndexOr
    }

    /// One source, in join order.
    public struct Source: Sendable {
        /// The alias the query uses.
        public var alias: String
        /// `scope.collection`, nil for UNNEST.
        public var collection: String?
        /// JOIN kind, nil for FROM and UNNEST.
        public var join: String?
        /// The access path.
        public var access: Access
        /// The index used, if any.
        public var index: String?
        /// The key points or range, as text (`city=?`, `price>? AND price<?`).
        public var keyRange: String?
        /// The index covers the query: documents are not read.
        public var covering: Bool
        /// Conditions still checked on each row of this source.
        public var filter: String?
        /// For an array-index scan: the innermost UNNEST alias the index predicates apply to.
        public var arrayAlias: String?
        /// For a full-text search: rows come by descending rank (ORDER BY rank DESC needs no sort).
        public var rankOrdered = false
        /// For `multiIndexOr`: the lookup of each OR branch.
        public var branches: [Source] = []
        /// The planner's estimate of the rows (index entries or documents) this access path
        /// reads; nil for UNNEST. The planner picks the path with the least estimated work,
        /// a document fetched by ID costing several index entries read in order.
        public var estimatedRows: Int?
        /// The documents a full scan of this source would read (nil for UNNEST).
        public var fullScanRows: Int?
        /// What this source read when the query ran (`explainPlan(analyze: true)`), else nil.
        public var analysis: Analysis?
    }

    /// What one source of the plan read when the query ran (EXPLAIN ANALYZE), summed over
    /// its loops.
    public struct Analysis: Sendable {
        /// The planner's estimate of the rows the access path reads (per loop).
        public var estimatedRows: Int?
        /// Rows the access path produced.
        public var actualRows: Int
        /// Rows that passed the source's ON condition and filter (went on to the next source).
        public var rowsPassed: Int
        /// Times the source was read: 1, or once per row of the sources before it (the inner
        /// side of a JOIN, an UNNEST).
        public var loops: Int
        /// Documents read: fetched by ID, or visited by a scan (deleted ones included).
        public var documentsRead: Int
        /// Index entries read.
        public var indexEntriesRead: Int
        /// Time spent reading the source's rows, in milliseconds.
        public var milliseconds: Double
    }

    /// An index of a collection the query reads that the plan does not use, and why.
    public struct UnusedIndex: Sendable {
        /// Why the planner did not use an index.
        public enum Reason: String, Sendable {
            /// The planner could use it, but another path (or the full scan) was estimated
            /// to read less; `detail` gives both estimates.
            case cheaperPathWon
            /// The query's expression differs from the index's (a function of it, another
            /// path, an alias that did not normalise).
            case expressionMismatch
            /// The query compares the expression with another collation than the index's.
            case collation
            /// The query constrains a later index expression but not the leading one.
            case notLeadingColumn
            /// The partial index's `where` is not implied by the query's WHERE (SPEC §9.2).
            case partialConditionNotImplied
            /// The term on the indexed expression cannot be a key range (`!=`, `NOT`, a
            /// leading wildcard, arithmetic on the expression).
            case notSargable
            /// No term, ORDER BY or GROUP BY uses the index's expressions.
            case noPredicate
            /// A full-text index is used only by `MATCH(index, …)`.
            case fullTextNeedsMatch
            /// An array index serves only an UNNEST of its path, which the query lacks.
            case noUnnest
            /// The source is the inner side of a LEFT JOIN (array indexes).
            case leftOuterJoin
        }

        /// `scope.collection` of the index.
        public var collection: String
        /// The alias of the source it could have served.
        public var alias: String
        /// The index name.
        public var index: String
        /// Why the plan does not use it.
        public var reason: Reason
        /// The reason in words (the `NOT USED:` line of `explain()`).
        public var detail: String
    }

    /// Every index of the collections read that the plan does not use, with the reason.
    public var unusedIndexes: [UnusedIndex] = []
    /// Under EXPLAIN ANALYZE: the rows the query returned.
    public var resultRows: Int?
    /// Under EXPLAIN ANALYZE: the time of the whole execution, in milliseconds.
    public var milliseconds: Double?

    /// Sources in join order.
    public var sources: [Source]
    /// `none` (no ORDER BY or index order), `full`, or `topK(n)`.
    public var sort: String
    /// Grouping: nil, or the GROUP BY keys as text (`(aggregate)` without GROUP BY).
    public var grouping: String?
    /// SELECT DISTINCT.
    public var distinct: Bool
    /// LIMIT, when constant.
    public var limit: Int?
    /// OFFSET.
    public var offset: Int
    /// Grouping or DISTINCT streams over rows an index delivers in key order (no temporary
    /// B-tree).
    public var groupsDelivered = false
    /// For an aggregate query answered without reading documents: where each aggregate's
    /// value comes from (`count(*) from the live-document counter of hotels`), else empty.
    public var aggregateReads: [String] = []

    /// Names of every index the plan uses.
    public var indexesUsed: [String] { sources.flatMap { [$0.index].compactMap { $0 } + $0.branches.compactMap(\.index) } }

    init(_ plan: QueryPlan) {
        let q = plan.query
        let printer = BoundExprPrinter(sources: q.sources)
        sources = plan.sources.map { sp in
            var s = Source(alias: sp.source.alias, collection: sp.source.collectionKey?.fullName, join: sp.source.join?.rawValue,
                           access: .fullScan, index: nil, keyRange: nil, covering: false,
                           filter: sp.filter.isEmpty ? nil : sp.filter.map { printer.print($0) }.joined(separator: " AND "),
                           arrayAlias: nil)
            s.estimatedRows = sp.estimate?.rows
            s.fullScanRows = sp.estimate?.scanRows
            switch sp.access {
            case .fullScan: s.access = .fullScan
            case .unnest, .boundByIndex: s.access = .unnest
            case .index(let access):
                ExplainPlan.describe(access.explain(sources: q.sources), index: access.index?.definition.name, into: &s)
            }
            return s
        }
        // Sources bound by an array-index scan of a later UNNEST.
        for sp in plan.sources {
            if case .index(let access) = sp.access {
                for i in access.boundSources where i != sp.source.index { sources[i].access = .boundByArrayIndex }
            }
        }
        switch plan.sort {
        case .none: sort = "none"
        case .full: sort = "full"
        case .topK(let n): sort = "topK(\(n))"
        }
        if !q.groupBy.isEmpty {
            grouping = q.groupBy.map { printer.print($0) }.joined(separator: ", ")
        } else if !q.aggregates.isEmpty {
            grouping = "(aggregate)"
        }
        distinct = q.distinct
        limit = plan.limit
        offset = plan.offset
        groupsDelivered = plan.groupsDelivered
        if let shortcut = plan.aggregateShortcut {
            let alias = q.sources.first?.alias ?? ""
            aggregateReads = zip(q.aggregates, shortcut).map { call, source in
                let text = call.name.uppercased() + "(" + (call.args.isEmpty ? "*" : call.args.map { printer.print($0) }.joined(separator: ", ")) + ")"
                switch source {
                case .liveCount: return "\(text) FROM THE LIVE-DOCUMENT COUNTER OF \(alias)"
                case .extreme(let index, let largest):
                    return "\(text) FROM THE \(largest ? "LAST" : "FIRST") ENTRY OF INDEX \(index.definition.name)"
                }
            }
        }
    }

    /// Fills a source's access fields from an index path's explanation.
    static func describe(_ e: IndexAccessExplanation, index: String?, into s: inout Source) {
        switch e.access {
        case .lookup: s.access = .indexLookup
        case .rangeScan: s.access = .indexScan
        case .arrayScan: s.access = .arrayIndexScan
        case .fullText: s.access = .fullText
        case .primaryKeyLookup: s.access = .primaryKeyLookup
        case .primaryKeyScan: s.access = .primaryKeyScan
        case .union: s.access = .multiIndexOr
        }
        s.index = index
        s.keyRange = e.keyRange
        s.covering = e.covering
        s.arrayAlias = e.arrayAlias
        s.rankOrdered = e.rankOrdered
        s.branches = e.branches.map { branch, name in
            var b = Source(alias: s.alias, collection: s.collection, join: nil, access: .fullScan, index: nil, keyRange: nil,
                           covering: false, filter: nil, arrayAlias: nil)
            describe(branch, index: name, into: &b)
            return b
        }
    }

    /// The line of one source's access path (no JOIN prefix, no filter).
    static func accessLine(_ s: Source) -> String {
        switch s.access {
        case .fullScan: return "SCAN \(s.alias)"
        case .unnest: return "SCAN \(s.alias) (UNNEST fl_each)"
        case .boundByArrayIndex: return "SCAN \(s.alias) (UNNEST bound by array index)"
        case .indexLookup, .indexScan:
            let kind = s.covering ? "COVERING INDEX" : "INDEX"
            if let r = s.keyRange { return "SEARCH \(s.alias) USING \(kind) \(s.index!) (\(r))" }
            return "SCAN \(s.alias) USING \(kind) \(s.index!)"
        case .arrayIndexScan:
            return "SEARCH \(s.arrayAlias ?? s.alias) USING \(s.covering ? "COVERING " : "")ARRAY INDEX \(s.index!)" + (s.keyRange.map { " (\($0))" } ?? "")
                + (s.arrayAlias != nil ? " FOR \(s.alias)" : "")
        case .primaryKeyLookup, .primaryKeyScan:
            let key = s.covering ? "COVERING PRIMARY KEY" : "PRIMARY KEY"
            if let r = s.keyRange { return "SEARCH \(s.alias) USING \(key) (\(r))" }
            return "SCAN \(s.alias) USING \(key)" + (s.covering ? "" : " ORDER")
        case .fullText:
            return "SEARCH \(s.alias) USING FULL-TEXT INDEX \(s.index!) (MATCH \(s.index!))" + (s.rankOrdered ? " BY RANK" : "")
        case .multiIndexOr:
            return "MULTI-INDEX OR \(s.alias)" + s.branches.map { "\n  " + accessLine($0) }.joined()
        }
    }

    /// Adds the figures of an analysed execution.
    mutating func attach(_ analysis: QueryAnalysis) {
        for (i, level) in analysis.levels.enumerated() where i < sources.count {
            sources[i].analysis = Analysis(estimatedRows: sources[i].estimatedRows, actualRows: level.rows, rowsPassed: level.passed,
                                           loops: level.loops, documentsRead: level.documents, indexEntriesRead: level.entries,
                                           milliseconds: Double(level.nanoseconds) / 1_000_000)
        }
        resultRows = analysis.resultRows
        milliseconds = Double(analysis.nanoseconds) / 1_000_000
    }

    /// `0.042` for milliseconds (three decimals).
    static func millisecondsText(_ ms: Double) -> String {
        let micro = Int((ms * 1000).rounded())
        let fraction = String(micro % 1000)
        return "\(micro / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    static func plural(_ n: Int, _ one: String, _ many: String) -> String { "\(n) " + (n == 1 ? one : many) }

    /// The bracketed figures EXPLAIN ANALYZE adds to an access line.
    static func figures(_ a: Analysis) -> String {
        let estimate = a.estimatedRows.map { "estimated \(plural($0, "row", "rows")); " } ?? ""
        return " [\(estimate)read \(plural(a.actualRows, "row", "rows")) in \(plural(a.loops, "loop", "loops")), "
            + "\(plural(a.indexEntriesRead, "index entry", "index entries")), \(plural(a.documentsRead, "document", "documents")), "
            + "\(millisecondsText(a.milliseconds)) ms]"
    }

    /// The plan in SQLite's EXPLAIN QUERY PLAN vocabulary, one line per step; then, under
    /// ANALYZE, the rows returned; then the `NOT USED:` lines.
    public var text: String {
        var lines: [String] = []
        if !aggregateReads.isEmpty {
            // Nothing is scanned: each aggregate is one read.
            lines = aggregateReads.map { "AGGREGATE " + $0 }
        }
        for s in sources where aggregateReads.isEmpty {
            var line = ExplainPlan.accessLine(s)
            if let j = s.join { line = "\(j) " + line }
            if let a = s.analysis {
                // After the first line (a multi-index OR lists its branches below it).
                if let nl = line.firstIndex(of: "\n") {
                    line = String(line[..<nl]) + ExplainPlan.figures(a) + String(line[nl...])
                } else {
                    line += ExplainPlan.figures(a)
                }
            }
            lines.append(line)
            if let f = s.filter {
                lines.append("  FILTER \(f)" + (s.analysis.map { " [\(ExplainPlan.plural($0.rowsPassed, "row", "rows")) passed]" } ?? ""))
            }
        }
        if grouping != nil && grouping != "(aggregate)" && aggregateReads.isEmpty && !groupsDelivered { lines.append("USE TEMP B-TREE FOR GROUP BY") }
        if distinct && !(groupsDelivered && grouping == nil) { lines.append("USE TEMP B-TREE FOR DISTINCT") }
        switch sort {
        case "none": break
        case "full": lines.append("USE TEMP B-TREE FOR ORDER BY")
        default: lines.append("USE TEMP B-TREE FOR ORDER BY (\(sort))")
        }
        if let limit { lines.append("LIMIT \(limit)" + (offset > 0 ? " OFFSET \(offset)" : "")) } else if offset > 0 { lines.append("OFFSET \(offset)") }
        if let resultRows, let milliseconds {
            lines.append("RESULT \(ExplainPlan.plural(resultRows, "row", "rows")) in \(ExplainPlan.millisecondsText(milliseconds)) ms")
        }
        if !unusedIndexes.isEmpty {
            lines.append("NOT USED:")
            let aliases = Set(unusedIndexes.map(\.alias))
            for u in unusedIndexes {
                lines.append("  \(u.index)" + (aliases.count > 1 ? " (\(u.alias))" : "") + ": " + u.detail)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Same as `text`.
    public var description: String { text }
}
