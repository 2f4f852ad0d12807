import Testing
import Dispatch
import Synchronization
import LMDB
#if canImport(Glibc)
import Glibc
#endif

@Suite("LMDB wrapper")
struct EnvironmentTests {
    func tempDir() -> String {
        var t = Array("/tmp/lmdbtest-XXXXXX".utf8CString)
        _ = t.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        return String(cString: t.withUnsafeBufferPointer { $0.baseAddress! })
    }

    @Test func putGetCursorAndGrowth() throws {
        let dir = tempDir()
        var opts = Environment.Options()
        opts.initialMapSize = 64 << 10 // tiny: forces many growths
        let env = try Environment(path: dir, options: opts)
        defer { env.close() }
        let t = try #require(try env.openTable("t"))
        // 20,000 puts of 100 bytes ≈ 2 MB of data through a 64 KiB initial map.
        for batch in 0..<20 {
            try env.write { txn in
                for i in 0..<1000 {
                    let k = Array("k\(String(format: batch * 1000 + i))".utf8)
                    try txn.put(t, key: k, value: [UInt8](repeating: UInt8(i & 0xFF), count: 100))
                }
            }
        }
        #expect(env.currentMapSize > 64 << 10)
        try env.read { txn in
            #expect(try txn.count(t) == 20_000)
            #expect(try txn.get(t, key: Array("k00042".utf8))?.count == 100)
            #expect(try txn.get(t, key: Array("nope".utf8)) == nil)
            var n = 0
            try txn.withCursor(t) { c in
                try c.forEach(prefix: Array("k0001".utf8)) { _, _ in n += 1; return true }
            }
            #expect(n == 10)
            var range: [String] = []
            try txn.withCursor(t) { c in
                try c.forEach(from: Array("k00100".utf8), to: Array("k00103".utf8)) { k, _ in
                    range.append(String(decoding: k, as: UTF8.self)); return true
                }
            }
            #expect(range == ["k00100", "k00101", "k00102"])
        }
    }

    /// Ended read transactions wait in a pool, reset, and come back as the same objects (with
    /// what the caller attached): a renewed one reads the newest commit, never the snapshot it
    /// had, and one ended twice goes into the pool once. A growth of the map drains the pool.
    @Test func pooledReadTransactionsSeeTheNewestCommit() throws {
        let dir = tempDir()
        var opts = Environment.Options()
        opts.initialMapSize = 64 << 10
        let env = try Environment(path: dir, options: opts)
        defer { env.close() }
        let t = try #require(try env.openTable("t"))
        _ = try env.write { txn in try txn.put(t, key: Array("k".utf8), value: [1]) }
        final class Tag {}
        let first = try env.beginRead()
        let tag = Tag()
        first.attachment = tag
        #expect(try first.get(t, key: Array("k".utf8)).map(Array.init) == [1])
        env.endRead(first)
        env.endRead(first) // a second end is ignored: the pool must not hand it out twice
        _ = try env.write { txn in try txn.put(t, key: Array("k".utf8), value: [2]) }
        let second = try env.beginRead()
        #expect(second === first)
        #expect(second.attachment === tag)
        #expect(try second.get(t, key: Array("k".utf8)).map(Array.init) == [2])
        // Both are open at once: they cannot be the same object.
        let third = try env.beginRead()
        #expect(third !== second)
        env.endRead(third)
        env.endRead(second)
        // A growth (20,000 puts of 100 bytes through a 64 KiB map) drains the pool: the
        // objects come back ended, and new ones are made.
        try env.write { txn in
            for i in 0..<20_000 { try txn.put(t, key: Array("g\(i)".utf8), value: [UInt8](repeating: 7, count: 100)) }
        }
        #expect(first.attachment == nil)
        let fourth = try env.beginRead()
        #expect(fourth !== first)
        #expect(try fourth.get(t, key: Array("g19999".utf8))?.count == 100)
        env.endRead(fourth)
    }

