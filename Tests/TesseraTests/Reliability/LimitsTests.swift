import Testing
import Foundation
import LMDB
@testable import Tessera

/// Sizes and counts at and past the documented limits: long and deep index keys, large
/// documents, many collections, deep nesting, map growth and a full map.
@Suite("Reliability: limits", .serialized)
struct LimitsTests {
    // MARK: Index keys longer than LMDB's 511 bytes

    /// A deep array value: `depth` nested arrays around `[long string, i]`.
    static func deepKey(_ i: Int, depth: Int, tail: Int) -> Value {
        var v: Value = .array([.string(String(repeating: "p", count: 40) + "-" + String(tail)), .int(Int64(i))])
        for level in 0..<depth { v = .array([.int(Int64(level % 3)), v]) }
        return v
    }

    static func rows(_ db: Database, _ sql: String, _ params: Parameters? = nil) throws -> [String] {
        let q = try db.createQuery(sql)
        q.parameters = params
        return try q.execute().allResults().map { $0.toJSON() }
    }

    @Test func deepArraysAndLongStringsInIndexKeys() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let indexed = try db.createCollection(name: "indexed")
        let plain = try db.createCollection(name: "plain")
        var rng = SplitMix64(seed: 511)
        var docs: [(String, [String: Value])] = []
        for i in 0..<300 {
            // Keys share long prefixes and differ only past the truncation point.
            let depth = [0, 5, 60, 200, 400][i % 5]
            let v = LimitsTests.deepKey(i % 37, depth: depth, tail: i % 7)
            let s = String(repeating: "ab", count: 200 + i % 3) + String(i % 11)
            let tags: [Value] = [.string(String(repeating: "t", count: 600) + String(i % 4)), v, .int(Int64(i % 5))]
            docs.append(("d\(i)", ["v": v, "s": .string(s), "n": .int(Int64(Int.random(in: 0..<50, using: &rng))), "tags": .array(tags)]))
        }
        try db.inBatch {
            for (id, body) in docs {
                try indexed.save(id: id, properties: body)
                try plain.save(id: id, properties: body)
            }
        }
        try indexed.createIndex(withName: "byV", config: ValueIndexConfiguration(["v"]))
        try indexed.createIndex(withName: "bySN", config: ValueIndexConfiguration(["s", "n"]))
        try indexed.createIndex(withName: "byTag", config: ArrayIndexConfiguration(path: "tags"))
        let report = try db.performMaintenance(.integrityCheck)
        #expect(report.isOK, "\(report)")
        #expect(report.indexEntries > 900)

        let probes: [Value] = [
            LimitsTests.deepKey(3, depth: 200, tail: 3), LimitsTests.deepKey(5, depth: 400, tail: 5),
            LimitsTests.deepKey(1, depth: 60, tail: 1), LimitsTests.deepKey(36, depth: 400, tail: 1),
            LimitsTests.deepKey(3, depth: 199, tail: 3),
        ]
        var checked = 0
        func compare(_ template: String, _ params: Parameters?, ordered: Bool, index: String) throws {
            let sqlI = template.replacingOccurrences(of: "$C", with: "indexed")
            let sqlP = template.replacingOccurrences(of: "$C", with: "plain")
            let a = try LimitsTests.rows(db, sqlI, params)
            let b = try LimitsTests.rows(db, sqlP, params)
            #expect((ordered ? a : a.sorted()) == (ordered ? b : b.sorted()), "\(sqlI)")
            #expect(try db.createQuery(sqlI).explain().contains(index), "\(sqlI) does not use \(index)")
            checked += 1
        }
        for p in probes {
            let params = Parameters().setValue(p, forName: "p")
            try compare("SELECT meta().id FROM $C WHERE v = $p", params, ordered: false, index: "byV")
            try compare("SELECT meta().id, v FROM $C WHERE v >= $p ORDER BY v, meta().id", params, ordered: true, index: "byV")
            try compare("SELECT meta().id FROM $C WHERE v < $p", params, ordered: false, index: "byV")
            try compare("SELECT meta().id FROM $C AS c UNNEST c.tags AS t WHERE t = $p", params, ordered: false, index: "byTag")
        }
        for k in 0..<11 {
            let s = String(repeating: "ab", count: 201) + String(k)
            let params = Parameters().setString(s, forName: "s")
            try compare("SELECT meta().id, n FROM $C WHERE s = $s AND n > 10", params, ordered: false, index: "bySN")
            try compare("SELECT meta().id FROM $C WHERE s > $s ORDER BY s, n, meta().id", params, ordered: true, index: "bySN")
        }
        let tag = String(repeating: "t", count: 600) + "2"
        try compare("SELECT meta().id FROM $C AS c UNNEST c.tags AS t WHERE t = $t", Parameters().setString(tag, forName: "t"),
                    ordered: false, index: "byTag")
        // ORDER BY over truncated keys is the exact value order.
        let ordered = try db.createQuery("SELECT v FROM indexed WHERE v IS NOT MISSING ORDER BY v").execute().allResults()
            .map { $0["v"] }
        #expect(ordered.count == 300)
        for (x, y) in zip(ordered, ordered.dropFirst()) where Value.compare(x, y) > 0 {
            Issue.record("ORDER BY v out of order: \(x.description.prefix(80)) before \(y.description.prefix(80))")
            break
        }
        #expect(checked > 40)

