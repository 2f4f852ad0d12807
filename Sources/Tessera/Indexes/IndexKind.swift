// The seam between the engine and the kinds of index. Each kind lives in its own folder
// (Value/, Array/, FullText/) and conforms to `IndexKind`; `IndexKinds.all` registers it.
// Nothing outside a kind's folder switches on the kind: the catalogue opens indexes through
// the registry, saves maintain them through `IndexStore.update`, the integrity check calls
// `check`, and the planner asks every index of a collection for the access paths it offers
// (`accessPaths(for:)`), each with its cost, its row source and its EXPLAIN line.

/// The behaviour of one kind of index.
protocol IndexKind: AnyObject, Sendable {
    /// The tag the catalogue stores for this kind (`IndexDefinition.type`).
    static var type: IndexType { get }
    /// Suffixes of the tables the kind keeps beside its main table (`idx:<coll>:<name>`).
    static var extraTableSuffixes: [String] { get }
    /// Whether definitions of this kind may have a `where` (partial indexes).
    static var allowsWhere: Bool { get }
    /// Whether definitions of this kind need at least one expression.
    static var requiresExpressions: Bool { get }
    /// Whether an index of this kind must be rebuilt from the documents when a database of
    /// on-disk format `format` is opened (its stored layout changed since).
    static func needsRebuild(fromFormat format: UInt32) -> Bool

    /// Moves what an index of this kind stored at on-disk format `format` to where the current
    /// format keeps it, when its layout changed in a way that needs no rebuild (the index is
    /// open with every table of `extraTableSuffixes`, the missing ones just created).
    func upgrade(_ index: IndexStore, txn: WriteTransaction, fromFormat format: UInt32) throws

    /// Checks the kind-specific parts of a definition (the common parts — name, expressions,
    /// `where` — are compiled already) and prepares the kind's state.
    /// - Throws: `DatabaseError(.invalidIndex)` saying what is wrong.
    init(definition: IndexDefinition, compiled: CompiledIndexDefinition) throws

    /// Replaces one document's entries: `old` body out, `new` body in (nil: absent); writes
    /// only the difference.
    func update(_ index: IndexStore, txn: WriteTransaction, docID: String,
                old: UnsafeRawBufferPointer?, new: UnsafeRawBufferPointer?) throws

    /// Builds the (empty) index over every live document of `docs`, and stores in `meta` what
    /// the planner keeps about it (a keyed index's statistics).
    func backfill(_ index: IndexStore, txn: WriteTransaction, docs: DocumentTables, meta: StorageTable) throws

    /// `performMaintenance(.optimize)`: brings the index's upkeep up to date (planner
    /// statistics, stale entries) without changing what it answers. Queued work of the
    /// transaction is flushed before.
    func optimize(_ index: IndexStore, txn: WriteTransaction, meta: StorageTable) throws

    /// Compares what is stored with what the documents give; one line per difference.
    /// `entries` counts the stored entries checked.
    func check(_ index: IndexStore, snapshot: Snapshot, docs: DocumentTables, entries: inout Int) throws -> [String]

    /// The ways this index can produce the rows of `request.source`, each with its cost.
    func accessPaths(_ index: IndexStore, for request: AccessRequest) throws -> [AccessCandidate]

    /// The documents (ID bytes → rank) that `MATCH(index, query)` is TRUE for, for kinds that
    /// answer MATCH (nil for the others).
    func matches(_ index: IndexStore, snapshot: Snapshot, query: String) throws -> [[UInt8]: Double]?

    /// Whether this index can give the smallest or largest non-NULL, non-MISSING value of
    /// `expression` (bound to slot 0) over every live document by reading one end of itself.
    func answersExtreme(_ index: IndexStore, of expression: BoundExpr) -> Bool

    /// That value (`.null` when every document's value is NULL or MISSING), or nil when the
    /// index cannot tell after all (the end entry holds a truncated value).
    func extremeValue(_ index: IndexStore, largest: Bool, snapshot: Snapshot) throws -> Value?

    /// Whether `MATCH(name, …)` and `RANK(name)` may name indexes of this kind.
    static var answersMatch: Bool { get }

    /// A one-line description of a definition's kind-specific parts (`tessera index list`).
    static func summary(_ definition: IndexDefinition) -> String

