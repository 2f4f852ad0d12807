/// Command-line options of `tessera-bench`.
struct Options: Sendable {
    /// Number of documents.
    var n = 100_000
    /// Data and parameter seed.
    var seed: UInt64 = 42
    /// Small N and few repetitions, for CI.
    var quick = false
    /// Print the results as JSON instead of a table.
    var json = false
    /// Also write the JSON results to this file.
    var jsonFile: String?
    /// Repetitions of each query workload (median reported).
    var reps = 5
    /// Repetitions of bulk loads, updates and index creation.
    var writeReps = 3
    /// Where the databases go (a fresh subdirectory is created and removed).
    var directory: String?
    /// Key prefixes of the workloads to run (nil: all).
    var only: Set<String>?
    /// Print EXPLAIN output of both engines' queries.
    var explain = false
    /// Keep the databases afterwards.
    var keep = false
    /// Engines to run (a single engine skips ratios and cross-checks; for profiling).
    var engines: Set<String> = ["tessera", "sqlite"]
    /// Tessera's initial map size in bytes (nil: the default configuration).
    var tesseraMapSize: Int?
    /// Tessera without fsync on commit (`DatabaseConfiguration.noSync`).
    var tesseraNoSync = false
    /// Progress lines on stderr.
    var verbose = true

    /// Workload keys; `--only` takes any prefixes of them (groups: load, index, size, get, query, fts, update).
    static let workloadKeys = ["load.noindex", "size.noindex", "index.value", "index.partial", "index.array", "index.fulltext",
                               "load.indexed", "size.indexed", "get.point", "query.equality", "query.range", "query.unnest",
                               "query.scan", "shape.pk.get", "shape.pk.in", "shape.pk.range", "shape.or", "shape.count.all", "shape.count.where",
                               "shape.max", "shape.group.index", "shape.distinct.index", "shape.group.scan", "shape.distinct.scan",
                               "fts.term", "fts.and", "fts.phrase", "update.indexed", "update.sustained"]

    static let usage = """
        usage: tessera-bench [--n N] [--seed S] [--quick] [--json] [--json-file F] [--reps R] [--write-reps R]
                             [--dir DIR] [--only KEY,...] [--engine tessera|sqlite] [--map-size MB] [--nosync]
                             [--explain] [--keep] [--silent]

          Loads the same generated hotel-like documents into Tessera and into SQLite configured
          the way Couchbase Lite uses it, runs the same workloads on both and prints, per workload,
          the median time of each engine and the ratio SQLite/Tessera (higher is better for Tessera).

          --n N           documents (default 100000)
          --seed S        data and parameter seed (default 42)
          --quick         N=2000 and 2 repetitions (a few seconds; for CI)
          --json          JSON output
          --json-file F   also write the JSON output to file F
          --reps R        repetitions of query workloads (default 5)
          --write-reps R  repetitions of loads, updates and index creation (default 3)
          --dir DIR       directory for the databases (default: a new directory in $TMPDIR or /tmp)
          --only K,...    workloads by key prefix: load, index, size, get, query, shape, fts, update,
                          or keys such as load.noindex, query.unnest, fts.and
          --engine E      run one engine only (no ratios or cross-checks; for profiling)
          --map-size MB   Tessera's initial map size (default: DatabaseConfiguration's)
          --nosync        Tessera without fsync on commit (default: durable commits)
          --explain       print both engines' query plans
          --keep          keep the databases
          --silent        no progress lines on stderr

        Exit status: 0 ok; 1 when the engines disagree on a row count (or an error); 2 usage error.
        """

    /// Parses `args` (without the program name).
    static func parse(_ args: [String]) throws(UsageError) -> Options {
        var o = Options()
        var nGiven = false
        var repsGiven = false
        var writeRepsGiven = false
        var i = 0
        func value(_ name: String) throws(UsageError) -> String {
            i += 1
            guard i < args.count else { throw UsageError("\(name) needs a value") }
            return args[i]
        }
        func integer(_ name: String, min: Int) throws(UsageError) -> Int {
            let s = try value(name)
            guard let v = Int(s.replacingUnderscores()), v >= min else { throw UsageError("\(name): '\(s)' is not an integer ≥ \(min)") }
            return v
        }
        while i < args.count {
            let a = args[i]
            switch a {
            case "--n", "-n": o.n = try integer(a, min: 10); nGiven = true
            case "--seed": o.seed = UInt64(try integer(a, min: 0))
            case "--quick": o.quick = true
            case "--json": o.json = true
            case "--json-file": o.jsonFile = try value(a)
            case "--reps": o.reps = try integer(a, min: 1); repsGiven = true
            case "--write-reps": o.writeReps = try integer(a, min: 1); writeRepsGiven = true
            case "--dir": o.directory = try value(a)
            case "--only":
                let groups = Set(try value(a).split(separator: ",").map { String($0) })
                if let bad = groups.first(where: { g in !Options.workloadKeys.contains { $0.hasPrefix(g) } }) {
                    throw UsageError("--only: '\(bad)' names no workload (keys: \(Options.workloadKeys.joined(separator: ", ")))")
                }
                o.only = groups
            case "--engine":
                let e = try value(a)
                guard e == "tessera" || e == "sqlite" else { throw UsageError("--engine: tessera or sqlite") }
                o.engines = [e]
            case "--map-size": o.tesseraMapSize = try integer(a, min: 1) << 20
            case "--nosync": o.tesseraNoSync = true
            case "--explain": o.explain = true
            case "--keep": o.keep = true
            case "--silent": o.verbose = false
            case "--help", "-h": throw UsageError(nil)
            default: throw UsageError("unknown option '\(a)'")
            }
            i += 1
        }
        if o.quick {
            if !nGiven { o.n = 2_000 }
            if !repsGiven { o.reps = 2 }
            if !writeRepsGiven { o.writeReps = 2 }
        }
        return o
    }

    /// True if workload `key` runs, or for a group (`query`), any of its workloads.
    func runs(_ key: String) -> Bool {
        guard let only else { return true }
        return only.contains { key.hasPrefix($0) || $0.hasPrefix(key) }
    }

    /// True if both engines run (ratios and cross-checks).
    var comparing: Bool { engines.count == 2 }
}

/// A command-line mistake (nil message: just print the usage).
struct UsageError: Error {
    var message: String?
    init(_ message: String?) { self.message = message }
}

extension String {
    fileprivate func replacingUnderscores() -> String { String(filter { $0 != "_" && $0 != "," }) }
}
