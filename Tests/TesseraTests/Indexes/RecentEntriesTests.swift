import Foundation
import Testing
import LMDB
@testable import Tessera

/// Value and array indexes keep their new keys in a small table of recent entries beside the
/// main one, moved into it in bulk at a limit (`RecentEntries.swift`): readers walk both as one
/// table, small transactions leave the main table alone, and every state equals the index a
/// rebuild from the documents gives.
@Suite("Indexes: recent entries beside the main table")
struct RecentEntriesTests {
    typealias RNG = SplitMix64

    // MARK: The merged cursor

    /// Random keys split between two tables; random moves of one cursor over both (first,
    /// last, next, prev, seek, seekExact, seekLast, with turns of direction) land where the
    /// same move over the sorted union lands.
    @Test(arguments: [1, 2, 3, 4, 5, 6])
    func aMergedCursorMovesAsOverOneTable(seed: UInt64) throws {
        var r = RNG(seed: seed &* 104_729)
        let dir = ScratchDirectory("merged-cursor")
        defer { dir.remove() }
        let env = try Environment(path: dir.path)
        defer { env.close() }
        let a = try #require(try env.openTable("a"))
        let b = try #require(try env.openTable("b"))
        // Keys of 1–6 bytes from a small alphabet: shared prefixes, shorter-first order.
        func randomKey() -> [UInt8] { (0..<(1 + r.int(6))).map { _ in UInt8(97 + r.int(4)) } }
        var all = Set<[UInt8]>()
        // One table empty in some seeds, tiny in others, both large in the rest.
        let (inA, inB) = [(0, 40), (40, 0), (1, 300), (300, 2), (500, 500), (2000, 150)][Int(seed - 1) % 6]
        try env.write { txn in
            for (table, n) in [(a, inA), (b, inB)] {
                var placed = 0
                while placed < n {
                    let k = randomKey()
                    guard all.insert(k).inserted else { continue }
                    _ = try txn.put(table, key: k, value: Array("\(table.name)".utf8))
                    placed += 1
                }
            }
        }
        let sorted = all.sorted { $0.lexicographicallyPrecedes($1) }
        try env.read { txn in
            let c = Cursor(merging: try txn.openCursor(a), try txn.openCursor(b))
            defer { c.closeCursor() }
            // The reference position in `sorted` (nil: off either end).
            var at: Int?
            for step in 0..<3000 {
                let ok: Bool
                switch r.int(8) {
                case 0:
                    ok = try c.first(); at = sorted.isEmpty ? nil : 0
                case 1:
                    ok = try c.last(); at = sorted.isEmpty ? nil : sorted.count - 1
                case 2, 3:
                    guard let i = at else { continue }
                    ok = try c.next(); at = i + 1 < sorted.count ? i + 1 : nil
                case 4, 5:
                    guard let i = at else { continue }
                    ok = try c.prev(); at = i > 0 ? i - 1 : nil
                case 6:
                    let k = randomKey()
                    ok = try c.seek(k)
                    at = sorted.firstIndex { !$0.lexicographicallyPrecedes(k) }
                default:
                    let k = r.chance(0.5) && !sorted.isEmpty ? sorted[r.int(sorted.count)] : randomKey()
                    if r.chance(0.5) {
                        ok = try k.withUnsafeBytes { try c.seekExact($0) }
                        at = sorted.firstIndex(of: k)
                    } else {
                        ok = try c.seekLast(atOrBefore: k)
                        at = sorted.lastIndex { !k.lexicographicallyPrecedes($0) }
                    }
                }
                #expect(ok == (at != nil), "seed \(seed) step \(step)")
                guard ok, let i = at else { at = nil; continue }
                #expect(Array(c.key) == sorted[i], "seed \(seed) step \(step)")
                if Array(c.key) != sorted[i] { return }
                // The value is the one of the table holding the key.
                let holder = try txn.get(a, key: sorted[i]) != nil ? "a" : "b"
                #expect(Array(c.value) == Array(holder.utf8))
            }
        }
    }

