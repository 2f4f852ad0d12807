// Values micro-benchmark (not a SwiftPM target): JSON parse / binary encode throughput on
// ~200-byte documents, member lookup ns/op, and binary size vs JSON on the datasets.
//
// Build and run (optimized, whole module, the Values sources compiled in):
//   swiftc -O -wmo -module-name ValuesBench Sources/Tessera/Values/*.swift \
//       Sources/Tessera/Query/AST/*.swift Benchmarks/ValuesBench/main.swift -o /tmp/values-bench
//   /tmp/values-bench ../shared/datasets/profiles_100.jsonl ../shared/datasets/names_100.jsonl
//
// Move into a `tessera-bench` target once it exists. ONLY_ENCODE / ONLY_PARSE / ONLY_WRITE=1
// run one loop only (for perf record).

import Foundation

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
@inline(never) func blackHole<T>(_ x: T) { withExtendedLifetime(x) {} }

func measure(_ label: String, bytes: Int = 0, ops: Int, repeat r: Int = 5, _ body: () -> Void) {
    var best = UInt64.max
    for _ in 0..<r {
        let t0 = now()
        body()
        best = min(best, now() - t0)
    }
    let nsPerOp = Double(best) / Double(ops)
    var line = "\(label): \(String(format: "%.1f", nsPerOp)) ns/op"
    if bytes > 0 { line += String(format: ", %.0f MB/s", Double(bytes) / Double(best) * 1e3) }
    print(line)
}

// ~200-byte documents.
var docs: [[UInt8]] = []
let first = ["Lue", "Jasper", "Kandra", "Alice", "Bob", "Chen", "Zoë"]
let last = ["Laserna", "Grebel", "Beichner", "Smith", "Müller", "Nakamura"]
for i in 0..<1000 {
    let s = """
    {"_id":"\(String(format: "%07d", i))","name":{"first":"\(first[i % 7])","last":"\(last[i % 6])"},"age":\(20 + i % 50),\
    "email":"user\(i)@nosql-matters.org","tags":["tag\(i % 5)","x"],"score":\(Double(i % 1000) / 8),"active":\(i % 2 == 0),\
    "city":"San Pedro","zip":"9\(i % 10000)"}
    """
    docs.append(Array(s.utf8))
}
let totalBytes = docs.reduce(0) { $0 + $1.count }
print("small docs: \(docs.count), avg \(totalBytes / docs.count) bytes")
let n = docs.count
if ProcessInfo.processInfo.environment["ONLY_ENCODE"] != nil {
    for _ in 0..<300 { for d in docs { blackHole(try! BinaryEncoder.encodeJSON(d)) } }
    exit(0)
}
if ProcessInfo.processInfo.environment["ONLY_WRITE"] != nil {
    let vs = docs.map { try! JSONReader.parse($0) }
    for _ in 0..<100 { for v in vs { blackHole(JSONWriter.string(v)) } }
    exit(0)
}
if ProcessInfo.processInfo.environment["ONLY_PARSE"] != nil {
    for _ in 0..<100 { for d in docs { blackHole(try! JSONReader.parse(d)) } }
    exit(0)
}

measure("JSONReader.parse (→ Value)", bytes: totalBytes, ops: n) {
    for d in docs { blackHole(try! JSONReader.parse(d)) }
}
measure("BinaryEncoder.encodeJSON (JSON → binary, one pass)", bytes: totalBytes, ops: n) {
    for d in docs { blackHole(try! BinaryEncoder.encodeJSON(d)) }
}
measure("parse + encode(Value) (JSON → Value → binary)", bytes: totalBytes, ops: n) {
    for d in docs { blackHole(BinaryEncoder.encode(try! JSONReader.parse(d))) }
}
let values = docs.map { try! JSONReader.parse($0) }
measure("BinaryEncoder.encode(Value)", ops: n) {
    for v in values { blackHole(BinaryEncoder.encode(v)) }
}
measure("JSONWriter.string(Value)", ops: n) {
    for v in values { blackHole(JSONWriter.string(v)) }
}
let bins = docs.map { try! BinaryEncoder.encodeJSON($0) }
let binBytes = bins.reduce(0) { $0 + $1.count }
print("binary size: \(binBytes) vs JSON \(totalBytes) = \(String(format: "%.3f", Double(binBytes) / Double(totalBytes)))×")
measure("JSONWriter.string(BinaryValue) (binary → JSON, no Value)", ops: n) {
    for b in bins { b.withUnsafeBytes { blackHole(JSONWriter.string(BinaryValue.root($0)!)!) } }
}
measure("BinaryValue.toValue (full decode)", ops: n) {
    for b in bins { b.withUnsafeBytes { blackHole(BinaryValue.root($0)!.toValue()) } }
}

