

/// The rows of a query, read inside one consistent snapshot: a throwing cursor.
///
/// Rows are produced as you read them; the snapshot (an LMDB read transaction) stays open
/// until the last row has been read, reading fails, or the result set is released. A read
/// error is thrown by the call that meets it, never taken for the end of the rows, so
/// `ResultSet` is deliberately not a `Sequence` (whose `next()` cannot throw):
///
/// ```swift
/// let rows = try query.execute()
/// while let row = try rows.next() { print(row.string(forKey: "name") ?? "?") }
/// try query.execute().forEach { row in print(row) }
/// let all = try query.execute().allResults()
/// for try await row in try query.execute() { print(row) }   // in async code
/// ```
///
/// A result set is for one reader at a time: it is not `Sendable`. It may move between
/// threads (and an async loop may resume on another thread) because the read transaction
/// is not tied to the thread that began it (the environment is opened with `MDB_NOTLS`),
/// but two threads must not read the same result set at once. Read rows (`Result`) are
/// values and may be shared freely. A result set made inside `inBatch` reads the batch's
/// write transaction: read it to the end before the batch returns (that transaction ends
/// with the batch).
public final class ResultSet {
    /// The column names, in order.
    public var columnNames: [String] { columns.names }
    let columns: ResultColumns
    private var executor: Executor?
    /// The plan run (its pool takes the executor back when the result set is done).
    private let prepared: PreparedPlan?
    private var txn: Snapshot?
    private let database: Database
    private var ownsTransaction: Bool
    /// The error that stopped reading; thrown again by every later `next()`.
    private var failure: (any Error)?
    /// Rows already read (a result set made from `rows:`), handed out before the executor's.
    private var buffered: ArraySlice<Result> = []
    /// Stops the execution (`interrupt()`, task cancellation, the query timeout).
    let interruption: QueryInterrupt

    /// Runs `plan` in `txn`; when `owned`, the result set ends the read transaction.
    /// The plan run (kept only under EXPLAIN ANALYZE).
    private(set) var analyzedPlan: QueryPlan?

    init(database: Database, prepared: PreparedPlan, parameters: BoundParameters, txn: Snapshot, owned: Bool,
         interrupt: QueryInterrupt = QueryInterrupt(), analysis: QueryAnalysis? = nil) throws {
        interruption = interrupt
        self.database = database
        if let analysis {
            analysis.levels = Array(repeating: LevelFigures(), count: prepared.plan.sources.count)
            analyzedPlan = prepared.plan
        }
        columns = prepared.columns
        self.txn = txn
        ownsTransaction = owned
        self.prepared = prepared
        if analysis == nil, let reused = prepared.idleExecutor.take() {
            reused.rearm(txn: txn, parameters: parameters, interrupt: interrupt)
            executor = reused
            return
        }
        let rowsWanted = prepared.plan.limit.map { Planner.rowsWanted(limit: $0, offset: prepared.plan.offset) }
        let values = parameters.dictionary
        do {
            executor = try Executor(prepared: prepared, txn: txn, parameters: parameters, interrupt: interrupt, analysis: analysis) { sp, _ in
                try RowSourceFactory.make(sp, parameters: values, rowsWanted: rowsWanted)
            }
        } catch {
            finish()
            throw error
        }
    }

    /// A result set over rows already read (live query results); it holds no snapshot.
    init(database: Database, columnNames: [String], rows: [Result]) {
        self.database = database
        columns = ResultColumns(columnNames)
        ownsTransaction = false
        prepared = nil
        buffered = rows[...]
        interruption = QueryInterrupt()
    }

    deinit { finish() }

    private func finish() {
        if let executor {
            executor.close()
            // Closed, it holds no cursor: the next execution of the plan may run it again.
            if failure == nil, executor.reusable { prepared?.idleExecutor.put(executor) }
        }
        executor = nil
        if ownsTransaction, let txn { database.store.endSnapshot(txn) }
        txn = nil
    }