    // MARK: Through the database

    /// The recent-entry table of a collection's index, and its main table's and its own counts.
    static func counts(_ db: Database, _ c: Tessera.Collection, _ name: String) throws -> (main: Int, recent: Int) {
        let index = try #require(try c.currentStore().indexes.first { $0.definition.name == name })
        let recent = try #require(index.recent)
        return try db.read { (try $0.count(index.table), try $0.count(recent)) }
    }

    /// A temporary database whose collection `docs` has the value index `byCity` and the
    /// array index `byLike`.
    static func indexedDatabase() throws -> (Database, Tessera.Collection) {
        let (db, c) = try temporaryDocsDatabase()
        do {
            try c.createIndex(withName: "byCity", config: ValueIndexConfiguration(["city"]))
            try c.createIndex(withName: "byLike", config: ArrayIndexConfiguration(path: "likes"))
            return (db, c)
        } catch {
            try? db.close()
            throw error
        }
    }

    /// Runs `body` with an indexed database (`indexedDatabase`) and one without indexes,
    /// each with the collection `docs`.
    /// An indexed database (`indexedDatabase`) and one without indexes, written alike: what
    /// the indexed one answers is checked against the other.
    final class Twins {
        let db: Database
        let c: Tessera.Collection
        let plain: Database
        let pc: Tessera.Collection
        /// IDs saved so far.
        var ids: [String] = []

        init(db: Database, c: Tessera.Collection, plain: Database, pc: Tessera.Collection) {
            self.db = db
            self.c = c
            self.plain = plain
            self.pc = pc
        }

        /// One batch in each database.
        func inBatch(_ body: () throws -> Void) throws {
            try db.inBatch { try plain.inBatch { try body() } }
        }

        func save(_ id: String, _ doc: [String: Value]) throws {
            try c.save(id: id, properties: doc)
            try pc.save(id: id, properties: doc)
            if !ids.contains(id) { ids.append(id) }
        }

        /// Deletes a random saved document, if it is live.
        func deleteOne(_ r: inout RNG) throws {
            let id = r.pick(ids)
            if try c.document(id: id) != nil { try c.delete(id: id); try pc.delete(id: id) }
        }

        /// `sql` returns the same rows from both.
        func expectSameRows(_ sql: String, _ context: String) throws {
            let expected = try plain.createQuery(sql).execute().allResults().map(\.object)
            #expect(try db.createQuery(sql).execute().allResults().map(\.object) == expected, "\(context): \(sql)")
        }
    }

    /// Runs `body` with new `Twins`, closed afterwards.
    static func withTwins(_ body: (Twins) throws -> Void) throws {
        let (db, c) = try indexedDatabase()
        defer { try? db.close() }
        let plain = try Database.temporary()
        defer { try? plain.close() }
        try body(Twins(db: db, c: c, plain: plain, pc: try plain.createCollection(name: "docs")))
    }

    /// Queries whose results must not depend on the indexes (compared with a database without).
    static let queries = [
        "SELECT meta().id AS id FROM docs WHERE city = 'c7' ORDER BY meta().id",
        "SELECT meta().id AS id, city FROM docs WHERE city >= 'c2' AND city < 'c25' ORDER BY city DESC, meta().id DESC",
        "SELECT city, COUNT(*) AS n FROM docs WHERE city IS VALUED GROUP BY city ORDER BY city",
        "SELECT DISTINCT meta().id AS id FROM docs UNNEST likes AS l WHERE l IN ['l3', 'l17'] ORDER BY meta().id",
        "SELECT MIN(city) AS lo, MAX(city) AS hi FROM docs",
    ]

    static func hotel(_ i: Int, _ r: inout RNG, likes: Int = 4) -> [String: Value] {
        ["city": .string("c\(r.int(300))"), "n": .int(Int64(i)),
         "likes": .array((0..<r.int(likes)).map { _ in .string("l\(r.int(40))") })]
    }

