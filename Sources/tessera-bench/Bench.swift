import Tessera

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One engine's part of a workload repetition: untimed setup, the timed run, untimed teardown.
struct EngineRun {
    var setup: () throws -> Void = {}
    var run: () throws -> Outcome
    var teardown: () throws -> Void = {}
}

/// Parameters of the query workloads, drawn once from the seed and used by both engines.
struct QueryParameters: Sendable {
    var pointIDs: [String] = []
    var cities: [String] = []
    var ranges: [(Int, Int)] = []
    var tags: [String] = []
    var ftsTerm: [String] = []
    var ftsAnd: [String] = []
    var ftsPhrase: [String] = []
    var scans: [(String, Double)] = []

    init(generator g: HotelGenerator, ids: [String], quick: Bool) {
        var rng = SplitMix64(seed: g.seed, stream: 10, index: 0)
        let scale = quick ? 1 : 4
        pointIDs = (0..<(quick ? 2_000 : 20_000)).map { _ in ids[rng.scaled(below: ids.count)] }
        cities = (0..<(100 * scale)).map { _ in g.cities[rng.scaled(below: g.cities.count)] }
        ranges = (0..<(100 * scale)).map { _ in
            let lo = rng.scaled(in: 40...760)
            return (lo, lo + rng.scaled(in: 10...60))
        }
        tags = (0..<(10 * scale)).map { _ in g.tags[rng.scaled(below: g.tags.count)] }
        func logRank(_ lo: Double, _ hi: Double) -> Int {
            Int(exp(log(lo) + rng.unit() * (log(hi) - log(lo))))
        }
        // One term: Zipf ranks 50–1000 (a few hundred to ~15,000 documents at N = 100,000).
        let ftsCount = quick ? 20 : 40
        ftsTerm = (0..<ftsCount).map { _ in g.word(rank: logRank(50, 1_000)) }
        // Two terms (implicit AND): ranks 10–300 each.
        ftsAnd = (0..<ftsCount).map { _ in
            let a = logRank(10, 300)
            var b = logRank(10, 300)
            if b == a { b += 1 }
            return g.word(rank: a) + " " + g.word(rank: b)
        }
        // Phrases of two frequent words (ranks 0–39).
        ftsPhrase = (0..<ftsCount).map { _ in
            "\"" + g.word(rank: rng.scaled(below: 40)) + " " + g.word(rank: rng.scaled(below: 40)) + "\""
        }
        let thresholds = [4.0, 4.5, 3.5]
        scans = (0..<(quick ? 2 : 3)).map { k in (g.countries[rng.scaled(below: g.countries.count)], thresholds[k % thresholds.count]) }
    }
}

/// Runs every workload on both engines and collects the measurements.
final class Bench {
    let options: Options
    let generator: HotelGenerator
    let documents: [BenchDocument]
    let parameters: QueryParameters
    let root: String
    private(set) var results: [Measurement] = []
    private(set) var mismatches: [String] = []
    private(set) var notes: [String] = []
    private(set) var explainText: [String] = []

    var runTessera: Bool { options.engines.contains("tessera") }
    var runSQLite: Bool { options.engines.contains("sqlite") }

