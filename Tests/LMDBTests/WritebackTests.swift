import Testing
import CLMDBGuard
@testable import LMDB
#if canImport(Glibc)
import Glibc
#endif

/// A large commit starts the file's writeback while it runs (`tessera_writeback_start`); the
/// transaction counts the bytes it puts to decide (`Transaction.writtenBytes`).
@Suite("LMDB: writeback during large commits")
struct WritebackTests {
    @Test func writtenBytesCountEveryKindOfPut() throws {
        let dir = EnvironmentTests().tempDir()
        defer { _ = system("rm -rf '\(dir)'") }
        let env = try Environment(path: dir)
        defer { env.close() }
        let t = try #require(try env.openTable("t"))
        let u = try #require(try env.openTable("u"))
        try env.write { txn in
            #expect(txn.writtenBytes == 0)
            try txn.put(t, key: [1, 2], value: [UInt8](repeating: 0, count: 100))
            #expect(txn.writtenBytes == 102)
            try [UInt8]([3]).withUnsafeBytes { k in
                try txn.putReserved(t, key: k, size: 50) { $0.initializeMemory(as: UInt8.self, repeating: 1) }
            }
            #expect(txn.writtenBytes == 153)
            var batch = AppendBatch()
            let keys: [[UInt8]] = [[9, 1], [9, 2]]
            try keys[0].withUnsafeBytes { k0 in
                try keys[1].withUnsafeBytes { k1 in
                    try [UInt8](repeating: 2, count: 10).withUnsafeBytes { v in
                        batch.add(key: k0, value: v)
                        batch.add(key: k1, value: v)
                        try txn.append(&batch, to: t)
                        var writes = OrderedWrites()
                        writes.put(key: k0, value: v)
                        writes.delete(key: k1)
                        try txn.write(&writes, to: u)
                    }
                }
            }
            #expect(txn.writtenBytes == 153 + 24 + 12)
        }
    }

    @Test func aLargeCommitWithWritebackKeepsEveryEntry() throws {
        let dir = EnvironmentTests().tempDir()
        defer { _ = system("rm -rf '\(dir)'") }
        func key(_ i: Int) -> [UInt8] { Array(String(format: "k%07d", i).utf8) }
        do {
            let env = try Environment(path: dir)
            let t = try #require(try env.openTable("t"))
            try env.write { txn in
                for i in 0..<20_000 { try txn.put(t, key: key(i), value: [UInt8](repeating: UInt8(i & 0xFF), count: 700)) }
                #expect(txn.writtenBytes >= Environment.writebackThreshold)
            }
            env.close()
        }
        let env = try Environment(path: dir)
        defer { env.close() }
        let t = try #require(try env.openTable("t"))
        try env.read { txn in
            #expect(try txn.count(t) == 20_000)
            for i in stride(from: 0, to: 20_000, by: 997) {
                let v = try txn.get(t, key: key(i)).map { Array($0) }
                #expect(v == [UInt8](repeating: UInt8(i & 0xFF), count: 700))
            }
        }
        // The helper thread starts and stops on a real file (and does nothing harmful on a
        // descriptor that is not one).
        let fd = open(dir + "/data.mdb", O_RDONLY)
        defer { close(fd) }
        let w = tessera_writeback_start(fd)
        #if os(Linux)
        #expect(w != nil)
        #endif
        usleep(3_000)
        tessera_writeback_stop(w)
        tessera_writeback_stop(tessera_writeback_start(-1))
    }
}
