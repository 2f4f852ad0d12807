import Dispatch
import Synchronization
import Testing
@testable import Tessera

/// Full-text entries grouped by term before the transaction (`FullTextRunPreparer`, run by
/// `tessera import --batch N` on its parser thread): a transaction that numbers exactly one
/// run's documents writes the run's segment as it was made, and stores byte for byte what a
/// save that tokenizes stores; any other transaction queues the run's entries as usual.
@Suite("Full-text: runs grouped before the save")
struct FullTextRunTests {
    typealias Preparation = FullTextPreparationTests

    /// Two databases with the same indexes: full text over `body` (stemmed) and over `body`
    /// and `title`, a partial full-text index (never prepared) and a value index.
    static func databases() throws -> [(Database, Collection)] {
        try (0..<2).map { _ in
            let db = try Database.temporary()
            let c = try db.defaultCollection()
            try c.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: "en"))
            try c.createIndex(withName: "ftBoth", config: FullTextIndexConfiguration(["body", "title"], ignoreAccents: true, language: ""))
            try c.createIndex(withName: "ftPartial", config: FullTextIndexConfiguration(["title"], where: "n > 50", language: "en"))
            try c.createIndex(withName: "byN", config: ValueIndexConfiguration(["n"]))
            return (db, c)
        }
    }

    /// A database whose collection `docs` has one full-text index over `body`, and that index.
    static func fullTextIndex() throws -> (Database, IndexStore) {
        let (db, coll) = try temporaryDocsDatabase()
        do {
            try coll.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: ""))
            return (db, try #require(try coll.currentStore().indexes.first))
        } catch {
            try? db.close()
            throw error
        }
    }

    /// Bodies prepared in order by one `FullTextRunPreparer`, as the import's parser does.
    static func prepared(_ jsons: [String], _ preparer: FullTextRunPreparer) throws -> [PreparedBody] {
        try jsons.map { json in
            var body = try PreparedBody(id: nil, encodedBody: try Preparation.encoded(json))
            preparer.prepare(&body)
            return body
        }
    }

    /// The runs of `bodies`' entries (one per prepared index and run), each once.
    static func runs(_ bodies: [PreparedBody]) -> [FullTextRun] {
        var seen: [ObjectIdentifier: FullTextRun] = [:]
        var out: [FullTextRun] = []
        for b in bodies {
            for e in b.fullText {
                guard let run = e.run, seen[ObjectIdentifier(run)] == nil else { continue }
                seen[ObjectIdentifier(run)] = run
                out.append(run)
            }
        }
        return out
    }

    @Test func aTransactionOfOneRunWritesItsSegment() throws {
        let dbs = try Self.databases()
        defer { for (db, _) in dbs { try? db.close() } }
        let (plainDB, plain) = dbs[0], (runDB, runs) = dbs[1]
        let runLength = 24
        let preparer = FullTextRunPreparer(try runs.fullTextPreparer(), runLength: runLength)
        var r = SplitMix64(seed: 77)
        var written = 0
        // Past `segmentLimit` transactions: the waiting segments are merged into the blocks
        // along the way, and the segments written after that are runs' again.
        let rounds = FullTextPendingChanges.segmentLimit + 8
        for round in 0..<rounds {
            // New documents, and every fourth batch replaces earlier ones (their old text
            // retires its number; one whose text did not change takes none, which makes the
            // batch not its run).
            let replacing = round % 4 == 3
            let ids = (0..<runLength).map { i in replacing ? "r\(r.int(round))-\(r.int(runLength))" : "r\(round)-\(i)" }
            let jsons = ids.map { _ in Preparation.json(&r) }
            let bodies = try Self.prepared(jsons, preparer)
            #expect(bodies.allSatisfy { $0.fullText.count == 2 && $0.fullText.allSatisfy { $0.run != nil } })
            let made = Self.runs(bodies)
            #expect(made.count == 2 && made.allSatisfy { $0.image != nil }, "round \(round): two sealed runs")
            try plainDB.inBatch { for (id, json) in zip(ids, jsons) { try plain.save(id: id, json: json) } }
            try runDB.inBatch { for (id, body) in zip(ids, bodies) { try runs.save(id: id, prepared: body) } }
            #expect(try Preparation.indexTables(plainDB, plain) == Preparation.indexTables(runDB, runs), "round \(round)")
            let used = made.map(\.timesWritten)
            if round == 0 {
                // The first batch into an index without blocks writes blocks, not a segment.
                #expect(used == [0, 0])
            } else if !replacing {
                #expect(used == [1, 1], "round \(round)")
            }
            written += used.reduce(0, +)
        }
        #expect(written >= 2 * (rounds - 1 - rounds / 4))
        try Preparation.expectSameMatches(plainDB, runDB)
        let report = try runDB.integrityCheck()
        #expect(report.isOK, "\(report)")
    }

    /// Transactions that are not exactly one run: shorter and longer than a run, a run's
    /// document saved twice, a run mixed with saves that tokenize, a run whose documents are
    /// saved out of order. Their entries are queued one by one, and the tables are the same.
    @Test func anyOtherTransactionQueuesTheEntriesAsUsual() throws {
        let dbs = try Self.databases()
        defer { for (db, _) in dbs { try? db.close() } }
        let (plainDB, plain) = dbs[0], (runDB, runs) = dbs[1]
        let runLength = 20
        let preparer = FullTextRunPreparer(try runs.fullTextPreparer(), runLength: runLength)
        var r = SplitMix64(seed: 78)
        // Blocks first (an index without them writes none of the segments tested here).
        let seed = (0..<30).map { _ in Preparation.json(&r) }
        try plainDB.inBatch { for (i, j) in seed.enumerated() { try plain.save(id: "s\(i)", json: j) } }
        try runDB.inBatch { for (i, j) in seed.enumerated() { try runs.save(id: "s\(i)", json: j) } }

        var allRuns: [FullTextRun] = []
        func apply(_ name: String, _ batches: [[(id: String, json: String, body: PreparedBody?)]]) throws {
            for batch in batches {
                try plainDB.inBatch { for d in batch { try plain.save(id: d.id, json: d.json) } }
                try runDB.inBatch {
                    for d in batch {
                        if let body = d.body { try runs.save(id: d.id, prepared: body) } else { try runs.save(id: d.id, json: d.json) }
                    }
                }
                #expect(try Preparation.indexTables(plainDB, plain) == Preparation.indexTables(runDB, runs), "\(name)")
            }
        }
        func documents(_ prefix: String, _ n: Int) throws -> [(id: String, json: String, body: PreparedBody?)] {
            let jsons = (0..<n).map { _ in Preparation.json(&r) }
            let bodies = try Self.prepared(jsons, preparer)
            allRuns += Self.runs(bodies)
            return (0..<n).map { ("\(prefix)\($0)", jsons[$0], bodies[$0]) }
        }

        // Runs of 20 saved in transactions of 14: no transaction is a run.
        let short = try documents("a", 3 * runLength)
        try apply("shorter", stride(from: 0, to: short.count, by: 14).map { Array(short[$0..<min($0 + 14, short.count)]) })
        // Two runs in one transaction.
        try apply("two runs", [try documents("b", 2 * runLength)])
        // One run, its fifth document saved a second time at the end.
        var twice = try documents("c", runLength)
        twice.append((twice[4].id, Preparation.json(&r), nil))
        try apply("saved twice", [twice])
        // One run and a save that tokenizes, in one transaction.
        var mixed = try documents("d", runLength)
        mixed.insert(("d-extra", Preparation.json(&r), nil), at: 7)
        try apply("mixed", [mixed])
        // One run saved in another order.
        var shuffled = try documents("e", runLength)
        shuffled.swapAt(2, 11)
        try apply("out of order", [shuffled])

        #expect(allRuns.count == 2 * 8)
        #expect(allRuns.allSatisfy { $0.timesWritten == 0 }, "no run was written as it was made")
        let report = try runDB.integrityCheck()
        #expect(report.isOK, "\(report)")
    }

    @Test func runsAreMadeOnlyForLengthsASegmentTakes() throws {
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        try coll.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: "en"))
        for (length, made) in [(nil, false), (1, false), (2, true), (FullTextRunPreparer.longestRun, true), (FullTextRunPreparer.longestRun + 1, false)] as [(Int?, Bool)] {
            let preparer = FullTextRunPreparer(try coll.fullTextPreparer(), runLength: length)
            let bodies = try Self.prepared([#"{"body": "amber birch"}"#, #"{"body": "cedar"}"#], preparer)
            #expect(bodies.allSatisfy { $0.fullText.count == 1 })
            #expect(bodies.allSatisfy { ($0.fullText[0].run != nil) == made }, "\(String(describing: length))")
            if length == 2 { #expect(bodies.map { $0.fullText[0].ordinal } == [0, 1]) }
        }
    }
}

extension FullTextRunTests {
    /// A segment image lists its terms in byte order, each once, also when many share their
    /// first eight bytes (the order sorts those by their bytes after the integer sort).
    @Test(arguments: [1, 2, 3] as [UInt64])
    func segmentImagesListTermsInByteOrder(seed: UInt64) throws {
        let (db, store) = try Self.fullTextIndex()
        defer { try? db.close() }
        let pending = FullTextPendingChanges(store: store, state: .empty, recordsOnly: true)
        var r = SplitMix64(seed: seed)
        var added = Set<[UInt8]>()
        for document in 0..<UInt32(300) {
            // Terms over two letters, up to 14 long: most share their first eight bytes with others.
            for _ in 0..<(1 + r.int(6)) {
                let term = (0..<(1 + r.int(14))).map { _ in UInt8(ascii: r.int(2) == 0 ? "a" : "b") }
                added.insert(term)
                pending.add(term: term[...], document: document, body: [1, 0, 0][...])
            }
        }
        let image = try pending.segmentImage()
        defer { image.deallocate() }
        let terms = image.items.indices.map { i in Array(image.entry(i, segment: 0, base: 0).key.dropFirst(4)) }
        #expect(terms.count == added.count)
        #expect(Set(terms) == added)
        #expect(zip(terms, terms.dropFirst()).allSatisfy { $0.lexicographicallyPrecedes($1) })
    }
}

extension FullTextRunTests {
    /// A run's image is byte for byte the image a write transaction's queue makes of the same
    /// documents numbered from 0 (`FullTextPendingChanges.segmentImage`): terms that share
    /// their first eight bytes, documents without terms, and entries from two term caches
    /// (the run then finds terms by their bytes).
    @Test(arguments: [4, 5, 6] as [UInt64])
    func aRunsImageIsTheQueuesImage(seed: UInt64) throws {
        let (db, store) = try Self.fullTextIndex()
        defer { try? db.close() }
        var r = SplitMix64(seed: seed)
        let keys = [TermCacheKey(workspace: 1, generation: 1), TermCacheKey(workspace: 2, generation: 1)]
        var ids: [[[UInt8]: Int32]] = [[:], [:]]
        var documents: [PreparedFullText] = []
        for d in 0..<400 {
            // The second cache for a stretch in the middle, as a second workspace would.
            let k = d >= 150 && d < 260 && r.int(3) > 0 ? 1 : 0
            var terms = Set<[UInt8]>()
            if r.int(12) > 0 {
                for _ in 0..<(1 + r.int(8)) { terms.insert((0..<(1 + r.int(12))).map { _ in UInt8(ascii: r.int(2) == 0 ? "a" : "b") }) }
            }
            var entries: [PreparedFullText.Entry] = []
            var bytes: [UInt8] = []
            for term in terms {
                let id = ids[k][term] ?? Int32(ids[k].count)
                ids[k][term] = id
                bytes += term
                let termEnd = Int32(bytes.count)
                bytes += (0..<(1 + r.int(6))).map { _ in UInt8(r.int(256)) }
                entries.append(.init(termID: id, frequency: Int32(1 + r.int(3)), termEnd: termEnd, valueEnd: Int32(bytes.count)))
            }
            documents.append(PreparedFullText(definition: store.definition, cacheKey: terms.isEmpty ? nil : keys[k],
                                              tokenCount: 3 * terms.count, entries: entries, bytes: bytes))
        }
        let run = FullTextRun(length: documents.count)
        for (i, d) in documents.enumerated() { #expect(run.add(d) == Int32(i)) }
        let queue = FullTextPendingChanges(store: store, state: .empty, recordsOnly: true)
        for (i, d) in documents.enumerated() {
            d.forEach { key, tokenCount, termID, term, positions, frequency in
                queue.addInterned(key: key, termID: termID, term: term, document: UInt32(i), tokenCount: tokenCount,
                                  positions: positions, frequency: frequency)
            }
        }
        let made = try #require(run.image)
        let queued = try queue.segmentImage()
        defer { queued.deallocate() }
        #expect(made.postingCount == queued.postingCount)
        #expect(made.items.count == queued.items.count)
        #expect(made.items.count == Set(ids[0].keys).union(ids[1].keys).count)
        for i in 0..<min(made.items.count, queued.items.count) {
            let a = made.entry(i, segment: 7, base: 1_000), b = queued.entry(i, segment: 7, base: 1_000)
            #expect(Array(a.key) == Array(b.key) && Array(a.value) == Array(b.value), "term \(i)")
        }
    }
}

extension FullTextRunTests {
    /// As `tessera import` runs it: bodies prepared (and runs sealed) on another thread, handed
    /// over in chunks of 64 through a lock, saved in transactions of one run each while the
    /// other thread goes on. (Under ThreadSanitizer this is the hand-over it checks.)
    @Test func runsMadeOnAnotherThread() throws {
        let dbs = try Self.databases()
        defer { for (db, _) in dbs { try? db.close() } }
        let (plainDB, plain) = dbs[0], (runDB, runs) = dbs[1]
        let runLength = 50, batches = 12
        var r = SplitMix64(seed: 79)
        let jsons = (0..<(runLength * batches)).map { _ in Preparation.json(&r) }
        let first = (0..<40).map { _ in Preparation.json(&r) }
        for (db, c) in dbs { try db.inBatch { for (i, j) in first.enumerated() { try c.save(id: "f\(i)", json: j) } } }

        final class HandOver: Sendable {
            let chunks = Mutex<[[PreparedBody]]>([])
            let ready = DispatchSemaphore(value: 0)
        }
        let handOver = HandOver()
        let preparer = FullTextRunPreparer(try runs.fullTextPreparer(), runLength: runLength)
        nonisolated(unsafe) let unsafePreparer = preparer
        let encoded = try jsons.map { try Preparation.encoded($0) }
        DispatchQueue.global().async {
            var chunk: [PreparedBody] = []
            for (i, body) in encoded.enumerated() {
                var prepared = try! PreparedBody(id: nil, encodedBody: body)
                unsafePreparer.prepare(&prepared)
                chunk.append(prepared)
                if chunk.count == 64 || i == encoded.count - 1 {
                    handOver.chunks.withLock { $0.append(chunk) }
                    handOver.ready.signal()
                    chunk = []
                }
            }
        }
        var received: [PreparedBody] = []
        var saved = 0
        while saved < jsons.count {
            handOver.ready.wait()
            received += handOver.chunks.withLock { taken in
                defer { taken.removeAll() }
                return taken.flatMap { $0 }
            }
            // Every whole run received so far is saved as a transaction of its own.
            while received.count >= runLength {
                let batch = Array(received.prefix(runLength))
                received.removeFirst(runLength)
                let ids = (saved..<(saved + runLength)).map { "d\($0)" }
                try runDB.inBatch { for (id, body) in zip(ids, batch) { try runs.save(id: id, prepared: body) } }
                try plainDB.inBatch { for (id, k) in zip(ids, saved...) { try plain.save(id: id, json: jsons[k]) } }
                #expect(Self.runs(batch).allSatisfy { $0.timesWritten == 1 }, "run at \(saved)")
                saved += runLength
            }
        }
        #expect(try Preparation.indexTables(plainDB, plain) == Preparation.indexTables(runDB, runs))
        let report = try runDB.integrityCheck()
        #expect(report.isOK, "\(report)")
    }
}

extension FullTextRunTests {
    /// A run whose entries outgrow its limit makes no image (its offsets are 32-bit): its
    /// documents still get their ordinals, and a transaction of them queues their entries.
    @Test func aRunTooLargeMakesNoImage() throws {
        let (db, store) = try Self.fullTextIndex()
        defer { try? db.close() }
        let kind = try #require(store.kind as? FullTextIndexKind)
        let paths = try #require(store.plainPaths)
        let bodies = try (0..<6).map { i in try Preparation.encoded(#"{"body": "amber birch cedar dune \#(i)"}"#) }
        let prepared = bodies.map { b in b.withUnsafeBytes { PreparedFullText(tokenizing: BinaryValue.root($0)!, paths: paths, kind: kind) } }
        let small = FullTextRun(length: 6, maximumBytes: 100)
        #expect(prepared.map { small.add($0) } == Array(0..<6))
        #expect(small.image == nil)
        let large = FullTextRun(length: 6)
        #expect(prepared.map { large.add($0) } == Array(0..<6))
        #expect(large.image?.postingCount == 6 * 5)
    }
}
