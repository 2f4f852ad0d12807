import Foundation
import Testing

/// A demo database shared by the read-only tests (built once with `tessera demo --keep`).
private enum SharedDemo {
    static let dir = TempDir()
    static let path: String? = {
        // Static storage is never deinitialized: remove the directory when the process exits.
        atexit { try? FileManager.default.removeItem(atPath: SharedDemo.dir.path) }
        let db = dir.file("demo.db")
        guard let r = try? CLI.run(["demo", "--keep", db]), r.code == 0 else { return nil }
        return db
    }()

    static func require() throws -> String {
        try #require(path, "tessera demo --keep failed to build the shared database")
    }
}

@Suite("tessera CLI: help and usage")
struct CLIHelpTests {
    static let commands = ["demo", "import", "query", "explain", "advise", "index create", "index list", "index drop", "ls", "cat",
                           "put", "rm", "collections", "check", "stats", "changes", "watch", "shell", "conformance"]

    @Test func overviewListsEveryCommand() throws {
        let r = try CLI.run(["help"])
        #expect(r.code == 0)
        for c in Self.commands { #expect(r.out.contains("  " + c + " "), "missing \(c)") }
        #expect(r.out.contains("Exit codes: 0 ok, 1 query or data error, 2 usage error"))
    }

    @Test func noArgumentsIsAUsageError() throws {
        let r = try CLI.run([])
        #expect(r.code == 2)
        #expect(r.out.isEmpty)
        #expect(r.err.contains("Usage: tessera COMMAND"))
    }

    @Test(arguments: commands)
    func everyCommandHasHelp(_ command: String) throws {
        let words = command.split(separator: " ").map(String.init)
        let r = try CLI.run(words + ["--help"])
        #expect(r.code == 0)
        #expect(r.out.hasPrefix("Usage: tessera \(command)"))
        let viaHelp = try CLI.run(["help"] + words)
        #expect(viaHelp.code == 0)
        #expect(viaHelp.out == r.out)
    }

    @Test func queryHelpDescribesOptions() throws {
        let r = try CLI.run(["query", "-h"])
        for o in ["--param NAME=VALUE", "--params JSON", "--format F", "--explain", "--time", "--repeat N"] {
            #expect(r.out.contains(o), "missing \(o)")
        }
    }

    @Test func unknownCommandAndOptions() throws {
        let a = try CLI.run(["frobnicate"])
        #expect(a.code == 2)
        #expect(a.err.contains("unknown command 'frobnicate'"))
        let b = try CLI.run(["ls", "x.db", "--bogus"])
        #expect(b.code == 2)
        #expect(b.err.contains("unknown option '--bogus'"))
        #expect(b.err.contains("Usage: tessera ls DB"))
        let c = try CLI.run(["index"])
        #expect(c.code == 2)
        let d = try CLI.run(["index", "rebuild", "x.db"])
        #expect(d.code == 2)
        #expect(d.err.contains("unknown index subcommand 'rebuild'"))
        let e = try CLI.run(["cat", "x.db"])
        #expect(e.code == 2)
        #expect(e.err.contains("missing operand"))
        let f = try CLI.run(["rm", "x.db", "a", "b"])
        #expect(f.code == 2)
        #expect(f.err.contains("unexpected operand 'b'"))
        let g = try CLI.run(["ls", "x.db", "--limit"])
        #expect(g.code == 2)
        #expect(g.err.contains("--limit needs a value"))
    }

    @Test func missingDatabaseIsADataError() throws {
        let tmp = TempDir()
        let r = try CLI.run(["query", tmp.file("nope.db"), "SELECT 1 FROM _"])
        #expect(r.code == 1)
        #expect(r.err.contains("no database at"))
        #expect(!FileManager.default.fileExists(atPath: tmp.file("nope.db")), "a read command must not create the database")
    }
}

@Suite("tessera CLI: demo")
struct CLIDemoTests {
    @Test func demoRunsEveryExample() throws {
        let r = try CLI.run(["demo"])
        #expect(r.code == 0)
        let headings = r.lines.filter { $0.hasPrefix("── ") }
        #expect(headings.count >= 12)
        #expect(r.lines.filter { $0 == "plan:" }.count + r.lines.filter { $0.hasPrefix("ERROR: ") }.count == headings.count)
        #expect(r.out.contains("SEARCH travel USING INDEX TypeNameIndex (type=? AND name=?)"))
        #expect(r.out.contains("SEARCH travel USING INDEX HotelCityIndex (city=?)"))
        #expect(r.out.contains("COVERING INDEX TypeNameIndex"))
        #expect(r.out.contains("MATCH(HotelDescIndex"))
        #expect(r.out.contains("UNNEST"))
        #expect(r.out.contains("JOIN"))
        #expect(r.out.contains("GROUP BY"))
        #expect(r.out.contains("time: "))
    }

    @Test func demoKeepsTheDatabase() throws {
        let db = try SharedDemo.require()
        let r = try CLI.run(["collections", db, "--counts"])
        #expect(r.code == 0)
        #expect(r.out.contains("_default.travel"))
        #expect(r.out.contains("_default.profiles"))
        let list = try CLI.run(["index", "list", db])
        for name in ["TypeNameIndex", "HotelCityIndex", "nestedArray", "likesIndex", "HotelDescIndex"] {
            #expect(list.out.contains(name), "missing index \(name)")
        }
        #expect(list.out.contains("value (city) WHERE type = 'hotel'"))
        #expect(list.out.contains("array contacts[].phones (type)"))
        #expect(list.out.contains("fulltext (description)"))
        let again = try CLI.run(["demo", "--keep", db])
        #expect(again.code == 1)
        #expect(again.err.contains("already exists"))
    }
}

@Suite("tessera CLI: query and explain")
struct CLIQueryTests {
    let sql = "SELECT name, faa FROM travel WHERE type = 'airport' AND state = 'Texas' ORDER BY name"