// Member lookups.
let big = bins[17]
let reps = 1_000_000
big.withUnsafeBytes { buf in
    let root = BinaryValue.root(buf)!
    var sink = 0
    measure("root(bytes) + member(\"age\").int", ops: reps) {
        for _ in 0..<reps { sink &+= Int(BinaryValue.root(buf)!.member("age")!.int!) }
    }
    measure("member(\"zip\") (String key)", ops: reps) {
        for _ in 0..<reps { sink &+= root.member("zip")!.offset }
    }
    let key: [UInt8] = Array("email".utf8)
    key.withUnsafeBytes { k in
        measure("member(utf8:) \"email\"", ops: reps) {
            for _ in 0..<reps { sink &+= root.member(utf8: k)!.offset }
        }
    }
    measure("member miss \"nope\"", ops: reps) {
        for _ in 0..<reps { sink &+= root.member("nope") == nil ? 1 : 0 }
    }
    let path: [PathComponent] = [.key("name"), .key("last")]
    measure("lookup([name,last]) + withUTF8 count", ops: reps) {
        for _ in 0..<reps { sink &+= root.lookup(path)!.withUTF8 { $0.count }! }
    }
    measure("value(at: [tags, 0]) (→ Value string)", ops: reps) {
        for _ in 0..<reps { blackHole(root.value(at: [.key("tags"), .index(0)])) }
    }
    measure("member(\"score\").double", ops: reps) {
        for _ in 0..<reps { sink &+= Int(root.member("score")!.double!) }
    }
    blackHole(sink)
}
// A wide object: 200 keys.
var wide: [String: Value] = [:]
for i in 0..<200 { wide["field_\(i)"] = .int(Int64(i)) }
let wideBin = BinaryEncoder.encode(.object(wide))
wideBin.withUnsafeBytes { buf in
    let root = BinaryValue.root(buf)!
    var sink = 0
    measure("member lookup in 200-key object", ops: reps) {
        for i in 0..<reps { sink &+= Int(root.member(i & 1 == 0 ? "field_123" : "field_7")!.int!) }
    }
    blackHole(sink)
}

// Datasets (size ratio and throughput).
for path in CommandLine.arguments.dropFirst() {
    guard let data = FileManager.default.contents(atPath: path) else { continue }
    let bytes = [UInt8](data)
    var lines: [[UInt8]] = []
    if path.hasSuffix(".jsonl") {
        lines = bytes.split(separator: 0x0A).map(Array.init)
    } else {
        lines = [bytes]
    }
    let jsonSize = lines.reduce(0) { $0 + $1.count }
    // Compact (re-written) JSON, as a database storing JSON text would store it.
    let compact = lines.map { Array(JSONWriter.string(try! JSONReader.parse($0)).utf8) }
    let compactSize = compact.reduce(0) { $0 + $1.count }
    let encoded = lines.map { try! BinaryEncoder.encodeJSON($0) }
    let binSize = encoded.reduce(0) { $0 + $1.count }
    print("\(path.split(separator: "/").last!): \(lines.count) docs, JSON \(jsonSize) B (compact \(compactSize) B), binary \(binSize) B = \(String(format: "%.3f", Double(binSize) / Double(compactSize)))× compact JSON")
    measure("  encodeJSON", bytes: jsonSize, ops: lines.count) {
        for d in lines { blackHole(try! BinaryEncoder.encodeJSON(d)) }
    }
    measure("  JSONReader.parse", bytes: jsonSize, ops: lines.count) {
        for d in lines { blackHole(try! JSONReader.parse(d)) }
    }
}
