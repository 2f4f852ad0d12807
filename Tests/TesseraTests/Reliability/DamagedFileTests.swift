import Testing
import Foundation
@testable import Tessera

/// Damaged files are reported, never read past their end: the header check on open
/// (`DataFileCheck`), and every command of the tool run in a child process on truncated and
/// byte-flipped copies — it must exit with a status, never die of a signal.
@Suite("Reliability: damaged files", .serialized)
struct DamagedFileTests {
    /// (last page + 1) × page size of the newest meta page, and the file's size.
    static func expectedAndActualSize(_ dir: String) throws -> (Int, Int) {
        let data = try Data(contentsOf: URL(fileURLWithPath: dir + "/data.mdb"))
        func u64(_ o: Int) -> UInt64 { data[o..<o + 8].enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * $1.offset) } }
        func u32(_ o: Int) -> Int { Int(data[o..<o + 4].enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * $1.offset) }) }
        let pageSize = u32(16 + 24)
        let metas = [0, pageSize].map { (txn: u64($0 + 16 + 128), last: u64($0 + 16 + 120)) }
        let newest = metas.max { $0.txn < $1.txn }!
        return ((Int(newest.last) + 1) * pageSize, data.count)
    }

    /// A transaction that allocates pages and frees them again before it commits leaves LMDB
    /// pages it never writes ("loose" pages): the file may then end before the last page the
    /// meta page counts. Such a database must still open.
    @Test func pagesFreedInTheirOwnTransactionDoNotLookLikeTruncation() throws {
        let dir = ScratchDirectory("loose")
        defer { dir.remove() }
        var shortSeen = 0
        var rng = SplitMix64(seed: 7)
        for round in 0..<12 {
            let db = try Database(path: dir.path)
            let c = try db.defaultCollection()
            let n = Int.random(in: 10...600, using: &rng)
            let big = Int.random(in: 0...3, using: &rng)
            try db.inBatch {
                for i in 0..<n {
                    let size = big == 0 ? Int.random(in: 5000...40_000, using: &rng) : Int.random(in: 10...900, using: &rng)
                    try c.save(id: "k\(round)-\(i)", properties: ["pad": .string(String(repeating: "x", count: size))])
                }
                // Walking the collection writes the held-back documents out (DeferredPuts), so
                // the purges below free pages this transaction allocated; so does counting the
                // second pieces of the large ones (their tails are on overflow pages).
                _ = try c.documentIDs(limit: 1)
                let tails = try c.currentStore().tails
                _ = try db.write { try $0.txn.count(tails) }
                for i in 0..<n where Int.random(in: 0...9, using: &rng) != 0 { try c.purge(id: "k\(round)-\(i)") }
            }
            if round % 3 == 0 {
                for i in 0..<n where Int.random(in: 0...1, using: &rng) == 0 { try? c.purge(id: "k\(round)-\(i)") }
            }
            try db.close()
            let (expected, actual) = try Self.expectedAndActualSize(dir.path)
            if actual < expected { shortSeen += 1 }
            let again = try Database(path: dir.path)
            #expect(try again.performMaintenance(.integrityCheck).isOK)
            try again.close()
        }
        // The situation arises (with this seed, in most rounds), so the check above was exercised.
        #expect(shortSeen > 0)
    }

    // MARK: - The header check, in this process (it runs before LMDB maps anything)

    func expectCorrupt(_ path: String, mentioning words: [String], sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        do {
            let db = try Database(path: path)
            try? db.close()
            Issue.record("'\(path)' opened", sourceLocation: sourceLocation)
        } catch let e as DatabaseError {
            #expect(e.code == .corrupt, "\(e)", sourceLocation: sourceLocation)
            for w in words { #expect(e.message.contains(w), "\(e.message)", sourceLocation: sourceLocation) }
        } catch {
            Issue.record("untyped error \(error)", sourceLocation: sourceLocation)
        }
    }

    /// A small database: 300 documents in `_default`, a value index and a full-text index.
    static func makeSample(_ path: String) throws {
        let db = try Database(path: path)
        let c = try db.defaultCollection()
        var rng = SplitMix64(seed: 42)
        try db.inBatch {
            for i in 0..<300 {
                let words = (0..<6).map { _ in ["amber", "birch", "cedar", "dune", "elm", "fern"][Int.random(in: 0..<6, using: &rng)] }
                var properties: [String: Value] = ["author": .string("a\(i % 17)"), "n": .int(Int64(i)), "text": .string(words.joined(separator: " "))]
                if i == 7 { properties["publisher"] = "Lakeside Press" }
                try c.save(id: "d\(i)", properties: properties)
            }
        }
        try c.createIndex(withName: "byAuthor", config: ValueIndexConfiguration(["author"]))
        try c.createIndex(withName: "ft", config: FullTextIndexConfiguration(["text"]))
        try db.close()
    }

    /// A scratch directory holding the sample database, the path of its data file and its bytes.
    static func sample(_ label: String) throws -> (dir: ScratchDirectory, file: String, bytes: Data) {
        let dir = ScratchDirectory(label)
        try makeSample(dir.path)
        let file = dir.path + "/data.mdb"
        return (dir, file, try Data(contentsOf: URL(fileURLWithPath: file)))
    }

    static func copy(_ from: String, to: String) throws {
        try? FileManager.default.removeItem(atPath: to)
        try FileManager.default.createDirectory(atPath: to, withIntermediateDirectories: false)
        for f in ["data.mdb", "lock.mdb"] { try FileManager.default.copyItem(atPath: from + "/" + f, toPath: to + "/" + f) }
    }

    /// `truncate -s 0 data.mdb`: damage, not a new empty database — nothing is written.
    @Test func aZeroLengthDataFileIsDamageNotANewDatabase() throws {
        let dir = ScratchDirectory("zero")
        defer { dir.remove() }
        try Self.makeSample(dir.path)
        truncate(dir.path + "/data.mdb", 0)
        expectCorrupt(dir.path, mentioning: ["empty", "0 bytes"])
        var config = DatabaseConfiguration()
        config.readOnly = true
        #expect(throws: DatabaseError.self) { try Database(path: dir.path, configuration: config) }
        #expect(try FileManager.default.attributesOfItem(atPath: dir.path + "/data.mdb")[.size] as? Int == 0)
    }

    @Test func aTruncatedFileSaysExpectedAndActualSizes() throws {
        let dir = ScratchDirectory("truncated")
        defer { dir.remove() }
        try Self.makeSample(dir.path)
        let (expected, actual) = try Self.expectedAndActualSize(dir.path)
        #expect(actual >= expected)
        truncate(dir.path + "/data.mdb", off_t(expected - 4096))
        expectCorrupt(dir.path, mentioning: ["truncated", "at least \(expected) bytes", "it is \(expected - 4096) bytes"])
        truncate(dir.path + "/data.mdb", 8192)
        expectCorrupt(dir.path, mentioning: ["truncated", "it is 8192 bytes"])
        truncate(dir.path + "/data.mdb", 100)
        expectCorrupt(dir.path, mentioning: ["truncated", "100 bytes"])
    }

    /// A damaged meta page (LMDB's file header) is damage, not "not a database" — even when
    /// both are damaged, since the pages behind them are LMDB's.
    @Test func aDamagedHeaderIsReportedAsDamaged() throws {
        let (dir, file, original) = try Self.sample("header")
        defer { dir.remove() }
        var bytes = original
        bytes[16] ^= 0x40  // meta page 0's magic
        try bytes.write(to: URL(fileURLWithPath: file))
        expectCorrupt(dir.path, mentioning: ["meta page 0", "magic"])
        bytes[4096 + 16] ^= 0x40  // and meta page 1's
        try bytes.write(to: URL(fileURLWithPath: file))
        expectCorrupt(dir.path, mentioning: ["header", "damaged"])
        bytes = original
        bytes[4096 + 16 + 120] = 0xFF  // page 1's last page number
        bytes[4096 + 16 + 127] = 0x7F
        try bytes.write(to: URL(fileURLWithPath: file))
        expectCorrupt(dir.path, mentioning: ["meta page 1"])
    }

    /// A flipped byte in a stored property name (`publisher` → `publishe"`) changes no
    /// structure: the integrity check finds it through the document's checksum (its revision
    /// digest, FNV-1a of the generation and the body).
    @Test func aFlippedByteInAPropertyNameFailsTheCheck() throws {
        let (dir, file, original) = try Self.sample("flip-name")
        defer { dir.remove() }
        var bytes = original
        let name = Data("publisher".utf8)
        var from = bytes.startIndex
        var flipped = 0
        while let at = bytes.range(of: name, in: from..<bytes.endIndex) {
            bytes[at.lowerBound + 8] = UInt8(ascii: "\"")
            from = at.upperBound
            flipped += 1
        }
        #expect(flipped >= 1)
        try bytes.write(to: URL(fileURLWithPath: file))
        let db = try Database(path: dir.path)
        defer { try? db.close() }
        let report = try db.performMaintenance(.integrityCheck)
        #expect(!report.isOK)
        #expect(report.problems.contains { $0.contains("'d7'") && $0.contains("checksum") }, "\(report)")
        // Reading the document verifies its checksum too: an error, not a different body.
        do {
            _ = try db.defaultCollection().document(id: "d7")
            Issue.record("the damaged document was read")
        } catch let e as DatabaseError {
            #expect(e.code == .corrupt && e.message.contains("'d7'") && e.message.contains("checksum"), "\(e)")
        }
        #expect(try db.defaultCollection().document(id: "d8")?.int(forKey: "n") == 8)
    }

    /// The catalogue (collections and index definitions) carries a checksum: a flipped byte in
    /// an index name is damage reported on open, not an index that silently disappears.
    @Test func aFlippedByteInTheCatalogueIsReportedOnOpen() throws {
        let (dir, file, original) = try Self.sample("flip-catalogue")
        defer { dir.remove() }
        var bytes = original
        let name = Data(#""name":"byAuthor""#.utf8)
        var from = bytes.startIndex
        var flipped = 0
        while let at = bytes.range(of: name, in: from..<bytes.endIndex) {
            bytes[at.lowerBound + 1] = UInt8(ascii: "m")   // "name" → "mame": the definition has no name
            from = at.upperBound
            flipped += 1
        }
        #expect(flipped >= 1)
        try bytes.write(to: URL(fileURLWithPath: file))
        expectCorrupt(dir.path, mentioning: ["catalogue", "checksum"])
    }

    /// A database written before catalogue checksums (no `catalog-checksum` record) opens as
    /// before, and gets one with its next catalogue change; a damaged one without a checksum is
    /// still an error rather than an index that disappears.
    @Test func aCatalogueWithoutChecksumOpensAndGetsOne() throws {
        let dir = ScratchDirectory("catalogue-old")
        defer { dir.remove() }
        try Self.makeSample(dir.path)
        do {
            let db = try Database(path: dir.path)
            try db.write { ctx in _ = try ctx.txn.delete(db.metaTable, key: Array(Catalog.checksumKey.utf8)) }
            try db.close()
        }
        do {
            let db = try Database(path: dir.path)
            #expect(try db.defaultCollection().indexes().sorted() == ["byAuthor", "ft"])
            #expect(try db.read { try $0.get(db.metaTable, key: Catalog.checksumKey) } == nil)
            try db.defaultCollection().createIndex(withName: "byN", config: ValueIndexConfiguration(["n"]))
            #expect(try db.read { try $0.get(db.metaTable, key: Catalog.checksumKey)?.count } == 8)
            try db.close()
        }
        let db = try Database(path: dir.path)
        defer { try? db.close() }
        #expect(try db.defaultCollection().indexes().sorted() == ["byAuthor", "byN", "ft"])
    }

    // MARK: - Every command in a child process: an exit status, never a signal

    static let commands: [[String]] = [
        ["check"], ["ls"], ["query", "SELECT COUNT(*) AS n FROM _ WHERE author = 'a3' OR match(ft, 'cedar')"],
        // Documents fetched in batches (their B-tree walks read the pages directly, `GetBatch`).
        ["query", "SELECT meta().id, n, text FROM _ WHERE author >= 'a1' ORDER BY author LIMIT 60"],
        ["query", "SELECT n FROM _ WHERE meta().id IN ['d1', 'd5', 'd9', 'd100', 'd200', 'd299', 'nope']"],
        ["put", "x", #"{"author":"a3","text":"cedar"}"#],
    ]

    /// Runs every command on `db`; records any that died of a signal or hung.
    static func runAll(on db: String, label: String, tessera: String) -> [String] {
        var bad: [String] = []
        for c in commands {
            let r = ChildProcess.run(tessera, [c[0], db] + c.dropFirst(), timeout: 20)
            if !r.exited { bad.append("\(label) \(c[0]): \(r)") }
        }
        return bad
    }

    /// The pages of LMDB table `name` in the data file `bytes` (newest meta page, the main
    /// table's record of `name`, then its tree): branch pages and leaf pages.
    static func treePages(_ bytes: Data, name: String) -> (branches: [Int], leaves: [Int]) {
        let b = [UInt8](bytes)
        func u16(_ o: Int) -> Int { Int(b[o]) | Int(b[o + 1]) << 8 }
        func u64(_ o: Int) -> Int { (0..<8).reduce(0) { $0 | Int(b[o + $1]) << (8 * $1) } }
        let psize = u16(16 + 24) | u16(16 + 26) << 16
        let meta = [0, psize].max { u64($0 + 16 + 128) < u64($1 + 16 + 128) }!
        var branches: [Int] = [], leaves: [Int] = []
        func walk(_ pgno: Int, _ body: (Int, Int, Int) -> Void) {
            let p = pgno * psize
            let flags = u16(p + 10), lower = u16(p + 12)
            if flags & 1 != 0 { branches.append(pgno) } else { leaves.append(pgno) }
            for i in 0..<(lower - 16) / 2 {
                let node = p + u16(p + 16 + 2 * i)
                if flags & 1 != 0 { walk(u16(node) | u16(node + 2) << 16, body) } else { body(p, node, u16(node + 6)) }
            }
        }
        var root = -1
        walk(u64(meta + 16 + 72 + 40)) { _, node, keySize in
            if String(decoding: b[(node + 8)..<(node + 8 + keySize)], as: UTF8.self) == name { root = u64(node + 8 + keySize + 40) }
        }
        branches = []
        leaves = []
        if root >= 0 { walk(root) { _, _, _ in } }
        return (branches, leaves)
    }

    /// A damaged page on the path of a write — a leaf whose free-space bounds are garbage, a
    /// branch whose child is outside the file — is reported before LMDB copies it (a damaged
    /// leaf once misled LMDB's own descent, so that the leaf check validated another page and
    /// the write ran past LMDB's copy into the heap: `malloc(): invalid size`). The writes
    /// replace documents under another author: each deletes the old key from the index's main
    /// table (a new key goes to its recent entries, `RecentEntries.swift`, whose pages are whole).
    @Test func aDamagedPageOnAWritesPathIsReportedNotWritten() throws {
        let tessera = try #require(ChildProcess.tessera)
        let dir = ScratchDirectory("path")
        defer { dir.remove() }
        let base = dir.child("base")
        try Self.makeSample(base)
        let original = try Data(contentsOf: URL(fileURLWithPath: base + "/data.mdb"))
        let (branches, leaves) = Self.treePages(original, name: "idx:_default._default:byAuthor")
        #expect(!branches.isEmpty && leaves.count > 1)
        let psize = 4096
        // Every leaf of the index with the bounds of a flipped header (lower 33028, upper 1670);
        // then, separately, every branch with a child past the end of the file.
        for damage in ["leaves", "branches"] {
            var bytes = original
            if damage == "leaves" {
                for pg in leaves { bytes[pg * psize + 12] = 0x04; bytes[pg * psize + 13] = 0x81; bytes[pg * psize + 14] = 0x86; bytes[pg * psize + 15] = 0x06 }
            } else {
                for pg in branches {
                    let p = pg * psize
                    let last = Int(bytes[p + 12]) | Int(bytes[p + 13]) << 8
                    let node = p + (Int(bytes[p + last - 2]) | Int(bytes[p + last - 1]) << 8)
                    bytes[node + 2] = 0x7F  // hi 16 bits of the last child's page number
                }
            }
            let copy = dir.child(damage)
            try Self.copy(base, to: copy)
            try bytes.write(to: URL(fileURLWithPath: copy + "/data.mdb"))
            for (id, author) in [("d0", "a3"), ("d150", "a9"), ("d299", "zzz"), ("d77", "a0")] {
                let r = ChildProcess.run(tessera, ["put", copy, id, #"{"author":"\#(author)","text":"cedar"}"#], timeout: 20)
                #expect(r.exited, "\(damage), author \(author): \(r)")
                #expect(r.status != 0 && r.err.contains("damaged"), "\(damage), author \(author): \(r)")
            }
        }
    }

    /// Every truncation length from 0 to the full file in 4 KB steps: `check`, `ls`, `query`
    /// and `put` exit with a status (and a shortened file is reported as truncated or empty).
    @Test func everyTruncationLengthInChildProcesses() throws {
        let tessera = try #require(ChildProcess.tessera)
        let dir = ScratchDirectory("truncations")
        defer { dir.remove() }
        let base = dir.child("base")
        try Self.makeSample(base)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: base + "/data.mdb")[.size] as? Int)
        var bad: [String] = []
        for length in stride(from: 0, through: size, by: 4096) {
            let copy = dir.child("t")
            try Self.copy(base, to: copy)
            truncate(copy + "/data.mdb", off_t(length))
            bad += Self.runAll(on: copy, label: "length \(length)", tessera: tessera)
            if length < size {
                let check = ChildProcess.run(tessera, ["check", copy])
                #expect(check.status == 0 || check.err.contains("truncated") || check.err.contains("empty") || check.err.contains("damaged"),
                        "length \(length): \(check)")
            }
        }
        #expect(bad.isEmpty, "\(bad.joined(separator: "\n"))")
    }

    /// Seeded random byte flips (`TESSERA_FLIP_COPIES` copies, default 40, of 50 flips each;
    /// `TESSERA_FLIP_SEED` to vary): `check`, `ls`, `query` and `put` exit with a status.
    @Test func seededByteFlipsInChildProcesses() throws {
        let tessera = try #require(ChildProcess.tessera)
        let env = ProcessInfo.processInfo.environment
        let copies = Int(env["TESSERA_FLIP_COPIES"] ?? "") ?? 40
        let seed = UInt64(env["TESSERA_FLIP_SEED"] ?? "") ?? 2026
        let dir = ScratchDirectory("flips")
        defer { dir.remove() }
        let base = dir.child("base")
        try Self.makeSample(base)
        let original = try Data(contentsOf: URL(fileURLWithPath: base + "/data.mdb"))
        var rng = SplitMix64(seed: seed)
        var bad: [String] = []
        var reported = 0
        for n in 0..<copies {
            var bytes = original
            for _ in 0..<50 {
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                bytes[at] ^= 1 << UInt8.random(in: 0..<8, using: &rng)
            }
            let copy = dir.child("f")
            try Self.copy(base, to: copy)
            try bytes.write(to: URL(fileURLWithPath: copy + "/data.mdb"))
            bad += Self.runAll(on: copy, label: "seed \(seed) copy \(n)", tessera: tessera)
            if ChildProcess.run(tessera, ["check", copy]).status != 0 { reported += 1 }
        }
        #expect(bad.isEmpty, "\(bad.count) commands died of a signal or hung:\n\(bad.joined(separator: "\n"))")
        // Most copies have a flip in a page in use: `check` reports them.
        #expect(reported > copies / 2, "check reported damage in only \(reported) of \(copies) copies")
    }
}
