import Testing
@testable import Tessera

/// Issue 19 (index creation): a back-fill reads the document table on two threads
/// (`PartitionedScan`), the writer's transaction on one and a read snapshot of the same commit
/// on the other, and appends the sorted entries through one cursor (`AppendBatch`). Whatever
/// the IDs look like, the parts must join into exactly one walk of the table, a table the
/// transaction has changed must be read by the writer alone, and an index built this way must
/// be the index built one document at a time.
@Suite("Documents read on two threads")
struct PartitionedScanTests {
    @Test("The ID range is cut into runs of the same number of live IDs")
    func splitKeysCutEvenRuns() throws {
        try DeferredPutsTests.withStore("split-keys") { store in
            let table = try store.write { w in try w.createTable("ids") }
            // IDs crowded in corners of the byte range: three prefixes, one odd key.
            let keys = (0..<5_000).map { i in Array((["airport_", "hotel_", "hotel_", "landmark_"][i % 4] + "\(i)").utf8) }
                + [Array("zzz".utf8)]
            try store.write { w in for k in keys { try w.put(table, key: k, value: []) } }
            let sorted = keys.sorted { $0.lexicographicallyPrecedes($1) }
            try store.read { txn in
                for pieces in [1, 2, 3, 64, 1_000, 6_000] {
                    let splits = try PartitionedScan.splitKeys(table, count: sorted.count, pieces: pieces, txn: txn)
                    let step = sorted.count / pieces
                    #expect(splits.count == (step > 0 && pieces > 1 ? pieces - 1 : 0), "\(pieces) pieces")
                    // Every (count / pieces)-th key: runs of `step` keys, the last run the rest.
                    #expect(splits == (0..<splits.count).map { sorted[($0 + 1) * step] }, "\(pieces) pieces")
                }
            }
        }
    }

    /// Document IDs of one shape.
    static func ids(_ shape: String, count: Int, _ r: inout SplitMix64) -> [String] {
        (0..<count).map { i in
            switch shape {
            case "sequential": return "doc\(i)"
            case "random": return (0..<16).map { _ in String(r.int(16), radix: 16) }.joined()
            case "crowded": return i == 0 ? "zzz" : "a\(i)"          // all but one in a corner
            case "prefix": return "x" + String(repeating: "y", count: 40) + "\(i)"  // long common prefix
            default: return ["airport_", "hotel_", "hotel_", "landmark_"][i % 4] + "\(i)"
            }
        }
    }

