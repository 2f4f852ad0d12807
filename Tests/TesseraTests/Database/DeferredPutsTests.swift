import Foundation
import Testing
@testable import Tessera

/// Issue 19 (file size, load speed) and issue 16 (full scans): a write transaction holds the
/// puts of a collection's document and ID tables back and writes them in ID order
/// (`DeferredPuts`). Everything read inside the transaction must still see every write, in
/// any mix of saves, deletes, purges, point reads and walks, and the commit must store exactly
/// what a transaction without held-back puts would have stored.
@Suite("Puts held back and written in key order")
struct DeferredPutsTests {
    // MARK: - The storage layer

    /// A store of its own in a scratch directory.
    static func withStore(_ name: String, _ body: (Store) throws -> Void) throws {
        let dir = ScratchDirectory(name)
        defer { dir.remove() }
        let store = try Store(path: dir.path, options: StoreOptions(initialMapSize: 64 << 20, maxSize: nil, fileMode: 0o644, noSync: true))
        defer { store.close() }
        try body(store)
    }

    static func entries(_ txn: Snapshot, _ table: StorageTable) throws -> [(String, String)] {
        var out: [(String, String)] = []
        try txn.withCursor(table) { c in
            try c.forEach { k, v in
                out.append((String(decoding: k, as: UTF8.self), String(decoding: v, as: UTF8.self)))
                return true
            }
        }
        return out
    }

    /// Random puts, deletes, point reads and walks against a dictionary, with a cap so small
    /// that puts also write out on their own; then the committed table equals the model.
    @Test("Point reads and walks see every held put and delete (seeded, 40 rounds)")
    func storageModel() throws {
        try Self.withStore("deferred-model") { store in
            var model: [String: String] = [:]
            var rng = SplitMix64(seed: 19)
            for round in 0..<40 {
                let table = try store.write { w in try w.createTable("t") }
                try store.write { w in
                    w.deferPuts(in: table, maxHeldBytes: round % 4 == 0 ? 600 : 1 << 20)
                    for step in 0..<Int.random(in: 1...300, using: &rng) {
                        let key = "k" + String(Int.random(in: 0..<400, using: &rng))
                        switch Int.random(in: 0..<10, using: &rng) {
                        case 0..<5:
                            let value = "v\(round)-\(step)" + String(repeating: "x", count: Int.random(in: 0..<40, using: &rng))
                            try w.put(table, key: Array(key.utf8), value: Array(value.utf8))
                            model[key] = value
                        case 5:
                            let value = "r\(round)-\(step)"
                            try key.utf8.withContiguousStorageIfAvailable { k in
                                try w.putReserved(table, key: UnsafeRawBufferPointer(k), size: value.utf8.count) { out in
                                    out.copyBytes(from: Array(value.utf8))
                                }
                            }
                            model[key] = value
                        case 6, 7:
                            let existed = try w.delete(table, key: Array(key.utf8))
                            #expect(existed == (model[key] != nil), "delete \(key) in round \(round)")
                            model[key] = nil
                        case 8:
                            let got = try w.get(table, key: key).map { String(decoding: $0, as: UTF8.self) }
                            #expect(got == model[key], "get \(key) in round \(round)")
                        default:
                            let walked = try Self.entries(w, table)
                            #expect(walked.map(\.0) == model.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
                            #expect(walked.allSatisfy { model[$0.0] == $0.1 })
                            #expect(try w.count(table) == model.count)
                        }
                    }
                }
                try store.read { txn in
                    let stored = try Self.entries(txn, table)
                    #expect(Dictionary(uniqueKeysWithValues: stored) == model, "round \(round)")
                }
            }
        }
    }

