import Testing
import Foundation
@testable import Tessera

/// Kills a writer process with SIGKILL at random moments and checks that every batch is
/// all-or-nothing, every acknowledged batch survived, and the indexes match the documents.
@Suite("Crash consistency", .serialized)
struct CrashConsistencyTests {
    static var writerPath: String {
        let bundle = Bundle.main.bundleURL.deletingLastPathComponent()
        for dir in [bundle, bundle.deletingLastPathComponent()] {
            let p = dir.appendingPathComponent("TesseraCrashWriter").path
            if FileManager.default.isExecutableFile(atPath: p) { return p }
        }
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(4)
        return parts.joined(separator: "/") + "/.build/debug/TesseraCrashWriter"
    }

    /// Runs `cycles` kill/reopen/check rounds on one database directory.
    static func run(cycles: Int, seed: UInt64) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-crash-\(seed)-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var rng = SystemRandomNumberGenerator()
        var lastAcknowledged = 0
        let writer = writerPath
        try #require(FileManager.default.isExecutableFile(atPath: writer), "crash writer not built at \(writer)")
        for cycle in 0..<cycles {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: writer)
            p.arguments = [dir, String(seed &+ UInt64(cycle))]
            let out = Pipe()
            p.standardOutput = out
            try p.run()
            usleep(UInt32(20_000 + Int(rng.next() % 250_000)))
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            if let last = printed.split(separator: "\n").last.flatMap({ Int($0) }) { lastAcknowledged = max(lastAcknowledged, last) }

            let db = try Database(path: dir)
            defer { try? db.close() }
            guard let c = try db.collection(name: "docs") else { continue } // killed before creating it
            let ledger = try c.document(id: "ledger")
            let batch = ledger?.int(forKey: "batch") ?? 0
            #expect(batch >= lastAcknowledged, "cycle \(cycle): acknowledged batch \(lastAcknowledged) lost (ledger at \(batch))")
            if batch > 0 {
                // The last committed batch is complete, and nothing of the next one exists.
                let n = ledger!.int(forKey: "docs")
                let q = try db.createQuery("SELECT count(*) AS n FROM docs WHERE batch = $b AND i IS VALUED")
                q.parameters = Parameters().setInt(batch, forName: "b")
                #expect(try q.execute().allResults().first?.int(forKey: "n") == n, "cycle \(cycle): batch \(batch) incomplete")
                q.parameters = Parameters().setInt(batch + 1, forName: "b")
                #expect(try q.execute().allResults().first?.int(forKey: "n") == 0, "cycle \(cycle): part of batch \(batch + 1) survived")
            }
            let report = try db.performMaintenance(.integrityCheck)
            #expect(report.isOK, "cycle \(cycle): \(report)")
            lastAcknowledged = batch
        }
    }

    /// 50 kill cycles in five databases of 10 cycles each (`TESSERA_CRASH_CYCLES=1000` for a long run).
    @Test func killedWritersLoseNothingAcknowledged() throws {
        let cycles = Int(ProcessInfo.processInfo.environment["TESSERA_CRASH_CYCLES"] ?? "") ?? 50
        var done = 0
        var seed: UInt64 = 42
        while done < cycles {
            let n = min(10, cycles - done)
            try CrashConsistencyTests.run(cycles: n, seed: seed)
            done += n
            seed &+= 1000
        }
    }
}
