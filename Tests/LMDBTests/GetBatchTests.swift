import Testing
import CLMDB
import CLMDBGuard
@testable import LMDB
#if canImport(Glibc)
import Glibc
#endif

/// Batched lookups (`Transaction.get(_:from:)`): in a read snapshot the keys walk the table's
/// B-tree together in C (`tessera_mdb_get_many`, which reads LMDB's page layout itself); what
/// that walk finds must be exactly what `mdb_get` finds, and anything it does not find is
/// asked of LMDB.
@Suite("LMDB: batched lookups")
struct GetBatchTests {
    /// A seeded generator (SplitMix64), so that a failure can be replayed.
    struct Random: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    /// Keys of 1–40 bytes over a small alphabet (shared prefixes, zero bytes, prefixes of each
    /// other), values of 0–300 bytes, one in twenty of 5,000 (overflow pages).
    static func key(_ r: inout Random) -> [UInt8] {
        let prefixes: [[UInt8]] = [[], Array("hotel_".utf8), Array("airport_".utf8), [0, 0, 1]]
        var k = prefixes[r.below(prefixes.count)]
        for _ in 0..<(1 + r.below(16)) { k.append([0, 1, 0x30, 0x31, 0x7F, 0xFF][r.below(6)]) }
        return Array(k.prefix(40))
    }

    static func value(_ r: inout Random) -> [UInt8] {
        let n = r.below(20) == 0 ? 5_000 : r.below(300)
        let b = UInt8(truncatingIfNeeded: r.next())
        return (0..<n).map { UInt8(truncatingIfNeeded: $0) &+ b }
    }

    /// Random keys of `env`'s table `t` put in several commits, some deleted; returns the keys
    /// stored.
    static func fill(_ env: Environment, _ t: Table, count: Int, seed: UInt64) throws -> Set<[UInt8]> {
        var r = Random(state: seed)
        var stored = Set<[UInt8]>()
        for _ in 0..<4 {
            try env.write { txn in
                for _ in 0..<(count / 4) {
                    let k = key(&r)
                    try txn.put(t, key: k, value: value(&r))
                    stored.insert(k)
                }
                // Delete a few keys again (pages merge and split).
                for k in stored.shuffled(using: &r).prefix(count / 40) {
                    _ = try txn.delete(t, key: k)
                    stored.remove(k)
                }
            }
        }
        return stored
    }

    @Test(arguments: [1, 40, 800, 12_000])
    func batchesFindWhatGetFinds(size: Int) throws {
        let dir = EnvironmentTests().tempDir()
        defer { _ = system("rm -rf '\(dir)'") }
        let env = try Environment(path: dir)
        defer { env.close() }
        let t = try #require(try env.openTable("t"))
        let stored = Array(try Self.fill(env, t, count: size, seed: UInt64(size))).sorted { $0.lexicographicallyPrecedes($1) }
        var r = Random(state: 7 &* UInt64(size))
        try env.read { txn in
            // A first lookup lets the window find the map's address.
            if let k = stored.first { _ = try txn.get(t, key: k) }
            let tree = try txn.tree(of: t)
            if !stored.isEmpty { #expect(tree != nil, "a table with entries is walked in a read snapshot") }
            let batch = GetBatch()
            for _ in 0..<200 {
                // Stored keys, and keys next to them that are not stored.
                var keys: [[UInt8]] = []
                for _ in 0..<(2 + r.below(GetBatch.maxCount - 1)) {
                    let k = stored.isEmpty ? Self.key(&r) : stored[r.below(stored.count)]
                    switch r.below(4) {
                    case 0: keys.append(Self.key(&r))
                    case 1: keys.append(k + [0])
                    case 2: keys.append(Array(k.dropLast()).isEmpty ? k : Array(k.dropLast()))
                    default: keys.append(k)
                    }
                }
                try withExtendedLifetime(keys) {
                    batch.removeAll()
                    for k in keys { k.withUnsafeBytes { batch.append(key: $0) } }
                    // The keys' bytes stay where they are while `keys` lives (arrays are not moved).
                    try txn.get(batch, from: t)
                    for i in 0..<batch.count {
                        let expected = try txn.get(t, key: batch.key(at: i))
                        let got = batch.value(at: i)
                        #expect(got?.baseAddress == expected?.baseAddress && got?.count == expected?.count,
                                "key \(Array(batch.key(at: i))) of a table of \(stored.count)")
                    }
                    // The walk by itself: every stored key found by it, none that is absent.
                    if var tr = tree {
                        let found = UnsafeMutablePointer<UInt8>.allocate(capacity: batch.count)
                        let values = UnsafeMutablePointer<MDB_val>.allocate(capacity: batch.count)
                        defer { found.deallocate(); values.deallocate() }
                        #expect(tessera_mdb_get_many(&tr, batch.count, batch.keys, values, found) == 0)
                        for i in 0..<batch.count {
                            let expected = try txn.get(t, key: batch.key(at: i))
                            #expect((found[i] == 1) == (expected != nil))
                            if found[i] == 1 { #expect(values[i].mv_data == UnsafeMutableRawPointer(mutating: expected?.baseAddress)) }
                        }
                    }
                }
            }
        }
    }

    @Test func aLaterSnapshotWalksTheNewTreeAndAWriteTransactionSeesItsOwnPuts() throws {
        let dir = EnvironmentTests().tempDir()
        defer { _ = system("rm -rf '\(dir)'") }
        let env = try Environment(path: dir)
        defer { env.close() }
        let t = try #require(try env.openTable("t"))
        func k(_ i: Int) -> [UInt8] { Array("doc\(i)".utf8) }
        try env.write { txn in for i in 0..<5_000 { try txn.put(t, key: k(i), value: [UInt8](repeating: 1, count: 200)) } }
        let keys = (0..<40).map { k($0 * 97) }
        let batch = GetBatch()
        func lookUp(_ txn: Transaction) throws -> [UInt8?] {
            batch.removeAll()
            return try withExtendedLifetime(keys) {
                for key in keys { key.withUnsafeBytes { batch.append(key: $0) } }
                try txn.get(batch, from: t)
                return (0..<batch.count).map { batch.value(at: $0)?.first }
            }
        }
        try env.read { txn in
            _ = try txn.get(t, key: k(0))
            #expect(try lookUp(txn) == Array(repeating: 1, count: 40))
        }
        // Rewrite some, delete others: the next snapshot has another root.
        try env.write { txn in
            for i in stride(from: 0, to: 40, by: 2) { try txn.put(t, key: keys[i], value: [UInt8](repeating: 2, count: 3_000)) }
            for i in stride(from: 1, to: 40, by: 4) { _ = try txn.delete(t, key: keys[i]) }
            // Inside the write transaction: its own puts and deletes (no walk of the file's pages).
            #expect(try txn.tree(of: t) == nil)
            let got = try lookUp(txn)
            for i in 0..<40 { #expect(got[i] == (i % 2 == 0 ? 2 : i % 4 == 1 ? nil : 1)) }
        }
        try env.read { txn in
            let got = try lookUp(txn)
            for i in 0..<40 { #expect(got[i] == (i % 2 == 0 ? 2 : i % 4 == 1 ? nil : 1)) }
        }
    }
}
