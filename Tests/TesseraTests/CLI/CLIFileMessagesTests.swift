import Testing
import Foundation

/// What the tool says about files: a full disk during import, special files as input, and
/// document IDs that begin with "-".
@Suite("tessera CLI: file messages", .serialized)
struct CLIFileMessagesTests {
    /// JSON Lines of `count` documents of about 330 bytes.
    static func lines(_ count: Int) -> String {
        (0..<count).map { #"{"_id":"d\#($0)","text":"\#(String(repeating: "x", count: 300))"}"# }.joined(separator: "\n") + "\n"
    }

    @Test func idsThatBeginWithADashGoAfterDoubleDash() throws {
        let tmp = TempDir()
        let db = tmp.file("db")
        #expect(try CLI.run(["put", db, "--", "-Xa9_b", #"{"a":1}"#]).code == 0)
        #expect(try CLI.run(["cat", db, "--", "-Xa9_b"]).out == "{\"a\":1}\n")
        #expect(try CLI.run(["ls", db]).out == "-Xa9_b\n")
        // Without "--" it is an unknown option, and the message says what to do.
        let bare = try CLI.run(["cat", db, "-Xa9_b"])
        #expect(bare.code == 2 && bare.err.contains("unknown option '-Xa9_b'") && bare.err.contains("\"--\""), "\(bare.err)")
        #expect(try CLI.run(["rm", db, "--", "-Xa9_b"]).code == 0)
        #expect(try CLI.run(["cat", db, "--", "-Xa9_b"]).code == 1)
        for command in ["cat", "put", "rm"] {
            let help = try CLI.run([command, "--help"]).out
            #expect(help.contains("tessera \(command) DB -- -"), "\(command): \(help)")
        }
    }

    @Test func specialFilesAreReadAsImportInput() throws {
        let tmp = TempDir()
        let db = tmp.file("db")
        let empty = try CLI.run(["import", db, "/dev/null"])
        #expect(empty.code == 0 && empty.err.contains("imported 0 documents"), "\(empty.err)")
        // Process substitution: the file is /dev/fd/N, a pipe.
        let tessera = try #require(CLI.executable)
        let r = ChildProcess.run("/bin/bash", ["-c", "\"$0\" import \"$1\" <(printf '{\"_id\":\"p1\"}\\n{\"_id\":\"p2\"}\\n')", tessera, db])
        #expect(r.status == 0 && r.err.contains("imported 2 documents"), "\(r)")
        #expect(try CLI.run(["ls", db]).out == "p1\np2\n")
        let missing = try CLI.run(["import", db, tmp.file("nope.jsonl")])
        #expect(missing.code == 1 && missing.err.contains("No such file"), "\(missing.err)")
        let dir = try CLI.run(["import", db, tmp.path])
        #expect(dir.code == 1 && dir.err.contains("is a directory"), "\(dir.err)")
    }

    /// A write that fails mid-import (here: the file-size limit of `ulimit -f`, with SIGXFSZ
    /// ignored, so LMDB's write comes up short) says how many documents were committed and
    /// where the batch that was not begins; the database stays consistent.
    @Test func aFailedWriteSaysWhatWasCommitted() throws {
        let tmp = TempDir()
        let db = tmp.file("db")
        let input = try tmp.write("in.jsonl", Self.lines(6000))
        let tessera = try #require(CLI.executable)
        let r = ChildProcess.run("/bin/bash", ["-c", "trap '' XFSZ; ulimit -f 1024; exec \"$0\" import \"$1\" \"$2\" --batch 1000", tessera, db, input])
        #expect(r.status == 1, "\(r)")
        let pattern = #/([\d,]+) documents committed, the batch starting at (.+):(\d+) was not/#
        let match = try #require(r.err.firstMatch(of: pattern), "\(r.err)")
        let committed = Int(match.1.filter { $0 != "," })!
        #expect(committed % 1000 == 0 && committed < 6000)
        #expect(String(match.2) == input && Int(match.3)! == committed + 1)
        let check = try CLI.run(["check", db])
        #expect(check.code == 0 && check.out.contains("ok: \(match.1) document"), "\(check.out)")
    }

    /// A full file system (a 2 MB tmpfs, when this process may mount one): "disk full".
    @Test func aFullDiskIsReportedAsSuch() throws {
        let tmp = TempDir()
        let mountPoint = tmp.file("small")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
        let mounted = ChildProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", mountPoint])
        guard mounted.status == 0 else { return }  // not allowed here: covered by the test above
        defer { _ = ChildProcess.run("/bin/umount", [mountPoint]) }
        let input = try tmp.write("in.jsonl", Self.lines(20_000))
        let r = try CLI.run(["import", mountPoint + "/db", input, "--batch", "1000"])
        #expect(r.code == 1)
        #expect(r.err.contains("disk full; ") && r.err.contains("documents committed, the batch starting at \(input):"), "\(r.err)")
        #expect(try CLI.run(["check", mountPoint + "/db"]).code == 0)
    }
}
