import Dispatch
import Testing
@testable import Tessera

/// Full-text entries tokenized before the write transaction (`FullTextPreparer`, run by
/// `tessera import` on its parser thread) store exactly what a save that tokenizes stores,
/// and are ignored by an index whose definition is not the one they were made for.
@Suite("Full-text: entries prepared before the save")
struct FullTextPreparationTests {
    /// Every key and value of every table of a collection's indexes, by index name.
    static func indexTables(_ db: Database, _ coll: Collection) throws -> [String: [[UInt8]: [UInt8]]] {
        let store = try coll.currentStore()
        return try db.read { snap in
            var out: [String: [[UInt8]: [UInt8]]] = [:]
            for index in store.indexes {
                var entries: [[UInt8]: [UInt8]] = [:]
                for (t, table) in ([index.table] + index.extraTables).enumerated() {
                    try snap.withCursor(table) { c in
                        try c.forEach { k, v in entries[[UInt8(t)] + Array(k)] = Array(v); return true }
                    }
                }
                out[index.definition.name] = entries
            }
            return out
        }
    }

    /// Queries on the indexes `ft` and `ftBoth` return the same documents in both databases.
    static func expectSameMatches(_ plainDB: Database, _ otherDB: Database) throws {
        for index in ["ft", "ftBoth"] {
            for q in ["run", "amber birch", "\"view nights\"", "cafe", "über OR x"] {
                let sql = "SELECT meta().id AS id FROM _ WHERE match(\(index), $q) ORDER BY meta().id"
                let a = try plainDB.createQuery(sql); a.parameters = Parameters().setString(q, forName: "q")
                let b = try otherDB.createQuery(sql); b.parameters = Parameters().setString(q, forName: "q")
                let want = try a.execute().allResults().map { $0.string(at: 0) }
                #expect(try b.execute().allResults().map { $0.string(at: 0) } == want, "\(index) '\(q)'")
                if index == "ft" && q == "run" { #expect(want.count > 10) }
            }
        }
    }

    static let words = ["amber", "birch", "cedar", "running", "runs", "the", "of", "view", "nights", "Über", "café", "x"]

    /// A random body: text in `body` (sometimes missing or not a string), a title, a number.
    static func json(_ r: inout SplitMix64) -> String {
        let text = (0..<(1 + r.int(12))).map { _ in words[r.int(words.count)] }.joined(separator: " ")
        switch r.int(10) {
        case 0: return #"{"n": \#(r.int(100))}"#
        case 1: return #"{"body": \#(r.int(100)), "title": "\#(text)"}"#
        case 2: return #"{"body": null, "n": 1}"#
        default: return #"{"body": "\#(text)", "title": "\#(words[r.int(words.count)])", "n": \#(r.int(100))}"#
        }
    }

    static func encoded(_ json: String) throws -> [UInt8] {
        var text = json
        return try text.withUTF8 { try BinaryEncoder.encodeJSON(UnsafeRawBufferPointer($0)) }
    }

    /// Bodies prepared on other threads at once (the tokenizer's workspaces are shared).
    static func preparedConcurrently(_ jsons: [String], _ preparer: FullTextPreparer) throws -> [PreparedBody] {
        let plain = try jsons.map { try PreparedBody(id: nil, encodedBody: try encoded($0)) }
        let out = UnsafeMutableBufferPointer<PreparedBody>.allocate(capacity: plain.count)
        defer { out.deallocate() }
        _ = out.initialize(from: plain)
        nonisolated(unsafe) let shared = out
        DispatchQueue.concurrentPerform(iterations: plain.count) { i in preparer.prepare(&shared[i]) }
        defer { out.deinitialize() }
        return Array(out)
    }

    @Test func preparedEntriesStoreWhatTokenizingStores() throws {
        let plainDB = try Database.temporary()
        let preparedDB = try Database.temporary()
        defer { try? plainDB.close(); try? preparedDB.close() }
        var collections: [Collection] = []
        for db in [plainDB, preparedDB] {
            let c = try db.defaultCollection()
            try c.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: "en"))
            try c.createIndex(withName: "ftBoth", config: FullTextIndexConfiguration(["body", "title"], ignoreAccents: true, language: ""))
            // A partial index and a value index are not prepared: they index as usual.
            try c.createIndex(withName: "ftPartial", config: FullTextIndexConfiguration(["title"], where: "n > 50", language: "en"))
            try c.createIndex(withName: "byN", config: ValueIndexConfiguration(["n"]))
            collections.append(c)
        }
        let (plain, prepared) = (collections[0], collections[1])
        let preparer = try prepared.fullTextPreparer()
        #expect(!preparer.isEmpty)

