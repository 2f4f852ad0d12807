import Testing
import Foundation
@testable import Tessera

/// `performMaintenance(.compact)`: LMDB's compacting copy swapped in for the data file while
/// the database stays open (SPEC: maintenance; issue #19).
@Suite("Compaction", .serialized)
struct CompactionTests {
    static let cities = ["Paris", "Lyon", "Nice", "Rome", "Oslo", "Bern"]
    static let words = ["quiet", "garden", "harbour", "view", "modern", "historic", "pool", "station"]

    /// A hotel document; `stamp` tells which write produced it.
    static func hotel(_ i: Int, stamp: Int = 0) -> [String: Value] {
        [
            "city": .string(cities[i % cities.count]),
            "likes": .array([.string(words[i % words.count]), .string(words[(i / 3) % words.count])]),
            "description": .string("A \(words[i % 5]) hotel near the \(words[(i / 7) % words.count]) number \(i)"),
            "i": .int(Int64(i)),
            "stamp": .int(Int64(stamp)),
            "pad": .string(String(repeating: "x", count: 200 + i % 300)),
        ]
    }

    static func makeHotels(_ db: Database) throws -> Collection {
        let c = try db.createCollection(name: "hotels")
        try c.createIndex(withName: "byCity", config: ValueIndexConfiguration(["city"]))
        try c.createIndex(withName: "byLike", config: ArrayIndexConfiguration(path: "likes"))
        try c.createIndex(withName: "text", config: FullTextIndexConfiguration(["description"]))
        return c
    }

    /// Results of queries that use each index kind (prepared once: their plans hold the
    /// LMDB table handles, which must stay valid across a compaction).
    struct Probe {
        let queries: [Query]
        init(_ db: Database) throws {
            queries = [
                try db.createQuery("SELECT COUNT(*) AS n FROM hotels WHERE city = 'Rome'"),
                try db.createQuery("SELECT COUNT(*) AS n FROM hotels AS h UNNEST h.likes AS l WHERE l = 'pool'"),
                try db.createQuery("SELECT COUNT(*) AS n FROM hotels WHERE MATCH(text, 'harbour')"),
                try db.createQuery("SELECT SUM(i) AS n FROM hotels"),
            ]
        }
        func run() throws -> [Int] { try queries.map { try $0.execute().allResults().first?.int(forKey: "n") ?? -1 } }
    }

    @Test func compactingAnOpenDatabaseKeepsEveryDocumentAndIndex() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try Self.makeHotels(db)
        try db.inBatch { for i in 0..<3000 { try c.save(id: "h\(i)", properties: Self.hotel(i)) } }
        try db.inBatch {
            for i in stride(from: 0, to: 3000, by: 2) { try c.delete(id: "h\(i)") }
            for i in stride(from: 1, to: 1000, by: 2) { try c.save(id: "h\(i)", properties: Self.hotel(i + 1, stamp: 1)) }
        }
        let probe = try Probe(db)
        let expected = try probe.run()
        let before = try db.storageSpace()
        #expect(before.freePages > 0)

        try db.performMaintenance(.compact)

        let after = try db.storageSpace()
        #expect(after.freePages == 0, "free pages left after compaction: \(after)")
        #expect(after.livePages <= before.livePages)
        #expect(after.fileBytes < before.fileBytes, "file did not shrink: \(before.fileBytes) → \(after.fileBytes)")
        #expect(try probe.run() == expected)
        #expect(try Probe(db).run() == expected)
        #expect(try c.count == 1500)
        #expect(try c.document(id: "h1")?.int(forKey: "stamp") == 1)
        #expect(try c.document(id: "h2999")?.int(forKey: "i") == 2999)
        #expect(try c.document(id: "h0") == nil)
        // Writes go on, into the new file, indexes included.
        try db.inBatch { for i in 3000..<3500 { try c.save(id: "h\(i)", properties: Self.hotel(i, stamp: 2)) } }
        #expect(try c.count == 2000)
        let report = try db.performMaintenance(.integrityCheck)
        #expect(report.isOK, "\(report)")

