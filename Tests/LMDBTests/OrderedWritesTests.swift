import Foundation
import Testing
import CLMDBGuard
@testable import LMDB
#if canImport(Glibc)
import Glibc
#endif

/// Puts and deletes in key order through one cursor (`Transaction.write(_:to:)`,
/// `tessera_mdb_write_sorted`): the table must end exactly as with one `put` or `delete` per
/// entry, and every write's leaf page is checked against damage as a `put` checks it.
@Suite("LMDB: ordered writes through one cursor")
struct OrderedWritesTests {
    static func contents(_ env: Environment, _ t: Table) throws -> [[UInt8]: [UInt8]] {
        try env.read { txn in
            var all: [[UInt8]: [UInt8]] = [:]
            try txn.withCursor(t) { c in
                try c.forEach { k, v in all[Array(k)] = Array(v); return true }
            }
            return all
        }
    }

    @Test("Seeded puts and deletes (new, existing and absent keys, overflow values) end as with put and delete one by one",
          arguments: [1, 2, 3, 4] as [UInt64])
    func sameAsOneByOne(seed: UInt64) throws {
        let dir = EnvironmentTests().tempDir()
        defer { _ = system("rm -rf '\(dir)'") }
        let env = try Environment(path: dir)
        defer { env.close() }
        let one = try #require(try env.openTable("one"))
        let ordered = try #require(try env.openTable("ordered"))
        var r = GetBatchTests.Random(state: seed)
        var stored: [[UInt8]] = []
        // Both tables start alike: 0–6,000 random keys.
        let initial = (0..<r.below(6_000)).map { _ in (GetBatchTests.key(&r), GetBatchTests.value(&r)) }
        try env.write { txn in
            for (k, v) in initial {
                try txn.put(one, key: k, value: v)
                try txn.put(ordered, key: k, value: v)
            }
        }
        stored = Array(Set(initial.map(\.0)))
        for round in 0..<3 {
            // Unique keys in order: existing ones (replaced or deleted) and new or absent ones.
            var ops: [[UInt8]: [UInt8]?] = [:]
            for _ in 0..<(1 + r.below(3_000)) {
                let k = !stored.isEmpty && r.below(2) == 0 ? stored[r.below(stored.count)] : GetBatchTests.key(&r)
                ops[k] = r.below(3) == 0 ? .some(nil) : .some(GetBatchTests.value(&r))
            }
            // LMDB's order: bytes, then the shorter key first.
            let sorted = ops.keys.sorted { $0.lexicographicallyPrecedes($1) }
            try env.write { txn in
                var writes = OrderedWrites()
                for k in sorted {
                    if let v = ops[k]! {
                        try txn.put(one, key: k, value: v)
                    } else {
                        _ = try txn.delete(one, key: k)
                    }
                }
                // The writes reference these arrays' bytes until they are made.
                let keys = sorted.map { ContiguousArray($0) }
                let values = sorted.map { ContiguousArray(ops[$0]! ?? []) }
                try withPointers(keys, values) { keyPointers, valuePointers in
                    for (i, k) in sorted.enumerated() {
                        if ops[k]! != nil {
                            writes.put(key: keyPointers[i], value: valuePointers[i])
                        } else {
                            writes.delete(key: keyPointers[i])
                        }
                    }
                    try txn.write(&writes, to: ordered)
                }
                #expect(writes.count == 0)
            }
            let a = try Self.contents(env, one), b = try Self.contents(env, ordered)
            #expect(a == b, "seed \(seed), round \(round): \(a.count) against \(b.count) entries")
            stored = Array(a.keys)
        }
    }

