import CSQLite

/// An SQLite error with the connection's message.
struct SQLiteError: Error, CustomStringConvertible {
    /// The result code.
    var code: Int32
    /// `sqlite3_errmsg` and the statement.
    var message: String
    var description: String { "SQLite error \(code): \(message)" }
}

/// A thin wrapper over one `sqlite3` connection (no mutex: used from one thread).
final class SQLiteConnection {
    let handle: OpaquePointer

    /// Opens (creating) the database file at `path`.
    init(path: String) throws {
        var h: OpaquePointer?
        let rc = sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let h else {
            let msg = h.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let h { sqlite3_close_v2(h) }
            throw SQLiteError(code: rc, message: "cannot open '\(path)': \(msg)")
        }
        handle = h
    }

    deinit { sqlite3_close_v2(handle) }

    /// The last error message.
    var errorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    /// Runs one or more statements without results.
    func exec(_ sql: String) throws {
        var err: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &err)
        if rc != SQLITE_OK {
            let msg = err.map { String(cString: $0) } ?? errorMessage
            sqlite3_free(err)
            throw SQLiteError(code: rc, message: "\(msg) in: \(sql.prefix(200))")
        }
    }

    /// Compiles one statement.
    func prepare(_ sql: String) throws -> SQLiteStatement {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw SQLiteError(code: rc, message: "\(errorMessage) in: \(sql)") }
        return SQLiteStatement(stmt: stmt, connection: self)
    }

    /// The first column of the first row of `sql` as an integer (0 if no row).
    func scalarInt(_ sql: String) throws -> Int64 {
        let st = try prepare(sql)
        return try st.step() ? st.int(0) : 0
    }

    /// Every row of `sql` as text columns (for EXPLAIN QUERY PLAN and diagnostics).
    func rows(_ sql: String) throws -> [[String]] {
        let st = try prepare(sql)
        var out: [[String]] = []
        while try st.step() {
            out.append((0..<sqlite3_column_count(st.stmt)).map { st.text($0) })
        }
        return out
    }

    /// Registers `rank(matchinfo(fts))`, Couchbase Lite's FTS4 ranking: the sum over query
    /// phrases and columns of (hits in this row ÷ hits in all rows), from matchinfo's default
    /// `pcx` format (SQLite's FTS3/4 documentation, appendix A, with unit column weights).
    func registerRankFunction() throws {
        let rc = sqlite3_create_function_v2(handle, "rank", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
                                            ftsRank, nil, nil, nil)
        if rc != SQLITE_OK { throw SQLiteError(code: rc, message: "cannot register rank(): \(errorMessage)") }
    }
}

/// `rank(matchinfo)`: see `SQLiteConnection.registerRankFunction()`.
private func ftsRank(_ ctx: OpaquePointer?, _ argc: Int32, _ argv: UnsafeMutablePointer<OpaquePointer?>?) {
    guard argc == 1, let arg = argv?[0], let blob = sqlite3_value_blob(arg) else {
        sqlite3_result_error(ctx, "rank() expects matchinfo(fts)", -1)
        return
    }
    let words = Int(sqlite3_value_bytes(arg)) / 4
    let info = blob.assumingMemoryBound(to: UInt32.self)
    guard words >= 2 else { sqlite3_result_double(ctx, 0); return }
    let phrases = Int(info[0])
    let columns = Int(info[1])
    guard words >= 2 + 3 * phrases * columns else {
        sqlite3_result_error(ctx, "rank(): matchinfo blob too short (use the default 'pcx' format)", -1)
        return
    }
    var score = 0.0
    for p in 0..<phrases {
        for c in 0..<columns {
            let base = 2 + 3 * (c + p * columns)
            let hitsHere = info[base]
            let hitsAll = info[base + 1]
            if hitsHere > 0 { score += Double(hitsHere) / Double(hitsAll) }
        }
    }
    sqlite3_result_double(ctx, score)
}

/// A prepared statement, reused across executions (`reset()` between them).
final class SQLiteStatement {
    let stmt: OpaquePointer
    private let connection: SQLiteConnection  // keeps the connection open while the statement lives

    init(stmt: OpaquePointer, connection: SQLiteConnection) {
        self.stmt = stmt
        self.connection = connection
    }

    deinit { sqlite3_finalize(stmt) }

    /// Resets the statement for another execution (bindings are kept until rebound).
    func reset() { sqlite3_reset(stmt) }

    /// Binds text (copied by SQLite).
    func bind(_ index: Int32, _ value: String) {
        sqlite3_bind_text(stmt, index, value, Int32(value.utf8.count), sqliteTransient)
    }

    /// Binds an integer.
    func bind(_ index: Int32, _ value: Int) { sqlite3_bind_int64(stmt, index, Int64(value)) }

    /// Binds a double.
    func bind(_ index: Int32, _ value: Double) { sqlite3_bind_double(stmt, index, value) }

    /// Binds the UTF-8 bytes of `value` without copying, runs `body`, then unbinds.
    func withBoundText<R>(_ index: Int32, _ value: String, _ body: () throws -> R) rethrows -> R {
        var v = value
        return try v.withUTF8 { buf in
            sqlite3_bind_text(stmt, index, UnsafeRawPointer(buf.baseAddress!).assumingMemoryBound(to: CChar.self),
                              Int32(buf.count), nil)
            defer { sqlite3_bind_null(stmt, index) }
            return try body()
        }
    }

    /// Steps: true when a row is available, false when done.
    @discardableResult
    func step() throws -> Bool {
        let rc = sqlite3_step(stmt)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw SQLiteError(code: rc, message: "\(connection.errorMessage) in: \(String(cString: sqlite3_sql(stmt)))")
    }

    /// Runs the statement to completion, then resets it.
    func run() throws {
        defer { sqlite3_reset(stmt) }
        while try step() {}
    }

    /// Column `i` as an integer.
    func int(_ i: Int32) -> Int64 { sqlite3_column_int64(stmt, i) }

    /// Number of result columns.
    var columnCount: Int32 { sqlite3_column_count(stmt) }

    /// SQLite's type of column `i` in the current row (`SQLITE_INTEGER`, `SQLITE_TEXT`, …).
    func columnType(_ i: Int32) -> Int32 { sqlite3_column_type(stmt, i) }

    /// Column `i` as a double.
    func double(_ i: Int32) -> Double { sqlite3_column_double(stmt, i) }

    /// Column `i` as a Swift string ("" for NULL).
    func text(_ i: Int32) -> String {
        guard let p = sqlite3_column_text(stmt, i) else { return "" }
        let n = Int(sqlite3_column_bytes(stmt, i))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }

    /// Column `i` copied as bytes.
    func bytes(_ i: Int32) -> [UInt8] {
        guard let p = sqlite3_column_blob(stmt, i) else { return [] }
        let n = Int(sqlite3_column_bytes(stmt, i))
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }
}

/// `SQLITE_TRANSIENT`: SQLite copies bound values.
private let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
