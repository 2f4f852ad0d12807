import Testing
import Foundation
import LMDB
@testable import Tessera

/// Files on disk: permissions, and what happens when the path holds something that is not
/// a Tessera database (or one written by a newer Tessera).
@Suite("Reliability: files")
struct FileSafetyTests {
    func mode(of path: String) -> mode_t? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return st.st_mode & 0o777
    }

    @Test func databaseFilesAreOwnerOnlyByDefault() throws {
        let dir = ScratchDirectory("mode")
        defer { dir.remove() }
        let path = dir.child("db")
        let db = try Database(path: path)
        try db.defaultCollection().save(id: "a", json: #"{"x":1}"#)
        try db.close()
        #expect(mode(of: path + "/data.mdb") == 0o600)
        #expect(mode(of: path + "/lock.mdb") == 0o600)
        #expect(mode(of: path) == 0o700 & ~currentUmask())

        // Named databases too.
        let named = try Database(name: "named", config: DatabaseConfiguration(directory: dir.path))
        try named.close()
        #expect(mode(of: dir.child("named.tessera/data.mdb")) == 0o600)
    }

    @Test func configuredFileModeIsUsed() throws {
        let dir = ScratchDirectory("mode")
        defer { dir.remove() }
        var config = DatabaseConfiguration(directory: dir.path)
        config.fileMode = 0o640
        let db = try Database(path: dir.child("db"), configuration: config)
        try db.close()
        let expected = 0o640 & ~currentUmask()
        #expect(mode(of: dir.child("db/data.mdb")) == expected)
        #expect(mode(of: dir.child("db/lock.mdb")) == expected)
    }

    func expectError(_ code: DatabaseError.Code, opening path: String, mentioning words: [String] = [],
                     sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        do {
            let db = try Database(path: path)
            try? db.close()
            Issue.record("'\(path)' opened as a database", sourceLocation: sourceLocation)
        } catch let e as DatabaseError {
            #expect(e.code == code, "\(e)", sourceLocation: sourceLocation)
            for w in words { #expect(e.message.contains(w), "\(e.message)", sourceLocation: sourceLocation) }
        } catch {
            Issue.record("untyped error \(type(of: error)): \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func aPlainFileIsNotADatabase() throws {
        let dir = ScratchDirectory("notdb")
        defer { dir.remove() }
        let file = dir.child("notes.txt")
        try "hello".write(toFile: file, atomically: false, encoding: .utf8)
        expectError(.notADatabase, opening: file)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "hello")
    }

    @Test func randomBytesNamedDataMdbAreNotADatabase() throws {
        let dir = ScratchDirectory("notdb")
        defer { dir.remove() }
        var rng = SplitMix64(seed: 11)
        for (i, size) in [5, 100, 4096, 8192, 65_536].enumerated() {
            let db = dir.child("random\(i)")
            try FileManager.default.createDirectory(atPath: db, withIntermediateDirectories: false)
            let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &rng) }
            #expect(FileManager.default.createFile(atPath: db + "/data.mdb", contents: Data(bytes)))
            expectError(.notADatabase, opening: db)
            // The file is left as it was.
            #expect(FileManager.default.contents(atPath: db + "/data.mdb") == Data(bytes))
        }
        // Text that happens to be named data.mdb.
        let text = dir.child("text")
        try FileManager.default.createDirectory(atPath: text, withIntermediateDirectories: false)
        try String(repeating: "not an LMDB file\n", count: 1000).write(toFile: text + "/data.mdb", atomically: false, encoding: .utf8)
        expectError(.notADatabase, opening: text)
    }

    @Test func anLMDBEnvironmentOfSomethingElseIsNotADatabase() throws {
        let dir = ScratchDirectory("notdb")
        defer { dir.remove() }
        let env = try Environment(path: dir.path)
        let t = try #require(try env.openTable("customers"))
        try env.write { txn in _ = try txn.put(t, key: Array("k".utf8), value: Array("v".utf8)) }
        env.close()
        expectError(.notADatabase, opening: dir.path, mentioning: ["not a Tessera database"])
        // Nothing was added to it.
        let again = try Environment(path: dir.path)
        defer { again.close() }
        let names = try again.read { txn in try txn.tableNames() }
        #expect(names == ["customers"])
    }

    @Test func aMetaTableWithoutOurMagicIsNotADatabase() throws {
        let dir = ScratchDirectory("notdb")
        defer { dir.remove() }
        let env = try Environment(path: dir.path)
        let meta = try #require(try env.openTable("meta"))
        try env.write { txn in _ = try txn.put(meta, key: Array("format".utf8), value: Array("ABCD\u{1}\0\0\0".utf8)) }
        env.close()
        expectError(.notADatabase, opening: dir.path)
    }

    /// Rewrites the `format` record of a closed database with the LMDB wrapper.
    func setFormatVersion(_ version: UInt32, at path: String) throws {
        let env = try Environment(path: path)
        defer { env.close() }
        let meta = try #require(try env.openTable("meta", create: false))
        try env.write { txn in
            _ = try txn.put(meta, key: Array("format".utf8), value: Database.magic + withUnsafeBytes(of: version.littleEndian) { Array($0) })
        }
    }

    @Test func aNewerFormatVersionIsRefused() throws {
        let dir = ScratchDirectory("version")
        defer { dir.remove() }
        let db = try Database(path: dir.path)
        try db.defaultCollection().save(id: "a", json: #"{"x":1}"#)
        try db.close()

        try setFormatVersion(Database.formatVersion + 1, at: dir.path)
        expectError(.unsupportedVersion, opening: dir.path,
                    mentioning: ["newer Tessera", "format \(Database.formatVersion + 1)", "format \(Database.formatVersion)"])
        try setFormatVersion(.max, at: dir.path)
        expectError(.unsupportedVersion, opening: dir.path, mentioning: ["format \(UInt32.max)"])

        // The refusal changed nothing: with the version put back the data is all there.
        try setFormatVersion(Database.formatVersion, at: dir.path)
        let reopened = try Database(path: dir.path)
        defer { try? reopened.close() }
        #expect(try reopened.defaultCollection().document(id: "a")?.int(forKey: "x") == 1)
        #expect(try reopened.performMaintenance(.integrityCheck).isOK)
    }

    /// A format-1 database stored full-text postings one per (term, document ID): opening it
    /// rebuilds its full-text indexes from the documents (which stay untouched) and records the
    /// current format; value indexes are kept as they are.
    @Test func aFormat1DatabaseGetsItsFullTextIndexesRebuilt() throws {
        let dir = ScratchDirectory("format1")
        defer { dir.remove() }
        let db = try Database(path: dir.path)
        let c = try db.createCollection(name: "docs")
        for i in 0..<300 { try c.save(id: "d\(i)", properties: ["body": .string("amber birch \(i % 7 == 0 ? "cedar" : "dune")"), "n": .int(Int64(i))]) }
        try c.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: ""))
        try c.createIndex(withName: "byN", config: ValueIndexConfiguration(["n"]))
        try db.close()

        // Make it look like format 1: the old layout's keys (term ‖ 0x00 ‖ document ID) and
        // corpus record (two varints), no document numbers.
        let env = try Environment(path: dir.path)
        let postings = try #require(try env.openTable("idx:_default.docs:ft", create: false))
        let stats = try #require(try env.openTable("idx:_default.docs:ft:stats", create: false))
        try env.write { txn in
            try txn.drop(postings)
            try txn.drop(stats)
            for i in 0..<300 { _ = try txn.put(postings, key: Array("amber\u{0}d\(i)".utf8), value: [0, 1, 0]) }
            _ = try txn.put(stats, key: [0xFF], value: [0xAC, 0x02, 0x84, 0x07])
        }
        env.close()
        try setFormatVersion(1, at: dir.path)

        let reopened = try Database(path: dir.path)
        defer { try? reopened.close() }
        let q = try reopened.createQuery("SELECT meta().id AS id FROM docs WHERE match(ft, 'cedar') ORDER BY rank(ft) DESC")
        #expect(try q.execute().allResults().count == 43)
        #expect(try reopened.createQuery("SELECT COUNT(*) AS k FROM docs WHERE n < 10").execute().allResults().first?.int(forKey: "k") == 10)
        #expect(try reopened.performMaintenance(.integrityCheck).isOK)
        try reopened.close()
        // The current format is recorded: a second open does not rebuild again.
        #expect(try formatVersion(at: dir.path) == Database.formatVersion)
    }

    /// Copies the data file of a database an older version wrote (a folder beside this file)
    /// into `dir`.
    func copyOldDatabase(_ folder: String, to dir: ScratchDirectory) throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(folder + "/data.mdb")
        try FileManager.default.copyItem(atPath: fixture.path, toPath: dir.child("data.mdb"))
    }

    /// The `format` record of a closed database.
    func formatVersion(at path: String) throws -> UInt32 {
        let env = try Environment(path: path)
        defer { env.close() }
        let meta = try #require(try env.openTable("meta", create: false))
        return UInt32(littleEndian: try env.read { txn in try #require(try txn.get(meta, key: "format")).loadUnaligned(fromByteOffset: 4, as: UInt32.self) })
    }

    /// Format 2 gave stop words a position (SPEC §10.1 step 6 now drops them first): opening a
    /// format-2 database rebuilds its full-text indexes. The old postings are simulated with an
    /// index built without stop words or stemming, then described as English in the catalogue.
    @Test func aFormat2DatabaseGetsItsFullTextIndexesRebuilt() throws {
        let dir = ScratchDirectory("format2")
        defer { dir.remove() }
        let db = try Database(path: dir.path)
        let c = try db.createCollection(name: "docs")
        try c.save(id: "v1", json: #"{"body":"great view of the nights"}"#)
        try c.save(id: "v2", json: #"{"body":"nights over the city"}"#)
        try c.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: ""))
        try db.close()

        let env = try Environment(path: dir.path)
        let meta = try #require(try env.openTable("meta", create: false))
        try env.write { txn in
            let text = String(decoding: try #require(try txn.get(meta, key: "catalog")), as: UTF8.self)
            let changed = text.replacingOccurrences(of: #""language":"""#, with: #""language":"en""#)
            #expect(changed != text)
            _ = try txn.put(meta, key: Array("catalog".utf8), value: Array(changed.utf8))
            // Format 2 predates the catalogue's checksum.
            _ = try txn.delete(meta, key: Array("catalog-checksum".utf8))
        }
        env.close()
        try setFormatVersion(2, at: dir.path)

        let reopened = try Database(path: dir.path)
        defer { try? reopened.close() }
        let rows = try reopened.createQuery(#"SELECT meta().id AS id FROM docs WHERE match(ft, '"view nights"')"#).execute().allResults()
        #expect(rows.map { $0.string(forKey: "id") } == ["v1"])
        #expect(try reopened.performMaintenance(.integrityCheck).isOK)
    }

    /// Format 3 kept one array-index entry per distinct element and document, with no count of
    /// its occurrences (format 4 stores it, for covering UNNEST scans). Opening a database the
    /// format-3 CLI wrote (Format3Database/README.md) rebuilds its array indexes: covering
    /// scans then give one row per occurrence, as reading the documents does.
    @Test func aFormat3DatabaseGetsItsArrayIndexesRebuilt() throws {
        let dir = ScratchDirectory("format3")
        defer { dir.remove() }
        try copyOldDatabase("Format3Database", to: dir)

        let db = try Database(path: dir.path)
        defer { try? db.close() }
        let likes = "SELECT meta(h).id AS id, l FROM hotels AS h UNNEST h.likes AS l WHERE l = 'pool'"
        #expect(try db.createQuery(likes).explain().contains("COVERING ARRAY INDEX likesIdx"))
        #expect(try db.createQuery(likes).execute().allResults().compactMap { $0.string(forKey: "id") } == ["h1", "h1", "h2", "h2", "h2"])
        let rooms = "SELECT meta(h).id AS id, r.beds FROM hotels AS h UNNEST h.rooms AS r WHERE r.kind = 'suite'"
        #expect(try db.createQuery(rooms).explain().contains("COVERING ARRAY INDEX roomsIdx"))
        #expect(try db.createQuery(rooms).execute().allResults().map { $0.toJSON() }
                == [#"{"beds":2,"id":"h1"}"#, #"{"beds":2,"id":"h1"}"#, #"{"beds":3,"id":"h4"}"#])
        // 1 and 1.0 share a key: their entry sends the scan to the document for the exact values.
        let numbers = "SELECT meta(h).id AS id, TOSTRING(l) AS t FROM hotels AS h UNNEST h.likes AS l WHERE l = 1"
        #expect(try db.createQuery(numbers).execute().allResults().compactMap { $0.string(forKey: "t") }.sorted() == ["1", "1.0"])
        #expect(try db.createQuery("SELECT name FROM hotels WHERE name = 'Beta'").execute().allResults().count == 1)
        #expect(try db.performMaintenance(.integrityCheck).isOK)
        try db.close()
        #expect(try formatVersion(at: dir.path) == Database.formatVersion)
    }

    /// Format 4 kept a full-text document's number without its token count, and changed
    /// documents kept their numbers (their old entries were removed from every block). A
    /// database the format-4 CLI wrote (Format4Database/README.md) opens with its full-text
    /// index as it is: queries and ranks are unchanged, and updating or deleting a document
    /// written then (whose old token count must be recomputed from its old text) keeps the
    /// index equal to one built from the documents.
    @Test func aFormat4DatabaseKeepsItsFullTextIndex() throws {
        let dir = ScratchDirectory("format4")
        defer { dir.remove() }
        try copyOldDatabase("Format4Database", to: dir)

        let db = try Database(path: dir.path)
        defer { try? db.close() }
        // The ranks the format-4 code printed for this query.
        let before = try noteRanks(db, "bodyText", "view")
        #expect(before.keys.sorted() == ["n1", "n2", "n4"])
        #expect(abs((before["n1"] ?? 0) - 0.3525541807866804) < 1e-12 && abs((before["n2"] ?? 0) - 0.3696362137723068) < 1e-12)

        let notes = try #require(try db.collection(name: "notes"))
        try notes.save(id: "n1", properties: ["title": "Harbour walk", "body": "A long walk by the harbour, no view at all."])
        try notes.delete(id: "n3")
        try notes.save(id: "n5", properties: ["title": "Night train", "body": "A sleeper with a view of the night."])
        #expect(try db.performMaintenance(.integrityCheck).isOK)
        try expectRanksOfARebuiltIndex(db, notes, "bodyText", ["view", "night", "harbour", "soup OR rain"])
        try db.close()
        #expect(try formatVersion(at: dir.path) == Database.formatVersion)
    }

    /// Format 6 added a table of live document IDs per collection. A database the format-5
    /// CLI wrote (Format5Database/README.md) gains them on open — without its tombstones
    /// (h04, h06) — and queries that read only IDs use them, with the rows a document scan
    /// gives; later writes keep them in step.
    @Test func aFormat5DatabaseGainsItsIDTables() throws {
        let dir = ScratchDirectory("format5")
        defer { dir.remove() }
        try copyOldDatabase("Format5Database", to: dir)
        #expect(try formatVersion(at: dir.path) == 5)

        let db = try Database(path: dir.path)
        defer { try? db.close() }
        #expect(try db.performMaintenance(.integrityCheck).isOK)
        func ids(_ sql: String) throws -> [String] {
            try db.createQuery(sql).execute().allResults().map { $0.string(at: 0) ?? "?" }
        }
        let covering = "SELECT meta().id FROM hotels ORDER BY meta().id"
        #expect(try db.createQuery(covering).explain().hasPrefix("SCAN hotels USING COVERING PRIMARY KEY"))
        #expect(try ids(covering) == ["h01", "h02", "h03", "h05", "h07"])
        #expect(try ids("SELECT meta().id FROM hotels WHERE city IS VALUED ORDER BY meta().id") == ["h01", "h02", "h03", "h05", "h07"])
        #expect(try ids("SELECT meta().id FROM _default") == ["n1"])
        #expect(try ids("SELECT meta().id FROM hotels WHERE city = 'Bergen' ORDER BY meta().id") == ["h02", "h03"])

        let hotels = try #require(try db.collection(name: "hotels"))
        try hotels.save(id: "h04", json: #"{"name":"Old Mill","city":"Bruges"}"#)
        try hotels.delete(id: "h01")
        #expect(try ids("SELECT meta().id FROM hotels WHERE meta().id >= 'h02' ORDER BY meta().id LIMIT 3") == ["h02", "h03", "h04"])
        #expect(try db.performMaintenance(.integrityCheck).isOK)
        try db.close()
        #expect(try formatVersion(at: dir.path) == Database.formatVersion)
    }

    /// Each matching note's rank for `words` under full-text index `index` of `notes`.
    func noteRanks(_ db: Database, _ index: String, _ words: String) throws -> [String: Double] {
        let rows = try db.createQuery("SELECT meta().id AS id, rank(\(index)) AS r FROM notes WHERE match(\(index), '\(words)')")
            .execute().allResults()
        return Dictionary(uniqueKeysWithValues: rows.map { ($0.string(forKey: "id") ?? "?", $0.double(forKey: "r")) })
    }

    /// Expects `index` (over title and body) to match and rank each of `queries` as a full-text
    /// index built afresh from the documents does.
    func expectRanksOfARebuiltIndex(_ db: Database, _ notes: Collection, _ index: String, _ queries: [String]) throws {
        try notes.createIndex(withName: "rebuilt", config: FullTextIndexConfiguration(["title", "body"]))
        for words in queries {
            let stored = try noteRanks(db, index, words)
            let fresh = try noteRanks(db, "rebuilt", words)
            #expect(stored.keys.sorted() == fresh.keys.sorted(), "\(words)")
            for (id, r) in fresh { #expect(abs((stored[id] ?? .nan) - r) < 1e-12, "\(words) \(id)") }
        }
    }

    /// Format 7 lets full-text indexes keep small transactions' postings in segments. A
    /// database the format-6 CLI wrote (Format6Database/README.md) opens with its index as it
    /// was (the ranks that code printed), takes segments from its next small writes, and
    /// answers as an index built afresh.
    @Test func aFormat6DatabaseTakesSegments() throws {
        let dir = ScratchDirectory("format6")
        defer { dir.remove() }
        try copyOldDatabase("Format6Database", to: dir)
        #expect(try formatVersion(at: dir.path) == 6)

        let db = try Database(path: dir.path)
        defer { try? db.close() }
        // The ranks the format-6 code printed for this query.
        let before = try noteRanks(db, "byBody", "view")
        #expect(before.keys.sorted() == ["n01", "n02", "n05"])
        #expect(abs((before["n01"] ?? 0) - 0.49464376179468916) < 1e-12 && abs((before["n05"] ?? 0) - 0.3611520352852437) < 1e-12)
        #expect(try db.performMaintenance(.integrityCheck).isOK)

        let notes = try #require(try db.collection(name: "notes"))
        try notes.save(id: "n06", properties: ["title": "Night train", "body": "A sleeper with a view of the night."])
        try notes.save(id: "n01", properties: ["title": "Harbour view", "body": "No view left: a wall went up."])
        let index = try #require(try notes.currentStore().indexes.first { $0.definition.name == "byBody" })
        let stats = try #require(index.statsTable)
        #expect(try db.read { try FullTextIndexKind.indexState(txn: $0, stats: stats).segments } == 2)
        #expect(try db.performMaintenance(.integrityCheck).isOK)
        try expectRanksOfARebuiltIndex(db, notes, "byBody", ["view", "night", "harbour", "wall OR boats"])
        try db.close()
        #expect(try formatVersion(at: dir.path) == Database.formatVersion)
    }

    /// Format 8 stores records too large for a leaf page in two pieces (`RecordPieces.swift`).
    /// A database the format-7 CLI wrote (Format7Database/README.md), whose large records are
    /// on overflow pages, opens with every document as it was, and splits what it saves next.
    @Test func aFormat7DatabaseSplitsLargeRecordsFromNowOn() throws {
        let dir = ScratchDirectory("format7")
        defer { dir.remove() }
        try copyOldDatabase("Format7Database", to: dir)
        #expect(try formatVersion(at: dir.path) == 7)
        // What the CLI's edits left: p02 replaced, p06 deleted.
        let lines = try String(contentsOfFile: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Format7Database/documents.jsonl").path, encoding: .utf8)
        var expected: [String: [String: Value]] = [:]
        for line in lines.split(separator: "\n") {
            guard case .object(var o) = try JSONReader.parse(String(line)), case .string(let id)? = o["id"] else { continue }
            o["id"] = nil
            expected[id] = o
        }
        expected["p02"] = ["kind": "note", "n": 22, "text": "short now", "tags": ["moss"]]
        expected["p06"] = nil

        let db = try Database(path: dir.path)
        defer { try? db.close() }
        let pages = try #require(try db.collection(name: "pages"))
        for (id, body) in expected { #expect(try pages.document(id: id)?.properties == body, "\(id)") }
        #expect(try pages.document(id: "p06") == nil)
        #expect(try db.performMaintenance(.integrityCheck).isOK)
        let store = try pages.currentStore()
        #expect(try db.read { try $0.count(store.tails) } == 0)
        let notes = try db.createQuery("SELECT meta().id AS id FROM pages WHERE kind = 'note' ORDER BY meta().id").execute()
        #expect(try notes.allResults().map { $0.string(forKey: "id") } == ["p02", "p04", "p08"])

        // New saves of large bodies are split; the old overflow records are rewritten when saved.
        let big = ["kind": "page", "n": 9, "text": .string(String(repeating: "larch moss ", count: 400)), "tags": ["elm"]] as [String: Value]
        try pages.save(id: "p09", properties: big)
        var p05 = try #require(expected["p05"])
        p05["n"] = 55
        try pages.save(id: "p05", properties: p05)
        #expect(try db.read { try $0.count(store.tails) } == 2)
        #expect(try pages.document(id: "p09")?.properties == big)
        #expect(try pages.document(id: "p05")?.properties == p05)
        #expect(try pages.document(id: "p07")?.properties == expected["p07"])
        let tagged = try db.createQuery("SELECT meta().id AS id FROM pages UNNEST tags AS t WHERE t = 'elm' ORDER BY meta().id").execute()
        #expect(try tagged.allResults().contains { $0.string(forKey: "id") == "p09" })
        #expect(try db.performMaintenance(.integrityCheck).isOK)
        try db.close()
        #expect(try formatVersion(at: dir.path) == Database.formatVersion)
    }

    /// Format 9 keeps a full-text index's waiting segments in a table of their own. A database
    /// the format-8 CLI wrote (Format8Database/README.md) with three segments waiting at the end
    /// of its statistics table opens with them moved: every rank that code printed, a clean
    /// integrity check (which reports an entry left in the statistics table, and a segment
    /// count the segments table does not hold), then segments taken and merged as usual.
    @Test func aFormat8DatabaseMovesItsSegments() throws {
        let dir = ScratchDirectory("format8")
        defer { dir.remove() }
        try copyOldDatabase("Format8Database", to: dir)
        #expect(try formatVersion(at: dir.path) == 8)

        let db = try Database(path: dir.path)
        defer { try? db.close() }
        let notes = try #require(try db.collection(name: "notes"))
        let index = try #require(try notes.currentStore().indexes.first { $0.definition.name == "byBody" })
        let stats = try #require(index.statsTable)
        let segments = try #require(index.segmentsTable)
        func waiting() throws -> Int { try db.read { try FullTextIndexKind.indexState(txn: $0, stats: stats).segments } }
        #expect(try waiting() == 3)
        let legacy = FullTextPostingsCodec.legacySegmentKeyPrefix
        let (left, moved) = try db.read { snap -> (Int, Int) in
            var left = 0
            try snap.withCursor(stats) { c in try c.forEach(prefix: legacy) { _, _ in left += 1; return true } }
            return (left, try snap.count(segments))
        }
        #expect(left == 0)
        #expect(moved > 0)
        // The ranks the format-8 code printed (n09 is only in a segment).
        let ranks = try noteRanks(db, "byBody", "view")
        let printed = ["n01": 0.3955628496211987, "n02": 0.3031858967156493, "n05": 0.28768207245178085, "n09": 0.3031858967156493]
        #expect(ranks.keys.sorted() == printed.keys.sorted())
        for (id, r) in printed { #expect(abs((ranks[id] ?? .nan) - r) < 1e-12, "\(id)") }
        #expect(try db.performMaintenance(.integrityCheck).isOK)

        try notes.save(id: "n10", properties: ["title": "Tower room", "body": "Top floor, a view of the whole bay."])
        #expect(try waiting() == 4)
        #expect(try db.performMaintenance(.integrityCheck).isOK)
        try db.performMaintenance(.optimize)
        #expect(try waiting() == 0)
        #expect(try db.read { try $0.count(segments) } == 0)
        #expect(try db.performMaintenance(.integrityCheck).isOK)
        try expectRanksOfARebuiltIndex(db, notes, "byBody", ["view", "harbour", "cabin OR hut", "glacier"])
        try db.close()
        #expect(try formatVersion(at: dir.path) == Database.formatVersion)
    }

    /// Format 10 keeps a table of recent entries beside each value and array index
    /// (`RecentEntries.swift`). A database the format-9 CLI wrote (Format9Database/README.md)
    /// opens with the tables created and nothing else moved: the rows that code printed, a
    /// clean integrity check; then a save puts its keys in the new tables and queries read both.
    @Test func aFormat9DatabaseGainsRecentEntryTables() throws {
        let dir = ScratchDirectory("format9")
        defer { dir.remove() }
        try copyOldDatabase("Format9Database", to: dir)
        #expect(try formatVersion(at: dir.path) == 9)
        let db = try Database(path: dir.path)
        defer { try? db.close() }
        let hotels = try #require(try db.collection(name: "hotels"))
        func ids(_ sql: String) throws -> [String] {
            try db.createQuery(sql).execute().allResults().compactMap { $0.string(forKey: "id") }
        }
        let porto = "SELECT meta().id AS id FROM hotels WHERE city = 'Porto' ORDER BY meta().id"
        let seaOrWine = "SELECT DISTINCT meta().id AS id FROM hotels UNNEST likes AS l WHERE l = 'sea' OR l = 'wine' ORDER BY meta().id"
        #expect(try ids(porto) == ["h01", "h04", "h07"])
        #expect(try ids(seaOrWine) == ["h01", "h02", "h04", "h07"])
        #expect(try db.performMaintenance(.integrityCheck).isOK)
        let store = try hotels.currentStore()
        for index in store.indexes {
            let recent = try #require(index.recent, "\(index.definition.name)")
            #expect(try db.read { try $0.count(recent) } == 0)
        }
        try hotels.save(id: "h08", properties: ["name": "Quay Rooms", "city": "Porto", "likes": ["sea"]])
        try hotels.save(id: "h04", properties: ["name": "Market Rooms", "city": "Braga", "likes": ["food"]])
        #expect(try ids(porto) == ["h01", "h07", "h08"])
        #expect(try ids(seaOrWine) == ["h01", "h02", "h07", "h08"])
        let byCity = try #require(store.indexes.first { $0.definition.name == "byCity" })
        #expect(try db.read { try $0.count(byCity.recent!) } == 2)
        #expect(try db.performMaintenance(.integrityCheck).isOK)
        try db.close()
        #expect(try formatVersion(at: dir.path) == Database.formatVersion)
    }

    /// Deleting a database (or closing a temporary one) removes links inside its directory,
    /// never what they point to.
    @Test func deletingADatabaseDoesNotFollowSymbolicLinks() throws {
        let dir = ScratchDirectory("links")
        defer { dir.remove() }
        let precious = dir.child("precious")
        try FileManager.default.createDirectory(atPath: precious + "/inner", withIntermediateDirectories: true)
        try "keep me".write(toFile: precious + "/inner/file.txt", atomically: false, encoding: .utf8)
        try "keep me too".write(toFile: dir.child("lone.txt"), atomically: false, encoding: .utf8)

        let path = dir.child("db")
        let db = try Database(path: path)
        try db.defaultCollection().save(id: "a", json: "{}")
        try FileManager.default.createSymbolicLink(atPath: path + "/link-to-dir", withDestinationPath: precious)
        try FileManager.default.createSymbolicLink(atPath: path + "/link-to-file", withDestinationPath: dir.child("lone.txt"))
        try db.delete()
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try String(contentsOfFile: precious + "/inner/file.txt", encoding: .utf8) == "keep me")
        #expect(try String(contentsOfFile: dir.child("lone.txt"), encoding: .utf8) == "keep me too")

        // Database.delete(path:) on a link removes the link only.
        try FileManager.default.createSymbolicLink(atPath: dir.child("alias"), withDestinationPath: precious)
        try Database.delete(path: dir.child("alias"))
        #expect(FileManager.default.fileExists(atPath: precious + "/inner/file.txt"))
    }

    @Test func aDamagedCatalogIsReportedAsCorrupt() throws {
        let dir = ScratchDirectory("catalog")
        defer { dir.remove() }
        try Database(path: dir.path).close()
        let env = try Environment(path: dir.path)
        let meta = try #require(try env.openTable("meta", create: false))
        try env.write { txn in _ = try txn.put(meta, key: Array("catalog".utf8), value: Array("{\"collections\": [".utf8)) }
        env.close()
        expectError(.corrupt, opening: dir.path, mentioning: ["catalogue"])
    }
}
