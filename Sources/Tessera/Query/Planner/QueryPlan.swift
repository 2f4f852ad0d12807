// The plan: per source, in join order, how its rows are found (the access path) and which
// conditions are checked once it is bound; then grouping, sorting and limits. The executor
// runs it; EXPLAIN prints it.

/// How a data source's rows are produced.
enum AccessPath {
    /// Every document of the collection, in ID order.
    case fullScan
    /// Every element of the array at the UNNEST path.
    case unnest(BoundExpr)
    /// A scan of a value index over key ranges.
    case indexScan(IndexScanPlan)
    /// Full-text postings of a MATCH.
    case fullText(FullTextPlan)
}

/// Where an index scan reads and what it proves.
struct IndexScanPlan {
    var index: IndexStore
    /// Key ranges to visit, in order.
    var ranges: [IndexKey.KeyRange]
    /// Visit in descending key order (ORDER BY … DESC satisfied by the index).
    var descending: Bool
    /// The index holds every value the query needs: the body is never read.
    var covering: Bool
    /// Text of the predicates the index applies, for EXPLAIN (`city=?`).
    var describedPredicates: String
    /// The conjuncts the scan fully satisfies (removed from the filter).
    var satisfied: [BoundExpr]
    /// Number of leading index expressions constrained.
    var usedColumns: Int
    /// Index expressions (bound to this source), for covering evaluation.
    var expressions: [BoundExpr]
    /// For an array index: the UNNEST sources (outermost first) this scan binds.
    var arraySources: [Int] = []
    /// The scan's order is the query's ORDER BY (long values must then be ordered exactly).
    var ordered = false
    /// The column constraints the key ranges are built from when the scan starts.
    var keys = IndexScanKeys(equalities: [], rangeConstraint: nil)
}

/// A full-text MATCH driving a source.
struct FullTextPlan {
    var indexName: String
    var query: BoundExpr
    var store: IndexStore
    /// Deliver rows by descending rank (`ORDER BY rank(index) DESC` is satisfied).
    var rankOrdered = false
}

/// How the rows are put in order.
enum SortStrategy: Equatable {
    /// No ORDER BY, or the access path already delivers the order.
    case none
    /// Sort everything.
    case full
    /// Keep only the best `n` rows in a bounded heap (ORDER BY + LIMIT).
    case topK(Int)
}

/// One source's part of a plan.
struct SourcePlan {
    var source: SourceInfo
    /// The collection's tables and indexes (nil for UNNEST).
    var store: CollectionStore?
    var access: AccessPath
    /// Conditions checked as soon as this source (and those before it) is bound.
    var filter: [BoundExpr]
}

/// A complete plan.
struct QueryPlan {
    var query: AnalyzedQuery
    var sources: [SourcePlan]
    var sort: SortStrategy
    /// An index already delivers the ORDER BY order.
    var orderSatisfied = false
    /// Constant LIMIT and OFFSET when known at plan time.
    var limit: Int?
    var offset: Int
}