    init(options: Options) throws {
        self.options = options
        let t0 = now()
        generator = HotelGenerator(seed: options.seed)
        var docs: [BenchDocument] = []
        docs.reserveCapacity(options.n)
        for i in 0..<options.n {
            let d = generator.document(i)
            docs.append(BenchDocument(id: d.id, json: d.json))
        }
        documents = docs
        parameters = QueryParameters(generator: generator, ids: docs.map(\.id), quick: options.quick)
        let base = options.directory ?? (getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp")
        var template = Array((base + "/tessera-bench-XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw BenchError("cannot create a directory in '\(base)'")
        }
        root = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
        let bytes = docs.reduce(0) { $0 + $1.json.utf8.count }
        progress("generated \(options.n) documents (\(bytes / max(1, options.n)) bytes of JSON on average) in \(format(seconds: now() - t0))")
    }

    func cleanUp() {
        if !options.keep { removeTree(root) }
    }

    func progress(_ s: String) {
        if options.verbose { writeError("[tessera-bench] \(s)\n") }
    }

    // MARK: - Measuring

    /// Runs `m` for `reps` repetitions, alternating which engine goes first, and checks that
    /// both engines produce the same outcome in every repetition.
    private func measure(_ m: Measurement, reps: Int, warmup: Bool = false,
                         prepare: ((Int) throws -> Void)? = nil,
                         tessera: EngineRun?, sqlite: EngineRun?) throws {
        var m = m
        let t = runTessera ? tessera : nil
        let s = runSQLite ? sqlite : nil
        if warmup {
            let wt = try t.map { r -> Outcome in try r.setup(); defer { try? r.teardown() }; return try r.run() }
            let ws = try s.map { r -> Outcome in try r.setup(); defer { try? r.teardown() }; return try r.run() }
            m.tesseraOutcome = wt
            m.sqliteOutcome = ws
            check(m.title + " (warm-up)", wt, ws)
        }
        for rep in 0..<reps {
            try prepare?(rep)
            var order: [(Bool, EngineRun)] = []
            if let t { order.append((true, t)) }
            if let s { order.append((false, s)) }
            if rep % 2 == 1 { order.reverse() }
            var outcomes: [Bool: Outcome] = [:]
            for (isTessera, r) in order {
                try r.setup()
                let t0 = now()
                // Only selected workloads run inside the profiler-visible regions (a load that
                // merely prepares data for queries does not).
                let o = !options.runs(m.key) ? try r.run()
                    : try isTessera ? tesseraTimedRegion(r.run) : sqliteTimedRegion(r.run)
                let dt = now() - t0
                try r.teardown()
                outcomes[isTessera] = o
                if isTessera { m.tessera.append(dt) } else { m.sqlite.append(dt) }
                progress("\(m.title): rep \(rep + 1)/\(reps) \(isTessera ? "Tessera" : "SQLite ") \(format(seconds: dt)) (\(o.rows) rows)")
            }
            check("\(m.title) (rep \(rep + 1))", outcomes[true], outcomes[false])
            m.tesseraOutcome = outcomes[true] ?? m.tesseraOutcome
            m.sqliteOutcome = outcomes[false] ?? m.sqliteOutcome
        }
        results.append(m)
    }

    /// Records a mismatch between the engines (when both ran).
    private func check(_ what: String, _ t: Outcome?, _ s: Outcome?) {
        guard let t, let s, t != s else { return }
        let msg = "\(what): Tessera \(t.rows) rows (checksum \(t.checksum)), SQLite \(s.rows) rows (checksum \(s.checksum))"
        mismatches.append(msg)
        writeError("*** MISMATCH *** \(msg)\n")
    }

    private func checkCounts(_ what: String, _ t: Int, _ s: Int) {
        check(what, Outcome(rows: t), Outcome(rows: s))
    }

    // MARK: - The run

    func run() throws {
        let o = options
        let n = documents.count

        // 1. Bulk load without indexes; the last pair stays for sizes and index creation.
        var plainT: TesseraSide?
        var plainS: SQLiteSide?
        let needPlain = o.runs("load.noindex") || o.runs("index") || o.runs("size.noindex")
        if needPlain {
            let m = Measurement(key: "load.noindex", title: "bulk load, no indexes", ops: n, perOp: false,
                                target: Target(minRatio: 1.0, label: "≥ 1.0"))
            try measure(m, reps: o.runs("load.noindex") ? o.writeReps : 1,
                        tessera: EngineRun(setup: { plainT = nil; plainT = try TesseraSide(path: self.root + "/plain.tessera", mapSize: o.tesseraMapSize, noSync: o.tesseraNoSync) },
                                           run: { Outcome(rows: try plainT!.load(self.documents)) }),
                        sqlite: EngineRun(setup: { plainS = nil; plainS = try SQLiteSide(path: self.root + "/plain.sqlite") },
                                          run: { Outcome(rows: try plainS!.load(self.documents)) }))
            if !o.runs("load.noindex") { results.removeLast() }
            if o.runs("size.noindex") {
                var sz = Measurement(key: "size.noindex", title: "database size, no indexes", ops: n, perOp: false,
                                     target: Target(minRatio: 1 / 1.2, label: "≤ 1.2× SQLite"))
                sz.tesseraBytes = plainT?.sizeBytes
                sz.sqliteBytes = try plainS?.sizeBytes()
                results.append(sz)
            }
        }

        // 2. Index creation over existing documents (each index alone; dropped after each rep).
        if o.runs("index") {
            let kinds: [(String, String, (String, any IndexConfiguration), (SQLiteSide) throws -> Void, (SQLiteSide) throws -> Void)] = [
                ("index.value", "create value index (city)", TesseraSide.cityIndex, { try $0.createCityIndex() }, { try $0.dropCityIndex() }),
                ("index.partial", "create partial index (rating, hotels)", TesseraSide.partialIndex, { try $0.createPartialIndex() }, { try $0.dropPartialIndex() }),
                ("index.array", "create array index (likes)", TesseraSide.arrayIndex, { try $0.createArrayIndex() }, { try $0.dropArrayIndex() }),
                ("index.fulltext", "create full-text index (FTS4)", TesseraSide.fullTextIndex, { try $0.createFTS4Index() }, { try $0.dropFTS4Index() }),
            ]
            for (key, title, tIndex, sCreate, sDrop) in kinds where o.runs(key) {
                try measure(Measurement(key: key, title: title, ops: n, perOp: false, target: nil), reps: o.writeReps,
                            tessera: EngineRun(run: { try plainT!.create(tIndex); return Outcome(rows: 0) },
                                               teardown: { try plainT!.delete(tIndex) }),
                            sqlite: EngineRun(run: { try sCreate(plainS!); return Outcome(rows: 0) },
                                              teardown: { try sDrop(plainS!) }))
            }
        }
        if !o.keep {
            try plainT?.destroy()
            SQLiteSide.remove(path: root + "/plain.sqlite")
        }
        plainT = nil
        plainS = nil

        // 3. Bulk load with all indexes; the last pair serves the queries and updates.
        var tq: TesseraSide?
        var sq: SQLiteSide?
        let needIndexed = o.runs("load.indexed") || o.runs("size.indexed") || o.runs("get") || o.runs("query") || o.runs("shape") || o.runs("fts") || o.runs("update")
        guard needIndexed else { return }
        let loadIndexed = Measurement(key: "load.indexed", title: "bulk load, all indexes", ops: n, perOp: false,
                                      target: Target(minRatio: 5, label: "≥ 5"))
        try measure(loadIndexed, reps: o.runs("load.indexed") ? o.writeReps : 1,
                    tessera: EngineRun(setup: {
                        if let old = tq { try old.destroy() }
                        tq = try TesseraSide(path: self.root + "/indexed.tessera", mapSize: o.tesseraMapSize, noSync: o.tesseraNoSync)
                        try tq!.createAllIndexes()
                    }, run: { Outcome(rows: try tq!.load(self.documents)) }),
                    sqlite: EngineRun(setup: {
                        sq = nil
                        sq = try SQLiteSide(path: self.root + "/indexed.sqlite")
                        try sq!.createAllIndexes()
                    }, run: { Outcome(rows: try sq!.load(self.documents)) }))
        if !o.runs("load.indexed") { results.removeLast() }
        if o.runs("size.indexed") {
            var sz = Measurement(key: "size.indexed", title: "database size, all indexes", ops: n, perOp: false,
                                 target: Target(minRatio: 1 / 1.2, label: "≤ 1.2× SQLite"))
            sz.tesseraBytes = tq?.sizeBytes
            sz.sqliteBytes = try sq?.sizeBytes()
            results.append(sz)
        }
        if let tq { checkCounts("document count after load", try tq.docs.count, runSQLite ? n : try tq.docs.count) }

        try queries(tq, sq)

        // 7. Updates of 10 % of the documents with every index present (FTS5 dropped first).
        if o.runs("update") {
            if o.runs("fts"), let sq, runSQLite { try sq.dropFTS5Index() }
            let count = max(1, n / 10)
            var batch: [BenchDocument] = []
            if o.runs("update.indexed") {
                try measure(Measurement(key: "update.indexed", title: "update 10%, all indexes", ops: count, perOp: false,
                                        target: Target(minRatio: 5, label: "≥ 5")),
                            reps: o.writeReps,
                            prepare: { rep in
                                var rng = SplitMix64(seed: self.generator.seed, stream: 20, index: rep)
                                batch = rng.distinct(count, below: n).map { i in
                                    let d = self.generator.revision(i, revision: rep + 1)
                                    return BenchDocument(id: d.id, json: d.json)
                                }
                            },
                            tessera: EngineRun(run: { Outcome(rows: try tq!.update(batch)) }),
                            sqlite: EngineRun(run: { Outcome(rows: try sq!.update(batch)) }))
            }
            // Five rounds in a row (one measurement): at N documents, Tessera's full-text index
            // vacuums retired document numbers once per N / 2 changed documents, i.e. once per
            // five rounds of 10 %, so this total carries that cost at its steady-state rate.
            if o.runs("update.sustained") {
                let rounds = 5
                var batches: [[BenchDocument]] = []
                try measure(Measurement(key: "update.sustained", title: "update 10%, 5 rounds in a row (with vacuum)", ops: rounds * count, perOp: false,
                                        target: Target(minRatio: 5, label: "≥ 5")),
                            reps: 1,
                            prepare: { _ in
                                batches = (0..<rounds).map { round in
                                    var rng = SplitMix64(seed: self.generator.seed, stream: 21, index: round)
                                    return rng.distinct(count, below: n).map { i in
                                        let d = self.generator.revision(i, revision: 100 + round)
                                        return BenchDocument(id: d.id, json: d.json)
                                    }
                                }
                            },
                            tessera: EngineRun(run: { Outcome(rows: try batches.reduce(0) { $0 + (try tq!.update($1)) }) }),
                            sqlite: EngineRun(run: { Outcome(rows: try batches.reduce(0) { $0 + (try sq!.update($1)) }) }))
            }
            // The indexes must still agree after the updates.
            if let tq, let sq {
                let p = parameters
                let tags = Array(p.tags.prefix(5))
                checkCounts("UNNEST rows after updates", try tq.unnest(tags), try sq.unnest(tags))
                let cities = Array(p.cities.prefix(20))
                check("city equality after updates", Outcome(rows: try tq.equality(cities).rows, checksum: try tq.equality(cities).checksum),
                      Outcome(rows: try sq.equality(cities).rows, checksum: try sq.equality(cities).checksum))
                for q in p.ftsTerm.prefix(5) {
                    checkCounts("full-text matches of '\(q)' after updates", try tq.ftsCount(q), try sq.ftsCount(q, fts5: false))
                }
            }
        }
        if !o.keep {
            if let tq { try tq.destroy() }
            SQLiteSide.remove(path: root + "/indexed.sqlite")
        }
        sq = nil
    }

    /// Point gets and query workloads on the indexed databases.
    private func queries(_ tq: TesseraSide?, _ sq: SQLiteSide?) throws {
        let o = options
        let p = parameters
        if o.runs("get.point") {
            try measure(Measurement(key: "get.point", title: "point get (random IDs)", ops: p.pointIDs.count, perOp: true,
                                    target: Target(minRatio: 2, label: "≥ 2")),
                        reps: o.reps, warmup: true,
                        tessera: EngineRun(run: { Outcome(rows: try tq!.pointGets(p.pointIDs)) }),
                        sqlite: EngineRun(run: { Outcome(rows: try sq!.pointGets(p.pointIDs)) }))
        }
        if o.runs("query.equality") {
            try measure(Measurement(key: "query.equality", title: "indexed equality (city = ?)", ops: p.cities.count, perOp: true,
                                    target: Target(minRatio: 1.3, label: "≥ 1.3")),
                        reps: o.reps, warmup: true,
                        tessera: EngineRun(run: { let r = try tq!.equality(p.cities); return Outcome(rows: r.rows, checksum: r.checksum) }),
                        sqlite: EngineRun(run: { let r = try sq!.equality(p.cities); return Outcome(rows: r.rows, checksum: r.checksum) }))
        }
        if o.runs("query.range") {
            try measure(Measurement(key: "query.range", title: "range + ORDER BY + LIMIT 20", ops: p.ranges.count, perOp: true,
                                    target: Target(minRatio: 1.5, label: "≥ 1.5")),
                        reps: o.reps, warmup: true,
                        tessera: EngineRun(run: { let r = try tq!.range(p.ranges); return Outcome(rows: r.rows, checksum: r.checksum) }),
                        sqlite: EngineRun(run: { let r = try sq!.range(p.ranges); return Outcome(rows: r.rows, checksum: r.checksum) }))
        }
        if o.runs("query.unnest") {
            try measure(Measurement(key: "query.unnest", title: "UNNEST = tag (array index)", ops: p.tags.count, perOp: true,
                                    target: Target(minRatio: 1.0, label: "≥ 1.0")),
                        reps: o.reps, warmup: true,
                        tessera: EngineRun(run: { Outcome(rows: try tq!.unnest(p.tags)) }),
                        sqlite: EngineRun(run: { Outcome(rows: try sq!.unnest(p.tags)) }))
        }
        if o.runs("query.scan") {
            try measure(Measurement(key: "query.scan", title: "full scan, 2 predicates", ops: p.scans.count, perOp: true,
                                    target: Target(minRatio: 5, label: "≥ 5")),
                        reps: o.reps, warmup: true,
                        tessera: EngineRun(run: { let r = try tq!.scan(p.scans); return Outcome(rows: r.rows, checksum: r.checksum) }),
                        sqlite: EngineRun(run: { let r = try sq!.scan(p.scans); return Outcome(rows: r.rows, checksum: r.checksum) }))
        }
        // The everyday shapes of issue #16 (primary key, OR, aggregates, grouping).
        for shape in QueryShape.all(p, quick: o.quick) where o.runs(shape.key) {
            try measure(Measurement(key: shape.key, title: shape.title, ops: shape.executions.count, perOp: true, target: nil),
                        reps: o.reps, warmup: true,
                        tessera: EngineRun(run: { try tq!.run(shape) }),
                        sqlite: EngineRun(run: { try sq!.run(shape) }))
            if o.explain {
                if let tq { explainText.append("Tessera \(shape.key): \(shape.tessera)\n" + (try tq.explain(shape.tessera))) }
                if let sq { explainText.append("SQLite \(shape.key): \(shape.sqlite)\n" + (try sq.explain(shape.sqlite)).joined(separator: "\n")) }
            }
        }
        if o.runs("fts") {
            if let sq, runSQLite {
                let t0 = now()
                try sq.createFTS5Index()
                notes.append("SQLite FTS5 table (queries only) built over existing data in \(format(seconds: now() - t0)).")
            }
            let sets: [(String, String, [String])] = [
                ("term", "1 term", p.ftsTerm), ("and", "2 terms AND", p.ftsAnd), ("phrase", "phrase", p.ftsPhrase),
            ]
            for (key, title, queries) in sets where o.runs("fts." + key) {
                // Every query must match the same documents in all three indexes (untimed).
                var matches = 0
                var overlap4 = 0
                var overlap5 = 0
                var compared = 0
                for q in queries {
                    let t = try tq?.ftsCount(q)
                    let s4 = try sq?.ftsCount(q, fts5: false)
                    let s5 = try sq?.ftsCount(q, fts5: true)
                    if let t, let s4 { checkCounts("full-text matches of '\(q)' (FTS4)", t, s4) }
                    if let t, let s5 { checkCounts("full-text matches of '\(q)' (FTS5)", t, s5) }
                    matches += t ?? s4 ?? 0
                    if let tq, let sq {
                        let tt = Set(try tq.ftsTop(q))
                        overlap4 += tt.intersection(try sq.ftsTop(q, fts5: false)).count
                        overlap5 += tt.intersection(try sq.ftsTop(q, fts5: true)).count
                        compared += min(10, tt.count)
                    }
                }
                var note = "full text, \(title): \(matches / max(1, queries.count)) matching documents per query on average"
                if compared > 0 {
                    note += "; top-10 overlap with FTS4 rank \(overlap4 * 100 / compared)%, with FTS5 bm25 \(overlap5 * 100 / compared)%"
                }
                notes.append(note + ".")
                // Tessera runs once per query set; its times are compared with FTS4 and with FTS5.
                try measure(Measurement(key: "fts.\(key).fts4", title: "full text \(title), top 10 (vs FTS4 rank)",
                                        ops: queries.count, perOp: true, target: Target(minRatio: 3, label: "≥ 3")),
                            reps: o.reps, warmup: true,
                            tessera: EngineRun(run: { Outcome(rows: try tq!.fullText(queries)) }),
                            sqlite: EngineRun(run: { Outcome(rows: try sq!.fts4(queries)) }))
                let tesseraPart = results[results.count - 1]
                try measure(Measurement(key: "fts.\(key).fts5", title: "full text \(title), top 10 (vs FTS5 bm25)",
                                        ops: queries.count, perOp: true, target: Target(minRatio: 3, label: "≥ 3")),
                            reps: o.reps, warmup: true, tessera: nil,
                            sqlite: EngineRun(run: { Outcome(rows: try sq!.fts5(queries)) }))
                results[results.count - 1].tessera = tesseraPart.tessera
                results[results.count - 1].tesseraOutcome = tesseraPart.tesseraOutcome
                check("full text \(title) (FTS5)", tesseraPart.tesseraOutcome, results[results.count - 1].sqliteOutcome)
            }
        }
        if o.explain {
            if let tq {
                for (name, sql) in [("equality", TesseraSide.equalitySQL), ("range", TesseraSide.rangeSQL),
                                    ("unnest", TesseraSide.unnestSQL), ("fts", TesseraSide.ftsSQL), ("scan", TesseraSide.scanSQL)] {
                    explainText.append("Tessera \(name): \(sql)\n" + (try tq.explain(sql)))
                }
            }
            if let sq {
                for (name, sql) in SQLiteSide.querySQL where o.runs("fts") || !name.hasPrefix("fts5") {
                    explainText.append("SQLite \(name): \(sql)\n" + (try sq.explain(sql)).joined(separator: "\n"))
                }
            }
        }
    }
}

/// A fatal benchmark error.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// Removes a directory tree (databases of this run only).
func removeTree(_ path: String) {
    guard let dir = opendir(path) else { _ = unlink(path); return }
    while let e = readdir(dir) {
        let name = withUnsafeBytes(of: e.pointee.d_name) { raw in
            String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
        }
        if name == "." || name == ".." { continue }
        let child = path + "/" + name
        var st = stat()
        if lstat(child, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR { removeTree(child) } else { _ = unlink(child) }
    }
    closedir(dir)
    _ = rmdir(path)
}

/// The timed part of a Tessera run. Not inlined, so that a profiler can collect just this
/// region: `valgrind --tool=callgrind --toggle-collect='*tesseraTimedRegion*' …`.
@inline(never)
func tesseraTimedRegion(_ body: () throws -> Outcome) rethrows -> Outcome { try body() }

/// The timed part of an SQLite run (see `tesseraTimedRegion`).
@inline(never)
func sqliteTimedRegion(_ body: () throws -> Outcome) rethrows -> Outcome { try body() }
