// libFuzzer entry point for Tessera's readers of outside input (see Tests/FUZZING.md).
//
// Built with `-Xswiftc -sanitize=fuzzer,address -Xswiftc -DTESSERA_LIBFUZZER`, libFuzzer
// supplies `main` and calls `LLVMFuzzerTestOneInput` with each input. In an ordinary
// build this is a replay tool: `TesseraFuzz FILE...` runs each file through the same
// checks (to reproduce a crash libFuzzer saved).
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

/// The small database the `sql` and `fulltext` targets query (created once per process).
let queryDatabase: Database = {
    do {
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
    } catch {
        fatalError("cannot set up the query database: \(error)")
    }
}()

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
    if let decoded { check(root.equals(decoded), "a decoded value is not equal to its source") }
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

func fuzzSQL(_ bytes: UnsafeRawBufferPointer) {
    let text = String(decoding: bytes, as: UTF8.self)
    guard let statement = try? SQLParser.parseStatement(text) else { return }
    let printed = SQLPrinter.print(statement)
    guard let again = try? SQLParser.parseStatement(printed) else { fatalError("printed form does not parse: \(printed)") }
    check(SQLPrinter.print(again) == printed, "printing is not stable: \(printed)")
    guard let q = try? queryDatabase.createQuery(text) else { return }
    q.parameters = Parameters().setInt(2, forName: "lo").setDouble(4.5, forName: "hi")
    _ = try? q.explain()
    guard let rows = try? q.execute() else { return }
    var n = 0
    while n < 1_000, let row = try? rows.nextRow() { _ = row.toJSON(); n += 1 }
}

let matchQuery: Query = {
    do { return try queryDatabase.createQuery("SELECT meta().id FROM t WHERE MATCH(ftx, $q) ORDER BY RANK(ftx)") } catch {
        fatalError("\(error)")
    }
}()

func fuzzFullText(_ bytes: UnsafeRawBufferPointer) {
    let text = String(decoding: bytes, as: UTF8.self)
    guard let q = try? FullTextQuery.parse(text) else { return }
    _ = q.description
    _ = try? CompiledFullTextQuery(q, tokenizer: FullTextTokenizer(language: "en"), columns: ["s", "title"])
    matchQuery.parameters = Parameters().setString(text, forName: "q")
    _ = try? matchQuery.execute().allResults()
}

let fixturePath: String = {
    var template = Array("/tmp/tessera-fuzz-XXXXXX".utf8CString)
    guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else { fatalError("mkdtemp") }
    return String(cString: template.withUnsafeBufferPointer { $0.baseAddress! }) + "/fixture.json"
}()

func fuzzFixture(_ bytes: UnsafeRawBufferPointer) {
    guard let f = fopen(fixturePath, "wb") else { fatalError("cannot write \(fixturePath)") }
    _ = fwrite(bytes.baseAddress, 1, bytes.count, f)
    fclose(f)
    _ = ConformanceRunner().runFixture(at: fixturePath)
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

/// The libFuzzer entry point.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzOne(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}

#if !TESSERA_LIBFUZZER
/// Replays saved inputs: `TesseraFuzz FILE...`.
@main
struct Replay {
    static func main() {
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
    }
}
#endif
