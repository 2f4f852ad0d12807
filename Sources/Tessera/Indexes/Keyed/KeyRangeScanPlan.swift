/// A scan of a value or array index over key ranges built when the scan starts.
struct KeyRangeScanPlan: IndexAccessPlan {
    var store: IndexStore
    var index: IndexStore? { store }
    /// Visit in descending key order (ORDER BY … DESC satisfied by the index).
    var descending: Bool
    /// The index holds every value the query needs: the body is never read.
    var covering: Bool
    /// Text of the predicates the index applies, for EXPLAIN (`city=?`).
    var describedPredicates: String
    /// The conjuncts the scan fully satisfies (re-checked on truncated keys).
    var satisfied: [BoundExpr]
    /// Index expressions (bound to this source), for covering evaluation.
    var expressions: [BoundExpr]
    /// For an array index: the UNNEST sources (outermost first) this scan binds.
    var arraySources: [Int] = []
    /// The scan's order is the query's ORDER BY (long values must then be ordered exactly).
    var ordered = false
    /// Only the first entry of each distinct prefix of this many columns is wanted (DISTINCT
    /// over a covering index): the scan seeks past the rest (a skip-scan).
    var skipColumns: Int?
    /// A covering scan whose rows come grouped (GROUP BY / DISTINCT on leading columns): the
    /// groups are the runs of equal values in this many leading columns.
    var groupColumns: Int?
    /// The column constraints the key ranges are built from when the scan starts.
    var keys = IndexScanKeys(equalities: [], rangeConstraint: nil)
    /// The scan's evaluators, compiled for the first execution and shared by the others (the
    /// plan is not changed once it runs).
    let evaluators = CompiledOnce<KeyRangeScanEvaluators>()

    /// The property path of each index expression (empty for one that is not a plain path):
    /// where a covering scan's values are read from.
    var expressionPaths: [[PathComponent]] {
        store.expressions.map { e in if case .sourcePath(_, let p) = e { return p } else { return [] } }
    }

    var boundSources: [Int] { arraySources }
    var bindsBoundRows: Bool { covering && !arraySources.isEmpty }

    func makeRowSource(slot: Int, docs: DocumentTables, includeDeleted: Bool, parameters: [String: Value],
                       rowsWanted: Int?) throws -> RowSource {
        KeyRangeScan(slot: slot, plan: self, docs: docs, includeDeleted: includeDeleted, rowsWanted: rowsWanted)
    }

    func explain(sources: [SourceInfo]) -> IndexAccessExplanation {
        let access: IndexAccessExplanation.Access
        if !arraySources.isEmpty {
            access = .arrayScan
        } else if describedPredicates.contains("=?") && !describedPredicates.contains(">") && !describedPredicates.contains("<") {
            access = .lookup
        } else {
            access = .rangeScan
        }
        return IndexAccessExplanation(access: access, keyRange: describedPredicates.isEmpty ? nil : describedPredicates,
                                      covering: covering, arrayAlias: arraySources.last.map { sources[$0].alias })
    }
}

/// The compiled parts of a `KeyRangeScanPlan`.
struct KeyRangeScanEvaluators {
    /// Per equality column, each value's evaluator (nil for a literal).
    var equalities: [[Compiled?]]
    /// The satisfied terms, re-checked on truncated keys.
    var recheck: [Compiled]
    /// The range's bounds (nil for a literal or an open side).
    var lower: Compiled?
    var upper: Compiled?

    init(_ plan: KeyRangeScanPlan) {
        func compiled(_ e: BoundExpr) -> Compiled? { e.isLiteral ? nil : Compiled(ExpressionCompiler.compile(e)) }
        equalities = plan.keys.equalities.map { $0.map(compiled) }
        recheck = plan.satisfied.map { Compiled(ExpressionCompiler.compile($0)) }
        if case .range(let lo, let hi)? = plan.keys.rangeConstraint {
            lower = lo.flatMap { compiled($0.0) }
            upper = hi.flatMap { compiled($0.0) }
        }
    }
}
