import LMDB
import Testing
@testable import Tessera

/// `meta().id` predicates and ORDER BY run as primary-key lookups and ID-range scans, and return
/// exactly what a full scan returns (the same predicate written so no path can use it).
@Suite("Primary key access")
struct PrimaryKeyAccessTests {
    static func makeDatabase(seed: UInt64) throws -> (Database, [String]) {
        var r = SplitMix64(seed: seed)
        let db = try Database.temporary()
        let c = try db.createCollection(name: "hotels")
        let other = try db.createCollection(name: "refs")
        var ids: [String] = []
        let stems = ["a", "ab", "abc", "b", "ba", "bz", "h", "hotel", "hotel_", "z", "é", "Z", "-1", "0"]
        try db.inBatch {
            for i in 0..<400 {
                let id = r.pick(stems) + String(r.int(60)) + (r.chance(0.1) ? "\u{FFFF}" : "")
                ids.append(id)
                try c.save(id: id, json: #"{"n":\#(i),"city":"c\#(r.int(5))"}"#)
                try other.save(id: "r\(i)", json: #"{"ref":"\#(r.chance(0.8) ? id : "missing\(i)")"}"#)
            }
        }
        // Tombstones and purges.
        for id in Set(ids.prefix(30)) where r.chance(0.5) { try c.delete(id: id) }
        for id in Set(ids.suffix(30)) where r.chance(0.5) { try? c.purge(id: id) }
        return (db, Array(Set(ids)).sorted())
    }

    static func literal(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "''") + "'" }

    static func randomPredicate(_ r: inout SplitMix64, ids: [String]) -> String {
        let id = r.chance(0.8) ? r.pick(ids) : r.pick(["", "a", "hotel", "zz", "\u{FFFF}", "b5"])
        let other = r.pick(ids)
        switch r.int(12) {
        case 0: return "ID = \(literal(id))"
        case 1: return "ID IN (\(literal(id)), \(literal(other)), 'nope', 3)"
        case 2: return "ID < \(literal(id))"
        case 3: return "ID <= \(literal(id))"
        case 4: return "ID > \(literal(id))"
        case 5: return "ID >= \(literal(id))"
        case 6: return "ID BETWEEN \(literal(min(id, other))) AND \(literal(max(id, other)))"
        case 7: return "ID LIKE \(literal(String(id.prefix(r.int(3))) + "%"))"
        case 8: return "ID > \(r.pick(["1", "NULL", "TRUE", "[1]", "{}"]))"
        case 9: return "ID < \(r.pick(["1", "NULL", "[1]", "{}"]))"
        case 10: return "ID IS NOT NULL AND ID >= \(literal(id))"
        default: return "ID = \(literal(id)) OR city = 'c1'"
        }
    }

    /// Runs `sql` twice: with `meta().id`, and with `(meta().id || '')` (the same value, no access path).
    static func rows(_ db: Database, _ sql: String, pk: Bool) throws -> [String] {
        let text = sql.replacingOccurrences(of: "ID", with: pk ? "meta().id" : "(meta().id || '')")
        return try db.createQuery(text).execute().allResults().map { $0.toJSON() }
    }

    @Test("random meta().id predicates, orders and limits equal a full scan", arguments: [UInt64(1), 2, 3])
    func equivalence(seed: UInt64) throws {
        let (db, ids) = try Self.makeDatabase(seed: seed)
        defer { try? db.close() }
        var r = SplitMix64(seed: seed &* 7919)
        var usedPrimaryKey = 0
        for _ in 0..<150 {
            let wherePart = r.chance(0.9) ? " WHERE " + Self.randomPredicate(&r, ids: ids) : ""
            let order = r.pick(["", " ORDER BY ID", " ORDER BY ID DESC"])
            let limit = order.isEmpty || r.chance(0.4) ? "" : " LIMIT \(r.int(20)) OFFSET \(r.int(3))"
            // Half the queries read only IDs (the covering ID table), some only count them.
            let select = r.chance(0.15) && order.isEmpty ? "SELECT count(*) AS c" : r.chance(0.5) ? "SELECT ID AS id" : "SELECT ID AS id, n"
            let sql = select + " FROM hotels" + wherePart + order + limit
            var a = try Self.rows(db, sql, pk: true)
            var b = try Self.rows(db, sql, pk: false)
            if order.isEmpty { a.sort(); b.sort() }
            #expect(a == b, "\(sql)")
            let plan = try db.createQuery(sql.replacingOccurrences(of: "ID", with: "meta().id")).explain()
            if plan.contains("PRIMARY KEY") { usedPrimaryKey += 1 }
        }
        #expect(usedPrimaryKey > 100)
    }

    @Test("EXPLAIN names the primary key; ORDER BY meta().id needs no sort")
    func explain() throws {
        let (db, _) = try Self.makeDatabase(seed: 9)
        defer { try? db.close() }
        #expect(try db.createQuery("SELECT n FROM hotels WHERE meta().id = $id").explain() == "SEARCH hotels USING PRIMARY KEY (id=?)")
        #expect(try db.createQuery("SELECT n FROM hotels WHERE meta().id IN ('a', 'b')").explain() == "SEARCH hotels USING PRIMARY KEY (id IN (2))")
        #expect(try db.createQuery("SELECT n FROM hotels WHERE meta().id LIKE 'ho%'").explain() == "SEARCH hotels USING PRIMARY KEY (id LIKE 'ho%')")
        let ordered = try db.createQuery("SELECT meta().id FROM hotels ORDER BY meta().id DESC LIMIT 5").explain()
        // Only IDs are read: the table of live IDs covers the query.
        #expect(ordered.hasPrefix("SCAN hotels USING COVERING PRIMARY KEY"), "\(ordered)")
        let orderedDocuments = try db.createQuery("SELECT n FROM hotels ORDER BY meta().id DESC LIMIT 5").explain()
        #expect(orderedDocuments.hasPrefix("SCAN hotels USING PRIMARY KEY ORDER"), "\(orderedDocuments)")
        #expect(!ordered.contains("TEMP B-TREE"), "\(ordered)")
        let ranged = try db.createQuery("SELECT meta().id FROM hotels WHERE meta().id >= $x ORDER BY meta().id LIMIT 20").explain()
        #expect(ranged.hasPrefix("SEARCH hotels USING COVERING PRIMARY KEY (id>=?)"), "\(ranged)")
        #expect(!ranged.contains("TEMP B-TREE"), "\(ranged)")
    }

    @Test("a JOIN on meta(b).id looks the inner document up per outer row")
    func joinLookup() throws {
        let (db, _) = try Self.makeDatabase(seed: 4)
        defer { try? db.close() }
        let sql = "SELECT meta(r).id AS r, h.n FROM refs AS r JOIN hotels AS h ON ID = r.ref ORDER BY meta(r).id"
        let pkText = sql.replacingOccurrences(of: "ID", with: "meta(h).id")
        let plan = try db.createQuery(pkText).explain()
        #expect(plan.contains("SEARCH h USING PRIMARY KEY (id=?)"), "\(plan)")
        let a = try db.createQuery(pkText).execute().allResults().map { $0.toJSON() }
        let b = try db.createQuery(sql.replacingOccurrences(of: "ID", with: "(meta(h).id || '')")).execute().allResults().map { $0.toJSON() }
        #expect(a == b)
        #expect(a.count > 200)
    }

    @Test("tombstones are seen only when the query asks for meta().deleted")
    func tombstones() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "hotels")
        try c.save(id: "a", json: #"{"n":1}"#)
        try c.save(id: "b", json: #"{"n":2}"#)
        try c.delete(id: "a")
        let live = try db.createQuery("SELECT meta().id AS id FROM hotels WHERE meta().id IN ('a', 'b')").execute().allResults()
        #expect(live.map { $0.string(forKey: "id") } == ["b"])
        let all = try db.createQuery("SELECT meta().id AS id, meta().deleted AS d FROM hotels WHERE meta().id = 'a'").execute().allResults()
        #expect(all.count == 1 && all[0].bool(forKey: "d"))
    }

    /// `IN` over the primary key with parameters, run again and again on the reused executor:
    /// the IDs (some repeated, some absent, empty, not strings, a list that grows past the
    /// scan's buffer) come back in key order, each once, reversed for DESC.
    @Test("IN lists of IDs with repeats, in both orders, across executions", arguments: [UInt64(4), 11])
    func inLists(seed: UInt64) throws {
        let (db, _) = try Self.makeDatabase(seed: seed)
        defer { try? db.close() }
        var live: [String] = []
        for row in try db.createQuery("SELECT meta().id AS id FROM hotels").execute().allResults() { live.append(row.string(at: 0)!) }
        let liveSet = Set(live)
        var r = SplitMix64(seed: seed &+ 7)
        let asc = try db.createQuery("SELECT meta().id AS id FROM hotels WHERE meta().id IN $ids ORDER BY meta().id")
        let desc = try db.createQuery("SELECT meta().id AS id FROM hotels WHERE meta().id IN $ids ORDER BY meta().id DESC")
        let five = try db.createQuery("SELECT meta().id AS id FROM hotels WHERE meta().id IN [$a, $b, $c, $d, $e]")
        for round in 0..<40 {
            let count = round % 10 == 9 ? 300 : r.int(12)
            var ids: [Value] = (0..<count).map { _ in .string(r.chance(0.8) ? r.pick(live) : "absent\(r.int(9))") }
            if count > 2 { ids[1] = ids[0] } // a repeat
            if round % 4 == 0 { ids += [.string(""), .int(3), .null] }
            let expected = Set(ids.compactMap { v -> String? in if case .string(let s) = v, liveSet.contains(s) { return s } else { return nil } })
                .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            asc.parameters = Parameters().setArray(ids, forName: "ids")
            desc.parameters = Parameters().setArray(ids, forName: "ids")
            #expect(try asc.execute().allResults().map { $0.string(at: 0)! } == expected, "round \(round)")
            #expect(try desc.execute().allResults().map { $0.string(at: 0)! } == expected.reversed(), "round \(round)")
            var p = Parameters()
            let picks = (0..<5).map { _ in r.chance(0.7) ? r.pick(live) : "absent" }
            for (name, id) in zip(["a", "b", "c", "d", "e"], picks) { p = p.setString(id, forName: name) }
            five.parameters = p
            #expect(try five.execute().allResults().map { $0.string(at: 0)! }.sorted() == Set(picks).filter(liveSet.contains).sorted(), "round \(round)")
        }
    }

    /// The table of live IDs follows every kind of write — new documents in and out of ID
    /// order, deletes, re-creating a deleted document, purges, a rolled-back batch — and a
    /// batch's own queries see its writes. Covering queries (only `meta().id` read) then
    /// return what a full scan of the documents returns.
    @Test("queries reading only IDs use the ID table, which follows every write", arguments: [UInt64(5), 17])
    func coveringIDTable(seed: UInt64) throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "hotels")
        var r = SplitMix64(seed: seed)
        var live = Set<String>()
        func check(_ what: String) throws {
            let expected = live.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            let query = try db.createQuery("SELECT meta().id AS id FROM hotels ORDER BY meta().id")
            #expect(try query.explain().hasPrefix("SCAN hotels USING COVERING PRIMARY KEY"))
            #expect(try query.execute().allResults().map { $0.string(at: 0)! } == expected, "\(what)")
            let from = "h" + String(r.int(10))
            let ranged = try db.createQuery("SELECT meta().id AS id FROM hotels WHERE meta().id >= '\(from)' ORDER BY meta().id DESC LIMIT 7")
                .execute().allResults().map { $0.string(at: 0)! }
            #expect(ranged == Array(expected.filter { $0.utf8.lexicographicallyPrecedes(from.utf8) == false }.reversed().prefix(7)), "\(what)")
            let counted = try db.createQuery("SELECT count(*) FROM hotels WHERE meta().id LIKE 'h1%'").execute().next()?.int(at: 0)
            #expect(counted == expected.filter { $0.hasPrefix("h1") }.count, "\(what)")
        }
        for round in 0..<6 {
            try db.inBatch {
                for _ in 0..<120 {
                    let id = "h" + String(r.int(400))
                    switch r.int(10) {
                    case 0...5:
                        try c.save(id: id, json: #"{"n":\#(r.int(9))}"#)
                        live.insert(id)
                    case 6, 7:
                        if live.contains(id) { try c.delete(id: id); live.remove(id) }
                    default:
                        if (try? c.purge(id: id)) != nil { live.remove(id) }
                    }
                }
                try check("inside batch \(round)")
            }
            try check("after batch \(round)")
            // A batch that throws leaves the ID table as it was.
            struct Rollback: Error {}
            #expect(throws: Rollback.self) {
                try db.inBatch {
                    for i in 0..<20 { try c.save(id: "h\(i)zz", json: "{}") }
                    for id in live.prefix(10) { try c.delete(id: id) }
                    throw Rollback()
                }
            }
            try check("after a rollback \(round)")
            #expect(try db.performMaintenance(.integrityCheck).isOK)
        }
        // IDs written in ascending order are appended to the table.
        try db.inBatch { for i in 0..<300 { try c.save(id: String(format: "z%04d", i), json: "{}") } }
        for i in 0..<300 { live.insert(String(format: "z%04d", i)) }
        try check("after appends")
        #expect(try db.performMaintenance(.integrityCheck).isOK)
    }

    /// The integrity check compares the ID table with the live documents.
    @Test("the integrity check reports an ID table that disagrees with the documents")
    func damagedIDTable() throws {
        let dir = ScratchDirectory("ids")
        defer { dir.remove() }
        do {
            let db = try Database(path: dir.path)
            let c = try db.createCollection(name: "hotels")
            for id in ["a", "b", "c"] { try c.save(id: id, json: "{}") }
            try c.delete(id: "c")
            try db.close()
        }
        let env = try Environment(path: dir.path)
        let table = try #require(try env.openTable("ids:_default.hotels", create: false))
        try env.write { txn in
            _ = try txn.delete(table, key: Array("a".utf8))
            _ = try txn.put(table, key: Array("c".utf8), value: [])
        }
        env.close()
        let db = try Database(path: dir.path)
        defer { try? db.close() }
        let report = try db.performMaintenance(.integrityCheck)
        #expect(report.problems.contains { $0.contains("misses live document 'a'") }, "\(report.problems)")
        #expect(report.problems.contains { $0.contains("lists 'c', which is not a live document") }, "\(report.problems)")
    }
}