    /// The next row, or nil once every row has been read.
    ///
    /// - Throws: the storage or evaluation error that stops the query (`DatabaseError`,
    ///   `QueryError`). The snapshot is released then, and every later call throws the
    ///   same error again.
    public func next() throws -> Result? {
        if let failure { throw failure }
        if let row = buffered.popFirst() { return row }
        guard let executor else { return nil }
        do {
            if let row = try executor.nextRow() {
                return Result(cells: row, columns: columns)
            }
        } catch {
            failure = error
            finish()
            throw error
        }
        finish()
        return nil
    }

    /// Stops the query: the call reading rows (`next()`, `forEach`, `allResults()`, an async
    /// loop), running now or later, throws `DatabaseError` with code `.interrupted` as soon
    /// as it reaches a check (scans, joins, grouping, sorting, full-text and regular
    /// expression matching all check), and the snapshot is released.
    ///
    /// A result set is read by one thread at a time; to stop it from another thread or task,
    /// call ``Query/interrupt()`` (or ``Database/interrupt()``), which are `Sendable`.
    public func interrupt() { interruption.interrupt() }

    /// Calls `body` with each remaining row, in order.
    ///
    /// - Throws: the first error from reading or from `body`; no row is read after it.
    public func forEach(_ body: (Result) throws -> Void) throws {
        while let row = try next() { try body(row) }
    }

    /// Every remaining row.
    ///
    /// - Throws: the storage or evaluation error that stopped the query.
    public func allResults() throws -> [Result] {
        var out: [Result] = []
        // A LIMIT bounds the rows: room for them at once rather than regrowing the array
        // (and retaining every row again) five times for LIMIT 20.
        if let limit = executor?.rowLimit { out.reserveCapacity(buffered.count + Swift.min(limit, 1_024)) }
        while let r = try next() { out.append(r) }
        return out
    }
}

extension ResultSet: AsyncSequence {
    public typealias Element = Result
    public typealias Failure = any Error

    /// Reads the rows of `for try await row in resultSet`; errors are thrown, as by `next()`.
    ///
    /// The rows are read synchronously from the open snapshot: each step runs on the
    /// caller's executor and does not suspend. Cancelling the task stops the query, even in
    /// the middle of a long step (a sort, a scan that finds nothing): the loop throws
    /// `DatabaseError` with code `.interrupted`.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let rows: ResultSet

        public mutating func next() async throws -> Result? { try await rows.nextCancellable() }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> Result? {
            try await rows.nextCancellable(isolation: actor)
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(rows: self) }

    /// `next()`, stopped by the cancellation of the current task.
    func nextCancellable(isolation: isolated (any Actor)? = #isolation) async throws -> Result? {
        let token = interruption
        if Task.isCancelled { token.interrupt(.cancelled) }
        return try await withTaskCancellationHandler {
            try next()
        } onCancel: {
            token.interrupt(.cancelled)
        }
    }
}

/// One row of a result set: values by index and by column name.
///
/// A MISSING column is absent by name and in `toDictionary()`/`toJSON()`, nil by index,
/// and `null` in `toArray()`; NULL is present as null.
///
/// A column holding a whole document (`SELECT *`) keeps the document's encoded bytes and
/// decodes them each time the column is read: receiving a row costs a copy of the bytes,
/// not a decode. Read a column once into a local when you use it several times.
public struct Result: Sendable, CustomStringConvertible {
    let cells: RowCells
    /// The column names and their positions, shared by every row of a query (one reference
    /// to retain per row, not two).
    let columns: ResultColumns
    /// Column values in column order (`.missing` for MISSING).
    public var values: [Value] { cells.map(\.value) }
    /// Column names in order.
    public var keys: [String] { columns.names }
    var index: [String: Int] { columns.index }

    init(cells: RowCells, columns: ResultColumns) {
        self.cells = cells
        self.columns = columns
    }

    init(values: [Value], columns: ResultColumns) {
        self.init(cells: RowCells(values: values), columns: columns)
    }

    /// The number of columns.
    public var count: Int { cells.count }

    /// The value of column `i`, or nil if it is MISSING or out of range.
    public func value(at i: Int) -> Value? {
        guard i >= 0, i < cells.count else { return nil }
        let v = cells[i].value
        // Not `v.isMissing ? nil : v`: there `nil` would be `Value(nilLiteral:)`, NULL.
        guard !v.isMissing else { return nil }
        return v
    }