    @Test func pipedOutputIsJSONLinesInColumnOrder() throws {
        let db = try SharedDemo.require()
        let r = try CLI.run(["query", db, sql])
        #expect(r.code == 0)
        #expect(r.lines == [#"{"name":"Austin Airport","faa":"AUS"}"#, #"{"name":"Dallas Airport","faa":"DFW"}"#,
                            #"{"name":"Houston Airport","faa":"IAH"}"#])
    }

    @Test func jsonCSVAndTableFormats() throws {
        let db = try SharedDemo.require()
        let json = try CLI.run(["query", db, sql, "--format", "json"])
        let rows = try #require(try jsonObject(json.out) as? [[String: Any]])
        #expect(rows.map { $0["faa"] as? String } == ["AUS", "DFW", "IAH"])
        let csv = try CLI.run(["query", db, sql, "--format=csv"])
        #expect(csv.lines == ["name,faa", "Austin Airport,AUS", "Dallas Airport,DFW", "Houston Airport,IAH"])
        let table = try CLI.run(["query", db, sql, "--format", "table"])
        #expect(table.lines.first == " name            | faa")
        #expect(table.lines[1].hasPrefix("-----"))
        #expect(table.lines.contains(" Dallas Airport  | DFW"))
        #expect(table.lines.last == "(3 rows)")
        let empty = try CLI.run(["query", db, "SELECT name FROM travel WHERE type = 'castle'", "--format", "json"])
        #expect(empty.out == "[]\n")
    }

    @Test func csvQuotesAndNulls() throws {
        let db = try SharedDemo.require()
        let r = try CLI.run(["query", db, "SELECT 'a,b' AS x, NULL AS n, [1, \"q\"] AS arr, \"say \"\"hi\"\"\" AS s FROM travel LIMIT 1", "--format", "csv"])
        #expect(r.code == 0)
        #expect(r.lines == ["x,n,arr,s", #""a,b",,"[1,""q""]","say ""hi""""#])
    }

