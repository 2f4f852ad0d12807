// `tessera query` and `tessera explain`.

import Tessera

enum QueryCommands {
    static let paramOptions: [OptionSpec] = [
        .value("--param", "NAME=VALUE", "Bind $NAME; VALUE is read as JSON if it is valid JSON, else as a string", repeatable: true),
        .value("--params", "JSON", "Bind parameters from a JSON object ({\"city\": \"Paris\"})"),
    ]

    static let query = CommandSpec(
        name: "query", operands: "DB \"SQL++\"",
        summary: "Run a SQL++ query and print its rows.",
        options: paramOptions + [
            .value("--format", "F", "Output format: table, json, jsonl or csv (default: table on a terminal, jsonl when piped)"),
            .flag("--explain", "Also print the query plan (on stderr)"),
            .flag("--time", "Print the row count and execution time (on stderr)"),
            .value("--repeat", "N", "Run the query N times; print min/median/max execution time (on stderr)"),
        ],
        minOperands: 1, maxOperands: 1,
        details: """
            The query text may be "-" to read it from standard input. Rows go to standard output;
            plans, timings and errors go to standard error, so piped output stays clean.
            A SQL++ error prints the query line with a caret under the offending token.

            Examples:
              tessera query travel.db "SELECT name, city FROM _ WHERE type = 'hotel' LIMIT 5"
              tessera query travel.db "SELECT name FROM _ WHERE city = \\$city" --param city=Paris
              tessera query travel.db "SELECT COUNT(*) AS n FROM _" --format json --time
            """,
        run: runQuery)

    static let explain = CommandSpec(
        name: "explain", operands: "DB \"SQL++\"",
        summary: "Print the plan of a SQL++ query (indexes used, key ranges, filters, sorting).",
        options: paramOptions + [
            .flag("--analyze", "Run the query and add what each step read: rows estimated and read, loops, index entries, documents, time"),
        ],
        minOperands: 1, maxOperands: 1,
        details: """
            Lines use SQLite's EXPLAIN QUERY PLAN words: SCAN (every document), SEARCH … USING INDEX
            (with the key range), FILTER (conditions checked per row), USE TEMP B-TREE (sorting).
            NOT USED: lists every index of the collections read that the plan leaves unused, and why.

            Examples:
              tessera explain travel.db "SELECT name FROM hotels WHERE city = 'Paris'"
              tessera explain travel.db "SELECT name FROM hotels WHERE city = 'Paris'" --analyze
            """,
        run: runExplain)

    // MARK: - Parameters

    /// Parameters from `--params JSON` and `--param NAME=VALUE` (the latter win).
    static func parameters(_ inv: Invocation) throws -> Parameters? {
        var values: [String: Value] = [:]
        if let json = inv.value("--params") {
            let v: Value
            do { v = try JSONReader.parse(json) } catch {
                throw CLIError.usage("--params is not valid JSON: \(error)")
            }
            guard case .object(let o) = v else { throw CLIError.usage("--params must be a JSON object, not \(v.typeName)") }
            for (k, val) in o { values[k.hasPrefix("$") ? String(k.dropFirst()) : k] = val }
        }
        for p in inv.all("--param") {
            let (name, value) = try parseParam(p)
            values[name] = value
        }
        return values.isEmpty ? nil : Parameters(values)
    }

    /// `NAME=VALUE` → (name without `$`, JSON value or string).
    static func parseParam(_ p: String) throws -> (String, Value) {
        guard let eq = p.firstIndex(of: "=") else {
            throw CLIError.usage("--param expects NAME=VALUE, not '\(p)'")
        }
        var name = String(p[..<eq])
        if name.hasPrefix("$") { name.removeFirst() }
        guard !name.isEmpty else { throw CLIError.usage("--param '\(p)' has an empty name") }
        let text = String(p[p.index(after: eq)...])
        let value = (try? JSONReader.parse(text)) ?? .string(text)
        return (name, value)
    }

    // MARK: - Running

    static func readQueryText(_ text: String) throws -> String {
        if text == "-" { return try readTextFile("-") }
        return text
    }

    static func runQuery(_ inv: Invocation) throws -> Int32 {
        let format = try OutputFormat.parse(inv.value("--format")) ?? inv.context.shellFormat ?? .automatic
        let repeatCount = try inv.int("--repeat", min: 1)
        let sql = try readQueryText(inv.operands[0])
        let params = try parameters(inv)
        let db = try inv.readingDatabase()
        defer { inv.release(db) }
        try execute(db: db, sql: sql, parameters: params, format: format,
                    explain: inv.has("--explain"), time: inv.has("--time"), repeatCount: repeatCount)
        return ExitCode.ok
    }

    /// Compiles and runs `sql`, printing rows to stdout and plan/timings to stderr.
    static func execute(db: Database, sql: String, parameters: Parameters?, format: OutputFormat,
                        explain: Bool, time: Bool, repeatCount: Int?, maxCellWidth: Int? = 60) throws {
        let query = try db.createQuery(sql)
        query.parameters = parameters
        try execute(query, format: format, explain: explain, time: time, repeatCount: repeatCount, maxCellWidth: maxCellWidth)
    }

    /// Runs a compiled query, printing rows to stdout and plan/timings to stderr.
    static func execute(_ query: Query, format: OutputFormat, explain: Bool, time: Bool, repeatCount: Int?,
                        maxCellWidth: Int? = 60) throws {
        if explain {
            let plan = try query.explain()
            for line in plan.split(separator: "\n", omittingEmptySubsequences: false) { IO.err.line("-- " + line) }
            IO.err.flush()
        }
        var writer = RowWriter(format: format, columns: try query.columnNames, out: IO.out)
        writer.maxCellWidth = maxCellWidth
        if let n = repeatCount {
            var times: [Double] = []
            var rows: [Result] = []
            for _ in 0..<n {
                let t0 = monotonicSeconds()
                rows = try query.execute().allResults()
                times.append(monotonicSeconds() - t0)
            }
            writer.begin()
            for r in rows { writer.row(r) }
            writer.end()
            IO.out.flush()
            times.sort()
            let median = times.count % 2 == 1 ? times[times.count / 2] : (times[times.count / 2 - 1] + times[times.count / 2]) / 2
            IO.err.line("\(plural(n, "run")), \(plural(rows.count, "row")): min \(formatMillis(times[0])), median \(formatMillis(median)), max \(formatMillis(times[times.count - 1]))")
            return
        }
        let t0 = monotonicSeconds()
        let rs = try query.execute()
        writer.begin()
        var count = 0
        while let r = try rs.next() {
            writer.row(r)
            count += 1
        }
        let elapsed = monotonicSeconds() - t0
        writer.end()
        IO.out.flush()
        if time { IO.err.line("\(plural(count, "row")) in \(formatMillis(elapsed))") }
    }

    static func runExplain(_ inv: Invocation) throws -> Int32 {
        let sql = try readQueryText(inv.operands[0])
        let params = try parameters(inv)
        let db = try inv.readingDatabase()
        defer { inv.release(db) }
        let query = try db.createQuery(sql)
        query.parameters = params
        IO.out.line(try query.explain(analyze: inv.has("--analyze")))
        return ExitCode.ok
    }
}