        var r = SplitMix64(seed: 42)
        for round in 0..<6 {
            // New documents, then updates of some (the old text retires its number), in
            // batches as `tessera import` commits them.
            let ids = (0..<150).map { i in round % 2 == 0 ? "r\(round)-\(i)" : "r\(round - 1)-\(r.int(150))" }
            let jsons = ids.map { _ in Self.json(&r) }
            let bodies = try Self.preparedConcurrently(jsons, preparer)
            #expect(bodies.contains { !$0.fullText.isEmpty })
            #expect(bodies.allSatisfy { $0.fullText.count == 2 }, "the partial index is not prepared")
            try plainDB.inBatch { for (id, json) in zip(ids, jsons) { try plain.save(id: id, json: json) } }
            try preparedDB.inBatch { for (id, body) in zip(ids, bodies) { try prepared.save(id: id, prepared: body) } }
            #expect(try Self.indexTables(plainDB, plain) == Self.indexTables(preparedDB, prepared), "round \(round)")
        }
        try Self.expectSameMatches(plainDB, preparedDB)
        let report = try preparedDB.integrityCheck()
        #expect(report.isOK, "\(report)")
    }

    @Test func entriesMadeForAnotherDefinitionAreNotUsed() throws {
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        try coll.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: "en"))
        let preparer = try coll.fullTextPreparer()
        let bodies = try Self.preparedConcurrently([#"{"body": "running nights"}"#, #"{"body": "the runs"}"#], preparer)
        // The index is made again without stemming before the bodies are saved: their
        // stemmed entries ("run", "night") must not be stored.
        try coll.deleteIndex(forName: "ft")
        try coll.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: ""))
        try db.inBatch {
            try coll.save(id: "a", prepared: bodies[0])
            try coll.save(id: "b", prepared: bodies[1])
        }
        func ids(_ q: String) throws -> [String] {
            let query = try db.createQuery("SELECT meta().id AS id FROM docs WHERE match(ft, $q) ORDER BY meta().id")
            query.parameters = Parameters().setString(q, forName: "q")
            return try query.execute().allResults().compactMap { $0.string(at: 0) }
        }
        #expect(try ids("running") == ["a"])
        #expect(try ids("run").isEmpty)
        #expect(try ids("the") == ["b"])
        let report = try db.integrityCheck()
        #expect(report.isOK, "\(report)")
    }
}

/// A large transaction tokenizes on a second core (`FullTextBackgroundTokenizer`): what it
/// stores, and what queries inside the transaction see, is what tokenizing in place gives.
@Suite("Full-text: tokenizing on a second core")
struct FullTextBackgroundTokenizerTests {
    typealias Maintenance = FullTextBlockMaintenanceTests

    @Test(arguments: [21, 22, 23] as [UInt64])
    func aLargeBatchIndexesWhatItSaves(seed: UInt64) throws {
        var r = SeededRandom(seed: seed)
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        try coll.createIndex(withName: "ftLive", config: FullTextIndexConfiguration(["body"], language: ""))
        var model: [String: String] = [:]
        let total = FullTextPendingChanges.backgroundAfter + 6 * FullTextBackgroundTokenizer.chunkSize + 37
        var checkedInside = 0
        try db.inBatch {
            for d in 0..<total {
                let body = Maintenance.text(&r)
                try coll.save(id: "doc\(d)", properties: ["body": .string(body)])
                model["doc\(d)"] = body
                // Edits and deletes of documents saved moments ago (still being tokenized).
                if d > FullTextPendingChanges.backgroundAfter && r.int(20) == 0 {
                    let victim = "doc\(d - r.int(40))"
                    let roll = r.int(3)
                    if roll == 0 {
                        let edited = Maintenance.text(&r)
                        try coll.save(id: victim, properties: ["body": .string(edited)])
                        model[victim] = edited
                    } else if roll == 1, model[victim] != nil {
                        try coll.delete(id: victim)
                        model[victim] = nil
                    } else if roll == 2, model[victim] != nil {
                        try coll.purge(id: victim)
                        model[victim] = nil
                    }
                }
                // A query inside the batch sees every save so far.
                if d % 700 == 699 {
                    let w = Maintenance.words[r.int(Maintenance.words.count)]
                    let got = try Maintenance.query(db, "SELECT meta().id AS id FROM docs WHERE match(ftLive, $q)", w).sorted()
                    #expect(got == Maintenance.ids(matching: w, model), "inside the batch at \(d), '\(w)'")
                    checkedInside += 1
                }
            }
        }
        #expect(checkedInside >= 2)
        try Maintenance().verify(db, model, round: 0, indexes: ["ftLive"])
        try Maintenance().expectSameAsRebuilt(db, coll, model: model, "seed \(seed)")
    }

