// `tessera advise`: the index advisor (`Database.adviseIndexes(for:)`) for one query or a
// file of queries.

import Tessera

enum AdviseCommand {
    static let spec = CommandSpec(
        name: "advise", operands: "DB [\"SQL++\"]",
        summary: "Propose the indexes that would make a query (or a log of queries) read fewer rows.",
        options: QueryCommands.paramOptions + [
            .value("--log", "FILE", "Advise for every query of FILE (one per line; blank lines and lines starting with # or -- are skipped) and rank the indexes by total benefit"),
        ],
        minOperands: 0, maxOperands: 1,
        details: """
            Each proposal was checked by planning the query against the index, built in a
            transaction that is then rolled back: nothing is created. The output gives the
            estimated rows read before and after, the index configuration in Swift and the
            `tessera index create` line that creates it.

            Examples:
              tessera advise travel.db "SELECT name FROM travel WHERE state = 'Texas' ORDER BY name LIMIT 5"
              tessera advise travel.db --log queries.sql
            """,
        run: run)

    static func run(_ inv: Invocation) throws -> Int32 {
        let path = inv.databasePath ?? "DB"
        let db = try inv.database(create: false)
        defer { inv.release(db) }
        if let log = inv.value("--log") {
            guard inv.operands.isEmpty else { throw CLIError.usage("give either a query or --log FILE, not both") }
            return try advise(db, log: log, path: path)
        }
        guard let text = inv.operands.first else { throw CLIError.usage("give a query, or --log FILE") }
        let advice = try db.adviseIndexes(for: try QueryCommands.readQueryText(text), parameters: try QueryCommands.parameters(inv))
        if advice.isEmpty {
            IO.out.line("No index would make this query read fewer rows.")
            return ExitCode.ok
        }
        for a in advice { show(a, path: path, totals: nil) }
        return ExitCode.ok
    }

    static func show(_ a: IndexAdvice, path: String, totals: (queries: Int, benefit: Int)?, prefix: String = "") {
        IO.out.line(prefix + "index \(a.name) on \(a.collection): \(a.swiftConfiguration)")
        if let totals {
            IO.out.line("  helps \(plural(totals.queries, "query", "queries")), \(totals.benefit) fewer rows read in all")
        } else {
            IO.out.line("  estimated rows read: \(a.estimatedRowsBefore) now, \(a.estimatedRowsAfter) with this index")
        }
        var quoted = "'"
        for ch in path { if ch == "'" { quoted += "'\\''" } else { quoted.append(ch) } }
        let command = a.command.hasPrefix("tessera index create DB ")
            ? "tessera index create \(quoted)' " + a.command.dropFirst("tessera index create DB ".count) : a.command
        IO.out.line("  create: " + command)
    }

    static func advise(_ db: Database, log: String, path: String) throws -> Int32 {
        let text = String(decoding: try readWholeFile(log), as: UTF8.self)
        var ranked: [String: (advice: IndexAdvice, queries: Int, benefit: Int)] = [:]
        var order: [String] = []
        var failures = 0
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw).trimmed
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix("--") { continue }
            do {
                for a in try db.adviseIndexes(for: line) {
                    let key = a.collection + "\u{0}" + a.swiftConfiguration
                    if let seen = ranked[key] {
                        ranked[key] = (seen.advice, seen.queries + 1, seen.benefit + a.benefit)
                    } else {
                        ranked[key] = (a, 1, a.benefit)
                        order.append(key)
                    }
                }
            } catch {
                failures += 1
                IO.err.line("\(log):\(number + 1): \(describe(error).message)")
            }
        }
        let best = order.compactMap { ranked[$0] }.sorted { $0.benefit > $1.benefit }
        if best.isEmpty { IO.out.line("No index would make these queries read fewer rows.") }
        for (i, r) in best.enumerated() {
            show(r.advice, path: path, totals: (r.queries, r.benefit), prefix: "\(i + 1). ")
        }
        return failures == 0 ? ExitCode.ok : ExitCode.failure
    }
}
