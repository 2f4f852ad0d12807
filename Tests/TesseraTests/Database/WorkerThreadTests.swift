import Testing
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import Tessera

/// The engine's own threads (`WorkerThread`, POSIX threads with `ThreadCondition`).
@Suite("Worker threads")
struct WorkerThreadTests {
    @Test("work runs in the order given, on one named thread of its own, until stopped")
    func runsInOrder() {
        let worker = WorkerThread(name: "tessera.test-worker-thread")
        let seen = Mutex<[Int]>([])
        let threads = Mutex<Set<UInt>>([])
        let names = Mutex<Set<String>>([])
        let done = ThreadCondition()
        let finished = Mutex(false)
        for i in 0..<1_000 {
            worker.submit {
                seen.withLock { $0.append(i) }
                threads.withLock { _ = $0.insert(UInt(pthread_self())) }
                if i % 250 == 0, let name = Self.threadName() { names.withLock { _ = $0.insert(name) } }
            }
        }
        worker.submit {
            done.lock()
            finished.withLock { $0 = true }
            done.broadcast()
            done.unlock()
        }
        worker.stop()
        done.lock()
        while !finished.withLock({ $0 }) { done.wait() }
        done.unlock()
        #expect(seen.withLock { $0 } == Array(0..<1_000))
        #expect(threads.withLock { $0.count } == 1)
        #expect(threads.withLock { !$0.contains(UInt(pthread_self())) }, "ran on the caller's thread")
        #if os(Linux)
        // Linux keeps 15 bytes of a thread's name.
        #expect(names.withLock { $0 } == ["tessera.test-wo"])
        #endif
    }

    /// The calling thread's name as Linux shows it (`/proc/thread-self/comm`), or nil.
    static func threadName() -> String? {
        guard let f = fopen("/proc/thread-self/comm", "r") else { return nil }
        defer { fclose(f) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = fread(&buffer, 1, buffer.count, f)
        return String(decoding: buffer[..<n].prefix { $0 != 0x0A }, as: UTF8.self)
    }
}
