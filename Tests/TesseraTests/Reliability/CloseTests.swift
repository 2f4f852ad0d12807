import Testing
import Foundation
@testable import Tessera

/// `Database.close()` called while other threads still use the database: it waits for the
/// transactions they are running, refuses new ones, and lets an open result set finish
/// reading its snapshot (the file is closed when that ends), as `sqlite3_close_v2` does.
/// Before, closing freed LMDB's environment under a committing batch (a crash in
/// `mdb_txn_commit`/`mdb_txn_abort`).
@Suite("Reliability: closing while in use", .serialized)
struct CloseTests {
    static func makeDatabase(_ dir: ScratchDirectory, documents: Int) throws -> Database {
        let db = try Database(path: dir.path)
        let c = try db.createCollection(name: "docs")
        try db.inBatch {
            for i in 0..<documents { try c.save(id: "d\(i)", properties: ["i": .int(Int64(i))]) }
        }
        return db
    }

    static func count(_ db: Database) throws -> Int? {
        try db.createQuery("SELECT COUNT(*) AS n FROM docs").execute().allResults().first?.int(forKey: "n")
    }

    @Test func closeWaitsForABatchRunningOnAnotherThread() throws {
        for round in 0..<5 {
            let dir = ScratchDirectory("close-batch")
            defer { dir.remove() }
            let db = try Self.makeDatabase(dir, documents: 10)
            let c = try #require(try db.collection(name: "docs"))
            let inside = DispatchSemaphore(value: 0)
            let done = DispatchSemaphore(value: 0)
            let writer = Thread {
                try? db.inBatch {
                    for i in 0..<200 { try c.save(id: "late\(i)", properties: ["i": .int(Int64(i)), "round": .int(Int64(round))]) }
                    inside.signal()
                    Thread.sleep(forTimeInterval: 0.15)
                    for i in 200..<400 { try c.save(id: "late\(i)", properties: ["i": .int(Int64(i))]) }
                }
                done.signal()
            }
            writer.start()
            inside.wait()
            let started = Date()
            try db.close()
            #expect(Date().timeIntervalSince(started) > 0.05, "close returned while the batch was still running")
            #expect(done.wait(timeout: .now() + 20) == .success)
            // The batch that was running committed in full.
            let reopened = try Database(path: dir.path)
            defer { try? reopened.close() }
            #expect(try Self.count(reopened) == 410)
        }
    }