    /// Calls `body` with stable pointers to every array's bytes.
    func withPointers(_ keys: [ContiguousArray<UInt8>], _ values: [ContiguousArray<UInt8>],
                      _ body: ([UnsafeRawBufferPointer], [UnsafeRawBufferPointer]) throws -> Void) throws {
        let k = keys.map { a -> UnsafeMutableRawBufferPointer in
            let p = UnsafeMutableRawBufferPointer.allocate(byteCount: max(a.count, 1), alignment: 1)
            a.withUnsafeBytes { if $0.count > 0 { p.copyMemory(from: $0) } }
            return UnsafeMutableRawBufferPointer(rebasing: p[..<a.count])
        }
        let v = values.map { a -> UnsafeMutableRawBufferPointer in
            let p = UnsafeMutableRawBufferPointer.allocate(byteCount: max(a.count, 1), alignment: 1)
            a.withUnsafeBytes { if $0.count > 0 { p.copyMemory(from: $0) } }
            return UnsafeMutableRawBufferPointer(rebasing: p[..<a.count])
        }
        defer {
            for p in k + v { UnsafeMutableRawBufferPointer(start: p.baseAddress, count: max(p.count, 1)).deallocate() }
        }
        try body(k.map { UnsafeRawBufferPointer($0) }, v.map { UnsafeRawBufferPointer($0) })
    }

    /// A leaf with garbage free-space bounds (a flipped header) past the first write's page:
    /// the ordered put or delete that lands on it is refused as damage, nothing crashes and
    /// nothing of the transaction is written (a delete of a key the damaged page hides too).
    @Test(arguments: ["put", "delete"])
    func aDamagedLeafOfALaterWriteIsReported(kind: String) throws {
        let dir = EnvironmentTests().tempDir()
        defer { _ = system("rm -rf '\(dir)'") }
        func key(_ i: Int) -> [UInt8] { Array(String(format: "k%06d", i).utf8) }
        var page = 0
        do {
            let env = try Environment(path: dir)
            let t = try #require(try env.openTable("t"))
            try env.write { txn in
                for i in 0..<3_000 { try txn.put(t, key: key(i), value: [UInt8](repeating: UInt8(i & 0xFF), count: 100)) }
            }
            try env.read { txn in
                let v = try #require(try txn.get(t, key: key(2_500)))
                let start = UnsafeRawPointer(bitPattern: UInt(bitPattern: v.baseAddress!) & ~UInt(4095))!
                page = Int(start.loadUnaligned(as: UInt64.self))
            }
            env.close()
        }
        #expect(page > 2)
        let fd = open(dir + "/data.mdb", O_RDWR)
        #expect(fd >= 0)
        var bounds: [UInt8] = [0x04, 0x81, 0x86, 0x06]  // lower 33028, upper 1670
        #expect(pwrite(fd, &bounds, 4, off_t(page * 4096 + 12)) == 4)
        close(fd)

        let env = try Environment(path: dir)
        defer { env.close() }
        let t = try #require(try env.openTable("t"))
        // A read first: the map's address is then known, and with it the file's pages.
        try env.read { txn in _ = try txn.get(t, key: key(10)) }
        var failure: LMDBError?
        do {
            try env.write { txn in
                var writes = OrderedWrites()
                let first = key(10), damaged = key(2_500), value: [UInt8] = [7, 7, 7]
                try first.withUnsafeBytes { f in
                    try damaged.withUnsafeBytes { d in
                        try value.withUnsafeBytes { v in
                            if kind == "put" {
                                writes.put(key: f, value: v)
                                writes.put(key: d, value: v)
                            } else {
                                writes.delete(key: f)
                                writes.delete(key: d)
                            }
                            try txn.write(&writes, to: t)
                        }
                    }
                }
            }
        } catch let e as LMDBError {
            failure = e
        }
        // Refused by the leaf check, or LMDB faulted reading the page while finding the key (a
        // guarded call: the transaction is aborted); either way reported as damage.
        #expect(failure?.meansDamage == true, "\(kind): \(String(describing: failure))")
        // Nothing of the refused transaction was written.
        try env.read { txn in
            let stored = try txn.get(t, key: key(10)).map { Array($0) }
            #expect(stored == [UInt8](repeating: 10, count: 100))
        }
    }
}