    @Test("The parts join into one walk of the table, whole records included", arguments: ["sequential", "random", "crowded", "prefix", "typed"])
    func partsJoinIntoOneWalk(shape: String) throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        var r = SplitMix64(seed: 11)
        let ids = Self.ids(shape, count: 2_000, &r)
        // Some records are stored in two pieces (over 2 KB), one is a tombstone.
        _ = try c.save(jsonDocuments: ids.enumerated().map { i, id in
            (id, #"{"n": \#(i), "pad": "\#(String(repeating: "x", count: i % 37 == 0 ? 3_000 : 10))"}"#)
        })
        try c.delete(id: ids[1])
        let store = try c.currentStore()
        let serial: [(String, [UInt8])] = try db.read { snap in
            var out: [(String, [UInt8])] = []
            try store.documents.forEach(snap) { k, v in out.append((String(decoding: k, as: UTF8.self), Array(v))); return true }
            return out
        }
        #expect(serial.count == 2_000)
        for pieces in [2, 7, 64, 300] {
            // Runs of the same number of live IDs, whatever the IDs look like.
            #expect(try db.read { snap in
                try PartitionedScan.splitKeys(store.documents.liveIDs!, count: 1_999, pieces: pieces, txn: snap).count
            } == pieces - 1)
            var parts: [[(String, [UInt8])]] = []
            try db.write { ctx in
                try PartitionedScan.run(store.documents, txn: ctx.txn, minimumDocuments: 1, pieces: pieces) { _ in
                    [(String, [UInt8])]()
                } visit: { part, r in
                    part.append((String(decoding: r.id, as: UTF8.self), Array(try r.whole())))
                } consume: { parts.append($0) }
            }
            // Cut from the top of the document table's tree: at most `pieces` runs, fewer when
            // the tree has fewer leaves (2,000 small documents: about 55).
            #expect(parts.count > 1 && parts.count <= pieces, "\(shape), \(pieces) pieces")
            let joined = parts.flatMap { $0 }
            #expect(joined.map(\.0) == serial.map(\.0), "\(shape), \(pieces) pieces")
            #expect(joined.map(\.1) == serial.map(\.1), "\(shape), \(pieces) pieces")
        }
    }

    @Test("A helper thread handed in walks pieces, an error in either thread is thrown, and the helper is left running")
    func aHelperHandedInIsLeftRunning() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        let ids = (0..<3_000).map { "d\($0)" }
        _ = try c.save(jsonDocuments: ids.map { ($0, #"{"n": 1}"#) })
        let store = try c.currentStore()
        let worker = WorkerThread(name: "tessera.test-scan-helper")
        defer { worker.stop() }
        var seen: [String] = []
        try db.write { ctx in
            try PartitionedScan.run(store.documents, txn: ctx.txn, minimumDocuments: 1, pieces: 64, worker: worker) { _ in
                [String]()
            } visit: { part, r in
                part.append(String(decoding: r.id, as: UTF8.self))
            } consume: { seen.append(contentsOf: $0) }
        }
        #expect(seen == ids.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        // An error in a piece (whichever thread walks it) is thrown once both have stopped.
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try db.write { ctx in
                try PartitionedScan.run(store.documents, txn: ctx.txn, minimumDocuments: 1, pieces: 64, worker: worker) { _ in
                    0
                } visit: { _, r in
                    if String(decoding: r.id, as: UTF8.self) == "d2500" { throw Stop() }
                } consume: { _ in }
            }
        }
        // The scan did not stop the helper: it runs the next work handed to it.
        PipelinedAppendTests.drain(worker)
    }

    @Test("Cut keys from the top of a committed tree: ascending runs of about the same size, none for a changed table")
    func cutKeysFromTheTree() throws {
        try DeferredPutsTests.withStore("cut-keys") { store in
            var r = SplitMix64(seed: 31)
            for (round, shape) in ["sequential", "random", "crowded", "prefix", "typed"].enumerated() {
                let table = try store.write { w in try w.createTable("t\(round)") }
                let ids = Self.ids(shape, count: 30_000, &r).map { Array($0.utf8) }
                try store.write { w in for k in ids { try w.put(table, key: k, value: [UInt8](repeating: 1, count: 40)) } }
                let sorted = ids.sorted { $0.lexicographicallyPrecedes($1) }
                try store.write { w in
                    for pieces in [2, 7, 64, 1_000] {
                        guard let cuts = w.cutKeys(table, pieces: pieces) else {
                            Issue.record("no cuts for \(shape), \(pieces) pieces")
                            continue
                        }
                        #expect(cuts.count >= 1 && cuts.count <= pieces - 1, "\(shape), \(pieces): \(cuts.count) cuts")
                        #expect(zip(cuts, cuts.dropFirst()).allSatisfy { $0.lexicographicallyPrecedes($1) }, "\(shape), \(pieces)")
                        // Every cut is a stored key (the first of its subtree), and the runs
                        // between cuts are within a factor of four of each other (B-tree pages
                        // are half to wholly full).
                        let at = cuts.map { c in sorted.firstIndex(of: c) }
                        #expect(!at.contains(nil), "\(shape), \(pieces)")
                        let bounds = [0] + at.compactMap { $0 } + [sorted.count]
                        let runs = zip(bounds, bounds.dropFirst()).map { $1 - $0 }
                        if pieces <= 64 {
                            #expect(runs.max()! <= 4 * runs.min()! + 200, "\(shape), \(pieces): runs \(runs)")
                        }
                    }
                    // Once the transaction writes to the table, its committed tree is not what
                    // it reads: no cuts from it.
                    try w.put(table, key: Array("zz-new".utf8), value: [])
                    #expect(w.cutKeys(table, pieces: 8) == nil)
                }
            }
            // A table of one page has nothing to cut; a table made in this transaction none
            // either (no committed tree).
            let small = try store.write { w in try w.createTable("small") }
            try store.write { w in for i in 0..<10 { try w.put(small, key: Array("k\(i)".utf8), value: []) } }
            try store.write { w in
                #expect(w.cutKeys(small, pieces: 8) == [])
                let fresh = try w.createTable("fresh")
                for i in 0..<5_000 { try w.put(fresh, key: Array("f\(1_000_000 + i)".utf8), value: []) }
                #expect(w.cutKeys(fresh, pieces: 8) == nil)
            }
        }
    }

    @Test("A table of one page is cut by walking its live IDs")
    func aSmallTableIsCutByItsIDs() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        let ids = (0..<12).map { "d\($0)" }
        _ = try c.save(jsonDocuments: ids.map { ($0, #"{"n": 1}"#) })
        let store = try c.currentStore()
        var parts: [[String]] = []
        try db.write { ctx in
            try PartitionedScan.run(store.documents, txn: ctx.txn, minimumDocuments: 1, pieces: 4) { _ in
                [String]()
            } visit: { part, r in
                part.append(String(decoding: r.id, as: UTF8.self))
            } consume: { parts.append($0) }
        }
        #expect(parts.count == 4)
        #expect(parts.flatMap { $0 } == ids.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
    }

    @Test("A document table the transaction changed is read by the writer alone, as it stands")
    func aChangedTableIsReadByTheWriter() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        _ = try c.save(jsonDocuments: (0..<500).map { ("d\($0)", #"{"n": \#($0)}"#) })
        var seen: [[String]] = []
        try db.inBatch {
            try c.save(id: "d250x", json: #"{"n": -1}"#)
            try c.delete(id: "d7")
            let store = try c.currentStore()
            try db.write { ctx in
                try PartitionedScan.run(store.documents, txn: ctx.txn, minimumDocuments: 1) { snapshot in
                    (ids: [String](), writer: snapshot === ctx.txn)
                } visit: { part, r in
                    if DocumentRecord.header(r.stored)?.deleted == false { part.ids.append(String(decoding: r.id, as: UTF8.self)) }
                } consume: { part in
                    #expect(part.writer)
                    seen.append(part.ids)
                }
            }
        }
        let ids = seen.flatMap { $0 }
        #expect(seen.count > 1)
        #expect(ids.contains("d250x"))
        #expect(!ids.contains("d7"))
        #expect(ids.count == 500)
        #expect(ids == ids.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
    }

    @Test("The storage layer knows which tables a write transaction changed")
    func changedTables() throws {
        try DeferredPutsTests.withStore("changed-tables") { store in
            let (a, b, c) = try store.write { w in (try w.createTable("a"), try w.createTable("b"), try w.createTable("c")) }
            try store.write { w in
                #expect(!w.hasChanged(a) && !w.hasChanged(b) && !w.hasChanged(c))
                try w.put(a, key: [1], value: [1])
                _ = try w.delete(b, key: [9])      // a delete of nothing still counts
                #expect(w.hasChanged(a) && w.hasChanged(b) && !w.hasChanged(c))
                try w.drop(c, delete: false)
                #expect(w.hasChanged(c))
            }
            try store.write { w in
                #expect(!w.hasChanged(a))
                try w.withCursor(a) { cursor in
                    #expect(try cursor.first())
                    try cursor.deleteCurrent()
                }
                #expect(w.hasChanged(a))
            }
        }
    }

    @Test("A batch of appends stores what puts with .append store, out-of-order keys and copied keys included (seeded)")
    func appendBatch() throws {
        try DeferredPutsTests.withStore("append-batch") { store in
            var r = SplitMix64(seed: 23)
            for round in 0..<20 {
                let table = try store.write { w in try w.createTable("t\(round)") }
                // Keys already there, some after the batch's first keys.
                var model: [[UInt8]: [UInt8]] = [:]
                try store.write { w in
                    for _ in 0..<r.int(30) {
                        let k = [UInt8(r.int(256)), UInt8(r.int(256))]
                        try w.put(table, key: k, value: [7])
                        model[k] = [7]
                    }
                }
                var keys = Set<[UInt8]>()
                for _ in 0..<(1 + r.int(3_000)) { keys.insert([UInt8(r.int(256)), UInt8(r.int(256)), UInt8(r.int(256))]) }
                let sorted = keys.sorted { $0.lexicographicallyPrecedes($1) }
                // Odd rounds copy the keys into the batch, which is written only when full.
                let copying = round % 2 == 1
                try store.write { w in
                    var batch = StorageAppendBatch(capacity: 1 + r.int(500))
                    for k in sorted {
                        let value: [UInt8] = r.int(3) == 0 ? [UInt8(r.int(256)), 1, 2] : []
                        try k.withUnsafeBytes { key in
                            try value.withUnsafeBytes { v in
                                if copying {
                                    batch.add(copyingKey: key, value: v)
                                    if batch.isFull { try w.append(&batch, to: table) }
                                } else {
                                    batch.add(key: key, value: v)
                                    // Keys must stay valid until the batch is written: write at once.
                                    try w.append(&batch, to: table)
                                }
                            }
                        }
                        model[k] = value
                    }
                    try w.append(&batch, to: table)
                }
                try store.read { txn in
                    var stored: [[UInt8]: [UInt8]] = [:]
                    var order: [[UInt8]] = []
                    try txn.withCursor(table) { c in
                        try c.forEach { k, v in stored[Array(k)] = Array(v); order.append(Array(k)); return true }
                    }
                    #expect(stored == model, "round \(round)")
                    #expect(order == order.sorted { $0.lexicographicallyPrecedes($1) })
                }
            }
        }
    }

    @Test("A batch of appends holding many keys at once")
    func appendBatchOfManyKeys() throws {
        try DeferredPutsTests.withStore("append-many") { store in
            let table = try store.write { w in try w.createTable("t") }
            try store.write { w in _ = try w.put(table, key: Array("m".utf8), value: [1]) }
            // Keys "a…" come before the existing "m": each is put as usual, the rest appended.
            let keys = (0..<5_000).map { Array(($0 < 100 ? "a\(1_000 + $0)" : "z\(10_000 + $0)").utf8) }
            let flat = keys.flatMap { $0 }
            try store.write { w in
                try flat.withUnsafeBytes { all in
                    var batch = StorageAppendBatch(capacity: 1_024)
                    var at = 0
                    for k in keys {
                        batch.add(key: UnsafeRawBufferPointer(rebasing: all[at..<(at + k.count)]), value: UnsafeRawBufferPointer(start: nil, count: 0))
                        at += k.count
                        if batch.isFull { try w.append(&batch, to: table) }
                    }
                    try w.append(&batch, to: table)
                }
            }
            try store.read { txn in
                #expect(try txn.count(table) == 5_001)
                var order: [[UInt8]] = []
                try txn.withCursor(table) { c in try c.forEach { k, _ in order.append(Array(k)); return true } }
                #expect(order == (keys + [Array("m".utf8)]).sorted { $0.lexicographicallyPrecedes($1) })
            }
        }
    }

    @Test("An index built on two threads equals one built while the batch's own saves are read by the writer")
    func indexBuiltOnTwoThreadsEqualsTheSerialOne() throws {
        let parallel = try Database.temporary()
        let serial = try Database.temporary()
        defer { try? parallel.close(); try? serial.close() }
        var r = SplitMix64(seed: 31)
        let count = PartitionedScan.minimumDocuments + 500
        let docs: [(id: String, json: String)] = (0..<count).map { i in
            let tags = (0..<r.int(5)).map { _ in "\"t\(r.int(50))\"" }.joined(separator: ",")
            let city = r.int(10) == 0 ? "null" : "\"c\(r.int(300))\""
            let pad = r.int(50) == 0 ? String(repeating: "p", count: 2_500) : ""
            let text = (0..<r.int(12)).map { _ in JSONBatchSaveTests.words[r.int(JSONBatchSaveTests.words.count)] }.joined(separator: " ")
            return (["a_", "h_", "h_", "l_"][i % 4] + "\(r.int(1_000_000))",
                    #"{"city": \#(city), "n": \#(r.int(9)), "tags": [\#(tags)], "text": "\#(text)", "pad": "\#(pad)"}"#)
        }
        for db in [parallel, serial] { _ = try db.defaultCollection().save(jsonDocuments: docs) }
        let configs: [(String, any IndexConfiguration)] = [
            ("byCity", ValueIndexConfiguration(["city", "n"])),
            ("cheap", ValueIndexConfiguration(["city"], where: "n < 3")),
            ("byTag", ArrayIndexConfiguration(path: "tags")),
            ("text", FullTextIndexConfiguration(["text"], language: "en")),
        ]
        // Created on its own: the document table is unchanged, read on two threads.
        for (name, config) in configs { try parallel.defaultCollection().createIndex(withName: name, config: config) }
        // Created in a batch after a save (then undone): the writer reads it alone.
        try serial.inBatch {
            let c = try serial.defaultCollection()
            try c.save(id: "zz-extra", json: #"{"city": "c1"}"#)
            try c.purge(id: "zz-extra")
            for (name, config) in configs { try c.createIndex(withName: name, config: config) }
        }
        let a = try FullTextPreparationTests.indexTables(parallel, parallel.defaultCollection())
        let b = try FullTextPreparationTests.indexTables(serial, serial.defaultCollection())
        #expect(a.keys.sorted() == ["byCity", "byTag", "cheap", "text"])
        for name in a.keys.sorted() {
            #expect(a[name]!.count > 100, "\(name)")
            #expect(a[name] == b[name], "\(name)")
        }
        #expect(try parallel.performMaintenance(.integrityCheck).isOK)
    }
}
