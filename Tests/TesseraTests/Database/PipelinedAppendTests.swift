import Testing
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import Tessera

/// Issue 19 (index creation): a back-fill's sorted entries are put into batches on the helper
/// thread, one batch ahead of the writer that appends them (`PipelinedAppend`). The table must
/// end up with exactly the entries, in order, whether a helper is given or not and however the
/// count falls on batch boundaries; an append's error must reach the caller and stop the
/// helper without leaving it stuck.
@Suite("Appends with batches filled on the helper thread")
struct PipelinedAppendTests {
    /// The key of entry `i`: ascending in `i`.
    static func key(_ i: Int) -> [UInt8] { Array("k\(String(repeating: "0", count: 8 - String(i).count))\(i)".utf8) }

    /// Keys in one buffer of their own, valid until the value is released (a batch keeps
    /// its keys by address until it is written).
    final class Keys: @unchecked Sendable {
        // @unchecked Sendable: written once in init, only read afterwards.
        private let buffer: UnsafeMutableRawBufferPointer
        private let starts: [Int]

        init(_ keys: [[UInt8]]) {
            var starts = [0]
            for k in keys { starts.append(starts[starts.count - 1] + k.count) }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, starts[starts.count - 1]), alignment: 1)
            for (i, k) in keys.enumerated() {
                k.withUnsafeBytes { buffer.baseAddress!.advanced(by: starts[i]).copyMemory(from: $0.baseAddress!, byteCount: k.count) }
            }
            self.buffer = buffer
            self.starts = starts
        }

        deinit { buffer.deallocate() }

        subscript(i: Int) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(start: buffer.baseAddress! + starts[i], count: starts[i + 1] - starts[i])
        }
    }

    /// Waits until `worker` has run everything queued before this call.
    static func drain(_ worker: WorkerThread) {
        let done = ThreadCondition()
        let finished = Mutex(false)
        worker.submit {
            done.lock()
            finished.withLock { $0 = true }
            done.broadcast()
            done.unlock()
        }
        done.lock()
        while !finished.withLock({ $0 }) { done.wait() }
        done.unlock()
    }

    @Test("Every entry is appended once, in order, with or without a helper",
          arguments: [0, 1, 4_095, 4_096, 4_097, 20_000])
    func appendsEveryEntry(count: Int) throws {
        let worker = WorkerThread(name: "tessera.test-pipelined-append")
        defer { worker.stop() }
        try DeferredPutsTests.withStore("pipelined-append-\(count)") { store in
            for helper in [nil, worker] {
                let name = helper == nil ? "alone" : "helped"
                let table = try store.write { w in try w.createTable(name) }
                let keys = (0..<count).map(Self.key)
                let stored = Keys(keys)
                let ranges = Mutex<[Range<Int>]>([])
                let caller = UInt(pthread_self())
                let fillThreads = Mutex<Set<UInt>>([])
                try store.write { w in
                    try PipelinedAppend.run(count: count, txn: w, table: table, worker: helper) { range, batch in
                        ranges.withLock { $0.append(range) }
                        fillThreads.withLock { _ = $0.insert(UInt(pthread_self())) }
                        for i in range {
                            Array("v\(i)".utf8).withUnsafeBytes { v in batch.add(key: stored[i], value: v) }
                        }
                    }
                }
                // The fills cover 0..<count in order, in batches of `batchSize`.
                let size = PipelinedAppend.batchSize
                #expect(ranges.withLock { $0 } == stride(from: 0, to: count, by: size).map { $0 ..< min(count, $0 + size) }, "\(name)")
                // With a helper and more than one batch, every fill ran on the helper.
                if helper != nil && count > size {
                    #expect(fillThreads.withLock { !$0.contains(caller) && $0.count == 1 }, "\(name)")
                } else if count > 0 {
                    #expect(fillThreads.withLock { $0 == [caller] }, "\(name)")
                }
                let entries = try store.read { txn in try DeferredPutsTests.entries(txn, table) }
                #expect(entries.count == count, "\(name)")
                #expect(entries.map(\.0) == keys.map { String(decoding: $0, as: UTF8.self) }, "\(name)")
                #expect(entries.map(\.1) == (0..<count).map { "v\($0)" }, "\(name)")
            }
        }
    }

    @Test("An append's error is thrown, the fills stop and the helper is free again")
    func anErrorStopsTheHelper() throws {
        let worker = WorkerThread(name: "tessera.test-pipelined-error")
        defer { worker.stop() }
        try DeferredPutsTests.withStore("pipelined-append-error") { store in
            let table = try store.write { w in try w.createTable("t") }
            let count = 10 * PipelinedAppend.batchSize
            // Entry 5,000 (in the second batch) has a key longer than LMDB takes.
            let keys = Keys((0..<count).map { $0 == 5_000 ? Self.key($0) + [UInt8](repeating: 0x7A, count: 600) : Self.key($0) })
            let filled = Mutex(0)
            #expect(throws: (any Error).self) {
                try store.write { w in
                    try PipelinedAppend.run(count: count, txn: w, table: table, worker: worker) { range, batch in
                        filled.withLock { $0 += 1 }
                        for i in range { batch.add(key: keys[i], value: UnsafeRawBufferPointer(start: nil, count: 0)) }
                    }
                }
            }
            // The helper filled at most one batch ahead of the failed one (batches 0, 1, 2).
            #expect(filled.withLock { $0 } <= 3)
            // Nothing was committed, and the helper runs new work.
            #expect(try store.read { txn in try DeferredPutsTests.entries(txn, table) }.isEmpty)
            Self.drain(worker)
        }
    }
}
