import Foundation
import Synchronization
import Testing
@testable import Tessera

/// Stopping a running query: `Query.interrupt()` / `Database.interrupt()` from another thread,
/// `ResultSet.interrupt()`, task cancellation around `for try await`, and
/// `DatabaseConfiguration.queryTimeout` (issue #18).
@Suite("Query interruption", .serialized)
struct InterruptionTests {
    /// 3,000 documents: a self-join compares 9 million pairs (far longer than any test waits).
    static func makeDatabase(_ configuration: DatabaseConfiguration = DatabaseConfiguration()) throws -> (Database, String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-interrupt-\(UUID().uuidString)").path
        let db = try Database(path: dir, configuration: configuration)
        let c = try db.createCollection(name: "docs")
        try db.inBatch {
            for i in 0..<3_000 { try c.save(id: "d\(i)", properties: ["n": .int(Int64(i)), "s": .string("text \(i)")]) }
        }
        return (db, dir)
    }

    /// Three-way self-joins: 27 billion combinations, far longer than any test waits.
    static let endless = "SELECT COUNT(*) FROM docs a JOIN docs b ON a.n + b.n >= 0 JOIN docs c ON a.n + b.n + c.n < 0"
    static let endlessSorted = "SELECT a.n FROM docs a JOIN docs b ON a.n < b.n JOIN docs c ON c.n < 0 ORDER BY a.s, b.s"

    static func isInterrupted(_ error: (any Error)?) -> Bool { (error as? DatabaseError)?.code == .interrupted }

    /// Runs `work` on a thread of its own (not the cooperative pool, which other suites may
    /// keep busy); `wait()` gives its error and when it returned.
    final class Worker: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var error: (any Error)?
        private var finished = ContinuousClock.now

        init(_ work: @escaping @Sendable () throws -> Void) {
            let thread = Thread { [self] in
                do { try work() } catch { self.error = error }
                finished = ContinuousClock.now
                done.signal()
            }
            thread.start()
        }

        func wait() -> ((any Error)?, ContinuousClock.Instant) {
            done.wait()
            return (error, finished)
        }
    }

    @Test func queryInterruptFromAnotherThread() throws {
        let (db, dir) = try Self.makeDatabase()
        defer { try? db.close(); try? FileManager.default.removeItem(atPath: dir) }
        for sql in [Self.endless, Self.endlessSorted] {
            let q = try db.createQuery(sql)
            let worker = Worker { _ = try q.execute().allResults() }
            usleep(300_000)
            let interrupted = ContinuousClock.now
            q.interrupt()
            let (error, finished) = worker.wait()
            print("interrupt: stopped \(finished - interrupted) after Query.interrupt() — \(sql)")
            #expect(Self.isInterrupted(error), "\(String(describing: error))")
            #expect(finished - interrupted < .seconds(3))
            // The query runs normally afterwards.
            #expect(try db.createQuery("SELECT COUNT(*) AS c FROM docs").execute().allResults().first?.int(forKey: "c") == 3_000)
        }
    }

    @Test func databaseInterruptStopsEveryRunningQuery() throws {
        let (db, dir) = try Self.makeDatabase()
        defer { try? db.close(); try? FileManager.default.removeItem(atPath: dir) }
        let q1 = try db.createQuery(Self.endless), q2 = try db.createQuery(Self.endlessSorted)
        let workers = [q1, q2].map { q in Worker { _ = try q.execute().allResults() } }
        usleep(300_000)
        let interrupted = ContinuousClock.now
        db.interrupt()
        for w in workers {
            let (error, finished) = w.wait()
            #expect(Self.isInterrupted(error))
            #expect(finished - interrupted < .seconds(3))
        }
    }

    @Test func resultSetInterrupt() throws {
        let (db, dir) = try Self.makeDatabase()
        defer { try? db.close(); try? FileManager.default.removeItem(atPath: dir) }
        let rs = try db.createQuery("SELECT n FROM docs").execute()
        #expect(try rs.next() != nil)
        rs.interrupt()
        #expect(throws: DatabaseError.self) { _ = try rs.next() }
        #expect(Self.isInterrupted(Swift.Result { try rs.next() }.failure))
    }

    @Test func taskCancellationStopsAnAsyncLoop() async throws {
        let (db, dir) = try Self.makeDatabase()
        defer { try? db.close(); try? FileManager.default.removeItem(atPath: dir) }
        let q = try db.createQuery(Self.endlessSorted)
        let task = Task.detached { () -> ((any Error)?, ContinuousClock.Instant) in
            do {
                for try await _ in try q.execute() {}
                return (nil, ContinuousClock.now)
            } catch {
                return (error, ContinuousClock.now)
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        let cancelled = ContinuousClock.now
        task.cancel()
        let (error, finished) = await task.value
        print("interrupt: async loop stopped \(finished - cancelled) after Task.cancel()")
        #expect(Self.isInterrupted(error), "\(String(describing: error))")
        #expect((error as? DatabaseError)?.message.contains("cancelled") == true)
        #expect(finished - cancelled < .seconds(3))
    }

    @Test func queryTimeout() throws {
        var config = DatabaseConfiguration()
        config.queryTimeout = 0.3
        let (db, dir) = try Self.makeDatabase(config)
        defer { try? db.close(); try? FileManager.default.removeItem(atPath: dir) }
        let started = ContinuousClock.now
        let error = Swift.Result { try db.createQuery(Self.endless).execute().allResults() }.failure
        let elapsed = ContinuousClock.now - started
        print("interrupt: timed out after \(elapsed)")
        #expect(Self.isInterrupted(error))
        #expect((error as? DatabaseError)?.message.contains("timed out after 0.3 s") == true)
        #expect(elapsed < .seconds(3))
        // Quick queries are unaffected.
        #expect(try db.createQuery("SELECT COUNT(*) AS c FROM docs").execute().allResults().first?.int(forKey: "c") == 3_000)
    }

    /// A regular expression under its step limit but longer than the timeout is stopped from
    /// ICU's callback, in the middle of the one match.
    @Test func timeoutStopsARegularExpressionMidMatch() throws {
        var config = DatabaseConfiguration()
        config.queryTimeout = 0.03
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-interrupt-\(UUID().uuidString)").path
        let db = try Database(path: dir, configuration: config)
        defer { try? db.close(); try? FileManager.default.removeItem(atPath: dir) }
        try db.createCollection(name: "one").save(id: "x", json: #"{"s": "aaaaaaaaaaaaaaaaaaaaab"}"#)
        let error = Swift.Result { try db.createQuery("SELECT REGEXP_LIKE(s, '(a+)+$') AS r FROM one").execute().allResults() }.failure
        #expect(Self.isInterrupted(error), "\(String(describing: error))")
    }
}

extension Swift.Result {
    /// The error, if this is a failure.
    var failure: Failure? { if case .failure(let e) = self { return e } else { return nil } }
}