        // And the file reopens as it was left.
        let path = db.path + "-copy"
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: db.path, toPath: path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let reopened = try Database(path: path)
        defer { try? reopened.close() }
        #expect(try reopened.collection(name: "hotels")?.count == 2000)
        #expect(try reopened.performMaintenance(.integrityCheck).isOK)
    }

    /// Deleted indexes leave unused LMDB table numbers below those in use: the reopened
    /// environment must give every table the number the catalogue (and prepared plans) hold.
    @Test func tableNumbersSurviveCompactionAfterDeletedIndexes() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "hotels")
        try c.createIndex(withName: "a", config: ValueIndexConfiguration(["i"]))
        try c.createIndex(withName: "b", config: FullTextIndexConfiguration(["description"]))
        try c.createIndex(withName: "byCity", config: ValueIndexConfiguration(["city"]))
        let other = try db.createCollection(name: "other")
        try other.createIndex(withName: "byLike", config: ArrayIndexConfiguration(path: "likes"))
        try db.inBatch { for i in 0..<500 { try c.save(id: "h\(i)", properties: Self.hotel(i)); try other.save(id: "o\(i)", properties: Self.hotel(i)) } }
        try c.deleteIndex(forName: "a")
        try c.deleteIndex(forName: "b")
        let byCity = try db.createQuery("SELECT COUNT(*) AS n FROM hotels WHERE city = 'Nice'")
        let byLike = try db.createQuery("SELECT COUNT(*) AS n FROM other AS o UNNEST o.likes AS l WHERE l = 'view'")
        #expect(try byCity.explain().contains("byCity"))
        let expected = [try byCity.execute().allResults()[0].int(forKey: "n"), try byLike.execute().allResults()[0].int(forKey: "n")]

        try db.performMaintenance(.compact)

        #expect([try byCity.execute().allResults()[0].int(forKey: "n"), try byLike.execute().allResults()[0].int(forKey: "n")] == expected)
        try db.inBatch { for i in 500..<700 { try c.save(id: "h\(i)", properties: Self.hotel(i)); try other.save(id: "o\(i)", properties: Self.hotel(i)) } }
        try c.createIndex(withName: "again", config: ValueIndexConfiguration(["i"]))
        let report = try db.performMaintenance(.integrityCheck)
        #expect(report.isOK, "\(report)")
        let unindexed = try db.createQuery("SELECT COUNT(*) AS n FROM hotels WHERE city || '' = 'Nice'")
        #expect(try byCity.execute().allResults()[0].int(forKey: "n") == unindexed.execute().allResults()[0].int(forKey: "n"))
        #expect(try byCity.execute().allResults()[0].int(forKey: "n") > expected[0])
        // No placeholder table is left in the file.
        let names = try db.store.read { try $0.lmdb.tableNames() }
        #expect(!names.contains { $0.contains("placeholder") }, "\(names)")
    }

    /// Readers and a writer keep going on other threads while the file is compacted again
    /// and again: every acknowledged write is there, and every snapshot is consistent.
    @Test func readersAndWritersRunDuringCompaction() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try Self.makeHotels(db)
        try db.inBatch { for i in 0..<1000 { try c.save(id: "h\(i)", properties: Self.hotel(i)) } }
        let problems = ProblemLog()
        let acknowledged = Shared(0)
        let done = Shared(false)
        runThreads(4) { t in
            do {
                switch t {
                case 0: // writer: batches of 20 replacing 20 documents
                    for b in 1...150 {
                        try db.inBatch {
                            for k in 0..<20 { try c.save(id: "h\((b * 20 + k) % 1000)", properties: Self.hotel(b * 20 + k, stamp: b)) }
                            try c.save(id: "ledger", properties: ["batch": .int(Int64(b))])
                        }
                        acknowledged.withLock { $0 = b }
                    }
                    done.withLock { $0 = true }
                case 1: // compactor
                    var n = 0
                    while !done.withLock({ $0 }) || n < 3 {
                        try db.performMaintenance(.compact)
                        n += 1
                    }
                default: // readers: a batch is all or nothing in every snapshot
                    let q = try db.createQuery("SELECT COUNT(*) AS n FROM hotels WHERE city IS VALUED")
                    let byStamp = try db.createQuery("SELECT stamp, COUNT(*) AS n FROM hotels WHERE city IS VALUED GROUP BY stamp")
                    while !done.withLock({ $0 }) {
                        let n = try q.execute().allResults().first?.int(forKey: "n")
                        if n != 1000 { problems.record("reader \(t): \(String(describing: n)) hotels") }
                        for row in try byStamp.execute().allResults() where row.int(forKey: "stamp") > 0 && row.int(forKey: "n") % 20 != 0 {
                            problems.record("reader \(t): batch \(row.int(forKey: "stamp")) has \(row.int(forKey: "n")) documents")
                        }
                    }
                }
            } catch {
                problems.record("thread \(t): \(error)")
                done.withLock { $0 = true }
            }
        }
        #expect(problems.all.isEmpty, "\(problems.all)")
        #expect(try c.document(id: "ledger")?.int(forKey: "batch") == acknowledged.withLock { $0 })
        let report = try db.performMaintenance(.integrityCheck)
        #expect(report.isOK, "\(report)")
    }

    @Test func refusedInsideABatchAndWhileThisThreadReadsAResultSet() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "hotels")
        for i in 0..<10 { try c.save(id: "h\(i)", properties: Self.hotel(i)) }
        do {
            try db.inBatch { try db.performMaintenance(.compact) }
            Issue.record("compaction inside a batch did not throw")
        } catch let e as DatabaseError {
            #expect(e.code == .busy, "\(e)")
        }
        let rows = try db.createQuery("SELECT meta().id FROM hotels").execute()
        _ = try rows.next()
        #expect(throws: DatabaseError.self) { try db.performMaintenance(.compact) }
        _ = try rows.allResults()
        try db.performMaintenance(.compact)
        #expect(try c.count == 10)
    }

    @Test func refusedWhileAnotherProcessHasTheDatabaseOpen() throws {
        try #require(FileManager.default.isExecutableFile(atPath: MultiProcessTests.helperPath), "helper not built")
        let dir = ScratchDirectory("compact-busy")
        defer { dir.remove() }
        let db = try Database(path: dir.path)
        defer { try? db.close() }
        let c = try db.createCollection(name: "shared")
        try c.save(id: "counter", properties: ["n": 0])
        for i in 0..<200 { try c.save(id: "d\(i)", properties: Self.hotel(i)) }
        for i in 0..<100 { try c.delete(id: "d\(i)") }

        let holder = try MultiProcessTests.Child(["hold", dir.path, "1500"])
        #expect(holder.waitForLine("locked"), "helper never took the lock: \(holder.text)")
        do {
            try db.performMaintenance(.compact)
            Issue.record("compaction went ahead while another process had the database open")
        } catch let e as DatabaseError {
            #expect(e.code == .busy)
            #expect(e.message.contains("pid \(holder.process.processIdentifier)"), "\(e)")
        }
        let (status, _, err) = holder.finish()
        #expect(status == 0, "helper failed: \(err)")

        // Alone again: the compaction goes ahead, and another process then reads the new file.
        try db.performMaintenance(.compact)
        #expect(try c.document(id: "held")?.string(forKey: "by") == "child")
        let checker = try MultiProcessTests.Child(["check", dir.path])
        let (code, text, checkErr) = checker.finish()
        #expect(code == 0, "\(checkErr)")
        #expect(text.hasPrefix("ok"), "\(text)")
        try c.save(id: "after", properties: ["n": 1])
        #expect(try c.count == 103)
    }

    /// Another process compacts again and again while this one opens the database, writes one
    /// document and closes it, in a loop: an open that starts while the file is swapped waits
    /// for the swap and then reads the new file (whichever meta page the lock file's last
    /// transaction ID points it to), and every write of this process survives.
    @Test func openingWhileAnotherProcessCompactsSeesEveryDocument() throws {
        try #require(FileManager.default.isExecutableFile(atPath: MultiProcessTests.helperPath), "helper not built")
        let dir = ScratchDirectory("compact-race")
        defer { dir.remove() }
        var expected = 0
        do {
            let db = try Database(path: dir.path)
            defer { try? db.close() }
            let c = try db.createCollection(name: "shared")
            try c.createIndex(withName: "byI", config: ValueIndexConfiguration(["i"]))
            try db.inBatch { for i in 0..<300 { try c.save(id: "d\(i)", properties: Self.hotel(i)) } }
            expected = 300
        }
        let compactor = try MultiProcessTests.Child(["compact", dir.path, "4000"])
        var rng = SplitMix64(seed: 7)
        var problems: [String] = []
        let start = Date()
        while Date().timeIntervalSince(start) < 4.5 && problems.isEmpty {
            let db = try Database(path: dir.path)
            guard let c = try db.collection(name: "shared") else { problems.append("the collection is gone after \(expected) documents"); break }
            let n = try db.createQuery("SELECT COUNT(*) AS n FROM shared WHERE i IS VALUED").execute().allResults()[0].int(forKey: "n")
            let counted = try c.count
            if n != expected || counted != expected { problems.append("\(n) documents (count \(counted)), expected \(expected)") }
            try c.save(id: "d\(expected)", properties: Self.hotel(expected))
            expected += 1
            try db.close()
            usleep(UInt32(rng.int(15_000)))
        }
        let (status, text, err) = compactor.finish()
        #expect(problems.isEmpty, "\(problems)")
        #expect(status == 0, "\(err)")
        print("while reopening \(expected - 300) times: \(text)")
        let compacted = Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0
        #expect(compacted > 0, "the other process never compacted: \(text)")
        let db = try Database(path: dir.path)
        defer { try? db.close() }
        #expect(try db.collection(name: "shared")?.count == expected)
        #expect(try db.performMaintenance(.integrityCheck).isOK)
    }

    /// Two handles on one database in one process: the lock file cannot tell them apart, so the
    /// compaction refuses rather than swap the file under the other.
    @Test func refusedWhenThisProcessOpenedTheDatabaseTwice() throws {
        let dir = ScratchDirectory("compact-twice")
        defer { dir.remove() }
        let db = try Database(path: dir.path)
        defer { try? db.close() }
        try db.defaultCollection().save(id: "a", properties: ["n": 1])
        let second = try Database(path: dir.path)
        #expect(throws: DatabaseError.self) { try db.performMaintenance(.compact) }
        try second.close()
        try db.performMaintenance(.compact)
        #expect(try db.defaultCollection().document(id: "a") != nil)
    }
}
