// A plan kept by a query between executions.

import Synchronization

/// A plan made for one catalogue version, with what every execution of it shares.
final class PreparedPlan: @unchecked Sendable {
    // Immutable after init; the plan's row-source factories and compiled parts are values.
    let version: UInt64
    let plan: QueryPlan
    /// The result columns' names and the first column of each name (shared by the rows).
    let columns: ResultColumns
    /// LIMIT and OFFSET are absent or literals: the plan's values hold for every execution.
    let constantLimits: Bool
    /// The plan's expressions without parameters, compiled once for every execution.
    let shared: SharedEvaluators
    /// Some expression calls MATCH or RANK (an execution then needs the full-text indexes).
    let usesMatch: Bool
    /// The query is `count(*)`s of one source's rows, with no filter left and nothing else
    /// read from a row: the row source counts its rows (an index its entries) unbound.
    let countsRows: Bool
    /// The query groups a covering index scan by its first this many columns (GROUP BY, or
    /// DISTINCT of those columns) and computes only `count(*)`s or no aggregate, with no
    /// filter left: the scan counts each group's entries unbound. (The index expressions'
    /// paths bind each group's row.)
    let countedGroups: (columns: Int, paths: [[PathComponent]])?
    /// The size class of each collection the plan reads when it was made (`sizeClasses`):
    /// the plan's cost estimates hold while the sizes stay in their class.
    var sizes: [Int] = []
    /// The last snapshot (its transaction ID) in which `sizes` were found to hold: an execution
    /// in the same snapshot skips counting again.
    private let sizesCheckedAt = Atomic<UInt64>(0)
    /// Everything an execution evaluates above its row sources, when no expression reads a
    /// parameter (made once; nil otherwise, and each execution makes its own).
    let evaluators: ExecutorEvaluators?
    /// The query's parameter names (checked against the given parameters at each execution).
    /// The query's parameter names, sorted (a few: an execution checks its bindings against them).
    let parameterNames: [String]
    /// A finished executor of this plan kept for the next execution (`Executor.reusable`).
    let idleExecutor = ExecutorPool()

    /// True if the collections are still in the size classes the plan was made for.
    func sizesHold(txn: Snapshot) throws -> Bool {
        let id = txn.transactionID
        if id != 0 && sizesCheckedAt.load(ordering: .relaxed) == id { return true }
        guard try PreparedPlan.sizeClasses(plan, txn: txn) == sizes else { return false }
        // (Read snapshots only: a write transaction's ID is also that of the snapshots after it.)
        if txn.isReadOnly { sizesCheckedAt.store(id, ordering: .relaxed) }
        return true
    }

    /// The bit width of the element count of each array parameter the plan was made with
    /// (`x IN $array` is estimated from it): an array that doubled or halved gets a new plan.
    var arraySizes: [String: Int] = [:]

    static func arraySizeClasses(_ params: BoundParameters) -> [String: Int] {
        var out: [String: Int] = [:]
        for (name, v) in params.bindings { if case .array(let a) = v { out[name] = Int.bitWidth - a.count.leadingZeroBitCount } }
        return out
    }

    /// The bit width of each collection source's document count: a collection that doubled
    /// or halved since gets a new plan.
    static func sizeClasses(_ plan: QueryPlan, txn: Snapshot) throws -> [Int] {
        var out: [Int] = []
        for sp in plan.sources {
            if let store = sp.store { out.append(Int.bitWidth - (try txn.count(store.docs)).leadingZeroBitCount) }
        }
        return out
    }

    init(version: UInt64, plan: QueryPlan) {
        self.version = version
        self.plan = plan
        columns = ResultColumns(plan.query.columns.map(\.name))
        func constant(_ e: BoundExpr?) -> Bool {
            switch e {
            case nil, .literal?, .unary(.negate, .literal)?: return true
            default: return false
            }
        }
        constantLimits = constant(plan.query.limit) && constant(plan.query.offset)
        shared = SharedEvaluators(plan)
        usesMatch = SharedEvaluators.mentionsMatch(plan)
        countsRows = PreparedPlan.countsRows(plan)
        countedGroups = PreparedPlan.countedGroups(plan)
        evaluators = SharedEvaluators.readParameters(plan) ? nil : ExecutorEvaluators(plan: plan, shared: shared, parameters: [:])
        parameterNames = plan.query.parameterNames.sorted()
    }

    static func countsRows(_ plan: QueryPlan) -> Bool {
        let q = plan.query
        guard plan.sources.count == 1, plan.sources[0].filter.isEmpty, plan.sources[0].source.on == nil,
              q.groupBy.isEmpty, !q.aggregates.isEmpty,
              q.aggregates.allSatisfy({ FunctionRegistry.upperASCII($0.name) == "COUNT" && $0.args.isEmpty }) else { return false }
        var read: [BoundExpr] = q.orderBy.map(\.expr) + (q.having.map { [$0] } ?? [])
        for c in q.columns {
            guard case .expression(let e) = c.kind else { return false }
            read.append(e)
        }
        return read.allSatisfy { $0.referencedSources.isEmpty }
    }

