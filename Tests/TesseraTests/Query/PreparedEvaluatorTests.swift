import Testing
@testable import Tessera

/// Issue 16 item 6 (fixed cost per execution): a plan whose expressions read no parameter
/// compiles its evaluators once and every execution shares them; a plan with parameters in
/// its filters or columns compiles those per execution with the values given, and the cached
/// size check is skipped within one snapshot.
@Suite("Evaluators shared between executions")
struct PreparedEvaluatorTests {
    static func database() throws -> Database {
        let db = try Database.temporary()
        let c = try db.defaultCollection()
        try db.inBatch {
            for i in 0..<50 { try c.save(id: "d\(i)", json: #"{"n":\#(i),"city":"c\#(i % 5)"}"#) }
        }
        return db
    }

    static func prepared(_ q: Query, _ db: Database) throws -> PreparedPlan {
        try db.read { txn in try q.prepare(txn: txn).0 }
    }

    @Test("a query without parameters above its access path shares one set of evaluators")
    func shared() throws {
        let db = try Self.database()
        defer { try? db.close() }
        let q = try db.createQuery("SELECT meta().id, n FROM _ WHERE meta().id = $id AND n >= 0 ORDER BY n")
        q.parameters = Parameters().setString("d7", forName: "id")
        let a = try Self.prepared(q, db), b = try Self.prepared(q, db)
        let ea = try #require(a.evaluators), eb = try #require(b.evaluators)
        #expect(ea === eb)
        #expect(try q.execute().allResults().map { $0.int(at: 1) } == [7])
        q.parameters = Parameters().setString("d8", forName: "id")
        #expect(try q.execute().allResults().map { $0.int(at: 1) } == [8])
    }

    @Test("parameters in filters, columns and keys are bound per execution")
    func perExecution() throws {
        let db = try Self.database()
        defer { try? db.close() }
        let q = try db.createQuery("SELECT n + $k AS m FROM _ WHERE n < $max AND city = 'c1' ORDER BY n * $sign")
        #expect(try Self.prepared(q, db).evaluators == nil)
        q.parameters = Parameters().setInt(100, forName: "k").setInt(20, forName: "max").setInt(1, forName: "sign")
        #expect(try q.execute().allResults().map { $0.int(at: 0) } == [101, 106, 111, 116])
        q.parameters = Parameters().setInt(0, forName: "k").setInt(12, forName: "max").setInt(-1, forName: "sign")
        #expect(try q.execute().allResults().map { $0.int(at: 0) } == [11, 6, 1])
    }

    @Test("a plan still follows collection sizes across snapshots")
    func sizesRechecked() throws {
        let db = try Self.database()
        defer { try? db.close() }
        let q = try db.createQuery("SELECT count(*) FROM _ WHERE n >= 0")
        let first = try Self.prepared(q, db)
        #expect(try Self.prepared(q, db) === first)
        // Doubling the collection moves it to another size class: a new plan.
        let c = try db.defaultCollection()
        try db.inBatch { for i in 50..<200 { try c.save(id: "e\(i)", json: #"{"n":\#(i)}"#) } }
        #expect(try Self.prepared(q, db) !== first)
        #expect(try q.execute().allResults().first?.int(at: 0) == 200)
    }
}