    /// A bulk load goes to the main tables (the recent entries are moved there as soon as they
    /// pass their limit); then each small transaction adds its keys to the recent entries only,
    /// replacements delete their old keys where they are, and queries see both tables.
    @Test func smallTransactionsLeaveTheMainTableAlone() throws {
        var r = RNG(seed: 11)
        let (db, c) = try Self.indexedDatabase()
        defer { try? db.close() }
        try db.inBatch { for i in 0..<20_000 { try c.save(id: String(format: "h%06d", i), properties: Self.hotel(i, &r)) } }
        let loaded = try Self.counts(db, c, "byCity")
        #expect(loaded == (20_000, 0))
        let likes = try Self.counts(db, c, "byLike")
        #expect(likes.recent == 0 && likes.main > 20_000)

        // New documents: their keys are recent ones.
        for i in 20_000..<20_100 { try c.save(id: String(format: "h%06d", i), properties: ["city": "c7", "likes": ["l1", "zz"]]) }
        #expect(try Self.counts(db, c, "byCity") == (20_000, 100))
        #expect(try Self.counts(db, c, "byLike") == (likes.main, 200))
        // A replacement under another city deletes the old key from the main table and adds
        // the new one to the recent entries; one of a recent document changes only those.
        try c.save(id: "h000005", properties: ["city": "c7"])
        try c.save(id: "h020003", properties: ["city": "c8"])
        #expect(try Self.counts(db, c, "byCity") == (19_999, 101))
        try c.delete(id: "h020004")
        #expect(try Self.counts(db, c, "byCity") == (19_999, 100))
        #expect(try db.performMaintenance(.integrityCheck).isOK)

        // Queries read both tables, in order and backwards.
        let ids = try db.createQuery("SELECT meta().id AS id FROM docs WHERE city = 'c7' ORDER BY meta().id DESC").execute()
            .allResults().compactMap { $0.string(forKey: "id") }
        #expect(ids.first == "h020099" && ids.contains("h000005") && !ids.contains("h020003") && !ids.contains("h020004"))
        let plan = try db.createQuery("SELECT meta().id FROM docs WHERE city = 'c7'").explainPlan()
        #expect(plan.indexesUsed == ["byCity"])
        let zz = try db.createQuery("SELECT COUNT(*) AS n FROM docs UNNEST likes AS l WHERE l = 'zz'").execute().allResults()
        #expect(zz.first?.int(forKey: "n") == 98)
        let top = try db.createQuery("SELECT MAX(city) AS m FROM docs").execute().allResults()
        #expect(top.first?.string(forKey: "m") == "c99")
    }

    /// Small transactions fill the recent entries up to their limit, then one moves them all
    /// into the main table; at every step the indexes equal those a rebuild gives (the
    /// integrity check) and indexed queries return what a database without indexes returns.
    @Test(arguments: [1, 2])
    func recentEntriesMoveIntoTheMainTableAtTheirLimit(seed: UInt64) throws {
        try Self.withTwins { t in
            var r = RNG(seed: seed &* 31)
            var merges = 0
            var largestRecent = 0
            for round in 0..<60 {
                // A small batch of saves, replacements and deletes (1–80 documents: below the
                // 128 after which a transaction holds its puts back).
                let before = try Self.counts(t.db, t.c, "byLike")
                try t.inBatch {
                    for _ in 0..<(1 + r.int(80)) {
                        if r.chance(0.15), !t.ids.isEmpty {
                            try t.deleteOne(&r)
                        } else {
                            let id = r.chance(0.3) && !t.ids.isEmpty ? r.pick(t.ids) : "d\(r.int(100_000))"
                            try t.save(id, Self.hotel(round, &r, likes: 8))
                        }
                    }
                }
                let after = try Self.counts(t.db, t.c, "byLike")
                largestRecent = max(largestRecent, after.recent)
                // Only a move into the main table adds to it in transactions this small.
                if after.main > before.main { merges += 1 }
                if round % 6 == 5 {
                    let report = try t.db.performMaintenance(.integrityCheck)
                    #expect(report.isOK, "seed \(seed) round \(round): \(report)")
                    for sql in Self.queries { try t.expectSameRows(sql, "seed \(seed) round \(round)") }
                }
            }
            // The array index's recent entries reached their limit (2,048 while the main table
            // is small) and moved: the test saw both states.
            #expect(merges >= 1 && largestRecent > 1000, "merges \(merges), largest \(largestRecent)")
            #expect(try t.db.performMaintenance(.integrityCheck).isOK)
        }
    }

