import Foundation
import Testing
@testable import Tessera

/// Issue #18 items 5 and 7 on the command line: standard input is imported in bounded memory,
/// and `put`, `import` and the library reject the same input instead of changing it silently.
@Suite("tessera CLI: hostile input")
struct HostileCLITests {
    /// Runs a shell command line (for raw bytes on standard input or in arguments); `$T` is
    /// the tessera executable.
    static func sh(_ script: String) throws -> CLIRun {
        let exe = try #require(CLI.executable)
        return try CLI.run(["__never_used__"], stdin: nil, in: nil, launcher: ["/bin/sh", "-c", script.replacingOccurrences(of: "$T", with: "'\(exe)'")])
    }

    @Test func invalidUTF8IsRejectedByPutAsByImport() throws {
        let tmp = TempDir()
        let db = tmp.file("u.db")
        // On standard input.
        let put = try Self.sh(#"printf '{"a":"\377"}' | $T put '\#(db)' x -"#)
        #expect(put.code == 1 && put.err.contains("not valid UTF-8 (byte 7)"), "\(put.err)")
        let imp = try Self.sh(#"printf '{"a":"\377"}\n' | $T import '\#(db)' -"#)
        #expect(imp.code == 1 && imp.err.contains("UTF-8"), "\(imp.err)")
        // As an argument.
        let arg = try Self.sh(#"$T put '\#(db)' x "$(printf '{"a":"\377"}')""#)
        #expect(arg.code == 2 && arg.err.contains("argument 4 is not valid UTF-8"), "\(arg.err)")
        #expect(try CLI.run(["ls", db]).lines.isEmpty)
    }

    /// Integers past 64 bits and numbers that underflow are errors everywhere, like 1e400.
    @Test func outOfRangeNumbersAreErrorsEverywhere() throws {
        let tmp = TempDir()
        let db = tmp.file("n.db")
        for (json, message) in [(#"{"n": 18446744073709551616}"#, "integer does not fit in 64 bits"),
                                (#"{"n": -9223372036854775809}"#, "integer does not fit in 64 bits"),
                                (#"{"n": 1e-400}"#, "too close to zero"),
                                (#"{"n": 1e400}"#, "out of range")] {
            let put = try CLI.run(["put", db, "x", json])
            #expect(put.code == 1 && put.err.contains(message), "put \(json): \(put.err)")
            let imp = try CLI.run(["import", db, "-"], stdin: json + "\n")
            #expect(imp.code == 1 && imp.err.contains(message), "import \(json): \(imp.err)")
            let library = try Database.temporary()
            #expect(throws: DatabaseError.self) { try library.defaultCollection().save(id: "x", json: json) }
            try library.close()
        }
        // The edges that fit are kept exactly.
        #expect(try CLI.run(["put", db, "ok", #"{"a": 9223372036854775807, "b": -9223372036854775808, "c": 5e-324, "d": 0e-400, "e": 1.5e300}"#]).code == 0)
        let kept = try CLI.run(["cat", db, "ok"]).out
        #expect(kept.contains(#""a":9223372036854775807"#) && kept.contains(#""b":-9223372036854775808"#) && kept.contains("5e-324"), "\(kept)")
    }

    /// 20,000 SELECT items: every row is written in time linear in its columns (the JSON writer
    /// built the row's value array once per column: 11.7 s in a release build).
    @Test func twentyThousandSelectItems() throws {
        let tmp = TempDir()
        let db = tmp.file("wide.db")
        #expect(try CLI.run(["put", db, "x", #"{"price": 7}"#]).code == 0)
        let sql = "SELECT " + (0..<20_000).map { "price AS p\($0)" }.joined(separator: ", ") + " FROM _"
        let started = ContinuousClock.now
        let r = try CLI.run(["query", db, "-", "--format", "jsonl"], stdin: sql)
        let elapsed = ContinuousClock.now - started
        #expect(r.code == 0, "\(r.err)")
        #expect(r.out.hasPrefix(#"{"p0":7,"p1":7"#) && r.out.contains(#""p19999":7}"#))
        #expect(elapsed < .seconds(10), "took \(elapsed)")
    }

    /// Standard input is read a chunk at a time: 20 MB arrive over a pipe, line numbers in an
    /// error stay right past the chunk boundaries, and the import before the bad batch stays.
    @Test func standardInputIsStreamed() throws {
        let tmp = TempDir()
        let db = tmp.file("s.db")
        let lines = 100_000
        // About 200 bytes a line: 20 MB, three chunks.
        let script = #"awk 'BEGIN { for (i = 1; i <= \#(lines); i++) printf "{\"_id\": \"d%d\", \"pad\": \"%0180d\"}\n", i, i }' | $T import '\#(db)' - --batch 5000"#
        let r = try Self.sh(script)
        #expect(r.code == 0, "\(r.err)")
        #expect(r.err.contains("imported 100,000 documents"), "\(r.err)")
        // A bad line far past the first chunk is reported with its own line number.
        let bad = #"awk 'BEGIN { for (i = 1; i <= 60000; i++) { if (i == 55555) print "{oops"; else printf "{\"_id\": \"e%d\", \"pad\": \"%0180d\"}\n", i, i } }' | $T import '\#(db)' - --batch 5000 --collection e"#
        let e = try Self.sh(bad)
        #expect(e.code == 1)
        #expect(e.err.contains("<stdin>:55555:"), "\(e.err)")
        #expect(e.err.contains("documents imported before it"), "\(e.err)")
    }
}
