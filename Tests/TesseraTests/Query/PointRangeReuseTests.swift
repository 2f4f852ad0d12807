import Testing
@testable import Tessera

/// A one-column point lookup (`x = $a OR x = $b`, `x IN [...]`) refills the key buffers and
/// range objects of its previous execution instead of allocating new ones. Executions of one
/// query with a changing number of values, duplicates, values that encode equally (`1` and
/// `1.0`), strings longer than an index key keeps (truncated keys, clipped ranges) and both
/// orders must return what a full scan returns.
@Suite("Point ranges reused between executions")
struct PointRangeReuseTests {
    static let long = String(repeating: "x", count: 400)

    static func database(indexed: Bool) throws -> Database {
        let db = try Database.temporary()
        let c = try db.defaultCollection()
        try db.inBatch {
            for i in 0..<120 {
                let v: String
                switch i % 4 {
                case 0: v = #""k\#(i % 10)""#
                case 1: v = "\(i % 7)"
                case 2: v = #""\#(long)\#(i % 5)""#
                default: v = "\(i % 7).5"
                }
                try c.save(id: "d\(i)", json: #"{"v": \#(v), "n": \#(i)}"#)
            }
        }
        if indexed { try c.createIndex(withName: "byV", config: ValueIndexConfiguration(["v"])) }
        return db
    }

    @Test("executions with changing values return what a full scan returns, in both orders")
    func refilledRangesMatchAScan() throws {
        let db = try Self.database(indexed: true)
        let plain = try Self.database(indexed: false)
        defer { try? db.close(); try? plain.close() }
        let values: [[Value]] = [
            [.string("k1"), .string("k3")],
            [.int(2)],
            [.string(Self.long + "3"), .string("k1"), .int(4), .double(4.0), .string("k1")],
            [.double(3.5), .string(Self.long + "0"), .string(Self.long + "4"), .int(0), .string("nope"), .string("k9"), .int(6)],
            [],
            [.string(Self.long + "2")],
            [.int(1), .double(1.0)],
        ]
        for descending in [false, true] {
            let order = descending ? "DESC" : ""
            let list = (0..<7).map { "$p\($0)" }.joined(separator: ", ")
            let indexed = try db.createQuery("SELECT n FROM _ WHERE v IN [\(list)] ORDER BY v \(order), n")
            #expect(try indexed.explain().contains("USING INDEX byV"))
            let scanned = try plain.createQuery("SELECT n FROM _ WHERE v IN [\(list)] ORDER BY v \(order), n")
            let or = try db.createQuery("SELECT n FROM _ WHERE v = $p0 OR v = $p1 OR v = $p2 ORDER BY n")
            #expect(try or.explain().contains("USING INDEX byV"))
            let scannedOr = try plain.createQuery("SELECT n FROM _ WHERE v = $p0 OR v = $p1 OR v = $p2 ORDER BY n")
            for round in 0..<3 {
                for vs in values {
                    var p = Parameters()
                    for (i, v) in vs.enumerated() { p = p.setValue(v, forName: "p\(i)") }
                    indexed.parameters = p
                    scanned.parameters = p
                    let want = try scanned.execute().allResults().map { $0.int(at: 0) }
                    #expect(try indexed.execute().allResults().map { $0.int(at: 0) } == want, "\(vs) round \(round) \(order)")
                    var q = Parameters()
                    for (i, v) in vs.prefix(3).enumerated() { q = q.setValue(v, forName: "p\(i)") }
                    or.parameters = q
                    scannedOr.parameters = q
                    let wantOr = try scannedOr.execute().allResults().map { $0.int(at: 0) }
                    #expect(try or.execute().allResults().map { $0.int(at: 0) } == wantOr, "OR \(vs.prefix(3)) round \(round)")
                }
            }
        }
    }
}