    /// The keys of this kind's options in a JSON description of an index (fixtures).
    static var optionKeys: Set<String> { get }

    /// The kind's options from a JSON description of an index (a fixture's index entry):
    /// defaults filled in, wrong types rejected with a message naming the key.
    static func options(fromJSON object: [String: Value]) throws -> [String: Value]
}

extension IndexKind {
    static var extraTableSuffixes: [String] { [] }
    static var allowsWhere: Bool { true }
    static var requiresExpressions: Bool { true }
    static var answersMatch: Bool { false }
    static func needsRebuild(fromFormat format: UInt32) -> Bool { false }
    func upgrade(_ index: IndexStore, txn: WriteTransaction, fromFormat format: UInt32) throws {}
    func matches(_ index: IndexStore, snapshot: Snapshot, query: String) throws -> [[UInt8]: Double]? { nil }
    static var optionKeys: Set<String> { [] }
    func answersExtreme(_ index: IndexStore, of expression: BoundExpr) -> Bool { false }
    func extremeValue(_ index: IndexStore, largest: Bool, snapshot: Snapshot) throws -> Value? { nil }
    static func options(fromJSON object: [String: Value]) throws -> [String: Value] { [:] }
    func optimize(_ index: IndexStore, txn: WriteTransaction, meta: StorageTable) throws {}
}

/// The registered kinds of index. Adding a kind: its folder, and one line here.
enum IndexKinds {
    static let all: [any IndexKind.Type] = [
        ValueIndexKind.self,
        ArrayIndexKind.self,
        FullTextIndexKind.self,
    ]

    /// The kind of `type`.
    /// - Throws: `.invalidIndex` for a type no registered kind has.
    static func kind(of type: IndexType) throws -> any IndexKind.Type {
        var known: [String] = []
        for k in all {
            if k.type == type { return k }
            known.append(k.type.rawValue)
        }
        throw DatabaseError(.invalidIndex, "unknown index type '\(type.rawValue)' (known: \(known.joined(separator: ", ")))")
    }

    /// The stored tags of every registered kind.
    static var types: [IndexType] { all.map { $0.type } }

    /// Every kind's option keys.
    static var optionKeys: Set<String> { all.reduce(into: Set<String>()) { $0.formUnion($1.optionKeys) } }
}

extension IndexDefinition {
    /// The types of every registered index kind (for loaders of index descriptions).
    package static var registeredTypes: [IndexType] { IndexKinds.types }

    /// Every registered kind's option keys in a JSON description of an index.
    package static var optionKeys: Set<String> { IndexKinds.optionKeys }

    /// The options of an index of `type` from a JSON description of it (a fixture's index
    /// entry): defaults filled in; `DatabaseError(.invalidIndex)` naming a bad key, or an
    /// unknown type.
    package static func options(for type: IndexType, fromJSON object: [String: Value]) throws -> [String: Value] {
        try IndexKinds.kind(of: type).options(fromJSON: object)
    }
}

// MARK: - What the planner asks an index

/// A collection source of a query, as the planner asks an index about it.
struct AccessRequest {
    /// The whole analysed query.
    let query: AnalyzedQuery
    /// The source whose rows are wanted.
    let source: SourceInfo
    /// WHERE terms not used by an earlier source.
    let terms: [BoundExpr]
    /// This execution's parameter values.
    let parameters: [String: Value]
    /// A snapshot for statistics (entry counts).
    let snapshot: Snapshot
    /// The collection's documents table.
    let docs: DocumentTables
    /// The collection's table of live document IDs (the primary key's covering table).
    let ids: StorageTable
    /// The `meta` table (stored index statistics).
    let meta: StorageTable
}

/// How an access path ranks against the other ways to read a source: a path that must be
/// used (MATCH names its index) first, then the lowest estimated cost. Costs within
/// `CostModel.scanMargin` of each other (all of them, on a small collection) are a tie, broken
/// by the most constrained columns (equalities, then a range), then a path that delivers the
/// ORDER BY, then the fewest rows estimated.
struct AccessCost: Comparable {
    /// The query names this index (MATCH): no other path can answer it.
    var required = false
    /// Leading index columns fixed by `=`/`IN`.
    var equalityColumns = 0
    /// 1 if the next column is constrained by a range or prefix.
    var rangeColumns = 0
    /// 1 if the path delivers the query's ORDER BY.
    var deliversOrder = 0
    /// Rows (index entries or documents) the path is estimated to read.
    var estimatedRows = 0
    /// The estimated work, in units of one document read by a full scan (`CostModel`).
    var estimatedCost = 0.0

