import Foundation
import Testing
@testable import Tessera

/// Issue #17: the diffs of `Query.changes()` against diffs recomputed from the rows, on seeded
/// random streams of saves, deletes, purges and batches (some coalesced, some not).
@Suite("Observation: live query diffs (property)")
struct LiveQueryDiffPropertyTests {
    /// A diff as comparable text: `kind key@index row`.
    static func describe(_ d: ResultDiff) -> [String] {
        d.inserted.map { "+ \($0.key)@\($0.index) \($0.result.json)" }
            + d.removed.map { "- \($0.key)@\($0.index) \($0.result.json)" }
            + d.updated.map { "~ \($0.key)@\($0.index) \($0.result.json)" }
    }

    /// The expected diff, computed independently from the rows as JSON.
    static func expectedDiff(old: [Result], new: [Result], keyed: Bool) -> [String] {
        let o = old.map(\.json), n = new.map(\.json)
        var out: [String] = []
        if keyed {
            let oid = old.map { $0.string(forKey: "id")! }, nid = new.map { $0.string(forKey: "id")! }
            for (i, id) in nid.enumerated() where !oid.contains(id) { out.append("+ \(id)@\(i) \(n[i])") }
            for (j, id) in oid.enumerated() where !nid.contains(id) { out.append("- \(id)@\(j) \(o[j])") }
            for (i, id) in nid.enumerated() {
                if let j = oid.firstIndex(of: id), o[j] != n[i] { out.append("~ \(id)@\(i) \(n[i])") }
            }
        } else {
            for i in 0..<max(o.count, n.count) {
                if i >= o.count { out.append("+ #\(i)@\(i) \(n[i])") }
            }
            for i in 0..<max(o.count, n.count) where i >= n.count { out.append("- #\(i)@\(i) \(o[i])") }
            for i in 0..<min(o.count, n.count) where o[i] != n[i] { out.append("~ #\(i)@\(i) \(n[i])") }
        }
        return out
    }

    static let queries: [(sql: String, keyed: Bool)] = [
        ("SELECT meta().id, n, g FROM items WHERE n >= 3 ORDER BY n, meta().id", true),
        ("SELECT n, g FROM items WHERE n < 7 ORDER BY g, n LIMIT 8", false),
        ("SELECT g, COUNT(*) AS c FROM items GROUP BY g ORDER BY g", false),
    ]

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func diffsMatchRecomputedDiffs(seed: UInt64) async throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let items = try db.createCollection(name: "items")
        var rng = SplitMix64(seed: seed)
        for i in 0..<10 { try items.save(id: "d\(i)", properties: ["n": .int(Int64(rng.below(10))), "g": .string("g\(rng.below(3))")]) }

        var recorders: [Recorder<LiveQueryUpdate>] = []
        var tasks: [Task<Void, any Error>] = []
        for q in Self.queries {
            let query = try db.createQuery(q.sql)
            let recorder = Recorder<LiveQueryUpdate>()
            let stream = query.changes()
            tasks.append(Task { for try await u in stream { recorder.append(u) } })
            recorders.append(recorder)
        }
        for r in recorders { #expect(await r.waitAsync { $0.count == 1 }) }

        var live = Set((0..<10).map { "d\($0)" })
        var stored = live
        for step in 0..<150 {
            let id = "d\(rng.below(25))"
            switch rng.below(12) {
            case 0..<6:
                try items.save(id: id, properties: ["n": .int(Int64(rng.below(10))), "g": .string("g\(rng.below(3))")])
                live.insert(id); stored.insert(id)
            case 6..<8:
                if live.contains(id) { try items.delete(id: id); live.remove(id) }
            case 8:
                if stored.contains(id) { try items.purge(id: id); live.remove(id); stored.remove(id) }
            default:
                try db.inBatch {
                    for _ in 0..<3 {
                        let b = "d\(rng.below(25))"
                        if rng.chance(0.3), live.contains(b) {
                            try items.delete(id: b); live.remove(b)
                        } else {
                            try items.save(id: b, properties: ["n": .int(Int64(rng.below(10))), "g": .string("g\(rng.below(3))")])
                            live.insert(b); stored.insert(b)
                        }
                    }
                }
            }
            // Sometimes let the observers catch up, so that both single and coalesced commits occur.
            if step % 7 == 0 { try await Task.sleep(nanoseconds: 3_000_000) }
        }

        for (qi, q) in Self.queries.enumerated() {
            let expected = try db.createQuery(q.sql).execute().allResults().map(\.json)
            let recorder = recorders[qi]
            #expect(await recorder.waitAsync { $0.last?.results.map(\.json) == expected },
                    "seed \(seed), \(q.sql): the last update is not the final result")
            let updates = recorder.all
            var previous: [Result] = []
            for (k, u) in updates.enumerated() {
                if k > 0 {
                    #expect(previous.map(\.json) != u.results.map(\.json), "seed \(seed), update \(k): rows did not change")
                }
                #expect(u.diff.isKeyedByDocumentID == q.keyed)
                let got = Self.describe(u.diff).sorted()
                let want = Self.expectedDiff(old: previous, new: u.results, keyed: q.keyed).sorted()
                #expect(got == want, "seed \(seed), \(q.sql), update \(k)")
                previous = u.results
            }
        }
        for t in tasks { t.cancel() }
        #expect(await waitUntilAsync { !db.observation.isObserving })
    }
}
