import Testing
@testable import Tessera

/// `Collection.save(jsonDocuments:)`: documents encoded on a worker thread while the caller's
/// thread writes store exactly what saving them one by one with `save(id:json:)` stores, and a
/// bad document anywhere in the sequence saves nothing.
@Suite("Saving many JSON documents at once")
struct JSONBatchSaveTests {
    /// Every live and deleted document of `c`: ID → (sequence, revision, body as JSON).
    static func documents(_ db: Database, _ c: Collection) throws -> [String: String] {
        var out: [String: String] = [:]
        let store = try c.currentStore()
        try db.read { snap in
            try store.documents.forEach(snap) { k, v in
                let id = String(decoding: k, as: UTF8.self)
                let h = DocumentRecord.header(v)!
                out[id] = "\(h.sequence) \(h.revisionID) \(h.deleted) \(Array(DocumentRecord.body(v)))"
                return true
            }
        }
        return out
    }

    static func makeIndexes(_ c: Collection) throws {
        try c.createIndex(withName: "byCity", config: ValueIndexConfiguration(["city"]))
        try c.createIndex(withName: "byTag", config: ArrayIndexConfiguration(path: "tags"))
        try c.createIndex(withName: "text", config: FullTextIndexConfiguration(["text"], language: "en"))
        try c.createIndex(withName: "cheapText", config: FullTextIndexConfiguration(["text"], where: "n < 20", language: ""))
    }

    /// The order `save(jsonDocuments:)` writes a collection in, in a transaction of its own:
    /// by ID (bytewise; equal IDs in their order) when it is more than one chunk.
    static func writeOrder(_ docs: [(id: String, json: String)]) -> [(id: String, json: String)] {
        guard docs.count > JSONBatchChunk.maxDocuments else { return docs }
        return docs.enumerated().sorted { a, b in
            a.element.id == b.element.id ? a.offset < b.offset : Array(a.element.id.utf8).lexicographicallyPrecedes(b.element.id.utf8)
        }.map(\.element)
    }

    static let words = ["amber", "birch", "cedar", "running", "runs", "the", "of", "view", "nights", "Über", "café"]

    /// Random documents: IDs out of order, repeated (a later one replaces an earlier), some
    /// large enough to close a chunk by bytes.
    static func sequence(_ r: inout SplitMix64, count: Int, idSpace: Int) -> [(id: String, json: String)] {
        (0..<count).map { _ in
            let id = "doc\(r.int(idSpace))"
            let words = (0..<(1 + r.int(30))).map { _ in Self.words[r.int(Self.words.count)] }
            let text = words.joined(separator: " ")
            // One in 40 carries 24 KB (not indexed): chunks of at most 64 KB (`maxChunkBytes`)
            // close by size as well as by count.
            let blob = r.int(40) == 0 ? String(repeating: "cedar ", count: 4_000) : ""
            let tags = (0..<r.int(4)).map { _ in "\"t\(r.int(9))\"" }.joined(separator: ",")
            return (id, #"{"city": "c\#(r.int(40))", "n": \#(r.int(100)), "tags": [\#(tags)], "text": "\#(text)", "blob": "\#(blob)"}"#)
        }
    }

    @Test(arguments: [0, 1, 255, 256, 257, 3_000])
    func storesWhatSavingOneByOneStores(count: Int) throws {
        for helps in [1.3, 0, .infinity] { try storesWhatSavingOneByOneStores(count: count, writerHelpsAbove: helps) }
    }

    func storesWhatSavingOneByOneStores(count: Int, writerHelpsAbove: Double) throws {
        let oneByOne = try Database.temporary()
        let together = try Database.temporary()
        // Saved one by one in the order the batch writes them: the same index tables (full-text
        // document numbers follow the order of the writes).
        let inWriteOrder = try Database.temporary()
        defer { try? oneByOne.close(); try? together.close(); try? inWriteOrder.close() }
        var r = SplitMix64(seed: UInt64(count) &+ 7)
        let existing = Self.sequence(&r, count: 300, idSpace: 2_000)
        let docs = Self.sequence(&r, count: count, idSpace: 2_000)
        var collections: [Collection] = []
        for db in [oneByOne, together, inWriteOrder] {
            let c = try db.defaultCollection()
            try Self.makeIndexes(c)
            // Documents already there: some of the sequence's are updates; one is deleted.
            try db.inBatch { for d in existing { try c.save(id: d.id, json: d.json) } }
            try c.delete(id: existing[0].id)
            collections.append(c)
        }
        try oneByOne.inBatch { for d in docs { try collections[0].save(id: d.id, json: d.json) } }
        try inWriteOrder.inBatch { for d in Self.writeOrder(docs) { try collections[2].save(id: d.id, json: d.json) } }
        let saved = try collections[1].save(jsonDocuments: docs, writerHelpsAbove: writerHelpsAbove, maxChunkBytes: 64 << 10)
        #expect(saved == count)
        #expect(try Self.documents(together, collections[1]) == Self.documents(oneByOne, collections[0]))
        #expect(try collections[1].changes(since: 0) == collections[0].changes(since: 0))
        #expect(try FullTextPreparationTests.indexTables(together, collections[1])
                == FullTextPreparationTests.indexTables(inWriteOrder, collections[2]))
        #expect(try collections[1].count == collections[0].count)
        let q = try together.createQuery("SELECT count(*) AS n FROM _ WHERE match(text, 'cedar')")
        let q0 = try oneByOne.createQuery("SELECT count(*) AS n FROM _ WHERE match(text, 'cedar')")
        #expect(try q.execute().allResults().map { $0.int(forKey: "n") } == q0.execute().allResults().map { $0.int(forKey: "n") })
    }