    static func countedGroups(_ plan: QueryPlan) -> (columns: Int, paths: [[PathComponent]])? {
        let q = plan.query
        // No aggregate at all (DISTINCT, GROUP BY alone) counts too: the counts go unused.
        guard plan.groupsDelivered, plan.sources.count == 1, plan.sources[0].filter.isEmpty, plan.sources[0].source.on == nil,
              !q.groupBy.isEmpty || (q.distinct && q.aggregates.isEmpty),
              q.aggregates.allSatisfy({ FunctionRegistry.upperASCII($0.name) == "COUNT" && $0.args.isEmpty }),
              case .index(let access) = plan.sources[0].access, let scan = access as? KeyRangeScanPlan, scan.covering,
              scan.arraySources.isEmpty, let k = scan.groupColumns else { return nil }
        return (k, scan.expressionPaths)
    }

    /// The same plan with other LIMIT/OFFSET values.
    init(version: UInt64, plan: QueryPlan, like other: PreparedPlan) {
        self.version = version
        self.plan = plan
        columns = other.columns
        constantLimits = other.constantLimits
        shared = other.shared
        usesMatch = other.usesMatch
        countsRows = other.countsRows
        countedGroups = other.countedGroups
        sizes = other.sizes
        arraySizes = other.arraySizes
        evaluators = other.evaluators
        parameterNames = other.parameterNames
    }
}

/// Expressions compiled once per plan when they read no parameter, in the
/// plan's order (nil where an expression reads parameters: an execution compiles it with their
/// values as constants). Evaluators keep no state of their own — all of it is in the
/// `ExecContext` of an execution — so executions on several threads can share them.
struct SharedEvaluators: @unchecked Sendable {
    var ons: [Compiled?] = []
    var filters: [[Compiled?]] = []
    var columns: [Compiled?] = []
    var orderKeys: [Compiled?] = []
    var aggregateArgs: [[Compiled?]] = []
    var groupKeys: [Compiled?] = []
    var having: Compiled?

    init(_ plan: QueryPlan) {
        func once(_ e: BoundExpr) -> Compiled? { e.readsParameters ? nil : Compiled(ExpressionCompiler.compile(e)) }
        let q = plan.query
        ons = plan.sources.map { $0.source.on.flatMap(once) }
        filters = plan.sources.map { $0.filter.map(once) }
        columns = q.columns.map { if case .expression(let e) = $0.kind { return once(e) } else { return nil } }
        orderKeys = q.orderBy.map { once($0.expr) }
        aggregateArgs = q.aggregates.map { $0.args.map(once) }
        groupKeys = q.groupBy.map(once)
        having = q.having.flatMap(once)
    }

    /// The expressions an execution evaluates above its row sources: ON, filters, result
    /// columns, ORDER BY and GROUP BY keys, aggregate arguments, HAVING.
    static func expressions(_ plan: QueryPlan) -> [BoundExpr] {
        let q = plan.query
        var exprs: [BoundExpr] = q.orderBy.map(\.expr) + q.groupBy + q.aggregates.flatMap(\.args)
        q.having.map { exprs.append($0) }
        for c in q.columns { if case .expression(let e) = c.kind { exprs.append(e) } }
        for s in plan.sources { s.source.on.map { exprs.append($0) }; exprs += s.filter }
        return exprs
    }

    /// True if an expression an execution evaluates above the row sources reads a parameter.
    static func readParameters(_ plan: QueryPlan) -> Bool {
        expressions(plan).contains { $0.readsParameters }
    }

    /// True if an expression of the plan (its WHERE clause included) calls MATCH or RANK.
    static func mentionsMatch(_ plan: QueryPlan) -> Bool {
        var found = false
        for e in expressions(plan) + (plan.query.whereClause.map { [$0] } ?? []) {
            e.walk { if case .match = $0 { found = true } else if case .rank = $0 { found = true } }
        }
        return found
    }
}

extension BoundExpr {
    /// True if the expression reads a `$parameter`.
    var readsParameters: Bool {
        var found = false
        walk { if case .parameter = $0 { found = true } }
        return found
    }
}

/// Keeps one finished executor of a plan for the next execution to take (an execution that
/// finds none makes its own). Taking and putting back are under a lock: executions of one
/// query may run on several threads, each with its own executor.
final class ExecutorPool: @unchecked Sendable {
    // @unchecked Sendable: `idle` is read and written under `lock` only, and an executor in
    // the pool is used by no one until taken.
    private let lock = Mutex<Void>(())
    private var idle: Executor?

    init() {}

    /// The kept executor, if any (removed from the pool).
    func take() -> Executor? {
        lock.withLock { _ in
            let e = idle
            idle = nil
            return e
        }
    }

    /// Keeps `executor` (closed, reusable) unless one is kept already.
    func put(_ executor: Executor) {
        lock.withLock { _ in if idle == nil { idle = executor } }
    }
}

/// A query's column names and the position of each name (the first column of that name).
final class ResultColumns: Sendable {
    let names: [String]
    let index: [String: Int]

    init(_ names: [String]) {
        self.names = names
        var idx: [String: Int] = [:]
        for (i, n) in names.enumerated() where idx[n] == nil { idx[n] = i }
        index = idx
    }
}
