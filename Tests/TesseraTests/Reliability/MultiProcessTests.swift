import Testing
import Foundation
@testable import Tessera

/// Two processes with the same database open: LMDB's lock makes a second writer wait for
/// the first, no update is lost, and every write of both is there afterwards.
@Suite("Reliability: two processes", .serialized)
struct MultiProcessTests {
    static var helperPath: String {
        let bundle = Bundle.main.bundleURL.deletingLastPathComponent()
        for dir in [bundle, bundle.deletingLastPathComponent()] {
            let p = dir.appendingPathComponent("TesseraProcessWriter").path
            if FileManager.default.isExecutableFile(atPath: p) { return p }
        }
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(4)
        return parts.joined(separator: "/") + "/.build/debug/TesseraProcessWriter"
    }

    /// A running helper process and its output so far.
    final class Child: @unchecked Sendable {
        // @unchecked Sendable: used by one thread at a time (handed to a reader thread to finish).
        let process = Process()
        let output = Pipe()
        let errors = Pipe()
        var text = ""

        init(_ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: MultiProcessTests.helperPath)
            process.arguments = arguments
            process.standardOutput = output
            process.standardError = errors
            try process.run()
        }

        /// Reads output until a line equal to `line` appears (or the output ends).
        func waitForLine(_ line: String) -> Bool {
            while !text.split(separator: "\n").contains(Substring(line)) {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { return false }
                text += String(decoding: chunk, as: UTF8.self)
            }
            return true
        }

