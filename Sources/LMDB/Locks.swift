#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The identity of the calling thread, as a number.
@inline(__always)
func currentThreadID() -> UInt {
    #if canImport(Darwin)
    UInt(bitPattern: Int(bitPattern: UnsafeMutableRawPointer(pthread_self())))
    #else
    UInt(pthread_self())
    #endif
}

/// Who holds an environment: every transaction holds it (shared) while it lives, and
/// remapping it (growing the map, adopting another process's size) needs it exclusively —
/// lmdb.h allows `mdb_env_set_mapsize` only while no transaction of the process is active.
///
/// Unlike a pthread read-write lock, a shared hold is not owned by a thread: a snapshot may
/// end on another thread than the one that began it (a lazy result set consumed by an async
/// loop or on another queue). The gate remembers which thread *began* each hold only to
/// avoid waiting for itself:
/// - a pending remap blocks new holds (so a stream of readers cannot starve it), except on
///   a thread that already holds one (a read inside a result set's loop), which the remap is
///   waiting for anyway;
/// - a thread that holds the environment cannot remap it (it would wait for itself): the
///   caller fails instead (`holds(_:)`).
final class HoldGate: @unchecked Sendable {
    // @unchecked Sendable: every field is read and written under `mutex`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let changed: UnsafeMutablePointer<pthread_cond_t>
    private var active = 0
    private var remapPending = false
    /// (thread, holds) for every thread that began an open transaction: nearly always empty
    /// or one or two entries, so a linear scan beats hashing.
    private var holdsByThread: [(thread: UInt, count: Int)] = []

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        changed = .allocate(capacity: 1)
        changed.initialize(to: pthread_cond_t())
        pthread_cond_init(changed, nil)
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        changed.deallocate()
        mutex.deallocate()
    }

    /// Takes a shared hold for `thread` (the thread beginning the transaction).
    func enter(_ thread: UInt) {
        pthread_mutex_lock(mutex)
        if let i = holdsByThread.firstIndex(where: { $0.thread == thread }) {
            holdsByThread[i].count += 1
        } else {
            while remapPending { pthread_cond_wait(changed, mutex) }
            holdsByThread.append((thread, 1))
        }
        active += 1
        pthread_mutex_unlock(mutex)
    }

    /// Releases a shared hold taken for `thread` (on any thread).
    func leave(_ thread: UInt) {
        pthread_mutex_lock(mutex)
        active -= 1
        if let i = holdsByThread.firstIndex(where: { $0.thread == thread }) {
            if holdsByThread[i].count > 1 { holdsByThread[i].count -= 1 } else { holdsByThread.remove(at: i) }
        }
        if active == 0 { pthread_cond_broadcast(changed) }
        pthread_mutex_unlock(mutex)
    }

    /// True if a transaction begun on `thread` is still open.
    func holds(_ thread: UInt) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return holdsByThread.contains { $0.thread == thread }
    }

    /// Runs `body` once no transaction is open, keeping new ones out meanwhile.
    func exclusively<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        while remapPending { pthread_cond_wait(changed, mutex) }
        remapPending = true
        while active > 0 { pthread_cond_wait(changed, mutex) }
        pthread_mutex_unlock(mutex)
        defer {
            pthread_mutex_lock(mutex)
            remapPending = false
            pthread_cond_broadcast(changed)
            pthread_mutex_unlock(mutex)
        }
        return try body()
    }

    /// Runs `body` under the gate's mutex (reading state that remaps change).
    func withMutex<R>(_ body: () -> R) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }
}

/// A plain mutex over `pthread_mutex_t`.
final class MutexLock: @unchecked Sendable {
    // @unchecked Sendable: the pthread mutex is itself the synchronisation.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` holding the mutex.
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
