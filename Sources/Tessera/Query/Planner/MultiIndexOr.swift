// SPEC §9.2: an OR whose every branch can use some index (the same or different ones, or the
// primary key) runs as a union of those lookups, each document once (SQLite's "MULTI-INDEX
// OR"). The OR itself stays a filter, so the rows are exactly those of a full scan.

/// The union of several access paths over one source.
struct MultiIndexOrPlan: IndexAccessPlan {
    /// One path per OR branch.
    var branches: [any IndexAccessPlan]

    var index: IndexStore? { nil }
    var boundSources: [Int] { [] }

    func makeRowSource(slot: Int, docs: DocumentTables, includeDeleted: Bool, parameters: [String: Value],
                       rowsWanted: Int?) throws -> RowSource {
        let children = try branches.map {
            try $0.makeRowSource(slot: slot, docs: docs, includeDeleted: includeDeleted, parameters: parameters, rowsWanted: nil)
        }
        return UnionScan(slot: slot, children: children, docs: docs, includeDeleted: includeDeleted)
    }

    func explain(sources: [SourceInfo]) -> IndexAccessExplanation {
        var e = IndexAccessExplanation(access: .union)
        e.branches = branches.map { ($0.explain(sources: sources), $0.index?.definition.name) }
        return e
    }
}

extension Planner {
    /// A union of index lookups for the first top-level OR term of `src` whose every branch
    /// some index (or the primary key) constrains; nil when there is none.
    func multiIndexOr(for src: SourceInfo, store: CollectionStore, terms: [BoundExpr]) throws -> AccessCandidate? {
        guard src.join != .leftOuter else { return nil }
        for term in terms {
            guard case .binary(.or, _, _) = term, !term.referencedSources.contains(where: { $0 > src.index }) else { continue }
            var branches: [any IndexAccessPlan] = []
            var rows = 0
            var cost = 0.0
            for branch in KeyedPlanning.flatten(term, .or) {
                let branchTerms = branch.conjuncts.map(Planner.orAsIn)
                guard let c = try bestIndexAccess(for: src, store: store, terms: branchTerms, query: branchQuery(branch)),
                      c.cost.equalityColumns + c.cost.rangeColumns > 0 || c.cost.required else {
                    branches = []
                    break
                }
                branches.append(c.plan)
                rows += c.cost.estimatedRows
                cost += c.cost.estimatedCost
            }
            if branches.count >= 2 {
                return AccessCandidate(plan: MultiIndexOrPlan(branches: branches), satisfied: [], deliversOrder: false,
                                       cost: AccessCost(rangeColumns: 1, estimatedRows: rows, estimatedCost: cost))
            }
        }
        return nil
    }

    /// The query as one OR branch sees it: its WHERE is the branch (partial indexes are then
    /// usable only when the branch implies their condition), nothing to order or project
    /// from the index (branches never cover).
    private func branchQuery(_ branch: BoundExpr) -> AnalyzedQuery {
        var q = query
        q.whereClause = branch
        q.orderBy = []
        q.columns = [ColumnInfo(name: "*", kind: .star(nil))]
        return q
    }
}

/// Reads each branch's rows in turn and binds every document once (the first time a branch
/// finds it). A branch that covers its rows from an index is read back from the document.
final class UnionScan: RowSource {
    private let children: [RowSource]
    private let docs: DocumentTables
    private let includeDeleted: Bool
    @exclusivity(unchecked) private var current = 0
    @exclusivity(unchecked) private var seen = Set<[UInt8]>()

    init(slot: Int, children: [RowSource], docs: DocumentTables, includeDeleted: Bool) {
        self.children = children
        self.docs = docs
        self.includeDeleted = includeDeleted
        super.init(slot: slot)
    }

    override func reset(_ ctx: ExecContext) throws {
        current = 0
        seen.removeAll(keepingCapacity: true)
        if let first = children.first { try first.reset(ctx) }
    }

    override func next(_ ctx: ExecContext) throws -> Bool {
        while current < children.count {
            if try children[current].next(ctx) {
                let s = ctx.slots[slot]
                let id = s.ownedID ?? Array(s.id)
                guard seen.insert(id).inserted else { continue }
                // Branches are planned without covering; should one cover anyway, read the body.
                if s.state == .covered, try !DocumentFetch.bind(ctx, slot: slot, table: docs, id: s.id, includeDeleted: includeDeleted) {
                    continue
                }
                return true
            }
            current += 1
            if current < children.count { try children[current].reset(ctx) }
        }
        return false
    }

    override func close() {
        for c in children { c.close() }
    }
}
