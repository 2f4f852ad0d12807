import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Testing

/// Text a reader thread appends to while a test reads it.
final class OutputBuffer: Sendable {
    private let text = Mutex("")
    func append(_ s: String) { text.withLock { $0 += s } }
    var lines: [String] { text.withLock { $0 }.split(separator: "\n").map(String.init) }
}

/// A `tessera` process left running (`changes --follow`, `watch`) whose output is read as it comes.
final class RunningCLI {
    let process = Process()
    let output = OutputBuffer()

    init(_ args: [String]) throws {
        guard let executable = CLI.executable else {
            Issue.record("the tessera executable was not found")
            throw CancellationError()
        }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = args
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let handle = pipe.fileHandleForReading
        let buffer = output
        Thread.detachNewThread {
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { return }
                buffer.append(String(decoding: chunk, as: UTF8.self))
            }
        }
    }

    /// Waits until the output has `count` lines (true) or `timeout` seconds pass.
    func waitForLines(_ count: Int, timeout: Double = 10) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            if output.lines.count >= count { return true }
            usleep(2000)
        }
        return output.lines.count >= count
    }

    /// Waits for the exit (killing the process after `timeout` seconds); returns the status.
    @discardableResult
    func finish(timeout: Double = 10) -> Int32 {
        let end = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < end { usleep(2000) }
        if process.isRunning { kill() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// SIGKILL: a child started from a test thread may inherit a mask that blocks SIGTERM.
    private func kill() { _ = Glibc.kill(process.processIdentifier, SIGKILL) }

    func stop() {
        if process.isRunning { kill() }
        process.waitUntilExit()
    }
}

/// Issue #17: `tessera changes` and `tessera watch`, run as executables.
@Suite("tessera CLI: changes and watch")
struct ObservationCLITests {
    /// Parses a JSON line into a dictionary.
    static func object(_ line: String) throws -> [String: Any] {
        try #require(try jsonObject(line) as? [String: Any], "not a JSON object: \(line)")
    }

    @Test func changesPrintsTheFeedAsJSONLines() throws {
        let dir = TempDir()
        let db = dir.file("feed.db")
        for (id, body) in [("a", #"{"n":1}"#), ("b", #"{"n":2}"#), ("c", #"{"n":3}"#), ("a", #"{"n":4}"#)] {
            #expect(try CLI.run(["put", db, id, body]).code == 0)
        }
        #expect(try CLI.run(["rm", db, "b"]).code == 0)
        #expect(try CLI.run(["put", db, "x", "{}", "--collection", "other"]).code == 0)

        let all = try CLI.run(["changes", db])
        #expect(all.code == 0, "\(all.err)")
        let rows = try all.lines.map(Self.object)
        #expect(rows.map { $0["id"] as? String } == ["c", "a", "b"])
        #expect(rows.map { $0["seq"] as? Int } == [3, 4, 5])
        #expect(rows.map { $0["deleted"] as? Bool } == [false, false, true])
        #expect((rows[1]["rev"] as? String)?.hasPrefix("2-") == true)

        let since = try CLI.run(["changes", db, "--since", "4"])
        #expect(try since.lines.map(Self.object).map { $0["id"] as? String } == ["b"])
        let limited = try CLI.run(["changes", db, "--limit", "2"])
        #expect(limited.lines.count == 2)
        let other = try CLI.run(["changes", db, "--collection", "other"])
        #expect(try other.lines.map(Self.object).map { $0["id"] as? String } == ["x"])

        let help = try CLI.run(["changes", "--help"])
        #expect(help.code == 0 && help.out.hasPrefix("Usage: tessera changes DB"))
        #expect(help.out.contains("--follow"))
        let bad = try CLI.run(["changes", db, "--since", "-3"])
        #expect(bad.code == 2)
        let missing = try CLI.run(["changes", dir.file("nope.db")])
        #expect(missing.code == 1)
        #expect(try CLI.run(["help"]).out.contains("  watch "))
    }

    @Test func changesFollowPrintsCommitsOfOtherProcesses() throws {
        let dir = TempDir()
        let db = dir.file("follow.db")
        #expect(try CLI.run(["put", db, "first", "{}"]).code == 0)
        let follower = try RunningCLI(["changes", db, "--follow"])
        defer { follower.stop() }
        #expect(follower.waitForLines(1), "no first line: \(follower.output.lines)")
        // Written by other processes (each `tessera put` is one).
        #expect(try CLI.run(["put", db, "second", "{}"]).code == 0)
        #expect(follower.waitForLines(2), "the second commit was not printed: \(follower.output.lines)")
        #expect(try CLI.run(["put", db, "first", #"{"again":true}"#]).code == 0)
        #expect(follower.waitForLines(3))
        let rows = try follower.output.lines.map(Self.object)
        #expect(rows.map { $0["id"] as? String } == ["first", "second", "first"])
        #expect(rows.map { $0["seq"] as? Int } == [1, 2, 3])
    }

    @Test func watchPrintsRowsThenDiffs() throws {
        let dir = TempDir()
        let db = dir.file("watch.db")
        #expect(try CLI.run(["put", db, "h1", #"{"name":"Alpha","city":"Paris"}"#]).code == 0)
        #expect(try CLI.run(["put", db, "h2", #"{"name":"Beta","city":"Rome"}"#]).code == 0)
        let watcher = try RunningCLI(["watch", db, "SELECT meta().id, name FROM _ WHERE city = 'Paris' ORDER BY name", "--updates", "2"])
        defer { watcher.stop() }
        #expect(watcher.waitForLines(2), "no initial rows: \(watcher.output.lines)")
        #expect(try CLI.run(["put", db, "h3", #"{"name":"Gamma","city":"Rome"}"#]).code == 0)   // no change of rows
        #expect(try CLI.run(["put", db, "h2", #"{"name":"Beta","city":"Paris"}"#]).code == 0)   // inserted
        #expect(watcher.waitForLines(3))
        #expect(try CLI.run(["rm", db, "h1"]).code == 0)                                        // removed
        #expect(watcher.finish() == 0)
        let lines = watcher.output.lines
        #expect(lines.count == 4, "\(lines)")
        guard lines.count == 4 else { return }
        #expect(try Self.object(lines[0]) as NSDictionary == ["id": "h1", "name": "Alpha"] as NSDictionary)
        #expect(try Self.object(lines[1])["ready"] as? Int == 1)
        let insert = try Self.object(lines[2])
        let inserted = try #require(insert["inserted"] as? [[String: Any]])
        #expect(inserted.count == 1)
        #expect(inserted.first?["key"] as? String == "h2")
        #expect(inserted.first?["index"] as? Int == 1)
        #expect((inserted.first?["row"] as? [String: Any])?["name"] as? String == "Beta")
        #expect((insert["removed"] as? [Any])?.isEmpty == true)
        let remove = try Self.object(lines[3])
        let removed = try #require(remove["removed"] as? [[String: Any]])
        #expect(removed.first?["key"] as? String == "h1")
        #expect((remove["inserted"] as? [Any])?.isEmpty == true)
    }

    @Test func watchReportsQueryErrors() throws {
        let dir = TempDir()
        let db = dir.file("err.db")
        #expect(try CLI.run(["put", db, "a", "{}"]).code == 0)
        let r = try CLI.run(["watch", db, "SELECT FROM"])
        #expect(r.code == 1)
        #expect(r.err.contains("watch"))
    }
}
