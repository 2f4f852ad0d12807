// libFuzzer entry point for Tessera's readers of outside input (see Tests/FUZZING.md).
//
// Built with `-Xswiftc -sanitize=fuzzer,address -Xswiftc -DTESSERA_LIBFUZZER`, `main`
// hands the command line to libFuzzer's driver, which calls `fuzzOne` with each input. In
// an ordinary build this is a replay tool: `TesseraFuzz FILE...` runs each file through
// the same checks (to reproduce a crash libFuzzer saved).
//
// TESSERA_FUZZ_TARGET selects what the input is fed to:
//   json      JSONReader, checked against BinaryEncoder.encodeJSON and a write/read round trip
//   binary    BinaryValue.root on raw bytes: isValid, decode, lookups, iteration
//   sql       SQLParser.parseStatement, SQLPrinter round trip, then analysis, planning and
//             execution (at most 1,000 rows) on a small database with indexes
//   fulltext  FullTextQuery.parse, CompiledFullTextQuery, and MATCH on a full-text index
//   fixture   ConformanceRunner.runFixture on the input written to a fixture file
// Any thrown error is fine; a crash, a hang or a failed check (a trap) is a finding.
import Tessera
import TesseraConformance
#if TESSERA_LIBFUZZER
import CFuzzerDriver
#endif
#if canImport(Glibc)
import Glibc
#endif

enum FuzzTarget: String {
    case json, binary, sql, fulltext, fixture

    static let current: FuzzTarget = {
        guard let raw = getenv("TESSERA_FUZZ_TARGET") else { return .json }
        guard let t = FuzzTarget(rawValue: String(cString: raw)) else {
            fatalError("TESSERA_FUZZ_TARGET must be one of json, binary, sql, fulltext, fixture")
        }
        return t
    }()
}

/// State shared by all inputs: the small database the `sql` and `fulltext` targets query,
/// the prepared MATCH query, and the fixture file. Set up in `main` before the first input
/// (libFuzzer's leak check counts what each input leaves allocated) and torn down at exit
/// (so the leak check at exit sees nothing, and the temporary files go).
enum FuzzState {
    // nonisolated(unsafe): libFuzzer runs inputs one at a time on the main thread.
    nonisolated(unsafe) static var database: Database?
    nonisolated(unsafe) static var matchQuery: Query?
    nonisolated(unsafe) static var fixtureDirectory: String?

    static func setUp(_ target: FuzzTarget) {
        switch target {
        case .sql, .fulltext:
            do {
                let db = try makeQueryDatabase()
                database = db
                matchQuery = try db.createQuery("SELECT meta().id FROM t WHERE MATCH(ftx, $q) ORDER BY RANK(ftx)")
            } catch {
                fatalError("cannot set up the query database: \(error)")
            }
        case .fixture:
            var template = Array("/tmp/tessera-fuzz-XXXXXX".utf8CString)
            guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else { fatalError("mkdtemp") }
            fixtureDirectory = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
        case .json, .binary:
            break
        }
        atexit {
            FuzzState.matchQuery = nil
            try? FuzzState.database?.close() // a temporary database deletes itself
            FuzzState.database = nil
            if let dir = FuzzState.fixtureDirectory {
                unlink(dir + "/fixture.json")
                rmdir(dir)
            }
        }
    }

