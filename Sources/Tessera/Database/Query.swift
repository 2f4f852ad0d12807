
import Synchronization

/// Named values for a query's `$parameters`.
///
/// ```swift
/// query.parameters = Parameters().setString("Paris", forName: "city").setInt(10, forName: "limit")
/// ```
public struct Parameters: Sendable {
    /// The bindings, each name once, in the order first bound (the same storage an
    /// execution reads, handed over without a copy).
    private(set) var storage = BoundParameters()
    var bindings: [(name: String, value: Value)] { storage.bindings }

    /// Empty parameters.
    public init() {}
    /// Parameters from a dictionary of values.
    public init(_ values: [String: Value]) {
        for (name, value) in values.sorted(by: { $0.key < $1.key }) { storage.bind(value, name) }
    }

    // The setters consume `self`: `Parameters().setString(…).setInt(…)` fills one list in
    // place instead of copying it at every step.

    /// Binds `name` (without `$`) to a value; NULL binds as MISSING [LC].
    @discardableResult
    public consuming func setValue(_ value: Value, forName name: String) -> Parameters {
        storage.bind(value, name)
        return self
    }
    /// Binds a string.
    public consuming func setString(_ value: String?, forName name: String) -> Parameters { setValue(value.map(Value.string) ?? .null, forName: name) }
    /// Binds an integer.
    public consuming func setInt(_ value: Int, forName name: String) -> Parameters { setValue(.int(Int64(value)), forName: name) }
    /// Binds a 64-bit integer.
    public consuming func setInt64(_ value: Int64, forName name: String) -> Parameters { setValue(.int(value), forName: name) }
    /// Binds a double.
    public consuming func setDouble(_ value: Double, forName name: String) -> Parameters { setValue(.double(value), forName: name) }
    /// Binds a float.
    public consuming func setFloat(_ value: Float, forName name: String) -> Parameters { setValue(.double(Double(value)), forName: name) }
    /// Binds a boolean.
    public consuming func setBoolean(_ value: Bool, forName name: String) -> Parameters { setValue(.bool(value), forName: name) }
    /// Binds an array.
    public consuming func setArray(_ value: [Value], forName name: String) -> Parameters { setValue(.array(value), forName: name) }
    /// Binds an object.
    public consuming func setDictionary(_ value: [String: Value], forName name: String) -> Parameters { setValue(.object(value), forName: name) }
    /// The value bound to `name`.
    public func value(forName name: String) -> Value? { storage[name] }
}

/// A compiled SQL++ (or QueryBuilder) query over a database.
///
/// ```swift
/// let q = try db.createQuery("SELECT name FROM hotels WHERE city = $city ORDER BY name")
/// q.parameters = Parameters().setString("Detroit", forName: "city")
/// try q.execute().forEach { row in print(row.string(forKey: "name")!) }
/// ```
///
/// The query is analyzed when it is created (errors surface then) and planned each time it
/// runs, against the indexes that exist at that moment.
///
/// A query may be shared between tasks: `parameters` is kept behind a lock, and each
/// `execute()` reads it once, so a run uses one consistent set of values.
public final class Query: Sendable {

    /// The database queried.
    public let database: Database
    /// The parsed statement.
    let statement: SelectStatement
    /// The SQL++ text, when created from text.
    public let text: String?
    /// Values for `$parameters`.
    public var parameters: Parameters? {
        get { boundValues.withLock { $0 } }
        set { boundValues.withLock { $0 = newValue } }
    }
    private let boundValues = Mutex<Parameters?>(nil)
    /// Advanced by `interrupt()`: executions that began earlier stop.
    let interruptEpoch = InterruptEpoch()

    init(database: Database, statement: SelectStatement, text: String?) throws {
        self.database = database
        self.statement = statement
        self.text = text
        _ = try analyze(catalogSnapshot())
    }

    /// A query that is not analysed until it runs (the index advisor takes queries naming
    /// full-text indexes that do not exist yet).
    init(unanalysed statement: SelectStatement, text: String, database: Database) {
        self.database = database
        self.statement = statement
        self.text = text
    }

    /// The names of the result columns, in order.
    public var columnNames: [String] {
        get throws { try analyze(catalogSnapshot()).columns.map(\.name) }
    }

    func catalogSnapshot() throws -> Catalog {
        try database.checkOpen()
        if let ctx = database.currentWrite() { return ctx.catalog }
        return database.catalog.withLock { $0 }
    }

    /// The analysis of the statement against a catalogue version (re-done when it changes).
    private let cachedAnalysis = Mutex<(version: UInt64, query: AnalyzedQuery)?>(nil)
    /// The last plan and the catalogue version it was made for.
    private let cachedPlan = Mutex<PreparedPlan?>(nil)

    func analyze(_ catalog: Catalog) throws -> AnalyzedQuery {
        // Inside a write transaction the catalogue may hold uncommitted changes: no caching.
        let cacheable = database.currentWrite() == nil
        if cacheable, let hit = cachedAnalysis.withLock({ $0 }), hit.version == catalog.version { return hit.query }
        let q = try analyzeUncached(catalog)
        if cacheable { cachedAnalysis.withLock { $0 = (catalog.version, q) } }
        return q
    }

