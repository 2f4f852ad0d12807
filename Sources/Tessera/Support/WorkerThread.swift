#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CSupport

// Threads and the lock they wait on, from POSIX threads: the engine needs no more, and
// leaving Foundation out keeps its libraries (and the ICU copy they bring) out of every
// process that uses Tessera without them — a `tessera` command starts about 2 ms sooner.

/// A thread of its own that runs the work handed to it, one item at a time and in the order
/// given. A writer uses one to keep the second core busy with work that needs no transaction
/// (encoding JSON, tokenizing text) while it writes what came before.
///
/// Its own thread, not one of a shared pool: an application may have blocked the pool's
/// threads waiting for this very database while the writer waits for the worker.
final class WorkerThread: @unchecked Sendable {
    // @unchecked Sendable: `queue` and `stopping` are guarded by `condition`.
    private let condition = ThreadCondition()
    private var queue: [@Sendable () -> Void] = []
    private var stopping = false

    /// Starts the thread, named `name` (as debuggers and `top -H` show it; Linux keeps the
    /// first 15 bytes).
    init(name: String) {
        Self.detach(name: name) { [self] in
            while let work = self.next() { work() }
        }
    }

    /// Queues `work` after everything queued before it.
    func submit(_ work: @escaping @Sendable () -> Void) {
        condition.lock()
        queue.append(work)
        condition.signal()
        condition.unlock()
    }

    /// Ends the thread once it has run everything queued (it does not wait for that).
    func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
    }

    /// The next work item, or nil once stopped and empty.
    private func next() -> (@Sendable () -> Void)? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !stopping { condition.wait() }
        return queue.isEmpty ? nil : queue.removeFirst()
    }

    /// Runs `body` on a new detached thread named `name`.
    private static func detach(name: String, _ body: @escaping @Sendable () -> Void) {
        final class Start: @unchecked Sendable {
            // @unchecked Sendable: written before the thread starts, read only by it.
            let name: String
            let body: @Sendable () -> Void
            init(name: String, body: @escaping @Sendable () -> Void) { self.name = name; self.body = body }
        }
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        let result = pthread_create(&thread, &attributes, { context in
            let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
            _ = tessera_name_this_thread(start.name)
            start.body()
            return nil
        }, start)
        precondition(result == 0, "WorkerThread: pthread_create failed (\(result))")
    }
}

/// A mutex and a condition variable waited on under it (POSIX threads).
final class ThreadCondition: @unchecked Sendable {
    // @unchecked Sendable: the pthread objects are made for use from any thread.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let variable = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(variable, nil)
    }

    deinit {
        pthread_cond_destroy(variable)
        pthread_mutex_destroy(mutex)
        variable.deallocate()
        mutex.deallocate()
    }

    /// Takes the mutex.
    @inline(__always) func lock() { pthread_mutex_lock(mutex) }
    /// Releases the mutex.
    @inline(__always) func unlock() { pthread_mutex_unlock(mutex) }
    /// Releases the mutex until signalled, then takes it again (callers wait in a loop on
    /// their condition: a wake-up may be spurious).
    @inline(__always) func wait() { pthread_cond_wait(variable, mutex) }
    /// Wakes one waiting thread.
    @inline(__always) func signal() { pthread_cond_signal(variable) }
    /// Wakes every waiting thread.
    @inline(__always) func broadcast() { pthread_cond_broadcast(variable) }
}