        /// Waits for the exit; returns (status, all output, errors).
        func finish() -> (Int32, String, String) {
            text += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let err = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, text, err)
        }
    }

    /// The ICU libraries are opened on first use (`Sources/CICU/icu_bridge.c`): a process
    /// that saves, indexes and queries documents without Unicode case mapping, collation,
    /// normalization or regexes never maps them; the first call that needs them loads them
    /// and works.
    @Test func icuIsLoadedWhenTextFirstNeedsIt() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.helperPath), "helper not built at \(Self.helperPath)")
        let dir = ScratchDirectory("icu-on-first-use")
        defer { dir.remove() }
        do {
            let db = try Database(path: dir.path)
            _ = try db.createCollection(name: "shared")
            try db.close()
        }
        let child = try Child(["icu", dir.path])
        let (status, text, err) = child.finish()
        #expect(status == 0, "helper failed: \(err)")
        #if os(Linux)
        #expect(text == "found 1\nicu no\nlower été\nicu yes\n", "\(text)")
        #else
        #expect(text.contains("lower été"), "\(text)")
        #endif
    }

    @Test func aSecondWriterWaitsAndBothProcessesWritesArePresent() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.helperPath), "helper not built at \(Self.helperPath)")
        let dir = ScratchDirectory("two-processes")
        defer { dir.remove() }
        var config = DatabaseConfiguration()
        config.initialMapSize = 64 << 10 // both processes grow the map, and see the other's growth
        let db = try Database(path: dir.path, configuration: config)
        defer { try? db.close() }
        let c = try db.createCollection(name: "shared")
        try c.createIndex(withName: "byOwner", config: ValueIndexConfiguration(["owner", "b"]))
        try c.save(id: "counter", properties: ["n": 0])

        // 1. The child holds the write transaction for 1.5 s; our write waits for it.
        let holder = try Child(["hold", dir.path, "1500"])
        #expect(holder.waitForLine("locked"), "helper never took the lock: \(holder.text)")
        let start = Date()
        try db.inBatch {
            let counter = try c.document(id: "counter")!.toMutable()
            counter.setInt(counter.int(forKey: "n") + 1, forKey: "n")
            try c.save(document: counter)
            try c.save(id: "after-held", properties: ["by": "parent"])
        }
        let waited = Date().timeIntervalSince(start)
        let (status, text, err) = holder.finish()
        #expect(status == 0, "helper failed: \(err)")
        #expect(text.contains("committed"))
        #expect(waited >= 1.0, "our write took \(waited) s: it did not wait for the other process")
        // Our batch started after theirs committed: it saw their increment.
        #expect(try c.document(id: "counter")?.int(forKey: "n") == 2)
        #expect(try c.document(id: "held")?.string(forKey: "by") == "child")

        // 2. Both processes write batches at once while two threads of ours read.
        let batches = 120
        let writer = try Child(["write", dir.path, "child", String(batches)])
        let problems = ProblemLog()
        let childDone = Shared(false)
        runThreads(4) { t in
            if t == 3 {
                // Waits for the child, so the readers keep overlapping its writes until it ends.
                let (status, text, err) = writer.finish()
                if status != 0 || !text.contains("done \(batches)") { problems.record("child: status \(status) \(text) \(err)") }
                childDone.withLock { $0 = true }
                return
            }
            do {
                if t == 0 {
                    for b in 0..<batches {
                        try db.inBatch {
                            let counter = try c.document(id: "counter")!.toMutable()
                            counter.setInt(counter.int(forKey: "n") + 1, forKey: "n")
                            try c.save(document: counter)
                            for i in 0..<20 {
                                try c.save(id: "parent-\(b)-\(i)", properties: ["owner": "parent", "b": .int(Int64(b)), "i": .int(Int64(i)),
                                                                               "pad": .string(String(repeating: "q", count: 300))])
                            }
                        }
                    }
                    return
                }
                // Readers: every batch of either process is all or nothing in each snapshot.
                let q = try db.createQuery("SELECT owner, COUNT(*) AS n FROM shared WHERE owner IS VALUED GROUP BY owner")
                var rounds = 0
                while rounds < 30 || !childDone.withLock({ $0 }) {
                    rounds += 1
                    for row in try q.execute().allResults() where row.int(forKey: "n") % 20 != 0 {
                        problems.record("reader \(t): \(row.string(forKey: "owner") ?? "?") has \(row.int(forKey: "n")) documents")
                    }
                }
            } catch {
                problems.record("thread \(t): \(error)")
            }
        }
        #expect(problems.all.isEmpty, "\(problems.all.joined(separator: "\n"))")

        // Every write of both processes is there, and no increment was lost.
        #expect(try c.document(id: "counter")?.int(forKey: "n") == 2 + 2 * batches)
        for owner in ["child", "parent"] {
            let q = try db.createQuery("SELECT b, COUNT(*) AS n FROM shared WHERE owner = $o GROUP BY b ORDER BY b")
            q.parameters = Parameters().setString(owner, forName: "o")
            let perBatch = try q.execute().allResults().map { [$0.int(forKey: "b"), $0.int(forKey: "n")] }
            #expect(perBatch == (0..<batches).map { [$0, 20] }, "\(owner): \(perBatch)")
            #expect(try q.explain().contains("byOwner"))
        }
        #expect(try c.count == 3 + 2 * 20 * batches) // counter, held, after-held
        let report = try db.performMaintenance(.integrityCheck)
        #expect(report.isOK, "\(report)")

        // A third process agrees.
        let checker = try Child(["check", dir.path])
        let (cs, ctext, cerr) = checker.finish()
        #expect(cs == 0, "\(cerr)")
        #expect(ctext == "ok\nchild \(20 * batches)\nparent \(20 * batches)\n", "\(ctext)")
    }

    /// Collections and indexes created by another process while this one has the database
    /// open are kept up to date by this process's later writes, and are not dropped from the
    /// catalogue when this process changes it.
    @Test func catalogueChangesOfAnotherProcessAreRespected() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.helperPath), "helper not built at \(Self.helperPath)")
        let dir = ScratchDirectory("two-processes-ddl")
        defer { dir.remove() }
        let db = try Database(path: dir.path)
        let c = try db.createCollection(name: "shared")
        try c.save(id: "counter", properties: ["n": 0])
        for i in 0..<10 { try c.save(id: "before\(i)", properties: ["i": .int(Int64(i))]) }

        let child = try Child(["ddl", dir.path])
        let (status, text, err) = child.finish()
        try #require(status == 0 && text.contains("ddl done"), "\(text) \(err)")

        // Without writing, this process sees their collection and index at once.
        #expect(try db.collection(name: "other")?.document(id: "o1")?.string(forKey: "from") == "child")
        #expect(try db.collections().map(\.name).contains("other"))
        #expect(try c.indexes() == ["byI"])
        let seen = try db.createQuery("SELECT COUNT(*) AS n FROM shared WHERE i >= 0")
        #expect(try seen.explain().contains("byI"))
        #expect(try seen.execute().allResults().first?.int(forKey: "n") == 10)
        let theirs = try db.createQuery("SELECT COUNT(*) AS n FROM other")
        #expect(try theirs.execute().allResults().first?.int(forKey: "n") == 1)

        // Our writes after their index appeared must maintain it.
        for i in 10..<20 { try c.save(id: "after\(i)", properties: ["i": .int(Int64(i))]) }
        try c.delete(id: "before3")
        // Our own catalogue change must not drop their collection.
        let mine = try db.createCollection(name: "mine")
        try mine.save(id: "m1", properties: ["from": "parent"])
        var report = try db.performMaintenance(.integrityCheck)
        #expect(report.isOK, "\(report)")
        #expect(try c.indexes() == ["byI"])
        let q = try db.createQuery("SELECT COUNT(*) AS n FROM shared WHERE i >= 0")
        #expect(try q.explain().contains("byI"))
        #expect(try q.execute().allResults().first?.int(forKey: "n") == 19)
        #expect(try db.collection(name: "other")?.document(id: "o1")?.string(forKey: "from") == "child")
        try db.close()

        let again = try Database(path: dir.path)
        defer { try? again.close() }
        #expect(try again.collections().map(\.name).sorted() == ["_default", "mine", "other", "shared"])
        #expect(try again.collection(name: "other")?.count == 1)
        #expect(try again.collection(name: "mine")?.count == 1)
        report = try again.performMaintenance(.integrityCheck)
        #expect(report.isOK, "\(report)")
    }
}
