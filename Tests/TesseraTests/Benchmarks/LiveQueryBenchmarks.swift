import Foundation
import Synchronization
import Testing
@testable import Tessera

/// Release-build measurements of change listeners and live queries (issue #17). Opt-in:
///
///     TESSERA_BENCH_LIVE=1 swift test -c release --filter LiveQueryBenchmarks
///
/// Prints commit→callback latency (same process and another process), write throughput with
/// 0, 1 and 100 live queries open, and 1,000 live queries over 10,000 single-document saves.
@Suite("Live query benchmarks", .enabled(if: ProcessInfo.processInfo.environment["TESSERA_BENCH_LIVE"] != nil), .serialized)
struct LiveQueryBenchmarks {
    static func monotonicNanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    static func realtimeNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// "p50 x ms, p99 y ms" of latencies in milliseconds.
    static func percentiles(_ ms: [Double]) -> String {
        let s = ms.sorted()
        guard !s.isEmpty else { return "no samples" }
        func p(_ q: Double) -> Double { s[min(s.count - 1, Int(Double(s.count) * q))] }
        return String(format: "p50 %.2f ms, p99 %.2f ms, max %.2f ms (%d samples)", p(0.5), p(0.99), s.last!, s.count)
    }

    static func report(_ lines: [String]) {
        for l in lines { print("[live-bench] " + l) }
    }

    static func openDatabase(_ label: String, noSync: Bool) throws -> (Database, ScratchDirectory) {
        let dir = ScratchDirectory(label)
        var config = DatabaseConfiguration()
        config.noSync = noSync
        return (try Database(path: dir.path, configuration: config), dir)
    }

    static let cityCount = 1000

    /// `n` hotels spread over `cityCount` cities, indexed by city.
    static func seedHotels(_ db: Database, _ n: Int) throws -> Tessera.Collection {
        let c = try db.createCollection(name: "hotels")
        try c.createIndex(withName: "byCity", config: ValueIndexConfiguration(["city"]))
        var r = SplitMix64(seed: 7)
        try db.inBatch {
            for i in 0..<n {
                try c.save(id: "h\(i)", properties: ["name": .string("Hotel \(i)"), "city": .string("c\(r.below(cityCount))"),
                                                      "price": .int(Int64(r.below(500)))])
            }
        }
        return c
    }

    /// Commit → callback, one save at a time (no coalescing), in this process.
    @Test func latencySameProcess() throws {
        let (db, dir) = try Self.openDatabase("live-bench-latency", noSync: false)
        defer { try? db.close(); dir.remove() }
        let c = try Self.seedHotels(db, 1000)
        let arrivals = Recorder<UInt64>()
        let token = c.addChangeListener { _ in arrivals.append(Self.monotonicNanoseconds()) }
        let q = try db.createQuery("SELECT meta().id, name FROM hotels WHERE city = 'c1' ORDER BY name")
        let queryArrivals = Recorder<UInt64>()
        let queryToken = q.addChangeListener { _ in queryArrivals.append(Self.monotonicNanoseconds()) }
        _ = queryArrivals.wait { $0.count == 1 }
        let samples = 300
        var listener: [Double] = []
        var live: [Double] = []
        var isolated: [Double] = []
        for i in 0..<(2 * samples) {
            // The second half leaves 5 ms between commits (drains start at once); the first
            // half commits again as soon as the callbacks came (a drain waits 2 ms after the
            // previous one started, so back-to-back commits coalesce).
            if i >= samples { usleep(5000) }
            let before = arrivals.count, beforeQ = queryArrivals.count
            let committedAt = Mutex<UInt64>(0)
            try db.write { ctx in
                ctx.afterCommit.append { committedAt.withLock { $0 = Self.monotonicNanoseconds() } }
                // Every save changes the live query's rows (a new hotel in c1).
                try c.save(id: "new\(i)", properties: ["name": .string("New \(i)"), "city": "c1"])
            }
            _ = arrivals.wait { $0.count > before }
            _ = queryArrivals.wait { $0.count > beforeQ }
            let t0 = committedAt.withLock { $0 }
            if i >= samples {
                isolated.append(Double(arrivals.all[before] &- t0) / 1e6)
                continue
            }
            listener.append(Double(arrivals.all[before] &- t0) / 1e6)
            live.append(Double(queryArrivals.all[beforeQ] &- t0) / 1e6)
        }
        token.remove()
        queryToken.remove()
        Self.report([
            "same process, commit → collection listener, commits 5 ms apart: " + Self.percentiles(isolated),
            "same process, commit → collection listener, back to back: " + Self.percentiles(listener),
            "same process, commit → live query listener, back to back (index lookup, growing to \(samples) rows): " + Self.percentiles(live),
        ])
    }

    /// Commit in another process → callback here (the other process prints its commit times).
    @Test func latencyOtherProcess() throws {
        try #require(FileManager.default.isExecutableFile(atPath: MultiProcessTests.helperPath))
        let (db, dir) = try Self.openDatabase("live-bench-processes", noSync: false)
        defer { try? db.close(); dir.remove() }
        let c = try db.createCollection(name: "shared")
        let arrivals = Recorder<(String, Int64)>()
        let token = c.addChangeListener { change in
            let now = Self.realtimeNanoseconds()
            for id in change.documentIDs { arrivals.append((id, now)) }
        }
        defer { token.remove() }
        let count = 300
        let child = try MultiProcessTests.Child(["stamps", dir.path, String(count), "7"])
        let (status, text, err) = child.finish()
        #expect(status == 0, "\(err)")
        _ = arrivals.wait { $0.count >= count }
        var committed: [String: Int64] = [:]
        for line in text.split(separator: "\n") {
            let p = line.split(separator: " ")
            if p.count == 3, let t = Int64(p[2]) { committed["stamp-" + p[1]] = t }
        }
        let ms = arrivals.all.compactMap { a in committed[a.0].map { Double(a.1 - $0) / 1e6 } }
        Self.report(["other process, commit → collection listener (20 ms poll of the last txn id): " + Self.percentiles(ms)])
    }