    @Test(arguments: [1, 200, 256, 257, 700, 2_999])
    func aBadDocumentSavesNothing(position: Int) throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        try Self.makeIndexes(c)
        var r = SplitMix64(seed: UInt64(position))
        try c.save(jsonDocuments: Self.sequence(&r, count: 500, idSpace: 100_000))
        let before = try Self.documents(db, c)
        let tablesBefore = try FullTextPreparationTests.indexTables(db, c)

        var docs = Self.sequence(&r, count: 3_000, idSpace: 100_000)
        docs[position - 1] = (id: "bad", json: "{\"city\": \"x\",\n  \"n\": 1,\n  \"text\": tru}")
        for helps in [1.3, 0, .infinity] { do {
            try c.save(jsonDocuments: docs, writerHelpsAbove: helps, maxChunkBytes: 64 << 10)
            Issue.record("a bad document was saved")
        } catch let error as DatabaseError {
            #expect(error.code == .invalidJSON)
            #expect(error.message.contains("document 'bad'"))
            #expect(error.message.contains("line 3"), "\(error.message)")
            #expect(error.message.contains("document \(position) of the sequence"), "\(error.message)")
        } }
        #expect(try Self.documents(db, c) == before)
        #expect(try FullTextPreparationTests.indexTables(db, c) == tablesBefore)
    }

    /// A collection saved in a transaction of its own is written in ID order; each document
    /// still takes the sequence of its place in the caller's order (the change feed lists them
    /// in that order, a later duplicate ID replaces the earlier one), and it stores what the
    /// same collection written in its own order stores.
    @Test(arguments: [false, true])
    func aCollectionWrittenInIDOrderKeepsTheCallersSequences(lazy: Bool) throws {
        var r = SplitMix64(seed: 41)
        // Random IDs, some repeated; more than one chunk.
        let docs = (0..<2_000).map { i in (id: "k\(r.int(1_500))", json: #"{"n": \#(i)}"#) }
        let inOrder = try Database.temporary()
        let inOwnOrder = try Database.temporary()
        defer { try? inOrder.close(); try? inOwnOrder.close() }
        let c = try inOrder.defaultCollection()
        let c0 = try inOwnOrder.defaultCollection()
        try c.save(id: "before", json: "{}")
        try c0.save(id: "before", json: "{}")
        let saved = lazy ? try c.save(jsonDocuments: docs.lazy.map { $0 }) : try c.save(jsonDocuments: docs)
        #expect(saved == docs.count)
        #expect(try c0.save(jsonDocuments: docs, writerHelpsAbove: 1.3, maxChunkBytes: JSONBatchChunk.maxBytes,
                            inIDOrder: false) == docs.count)
        #expect(try Self.documents(inOrder, c) == Self.documents(inOwnOrder, c0))
        #expect(c.lastSequence == 2_001)
        // The feed: each ID once, at the sequence of its last place in `docs`, in that order.
        var last: [String: Int] = [:]
        for (i, d) in docs.enumerated() { last[d.id] = i }
        let expected = last.sorted { $0.value < $1.value }.map { "\(UInt64($0.value) + 2) \($0.key)" }
        #expect(try c.changes(since: 1).map { "\($0.sequence) \($0.documentID)" } == expected)
        #expect(try c.document(id: docs[1_999].id)?.int(forKey: "n") == 1_999)
        #expect(try inOrder.integrityCheck().problems.isEmpty)
    }

    /// Written in ID order, a batch with two bad documents reports the first in the caller's
    /// order, even when the other one's ID comes first, and saves nothing.
    @Test func aBatchWrittenInIDOrderReportsTheCallersFirstBadDocument() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        var docs = (0..<1_000).map { (id: "m\($0)", json: #"{"n": \#($0)}"#) }
        docs[700] = (id: "a-bad", json: "{\"n\": }")
        docs[40] = (id: "z-bad", json: "[1]")
        for helps in [1.3, 0, .infinity] {
            do {
                try c.save(jsonDocuments: docs, writerHelpsAbove: helps, maxChunkBytes: 4 << 10)
                Issue.record("a bad document was saved")
            } catch let error as DatabaseError {
                #expect(error.code == .notAnObject, "\(error)")
                #expect(error.message.contains("document 'z-bad'") && error.message.contains("document 41 of the sequence"),
                        "\(error.message)")
            }
        }
        docs[40] = (id: "z-good", json: "{}")
        do {
            try c.save(jsonDocuments: docs)
            Issue.record("a bad document was saved")
        } catch let error as DatabaseError {
            #expect(error.code == .invalidJSON && error.message.contains("document 701 of the sequence"), "\(error.message)")
        }
        #expect(try c.count == 0)
    }

    @Test func eachRuleOfSaveIDJSONHolds() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        let good = (0..<300).map { (id: "g\($0)", json: #"{"n": \#($0)}"#) }
        let cases: [((id: String, json: String), DatabaseError.Code)] = [
            ((id: "", json: "{}"), .invalidDocumentID),
            ((id: String(repeating: "x", count: 300), json: "{}"), .invalidDocumentID),
            ((id: "array", json: "[1, 2]"), .notAnObject),
            ((id: "reserved", json: #"{"_id": 1}"#), .reservedKey),
            ((id: "deep", json: String(repeating: "[", count: 600) + String(repeating: "]", count: 600)), .invalidJSON),
        ]
        for (bad, code) in cases {
            for at in [0, 299] {
                var docs = good
                docs.insert(bad, at: at)
                #expect(throws: DatabaseError.self) { try c.save(jsonDocuments: docs) }
                do { try c.save(jsonDocuments: docs) } catch let e as DatabaseError { #expect(e.code == code, "\(e)") }
                #expect(try c.count == 0)
            }
        }
        #expect(try c.save(jsonDocuments: good) == 300)
        #expect(try c.document(id: "g299")?.int(forKey: "n") == 299)
    }

    @Test func joinsTheCallersBatch() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        let docs = (0..<1_000).map { (id: "d\($0)", json: #"{"n": \#($0)}"#) }
        // Rolled back with the batch it joined.
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try db.inBatch {
                try c.save(id: "before", json: "{}")
                try c.save(jsonDocuments: docs)
                #expect(try c.count == 1_001)
                throw Stop()
            }
        }
        #expect(try c.count == 0)
        // Committed with it.
        try db.inBatch {
            try c.save(jsonDocuments: docs)
            try c.save(id: "d5", json: #"{"n": -5}"#)
        }
        #expect(try c.count == 1_000)
        #expect(try c.document(id: "d5")?.int(forKey: "n") == -5)
    }

    @Test func readsTheSequenceOnce() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        // A sequence that can be iterated only once (an iterator with state).
        var n = 0
        let once = AnyIterator<(id: String, json: String)> {
            guard n < 2_000 else { return nil }
            n += 1
            return (id: "i\(n)", json: #"{"n": \#(n)}"#)
        }
        #expect(try c.save(jsonDocuments: AnySequence(once)) == 2_000)
        #expect(try c.count == 2_000)
        #expect(try c.document(id: "i2000")?.int(forKey: "n") == 2_000)
    }

    /// A batch that outgrows the memory map is rolled back and run again once the map is larger:
    /// the run again saves every document from the first — also from a sequence that can be
    /// read only once — and the count returned is the documents', not the runs'.
    @Test(arguments: ["array", "array, map grown first", "single-pass"])
    func aBatchThatOutgrowsTheMapIsSavedOnce(input: String) throws {
        var config = DatabaseConfiguration()
        config.initialMapSize = 256 << 10  // grown ×4 at a time: several runs of the body
        let db = try Database.temporary(configuration: config)
        defer { try? db.close() }
        let c = try db.defaultCollection()
        try Self.makeIndexes(c)
        var r = SplitMix64(seed: 99)
        let docs = Self.sequence(&r, count: 3_000, idSpace: 1_000_000)
        let saved: Int
        if input == "array" {
            saved = try c.save(jsonDocuments: docs, writerHelpsAbove: 1.3, maxChunkBytes: JSONBatchChunk.maxBytes,
                               growingTheMapFirst: false)
        } else if input == "array, map grown first" {
            // The documents' size is known: the map is grown before the batch, which runs once.
            let before = try #require(db.store.env.currentMapSize as Int?)
            saved = try c.save(jsonDocuments: docs)
            #expect(db.store.env.currentMapSize > before)
        } else {
            var n = 0
            let once = AnyIterator<(id: String, json: String)> {
                guard n < docs.count else { return nil }
                n += 1
                return docs[n - 1]
            }
            saved = try c.save(jsonDocuments: AnySequence(once))
        }
        #expect(saved == docs.count, "\(input)")
        // What the same documents saved one by one into a database whose map never grows store
        // (in the caller's order; the index tables in the order the batch writes them).
        let reference = try Database.temporary()
        let inWriteOrder = try Database.temporary()
        defer { try? reference.close(); try? inWriteOrder.close() }
        let rc = try reference.defaultCollection()
        let wc = try inWriteOrder.defaultCollection()
        try Self.makeIndexes(rc)
        try Self.makeIndexes(wc)
        try reference.inBatch { for d in docs { try rc.save(id: d.id, json: d.json) } }
        try inWriteOrder.inBatch { for d in input == "single-pass" ? docs : Self.writeOrder(docs) { try wc.save(id: d.id, json: d.json) } }
        #expect(try Self.documents(db, c) == Self.documents(reference, rc), "\(input)")
        #expect(try c.changes(since: 0) == rc.changes(since: 0), "\(input)")
        #expect(try FullTextPreparationTests.indexTables(db, c) == FullTextPreparationTests.indexTables(inWriteOrder, wc), "\(input)")
        #expect(try db.integrityCheck().problems.isEmpty, "\(input)")
    }

    /// A single-pass sequence larger than what is kept of it for a run again: the batch that
    /// must run again fails with an error that says why, and saves nothing.
    @Test func aSinglePassBatchTooLargeToRunAgainFailsWhole() throws {
        var config = DatabaseConfiguration()
        config.initialMapSize = 256 << 10
        let db = try Database.temporary(configuration: config)
        defer { try? db.close() }
        let c = try db.defaultCollection()
        var r = SplitMix64(seed: 5)
        let docs = Self.sequence(&r, count: 3_000, idSpace: 1_000_000)
        var n = 0
        let once = AnyIterator<(id: String, json: String)> {
            guard n < docs.count else { return nil }
            n += 1
            return docs[n - 1]
        }
        do {
            try c.save(jsonDocuments: AnySequence(once), writerHelpsAbove: 1.3, maxChunkBytes: JSONBatchChunk.maxBytes,
                       replayLimit: 64 << 10)
            Issue.record("the batch ran again over documents it could not read again")
        } catch let error as DatabaseError {
            #expect(error.code == .limitReached)
            #expect(error.message.contains("can be read only once"), "\(error.message)")
        }
        #expect(try c.count == 0)
    }
}
