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
    /// The column constraints the key ranges are built from when the scan starts.
    var keys = IndexScanKeys(equalities: [], rangeConstraint: nil)

    var boundSources: [Int] { arraySources }
    var bindsBoundRows: Bool { covering && !arraySources.isEmpty }

    func makeRowSource(slot: Int, docs: StorageTable, includeDeleted: Bool, parameters: [String: Value],
                       rowsWanted: Int?) throws -> RowSource {
        KeyRangeScan(slot: slot, plan: self, docs: docs, includeDeleted: includeDeleted)
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
