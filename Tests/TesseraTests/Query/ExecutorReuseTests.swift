import Foundation
import Testing
@testable import Tessera

/// Issue 16 item 6 (fixed cost per execution): a finished executor is kept by its plan and
/// run again by the next execution, with the new parameters and snapshot; executions that
/// overlap each get their own. Also the per-row shortcuts of this work: grouped `count(*)`
/// over a covering index counted unbound, covering array scans without the filter their
/// range satisfies, and binary string equality on bytes.
@Suite("Executors reused between executions")
struct ExecutorReuseTests {
    static func database() throws -> Database {
        let db = try Database.temporary()
        let c = try db.defaultCollection()
        try db.inBatch {
            for i in 0..<60 { try c.save(id: "d\(String(format: "%03d", i))", json: #"{"n":\#(i),"city":"c\#(i % 6)"}"#) }
        }
        try c.createIndex(withName: "byCity", config: ValueIndexConfiguration(["city"]))
        return db
    }

    static func prepared(_ q: Query, _ db: Database) throws -> PreparedPlan {
        try db.read { txn in try q.prepare(txn: txn).0 }
    }

    @Test("a finished execution leaves its executor for the next one, which sees new parameters and new data")
    func reused() throws {
        let db = try Self.database()
        defer { try? db.close() }
        let q = try db.createQuery("SELECT n FROM _ WHERE meta().id = $id")
        q.parameters = Parameters().setString("d007", forName: "id")
        #expect(try q.execute().allResults().map { $0.int(at: 0) } == [7])
        let plan = try Self.prepared(q, db)
        let kept = try #require(plan.idleExecutor.take())
        plan.idleExecutor.put(kept)
        q.parameters = Parameters().setString("d042", forName: "id")
        #expect(try q.execute().allResults().map { $0.int(at: 0) } == [42])
        // The same executor ran again and came back.
        #expect(plan.idleExecutor.take() === kept)
        // A write in between: the next execution reads a new snapshot.
        try db.defaultCollection().save(id: "d042", json: #"{"n":4242}"#)
        #expect(try q.execute().allResults().map { $0.int(at: 0) } == [4242])
        q.parameters = Parameters().setString("nope", forName: "id")
        #expect(try q.execute().allResults().isEmpty)
    }

    /// A reused executor runs in read snapshots (renewed from the reader pool), inside a
    /// batch (the write transaction) and after a compaction swapped the file: every execution
    /// reads the rows of its own snapshot.
    @Test("reused executors read their own snapshot: renewed, inside a batch, after a compaction")
    func renewedCursors() throws {
        let db = try Self.database()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        let byCity = try db.createQuery("SELECT n FROM _ WHERE city = $c ORDER BY n")
        let range = try db.createQuery("SELECT meta().id AS id FROM _ WHERE meta().id >= $x ORDER BY meta().id LIMIT 3")
        func check(_ extra: [Int], _ note: Comment) throws {
            byCity.parameters = Parameters().setString("c4", forName: "c")
            #expect(try byCity.execute().allResults().map { $0.int(at: 0) } == Array(stride(from: 4, to: 60, by: 6)) + extra, note)
            range.parameters = Parameters().setString("d05", forName: "x")
            #expect(try range.execute().allResults().map { $0.string(at: 0) ?? "" } == ["d050", "d051", "d052"], note)
        }
        try check([], "first run")
        try check([], "renewed")
        try db.inBatch {
            try c.save(id: "e100", json: #"{"n":100,"city":"c4"}"#)
            try check([100], "inside a batch")
        }
        try check([100], "after the batch")
        _ = try db.performMaintenance(.compact)
        try c.save(id: "e101", json: #"{"n":101,"city":"c4"}"#)
        try check([100, 101], "after a compaction")
        try check([100, 101], "renewed again")
    }

    @Test("overlapping executions of one query each read their own rows")
    func overlapping() throws {
        let db = try Self.database()
        defer { try? db.close() }
        let q = try db.createQuery("SELECT n FROM _ WHERE city = $c ORDER BY n")
        q.parameters = Parameters().setString("c1", forName: "c")
        let a = try q.execute()
        #expect(try a.next()?.int(at: 0) == 1)
        q.parameters = Parameters().setString("c2", forName: "c")
        let b = try q.execute()
        #expect(try b.allResults().map { $0.int(at: 0) } == Array(stride(from: 2, to: 60, by: 6)))
        // `b` finished and left its executor: a third execution takes it while `a` still reads.
        q.parameters = Parameters().setString("c3", forName: "c")
        #expect(try q.execute().allResults().map { $0.int(at: 0) } == Array(stride(from: 3, to: 60, by: 6)))
        #expect(try a.allResults().map { $0.int(at: 0) } == Array(stride(from: 7, to: 60, by: 6)))
    }

    @Test("a result set dropped half-read, or stopped by an error, leaves nothing behind for the next execution")
    func halfReadAndFailed() throws {
        let db = try Self.database()
        defer { try? db.close() }
        let q = try db.createQuery("SELECT n, 10 / (n - $zero) AS r FROM _ WHERE city = 'c0' ORDER BY meta().id")
        q.parameters = Parameters().setInt(1_000, forName: "zero")
        do {
            let rs = try q.execute()
            _ = try rs.next()
        }
        #expect(try q.execute().allResults().count == 10)
        let plain = try db.createQuery("SELECT meta().id FROM _ WHERE meta().id >= $from ORDER BY meta().id LIMIT 3")
        for start in ["d000", "d010", "d057", "d059", "e"] {
            plain.parameters = Parameters().setString(start, forName: "from")
            let rs = try plain.execute()
            _ = try rs.next()
        }
        plain.parameters = Parameters().setString("d020", forName: "from")
        #expect(try plain.execute().allResults().compactMap { $0.string(at: 0) } == ["d020", "d021", "d022"])
        plain.interrupt()
        plain.parameters = Parameters().setString("d030", forName: "from")
        #expect(try plain.execute().allResults().compactMap { $0.string(at: 0) } == ["d030", "d031", "d032"])
    }

    @Test("executions on several threads at once get the right rows")
    func threads() async throws {
        let db = try Self.database()
        defer { try? db.close() }
        // One query run by every thread (its plan's executor taken and put back concurrently),
        // and one per thread with its own parameters.
        let shared = try db.createQuery("SELECT n FROM _ WHERE city = 'c1' ORDER BY n")
        let expected = Array(stride(from: 1, to: 60, by: 6))
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for t in 0..<4 {
                group.addTask {
                    let own = try db.createQuery("SELECT n FROM _ WHERE meta().id = $id")
                    for i in 0..<200 {
                        let n = (i * 7 + t) % 60
                        own.parameters = Parameters().setString("d\(String(format: "%03d", n))", forName: "id")
                        guard try own.execute().allResults().map({ $0.int(at: 0) }) == [n],
                              try shared.execute().allResults().map({ $0.int(at: 0) }) == expected else { return false }
                    }
                    return true
                }
            }
            for try await ok in group { #expect(ok) }
        }
    }

    @Test("GROUP BY index columns with only count(*) is counted from the index, with the same groups as without it")
    func groupCounts() throws {
        let a = try Database.temporary(), b = try Database.temporary()
        defer { try? a.close(); try? b.close() }
        let long = String(repeating: "x", count: 900)
        var docs: [String] = []
        for i in 0..<300 {
            let city: String
            switch i % 9 {
            case 0: city = #""city":null,"#
            case 1: city = ""
            case 2: city = #""city":1,"#
            case 3: city = #""city":1.0,"#
            case 4: city = #""city":"\#(long)a","#
            case 5: city = #""city":"\#(long)b","#
            default: city = #""city":"c\#(i % 4)","#
            }
            docs.append(#"{\#(city)"k":\#(i % 3)}"#)
        }
        for db in [a, b] {
            let c = try db.defaultCollection()
            try db.inBatch { for (i, d) in docs.enumerated() { try c.save(id: "d\(i)", json: d) } }
        }
        try a.defaultCollection().createIndex(withName: "byCityK", config: ValueIndexConfiguration(["city", "k"]))
        let queries = [
            "SELECT city, count(*) AS n FROM _ GROUP BY city",
            "SELECT city, k, count(*) AS n, meta().id FROM _ GROUP BY city, k",
            "SELECT k, city, count(*) FROM _ GROUP BY k, city",
            "SELECT city, count(*) AS n FROM _ GROUP BY city HAVING count(*) > 40",
            "SELECT count(*) AS n FROM _ WHERE city = 'c1' GROUP BY city, k",
        ]
        for sql in queries {
            let x = try a.createQuery(sql).execute().allResults().map { $0.toJSON() }.sorted()
            let y = try b.createQuery(sql).execute().allResults().map { $0.toJSON() }.sorted()
            #expect(x == y, "\(sql)")
        }
        // The first two read the index and count its groups unbound; with a residual filter not.
        let counted = try a.createQuery(queries[0])
        #expect(try a.read { txn in try counted.prepare(txn: txn).0 }.countedGroups?.columns == 1)
        let filtered = try a.createQuery("SELECT city, count(*) FROM _ WHERE k + 1 > 1 GROUP BY city")
        #expect(try a.read { txn in try filtered.prepare(txn: txn).0 }.countedGroups == nil)
    }

    @Test("a covering array scan leaves out the filter its range satisfies, and re-checks truncated keys")
    func arrayTermsSatisfied() throws {
        let a = try Database.temporary(), b = try Database.temporary()
        defer { try? a.close(); try? b.close() }
        let long = String(repeating: "y", count: 1_000)
        for db in [a, b] {
            let c = try db.defaultCollection()
            try db.inBatch {
                for i in 0..<120 {
                    let tags = [#""t\#(i % 5)""#, #""\#(long)\#(i % 3)""#, #""\#(long)\#(i % 3)""#]
                    try c.save(id: "d\(i)", json: #"{"likes":[\#(tags[0...(i % 3)].joined(separator: ","))]}"#)
                }
            }
        }
        try a.defaultCollection().createIndex(withName: "likes", config: ArrayIndexConfiguration(path: "likes"))
        let sql = "SELECT meta(h).id, l FROM _ AS h UNNEST h.likes AS l WHERE l = $t"
        let q = try a.createQuery(sql)
        #expect(try !q.explain().contains("FILTER"))
        let plain = try b.createQuery(sql)
        for t in ["t1", long + "0", long + "1", long + "2", long] {
            q.parameters = Parameters().setString(t, forName: "t")
            plain.parameters = q.parameters
            let x = try q.execute().allResults().map { $0.toJSON() }.sorted()
            let y = try plain.execute().allResults().map { $0.toJSON() }.sorted()
            #expect(x == y, "\(t.prefix(5))… \(t.count)")
        }
    }

    @Test("binary string equality compares bytes: canonically equivalent strings differ")
    func binaryEquality() {
        #expect(stringsEqualBinary("", ""))
        #expect(stringsEqualBinary("caf\u{E9}", "caf\u{E9}"))
        #expect(!stringsEqualBinary("caf\u{E9}", "cafe\u{301}"))
        #expect(!stringsEqualBinary("abc", "abd"))
        #expect(!stringsEqualBinary("abc", "abcd"))
        let long = String(repeating: "ü", count: 40)
        #expect(stringsEqualBinary(long, String(repeating: "ü", count: 40)))
        #expect(!stringsEqualBinary(long, long + "x"))
        #expect(Collation.binary.equal("Ab", "Ab") && !Collation.binary.equal("Ab", "ab"))
    }
}
