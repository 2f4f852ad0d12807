import Testing
import Foundation
@testable import Tessera
@testable import LMDB

/// Readers never wait for a writer, and read-only databases (asked for, or files that cannot
/// be written) open and answer queries.
@Suite("Reliability: readers and read-only files", .serialized)
struct ReadOnlyTests {
    /// A database with one collection `shared` (a counter document, ten others, an index).
    static func makeShared(_ path: String) throws {
        let db = try Database(path: path)
        let c = try db.createCollection(name: "shared")
        try c.save(id: "counter", properties: ["n": 0])
        for i in 0..<10 { try c.save(id: "d\(i)", properties: ["i": .int(Int64(i)), "owner": "parent"]) }
        try c.createIndex(withName: "byI", config: ValueIndexConfiguration(["i"]))
        try db.close()
    }

    static func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    @Test func readOnlyConfigurationReadsAndRefusesEveryWrite() throws {
        let dir = ScratchDirectory("readonly")
        defer { dir.remove() }
        try Self.makeShared(dir.path)
        let before = Self.bytes(dir.path + "/data.mdb")
        var config = DatabaseConfiguration()
        config.readOnly = true
        let db = try Database(path: dir.path, configuration: config)
        #expect(db.isReadOnly)
        let c = try #require(try db.collection(name: "shared"))
        #expect(try c.count == 11)
        #expect(try c.document(id: "d3")?.int(forKey: "i") == 3)
        let q = try db.createQuery("SELECT COUNT(*) AS n FROM shared WHERE i >= 5")
        #expect(try q.execute().allResults().first?.int(forKey: "n") == 5)
        #expect(try q.explain().contains("byI"))
        #expect(try db.performMaintenance(.integrityCheck).isOK)
        #expect(try c.indexes() == ["byI"])

        func expectReadOnly(_ what: String, _ body: () throws -> Void) {
            do { try body(); Issue.record("\(what) wrote to a read-only database") } catch let e as DatabaseError {
                #expect(e.code == .readOnly, "\(what): \(e)")
                #expect(e.message.contains("read-only"), "\(what): \(e.message)")
            } catch { Issue.record("\(what): untyped error \(error)") }
        }
        expectReadOnly("save") { try c.save(id: "new", properties: ["x": 1]) }
        expectReadOnly("delete") { try c.delete(id: "d1") }
        expectReadOnly("purge") { try c.purge(id: "d1") }
        expectReadOnly("createCollection") { try db.createCollection(name: "other") }
        expectReadOnly("deleteCollection") { try db.deleteCollection(name: "shared") }
        expectReadOnly("createIndex") { try c.createIndex(withName: "x", config: ValueIndexConfiguration(["owner"])) }
        expectReadOnly("inBatch") { try db.inBatch {} }
        try db.close()
        #expect(Self.bytes(dir.path + "/data.mdb") == before, "the data file changed")
    }