    /// Large transactions (past the 128 writes after which index and by-sequence tables hold
    /// their writes back) replace and delete documents whose index keys are in the recent
    /// entries, in the main table, or held by the transaction itself; their deletes are held
    /// without looking the keys up. Reads in the middle of a batch (queries, the change feed),
    /// the integrity check at every step and queries against a database without indexes
    /// agree with what was saved.
    @Test(arguments: [1, 2, 3])
    func largeTransactionsDeleteKeysWhereverTheyAre(seed: UInt64) throws {
        try Self.withTwins { t in
            var r = RNG(seed: seed &* 977)
            // Keys in the main tables, then in the recent entries.
            try t.inBatch { for i in 0..<3_000 { try t.save("m\(i)", Self.hotel(i, &r)) } }
            for round in 0..<30 {
                try t.inBatch { for _ in 0..<20 { try t.save("r\(r.int(1_000))", Self.hotel(round, &r)) } }
            }
            #expect(try Self.counts(t.db, t.c, "byLike").recent > 500)
            for round in 0..<6 {
                let context = "seed \(seed) round \(round)"
                let since = t.c.lastSequence
                try t.inBatch {
                    for step in 0..<(200 + r.int(500)) {
                        if r.chance(0.1) {
                            try t.deleteOne(&r)
                        } else {
                            // Mostly replacements (old keys anywhere), some new documents.
                            let id = r.chance(0.8) ? r.pick(t.ids) : "n\(round)-\(step)"
                            try t.save(id, Self.hotel(step, &r, likes: 6))
                        }
                        if step == 300 {
                            // Reads in the middle: they see every write so far.
                            try t.expectSameRows(r.pick(Self.queries), context)
                            #expect(try Self.feed(t.c, since: since) == Self.feed(t.pc, since: since), "\(context): change feed")
                        }
                    }
                }
                let report = try t.db.performMaintenance(.integrityCheck)
                #expect(report.isOK, "\(context): \(report)")
                for sql in Self.queries { try t.expectSameRows(sql, context) }
                #expect(try Self.feed(t.c, since: 0) == Self.feed(t.pc, since: 0), "\(context): change feed")
            }
        }
    }

    /// The change feed of `c` after `since` as text (ID, sequence, deleted).
    static func feed(_ c: Tessera.Collection, since: UInt64) throws -> [String] {
        try c.changes(since: since).map { "\($0.documentID) \($0.sequence) \($0.isDeleted)" }
    }

    /// `performMaintenance(.optimize)` moves every recent entry into the main table.
    @Test func optimizeMovesRecentEntriesIntoTheMainTable() throws {
        var r = RNG(seed: 5)
        let (db, c) = try Self.indexedDatabase()
        defer { try? db.close() }
        for i in 0..<50 { try c.save(id: "h\(i)", properties: Self.hotel(i, &r)) }
        let likes = try Self.counts(db, c, "byLike")
        #expect(try Self.counts(db, c, "byCity") == (0, 50) && likes.main == 0 && likes.recent > 0)
        try db.performMaintenance(.optimize)
        #expect(try Self.counts(db, c, "byCity") == (50, 0))
        #expect(try Self.counts(db, c, "byLike") == (likes.recent, 0))
        #expect(try db.performMaintenance(.integrityCheck).isOK)
    }
}
