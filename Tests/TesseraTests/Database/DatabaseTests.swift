import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import Tessera

@Suite("Database API")
struct DatabaseTests {
    @Test func saveGetDeletePurge() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        let doc = MutableDocument(id: "a")
        doc["name"] = "Alice"
        doc.setInt(42, forKey: "age")
        try c.save(document: doc)
        #expect(doc.sequence == 1)
        #expect(doc.revisionID?.hasPrefix("1-") == true)
        let read = try #require(try c.document(id: "a"))
        #expect(read.string(forKey: "name") == "Alice")
        #expect(read.int(forKey: "age") == 42)
        #expect(read.revisionID == doc.revisionID)
        #expect(try c.count == 1)

        let m = read.toMutable()
        m["age"] = 43
        try c.save(document: m)
        #expect(m.sequence == 2)
        #expect(m.revisionID?.hasPrefix("2-") == true)
        #expect(try c.count == 1)

        try c.delete(id: "a")
        #expect(try c.document(id: "a") == nil)
        #expect(try c.count == 0)
        let rec = try #require(try c.record(id: "a"))
        #expect(rec.deleted && rec.sequence == 3)
        try c.purge(id: "a")
        #expect(try c.record(id: "a") == nil)
        #expect(throws: DatabaseError.self) { try c.purge(id: "a") }
        #expect(throws: DatabaseError.self) { try c.delete(id: "a") }
        // Sequences never go back, even after a purge.
        try c.save(id: "b", json: #"{"x":1}"#)
        #expect(try c.record(id: "b")?.sequence == 4)
    }