    @Test func anIndexDroppedAndMadeAgainWhileChunksAreInFlight() throws {
        var r = SeededRandom(seed: 31)
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        try coll.createIndex(withName: "ftLive", config: FullTextIndexConfiguration(["body"], language: ""))
        var model: [String: String] = [:]
        let n = FullTextPendingChanges.backgroundAfter + 2 * FullTextBackgroundTokenizer.chunkSize + 17
        try db.inBatch {
            for d in 0..<n {
                let body = Maintenance.text(&r)
                try coll.save(id: "doc\(d)", properties: ["body": .string(body)])
                model["doc\(d)"] = body
            }
            // Chunks are in flight: the index goes, and comes back built from the documents.
            try coll.deleteIndex(forName: "ftLive")
            try coll.createIndex(withName: "ftLive", config: FullTextIndexConfiguration(["body"], language: ""))
            for d in n..<(2 * n) {
                let body = Maintenance.text(&r)
                try coll.save(id: "doc\(d)", properties: ["body": .string(body)])
                model["doc\(d)"] = body
            }
        }
        try Maintenance().verify(db, model, round: 0, indexes: ["ftLive"])
        try Maintenance().expectSameAsRebuilt(db, coll, model: model, "dropped and made again")
    }

    @Test func aBatchThatFailsLeavesNothing() throws {
        var r = SeededRandom(seed: 5)
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        try coll.createIndex(withName: "ftLive", config: FullTextIndexConfiguration(["body"], language: ""))
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try db.inBatch {
                for d in 0..<(FullTextPendingChanges.backgroundAfter + 3 * FullTextBackgroundTokenizer.chunkSize + 5) {
                    try coll.save(id: "doc\(d)", properties: ["body": .string(Maintenance.text(&r))])
                }
                throw Stop()
            }
        }
        #expect(try coll.count == 0)
        #expect(try Maintenance.query(db, "SELECT meta().id AS id FROM docs WHERE match(ftLive, $q)", Maintenance.words[0]).isEmpty)
        let report = try db.performMaintenance(.integrityCheck)
        #expect(report.isOK, "\(report)")
    }
}

extension FullTextBackgroundTokenizerTests {
    /// Large bodies are handed to the worker after 16 MB, not after 256 documents, and every
    /// document's entries come back once, in the order submitted, equal to tokenizing in place.
    @Test func largeBodiesAreHandedOverByTheirSize() throws {
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        try coll.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: "en"))
        let index = try #require(try coll.currentStore().indexes.first)
        let kind = try #require(index.kind as? FullTextIndexKind)
        let paths = try #require(index.plainPaths)
        var r = SeededRandom(seed: 9)
        let bodyBytes = 200_000
        let perChunk = (FullTextBackgroundTokenizer.chunkBytes + bodyBytes - 1) / bodyBytes
        #expect(perChunk < FullTextBackgroundTokenizer.chunkSize)
        let background = FullTextBackgroundTokenizer(kind: kind, paths: paths)
        var applied: [UInt32] = []
        var bodies: [[UInt8]] = []
        func apply(_ job: FullTextBackgroundTokenizer.Job, _ prepared: PreparedFullText) {
            applied.append(job.number)
            let inPlace = job.body.withUnsafeBytes { PreparedFullText(tokenizing: BinaryValue.root($0)!, paths: paths, kind: kind) }
            #expect(prepared.tokenCount == inPlace.tokenCount && prepared.bytes == inPlace.bytes, "document \(job.number)")
        }
        for n in 0..<UInt32(2 * perChunk + 10) {
            var text = ""
            while text.utf8.count < bodyBytes { text += FullTextBlockMaintenanceTests.text(&r) + " " }
            let body = BinaryEncoder.encode(.object(["body": .string(text)]))
            bodies.append(body)
            try background.submit(.init(number: n, id: Array("d\(n)".utf8), body: body), apply: apply)
        }
        // Two chunks were handed over by size; the first has come back.
        #expect(applied == Array(0..<UInt32(perChunk)))
        try background.drain(apply)
        #expect(applied == Array(0..<UInt32(2 * perChunk + 10)))
        #expect(background.isEmpty)
    }
}
