import Testing
@testable import Tessera

/// Parameters are a list of bindings looked up by name (issue 16 item 6: no dictionary built,
/// copied or hashed per execution). These pin what the list must keep doing: the last
/// binding of a name wins, NULL binds as MISSING, unknown names fail, and long lists (which
/// switch to a dictionary of positions) find every value.
@Suite("Parameter binding")
struct ParameterBindingTests {
    static func database() throws -> Database {
        let db = try Database.temporary()
        let c = try db.defaultCollection()
        try db.inBatch {
            for i in 0..<40 { try c.save(id: "d\(i)", json: #"{"n":\#(i),"city":"c\#(i % 4)"}"#) }
        }
        try c.createIndex(withName: "byCity", config: ValueIndexConfiguration(["city"]))
        return db
    }

    @Test("the builder chain binds each name once; a later binding of a name replaces the earlier one")
    func builderChain() {
        let p = Parameters().setString("a", forName: "x").setInt(2, forName: "y").setString("b", forName: "x")
        #expect(p.value(forName: "x") == .string("b"))
        #expect(p.value(forName: "y") == .int(2))
        #expect(p.value(forName: "z") == nil)
        #expect(p.bindings.map(\.name) == ["x", "y"])
        // A copy taken before a later binding keeps its own values.
        let first = Parameters().setInt(1, forName: "k")
        let second = first.setInt(2, forName: "k")
        #expect(first.value(forName: "k") == .int(1))
        #expect(second.value(forName: "k") == .int(2))
        var v = Parameters()
        for i in 0..<5 { v = v.setInt(i, forName: "p\(i % 3)") }
        #expect(v.bindings.map(\.name) == ["p0", "p1", "p2"])
        #expect(v.value(forName: "p0") == .int(3) && v.value(forName: "p1") == .int(4) && v.value(forName: "p2") == .int(2))
        #expect(Parameters(["b": .int(2), "a": .int(1)]).value(forName: "a") == .int(1))
    }

    @Test("many bindings (a dictionary of positions) still replace and find by name", arguments: [5, 12, 13, 40, 300])
    func manyBindings(count: Int) throws {
        var p = Parameters()
        for i in 0..<count { p = p.setInt(i, forName: "p\(i)") }
        for i in stride(from: 0, to: count, by: 2) { p = p.setInt(-i, forName: "p\(i)") }
        #expect(p.bindings.count == count)
        for i in 0..<count { #expect(p.value(forName: "p\(i)") == .int(Int64(i % 2 == 0 ? -i : i))) }
        let bound = BoundParameters(p.bindings)
        for i in 0..<count { #expect(bound["p\(i)"] == .int(Int64(i % 2 == 0 ? -i : i))) }
        #expect(bound["q"] == nil)
        #expect(bound.dictionary.count == count)
    }

    @Test("a query with many parameters reads every one of them, execution after execution", arguments: [3, 20])
    func manyParameterQuery(count: Int) throws {
        let db = try Self.database()
        defer { try? db.close() }
        let list = (0..<count).map { "$p\($0)" }.joined(separator: ", ")
        for sql in ["SELECT meta().id FROM _ WHERE meta().id IN [\(list)] ORDER BY meta().id",
                    "SELECT meta().id FROM _ WHERE n IN [\(list)] ORDER BY meta().id"] {
            let q = try db.createQuery(sql)
            for round in 0..<3 {
                var p = Parameters()
                var want: [String] = []
                for i in 0..<count {
                    let n = (i * 7 + round * 3) % 40
                    p = sql.contains("meta().id IN") ? p.setString("d\(n)", forName: "p\(i)") : p.setInt(n, forName: "p\(i)")
                    want.append("d\(n)")
                }
                q.parameters = p
                let got = try q.execute().allResults().map { $0.string(at: 0)! }
                #expect(got == Array(Set(want)).sorted(), "\(sql) round \(round)")
            }
        }
    }

    @Test("NULL binds as MISSING, an unbound parameter is MISSING, an unknown name fails naming the query's parameters")
    func nullUnboundUnknown() throws {
        let db = try Self.database()
        defer { try? db.close() }
        let q = try db.createQuery("SELECT $a IS MISSING AS am, $b AS b FROM _ WHERE meta().id = 'd1'")
        q.parameters = Parameters().setString(nil, forName: "a").setInt(5, forName: "b")
        let row = try #require(try q.execute().allResults().first)
        #expect(row.bool(forKey: "am") == true)
        #expect(row.int(forKey: "b") == 5)
        q.parameters = Parameters().setInt(5, forName: "b")
        #expect(try q.execute().allResults().first?.bool(forKey: "am") == true)
        q.parameters = Parameters().setInt(1, forName: "a").setInt(2, forName: "town")
        let error = #expect(throws: QueryError.self) { try q.execute() }
        #expect(error?.message.contains("unknown parameter '$town': the query has $a, $b") == true)
        // Many names: found by halves.
        let wide = try db.createQuery("SELECT n FROM _ WHERE n IN [\((0..<12).map { "$v\($0)" }.joined(separator: ", "))]")
        wide.parameters = Parameters().setInt(1, forName: "v3").setInt(2, forName: "v11")
        #expect(try wide.execute().allResults().map { $0.int(at: 0) }.sorted() == [1, 2])
        wide.parameters = Parameters().setInt(1, forName: "v12")
        #expect(throws: QueryError.self) { try wide.execute() }
    }
}