    private func analyzeUncached(_ catalog: Catalog) throws -> AnalyzedQuery {
        try analyze(catalog, acceptingMissingFullTextIndexes: false).query
    }

    /// The analysis, and with `accepting` the full-text indexes MATCH/RANK name that do not
    /// exist (for the index advisor; never cached).
    func analyze(_ catalog: Catalog, acceptingMissingFullTextIndexes accepting: Bool)
        throws -> (query: AnalyzedQuery, missingFullTextIndexes: [(collection: CollectionKey, name: String)]) {
        var fts: [CollectionKey: Set<String>] = [:]
        for (key, store) in catalog.collections {
            let names = store.indexes.filter { type(of: $0.kind).answersMatch }.map(\.definition.name)
            if !names.isEmpty { fts[key] = Set(names) }
        }
        var ac = AnalyzerCatalog(databaseName: database.name, collections: Set(catalog.collections.keys), fullTextIndexes: fts)
        ac.acceptsMissingFullTextIndexes = accepting
        var analyzer = Analyzer(catalog: ac, text: text)
        let q = try analyzer.analyze(statement)
        try analyzer.checkRanks(q)
        return (q, analyzer.missingFullTextIndexes)
    }

    func boundParameters(for q: AnalyzedQuery) throws -> BoundParameters {
        try boundParameters(names: q.parameterNames.sorted())
    }

    /// The parameters given, checked against the query's parameter names `names` (sorted).
    func boundParameters(names: [String]) throws -> BoundParameters {
        let given = parameters?.storage ?? BoundParameters()
        var nulls = false
        for (name, value) in given.bindings {
            // A query has a few parameters: comparing the names beats hashing this one; many
            // are searched by halves (`names` is sorted).
            guard names.count <= 8 ? names.contains(name) : Self.sortedContains(names, name) else {
                throw QueryError(.semantic, "unknown parameter '$\(name)': the query has \(names.isEmpty ? "no parameters" : names.map { "$" + $0 }.joined(separator: ", "))", source: text)
            }
            if value.isNull { nulls = true }
        }
        // Most executions bind no NULL: the bindings are used as given, not copied.
        return nulls ? BoundParameters(given.bindings.filter { !$0.value.isNull }) : given
    }