    @Test func maxMapSizeFailsCleanly() throws {
        let dir = tempDir()
        var opts = Environment.Options()
        opts.initialMapSize = 64 << 10
        opts.maxMapSize = 256 << 10
        let env = try Environment(path: dir, options: opts)
        defer { env.close() }
        let t = try #require(try env.openTable("t"))
        #expect(throws: LMDBError.self) {
            try env.write { txn in
                for i in 0..<10_000 { try txn.put(t, key: Array("key\(i)".utf8), value: [UInt8](repeating: 1, count: 200)) }
            }
        }
        // Still usable afterwards.
        try env.write { txn in _ = try txn.put(t, key: Array("small".utf8), value: [1]) }
        try env.read { txn in let v = try txn.get(t, key: Array("small".utf8)); #expect(v != nil) }
    }

    @Test func abortOnThrow() throws {
        let env = try Environment(path: tempDir())
        defer { env.close() }
        let t = try #require(try env.openTable("t"))
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try env.write { txn in
                try txn.put(t, key: [1], value: [1])
                throw Boom()
            }
        }
        try env.read { txn in let v = try txn.get(t, key: [1]); #expect(v == nil) }
    }

    /// A write that grows the map remaps it with no transaction open (the gate held
    /// exclusively): `close()` from another thread must wait for the remap, not close LMDB's
    /// environment under `mdb_env_set_mapsize` (it did: the growth holds no transaction, so
    /// close saw nothing to wait for).
    @Test func closeWaitsForAMapGrowthOnAnotherThread() throws {
        var opts = Environment.Options()
        opts.initialMapSize = 64 << 10
        let env = try Environment(path: tempDir(), options: opts)
        let t = try #require(try env.openTable("t"))
        let growing = DispatchSemaphore(value: 0)
        let writerDone = DispatchSemaphore(value: 0)
        env.remapHookForTesting = {
            growing.signal()
            usleep(300_000)
        }
        DispatchQueue.global().async {
            // 5,000 puts of 200 bytes do not fit in 64 KiB: the map grows (then close stops it).
            for batch in 0..<5 {
                do {
                    try env.write { txn in
                        for i in 0..<1000 { try txn.put(t, key: Array("k\(batch)-\(i)".utf8), value: [UInt8](repeating: 7, count: 200)) }
                    }
                } catch {
                    break  // closed
                }
            }
            writerDone.signal()
        }
        growing.wait()
        let started = ContinuousClock.now
        env.close()
        let waited = ContinuousClock.now - started
        #expect(waited > .milliseconds(150), "close() returned after \(waited), while the map was being grown")
        #expect(writerDone.wait(timeout: .now() + 30) == .success)
        #expect(throws: LMDBError.self) { try env.read { _ in } }
    }

    /// `close()` waits for another thread's transaction; when that transaction's end closes
    /// the environment, `close()` returns only once it is closed (it returned while the other
    /// thread was still in `mdb_env_close`: a reopen in this process could then lose its lock
    /// file locks to that close).
    @Test func closeReturnsOnceTheEnvironmentIsClosed() throws {
        let env = try Environment(path: tempDir())
        let t = try #require(try env.openTable("t"))
        let closedByWriter = ClosedFlag()
        env.finalizeHookForTesting = {
            usleep(300_000)
            closedByWriter.set()
        }
        let writing = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try? env.write { txn in
                writing.signal()
                usleep(200_000)
                try txn.put(t, key: [1], value: [1])
            }
        }
        writing.wait()
        env.close()
        #expect(closedByWriter.isSet, "close() returned before the environment was closed")
    }

    @Test func fileModeIs0600() throws {
        let dir = tempDir()
        let env = try Environment(path: dir)
        env.close()
        var st = stat()
        #expect(stat(dir + "/data.mdb", &st) == 0)
        #expect(st.st_mode & 0o777 == 0o600)
    }
}

private func String(format n: Int) -> String {
    let s = Swift.String(n)
    return Swift.String(repeating: "0", count: max(0, 5 - s.count)) + s
}

/// A flag set on one thread and read on another.
private final class ClosedFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