    /// The value of column `name`, or nil if it is MISSING or there is no such column.
    public func value(forKey name: String) -> Value? {
        guard let i = index[name] else { return nil }
        return value(at: i)
    }

    /// True if column `name` exists and is not MISSING.
    public func contains(key: String) -> Bool { value(forKey: key) != nil }

    /// The value of column `name` (`.missing` if absent).
    public subscript(key: String) -> Value { value(forKey: key) ?? .missing }
    /// The value of column `i` (`.missing` if absent).
    public subscript(i: Int) -> Value { value(at: i) ?? .missing }

    /// The string at column `i`.
    public func string(at i: Int) -> String? {
        // The common cell, a string value, is read without copying the cell's `Value` first.
        guard i >= 0, i < cells.count else { return nil }
        switch cells[i] {
        case .value(.string(let s)): return s
        case .value: return nil
        case .encoded: return cells[i].value.stringValue
        }
    }
    /// The string of column `name`.
    public func string(forKey name: String) -> String? { value(forKey: name)?.stringValue }
    /// The integer at column `i` (0 if absent or not a number).
    public func int(at i: Int) -> Int {
        guard i >= 0, i < cells.count else { return 0 }
        let v: Value
        switch cells[i] {
        case .value(.int(let n)): return Int(n)
        case .value(let x): v = x
        case .encoded: v = cells[i].value
        }
        return v.intValue.map { Int($0) } ?? Int(v.doubleValue ?? 0)
    }
    /// The integer of column `name`.
    public func int(forKey name: String) -> Int { index[name].map { int(at: $0) } ?? 0 }
    /// The 64-bit integer at column `i`.
    public func int64(at i: Int) -> Int64 { Int64(int(at: i)) }
    /// The 64-bit integer of column `name`.
    public func int64(forKey name: String) -> Int64 { Int64(int(forKey: name)) }
    /// The number at column `i` as a Double (0 if absent).
    public func double(at i: Int) -> Double { value(at: i)?.doubleValue ?? 0 }
    /// The number of column `name` as a Double.
    public func double(forKey name: String) -> Double { value(forKey: name)?.doubleValue ?? 0 }
    /// The boolean at column `i` (false if absent).
    public func bool(at i: Int) -> Bool { value(at: i)?.boolValue ?? false }
    /// The boolean of column `name`.
    public func bool(forKey name: String) -> Bool { value(forKey: name)?.boolValue ?? false }
    /// The array at column `i`.
    public func array(at i: Int) -> [Value]? { value(at: i)?.arrayValue }
    /// The array of column `name`.
    public func array(forKey name: String) -> [Value]? { value(forKey: name)?.arrayValue }
    /// The object at column `i`.
    public func dictionary(at i: Int) -> [String: Value]? { value(at: i)?.objectValue }
    /// The object of column `name`.
    public func dictionary(forKey name: String) -> [String: Value]? { value(forKey: name)?.objectValue }

    /// The row as an object value (MISSING columns omitted).
    public var object: Value {
        var o: [String: Value] = [:]
        for (i, k) in keys.enumerated() {
            let v = cells[i].value
            if !v.isMissing { o[k] = v }
        }
        return .object(o)
    }

    /// Column values as plain Swift values; MISSING becomes `JSONNull`.
    public func toArray() -> [Any] { cells.map { $0.anyValue ?? JSONNull() } }
    /// The row as a dictionary of plain Swift values (MISSING columns omitted).
    public func toDictionary() -> [String: Any] {
        var d = [String: Any](minimumCapacity: keys.count)
        for (i, k) in keys.enumerated() {
            if let x = cells[i].anyValue { d[k] = x }
        }
        return d
    }
    /// The row as JSON text (MISSING columns omitted).
    public func toJSON() -> String { JSONWriter.string(object) }

    /// Decodes the row (as an object keyed by column name) into `type`.
    public func data<T: Decodable>(as type: T.Type) throws -> T {
        try ValueDecoder().decode(type, from: object)
    }

    /// The row as JSON.
    public var description: String { toJSON() }
}