    @Test func readOnlyNeverCreatesADatabase() throws {
        let dir = ScratchDirectory("readonly-missing")
        defer { dir.remove() }
        var config = DatabaseConfiguration()
        config.readOnly = true
        for path in [dir.child("absent"), dir.path] {
            #expect {
                try Database(path: path, configuration: config)
            } throws: { ($0 as? DatabaseError)?.code == .notFound }
        }
        #expect(!FileManager.default.fileExists(atPath: dir.child("absent")))
        #expect(!FileManager.default.fileExists(atPath: dir.child("data.mdb")))
    }

    /// The brief's scenario: another process holds the write transaction and is stopped
    /// (SIGSTOP: a debugger, a suspended app). Opening, reading, querying and checking —
    /// in this process and in others — finish anyway.
    @Test func readersFinishWhileAWriterProcessIsStopped() throws {
        try #require(FileManager.default.isExecutableFile(atPath: MultiProcessTests.helperPath))
        let tessera = try #require(ChildProcess.tessera)
        let dir = ScratchDirectory("stopped-writer")
        defer { dir.remove() }
        try Self.makeShared(dir.path)
        let holder = try MultiProcessTests.Child(["hold", dir.path, "60000"])
        #expect(holder.waitForLine("locked"))
        kill(holder.process.processIdentifier, SIGSTOP)
        defer {
            kill(holder.process.processIdentifier, SIGKILL)
            holder.process.waitUntilExit()
        }
        let commands: [[String]] = [
            ["query", dir.path, "SELECT COUNT(*) AS n FROM shared WHERE i >= 5"],
            ["ls", dir.path, "--collection", "shared"],
            ["cat", dir.path, "d4", "--collection", "shared"],
            ["check", dir.path],
            ["stats", dir.path],
            ["explain", dir.path, "SELECT * FROM shared WHERE i = 3"],
            ["index", "list", dir.path, "--collection", "shared"],
            ["collections", dir.path, "--counts"],
        ]
        for args in commands {
            let r = ChildProcess.run(tessera, args, timeout: 10)
            #expect(r.status == 0 && r.seconds < 5, "tessera \(args[0]): \(r)")
        }
        // In this process: open, read, query, check — on a thread, with a deadline.
        let done = DispatchSemaphore(value: 0)
        let result = Shared<String?>(nil)
        let path = dir.path
        Thread {
            do {
                let db = try Database(path: path)
                let c = try db.collection(name: "shared")
                let n = try db.createQuery("SELECT COUNT(*) AS n FROM shared").execute().allResults().first?.int(forKey: "n")
                let ok = try db.performMaintenance(.integrityCheck).isOK
                // The stopped writer's uncommitted batch is invisible.
                result.withLock { $0 = "\(n ?? -1) \(ok) \(try! c?.document(id: "held") == nil)" }
                try db.close()
            } catch {
                result.withLock { $0 = "error: \(error)" }
            }
            done.signal()
        }.start()
        #expect(done.wait(timeout: .now() + 10) == .success, "a reader in this process waited for the stopped writer")
        #expect(result.withLock { $0 } == "11 true true")
    }

    /// In one process: while a thread holds a batch open, other threads query, read and check
    /// without waiting for it (and do not see its writes).
    /// A read-only open opens the data file before it takes LMDB's shared lock, so a
    /// compaction in another process can rename a new file over it in between: the open must
    /// end up on the file at the path, not on the replaced one (which nobody writes any more).
    @Test func aReadOnlyOpenFollowsADataFileReplacedWhileOpening() throws {
        let dir = ScratchDirectory("readonly-swap")
        defer { dir.remove() }
        try Self.makeShared(dir.path)
        let newer = ScratchDirectory("readonly-swap-new")
        defer { newer.remove() }
        for f in ["data.mdb", "lock.mdb"] { try FileManager.default.copyItem(atPath: dir.path + "/" + f, toPath: newer.path + "/" + f) }
        do {
            let db = try Database(path: newer.path)
            try #require(try db.collection(name: "shared")).save(id: "fresh", properties: ["i": 99])
            try db.close()
        }
        let target = dir.path + "/data.mdb"
        let source = newer.path + "/data.mdb"
        let replaced = LockedFlag()
        Environment.setAfterOpenHookForTesting(dataFile: target) {
            guard replaced.setOnce() else { return }
            _ = rename(source, target)
        }
        defer { Environment.setAfterOpenHookForTesting(dataFile: target, nil) }
        var config = DatabaseConfiguration()
        config.readOnly = true
        let db = try Database(path: dir.path, configuration: config)
        defer { try? db.close() }
        #expect(replaced.isSet)
        #expect(try db.collection(name: "shared")?.document(id: "fresh")?.int(forKey: "i") == 99)
    }

    @Test func readersInTheSameProcessDoNotWaitForABatch() throws {
        let dir = ScratchDirectory("same-process")
        defer { dir.remove() }
        try Self.makeShared(dir.path)
        let db = try Database(path: dir.path)
        defer { try? db.close() }
        let c = try #require(try db.collection(name: "shared"))
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let writer = Thread {
            try? db.inBatch {
                try c.save(id: "pending", properties: ["i": 99])
                inside.signal()
                _ = release.wait(timeout: .now() + 20)
            }
        }
        writer.start()
        inside.wait()
        defer { release.signal() }
        let start = Date()
        #expect(try c.document(id: "pending") == nil)
        #expect(try db.createQuery("SELECT COUNT(*) AS n FROM shared").execute().allResults().first?.int(forKey: "n") == 11)
        #expect(try db.performMaintenance(.integrityCheck).isOK)
        #expect(try c.indexes() == ["byI"])
        #expect(Date().timeIntervalSince(start) < 5)
    }

    /// A copy whose files and directory nobody may write opens read-only by itself: reads work,
    /// writes are refused with a clear error. Root ignores permissions, so as root the tool runs
    /// as user `nobody` (setpriv); without setpriv the test is skipped as root.
    @Test func unwritableFilesOpenReadOnlyByThemselves() throws {
        let tessera = try #require(ChildProcess.tessera)
        let dir = ScratchDirectory("unwritable")
        defer {
            _ = ChildProcess.run("/bin/chmod", ["-R", "u+w", dir.path])
            dir.remove()
        }
        let db = dir.child("db")
        try Self.makeShared(db)
        var prefix: [String] = []
        var exe = tessera
        if geteuid() == 0 {
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return }
            prefix = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
            // `nobody` must reach the executable and the database.
            exe = dir.child("tessera")
            try FileManager.default.copyItem(atPath: tessera, toPath: exe)
            chmod(dir.path, 0o755)
            _ = ChildProcess.run("/bin/chmod", ["-R", "a+rX", dir.path])
        }
        // No write permission anywhere: data.mdb, lock.mdb and the directory.
        _ = ChildProcess.run("/bin/chmod", ["-R", "a-w", db])
        let ls = ChildProcess.run(exe, ["ls", db, "--collection", "shared", "--limit", "3"], prefix: prefix)
        #expect(ls.status == 0 && ls.out == "counter\nd0\nd1\n", "\(ls) \(ls.out)")
        let q = ChildProcess.run(exe, ["query", db, "SELECT COUNT(*) AS n FROM shared WHERE i >= 5"], prefix: prefix)
        #expect(q.status == 0 && q.out.contains("5"), "\(q) \(q.out)")
        let check = ChildProcess.run(exe, ["check", db], prefix: prefix)
        #expect(check.status == 0 && check.out.hasPrefix("ok"), "\(check)")
        let put = ChildProcess.run(exe, ["put", db, "x", "{}", "--collection", "shared"], prefix: prefix)
        #expect(put.status == 1 && put.err.contains("read-only") && put.err.contains("Permission denied"), "\(put)")
        // The library says so too (only testable when permissions apply to this process).
        if geteuid() != 0 {
            let opened = try Database(path: db)
            #expect(opened.isReadOnly)
            #expect(throws: DatabaseError.self) { try opened.defaultCollection().save(id: "x", properties: [:]) }
            try opened.close()
        }
    }
}

/// A flag set once, from any thread.
private final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    /// Sets the flag; true if this call set it.
    func setOnce() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if value { return false }
        value = true
        return true
    }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
}
