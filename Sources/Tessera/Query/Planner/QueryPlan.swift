// The plan: per source, in join order, how its rows are found (the access path) and which
// conditions are checked once it is bound; then grouping, sorting and limits. The executor
// runs it; EXPLAIN prints it.

/// How a data source's rows are produced.
enum AccessPath {
    /// Every document of the collection, in ID order.
    case fullScan
    /// Every element of the array at the UNNEST path.
    case unnest(BoundExpr)
    /// An UNNEST whose rows an earlier source's covering array-index scan binds: one row
    /// per row of that scan.
    case boundByIndex
    /// A path an index offered (`IndexKind.accessPaths`): its kind makes the row source.
    case index(any IndexAccessPlan)
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
    /// The planner's estimate for the chosen path (nil for UNNEST).
    var estimate: Estimate? = nil
    /// Every index path offered for this source (chosen or not).
    var considered: [AccessCandidate] = []
}

/// Rows and cost the planner estimated for a source's access path.
struct Estimate {
    /// Rows (index entries or documents) the chosen path reads.
    var rows: Int
    /// Its cost in `CostModel` units.
    var cost: Double
    /// Documents a full scan would read.
    var scanRows: Int
}

/// A complete plan.
struct QueryPlan {
    var query: AnalyzedQuery
    var sources: [SourcePlan]
    var sort: SortStrategy
    /// An index already delivers the ORDER BY order.
    var orderSatisfied = false
    /// The rows come grouped by the GROUP BY keys (or the DISTINCT columns): grouping and
    /// DISTINCT stream, with no hash table.
    var groupsDelivered = false
    /// Constant LIMIT and OFFSET when known at plan time.
    var limit: Int?
    var offset: Int
    /// Where each aggregate of a query without WHERE or GROUP BY can be read without
    /// visiting the documents (nil: aggregate the rows).
    var aggregateShortcut: [AggregateSource]? = nil
}

/// The value of one aggregate read from a counter or an end of an index.
enum AggregateSource {
    /// `COUNT(*)` of a whole collection: its live-document counter (`meta` key `name`).
    case liveCount(counters: StorageTable, name: String)
    /// `MIN`/`MAX` of an index's leading expression.
    case extreme(IndexStore, largest: Bool)
}