    /// Held bytes beyond the memory budget go to a mapped temporary file instead of being
    /// written out early: the table ends byte for byte as packed as when everything was held
    /// in memory (written out at every budget's worth, later write-outs land between the keys
    /// of earlier ones and leave pages part empty), point reads inside the transaction see the
    /// spilled puts, and the file is never visible in the directory.
    /// `WriteTransaction.deleteAll(_:prefix:)` removes exactly the keys with the prefix, over
    /// many leaf pages (a cursor that deletes where it stands moves on to the next page), with
    /// keys just before and after the range, and held puts of the table included.
    @Test("Deleting every key with a prefix, across pages and held puts (seeded)")
    func deleteAllWithAPrefix() throws {
        try Self.withStore("delete-prefix") { store in
            var rng = SplitMix64(seed: 31)
            for held in [false, true] {
                let table = try store.write { w in try w.createTable(held ? "held" : "plain") }
                var model: [String: String] = [:]
                try store.write { w in
                    // "b" ‖ … is the range; "a…", "b" alone and "c…" sort around it. Values of
                    // 40–200 bytes put ~3,000 entries on a few hundred pages.
                    for i in 0..<3_000 {
                        let key = ["a", "b", "b", "c"][i % 4] + String(format: "%05d", Int.random(in: 0..<100_000, using: &rng))
                        let value = String(repeating: "v", count: Int.random(in: 40...200, using: &rng))
                        try w.put(table, key: Array(key.utf8), value: Array(value.utf8))
                        model[key] = value
                    }
                    try w.put(table, key: Array("b".utf8), value: Array("alone".utf8))
                    model["b"] = "alone"
                }
                let deleted = try store.write { w -> Int in
                    if held {
                        // Some of the range only in held puts when the delete comes.
                        w.deferPuts(in: table)
                        for i in 0..<50 { try w.put(table, key: Array("b9\(i)".utf8), value: Array("h".utf8)); model["b9\(i)"] = "h" }
                    }
                    return try w.deleteAll(table, prefix: Array("b".utf8))
                }
                let inRange = model.keys.filter { $0.hasPrefix("b") }
                #expect(deleted == inRange.count)
                for k in inRange { model[k] = nil }
                let stored = try store.read { try Self.entries($0, table) }
                let left = Set(stored.map(\.0)).subtracting(model.keys)
                let lost = Set(model.keys).subtracting(stored.map(\.0))
                #expect(left.isEmpty, "left: \(left.sorted().prefix(5))")
                #expect(lost.isEmpty, "lost: \(lost.sorted().prefix(5))")
                #expect(stored.count == model.count && stored.allSatisfy { model[$0.0] == $0.1 })
            }
        }
    }

    @Test("Held keys are written in memcmp order: shared prefixes past 16 bytes, zero bytes, prefixes of each other (seeded)")
    func writeOutOrder() throws {
        try Self.withStore("deferred-order") { store in
            var rng = SplitMix64(seed: 41)
            let stems: [[UInt8]] = [[], Array("hotel_".utf8), Array("a-very-long-shared-prefix-of-ids/".utf8), [0, 0, 0], [0xFF, 0xFF]]
            for round in 0..<10 {
                let table = try store.write { w in try w.createTable("o\(round)") }
                var keys = Set<[UInt8]>()
                while keys.count < 3_000 {
                    var k = stems[Int.random(in: 0..<stems.count, using: &rng)]
                    for _ in 0..<Int.random(in: 0...20, using: &rng) {
                        k.append(Int.random(in: 0..<4, using: &rng) == 0 ? 0 : UInt8(Int.random(in: 0..<256, using: &rng)))
                    }
                    if !k.isEmpty { keys.insert(k) }
                }
                let shuffled = keys.shuffled(using: &rng)
                try store.write { w in
                    w.deferPuts(in: table)
                    for k in shuffled { try w.put(table, key: k, value: [1]) }
                    #expect(w.held(table)?.keysInWriteOrder() == keys.sorted { $0.lexicographicallyPrecedes($1) }, "round \(round)")
                }
                try store.read { txn in
                    var walked: [[UInt8]] = []
                    try txn.withCursor(table) { c in try c.forEach { k, _ in walked.append(Array(k)); return true } }
                    #expect(walked == keys.sorted { $0.lexicographicallyPrecedes($1) }, "round \(round)")
                }
            }
        }
    }

    @Test("Beyond the memory budget, held puts go to an unlinked temporary file, not to the table early")
    func spillBeyondTheMemoryBudget() throws {
        let dir = ScratchDirectory("deferred-spill")
        defer { dir.remove() }
        let store = try Store(path: dir.path, options: StoreOptions(initialMapSize: 64 << 20, maxSize: nil, fileMode: 0o644, noSync: true))
        defer { store.close() }
        var rng = SplitMix64(seed: 31)
        let keys = (0..<6_000).map { _ in "k" + String(UInt32.random(in: 0...UInt32.max, using: &rng)) }
        func value(_ i: Int) -> [UInt8] { Array(("v\(i)-" + String(repeating: "x", count: 200 + i % 300)).utf8) }
        var sizes: [Int] = []
        var contents: [[(String, String)]] = []
        // 0: everything held in memory; 1: beyond 16 KB in the temporary file; 2: written out
        // every 16 KB (what a budget without a temporary file does).
        for mode in 0..<3 {
            let table = try store.write { w in try w.createTable("t\(mode)") }
            try store.write { w in
                switch mode {
                case 0: w.deferPuts(in: table)
                case 1: w.deferPuts(in: table, memoryBytes: 16 << 10)
                default: w.deferPuts(in: table, maxHeldBytes: 16 << 10)
                }
                for (i, k) in keys.enumerated() { try w.put(table, key: Array(k.utf8), value: value(i)) }
                let held = try #require(w.held(table))
                #expect(held.hasSpilled == (mode == 1), "mode \(mode)")
                if mode == 1 {
                    for i in stride(from: 0, to: keys.count, by: 97) {
                        #expect(try w.get(table, key: keys[i]).map(Array.init) == value(i), "held \(keys[i])")
                    }
                    let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
                    #expect(!names.contains { $0.contains("tessera-held") }, "\(names)")
                }
            }
            try store.read { txn in
                sizes.append(try txn.byteSize(table))
                contents.append(try Self.entries(txn, table))
            }
        }
        #expect(contents[1].count == keys.count)
        #expect(contents[1].map(\.0) == contents[0].map(\.0) && contents[1].map(\.1) == contents[0].map(\.1))
        #expect(contents[2].map(\.0) == contents[0].map(\.0))
        #expect(sizes[1] == sizes[0], "spilled \(sizes[1]) bytes against \(sizes[0]) held in memory")
        #expect(sizes[2] > sizes[0] * 5 / 4, "written out early: \(sizes[2]) bytes against \(sizes[0])")
    }

