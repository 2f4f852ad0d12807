// `tessera check` and `tessera stats`.

import Tessera

enum MaintenanceCommands {
    static let check = CommandSpec(
        name: "check", operands: "DB",
        summary: "Check the database's integrity (documents readable, counts, value indexes).",
        details: """
            Exit code 0 when no problem is found, 1 otherwise. Until the engine has its own
            integrity check, this command probes what the public API can see: every document
            is read and decoded, live-document counts are compared with a scan, and each value
            index is compared (by count) with a scan that cannot use it. Array and full-text
            indexes are listed as not verified.
            """,
        run: runCheck)

    static let stats = CommandSpec(
        name: "stats", operands: "DB",
        summary: "Show documents per collection, indexes and file size.",
        run: runStats)

    static func runCheck(_ inv: Invocation) throws -> Int32 {
        let db = try inv.database(create: false)
        defer { inv.release(db) }
        let report = try IntegrityCheckPlaceholder.run(db)
        for line in report.lines { IO.out.line(line) }
        IO.out.line(report.problems == 0 ? "ok" : "\(plural(report.problems, "problem")) found")
        return report.problems == 0 ? ExitCode.ok : ExitCode.failure
    }

    static func runStats(_ inv: Invocation) throws -> Int32 {
        let db = try inv.database(create: false)
        defer { inv.release(db) }
        let onDisk = fileSize(db.path + "/data.mdb") ?? 0
        IO.out.line("database     \(db.path)")
        IO.out.line("file size    \(formatBytes(onDisk)) on disk (data.mdb), \(formatBytes(db.fileSize)) in use")
        let colls = try allCollections(db)
        var total = 0
        var indexTotal = 0
        var rows: [(String, String, String)] = []
        for c in colls {
            let n = c.count
            total += n
            var idx: [String] = []
            for name in try c.indexes() {
                let kind = (try c.index(withName: name)).map { $0.definition.type.rawValue } ?? "?"
                idx.append("\(name) (\(kind))")
            }
            indexTotal += idx.count
            rows.append((c.fullName, grouped(n), idx.isEmpty ? "-" : idx.joined(separator: ", ")))
        }
        rows.insert(("collection", "documents", "indexes"), at: 0)
        let w0 = rows.map(\.0.count).max() ?? 0
        let w1 = rows.map(\.1.count).max() ?? 0
        IO.out.line()
        for r in rows { IO.out.line(r.0.padded(w0) + "  " + r.1.leftPadded(w1) + "  " + r.2) }
        IO.out.line()
        IO.out.line("\(plural(colls.count, "collection")), \(plural(total, "document")), \(plural(indexTotal, "index", "indexes"))")
        return ExitCode.ok
    }
}

/// PLACEHOLDER for the engine's integrity check, which does not exist yet: replace the body
/// of `run` with a call to it (e.g. `db.performMaintenance(.integrityCheck)` returning the
/// problems found) once the engine provides one.
///
/// Until then it probes what the public API exposes:
/// - every live document is read and its body decoded;
/// - the number of documents a scan sees equals `Collection.count`;
/// - for each value index, `COUNT(*)` of a query the planner answers with that index
///   (checked with `explainPlan()`) equals `COUNT(*)` of the same condition written so that
///   no index applies.
/// Array and full-text indexes are reported as not verified.
enum IntegrityCheckPlaceholder {
    struct Report {
        var lines: [String] = []
        var problems = 0
    }

    static func run(_ db: Database) throws -> Report {
        var report = Report()
        for c in try allCollections(db) {
            var scanned = 0
            var emptyBodies = 0
            try c.forEachDocument { doc in
                scanned += 1
                if doc.properties.isEmpty { emptyBodies += 1 }
                return true
            }
            let counted = c.count
            if scanned == counted {
                report.lines.append("\(c.fullName): \(plural(scanned, "document")) read")
            } else {
                report.problems += 1
                report.lines.append("\(c.fullName): PROBLEM: a scan reads \(plural(scanned, "document")) but the stored count is \(grouped(counted))")
            }
            for name in try c.indexes() {
                guard let def = try c.index(withName: name)?.definition else { continue }
                report.lines.append("  " + (try probe(db, c, def, &report.problems)))
            }
        }
        return report
    }

    private static func quoted(_ c: Collection) -> String {
        "`\(c.scope.name)`.`\(c.name)`"
    }

    private static func probe(_ db: Database, _ c: Collection, _ def: IndexDefinition, _ problems: inout Int) throws -> String {
        guard def.type == .value, let first = splitExpressions(def.expressions.first ?? "").first, !first.isEmpty else {
            return "index \(def.name) (\(def.type.rawValue)): not verified (needs the engine's integrity check)"
        }
        let condition = def.whereClause.map { " AND " + $0 } ?? ""
        let indexed = try db.createQuery("SELECT COUNT(*) AS n FROM \(quoted(c)) WHERE \(first) IS NOT MISSING\(condition)")
        guard try indexed.explainPlan().indexesUsed.contains(def.name) else {
            return "index \(def.name) (value): not verified (no probe query uses it)"
        }
        let scan = try db.createQuery("SELECT COUNT(*) AS n FROM \(quoted(c)) WHERE TYPE(\(first)) != 'missing'\(condition)")
        let viaIndex = try indexed.execute().allResults().first?.int(forKey: "n") ?? -1
        let viaScan = try scan.execute().allResults().first?.int(forKey: "n") ?? -2
        if viaIndex == viaScan {
            return "index \(def.name) (value): \(plural(viaIndex, "document")) indexed, matches a scan"
        }
        problems += 1
        return "index \(def.name) (value): PROBLEM: the index finds \(grouped(viaIndex)) documents, a scan \(grouped(viaScan))"
    }
}
