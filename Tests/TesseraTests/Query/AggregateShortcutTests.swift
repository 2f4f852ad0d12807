import Testing
@testable import Tessera

/// `count(*)` of a whole collection from its live-document counter and MIN/MAX from an end of
/// an index give exactly what aggregating every document gives — after saves, deletes,
/// purges, inside batches — and EXPLAIN says so.
@Suite("Aggregates without a scan")
struct AggregateShortcutTests {
    static func randomPrice(_ r: inout SplitMix64) -> String {
        switch r.int(9) {
        case 0: return "null"
        case 1: return #""p\#(r.int(50))""#
        case 2: return "\(Double(r.int(10_000)) / 7)"
        case 3: return "true"
        case 4: return "[\(r.int(5))]"
        default: return "\(r.int(1000) - 300)"
        }
    }

    static func randomDoc(_ r: inout SplitMix64) -> String {
        r.chance(0.1) ? #"{"other":1}"# : #"{"price":\#(randomPrice(&r))}"#
    }

    /// The fast form and the same aggregates written so that nothing but a scan can answer.
    static func check(_ db: Database, _ context: String) throws {
        let fast = try db.createQuery("SELECT count(*) AS n, min(price) AS lo, max(price) AS hi FROM c")
        let slow = try db.createQuery("SELECT count(*) AS n, min(CASE WHEN TRUE THEN price END) AS lo, max(CASE WHEN TRUE THEN price END) AS hi FROM c WHERE TRUE")
        let a = try fast.execute().allResults().map { $0.toJSON() }
        let b = try slow.execute().allResults().map { $0.toJSON() }
        #expect(a == b, "\(context)")
    }

    @Test("counter and index ends equal a full aggregation", arguments: [UInt64(11), 12, 13])
    func equivalence(seed: UInt64) throws {
        var r = SplitMix64(seed: seed)
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "c")
        try c.createIndex(withName: "byPrice", config: ValueIndexConfiguration(["price"]))
        try Self.check(db, "empty")
        var ids: [String] = []
        for round in 0..<40 {
            switch r.int(5) {
            case 0:
                try db.inBatch {
                    for _ in 0..<r.int(30) {
                        let id = "d\(r.int(300))"
                        ids.append(id)
                        try c.save(id: id, json: Self.randomDoc(&r))
                    }
                    // Reads inside the batch see its saves.
                    try Self.check(db, "inside batch, round \(round)")
                }
            case 1 where !ids.isEmpty:
                try? c.delete(id: r.pick(ids))
            case 2 where !ids.isEmpty:
                try? c.purge(id: r.pick(ids))
            default:
                let id = "d\(r.int(300))"
                ids.append(id)
                try c.save(id: id, json: Self.randomDoc(&r))
            }
            try Self.check(db, "round \(round)")
        }
    }

    @Test("EXPLAIN shows the reads and no temporary B-tree")
    func explain() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "c")
        try c.createIndex(withName: "byPrice", config: ValueIndexConfiguration(["price"]))
        try c.createIndex(withName: "cheap", config: ValueIndexConfiguration(["price"], where: "price < 10"))
        for i in 0..<20 { try c.save(id: "d\(i)", json: #"{"price":\#(i)}"#) }
        let plan = try db.createQuery("SELECT count(*), max(price) FROM c").explain().planOnly
        #expect(plan == "AGGREGATE COUNT(*) FROM THE LIVE-DOCUMENT COUNTER OF c\nAGGREGATE MAX(price) FROM THE LAST ENTRY OF INDEX byPrice", "\(plan)")
        let rows = try db.createQuery("SELECT count(*) AS n, max(price) AS m, min(price) AS l FROM c").execute().allResults()
        #expect(rows.count == 1 && rows[0].int(forKey: "n") == 20 && rows[0].int(forKey: "m") == 19 && rows[0].int(forKey: "l") == 0)
        // Not without an index on the expression, with a WHERE, or when tombstones are asked for.
        #expect(try db.createQuery("SELECT max(other) FROM c").explain().contains("SCAN c"))
        #expect(try db.createQuery("SELECT count(*) FROM c WHERE price > 3").explain().contains("INDEX"))
        #expect(try db.createQuery("SELECT count(*) FROM c WHERE meta().deleted").explain().contains("SCAN c"))
        try c.delete(id: "d0")
        let after = try db.createQuery("SELECT count(*) AS n, min(price) AS l FROM c").execute().allResults()
        #expect(after[0].int(forKey: "n") == 19 && after[0].int(forKey: "l") == 1)
    }
}