    @Test func usingAClosedDatabaseThrowsNotOpen() throws {
        let dir = ScratchDirectory("close-use")
        defer { dir.remove() }
        let db = try Self.makeDatabase(dir, documents: 3)
        let c = try #require(try db.collection(name: "docs"))
        try db.close()
        for attempt in [{ _ = try c.document(id: "d1") }, { _ = try Self.count(db) },
                        { try c.save(id: "x", properties: [:]) }] as [() throws -> Void] {
            #expect(throws: DatabaseError.self) { try attempt() }
            do { try attempt() } catch let e as DatabaseError { #expect(e.code == .notOpen, "\(e)") } catch {}
        }
    }

    @Test func aResultSetOpenAtCloseReadsToItsEnd() throws {
        let dir = ScratchDirectory("close-rs")
        defer { dir.remove() }
        var db: Database? = try Self.makeDatabase(dir, documents: 500)
        var rows: ResultSet? = try db!.createQuery("SELECT i FROM docs ORDER BY i").execute()
        #expect(try rows!.next()?.int(forKey: "i") == 0)
        try db!.close()
        // The snapshot the result set holds stays readable until it ends.
        var seen = 1
        while let row = try rows!.next() {
            #expect(row.int(forKey: "i") == seen)
            seen += 1
        }
        #expect(seen == 500)
        rows = nil
        db = nil
        let reopened = try Database(path: dir.path)
        defer { try? reopened.close() }
        #expect(try Self.count(reopened) == 500)
    }

    /// Many threads read and write while another closes: every call either works or throws
    /// `.notOpen`; nothing crashes, and what was acknowledged is in the file.
    /// A thread reading a result set closes the database while another thread compacts it.
    /// The compaction waits for every snapshot to end (this thread's too), and `close()`
    /// waited for the compaction to end first: each waited for the other for ever. Closing
    /// now makes the compaction give up at its next step (the data file is unchanged).
    @Test func closeWhileACompactionWaitsForThisThreadsResultSet() throws {
        let dir = ScratchDirectory("close-compact")
        defer { dir.remove() }
        let db = try Self.makeDatabase(dir, documents: 300)
        let holding = DispatchSemaphore(value: 0)
        let closeNow = DispatchSemaphore(value: 0)
        let readerDone = DispatchSemaphore(value: 0)
        let compactorDone = DispatchSemaphore(value: 0)
        let rowsRead = LockedValue(0)
        let failures = LockedValue<[String]>([])
        Thread {
            do {
                let rows = try db.createQuery("SELECT i FROM docs ORDER BY i").execute()
                var n = try rows.next() == nil ? 0 : 1
                holding.signal()
                closeNow.wait()
                try db.close()
                while try rows.next() != nil { n += 1 }
                rowsRead.withLock { $0 = n }
            } catch {
                failures.withLock { $0.append("reader: \(error)") }
                holding.signal()
            }
            readerDone.signal()
        }.start()
        holding.wait()
        Thread {
            do {
                try db.performMaintenance(.compact)
                failures.withLock { $0.append("the compaction ran although a snapshot was open until the close") }
            } catch let e as DatabaseError where e.code == .notOpen {
            } catch {
                failures.withLock { $0.append("compactor: \(error)") }
            }
            compactorDone.signal()
        }.start()
        // Let the compaction make its copy and wait for the reader's snapshot to end.
        Thread.sleep(forTimeInterval: 0.3)
        closeNow.signal()
        #expect(readerDone.wait(timeout: .now() + 20) == .success, "close() inside the result set never returned")
        #expect(compactorDone.wait(timeout: .now() + 20) == .success, "the compaction never returned")
        #expect(failures.withLock { $0 } == [])
        #expect(rowsRead.withLock { $0 } == 300)
        let reopened = try Database(path: dir.path)
        defer { try? reopened.close() }
        #expect(try Self.count(reopened) == 300)
    }

    @Test func closeRacingReadersAndWriters() throws {
        for round in 0..<10 {
            let dir = ScratchDirectory("close-race")
            defer { dir.remove() }
            let db = try Self.makeDatabase(dir, documents: 20)
            let c = try #require(try db.collection(name: "docs"))
            let group = DispatchGroup()
            let acknowledged = LockedValue<[String]>([])
            let unexpected = LockedValue<[String]>([])
            for t in 0..<4 {
                group.enter()
                Thread {
                    defer { group.leave() }
                    for i in 0..<400 {
                        do {
                            if t % 2 == 0 {
                                let id = "w\(t)-\(i)"
                                try c.save(id: id, properties: ["i": .int(Int64(i))])
                                acknowledged.withLock { $0.append(id) }
                            } else {
                                _ = try Self.count(db)
                                _ = try c.document(id: "d\(i % 20)")
                            }
                        } catch let e as DatabaseError where e.code == .notOpen {
                            return
                        } catch {
                            unexpected.withLock { $0.append("\(error)") }
                            return
                        }
                    }
                }.start()
            }
            Thread.sleep(forTimeInterval: 0.002 * Double(round))
            try db.close()
            #expect(group.wait(timeout: .now() + 30) == .success)
            #expect(unexpected.withLock { $0 } == [])
            let reopened = try Database(path: dir.path)
            defer { try? reopened.close() }
            let saved = try #require(try reopened.collection(name: "docs"))
            for id in acknowledged.withLock({ $0 }) { #expect(try saved.document(id: id) != nil, "\(id) lost") }
        }
    }
}

/// A value behind a lock, for test threads.
private final class LockedValue<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T
    init(_ value: T) { self.value = value }
    func withLock<R>(_ body: (inout T) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