    /// A value larger than a mapped chunk gets a chunk of its own, rounded so that the next
    /// chunk still starts at a page-aligned offset of the temporary file (else it could not be
    /// mapped, and the puts would be written out early).
    @Test("A held value larger than a mapped chunk keeps later chunks mappable")
    func spillOfAValueLargerThanAChunk() throws {
        try Self.withStore("deferred-spill-large") { store in
            let table = try store.write { w in try w.createTable("t") }
            let large = [UInt8](repeating: 7, count: DeferredPuts.mappedChunkSize + 12_345)
            try store.write { w in
                w.deferPuts(in: table, memoryBytes: 16 << 10)
                try w.put(table, key: Array("big".utf8), value: large)
                for i in 0..<200 { try w.put(table, key: Array("k\(i)".utf8), value: [UInt8](repeating: 1, count: 1_000)) }
                let held = try #require(w.held(table))
                #expect(held.hasSpilled && !held.isFull)
                // Still held: nothing was written out on the way.
                let stillHeld = Array("big".utf8).withUnsafeBytes { held.lookup($0) != nil }
                #expect(stillHeld)
                let got = try w.get(table, key: "big")
                #expect(got?.count == large.count)
            }
            try store.read { txn in
                let stored = try txn.get(table, key: "big").map { Array($0) }
                #expect(stored == large)
                let count = try txn.count(table)
                #expect(count == 201)
            }
        }
    }

