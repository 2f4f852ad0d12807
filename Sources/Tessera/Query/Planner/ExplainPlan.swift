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
        /// reads; nil for UNNEST. The planner picks the path with the fewest estimated reads,
        /// a document fetched by ID counting as `CostModel`'s several entry reads.
        public var estimatedRows: Int?
        /// The documents a full scan of this source would read (nil for UNNEST).
        public var fullScanRows: Int?
    }

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
            case .unnest: s.access = .unnest
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
            return "SEARCH \(s.arrayAlias ?? s.alias) USING ARRAY INDEX \(s.index!)" + (s.keyRange.map { " (\($0))" } ?? "")
                + (s.arrayAlias != nil ? " FOR \(s.alias)" : "")
        case .primaryKeyLookup, .primaryKeyScan:
            if let r = s.keyRange { return "SEARCH \(s.alias) USING PRIMARY KEY (\(r))" }
            return "SCAN \(s.alias) USING PRIMARY KEY ORDER"
        case .fullText:
            return "SEARCH \(s.alias) USING FULL-TEXT INDEX \(s.index!) (MATCH \(s.index!))" + (s.rankOrdered ? " BY RANK" : "")
        case .multiIndexOr:
            return "MULTI-INDEX OR \(s.alias)" + s.branches.map { "\n  " + accessLine($0) }.joined()
        }
    }

    /// The plan in SQLite's EXPLAIN QUERY PLAN vocabulary, one line per step.
    public var text: String {
        var lines: [String] = []
        if !aggregateReads.isEmpty {
            // Nothing is scanned: each aggregate is one read.
            lines = aggregateReads.map { "AGGREGATE " + $0 }
        }
        for s in sources where aggregateReads.isEmpty {
            var line = ExplainPlan.accessLine(s)
            if let j = s.join { line = "\(j) " + line }
            lines.append(line)
            if let f = s.filter { lines.append("  FILTER \(f)") }
        }
        if grouping != nil && grouping != "(aggregate)" && aggregateReads.isEmpty && !groupsDelivered { lines.append("USE TEMP B-TREE FOR GROUP BY") }
        if distinct && !(groupsDelivered && grouping == nil) { lines.append("USE TEMP B-TREE FOR DISTINCT") }
        switch sort {
        case "none": break
        case "full": lines.append("USE TEMP B-TREE FOR ORDER BY")
        default: lines.append("USE TEMP B-TREE FOR ORDER BY (\(sort))")
        }
        if let limit { lines.append("LIMIT \(limit)" + (offset > 0 ? " OFFSET \(offset)" : "")) } else if offset > 0 { lines.append("OFFSET \(offset)") }
        return lines.joined(separator: "\n")
    }

    /// Same as `text`.
    public var description: String { text }
}
