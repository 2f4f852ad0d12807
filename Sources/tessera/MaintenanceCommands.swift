// `tessera check`, `tessera stats`, `tessera compact` and `tessera optimize`.

import Tessera

enum MaintenanceCommands {
    static let check = CommandSpec(
        name: "check", operands: "DB",
        summary: "Check the database's integrity: documents, counters and every index.",
        details: """
            Runs database.performMaintenance(.integrityCheck): every document body is
            validated, the live-document counts and the by-sequence table are checked, and
            every value, array and full-text index is compared entry by entry with the
            entries recomputed from the documents. Each difference is printed.
            Exit code 0 when no problem is found, 1 otherwise.
            """,
        run: runCheck)

    static let stats = CommandSpec(
        name: "stats", operands: "DB",
        summary: "Show documents per collection, indexes, file size and live versus free pages.",
        run: runStats)

    static let compact = CommandSpec(
        name: "compact", operands: "DB",
        summary: "Rewrite the data file without its free pages (database.performMaintenance(.compact)).",
        details: """
            Makes LMDB's compacting copy of the database beside it (data.mdb.compacting),
            fsyncs it and renames it over data.mdb: the file shrinks to its live pages. Safe
            to interrupt at any point (the old file stays until the new one is complete).
            Refused while another process has the database open. Prints the file size
            before and after.
            """,
        run: runCompact)

    static let optimize = CommandSpec(
        name: "optimize", operands: "DB",
        summary: "Refresh index statistics and vacuum full-text indexes (database.performMaintenance(.optimize)).",
        details: """
            Moves the recent entries of every value and array index into its main table and
            recomputes its planner statistics, merges every full-text index's waiting
            segments and drops from it the entries of documents that changed or were deleted
            since its last vacuum (queries skip them but still read them). One durable write;
            query results do not change.
            """,
        run: runOptimize)

    static func runOptimize(_ inv: Invocation) throws -> Int32 {
        let db = try inv.database(create: false)
        defer { inv.release(db) }
        let start = monotonicSeconds()
        try db.performMaintenance(.optimize)
        IO.out.line("optimized \(db.path) in \(formatMillis(monotonicSeconds() - start))")
        return ExitCode.ok
    }

    static func runCheck(_ inv: Invocation) throws -> Int32 {
        let db = try inv.readingDatabase()
        defer { inv.release(db) }
        let report = try db.performMaintenance(.integrityCheck)
        for line in report.problems { IO.out.line(line) }
        IO.out.line(report.isOK
            ? "ok: \(plural(report.documents, "document")), \(plural(report.indexEntries, "index entry", "index entries")) checked"
            : "\(plural(report.problems.count, "problem")) found")
        return report.isOK ? ExitCode.ok : ExitCode.failure
    }

    static func runCompact(_ inv: Invocation) throws -> Int32 {
        let db = try inv.database(create: false)
        defer { inv.release(db) }
        let start = monotonicSeconds()
        let r = try db.compact()
        IO.out.line("compacted \(db.path): \(formatBytes(r.bytesBefore)) → \(formatBytes(r.bytesAfter)) in \(formatMillis(monotonicSeconds() - start))")
        return ExitCode.ok
    }

    static func runStats(_ inv: Invocation) throws -> Int32 {
        let db = try inv.readingDatabase()
        defer { inv.release(db) }
        let onDisk = fileSize(db.path + "/data.mdb") ?? 0
        IO.out.line("database     \(db.path)")
        IO.out.line("file size    \(formatBytes(onDisk)) on disk (data.mdb), \(formatBytes(db.fileSize)) in use")
        let space = try db.storageSpace()
        IO.out.line("pages        \(grouped(space.livePages)) live, \(grouped(space.freePages)) free (\(formatBytes(space.freePages * space.pageSize)); 'tessera compact' returns them), \(formatBytes(space.pageSize)) each")
        let colls = try allCollections(db)
        var total = 0
        var indexTotal = 0
        var rows: [(String, String, String)] = []
        for c in colls {
            let n = try c.count
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
