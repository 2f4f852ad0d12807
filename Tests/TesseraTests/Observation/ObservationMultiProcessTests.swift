import Foundation
import Testing
@testable import Tessera

/// Issue #17: commits of another process on the same database directory reach listeners and
/// live queries (a timer compares LMDB's last transaction ID while observers exist).
@Suite("Observation: other processes", .serialized)
struct ObservationMultiProcessTests {
    static func realtimeNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    @Test func writesOfAnotherProcessReachListenersLiveQueriesAndStreams() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: MultiProcessTests.helperPath),
                     "helper not built at \(MultiProcessTests.helperPath)")
        let dir = ScratchDirectory("observe-processes")
        defer { dir.remove() }
        var config = DatabaseConfiguration()
        config.initialMapSize = 64 << 10 // the child grows the map: observers must follow
        let db = try Database(path: dir.path, configuration: config)
        defer { try? db.close() }
        let c = try db.createCollection(name: "shared")
        try c.save(id: "counter", properties: ["n": 0])

        let ids = Recorder<String>()
        let token = c.addChangeListener { change in for id in change.documentIDs { ids.append(id) } }
        defer { token.remove() }
        let counts = Recorder<Int>()
        let query = try db.createQuery("SELECT COUNT(*) AS n FROM shared WHERE owner = 'child'")
        let liveToken = query.addChangeListener { change in
            counts.append((try? change.results?.allResults().first?.int(forKey: "n")) ?? -1)
        }
        defer { liveToken.remove() }
        let streamed = Recorder<Int>()
        let stream = query.changes()
        let task = Task { for try await u in stream { streamed.append(u.results.first?.int(forKey: "n") ?? -1) } }
        defer { task.cancel() }
        #expect(await counts.waitAsync { $0 == [0] })

        let batches = 10
        let writer = try MultiProcessTests.Child(["write", dir.path, "child", String(batches)])
        let (status, text, err) = writer.finish()
        #expect(status == 0, "helper failed: \(text) \(err)")
        #expect(await counts.waitAsync { $0.last == batches * 20 }, "live query saw \(counts.all)")
        #expect(await streamed.waitAsync { $0.last == batches * 20 }, "stream saw \(streamed.all)")
        #expect(await ids.waitAsync { Set($0).count == batches * 20 + 1 }, "listener saw \(Set(ids.all).count) IDs")
        #expect(Set(ids.all).contains("child-9-19"))

        // Latency from the other process's commit to our callback.
        let arrivals = Recorder<(String, Int64)>()
        let stampToken = c.addChangeListener { change in
            let now = Self.realtimeNanoseconds()
            for id in change.documentIDs where id.hasPrefix("stamp-") { arrivals.append((id, now)) }
        }
        defer { stampToken.remove() }
        let stamps = 30
        let stamper = try MultiProcessTests.Child(["stamps", dir.path, String(stamps), "15"])
        let (stampStatus, stampText, stampErr) = stamper.finish()
        #expect(stampStatus == 0, "helper failed: \(stampErr)")
        #expect(await arrivals.waitAsync { $0.count == stamps }, "only \(arrivals.count) of \(stamps) stamps arrived")
        var committed: [String: Int64] = [:]
        for line in stampText.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 3, parts[0] == "stamp", let t = Int64(parts[2]) { committed["stamp-" + parts[1]] = t }
        }
        let latencies = arrivals.all.compactMap { a in committed[a.0].map { Double(a.1 - $0) / 1e6 } }.sorted()
        #expect(latencies.count == stamps)
        let median = latencies.isEmpty ? .infinity : latencies[latencies.count / 2]
        #expect(median < 100, "median other-process latency \(median) ms (all: \(latencies))")
    }
}
