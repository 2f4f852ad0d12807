import Testing
import Foundation
@testable import Tessera

/// Kills `tessera compact` with SIGKILL at random moments (seeded; 25 kills, or
/// `TESSERA_COMPACT_CRASH_CYCLES`) and checks that the
/// database opens, passes the integrity check and holds every document, each with the
/// content of its last write.
@Suite("Compaction crashes", .serialized)
struct CompactionCrashTests {
    static func document(_ i: Int, version: Int) -> [String: Value] {
        [
            "i": .int(Int64(i)), "version": .int(Int64(version)), "city": .string(["Paris", "Lyon", "Nice"][i % 3]),
            "tags": .array([.string("t\(i % 7)"), .string("v\(version % 5)")]),
            "text": .string("room \(i) version \(version) with a view"),
            "pad": .string(String(repeating: "p", count: 100 + (i * 37) % 700)),
        ]
    }

    /// Deletes and rewrites documents so that the next compaction has free pages to drop.
    static func churn(_ c: Collection, _ expected: inout [String: Int], round: Int, rng: inout SplitMix64) throws {
        try c.database.inBatch {
            for _ in 0..<150 {
                let i = rng.int(3000)
                let id = "d\(i)"
                if rng.int(3) == 0, expected[id] != nil {
                    try c.delete(id: id)
                    expected[id] = nil
                } else {
                    try c.save(id: id, properties: document(i, version: round))
                    expected[id] = round
                }
            }
        }
    }

    @Test func killedCompactionsLoseNothing() throws {
        let cli = try #require(CLI.executable, "the tessera executable is not built")
        let cycles = Int(ProcessInfo.processInfo.environment["TESSERA_COMPACT_CRASH_CYCLES"] ?? "") ?? 25
        var rng = SplitMix64(seed: 19)
        let dir = ScratchDirectory("compact-crash")
        defer { dir.remove() }
        var expected: [String: Int] = [:]
        do {
            let db = try Database(path: dir.path)
            defer { try? db.close() }
            let c = try db.createCollection(name: "docs")
            try c.createIndex(withName: "byCity", config: ValueIndexConfiguration(["city"]))
            try c.createIndex(withName: "byTag", config: ArrayIndexConfiguration(path: "tags"))
            try c.createIndex(withName: "text", config: FullTextIndexConfiguration(["text"]))
            try db.inBatch {
                for i in 0..<3000 {
                    try c.save(id: "d\(i)", properties: Self.document(i, version: 0))
                    expected["d\(i)"] = 0
                }
            }
            try Self.churn(c, &expected, round: 1, rng: &rng)
        }
        // How long a whole run takes here: kills fall anywhere in it, start-up included.
        let t0 = Date()
        let full = try CLI.run(["compact", dir.path])
        #expect(full.code == 0, "\(full.err)")
        let wholeRun = Date().timeIntervalSince(t0)

        var killedMidCopy = 0
        var finished = 0
        for cycle in 0..<cycles {
            do {
                let db = try Database(path: dir.path)
                defer { try? db.close() }
                try Self.churn(try #require(try db.collection(name: "docs")), &expected, round: cycle + 2, rng: &rng)
            }
            let p = Process()
            p.executableURL = URL(fileURLWithPath: cli)
            p.arguments = ["compact", dir.path]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            usleep(UInt32(Double(rng.int(1000)) / 1000 * wholeRun * 1_000_000))
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            if FileManager.default.fileExists(atPath: dir.path + "/data.mdb.compacting") { killedMidCopy += 1 }
            if p.terminationReason == .exit { finished += 1 }

            let db = try Database(path: dir.path)
            defer { try? db.close() }
            let c = try #require(try db.collection(name: "docs"), "cycle \(cycle): the collection is gone")
            let count = try c.count
            #expect(count == expected.count, "cycle \(cycle): \(count) documents, expected \(expected.count)")
            var found: [String: Int] = [:]
            for row in try db.createQuery("SELECT meta().id AS id, version FROM docs").execute().allResults() {
                found[row.string(forKey: "id") ?? ""] = row.int(forKey: "version")
            }
            let wrong = expected.filter { found[$0.key] != $0.value }.map(\.key)
            #expect(wrong.isEmpty, "cycle \(cycle): documents lost or stale: \(wrong.prefix(10))")
            let report = try db.performMaintenance(.integrityCheck)
            #expect(report.isOK, "cycle \(cycle): \(report)")
            if !wrong.isEmpty || !report.isOK { break }
        }
        print("compaction crash test: \(cycles) kills, \(killedMidCopy) during the copy, \(finished) after it finished (a whole run takes \(Int(wholeRun * 1000)) ms)")
        let check = try CLI.run(["check", dir.path])
        #expect(check.code == 0, "\(check.out) \(check.err)")
        // The next compaction clears a copy left by a killed one.
        #expect(try CLI.run(["compact", dir.path]).code == 0)
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/data.mdb.compacting"))
    }
}
