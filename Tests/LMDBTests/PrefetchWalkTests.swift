import Testing
@testable import LMDB
#if canImport(Glibc)
import Glibc
#endif

/// Cursor walks that request each leaf page's entries when they reach it (`Cursor.prefetchPage`,
/// `tessera_prefetch_leaf`): the request reads the page's header and node offsets, and only for
/// pages inside the map. Whatever it reads, a walk must give every entry once, in order — in a
/// read snapshot (every page in the map) and in a write transaction whose changed pages are its
/// own copies outside the map.
@Suite("LMDB: walks that prefetch their pages")
struct PrefetchWalkTests {
    /// The entries of `t` by a cursor walk (`forEach`), keys and values copied.
    static func walk(_ txn: Transaction, _ t: Table) throws -> [([UInt8], [UInt8])] {
        try txn.withCursor(t) { c in
            var out: [([UInt8], [UInt8])] = []
            try c.forEach { k, v in
                out.append((Array(k), Array(v)))
                return true
            }
            return out
        }
    }

    @Test(arguments: [3, 700, 9_000])
    func walksGiveEveryEntryOnceInOrder(size: Int) throws {
        let dir = EnvironmentTests().tempDir()
        defer { _ = system("rm -rf '\(dir)'") }
        let env = try Environment(path: dir)
        defer { env.close() }
        let t = try #require(try env.openTable("t"))
        // Random keys, values of 0–300 bytes and some of 5,000 (overflow pages, whose address
        // is not a leaf's), over several commits with deletes.
        let stored = try GetBatchTests.fill(env, t, count: size, seed: UInt64(size) &+ 11)
        let sortedKeys = stored.sorted { $0.lexicographicallyPrecedes($1) }

        let read = try env.read { txn -> [([UInt8], [UInt8])] in
            // A first lookup lets the window find the map's address; a cursor opened after it
            // prefetches pages inside the map.
            if let k = sortedKeys.first { _ = try txn.get(t, key: k) }
            let c = try txn.openCursor(t)
            defer { c.closeCursor() }
            // (A table of a few entries may not let it find the address: nothing is prefetched.)
            if size >= 700 { #expect(c.mapLow != 0 && c.mapHigh > c.mapLow, "the read snapshot's walk knows the map") }
            let entries = try Self.walk(txn, t)
            for (k, v) in entries { #expect(try txn.get(t, key: k).map(Array.init) == v) }
            return entries
        }
        #expect(read.map(\.0) == sortedKeys)

        // A write transaction changes some entries (those pages become its copies), then walks.
        var expected = Dictionary(uniqueKeysWithValues: read)
        try env.write { txn in
            var r = GetBatchTests.Random(state: UInt64(size) &* 31)
            for k in sortedKeys.shuffled(using: &r).prefix(max(1, size / 10)) {
                let v = GetBatchTests.value(&r)
                try txn.put(t, key: k, value: v)
                expected[k] = v
            }
            for _ in 0..<max(1, size / 20) {
                let k = GetBatchTests.key(&r) + [0xFE]
                let v = GetBatchTests.value(&r)
                try txn.put(t, key: k, value: v)
                expected[k] = v
            }
            let entries = try Self.walk(txn, t)
            #expect(entries.map(\.0) == expected.keys.sorted { $0.lexicographicallyPrecedes($1) })
            for (k, v) in entries { #expect(expected[k] == v, "key \(k)") }
        }
    }
}
