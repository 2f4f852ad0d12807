// tessera-bench: Tessera side by side with SQLite configured the way Couchbase Lite uses it.
//
//     swift build -c release --product tessera-bench && .build/release/tessera-bench [--quick] [--json]

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let options: Options
do {
    options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    if let m = error.message { writeError("tessera-bench: \(m)\n\n") }
    if error.message == nil { writeOutput(Options.usage + "\n") } else { writeError(Options.usage + "\n") }
    exit(error.message == nil ? 0 : 2)
}

var bench: Bench?
do {
    let b = try Bench(options: options)
    bench = b
    let t0 = now()
    try b.run()
    b.progress("finished in \(format(seconds: now() - t0))")
    let report = Report(options: options, machine: .current(), results: b.results, mismatches: b.mismatches,
                        notes: b.notes, explain: b.explainText)
    writeOutput(options.json ? report.json : report.text)
    if let file = options.jsonFile {
        guard let f = fopen(file, "w") else { throw BenchError("cannot write '\(file)'") }
        fputs(report.json, f)
        fclose(f)
    }
    b.cleanUp()
    if !b.mismatches.isEmpty {
        writeError("\n*** tessera-bench: ROW COUNTS DIFFER BETWEEN TESSERA AND SQLITE (\(b.mismatches.count) checks failed) ***\n")
        exit(1)
    }
} catch {
    writeError("tessera-bench: error: \(error)\n")
    bench?.cleanUp()
    exit(1)
}