    /// True if `a` is a worse choice than `b`.
    static func < (a: AccessCost, b: AccessCost) -> Bool {
        if a.required != b.required { return b.required }
        if abs(a.estimatedCost - b.estimatedCost) > CostModel.scanMargin { return a.estimatedCost > b.estimatedCost }
        return (a.equalityColumns, a.rangeColumns, a.deliversOrder, -a.estimatedRows)
            < (b.equalityColumns, b.rangeColumns, b.deliversOrder, -b.estimatedRows)
    }
}

/// The planner's cost units: one document read by a full scan costs 1. Measured with a
/// release build on 100,000 documents of 0.3 KB (2 shared cores, so ±30 %): a full scan reads
/// a document in 0.8–0.9 µs, an index path fetches one by ID in 1.3–2 µs — so an index path
/// that reads more than about 45 % of a collection loses to the scan (90 % of the documents:
/// the scan was 1.3–1.8× faster than the index in two runs; 10 %: the index is about 4× faster).
enum CostModel {
    /// Reading one index entry.
    static let entryRead = 0.2
    /// Fetching one document by its ID (a B-tree search, then decoding it).
    static let documentFetch = 2.0
    /// Reading one document in a full scan (or a primary-key range scan).
    static let scanRow = 1.0
    /// Binding and filtering one array element of a document a scan unnests.
    static let elementRead = 0.25
    /// Costs closer than this are a tie (an index path loses to the full scan only when it
    /// costs more by this much): on a small collection every path costs about the same, and
    /// the most constrained index is kept.
    static let scanMargin = 32.0

    /// The cost of reading `rows` index entries and, unless the index covers the query,
    /// fetching each entry's document.
    static func indexScan(rows: Double, covering: Bool) -> Double {
        rows * (entryRead + (covering ? 0 : documentFetch))
    }
}

/// One way an index can read a source.
struct AccessCandidate {
    /// What the executor runs.
    var plan: any IndexAccessPlan
    /// WHERE terms the path proves for every row it produces (they leave the filter).
    var satisfied: [BoundExpr]
    /// The rows come in the query's ORDER BY order.
    var deliversOrder: Bool
    var cost: AccessCost
    /// Rows with equal GROUP BY keys (or equal DISTINCT columns) come one after another.
    var deliversGroups = false
}

/// A chosen index access path: makes the row source and describes itself for EXPLAIN.
protocol IndexAccessPlan: Sendable {
    /// The index read (nil for the primary key).
    var index: IndexStore? { get }
    /// Later sources this path binds as well (the UNNEST chain an array index serves).
    var boundSources: [Int] { get }
    /// The path binds the rows of `boundSources` itself (a covering array-index scan), so
    /// their levels add no rows; otherwise they unnest the bound document again.
    var bindsBoundRows: Bool { get }
    /// The row source of `slot`, reading documents from `docs`.
    /// - Parameter rowsWanted: LIMIT + OFFSET when known.
    func makeRowSource(slot: Int, docs: DocumentTables, includeDeleted: Bool, parameters: [String: Value],
                       rowsWanted: Int?) throws -> RowSource
    /// The EXPLAIN description (`sources`: the query's sources, for aliases).
    func explain(sources: [SourceInfo]) -> IndexAccessExplanation
}

extension IndexAccessPlan {
    var bindsBoundRows: Bool { false }
}

/// What EXPLAIN shows of an index access path.
struct IndexAccessExplanation {
    enum Access { case lookup, rangeScan, arrayScan, fullText, primaryKeyLookup, primaryKeyScan, union }
    var access: Access
    /// The key points or range as text (`city=?`).
    var keyRange: String?
    var covering = false
    /// For an array index: the innermost UNNEST alias its predicates apply to.
    var arrayAlias: String?
    /// For full text: rows come by descending rank.
    var rankOrdered = false
    /// For a union: each branch's explanation and index (nil: the primary key).
    var branches: [(IndexAccessExplanation, String?)] = []
}