    private static func sortedContains(_ names: [String], _ name: String) -> Bool {
        var lo = 0, hi = names.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if names[mid] < name { lo = mid + 1 } else { hi = mid }
        }
        return lo < names.count && names[lo] == name
    }

    func makePlan(txn: Snapshot? = nil) throws -> (QueryPlan, BoundParameters) {
        let (prepared, params) = try prepare(txn: txn)
        return (prepared.plan, params)
    }

    /// The plan for this execution and the parameter values it binds.
    ///
    /// The plan depends on the catalogue (and, loosely, collection sizes and the sizes of array
    /// parameters, as `x IN $array` is estimated from them), not on parameter values:
    /// it is made once per catalogue version and reused, with this execution's LIMIT/OFFSET
    /// when those are parameters. The hit path takes no copy of the catalogue or the analysis.
    func prepare(txn: Snapshot? = nil) throws -> (PreparedPlan, BoundParameters) {
        try database.checkOpen()
        let write = database.currentWrite()
        if let txn, write == nil {
            let version = database.catalog.withLock { $0.version }
            if let hit = cachedPlan.withLock({ $0 }), hit.version == version, try hit.sizesHold(txn: txn),
               case let params = try boundParameters(names: hit.parameterNames),
               PreparedPlan.arraySizeClasses(params) == hit.arraySizes {
                guard !hit.constantLimits else { return (hit, params) }
                var plan = hit.plan
                try Planner(query: plan.query, stores: [:], parameters: params.dictionary, txn: txn, counters: database.metaTable).applyLimits(&plan)
                return (PreparedPlan(version: version, plan: plan, like: hit), params)
            }
        }
        let catalog = try catalogSnapshot()
        let q = try analyze(catalog)
        let params = try boundParameters(for: q)
        let values = params.dictionary
        var stores: [CollectionKey: CollectionStore] = [:]
        for s in q.sources { if let k = s.collectionKey { stores[k] = catalog.collections[k] } }
        let plan: QueryPlan
        if let txn {
            plan = try Planner(query: q, stores: stores, parameters: values, txn: txn, counters: database.metaTable).plan()
        } else {
            plan = try database.read { txn in try Planner(query: q, stores: stores, parameters: values, txn: txn, counters: database.metaTable).plan() }
        }
        let prepared = PreparedPlan(version: catalog.version, plan: plan)
        if let txn { prepared.sizes = try PreparedPlan.sizeClasses(plan, txn: txn) }
        prepared.arraySizes = PreparedPlan.arraySizeClasses(params)
        // Inside a write transaction the catalogue may hold uncommitted changes: no caching.
        if txn != nil && write == nil { cachedPlan.withLock { $0 = prepared } }
        return (prepared, params)
    }

    /// Runs the query and returns its rows, read from one consistent snapshot.
    ///
    /// - Throws: `QueryError` (`.semantic` for an unknown parameter name or a bad LIMIT),
    ///   `DatabaseError` for storage failures.
    public func execute() throws -> ResultSet {
        try execute(analysis: nil)
    }

    /// Runs the query; with `analysis`, counting what each plan level reads (EXPLAIN ANALYZE).
    func execute(analysis: QueryAnalysis?) throws -> ResultSet {
        // Plan and run in the same snapshot: one read transaction per execution.
        try database.checkOpen()
        let owned: Snapshot?
        let txn: Snapshot
        if let ctx = database.currentWrite() {
            // Reads inside a batch see its saves: queued index work and the counters.
            try ctx.txn.flushPendingWork()
            try ctx.flushCounters()
            txn = ctx.txn
            owned = nil
        } else {
            var snapshot = try database.store.beginSnapshot()
            // Another process changed collections or indexes: load its catalogue first, so the
            // plan uses (and never reads a dropped) index, then read a newer snapshot.
            let stale: Bool
            do { stale = try database.catalogIsStale(txn: snapshot) } catch {
                database.store.endSnapshot(snapshot)
                throw DatabaseError.storage(error, "read from '\(database.path)' failed")
            }
            if stale {
                database.store.endSnapshot(snapshot)
                try database.reloadCatalog()
                snapshot = try database.store.beginSnapshot()
            }
            txn = snapshot
            owned = txn
        }
        do {
            let (prepared, params) = try prepare(txn: txn)
            let interrupt = QueryInterrupt(query: interruptEpoch, database: database.interruptEpoch, timeout: database.queryTimeout)
            return try ResultSet(database: database, prepared: prepared, parameters: params, txn: txn, owned: owned != nil,
                                 interrupt: interrupt, analysis: analysis)
        } catch {
            if let owned { database.store.endSnapshot(owned) }
            throw error
        }
    }

    /// Stops every execution of this query that has begun (result sets returned by
    /// `execute()` and not yet read to the end), from any thread or task: the call reading
    /// their rows throws `DatabaseError` with code `.interrupted` at its next check. Later
    /// `execute()` calls run normally. (SQLite and GRDB call this `interrupt` too.)
    public func interrupt() { interruptEpoch.interrupt() }

    /// The plan as text, in SQLite's EXPLAIN QUERY PLAN vocabulary (`SCAN hotels`,
    /// `SEARCH hotels USING INDEX HotelCityIndex (city=?)`, `USE TEMP B-TREE FOR ORDER BY`),
    /// followed by a `NOT USED:` line for every index of the collections read that the plan
    /// does not use, saying why.
    ///
    /// With `analyze`, the query runs (its rows are read and dropped) and each access line
    /// gains its figures: the rows estimated and read, the loops, the index entries and
    /// documents read and the time spent; each filter line the rows that passed it; a last
    /// line gives the rows returned and the total time:
    ///
    /// ```
    /// SEARCH hotels USING INDEX byCity (city=?) [estimated 12 rows; read 12 rows in 1 loop, 12 index entries, 12 documents, 0.031 ms]
    ///   FILTER (type = 'inn') [8 rows passed]
    /// RESULT 8 rows in 0.094 ms
    /// ```
    public func explain(analyze: Bool = false) throws -> String {
        try explainPlan(analyze: analyze).text
    }

    /// The plan as data: per source the access path, index, key range, residual filter and
    /// the planner's estimate, and the indexes not used with the reason (`unusedIndexes`).
    /// With `analyze`, the query runs and each source carries its `analysis` figures.
    public func explainPlan(analyze: Bool = false) throws -> ExplainPlan {
        _ = try database.refreshCatalogIfStale()
        guard analyze else {
            let (plan, _) = try makePlan()
            var explained = ExplainPlan(plan)
            explained.unusedIndexes = try database.read { txn in try UnusedIndexDiagnosis(plan: plan, txn: txn, meta: database.metaTable).reasons() }
            return explained
        }
        let analysis = QueryAnalysis()
        let start = ContinuousClock.now
        let rows = try execute(analysis: analysis)
        while try rows.next() != nil { analysis.resultRows += 1 }
        analysis.nanoseconds = QueryAnalysis.nanoseconds(since: start)
        guard let plan = rows.analyzedPlan else { throw DatabaseError(.notFound, "the query produced no plan") }
        var explained = ExplainPlan(plan)
        explained.attach(analysis)
        explained.unusedIndexes = try database.read { txn in try UnusedIndexDiagnosis(plan: plan, txn: txn, meta: database.metaTable).reasons() }
        return explained
    }
}

extension Database {
    /// Compiles a SQL++ query.
    ///
    /// - Throws: `QueryError` with kind `.syntax` or `.semantic`, line, column and a caret rendering.
    public func createQuery(_ sql: String) throws -> Query {
        let statement = try SQLParser.parseStatement(sql)
        return try Query(database: self, statement: statement, text: sql)
    }

    /// Creates a query from a statement built with QueryBuilder or by hand.
    func createQuery(statement: SelectStatement) throws -> Query {
        try Query(database: self, statement: statement, text: nil)
    }
}