    /// A save appending past every stored ID skips looking for the document it replaces;
    /// every other save in the same transaction (an ID appended before, a tombstone, a purged
    /// ID, one below the largest) still finds what is stored.
    @Test func savesAppendingInABatchFindWhatTheyReplace() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        try c.save(id: "b", json: #"{"v":0}"#)
        try c.save(id: "d", json: #"{"v":0}"#)
        try db.inBatch {
            for id in ["e", "f", "g"] { try c.save(id: id, json: #"{"v":1}"#) }  // appended
            try c.save(id: "f", json: #"{"v":2}"#)  // appended earlier in this transaction
            try c.delete(id: "g")
            try c.save(id: "g", json: #"{"v":3}"#)  // over its tombstone
            try c.purge(id: "e")
            try c.save(id: "e", json: #"{"v":4}"#)  // purged: new again
            try c.save(id: "d", json: #"{"v":5}"#)  // stored before the transaction
            try c.save(id: "h", json: #"{"v":6}"#)  // appended after the others
        }
        let expected: [(String, Int64, String)] = [("b", 0, "1-"), ("d", 5, "2-"), ("e", 4, "1-"), ("f", 2, "2-"), ("g", 3, "3-"), ("h", 6, "1-")]
        for (id, v, generation) in expected {
            let doc = try #require(try c.document(id: id), "\(id)")
            #expect(doc.int(forKey: "v") == Int(v), "\(id)")
            #expect(doc.revisionID?.hasPrefix(generation) == true, "\(id): \(doc.revisionID ?? "-")")
        }
        #expect(try c.count == 6)
        #expect(try c.documentIDs() == ["b", "d", "e", "f", "g", "h"])
        #expect(try db.integrityCheck().problems.isEmpty)
    }

    @Test func failOnConflict() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "people")
        try c.save(id: "p", json: #"{"v":1}"#)
        let first = try #require(try c.document(id: "p")).toMutable()
        let second = try #require(try c.document(id: "p")).toMutable()
        first["v"] = 2
        #expect(try c.save(document: first, concurrencyControl: .failOnConflict))
        second["v"] = 3
        #expect(try c.save(document: second, concurrencyControl: .failOnConflict) == false)
        #expect(try c.document(id: "p")?.int(forKey: "v") == 2)
        let fresh = MutableDocument(id: "p", properties: ["v": 9])
        #expect(try c.save(document: fresh, concurrencyControl: .failOnConflict) == false)
    }

    @Test func batchesAreAllOrNothing() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try db.inBatch {
                for i in 0..<100 { try c.save(id: "d\(i)", json: #"{"i":\#(i)}"#) }
                throw Boom()
            }
        }
        #expect(try c.count == 0)
        #expect(try c.document(id: "d1") == nil)
        try db.inBatch {
            for i in 0..<100 { try c.save(id: "d\(i)", json: #"{"i":\#(i)}"#) }
            // Reads inside the batch see its writes.
            #expect(try c.document(id: "d5")?.int(forKey: "i") == 5)
        }
        #expect(try c.count == 100)
        #expect(try c.documentIDs(limit: 3) == ["d0", "d1", "d10"])
    }

    @Test func collectionsAndScopes() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        try db.createCollection(name: "hotels", scope: "inventory")
        try db.createCollection(name: "airports", scope: "inventory")
        #expect(try db.collections(scope: "inventory").map(\.name) == ["airports", "hotels"])
        #expect(try db.scopes().map(\.name) == ["_default", "inventory"])
        #expect(try db.collection(name: "nope") == nil)
        let h = try #require(try db.collection(name: "hotels", scope: "inventory"))
        try h.save(id: "h1", json: "{}")
        try db.deleteCollection(name: "hotels", scope: "inventory")
        #expect(try db.collection(name: "hotels", scope: "inventory") == nil)
        #expect(throws: DatabaseError.self) { try h.save(id: "h2", json: "{}") }
        for bad in ["", "_x", "%x", "a b", "a.b", String(repeating: "x", count: 252)] {
            #expect(throws: DatabaseError.self, "\(bad)") { try db.createCollection(name: bad) }
        }
        #expect(throws: DatabaseError.self) { try db.deleteCollection(name: "_default") }
    }

    @Test func reopenKeepsEverything() throws {
        let dir = FileSystem.temporaryDirectory + "/tessera-reopen-\(UInt32.random(in: 0...UInt32.max))"
        defer { FileSystem.removeTree(dir) }
        do {
            let db = try Database(path: dir)
            let c = try db.createCollection(name: "c", scope: "s")
            try c.save(id: "x", json: #"{"a":[1,2.5,"z",null,true]}"#)
            try db.close()
        }
        let db = try Database(path: dir)
        defer { try? db.close() }
        let c = try #require(try db.collection(name: "c", scope: "s"))
        #expect(try c.document(id: "x")?.toJSON() == #"{"a":[1,2.5,"z",null,true]}"#)
        #expect(try c.count == 1)
    }

    @Test func badInputIsRejectedAndNothingIsWritten() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        #expect(throws: DatabaseError.self) { try c.save(id: "", json: "{}") }
        #expect(throws: DatabaseError.self) { try c.save(id: String(repeating: "x", count: 251), json: "{}") }
        #expect(throws: DatabaseError.self) { try c.save(id: "a", json: "[1,2]") }
        #expect(throws: DatabaseError.self) { try c.save(id: "a", json: #"{"a":}"#) }
        #expect(throws: DatabaseError.self) { try c.save(id: "a", json: #"{"_id":"x"}"#) }
        #expect(throws: DatabaseError.self) { try c.save(id: "a", json: #"{"_deleted":true}"#) }
        #expect(try c.count == 0)
    }

    /// Deleting a database directory removes a symbolic link inside it, never what it points to.
    @Test func deleteDoesNotFollowSymlinks() throws {
        let base = FileSystem.temporaryDirectory + "/tessera-symlink-\(UInt32.random(in: 0...UInt32.max))"
        defer { FileSystem.removeTree(base) }
        let outside = base + "/outside"
        #expect(mkdir(base, 0o700) == 0 && mkdir(outside, 0o700) == 0)
        let keep = outside + "/keep.txt"
        let f = fopen(keep, "w"); fputs("x", f); fclose(f)
        let db = try Database(path: base + "/db")
        #expect(symlink(outside, base + "/db/link") == 0)
        try db.delete()
        #expect(!FileSystem.fileExists(base + "/db"))
        #expect(FileSystem.fileExists(keep))
    }
}