        // Updates and deletes of documents with truncated keys leave no stale entry.
        try db.inBatch {
            for i in stride(from: 0, to: 300, by: 3) { try indexed.delete(id: "d\(i)") }
            for i in stride(from: 1, to: 300, by: 3) {
                try indexed.save(id: "d\(i)", properties: ["v": LimitsTests.deepKey(i, depth: 300, tail: 9), "s": "short"])
            }
        }
        let after = try db.performMaintenance(.integrityCheck)
        #expect(after.isOK, "\(after)")
    }

    // MARK: Large documents

    @Test func aTenMegabyteDocumentSavesAndReadsBack() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "big")
        try c.createIndex(withName: "byKind", config: ValueIndexConfiguration(["kind"]))
        try c.createIndex(withName: "text", config: FullTextIndexConfiguration(["title"]))
        let blob = String(repeating: "0123456789abcdef", count: 10 << 16) // 10 MiB
        var items: [Value] = []
        for i in 0..<20_000 { items.append(["i": .int(Int64(i)), "s": .string("item \(i)")]) }
        try c.save(id: "huge", properties: ["kind": "blob", "title": "a very large document", "blob": .string(blob), "items": .array(items)])
        try c.save(id: "small", properties: ["kind": "small", "title": "tiny"])

        let doc = try #require(try c.document(id: "huge"))
        #expect(doc.string(forKey: "blob") == blob)
        #expect(doc.array(forKey: "items")?.count == 20_000)
        #expect(doc.array(forKey: "items")?[12_345]["s"] == "item 12345")
        let r = try db.createQuery("SELECT length(blob) AS n, items[19999].i AS last FROM big WHERE kind = 'blob'").execute().allResults()
        #expect(r.count == 1 && r.first?.int(forKey: "n") == blob.utf8.count && r.first?.int(forKey: "last") == 19_999)
        let m = try db.createQuery("SELECT meta().id FROM big WHERE MATCH(text, 'large')").execute().allResults()
        #expect(m.map { $0.string(at: 0) } == ["huge"])

        // The same size again as JSON text, replacing the first.
        var json = #"{"kind":"json","blob":""#
        json += blob
        json += #"","n":[1"#
        for i in 2...50_000 { json += ",\(i)" }
        json += "]}"
        try c.save(id: "huge", json: json)
        let again = try #require(try c.document(id: "huge"))
        #expect(again.string(forKey: "kind") == "json")
        #expect(again.string(forKey: "blob")?.utf8.count == blob.utf8.count)
        #expect(again.array(forKey: "n")?.last == 50_000)
        #expect(try c.count == 2)
        let report = try db.performMaintenance(.integrityCheck)
        #expect(report.isOK, "\(report)")
    }

    // MARK: Collections

    /// Decision: a database holds at most `Environment.Options().maxTables` (4,096) LMDB
    /// tables. Every collection uses 4 (documents, sequences, live IDs, second pieces of large
    /// records), a value or array index 2 (its entries and its recent entries), a full-text
    /// index 3, and the catalogue plus the
    /// default collection 5, so 1,022 collections without indexes.
    /// (LMDB's per-transaction cost grows with the table limit, so 100,000 collections are
    /// refused rather than supported slowly.) Past the limit, creating a collection or an
    /// index fails with `.limitReached` and changes nothing.
    @Test func collectionsUpToTheLimitThenATypedError() throws {
        let dir = ScratchDirectory("collections")
        defer { dir.remove() }
        var config = DatabaseConfiguration()
        config.noSync = true
        let db = try Database(path: dir.path, configuration: config)
        let maxTables = Environment.Options().maxTables
        let fit = (maxTables - 5) / 4
        // All but one collection, then indexes in the last collection's four tables and the
        // remainder, leaving one table.
        try db.inBatch {
            for i in 0..<(fit - 1) { try db.createCollection(name: "c\(i)", scope: "s\(i % 7)") }
        }
        #expect(try db.collections(scope: "s0").count == (fit - 1 + 6) / 7)
        let c0 = try #require(try db.collection(name: "c0", scope: "s0"))
        let spare = maxTables - 1 - 4 * fit
        // Two tables per value index: two or three tables are left after these.
        let early = (0..<((spare - 2) / 2)).map { "h\($0)" }
        for name in early { try c0.createIndex(withName: name, config: ValueIndexConfiguration([name])) }
        do {
            try db.createCollection(name: "one-too-many")
            Issue.record("a collection past the limit was created")
        } catch let e as DatabaseError {
            #expect(e.code == .limitReached, "\(e)")
            #expect(e.message.contains("\(maxTables)"), "\(e.message)")
        }
        #expect(try db.collection(name: "one-too-many") == nil)
        // Two or three tables are left: enough for a value index, not for a second one.
        try c0.createIndex(withName: "i", config: ValueIndexConfiguration(["x"]))
        do {
            try c0.createIndex(withName: "j", config: ValueIndexConfiguration(["y"]))
            Issue.record("index past the limit was created")
        } catch let e as DatabaseError {
            #expect(e.code == .limitReached, "\(e)")
        }
        #expect(try c0.indexes() == early + ["i"])
        // Everything still works, and deleting a collection makes room.
        try c0.save(id: "a", json: #"{"x":1}"#)
        try db.deleteCollection(name: "c7", scope: "s0")
        let fresh = try db.createCollection(name: "one-more")
        try fresh.save(id: "b", json: #"{"y":2}"#)
        try db.close()

        let reopened = try Database(path: dir.path, configuration: config)
        defer { try? reopened.close() }
        var total = 0
        for s in try reopened.scopes() { total += try s.collections().count }
        #expect(total == fit) // _default + (fit − 2) + one-more
        #expect(try reopened.collection(name: "one-more")?.document(id: "b")?.int(forKey: "y") == 2)
        #expect(try reopened.collection(name: "c0", scope: "s0")?.document(id: "a")?.int(forKey: "x") == 1)
        let rows = try reopened.createQuery("SELECT x FROM s0.c0 WHERE x > 0").execute().allResults()
        #expect(try reopened.createQuery("SELECT x FROM s0.c0 WHERE x > 0").explain().contains("INDEX i"))
        #expect(rows.map { $0.int(forKey: "x") } == [1])
        #expect(try reopened.performMaintenance(.integrityCheck).isOK)
    }

    // MARK: Nesting depth

    @Test func nestingPastTheLimitIsATypedErrorOnSave() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        let limit = JSONReader.defaultMaxDepth
        // The body object is level 1: `limit - 1` more levels fit exactly.
        for style in 0..<3 {
            try c.save(id: "ok\(style)", properties: ["v": nestedValue(depth: limit - 1, style: style)])
            let back = try #require(try c.document(id: "ok\(style)"))
            #expect(back["v"] == nestedValue(depth: limit - 1, style: style))
            for depth in [limit, limit + 1, 1500, 5000] {
                do {
                    try c.save(id: "deep", properties: ["v": nestedValue(depth: depth, style: style)])
                    Issue.record("depth \(depth) (style \(style)) saved")
                } catch let e as DatabaseError {
                    #expect(e.code == .tooDeep, "\(e)")
                    #expect(e.message.contains("\(limit)"), "\(e.message)")
                }
                let doc = MutableDocument(id: "deep-doc")
                doc["v"] = nestedValue(depth: depth, style: style)
                #expect(throws: DatabaseError.self) { try c.save(document: doc) }
            }
        }
        #expect(try c.document(id: "deep") == nil)
        #expect(try c.document(id: "deep-doc") == nil)
        #expect(try c.count == 3)
        #expect(try db.performMaintenance(.integrityCheck).isOK)
    }

    @Test func nestingPastTheLimitIsATypedErrorOnJSONInput() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        let limit = JSONReader.defaultMaxDepth
        try c.save(id: "ok", json: #"{"v":"# + nestedJSON(depth: limit - 1, object: false) + "}")
        #expect(try c.document(id: "ok")?["v"] == nestedValue(depth: limit - 1))
        for depth in [limit, 100_000, 1_000_000] {
            for object in [false, true] {
                let json = #"{"v":"# + nestedJSON(depth: depth, object: object) + "}"
                do {
                    try c.save(id: "deep", json: json)
                    Issue.record("depth \(depth) saved from JSON")
                } catch let e as DatabaseError {
                    // The JSON reader rejects it, with the position.
                    #expect(e.code == .invalidJSON, "\(e)")
                    #expect(e.message.contains("nesting"), "\(e.message)")
                }
                // Import paths: JSON Lines and the binary encoder.
                #expect(throws: JSONError.self) { try JSONReader.parseLines("{}\n" + json + "\n") }
                #expect(throws: JSONError.self) { try BinaryEncoder.encodeJSON(json) }
            }
        }
        #expect(try c.count == 1)
    }

    @Test func nestingPastTheLimitIsATypedErrorInQueries() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        try db.defaultCollection().save(id: "a", json: #"{"x":1}"#)
        // A modest nesting works.
        let ok = try db.createQuery("SELECT " + String(repeating: "{'k':", count: 50) + "x" + String(repeating: "}", count: 50) + " AS v FROM _")
        #expect(try ok.execute().allResults().first?["v"] == nestedValue(depth: 50, style: 1).replacingInnermost(with: 1))
        for depth in [300, 10_000, 200_000] {
            for (open, close) in [("{'k':", "}"), ("[", "]"), ("(", ")"), ("-", ""), ("NOT ", ""), ("abs(", ")")] {
                let sql = "SELECT " + String(repeating: open, count: depth) + "x" + String(repeating: close, count: depth) + " FROM _"
                do {
                    _ = try db.createQuery(sql)
                    Issue.record("depth \(depth) of \(open) accepted")
                } catch let e as QueryError {
                    #expect(e.kind == .syntax, "\(e)")
                    #expect(e.message.contains("nested too deeply"), "\(e.message)")
                }
            }
        }
        // Long flat chains are not nesting, but a very tall tree is refused the same way.
        let chain = "SELECT " + Array(repeating: "x", count: 5000).joined(separator: " + ") + " FROM _"
        #expect(throws: QueryError.self) { _ = try db.createQuery(chain) }
        // A deep value passed as a parameter: no crash; the row comes back whole.
        let q = try db.createQuery("SELECT $p AS v FROM _")
        q.parameters = Parameters().setValue(nestedValue(depth: 400), forName: "p")
        #expect(try q.execute().allResults().first?["v"] == nestedValue(depth: 400))
    }

    // MARK: Map size

    @Test func theMapGrowsFromATinySizeWithoutCallerErrors() throws {
        let dir = ScratchDirectory("growth")
        defer { dir.remove() }
        var config = DatabaseConfiguration()
        config.initialMapSize = 64 << 10
        config.noSync = true
        let db = try Database(path: dir.path, configuration: config)
        let initial = db.store.currentMapSize
        #expect(initial <= 1 << 20)
        let c = try db.createCollection(name: "docs")
        try c.createIndex(withName: "byN", config: ValueIndexConfiguration(["n"]))
        try c.createIndex(withName: "words", config: FullTextIndexConfiguration(["text"]))
        var sizes: Set<Int> = [initial]
        var saved = 0
        var rng = SplitMix64(seed: 64)
        // Batches of growing size: single saves, then batches far larger than the map.
        // (A batch that fills the map is rolled back and run again after the growth, so the
        // closure keeps no state of its own.)
        for round in 0..<12 {
            let n = round < 4 ? 1 : 50 << (round - 4)
            let first = saved
            let words = (0..<n).map { _ in (0..<20).map { _ in "w\(Int.random(in: 0..<500, using: &rng))" }.joined(separator: " ") }
            try db.inBatch {
                for i in 0..<n {
                    try c.save(id: "d\(first + i)", properties: ["n": .int(Int64(first + i)), "text": .string(words[i]),
                                                               "pad": .string(String(repeating: "x", count: 300))])
                }
            }
            saved += n
            sizes.insert(db.store.currentMapSize)
        }
        // A single document larger than the whole map so far.
        let big = String(repeating: "y", count: db.store.currentMapSize + (1 << 20))
        try c.save(id: "big", properties: ["text": "big one", "pad": .string(big)])
        sizes.insert(db.store.currentMapSize)

        #expect(sizes.count >= 6, "map sizes seen: \(sizes.sorted())")
        #expect(try c.count == saved + 1)
        #expect(try c.document(id: "big")?.string(forKey: "pad")?.utf8.count == big.utf8.count)
        let rows = try db.createQuery("SELECT count(*) AS cnt FROM docs WHERE n >= 0").execute().allResults()
        #expect(rows.first?.int(forKey: "cnt") == saved)
        #expect(try db.performMaintenance(.integrityCheck).isOK)
        try db.close()
        // Reopened with the same tiny initial size, it adopts the file's size.
        let again = try Database(path: dir.path, configuration: config)
        defer { try? again.close() }
        #expect(try again.collection(name: "docs")?.count == saved + 1)
    }

    @Test func aFullMapFailsTheWriteCleanly() throws {
        let dir = ScratchDirectory("full")
        defer { dir.remove() }
        var config = DatabaseConfiguration()
        config.initialMapSize = 256 << 10
        config.maxSize = 2 << 20
        let db = try Database(path: dir.path, configuration: config)
        let c = try db.createCollection(name: "docs")
        try c.createIndex(withName: "byN", config: ValueIndexConfiguration(["n"]))
        try db.inBatch {
            for i in 0..<200 { try c.save(id: "early\(i)", properties: ["n": .int(Int64(i)), "pad": .string(String(repeating: "e", count: 100))]) }
        }

        func expectFull(_ what: String, _ body: () throws -> Void) {
            do {
                try body()
                Issue.record("\(what) succeeded past maxSize")
            } catch let e as DatabaseError {
                #expect(e.code == .storage, "\(what): \(e)")
                #expect(e.underlying is LMDBError, "\(what): \(e)")
            } catch {
                Issue.record("\(what): untyped error \(error)")
            }
        }
        // One batch far larger than the limit, then a single document larger than it.
        expectFull("a large batch") {
            try db.inBatch {
                for i in 0..<5000 { try c.save(id: "late\(i)", properties: ["n": .int(Int64(1000 + i)), "pad": .string(String(repeating: "l", count: 1000))]) }
            }
        }
        expectFull("a 3 MB document") { try c.save(id: "huge", properties: ["pad": .string(String(repeating: "h", count: 3 << 20))]) }
        #expect(db.store.currentMapSize <= 2 << 20)

        // Earlier data intact, nothing of the failed writes, still usable.
        #expect(try c.count == 200)
        #expect(try c.document(id: "late0") == nil)
        #expect(try c.document(id: "huge") == nil)
        #expect(try c.document(id: "early199")?.int(forKey: "n") == 199)
        try c.save(id: "small", properties: ["n": -1])
        try c.delete(id: "early0")
        let rows = try db.createQuery("SELECT count(*) AS cnt FROM docs WHERE n < 100").execute().allResults()
        #expect(rows.first?.int(forKey: "cnt") == 100) // early1…early99 and small
        let report = try db.performMaintenance(.integrityCheck)
        #expect(report.isOK, "\(report)")
        try db.close()
        let again = try Database(path: dir.path, configuration: config)
        defer { try? again.close() }
        #expect(try again.collection(name: "docs")?.count == 200)
        #expect(try again.performMaintenance(.integrityCheck).isOK)
    }
}

extension Value {
    /// This value with the innermost non-container replaced (for nested test values).
    func replacingInnermost(with v: Value) -> Value {
        switch self {
        case .array(let a) where a.count == 1: return .array([a[0].replacingInnermost(with: v)])
        case .object(let o) where o.count == 1: return .object([o.keys.first!: o.values.first!.replacingInnermost(with: v)])
        default: return v
        }
    }
}
