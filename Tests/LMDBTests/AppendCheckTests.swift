import Testing
@testable import LMDB
#if canImport(Glibc)
import Glibc
#endif

/// Appends check the leaf page they land on once per table and transaction: the first append
/// checks the table's last leaf (then LMDB copies it), later ones land on this transaction's
/// own pages. Other writes are checked every time.
@Suite("LMDB: leaf checks of appends")
struct AppendCheckTests {
    @Test func onlyTheFirstAppendToATableInATransactionIsChecked() throws {
        let dir = EnvironmentTests().tempDir()
        defer { _ = system("rm -rf '\(dir)'") }
        let env = try Environment(path: dir)
        defer { env.close() }
        let t = try #require(try env.openTable("t"))
        let u = try #require(try env.openTable("u"))
        func key(_ i: Int) -> [UInt8] {
            let digits = String(i)
            return Array(("k" + String(repeating: "0", count: 6 - digits.count) + digits).utf8)
        }
        for round in 0..<3 {
            try env.write { txn in
                #expect(txn.appendedTables.isEmpty)
                try txn.put(u, key: key(round), value: [1])
                #expect(txn.appendedTables.isEmpty, "a plain put is not an append")
                for i in (round * 1_000)..<((round + 1) * 1_000) {
                    try txn.put(t, key: key(i), value: [UInt8](repeating: UInt8(i & 0xFF), count: 40), flags: .append)
                }
                #expect(txn.appendedTables == [t.dbi])
            }
        }
        try env.read { txn in
            #expect(try txn.count(t) == 3_000)
            var previous: [UInt8] = []
            var n = 0
            try txn.withCursor(t) { c in
                try c.forEach { k, v in
                    #expect(Array(k) == key(n) && v.count == 40 && v[0] == UInt8(n & 0xFF))
                    #expect(previous.lexicographicallyPrecedes(Array(k)))
                    previous = Array(k)
                    n += 1
                    return true
                }
            }
            #expect(n == 3_000)
        }
    }
}
