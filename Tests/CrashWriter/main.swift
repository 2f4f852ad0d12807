// Test helper: writes batches into a database until it is killed.
//
//   TesseraCrashWriter DIR SEED
//
// Batch k saves documents "b<k>-<i>" (between 100 and 600), each carrying
// `batch: k`, updates the `ledger` document to `{batch: k, docs: n}`, and saves, deletes or
// purges a few random "churn-*" documents, all in one `inBatch`. After each commit it prints
// "k" on stdout. The parent kills it with SIGKILL at a random moment and checks that every
// printed batch is present and that the last batch in the file is complete.
import Tessera
#if canImport(Glibc)
import Glibc
#endif

func say(_ text: String, fd: Int32) {
    var t = text
    t.withUTF8 { p in _ = write(fd, p.baseAddress, p.count) }
}

struct Writer {
    var rng: SplitMix64

    mutating func random(_ n: Int) -> Int { rng.below(n) }

    mutating func run(path: String) throws -> Never {
        let db = try Database(path: path)
        let c = try db.createCollection(name: "docs")
        try c.createIndex(withName: "byBatch", config: ValueIndexConfiguration(["batch"]))
        try c.createIndex(withName: "bigOnes", config: ValueIndexConfiguration(["value"], where: "value > 500"))
        try c.createIndex(withName: "tags", config: ArrayIndexConfiguration(path: "tags"))
        try c.createIndex(withName: "text", config: FullTextIndexConfiguration(["note"], where: "batch IS NOT MISSING"))
        var batch = (try c.document(id: "ledger")?.int(forKey: "batch") ?? 0) + 1
        while true {
            let n = 100 + (batch * 7919 % 500)
            try db.inBatch {
                for i in 0..<n {
                    try c.save(id: "b\(batch)-\(i)", properties: [
                        "batch": .int(Int64(batch)), "i": .int(Int64(i)), "value": .int(Int64(random(1000))),
                        "tags": .array((0..<random(4)).map { _ in .string("t\(random(20))") }),
                        "note": .string("batch \(batch) item \(i) word\(random(50))"),
                    ])
                }
                for _ in 0..<20 {
                    let id = "churn-\(random(200))"
                    switch random(3) {
                    case 0: try c.save(id: id, properties: ["value": .int(Int64(random(1000))), "tags": ["t1", "t2"]])
                    case 1: if try c.document(id: id) != nil { try c.delete(id: id) }
                    default: if try c.record(exists: id) { try c.purge(id: id) }
                    }
                }
                try c.save(id: "ledger", properties: ["batch": .int(Int64(batch)), "docs": .int(Int64(n))])
            }
            say("\(batch)\n", fd: 1)
            batch += 1
        }
    }
}

let args = CommandLine.arguments
if args.count != 3 || UInt64(args[2]) == nil {
    say("usage: TesseraCrashWriter DIR SEED\n", fd: 2)
    exit(2)
}
var writer = Writer(rng: SplitMix64(seed: UInt64(args[2])!))
do {
    try writer.run(path: args[1])
} catch {
    say("crash writer: \(error)\n", fd: 2)
    exit(1)
}