    static func makeQueryDatabase() throws -> Database {
        let db = try Database.temporary()
        let t = try db.createCollection(name: "t")
        let u = try db.createCollection(name: "u")
        let words = ["hello", "world", "apple", "about", "zebra", "Ärger", "naïve"]
        try db.inBatch {
            for i in 0..<20 {
                var body: [String: Value] = ["a": .int(Int64(i % 7)), "s": .string(words[i % words.count] + " " + words[(i * 3) % words.count])]
                if i % 3 != 0 { body["b"] = i % 4 == 0 ? .null : .double(Double(i) / 3) }
                body["arr"] = .array((0..<(i % 4)).map { j in ["k": .int(Int64(j - i % 3))] })
                try t.save(id: "t\(i)", properties: body)
                if i % 2 == 0 { try u.save(id: "u\(i)", properties: ["a": .int(Int64(i % 5)), "b": .string("b\(i % 3)")]) }
            }
        }
        try t.createIndex(withName: "byA", config: ValueIndexConfiguration(["a", "b"]))
        try t.createIndex(withName: "byArr", config: ArrayIndexConfiguration(path: "arr", expressions: ["k"]))
        try t.createIndex(withName: "ftx", config: FullTextIndexConfiguration(["s"]))
        return db
    }
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

func fuzzJSON(_ bytes: UnsafeRawBufferPointer) {
    let value: Value
    do {
        value = try JSONReader.parse(bytes)
    } catch {
        check(error.offset >= 0 && error.offset <= bytes.count, "error offset out of range: \(error)")
        check((try? BinaryEncoder.encodeJSON(bytes)) == nil, "the binary encoder accepted text the reader refused")
        return
    }
    let text = JSONWriter.string(value)
    check((try? JSONReader.parse(text)) == value, "write/read round trip changed the value")
    guard let binary = try? BinaryEncoder.encodeJSON(bytes) else { fatalError("the binary encoder refused text the reader accepted") }
    let decoded = binary.withUnsafeBytes { BinaryValue.root($0)?.decode() }
    check(decoded == value, "the binary encoder read the text differently")
}

func fuzzBinary(_ bytes: UnsafeRawBufferPointer) {
    guard let root = BinaryValue.root(bytes) else { return }
    let valid = root.isValid
    let decoded = root.decode()
    if valid { check(decoded != nil, "isValid but decode() failed") }
    // (Invalid bytes may decode lossily, e.g. bad UTF-8; NaN is never equal to itself.)
    if valid, let decoded, !containsNaN(decoded) { check(root.equals(decoded), "a decoded value is not equal to its source") }
    var stack = [(root, 0)]
    var visited = 0
    while let (v, depth) = stack.popLast(), visited < 5_000 {
        visited += 1
        _ = (v.kind, v.bool, v.int, v.double, v.string, v.count, v.keys.count)
        _ = v.member("a"); _ = v[0]; _ = v[-1]; _ = v.lookup([.key("a"), .index(1)])
        if depth < 64 {
            for e in v.elements { stack.append((e, depth + 1)) }
            for m in v.members { stack.append((m.value, depth + 1)) }
        }
    }
}

func containsNaN(_ v: Value) -> Bool {
    switch v {
    case .double(let d): return d.isNaN
    case .array(let a): return a.contains(where: containsNaN)
    case .object(let o): return o.values.contains(where: containsNaN)
    default: return false
    }
}

func fuzzSQL(_ bytes: UnsafeRawBufferPointer) {
    let text = String(decoding: bytes, as: UTF8.self)
    guard let statement = try? SQLParser.parseStatement(text) else { return }
    let printed = SQLPrinter.print(statement)
    do {
        let again = try SQLParser.parseStatement(printed)
        check(SQLPrinter.print(again) == printed, "printing is not stable: \(printed)")
    } catch {
        // The printer's parentheses can take a deep expression past the parser's nesting limit.
        check(error.message.contains("nested too deeply"), "printed form does not parse: \(printed)\n\(error)")
    }
    guard let q = try? FuzzState.database!.createQuery(text) else { return }
    q.parameters = Parameters().setInt(2, forName: "lo").setDouble(4.5, forName: "hi")
    _ = try? q.explain()
    guard let rows = try? q.execute() else { return }
    var n = 0
    while n < 1_000, let row = try? rows.next() { _ = row.toJSON(); n += 1 }
}

func fuzzFullText(_ bytes: UnsafeRawBufferPointer) {
    let text = String(decoding: bytes, as: UTF8.self)
    guard let q = try? FullTextQuery.parse(text) else { return }
    _ = q.description
    _ = try? CompiledFullTextQuery(q, tokenizer: FullTextTokenizer(language: "en"), columns: ["s", "title"])
    let match = FuzzState.matchQuery!
    match.parameters = Parameters().setString(text, forName: "q")
    _ = try? match.execute().allResults()
}

func fuzzFixture(_ bytes: UnsafeRawBufferPointer) {
    let path = FuzzState.fixtureDirectory! + "/fixture.json"
    guard let f = fopen(path, "wb") else { fatalError("cannot write \(path)") }
    _ = fwrite(bytes.baseAddress, 1, bytes.count, f)
    fclose(f)
    _ = ConformanceRunner().runFixture(at: path)
}

/// Runs one input through the selected target.
func fuzzOne(_ bytes: UnsafeRawBufferPointer) {
    switch FuzzTarget.current {
    case .json: fuzzJSON(bytes)
    case .binary: fuzzBinary(bytes)
    case .sql: fuzzSQL(bytes)
    case .fulltext: fuzzFullText(bytes)
    case .fixture: fuzzFixture(bytes)
    }
}

/// The callback libFuzzer's driver calls with each input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzOne(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}

@main
struct Main {
    static func main() {
        FuzzState.setUp(FuzzTarget.current)
        #if TESSERA_LIBFUZZER
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzerTestOneInput(data, size) })
        #else
        // Replays saved inputs: `TesseraFuzz FILE...`.
        let files = CommandLine.arguments.dropFirst()
        if files.isEmpty {
            print("usage: TESSERA_FUZZ_TARGET=json|binary|sql|fulltext|fixture TesseraFuzz FILE...")
            exit(2)
        }
        for path in files {
            guard let f = fopen(path, "rb") else { print("cannot read \(path)"); exit(1) }
            var bytes: [UInt8] = []
            var buf = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = fread(&buf, 1, buf.count, f)
                if n <= 0 { break }
                bytes += buf[0..<n]
            }
            fclose(f)
            bytes.withUnsafeBytes { fuzzOne($0) }
            print("\(path): ok")
        }
        #endif
    }
}