    /// Single-document saves per second with 0, 1 and 100 live queries open.
    @Test func throughputWithLiveQueries() throws {
        var lines: [String] = []
        for open in [0, 1, 100] {
            let (db, dir) = try Self.openDatabase("live-bench-throughput", noSync: true)
            defer { try? db.close(); dir.remove() }
            let c = try Self.seedHotels(db, 10_000)
            var tokens: [ListenerToken] = []
            let callbacks = Atomic<Int>(0)
            for k in 0..<open {
                let q = try db.createQuery("SELECT meta().id, name, price FROM hotels WHERE city = $city ORDER BY name")
                q.parameters = Parameters().setString("c\(k)", forName: "city")
                tokens.append(q.addChangeListener { _ in callbacks.add(1, ordering: .relaxed) })
            }
            db.observation.queue.sync {}
            let runsBefore = db.observation.queryRuns.load(ordering: .relaxed)
            let drainsBefore = db.observation.drains.load(ordering: .relaxed)
            var r = SplitMix64(seed: 11)
            let saves = 5000
            let t0 = Self.monotonicNanoseconds()
            for _ in 0..<saves {
                let i = r.below(10_000)
                try c.save(id: "h\(i)", properties: ["name": .string("Hotel \(i)"), "city": .string("c\(r.below(Self.cityCount))"),
                                                      "price": .int(Int64(r.below(500)))])
            }
            let t1 = Self.monotonicNanoseconds()
            db.observation.waitUntilIdle()
            let t2 = Self.monotonicNanoseconds()
            let seconds = Double(t1 - t0) / 1e9
            lines.append(String(format: "%3d live queries open: %d single-document saves in %.3f s = %.0f saves/s; caught up %.1f ms after the last save; %d drains with changes, %d query re-runs, %d callbacks",
                                open, saves, seconds, Double(saves) / seconds, Double(t2 - t1) / 1e6,
                                db.observation.drains.load(ordering: .relaxed) - drainsBefore,
                                db.observation.queryRuns.load(ordering: .relaxed) - runsBefore, callbacks.load(ordering: .relaxed) - open))
            for t in tokens { t.remove() }
        }
        Self.report(["write throughput (noSync; 10,000 hotels, index on city; each live query: one city, ORDER BY name):"] + lines)
    }

    /// 1,000 live queries (one per city) over a stream of 10,000 single-document saves.
    @Test func thousandLiveQueriesOverTenThousandSaves() throws {
        let (db, dir) = try Self.openDatabase("live-bench-thousand", noSync: true)
        defer { try? db.close(); dir.remove() }
        let c = try Self.seedHotels(db, 10_000)
        var queries: [Query] = []
        var tokens: [ListenerToken] = []
        let last = Mutex<[Int: [String]]>([:])
        let callbacks = Atomic<Int>(0)
        let t0 = Self.monotonicNanoseconds()
        for k in 0..<1000 {
            let q = try db.createQuery("SELECT meta().id, name, price FROM hotels WHERE city = $city ORDER BY name")
            q.parameters = Parameters().setString("c\(k)", forName: "city")
            queries.append(q)
            tokens.append(q.addChangeListener { change in
                let rows = (try? change.results?.allResults().map { $0.toJSON() }) ?? []
                last.withLock { $0[k] = rows }
                callbacks.add(1, ordering: .relaxed)
            })
        }
        db.observation.queue.sync {}
        let t1 = Self.monotonicNanoseconds()
        let runsBefore = db.observation.queryRuns.load(ordering: .relaxed)
        let drainsBefore = db.observation.drains.load(ordering: .relaxed)
        let callbacksBefore = callbacks.load(ordering: .relaxed)
        var r = SplitMix64(seed: 13)
        for _ in 0..<10_000 {
            let i = r.below(10_000)
            try c.save(id: "h\(i)", properties: ["name": .string("Hotel \(i)"), "city": .string("c\(r.below(Self.cityCount))"),
                                                  "price": .int(Int64(r.below(500)))])
        }
        let t2 = Self.monotonicNanoseconds()
        db.observation.waitUntilIdle()
        let t3 = Self.monotonicNanoseconds()
        usleep(200_000) // callbacks already queued on the listeners' queues
        // Every live query ends with the rows a fresh execution returns.
        var wrong = 0
        for (k, q) in queries.enumerated() where k % 10 == 0 {
            let fresh = try q.execute().allResults().map { $0.toJSON() }
            if last.withLock({ $0[k] }) != fresh { wrong += 1 }
        }
        for t in tokens { t.remove() }
        let drains = db.observation.drains.load(ordering: .relaxed) - drainsBefore
        let runs = db.observation.queryRuns.load(ordering: .relaxed) - runsBefore
        Self.report([
            String(format: "1,000 live queries: registered and first results in %.0f ms", Double(t1 - t0) / 1e6),
            String(format: "10,000 single-document saves with them open: %.3f s = %.0f saves/s; caught up %.0f ms after the last save",
                   Double(t2 - t1) / 1e9, 10_000 / (Double(t2 - t1) / 1e9), Double(t3 - t2) / 1e6),
            "\(drains) drains with changes (commits coalesced), \(runs) query re-runs, \(callbacks.load(ordering: .relaxed) - callbacksBefore) callbacks; \(wrong) of 100 sampled queries stale at the end",
        ])
        #expect(wrong == 0)
    }
}
