import Testing
import LMDB
@testable import Tessera

/// SPEC §9.2 item 4: an UNNEST query that reads nothing but `meta().id` and the element (or
/// the array index's expressions) gets its rows from the array index alone — one row per
/// occurrence of the element, as UNNEST gives — and returns exactly the rows of the plain
/// path: repeated elements, NULLs, numbers that only a document tells apart (`2` and `2.0`,
/// `0` and `-0.0`), values longer than a key, nested arrays, tombstones, purges, saves inside
/// a batch.
@Suite("Covering array-index scans")
struct CoveringArrayScanTests {
    static let long = String(repeating: "k", count: 600)

    static func element(_ r: inout SplitMix64) -> String {
        switch r.int(12) {
        case 0: return "null"
        case 1: return "1"
        case 2: return "2.0"
        case 3: return "2"
        case 4: return "-0.0"
        case 5: return #""\#(long)\#(r.int(3))""#
        case 6: return #"["a"]"#
        case 7: return #"{"k":\#(r.int(2))}"#
        default: return #""\#(r.pick(["a", "b", "c", "d"]))""#
        }
    }

    static func document(_ r: inout SplitMix64, _ i: Int) -> String {
        var fields = [#""name":"n\#(i)""#]
        switch r.int(8) {
        case 0: break                                   // likes MISSING
        case 1: fields.append(#""likes":"a""#)          // not an array
        case 2: fields.append(#""likes":[]"#)
        default: fields.append(#""likes":[\#((0..<r.int(1...6)).map { _ in element(&r) }.joined(separator: ","))]"#)
        }
        let rooms = (0..<r.int(4)).map { _ in #"{"kind":"\#(r.pick(["suite", "single", "double"]))","beds":\#(r.int(1...3))}"# }
        fields.append(#""rooms":[\#(rooms.joined(separator: ","))]"#)
        let contacts = (0..<r.int(3)).map { _ in
            #"{"phones":[\#((0..<r.int(3)).map { _ in #""p\#(r.int(3))""# }.joined(separator: ","))]}"#
        }
        fields.append(#""contacts":[\#(contacts.joined(separator: ","))]"#)
        return "{" + fields.joined(separator: ",") + "}"
    }

    static func database(indexes: Bool, seed: UInt64) throws -> Database {
        var r = SplitMix64(seed: seed)
        let db = try Database.temporary()
        let c = try db.createCollection(name: "hotels")
        if indexes {
            try c.createIndex(withName: "likes", config: ArrayIndexConfiguration(path: "likes"))
            try c.createIndex(withName: "rooms", config: ArrayIndexConfiguration(path: "rooms", expressions: ["kind", "beds"]))
            try c.createIndex(withName: "phones", config: ArrayIndexConfiguration(path: "contacts[].phones"))
        }
        try db.inBatch {
            for i in 0..<400 { try c.save(id: "h\(i)", json: document(&r, i)) }
        }
        for i in 0..<400 where r.chance(0.1) { try c.delete(id: "h\(i)") }
        for i in 0..<400 where r.chance(0.05) { try? c.purge(id: "h\(i)") }
        for i in 0..<400 where r.chance(0.1) { try c.save(id: "h\(i)", json: document(&r, i)) }
        return db
    }

    static let queries = [
        "SELECT meta(h).id AS id FROM hotels AS h UNNEST h.likes AS l WHERE l = 'a'",
        "SELECT meta(h).id AS id, l FROM hotels AS h UNNEST h.likes AS l WHERE l IN ['b', 'c', 2]",
        "SELECT meta(h).id AS id, l FROM hotels AS h UNNEST h.likes AS l WHERE l = 'a' OR l = 'd'",
        "SELECT l, meta(h).id AS id FROM hotels AS h UNNEST h.likes AS l WHERE l >= 'b'",
        "SELECT meta(h).id AS id, l, TOSTRING(l) AS t FROM hotels AS h UNNEST h.likes AS l WHERE l = 2",
        "SELECT meta(h).id AS id, TOSTRING(l) AS t FROM hotels AS h UNNEST h.likes AS l WHERE l = 0",
        "SELECT meta(h).id AS id, l FROM hotels AS h UNNEST h.likes AS l WHERE l LIKE 'kkk%'",
        "SELECT meta(h).id AS id, l FROM hotels AS h UNNEST h.likes AS l WHERE l > 1",
        "SELECT meta(h).id AS id, l FROM hotels AS h UNNEST h.likes AS l WHERE l IS NULL",
        "SELECT count(*) AS n FROM hotels AS h UNNEST h.likes AS l WHERE l = 'a'",
        "SELECT l, count(*) AS n FROM hotels AS h UNNEST h.likes AS l WHERE l >= 'a' GROUP BY l",
        "SELECT DISTINCT meta(h).id AS id FROM hotels AS h UNNEST h.likes AS l WHERE l = 'b'",
        "SELECT meta(h).id AS id, l FROM hotels AS h UNNEST h.likes AS l WHERE l >= 'a' ORDER BY meta(h).id, l LIMIT 25",
        "SELECT meta(h).id AS id, r.kind, r.beds FROM hotels AS h UNNEST h.rooms AS r WHERE r.kind = 'suite'",
        "SELECT meta(h).id AS id, r.beds FROM hotels AS h UNNEST h.rooms AS r WHERE r.kind = 'single' AND r.beds >= 2",
        "SELECT meta(h).id AS id, p FROM hotels AS h UNNEST h.contacts AS c UNNEST c.phones AS p WHERE p = 'p1'",
        // Not covering (the document or the whole room is read): the same rows.
        "SELECT meta(h).id AS id, h.name FROM hotels AS h UNNEST h.likes AS l WHERE l = 'a'",
        "SELECT meta(h).id AS id, r FROM hotels AS h UNNEST h.rooms AS r WHERE r.kind = 'double'",
    ]

    @Test("rows equal the plain path's", arguments: [UInt64(3), 4])
    func equivalence(seed: UInt64) throws {
        let a = try Self.database(indexes: true, seed: seed), b = try Self.database(indexes: false, seed: seed)
        defer { try? a.close(); try? b.close() }
        try expectSameRows(a, b, Self.queries)
        for sql in Self.queries { #expect(try !resultRows(b, sql).isEmpty, "\(sql) returns no rows: a weak test") }
        #expect(try a.performMaintenance(.integrityCheck).isOK)
    }

    /// Each query's rows (sorted), run inside a batch after saves, a delete and a purge in it.
    static func rowsInsideABatch(_ db: Database) throws -> [[String]] {
        let c = try #require(try db.collection(name: "hotels"))
        var out: [[String]] = []
        try db.inBatch {
            try c.save(id: "h1", json: #"{"likes":["a","a","a",2.0,2,-0.0]}"#)
            try c.save(id: "new", json: #"{"likes":["a","b","a"],"rooms":[{"kind":"suite","beds":1},{"kind":"suite","beds":1}]}"#)
            try c.delete(id: "h2")
            try? c.purge(id: "h3")
            out = try queries.map { try resultRows(db, $0).sorted() }
        }
        return out
    }

    @Test("saves inside a batch are seen")
    func insideABatch() throws {
        let a = try Self.database(indexes: true, seed: 7), b = try Self.database(indexes: false, seed: 7)
        defer { try? a.close(); try? b.close() }
        let x = try Self.rowsInsideABatch(a), y = try Self.rowsInsideABatch(b)
        for (i, sql) in Self.queries.enumerated() { #expect(x[i] == y[i], "\(sql)") }
    }

    @Test("EXPLAIN names the covering array index")
    func explain() throws {
        let db = try Self.database(indexes: true, seed: 3)
        defer { try? db.close() }
        #expect(try db.createQuery(Self.queries[0]).explain()
                .hasPrefix("SEARCH l USING COVERING ARRAY INDEX likes (l=?) FOR h\nSCAN l (UNNEST bound by array index)\nNOT USED:"))
        #expect(try db.createQuery(Self.queries[13]).explain().hasPrefix("SEARCH r USING COVERING ARRAY INDEX rooms"))
        #expect(try db.createQuery(Self.queries[15]).explain().hasPrefix("SEARCH p USING COVERING ARRAY INDEX phones"))
        #expect(try db.createQuery(Self.queries[16]).explain().hasPrefix("SEARCH l USING ARRAY INDEX likes"))
        #expect(try db.createQuery(Self.queries[17]).explain().hasPrefix("SEARCH r USING ARRAY INDEX rooms"))
        // An outer alias of a nested path is not in the index.
        #expect(try db.createQuery("SELECT c FROM hotels AS h UNNEST h.contacts AS c UNNEST c.phones AS p WHERE p = 'p1'")
                    .explain().hasPrefix("SEARCH p USING ARRAY INDEX phones"))
    }

    /// The documents table is emptied behind the engine's back (the index stays): a covering
    /// query still returns its rows, one per occurrence; one that reads documents finds none.
    @Test("a covering scan reads no document")
    func readsNoDocument() throws {
        let dir = ScratchDirectory("covering")
        defer { dir.remove() }
        let db = try Database(path: dir.path)
        let c = try db.createCollection(name: "hotels")
        try c.save(id: "h1", json: #"{"name":"A","likes":["pool","pool","bar"],"rooms":[{"kind":"suite","beds":2},{"kind":"suite","beds":2}]}"#)
        try c.save(id: "h2", json: #"{"name":"B","likes":["pool"]}"#)
        try c.createIndex(withName: "likes", config: ArrayIndexConfiguration(path: "likes"))
        try c.createIndex(withName: "rooms", config: ArrayIndexConfiguration(path: "rooms", expressions: ["kind", "beds"]))
        try db.close()

        let env = try Environment(path: dir.path)
        let docs = try #require(try env.openTable("doc:_default.hotels", create: false))
        try env.write { txn in try txn.drop(docs) }
        env.close()

        let reopened = try Database(path: dir.path)
        defer { try? reopened.close() }
        let ids = try resultRows(reopened, "SELECT meta(h).id AS id, l FROM hotels AS h UNNEST h.likes AS l WHERE l = 'pool'")
        #expect(ids.sorted() == [#"{"id":"h1","l":"pool"}"#, #"{"id":"h1","l":"pool"}"#, #"{"id":"h2","l":"pool"}"#])
        let rooms = try resultRows(reopened, "SELECT meta(h).id AS id, r.beds FROM hotels AS h UNNEST h.rooms AS r WHERE r.kind = 'suite'")
        #expect(rooms == [#"{"beds":2,"id":"h1"}"#, #"{"beds":2,"id":"h1"}"#])
        // Reading the document finds it gone.
        #expect(try resultRows(reopened, "SELECT h.name FROM hotels AS h UNNEST h.likes AS l WHERE l = 'pool'").isEmpty)
    }
}