    /// A transaction that throws writes nothing it held back.
    @Test("A rolled-back transaction leaves nothing of its held puts")
    func rollback() throws {
        struct Stop: Error {}
        try Self.withStore("deferred-rollback") { store in
            let table = try store.write { w in
                let t = try w.createTable("t")
                try w.put(t, key: Array("a".utf8), value: Array("1".utf8))
                return t
            }
            #expect(throws: Stop.self) {
                try store.write { w in
                    w.deferPuts(in: table)
                    for i in 0..<100 { try w.put(table, key: Array("b\(i)".utf8), value: Array("x".utf8)) }
                    _ = try w.delete(table, key: Array("a".utf8))
                    throw Stop()
                }
            }
            let keys = try store.read { txn in try Self.entries(txn, table).map(\.0) }
            #expect(keys == ["a"])
        }
    }

    // MARK: - Documents

    static func body(_ n: Int) -> String {
        #"{"n":\#(n),"text":"\#(String(repeating: "y", count: 300 + n % 700))"}"#
    }

    /// Saves, deletes, purges, reads by ID and queries inside batches, against a model; a
    /// value index on `n` holds its puts back too once a batch has written 128 documents
    /// (`WriteContext.keyedIndexDeferral`), and queries through it inside the batch and the
    /// integrity check after it (every index equals the index rebuilt) see every entry.
    @Test("Batches of saves, deletes, purges, reads and queries keep every document (seeded)")
    func documentModel() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        try c.createIndex(withName: "ByN", config: ValueIndexConfiguration(["n"]))
        let all = try db.createQuery("SELECT meta(d).id AS id, d.n FROM _default AS d ORDER BY meta(d).id")
        let above = try db.createQuery("SELECT meta(d).id AS id FROM _default AS d WHERE d.n >= $lo ORDER BY d.n, meta(d).id")
        #expect(try above.explain().contains("ByN"))
        var model: [String: Int] = [:]
        var rng = SplitMix64(seed: 23)
        for round in 0..<12 {
            try db.inBatch {
                for step in 0..<Int.random(in: 20...1_500, using: &rng) {
                    let id = UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", Int.random(in: 0..<600, using: &rng)))!.uuidString
                    switch Int.random(in: 0..<20, using: &rng) {
                    case 0..<12:
                        let n = round * 1000 + step
                        try c.save(id: id, json: Self.body(n))
                        model[id] = n
                    case 12, 13:
                        if model[id] != nil { try c.delete(id: id); model[id] = nil }
                    case 14:
                        if (try? c.purge(id: id)) != nil { model[id] = nil }
                    case 15..<19:
                        #expect(try c.document(id: id)?.int(forKey: "n") == model[id], "\(id) in round \(round)")
                    default:
                        let rows = try all.execute().allResults()
                        #expect(rows.map { $0.string(forKey: "id")! } == model.keys.sorted())
                        #expect(rows.allSatisfy { model[$0.string(forKey: "id")!] == $0.int(forKey: "n") })
                        let lo = round * 1000 + step / 2
                        above.parameters = Parameters().setInt(lo, forName: "lo")
                        let expected = model.filter { $0.value >= lo }.sorted { ($0.value, $0.key) < ($1.value, $1.key) }.map(\.key)
                        #expect(try above.execute().allResults().map { $0.string(forKey: "id")! } == expected)
                    }
                }
                #expect(try c.count == model.count)
            }
            #expect(try c.documentIDs() == model.keys.sorted())
            for (id, n) in model { #expect(try c.document(id: id)?.int(forKey: "n") == n) }
            #expect(try db.integrityCheck().problems.isEmpty)
        }
    }

    /// New IDs in ascending order are appended straight away; the first one out of order makes
    /// the batch hold its puts back, taking back what it appended when that is little (a
    /// thousand documents or fewer) and leaving it in place otherwise.
    @Test("Ascending IDs, then IDs out of order: taken back or left, every document stays", arguments: [300, 1500])
    func ascendingThenOutOfOrder(ascending: Int) throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        try db.inBatch { try c.save(id: "m-000000", json: Self.body(0)) }
        var expected: [String: Int] = ["m-000000": 0]
        var rng = SplitMix64(seed: UInt64(ascending))
        try db.inBatch {
            for i in 1...ascending {
                let id = "m-" + String(format: "%06d", i)
                try c.save(id: id, json: Self.body(i))
                expected[id] = i
            }
            for i in 0..<400 {
                let id = (Bool.random(using: &rng) ? "a-" : "z-") + String(Int.random(in: 0..<100_000, using: &rng))
                try c.save(id: id, json: Self.body(i))
                expected[id] = i
                if i % 50 == 0 { #expect(try c.document(id: "m-" + String(format: "%06d", ascending))?.int(forKey: "n") == ascending) }
            }
        }
        #expect(try c.documentIDs() == expected.keys.sorted())
        for (id, n) in expected { #expect(try c.document(id: id)?.int(forKey: "n") == n) }
        let hits = try db.createQuery("SELECT meta(d).id FROM _default AS d WHERE meta(d).id >= 'm-' AND meta(d).id < 'n'").execute().allResults()
        #expect(hits.count == ascending + 1)
        #expect(try db.integrityCheck().problems.isEmpty)
    }

    /// Documents saved in random ID order in one batch are stored as densely as in ID order.
    @Test("One batch in random ID order fills the document table like one in ID order")
    func randomOrderIsPacked() throws {
        let ids = (0..<3000).map { _ in UUID().uuidString }
        let sorted = ids.sorted()
        // Each ID has the same body in both loads (records of 330–1,030 bytes: some are cut
        // where their page ends, so both tables count).
        let number = Dictionary(uniqueKeysWithValues: sorted.enumerated().map { ($1, $0) })
        func load(_ order: [String]) throws -> (Database, Int) {
            let db = try Database.temporary()
            let c = try db.defaultCollection()
            try db.inBatch { for id in order { try c.save(id: id, json: Self.body(number[id]!)) } }
            let store = try #require(db.catalog.withLock { $0.collections[CollectionKey.defaultCollection] })
            return (db, try db.read { try $0.byteSize(store.docs) + $0.byteSize(store.tails) })
        }
        let (a, ordered) = try load(sorted), (b, random) = try load(ids)
        defer { try? a.close(); try? b.close() }
        // Without held-back puts the random order took about 40 % more pages.
        #expect(random <= ordered + 2 * 4096, "random order \(random) bytes, ID order \(ordered) bytes")
        #expect(try b.defaultCollection().documentIDs() == sorted)
        #expect(try b.integrityCheck().problems.isEmpty)
    }
}
