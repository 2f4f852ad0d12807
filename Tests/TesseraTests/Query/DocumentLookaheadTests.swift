import Foundation
import Testing
@testable import Tessera

/// Index scans and `meta().id IN` lookups in a read snapshot fetch the documents of the next
/// rows together (`KeyRangeScan.bindDocument`, `PrimaryKeyScan.batchedValue`: one
/// `Snapshot.get(_:from:)` per batch). Inside a batch (a write transaction) documents are
/// fetched one at a time: both must give the same rows, in the same order, for every LIMIT
/// and OFFSET, in both directions, with tombstones, missing IDs and records in two pieces.
@Suite("Documents fetched ahead of their rows")
struct DocumentLookaheadTests {
    static func database() throws -> Database {
        let db = try Database.temporary()
        let c = try db.defaultCollection()
        var r = SplitMix64(seed: 16)
        try db.inBatch {
            for i in 0..<3_000 {
                let id = "d" + String(r.next() % 100_000) + String(repeating: "x", count: Int(r.next() % 12)) + "-\(i)"
                // One in 25 has a long text: its record is stored in two pieces.
                let long = i % 25 == 0 ? #","text":"\#(String(repeating: "lorem ipsum ", count: 700))""# : ""
                try c.save(id: id, json: #"{"n":\#(r.next() % 400),"city":"c\#(r.next() % 30)","tail":\#(i)\#(long)}"#)
            }
        }
        // Tombstones inside the ranges.
        let ids = try db.createQuery("SELECT meta().id FROM _ WHERE n < 40").execute().allResults().compactMap { $0.string(at: 0) }
        for id in ids.prefix(25) { try c.delete(id: id) }
        try c.createIndex(withName: "byN", config: ValueIndexConfiguration(["n"]))
        try c.createIndex(withName: "byCity", config: ValueIndexConfiguration(["city"]))
        return db
    }

    /// The rows of `sql` as JSON, read in a snapshot and inside a batch.
    static func bothWays(_ db: Database, _ sql: String, _ parameters: Parameters = Parameters()) throws -> (snapshot: [String], batch: [String]) {
        let q = try db.createQuery(sql)
        q.parameters = parameters
        let snapshot = try q.execute().allResults().map { $0.toJSON() }
        var inBatch: [String] = []
        try db.inBatch { inBatch = try q.execute().allResults().map { $0.toJSON() } }
        return (snapshot, inBatch)
    }

    @Test("index ranges: every LIMIT and OFFSET, both directions")
    func ranges() throws {
        let db = try Self.database()
        defer { try? db.close() }
        for order in ["ASC", "DESC"] {
            for limit in [nil, 1, 2, 3, 7, 20, 31, 32, 33, 64, 100, 1_000] as [Int?] {
                for offset in [0, 5] {
                    let tail = limit.map { " LIMIT \($0) OFFSET \(offset)" } ?? ""
                    let sql = "SELECT meta().id, n, tail, length(text) FROM _ WHERE n BETWEEN $lo AND $hi ORDER BY n \(order)\(tail)"
                    for (lo, hi) in [(0, 60), (100, 101), (390, 500), (7, 7)] {
                        let (a, b) = try Self.bothWays(db, sql, Parameters().setInt(lo, forName: "lo").setInt(hi, forName: "hi"))
                        #expect(a == b, "\(sql) [\(lo), \(hi)]")
                        if limit == nil && lo == 0 { #expect(a.count > 300) }
                    }
                }
            }
        }
    }

    @Test("equality, IN and OR over an index; a filter the index does not satisfy")
    func points() throws {
        let db = try Self.database()
        defer { try? db.close() }
        for sql in ["SELECT meta().id, tail FROM _ WHERE city = $c",
                    "SELECT meta().id, tail FROM _ WHERE city IN ['c1', 'c7', 'c29', 'nope']",
                    "SELECT meta().id, n FROM _ WHERE city = 'c3' OR city = $c ORDER BY meta().id",
                    "SELECT meta().id, n FROM _ WHERE city = $c AND n > 200",
                    "SELECT count(*) FROM _ WHERE city = $c AND tail % 2 = 0"] {
            for c in ["c0", "c13", "none"] {
                let (a, b) = try Self.bothWays(db, sql, sql.contains("$c") ? Parameters().setString(c, forName: "c") : Parameters())
                #expect(a == b, "\(sql) [\(c)]")
            }
        }
    }

    @Test("ordered scans over truncated keys: groups read from the cursor between queued entries")
    func truncatedKeys() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        var r = SplitMix64(seed: 9)
        try db.inBatch {
            for i in 0..<400 {
                // Short values, and long ones whose keys are cut (they share 700 characters).
                let v = i % 3 == 0 ? String(repeating: "p", count: 700) + String(r.next() % 50) : "s\(r.next() % 90)"
                try c.save(id: "k\(i)", json: #"{"v":"\#(v)","i":\#(i)}"#)
            }
        }
        try c.createIndex(withName: "byV", config: ValueIndexConfiguration(["v"]))
        for order in ["ASC", "DESC"] {
            for limit in [3, 20, 64, 500] {
                let sql = "SELECT meta().id, i FROM _ WHERE v >= $lo ORDER BY v \(order), meta().id LIMIT \(limit)"
                let (a, b) = try Self.bothWays(db, sql, Parameters().setString("p", forName: "lo"))
                #expect(a == b && !a.isEmpty, "\(sql)")
                let (c1, d1) = try Self.bothWays(db, "SELECT meta().id, i FROM _ WHERE v > 's1' ORDER BY v \(order) LIMIT \(limit)")
                #expect(c1 == d1 && !c1.isEmpty)
            }
        }
    }

    @Test("meta().id IN: present, deleted and absent IDs, in batches past the largest")
    func primaryKeys() throws {
        let db = try Self.database()
        defer { try? db.close() }
        let all = try db.createQuery("SELECT meta().id FROM _ ORDER BY meta().id").execute().allResults().compactMap { $0.string(at: 0) }
        var r = SplitMix64(seed: 3)
        for count in [2, 5, 31, 32, 33, 90] {
            var ids: [Value] = []
            for k in 0..<count {
                switch k % 4 {
                case 0: ids.append(.string("absent-\(k)"))
                default: ids.append(.string(all[Int(r.next() % UInt64(all.count))]))
                }
            }
            let params = Parameters().setArray(ids, forName: "ids")
            let (a, b) = try Self.bothWays(db, "SELECT meta().id, tail, length(text) FROM _ WHERE meta().id IN $ids", params)
            #expect(a == b && a.count <= count, "\(count) IDs")
            #expect(a.count >= (count * 3 / 4) - 25 && a.count > 0)
        }
    }
}
