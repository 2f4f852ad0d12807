// Test helper: a second process writing to a database that the test process also has open.
//
//   TesseraProcessWriter hold DIR MILLISECONDS
//       One batch: adds 1 to `counter`, saves `held`, prints "locked", sleeps while holding
//       the write transaction, commits, prints "committed".
//   TesseraProcessWriter write DIR OWNER BATCHES
//       BATCHES batches, each adding 1 to `counter` and saving 20 documents
//       "<OWNER>-<batch>-<i>" with `owner: OWNER`; prints "done <batches>".
//   TesseraProcessWriter ddl DIR
//       Creates collection `other` (one document `o1`) and the value index `byI` on `i` of
//       `shared`; prints "ddl done".
//   TesseraProcessWriter stamps DIR COUNT MILLISECONDS
//       COUNT single-document saves "stamp-<i>" (one per MILLISECONDS); after each commit
//       prints "stamp <i> <CLOCK_REALTIME nanoseconds>" (for commit-to-callback latency).
//   TesseraProcessWriter compact DIR MILLISECONDS
//       Compacts the database again and again for MILLISECONDS (a compaction is refused while
//       another process has it open); prints "compacted N refused M".
//   TesseraProcessWriter check DIR
//       Prints the integrity report's first line and the document counts per owner.
//   TesseraProcessWriter icu DIR
//       Saves and queries documents, creates and uses a value index, printing "icu no" or
//       "icu yes" (whether the system ICU is mapped into the process); then lower-cases a
//       non-ASCII string in a query (ICU's case mapping), printing the result and "icu …"
//       again.
//
// Every mode works on the collection `shared`, which the test creates first.
import Tessera
#if canImport(Glibc)
import Glibc
#endif

func say(_ text: String) {
    var t = text + "\n"
    t.withUTF8 { p in _ = write(1, p.baseAddress, p.count) }
}

func fail(_ text: String) -> Never {
    var t = "process writer: " + text + "\n"
    t.withUTF8 { p in _ = write(2, p.baseAddress, p.count) }
    exit(1)
}

func openShared(_ dir: String) throws -> (Database, Collection) {
    var config = DatabaseConfiguration()
    config.initialMapSize = 64 << 10 // small, so both processes grow the map
    let db = try Database(path: dir, configuration: config)
    guard let c = try db.collection(name: "shared") else { fail("no collection 'shared' in \(dir)") }
    return (db, c)
}

func bump(_ c: Collection) throws {
    guard let counter = try c.document(id: "counter")?.toMutable() else { fail("no counter document") }
    counter.setInt(counter.int(forKey: "n") + 1, forKey: "n")
    try c.save(document: counter)
}

let args = Array(CommandLine.arguments.dropFirst())
do {
    switch (args.first, args.count) {
    case ("hold", 3):
        guard let ms = UInt32(args[2]) else { fail("bad milliseconds") }
        let (db, c) = try openShared(args[1])
        var announced = false
        try db.inBatch {
            try bump(c)
            try c.save(id: "held", properties: ["by": "child"])
            if !announced { say("locked"); announced = true }
            usleep(ms * 1000)
        }
        say("committed")
        try db.close()
    case ("write", 4):
        guard let batches = Int(args[3]) else { fail("bad batch count") }
        let owner = args[2]
        let (db, c) = try openShared(args[1])
        for b in 0..<batches {
            try db.inBatch {
                try bump(c)
                for i in 0..<20 {
                    try c.save(id: "\(owner)-\(b)-\(i)", properties: [
                        "owner": .string(owner), "b": .int(Int64(b)), "i": .int(Int64(i)),
                        "pad": .string(String(repeating: "p", count: 200 + (b * 37 + i * 11) % 400)),
                    ])
                }
            }
        }
        say("done \(batches)")
        try db.close()
    case ("ddl", 2):
        let (db, c) = try openShared(args[1])
        let other = try db.createCollection(name: "other")
        try other.save(id: "o1", properties: ["from": "child"])
        try c.createIndex(withName: "byI", config: ValueIndexConfiguration(["i"]))
        say("ddl done")
        try db.close()
    case ("stamps", 4):
        guard let count = Int(args[2]), let ms = UInt32(args[3]) else { fail("bad count or milliseconds") }
        let (db, c) = try openShared(args[1])
        for i in 0..<count {
            try c.save(id: "stamp-\(i)", properties: ["i": .int(Int64(i))])
            var ts = timespec()
            clock_gettime(CLOCK_REALTIME, &ts)
            say("stamp \(i) \(Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec))")
            usleep(ms * 1000)
        }
        try db.close()
    case ("compact", 3):
        guard let ms = Int(args[2]) else { fail("bad milliseconds") }
        let (db, _) = try openShared(args[1])
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let end = Int(ts.tv_sec) * 1000 + Int(ts.tv_nsec) / 1_000_000 + ms
        var compacted = 0
        var refused = 0
        while true {
            clock_gettime(CLOCK_MONOTONIC, &ts)
            if Int(ts.tv_sec) * 1000 + Int(ts.tv_nsec) / 1_000_000 >= end { break }
            do {
                try db.performMaintenance(.compact)
                compacted += 1
            } catch let e as DatabaseError where e.code == .busy {
                refused += 1
            }
        }
        say("compacted \(compacted) refused \(refused)")
        try db.close()
    case ("check", 2):
        let (db, _) = try openShared(args[1])
        let report = try db.performMaintenance(.integrityCheck)
        say(report.isOK ? "ok" : "problems: \(report)")
        let rows = try db.createQuery("SELECT owner, COUNT(*) AS n FROM shared WHERE owner IS VALUED GROUP BY owner ORDER BY owner").execute()
        try rows.forEach { row in say("\(row.string(forKey: "owner") ?? "?") \(row.int(forKey: "n"))") }
        try db.close()
    case ("icu", 2):
        // Whether the system ICU library is mapped into this process.
        func icuMapped() -> String {
            guard let f = fopen("/proc/self/maps", "r") else { fail("cannot read /proc/self/maps") }
            defer { fclose(f) }
            var line = [CChar](repeating: 0, count: 4096)
            while fgets(&line, Int32(line.count), f) != nil {
                if strstr(line, "libicuuc.so") != nil { return "icu yes" }
            }
            return "icu no"
        }
        let (db, c) = try openShared(args[1])
        try c.save(id: "word", properties: ["s": "ÉTÉ", "n": 1])
        try c.createIndex(withName: "byN", config: ValueIndexConfiguration(["n"]))
        let found = try db.createQuery("SELECT meta().id AS id FROM shared WHERE n = 1").execute().allResults().count
        say("found \(found)")
        say(icuMapped())
        let lower = try db.createQuery("SELECT LOWER(s) AS l FROM shared WHERE meta().id = 'word'").execute()
            .allResults().first?.string(forKey: "l") ?? "?"
        say("lower \(lower)")
        say(icuMapped())
        try db.close()
    default:
        fail("usage: TesseraProcessWriter hold DIR MS | write DIR OWNER BATCHES | ddl DIR | stamps DIR COUNT MS | compact DIR MS | check DIR | icu DIR")
    }
} catch {
    fail("\(error)")
}
