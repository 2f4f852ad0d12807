// `tessera changes` (the change feed) and `tessera watch` (a live query).

import Dispatch
import Tessera

enum ObservationCommands {
    static let changes = CommandSpec(
        name: "changes", operands: "DB",
        summary: "Print the change feed of a collection as JSON lines (--follow keeps printing).",
        options: [
            DocumentCommands.collectionOption,
            .value("--since", "N", "Only documents changed after sequence N (default 0: every document)"),
            .value("--limit", "N", "Print at most N entries"),
            .flag("--follow", "After the feed, keep printing changes as this or other processes write (until killed)"),
        ],
        details: """
            One line per document whose latest revision has a sequence greater than N, in sequence
            order: {"seq": 12, "id": "hotel1", "rev": "3-…", "deleted": false}. A document changed
            several times appears once, at its latest sequence; purged documents do not appear.
            Pass the last "seq" printed as --since to resume where a previous run stopped.
            """,
        run: runChanges)

    static let watch = CommandSpec(
        name: "watch", operands: "DB \"SQL++\"",
        summary: "Run a live query: print its rows, then each change of them as a JSON diff line.",
        options: QueryCommands.paramOptions + [
            .value("--updates", "N", "Exit after N diffs (default: run until killed)"),
        ],
        minOperands: 1, maxOperands: 1,
        details: """
            First prints the rows as JSON lines, then a line {"ready": N} (N rows). After each commit
            (by any process) that changes the rows, prints one line
            {"inserted": [...], "removed": [...], "updated": [...]} whose entries are
            {"key": ID or position, "index": I, "row": {...}}. Rows are matched by document ID when
            the query selects meta().id, else by position.
            """,
        run: runWatch)

    // MARK: - changes

    static func runChanges(_ inv: Invocation) throws -> Int32 {
        let since = try inv.int("--since", min: 0) ?? 0
        let limit = try inv.int("--limit", min: 0)
        let db = try inv.readingDatabase()
        defer { inv.release(db) }
        let coll = try inv.collection(in: db, create: false)
        var last = UInt64(since)
        var printed = 0
        func printEntries(_ entries: [ChangeFeedEntry]) {
            for e in entries {
                IO.out.line(JSONWriter.string(.object([
                    "seq": .int(Int64(e.sequence)), "id": .string(e.documentID),
                    "rev": .string(e.revisionID), "deleted": .bool(e.isDeleted),
                ])))
                last = max(last, e.sequence)
                printed += 1
            }
            IO.out.flush()
        }
        let remaining = { limit.map { max(0, $0 - printed) } }
        printEntries(try coll.changes(since: last, limit: remaining()))
        guard inv.has("--follow") else { return ExitCode.ok }
        // Woken by every commit of this collection (other processes' within ~20 ms).
        let wake = DispatchSemaphore(value: 0)
        let token = coll.addChangeListener { _ in wake.signal() }
        defer { token.remove() }
        // A commit between the first read and the listener's start is read now.
        printEntries(try coll.changes(since: last, limit: remaining()))
        while remaining().map({ $0 > 0 }) ?? true {
            wake.wait()
            printEntries(try coll.changes(since: last, limit: remaining()))
        }
        return ExitCode.ok
    }

    // MARK: - watch

    static func runWatch(_ inv: Invocation) throws -> Int32 {
        let sql = try QueryCommands.readQueryText(inv.operands[0])
        let params = try QueryCommands.parameters(inv)
        let maxUpdates = try inv.int("--updates", min: 0)
        let db = try inv.readingDatabase()
        defer { inv.release(db) }
        let query = try db.createQuery(sql)
        query.parameters = params
        let outcome = WatchOutcome()
        let done = DispatchSemaphore(value: 0)
        let task = Task {
            defer { done.signal() }
            do {
                var diffs = 0
                for try await update in query.changes() {
                    if !outcome.started {
                        outcome.started = true
                        for r in update.results { IO.out.line(r.toJSON()) }
                        IO.out.line(JSONWriter.string(.object(["ready": .int(Int64(update.results.count))])))
                    } else {
                        IO.out.line(JSONWriter.string(diffJSON(update.diff)))
                        diffs += 1
                    }
                    IO.out.flush()
                    if let maxUpdates, diffs >= maxUpdates { return }
                }
            } catch {
                outcome.error = error
            }
        }
        done.wait()
        task.cancel()
        if let error = outcome.error { throw error }
        return ExitCode.ok
    }

    static func diffJSON(_ diff: ResultDiff) -> Value {
        func entries(_ changes: [ResultDiff.RowChange]) -> Value {
            .array(changes.map { c in
                let key: Value
                switch c.key {
                case .documentID(let id): key = .string(id)
                case .position(let i): key = .int(Int64(i))
                }
                return .object(["key": key, "index": .int(Int64(c.index)), "row": c.result.object])
            })
        }
        return .object(["inserted": entries(diff.inserted), "removed": entries(diff.removed), "updated": entries(diff.updated)])
    }
}

/// What the watch task reports to the main thread (which waits on a semaphore, so the two
/// never touch it at once).
final class WatchOutcome: @unchecked Sendable {
    // @unchecked Sendable: written by the watch task, read by the main thread only after the
    // task signalled the semaphore it waits on.
    var started = false
    var error: (any Error)?
}
