import Testing
import Foundation
@testable import Tessera

/// Release-build micro-benchmarks for the storage core and the executor. Opt-in:
/// `TESSERA_BENCH=1 swift test -c release --filter MicroBenchmarks` prints the figures.
@Suite("Micro-benchmarks", .enabled(if: ProcessInfo.processInfo.environment["TESSERA_BENCH"] != nil), .serialized)
struct MicroBenchmarks {
    static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    static func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }

    static let cities = (0..<2000).map { "City\($0)" }

    static func doc(_ i: Int, _ r: inout SplitMix64) -> [String: Value] {
        let t = r.next() % 100
        return [
            "type": .string(t < 60 ? "hotel" : (t < 85 ? "landmark" : "airport")),
            "name": .string("Name \(i)"),
            "city": .string(MicroBenchmarks.cities[Int(r.next() % 2000)]),
            "price": .int(Int64(r.next() % 1000)),
            "rating": .double(Double(r.next() % 50) / 10),
            "likes": .array((0..<Int(r.next() % 6)).map { _ in .string("tag\(r.next() % 200)") }),
        ]
    }

    @Test func storageAndQueries() throws {
        let n = 100_000
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        var r = SplitMix64(seed: 1)
        let docs = (0..<n).map { MicroBenchmarks.doc($0, &r) }
        var lines: [String] = []

        let save = try MicroBenchmarks.time {
            try db.inBatch { for i in 0..<n { try c.save(id: "doc\(i)", properties: docs[i]) } }
        }
        lines.append(String(format: "save %d small docs in one batch: %.3f s = %.0f docs/s", n, save, Double(n) / save))

        var ids = (0..<n).map { "doc\($0)" }
        ids.shuffle(using: &r)
        let gets = try MicroBenchmarks.time { for id in ids { _ = try c.document(id: id)! } }
        lines.append(String(format: "random document(id:): %.0f gets/s", Double(n) / gets))

        let scanQ = try db.createQuery("SELECT meta().id FROM _ WHERE type = 'hotel' AND price < 100")
        var scanTimes: [Double] = []
        var count = 0
        for _ in 0..<5 { scanTimes.append(try MicroBenchmarks.time { count = try scanQ.execute().allResults().count }) }
        lines.append(String(format: "full scan, two predicates over %d docs: %.1f ms (%d rows)", n, MicroBenchmarks.median(scanTimes) * 1000, count))

        let build = try MicroBenchmarks.time { try c.createIndex(withName: "byCity", config: ValueIndexConfiguration(["city"])) }
        lines.append(String(format: "create value index over %d docs: %.3f s", n, build))
        try c.createIndex(withName: "byPrice", config: ValueIndexConfiguration(["price"]))

        let eq = try db.createQuery("SELECT * FROM _ WHERE city = $city")
        var eqTimes: [Double] = []
        var eqRows = 0
        for i in 0..<2000 {
            eq.parameters = Parameters().setString(MicroBenchmarks.cities[i % 2000], forName: "city")
            eqTimes.append(try MicroBenchmarks.time { eqRows += try eq.execute().allResults().count })
        }
        lines.append(String(format: "indexed equality (~%d rows, fetching bodies): %.3f ms/query", eqRows / 2000, MicroBenchmarks.median(eqTimes) * 1000))

        // The same queries, with every row read in full (each row converted by toDictionary()).
        var fullTimes: [Double] = []
        var fullRows = 0
        var fullKeys = 0
        for i in 0..<2000 {
            eq.parameters = Parameters().setString(MicroBenchmarks.cities[i % 2000], forName: "city")
            fullTimes.append(try MicroBenchmarks.time {
                for row in try eq.execute().allResults() {
                    fullRows += 1
                    for v in row.toDictionary().values { if let d = v as? [String: Any] { fullKeys += d.count } }
                }
            })
        }
        #expect(fullRows == eqRows && fullKeys == 6 * fullRows)
        lines.append(String(format: "indexed equality, every row read by toDictionary(): %.3f ms/query", MicroBenchmarks.median(fullTimes) * 1000))

        let range = try db.createQuery("SELECT name, price FROM _ WHERE price BETWEEN $lo AND $hi ORDER BY price LIMIT 20")
        var rangeTimes: [Double] = []
        for i in 0..<1000 {
            range.parameters = Parameters().setInt(i % 900, forName: "lo").setInt(i % 900 + 100, forName: "hi")
            rangeTimes.append(try MicroBenchmarks.time { _ = try range.execute().allResults() })
        }
        lines.append(String(format: "range + ORDER BY + LIMIT 20: %.3f ms/query", MicroBenchmarks.median(rangeTimes) * 1000))

        try c.createIndex(withName: "likes", config: ArrayIndexConfiguration(path: "likes"))
        let un = try db.createQuery("SELECT meta().id FROM _ UNNEST likes AS l WHERE l = $tag")
        var unTimes: [Double] = []
        var unRows = 0
        for i in 0..<200 {
            un.parameters = Parameters().setString("tag\(i)", forName: "tag")
            unTimes.append(try MicroBenchmarks.time { unRows += try un.execute().allResults().count })
        }
        lines.append(String(format: "UNNEST equality with array index (~%d rows): %.3f ms/query", unRows / 200, MicroBenchmarks.median(unTimes) * 1000))
        print(lines.joined(separator: "\n"))
    }
}