    @Test func parametersParseAsJSONOrString() throws {
        let db = try SharedDemo.require()
        let q = "SELECT COUNT(*) AS n FROM travel WHERE type = 'hotel' AND city = $city AND price <= $max"
        let a = try CLI.run(["query", db, q, "--param", "city=Seattle", "--param", "$max=1000"])
        let b = try CLI.run(["query", db, q, "--params", #"{"city": "Seattle", "max": 1000}"#])
        #expect(a.code == 0 && b.code == 0)
        #expect(a.out == b.out)
        let n = try #require((try jsonObject(a.out) as? [String: Any])?["n"] as? Int)
        #expect(n > 0)
        let typeOf = "SELECT TYPE($v) AS t FROM travel LIMIT 1"
        for (arg, type) in [("12", "number"), ("2.5", "number"), ("abc", "string"), (#""12""#, "string"),
                            ("true", "boolean"), ("[1, 2]", "array"), (#"{"a": 1}"#, "object"), ("", "string")] {
            let r = try CLI.run(["query", db, typeOf, "--param", "v=" + arg])
            #expect(r.out == #"{"t":"\#(type)"}"# + "\n", "--param v=\(arg)")
        }
        let unknown = try CLI.run(["query", db, q, "--param", "town=Paris"])
        #expect(unknown.code == 1)
        #expect(unknown.err.contains("unknown parameter '$town'"))
        let bad = try CLI.run(["query", db, q, "--param", "city"])
        #expect(bad.code == 2)
        let badJSON = try CLI.run(["query", db, q, "--params", "[1]"])
        #expect(badJSON.code == 2)
        #expect(badJSON.err.contains("--params must be a JSON object"))
    }

    @Test func syntaxErrorShowsTheLineAndACaret() throws {
        let db = try SharedDemo.require()
        let r = try CLI.run(["query", db, "SELECT name\nFROM travel WHER type = 'hotel'"])
        #expect(r.code == 1)
        #expect(r.out.isEmpty)
        let lines = r.err.split(separator: "\n").map(String.init)
        // WHER reads as an alias, so the error is at 'type'.
        #expect(lines[0].hasPrefix("tessera query: syntax error at line 2, column 18"))
        #expect(lines[0].contains("(near 'type')"))
        #expect(lines[1] == "  FROM travel WHER type = 'hotel'")
        #expect(lines[2] == "  " + String(repeating: " ", count: 17) + "^")
        let semantic = try CLI.run(["query", db, "SELECT nosuch(name) FROM travel"])
        #expect(semantic.code == 1)
        #expect(semantic.err.contains("semantic error"))
        #expect(semantic.err.contains("unknown function"))
    }

    @Test func explainTimeAndRepeatGoToStderr() throws {
        let db = try SharedDemo.require()
        let q = "SELECT name FROM travel WHERE type = 'hotel' AND city = 'Austin'"
        let r = try CLI.run(["query", db, q, "--explain", "--time"])
        #expect(r.code == 0)
        #expect(!r.out.contains("SEARCH"))
        #expect(r.err.contains("-- SEARCH travel USING INDEX HotelCityIndex (city=?)"))
        #expect(r.err.contains(" rows in ") || r.err.contains(" row in "))
        let rep = try CLI.run(["query", db, q, "--repeat", "3"])
        #expect(rep.code == 0)
        #expect(rep.err.contains("3 runs,"))
        #expect(rep.err.contains("min ") && rep.err.contains("median ") && rep.err.contains("max "))
        #expect(rep.lines.count == r.lines.count)
        let zero = try CLI.run(["query", db, q, "--repeat", "0"])
        #expect(zero.code == 2)
    }

    @Test func queryTextFromStdin() throws {
        let db = try SharedDemo.require()
        let r = try CLI.run(["query", db, "-"], stdin: "SELECT COUNT(*) AS n FROM profiles")
        #expect(r.out == #"{"n":200}"# + "\n")
    }

    @Test func explainCommand() throws {
        let db = try SharedDemo.require()
        let r = try CLI.run(["explain", db, "SELECT name FROM travel WHERE type = 'landmark' ORDER BY name LIMIT 3"])
        #expect(r.code == 0)
        #expect(r.lines.first?.hasPrefix("SEARCH travel USING") == true)
        #expect(r.out.contains("TypeNameIndex"))
        #expect(r.out.contains("LIMIT 3"))
        let scan = try CLI.run(["explain", db, "SELECT name FROM travel WHERE city = $c", "--param", "c=Austin"])
        #expect(scan.lines.first == "SCAN travel")
        let err = try CLI.run(["explain", db, "SELECT FROM"])
        #expect(err.code == 1)
        #expect(err.err.contains("syntax error"))
    }
}

@Suite("tessera CLI: query diagnostics")
struct CLIDiagnosticsTests {
    @Test func explainAnalyzeAddsFiguresAndNotUsed() throws {
        let db = try SharedDemo.require()
        let r = try CLI.run(["explain", db, "SELECT name FROM travel WHERE type = 'hotel' AND city = 'Ann Arbor'", "--analyze"])
        #expect(r.code == 0)
        #expect(r.lines.first?.hasPrefix("SEARCH travel USING INDEX HotelCityIndex (city=?) [estimated ") == true)
        #expect(r.lines.first?.contains("read 10 rows in 1 loop, 11 index entries, 10 documents, ") == true)
        #expect(r.lines.contains { $0.hasPrefix("RESULT 10 rows in ") && $0.hasSuffix(" ms") })
        #expect(r.lines.contains("NOT USED:"))
        #expect(r.lines.contains("  HotelDescIndex: a full-text index is used only by MATCH(HotelDescIndex, …) in the WHERE clause"))
        let shell = try CLI.run(["shell", db], stdin: ".explain analyze SELECT name FROM travel WHERE type = 'hotel' AND city = 'Ann Arbor'\n")
        #expect(shell.lines.first?.hasPrefix("SEARCH travel USING INDEX HotelCityIndex (city=?) [estimated ") == true)
        #expect(shell.lines.contains { $0.hasPrefix("RESULT 10 rows in ") })
    }

    @Test func adviseOneQueryAndALog() throws {
        let source = try SharedDemo.require()
        let tmp = TempDir()
        let db = tmp.file("advise.db")
        try FileManager.default.copyItem(atPath: source, toPath: db)
        let sql = "SELECT name, city FROM travel WHERE type = 'landmark' AND state = 'Texas' ORDER BY name LIMIT 5"
        let r = try CLI.run(["advise", db, sql])
        #expect(r.code == 0)
        #expect(r.lines == [
            #"index travel_type_state_name on _default.travel: ValueIndexConfiguration(["type", "state", "name"])"#,
            "  estimated rows read: 20 now, 5 with this index",
            "  create: tessera index create '\(db)' travel_type_state_name --collection travel --value 'type, state, name'",
        ])
        // Nothing was created; the printed command creates the index, which the plan then uses.
        #expect(try CLI.run(["index", "list", db]).out.contains("travel_type_state_name") == false)
        #expect(try CLI.run(["index", "create", db, "travel_type_state_name", "--collection", "travel", "--value", "type, state, name"]).code == 0)
        #expect(try CLI.run(["explain", db, sql]).lines.first == "SEARCH travel USING INDEX travel_type_state_name (type=? AND state=?)")
        #expect(try CLI.run(["advise", db, sql]).lines == ["No index would make this query read fewer rows."])

        let log = tmp.file("queries.sql")
        try """
            # hotels by state
            SELECT name FROM travel WHERE state = 'Ohio'
            SELECT name FROM travel WHERE state = 'Texas'
            -- airports
            SELECT name FROM travel WHERE faa = 'AUS'
            """.write(toFile: log, atomically: true, encoding: .utf8)
        let ranked = try CLI.run(["advise", db, "--log", log])
        #expect(ranked.code == 0)
        #expect(ranked.lines.first?.hasPrefix("1. index travel_state on _default.travel: ValueIndexConfiguration([\"state\"])") == true)
        #expect(ranked.lines.contains { $0.hasPrefix("  helps 2 queries, ") })
        #expect(ranked.lines.contains { $0.hasPrefix("2. index travel_faa on _default.travel") })
        let bad = try CLI.run(["advise", db])
        #expect(bad.code == 2)
    }
}

@Suite("tessera CLI: documents")
struct CLIDocumentTests {
    @Test func putCatLsRm() throws {
        let tmp = TempDir()
        let db = tmp.file("docs.db")
        #expect(try CLI.run(["put", db, "b", #"{"n": 2, "tags": ["x"]}"#]).code == 0)
        #expect(try CLI.run(["put", db, "a", #"{"n": 1}"#]).code == 0)
        #expect(try CLI.run(["put", db, "c", "-"], stdin: #"{"n": 3}"#).code == 0)
        #expect(try CLI.run(["ls", db]).lines == ["a", "b", "c"])
        #expect(try CLI.run(["ls", db, "--limit", "2"]).lines == ["a", "b"])
        #expect(try CLI.run(["cat", db, "b"]).out == #"{"n":2,"tags":["x"]}"# + "\n")
        let meta = try #require(try jsonObject(try CLI.run(["cat", db, "b", "--meta"]).out) as? [String: Any])
        #expect(meta["id"] as? String == "b")
        #expect(meta["revisionID"] is String)
        #expect(try CLI.run(["rm", db, "b"]).code == 0)
        #expect(try CLI.run(["ls", db]).lines == ["a", "c"])
        let again = try CLI.run(["rm", db, "b"])
        #expect(again.code == 1)
        #expect(again.err.contains("no document 'b'"))
        let missing = try CLI.run(["cat", db, "zz"])
        #expect(missing.code == 1)
        #expect(missing.err.contains("no document 'zz' in collection _default._default"))
    }

    @Test func putErrorsSayWhatAndWhere() throws {
        let tmp = TempDir()
        let db = tmp.file("docs.db")
        let bad = try CLI.run(["put", db, "x", "{\"a\": 1,\n \"b\": }"])
        #expect(bad.code == 1)
        #expect(bad.err.contains("line 2, column 7"))
        let array = try CLI.run(["put", db, "x", "[1, 2]"])
        #expect(array.code == 1)
        #expect(array.err.contains("must be a JSON object"))
        let reserved = try CLI.run(["put", db, "x", #"{"_deleted": true}"#])
        #expect(reserved.code == 1)
        #expect(reserved.err.contains("'_deleted' is reserved"))
    }

    @Test func collectionsAndScopes() throws {
        let tmp = TempDir()
        let db = tmp.file("docs.db")
        #expect(try CLI.run(["put", db, "h1", #"{"a": 1}"#, "--collection", "inventory.hotels"]).code == 0)
        #expect(try CLI.run(["put", db, "p1", #"{"a": 1}"#, "--collection", "people"]).code == 0)
        #expect(try CLI.run(["collections", db]).lines == ["_default._default", "_default.people", "inventory.hotels"])
        #expect(try CLI.run(["ls", db, "--collection", "inventory.hotels"]).lines == ["h1"])
        #expect(try CLI.run(["cat", db, "p1", "--collection", "_default.people"]).code == 0)
        let none = try CLI.run(["ls", db, "--collection", "nope"])
        #expect(none.code == 1)
        #expect(none.err.contains("no collection 'nope'"))
        let bad = try CLI.run(["put", db, "x", "{}", "--collection", "_bad"])
        #expect(bad.code == 1)
        #expect(bad.err.contains("must not start with '_'"))
    }

    @Test func lsBodiesRoundTripsThroughImport() throws {
        let db = try SharedDemo.require()
        let tmp = TempDir()
        let dump = try CLI.run(["ls", db, "--collection", "profiles", "--bodies"])
        #expect(dump.lines.count == 200)
        let file = try tmp.write("profiles.jsonl", dump.out)
        let copy = tmp.file("copy.db")
        let imp = try CLI.run(["import", copy, file])
        #expect(imp.code == 0)
        #expect(try CLI.run(["ls", copy, "--bodies"]).out == dump.out)
    }
}

@Suite("tessera CLI: import")
struct CLIImportTests {
    @Test func jsonLinesWithIDsAndGeneratedIDs() throws {
        let tmp = TempDir()
        let file = try tmp.write("d.jsonl", "{\"_id\": \"a\", \"x\": 1}\n\n{\"x\": 2}\r\n{\"_id\": 7, \"x\": 3}\n")
        let db = tmp.file("i.db")
        let r = try CLI.run(["import", db, file])
        #expect(r.code == 0)
        #expect(r.err.contains("imported 3 documents from 1 file into _default._default"))
        #expect(r.err.contains("docs/s"))
        let ids = try CLI.run(["ls", db]).lines
        #expect(ids.count == 3)
        #expect(ids.contains("a") && ids.contains("7"))
        let generated = try #require(ids.first { $0 != "a" && $0 != "7" })
        #expect(generated.hasPrefix("-") && generated.count == 23)
        #expect(try CLI.run(["cat", db, "a"]).out == #"{"x":1}"# + "\n")
    }

    @Test func jsonArrayAndIDFieldAndStdin() throws {
        let tmp = TempDir()
        let file = try tmp.write("d.json", #"  [{"key": "k1", "v": 1}, {"key": "k2", "v": 2}]"#)
        let db = tmp.file("i.db")
        #expect(try CLI.run(["import", db, file, "--id-field", "key", "--collection", "s.c"]).code == 0)
        #expect(try CLI.run(["ls", db, "--collection", "s.c"]).lines == ["k1", "k2"])
        #expect(try CLI.run(["cat", db, "k2", "--collection", "s.c"]).out == #"{"v":2}"# + "\n")
        let piped = try CLI.run(["import", db, "-"], stdin: #"{"_id": "z", "v": 9}"# + "\n")
        #expect(piped.code == 0)
        #expect(try CLI.run(["ls", db]).lines == ["z"])
    }

    @Test func malformedLineRollsBackItsBatchOnly() throws {
        let tmp = TempDir()
        var text = ""
        for i in 1...5 { text += #"{"_id": "d\#(i)", "n": \#(i)}"# + "\n" }
        text += #"{"_id": "d6", "n": 6,}"# + "\n"
        text += #"{"_id": "d7", "n": 7}"# + "\n"
        let file = try tmp.write("bad.jsonl", text)
        let db = tmp.file("i.db")
        let r = try CLI.run(["import", db, file, "--batch", "2"])
        #expect(r.code == 1)
        #expect(r.err.contains("bad.jsonl:6:22: trailing comma is not allowed"))
        #expect(r.err.contains("4 documents imported before it"))
        // Batches [d1 d2] [d3 d4] committed; [d5 d6] rolled back as a whole.
        #expect(try CLI.run(["ls", db]).lines == ["d1", "d2", "d3", "d4"])
    }

    /// The default batch follows the IDs' order: 10,000 documents while they ascend (each
    /// batch appended after the last), 100,000 from the first ID out of order on (one large
    /// transaction is written in ID order). A malformed line shows where the batches ended.
    @Test(arguments: [("ascending", 10_000), ("out of order", 0), ("out of order, --batch 1000", 14_000),
                      ("ascending, then out of order", 10_000)])
    func defaultBatchFollowsTheIDOrder(order: String, committed: Int) throws {
        let tmp = TempDir()
        var ids = (0..<15_000).map { String(format: "k%06d", $0) }
        if order.hasPrefix("out of order") {
            // A fixed permutation (7,919 is prime to 15,000).
            ids = (0..<15_000).map { ids[($0 * 7_919) % 15_000] }
        } else if order.hasSuffix("then out of order") {
            // In order across the first batch, then one ID lower than the one before it.
            ids.swapAt(12_000, 12_001)
        }
        var text = ""
        for (i, id) in ids.enumerated() where i < 14_999 { text += #"{"_id": "\#(id)", "n": \#(i)}"# + "\n" }
        text += #"{"_id": "bad", "n": }"# + "\n"
        let file = try tmp.write("d.jsonl", text)
        let db = tmp.file("i.db")
        var args = ["import", db, file]
        if order.hasSuffix("--batch 1000") { args += ["--batch", "1000"] }
        let r = try CLI.run(args)
        #expect(r.code == 1)
        #expect(r.err.contains("d.jsonl:15000:"))
        let count = committed == 0 ? "0" : "\(committed / 1000),000"
        #expect(r.err.contains("\(count) documents imported before it"), "\(r.err)")
        #expect(try CLI.run(["ls", db]).lines.count == committed)
    }

    @Test func badDocumentsAreReportedWithTheirPlace() throws {
        let tmp = TempDir()
        let db = tmp.file("i.db")
        let notObject = try tmp.write("a.jsonl", "{\"_id\": \"a\"}\n[1]\n")
        let r1 = try CLI.run(["import", db, notObject])
        #expect(r1.code == 1)
        #expect(r1.err.contains("a.jsonl:2:1: expected a JSON object, found array"))
        let badID = try tmp.write("b.jsonl", #"{"_id": true}"#)
        let r2 = try CLI.run(["import", db, badID])
        #expect(r2.err.contains("b.jsonl:1: '_id' must be a string or an integer, not boolean"))
        let reserved = try tmp.write("c.jsonl", #"{"_id": "x", "_rev": "1-a"}"#)
        let r3 = try CLI.run(["import", db, reserved])
        #expect(r3.err.contains("c.jsonl:1: document 'x': top-level key '_rev' is reserved"))
        let arrayElement = try tmp.write("d.json", #"[{"_id": "a"}, 5]"#)
        let r4 = try CLI.run(["import", db, arrayElement])
        #expect(r4.err.contains("d.json: element 2: expected a JSON object, found number"))
        let brokenArray = try tmp.write("e.json", "[{\"_id\": \"a\"},\n {\"b\": tru}]")
        let r5 = try CLI.run(["import", db, brokenArray])
        #expect(r5.code == 1)
        #expect(r5.err.contains("e.json:2:"))
        #expect(try CLI.run(["ls", db]).lines.isEmpty)
        let missing = try CLI.run(["import", db, tmp.file("none.jsonl")])
        #expect(missing.code == 1)
        #expect(missing.err.contains("No such file"))
        #expect(try CLI.run(["import", db, notObject, "--batch", "x"]).code == 2)
    }

    /// The parser thread runs thousands of lines ahead of the writer: a bad line far into
    /// the file still stops the import at its own batch, with its own line and column, and
    /// every batch before it stays whole; generated IDs and revisions are as without it.
    @Test func theParserThreadRunsAheadOfTheWriter() throws {
        let tmp = TempDir()
        func lines(_ count: Int, bad: Int?, badLine: String = #"{"_id": "bad", "x": tru}"#) -> String {
            var text = ""
            for i in 1...count {
                if i == bad { text += badLine + "\n"; continue }
                // Every seventh document has no ID (one is generated), every 500th line is blank.
                text += i % 7 == 0 ? #"{"x": \#(i)}"# : #"{"_id": "d\#(i)", "x": \#(i)}"#
                text += i % 500 == 0 ? "\n\n" : "\n"
            }
            return text
        }
        // Line 25,001 is the bad one: 49 blank lines came before it (after each 500th document).
        let bad = try tmp.write("bad.jsonl", lines(30_000, bad: 24_952))
        let db = tmp.file("p.db")
        let r = try CLI.run(["import", db, bad, "--batch", "700"])
        #expect(r.code == 1)
        #expect(r.err.contains("bad.jsonl:25001:"), "\(r.err)")
        // 24,950 good documents came before it: 35 whole batches of 700 (24,500) stayed.
        #expect(r.err.contains("24,500 documents imported before it"), "\(r.err)")
        let ids = try CLI.run(["ls", db]).lines
        #expect(ids.count == 24_500)
        #expect(Set(ids).count == 24_500)
        #expect(ids.contains("d24499") && !ids.contains("d24501"))
        #expect(try CLI.run(["check", db]).code == 0)

        // Reserved keys and IDs of the wrong type deep in the file stop it the same way.
        let reserved = try tmp.write("r.jsonl", lines(5_000, bad: 4_321, badLine: #"{"_id": "r", "_deleted": true}"#))
        let r2 = try CLI.run(["import", tmp.file("r.db"), reserved, "--batch", "1000"])
        #expect(r2.err.contains("r.jsonl:4329: document 'r': top-level key '_deleted' is reserved"), "\(r2.err)")
        #expect(r2.err.contains("4,000 documents imported before it"), "\(r2.err)")
        let badID = try tmp.write("i.jsonl", lines(5_000, bad: 2_001, badLine: #"{"_id": [1], "x": 0}"#))
        let r3 = try CLI.run(["import", tmp.file("i.db"), badID, "--batch", "1000"])
        #expect(r3.err.contains("i.jsonl:2005: '_id' must be a string or an integer, not array"), "\(r3.err)")
        #expect(r3.err.contains("2,000 documents imported before it"), "\(r3.err)")

        // A whole file, imported twice: the second import gives every named document its
        // second revision (and 4,285 more generated IDs).
        let good = try tmp.write("good.jsonl", lines(30_000, bad: nil))
        let whole = tmp.file("w.db")
        #expect(try CLI.run(["import", whole, good, "--batch", "999"]).err.contains("imported 30,000 documents"))
        #expect(try CLI.run(["import", whole, good]).err.contains("imported 30,000 documents"))
        #expect(try CLI.run(["query", whole, "SELECT count(*) AS n FROM _"]).out == #"{"n":34285}"# + "\n")
        let revs = try CLI.run(["query", whole, "SELECT meta().revisionID AS r FROM _ WHERE meta().id = 'd29999'"])
        #expect(revs.out.hasPrefix(#"{"r":"2-"#), "\(revs.out)")
        #expect(try CLI.run(["check", whole]).code == 0)
    }

    /// Regression: the engine re-runs a batch after growing its memory map; an import
    /// batch must then start again from its first line, or documents are lost.
    @Test func batchRerunAfterMapGrowthLosesNothing() throws {
        let tmp = TempDir()
        let filler = String(repeating: "x", count: 10_000)
        var text = ""
        for i in 0..<2400 { text += #"{"_id": "d\#(i)", "s": "\#(filler)"}"# + "\n" }
        let file = try tmp.write("big.jsonl", text)
        let db = tmp.file("g.db")
        // Inside the shell the database is opened with the default 16 MiB map, which this
        // 24 MB input outgrows in the middle of a batch.
        let r = try CLI.run(["shell", db], stdin: ".import \(file) --batch 500\nSELECT COUNT(*) AS n FROM _;\n")
        #expect(r.code == 0)
        #expect(r.out == #"{"n":2400}"# + "\n")
    }

    /// `--batch N` into full-text indexes that have blocks: each batch is one of the parser's
    /// runs (its segment made on the parser's thread). What is stored answers as an import in
    /// one batch does, through segments, their merges (past `segmentLimit` batches), and a
    /// batch that replaces documents.
    @Test func smallBatchesIntoFullTextIndexes() throws {
        let tmp = TempDir()
        let words = ["amber", "birch", "cedar", "dune", "ember", "fjord", "glade", "heath", "running", "nights"]
        var r = SeededRandom(seed: 5)
        func line(_ id: String) -> String {
            let text = (0..<(2 + r.int(8))).map { _ in words[r.int(words.count)] }.joined(separator: " ")
            return #"{"_id": "\#(id)", "body": "\#(text)", "title": "\#(words[r.int(words.count)])"}"#
        }
        let first = (0..<60).map { line("a\($0)") }.joined(separator: "\n")
        // 45 batches of 7, the last short, then replacements of earlier documents.
        let more = ((0..<310).map { line("b\($0)") } + (0..<20).map { line("a\($0 * 3)") }).joined(separator: "\n")
        let (firstFile, moreFile) = (try tmp.write("first.jsonl", first), try tmp.write("more.jsonl", more))
        var results: [[String]] = []
        for batch in [nil, "7"] {
            let db = tmp.file("ft\(batch ?? "").db")
            #expect(try CLI.run(["import", db, firstFile]).code == 0)
            #expect(try CLI.run(["index", "create", db, "T", "--fulltext", "body", "--language", "en"]).code == 0)
            #expect(try CLI.run(["index", "create", db, "TT", "--fulltext", "body, title"]).code == 0)
            let imported = try CLI.run(["import", db, moreFile] + (batch.map { ["--batch", $0] } ?? []))
            #expect(imported.code == 0, "\(imported.err)")
            #expect(try CLI.run(["check", db]).code == 0)
            var out: [String] = []
            for (index, q) in [("T", "run"), ("T", "amber birch"), ("TT", "\"dune ember\""), ("TT", "glade OR fjord")] {
                let rows = try CLI.run(["query", db, "SELECT meta().id AS id FROM _ WHERE match(\(index), '\(q)') ORDER BY meta().id", "--format", "csv"])
                #expect(rows.code == 0, "\(rows.err)")
                out.append(rows.lines.joined(separator: ","))
            }
            results.append(out)
        }
        #expect(results[0] == results[1])
        #expect(results[0].allSatisfy { $0.split(separator: ",").count > 10 })
    }

    @Test func importThenIndexThenQuery() throws {
        let tmp = TempDir()
        var text = ""
        for i in 0..<300 { text += #"{"_id": "p\#(i)", "kind": "\#(i % 3 == 0 ? "a" : "b")", "n": \#(i)}"# + "\n" }
        let file = try tmp.write("p.jsonl", text)
        let db = tmp.file("i.db")
        #expect(try CLI.run(["import", db, file]).code == 0)
        #expect(try CLI.run(["index", "create", db, "KindIdx", "--value", "kind, n"]).code == 0)
        let plan = try CLI.run(["explain", db, "SELECT n FROM _ WHERE kind = 'a' AND n < 30"])
        #expect(plan.out.contains("KindIdx"))
        let rows = try CLI.run(["query", db, "SELECT n FROM _ WHERE kind = 'a' AND n < 30 ORDER BY n", "--format", "csv"])
        #expect(rows.lines == ["n"] + stride(from: 0, to: 30, by: 3).map(String.init))
    }
}

@Suite("tessera CLI: indexes, check, stats")
struct CLIIndexTests {
    func database(_ tmp: TempDir) throws -> String {
        let db = tmp.file("x.db")
        let text = (0..<20).map { #"{"_id": "d\#($0)", "type": "\#($0 % 2 == 0 ? "hotel" : "inn")", "city": "c\#($0 % 4)", "tags": ["t\#($0 % 3)"], "text": "quiet rooms \#($0)"}"# }.joined(separator: "\n")
        #expect(try CLI.run(["import", db, try tmp.write("x.jsonl", text)]).code == 0)
        return db
    }

    @Test func createListDropEveryKind() throws {
        let tmp = TempDir()
        let db = try database(tmp)
        #expect(try CLI.run(["index", "create", db, "V", "--value", "lower(city), type"]).code == 0)
        #expect(try CLI.run(["index", "create", db, "P", "--value", "city", "--where", "type = 'hotel'"]).code == 0)
        #expect(try CLI.run(["index", "create", db, "A", "--array", "tags"]).code == 0)
        #expect(try CLI.run(["index", "create", db, "F", "--fulltext", "text", "--language", "fr", "--ignore-accents"]).code == 0)
        let list = try CLI.run(["index", "list", db])
        #expect(list.lines == [
            "_default._default  A  array tags",
            "_default._default  F  fulltext (text) language=fr ignoreAccents",
            "_default._default  P  value (city) WHERE type = 'hotel'",
            "_default._default  V  value (lower(city), type)",
        ])
        #expect(try CLI.run(["explain", db, "SELECT city FROM _ WHERE type = 'hotel' AND city = 'c0'"]).out.contains("INDEX P (city=?)"))
        #expect(try CLI.run(["index", "drop", db, "P"]).code == 0)
        #expect(!(try CLI.run(["index", "list", db]).out.contains(" P ")))
        let again = try CLI.run(["index", "drop", db, "P"])
        #expect(again.code == 1)
        #expect(again.err.contains("no index 'P'"))
    }

    @Test func indexUsageAndDefinitionErrors() throws {
        let tmp = TempDir()
        let db = try database(tmp)
        let none = try CLI.run(["index", "create", db, "X"])
        #expect(none.code == 2)
        #expect(none.err.contains("--value, --array or --fulltext"))
        let two = try CLI.run(["index", "create", db, "X", "--value", "a", "--fulltext", "b"])
        #expect(two.code == 2)
        let arrayWhere = try CLI.run(["index", "create", db, "X", "--array", "tags", "--where", "a = 1"])
        #expect(arrayWhere.code == 2)
        let lang = try CLI.run(["index", "create", db, "X", "--value", "a", "--language", "en"])
        #expect(lang.code == 2)
        let syntax = try CLI.run(["index", "create", db, "X", "--value", "type,, city"])
        #expect(syntax.code == 1)
        #expect(syntax.err.contains("syntax error at line 1, column 6"))
        #expect(syntax.err.contains("  type,, city\n       ^"))
        let badWhere = try CLI.run(["index", "create", db, "X", "--value", "type", "--where", "type = "])
        #expect(badWhere.code == 1)
        #expect(badWhere.err.contains("invalid where"))
        #expect(!(try CLI.run(["index", "list", db]).out.contains("X")))
    }

    @Test func checkAndStats() throws {
        let tmp = TempDir()
        let db = try database(tmp)
        #expect(try CLI.run(["index", "create", db, "V", "--value", "city"]).code == 0)
        let check = try CLI.run(["check", db])
        #expect(check.code == 0)
        #expect(check.lines.last == "ok: 20 documents, 20 index entries checked")
        let stats = try CLI.run(["stats", db])
        #expect(stats.code == 0)
        #expect(stats.out.contains("file size"))
        #expect(stats.lines.contains { $0.hasPrefix("_default._default") && $0.contains("20") && $0.contains("V (value)") })
        #expect(stats.lines.last == "1 collection, 20 documents, 1 index")
    }
}

@Suite("tessera CLI: shell")
struct CLIShellTests {
    @Test func pipedScriptRunsStatementsAndDotCommands() throws {
        let db = try SharedDemo.require()
        let script = """
            SELECT name
              FROM travel WHERE type = 'airport' AND state = 'Texas'
              ORDER BY name;
            SELECT 'a;b' AS s FROM travel LIMIT 1; SELECT COUNT(*) AS n FROM profiles;
            .mode csv
            .param set st Florida
            SELECT faa FROM travel WHERE type = 'airport' AND state = $st ORDER BY faa;
            .explain SELECT name FROM travel WHERE type = 'hotel' AND city = 'Austin'
            .indexes profiles
            .quit
            SELECT 'never' AS x FROM travel;
            """
        let r = try CLI.run(["shell", db], stdin: script)
        #expect(r.code == 0)
        #expect(r.err.isEmpty)
        #expect(r.lines == [
            #"{"name":"Austin Airport"}"#, #"{"name":"Dallas Airport"}"#, #"{"name":"Houston Airport"}"#,
            #"{"s":"a;b"}"#, #"{"n":200}"#,
            "faa", "MCO", "MIA",
            "SEARCH travel USING INDEX HotelCityIndex (city=?)",
            "NOT USED:",
            "  TypeNameIndex: a cheaper path won: index HotelCityIndex reads about 12 rows (cost 26); this index would read about 237 rows (cost 520)",
            "  HotelDescIndex: a full-text index is used only by MATCH(HotelDescIndex, …) in the WHERE clause",
            "_default.profiles  likesIndex   array likes",
            "_default.profiles  nestedArray  array contacts[].phones (type)",
        ])
    }

    @Test func errorsContinueAndSetTheExitCode() throws {
        let tmp = TempDir()
        let db = tmp.file("s.db")
        let script = """
            .put k1 {"a": "x y", "n": 1}
            .put --collection c k2 {"b": 2}
            SELECT a FROM _ WHER n = 1;
            .cat k1
            .ls --collection c
            .bogus
            SELECT META().id AS id, n FROM _
            """
        let r = try CLI.run(["shell", db], stdin: script)
        #expect(r.code == 1)
        #expect(r.lines == [#"{"a":"x y","n":1}"#, "k2", #"{"id":"k1","n":1}"#])
        #expect(r.err.contains("error: syntax error at line 1, column 22"))
        #expect(r.err.contains("unknown command '.bogus'"))
        #expect(!r.out.contains("tessera>"), "no prompt when stdin is not a terminal")
    }

    @Test func historyAndSchema() throws {
        let tmp = TempDir()
        let db = tmp.file("s.db")
        let r = try CLI.run(["shell", db], stdin: """
            .put d1 {"name": "x", "tags": ["a", "b"], "address": {"city": "c"}}
            SELECT COUNT(*) AS n FROM _;
            .schema
            .history
            """)
        #expect(r.code == 0)
        #expect(r.out.contains("_default._default: 1 document sampled"))
        #expect(r.lines.contains { $0.hasPrefix("  address.city") && $0.hasSuffix("string 1") })
        #expect(r.lines.contains { $0.hasPrefix("  tags[]") && $0.hasSuffix("string 2") })
        #expect(r.lines.contains("   2  SELECT COUNT(*) AS n FROM _;"))
        #expect(r.lines.contains("   4  .history"))
    }
}

@Suite("tessera CLI: conformance")
struct CLIConformanceTests {
    @Test func passingAndFailingFixtures() throws {
        let tmp = TempDir()
        let good = try tmp.write("good.json", """
            {"format": 1, "collections": [{"name": "c", "docs": [{"_id": "a", "n": 1}, {"_id": "b", "n": 2}]}],
             "steps": [{"name": "sum", "query": "SELECT SUM(n) AS s FROM c", "expect": [{"s": 3}]}]}
            """)
        let r = try CLI.run(["conformance", good])
        #expect(r.code == 0)
        #expect(r.out == "1 passed, 0 failed\n")
        let bad = try tmp.write("bad.json", """
            {"format": 1, "collections": [{"name": "c", "docs": [{"_id": "a", "n": 1}]}],
             "steps": [{"name": "wrong", "query": "SELECT n FROM c", "expect": [{"n": 2}]}]}
            """)
        let f = try CLI.run(["conformance", tmp.path])
        #expect(f.code == 1)
        #expect(f.lines.first?.hasPrefix("FAIL \(bad) step 1 (wrong)") == true)
        #expect(f.lines.filter { $0.hasPrefix("FAIL ") }.count == 1)
        #expect(f.lines.last == "1 passed, 1 failed")
        let json = try CLI.run(["conformance", good, "--json"])
        let report = try #require(try jsonObject(json.out) as? [String: Any])
        #expect(report["passed"] as? Int == 1)
        #expect(try CLI.run(["conformance"]).code == 2)
    }
}
