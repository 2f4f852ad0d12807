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
///
/// Closing goes through the gate too (`close(_:)`), as SQLite's `sqlite3_close_v2` does: new
/// holds are refused from then on, transactions running on other threads (writes, reads inside
/// a closure) are waited for, and long-lived snapshots (open result sets) may outlive the call:
/// the last hold to end reports that the environment may now really be closed.
final class HoldGate: @unchecked Sendable {
    // @unchecked Sendable: every field is read and written under `mutex` (which also makes
    // the runtime's exclusivity checks redundant: the fields are marked unchecked).
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let changed: UnsafeMutablePointer<pthread_cond_t>
    @exclusivity(unchecked) private var active = 0
    /// Holds of long-lived snapshots (`Environment.beginRead`), counted in `active` too.
    @exclusivity(unchecked) private var longLived = 0
    @exclusivity(unchecked) private var remapPending = false
    /// Set while the body of `exclusively(_:)` runs (a remap or a compaction swap): no hold
    /// is counted then, but the environment is in use, so `close(_:)` must wait for it too.
    @exclusivity(unchecked) private var exclusiveRunning = false
    /// Set by `refuseNewHolds()` and `close(_:)`: new holds and remaps are refused.
    @exclusivity(unchecked) private var refusing = false
    /// Set by `close(_:)`: the last hold to end finalizes the close.
    @exclusivity(unchecked) private var closing = false
    /// Set once a caller was told to really close the environment.
    @exclusivity(unchecked) private var finalized = false
    /// Set while the last hold's thread closes the environment (`leave` returned true until
    /// `didFinalize()`): `close(_:)` waits for it, so that the environment is closed when it
    /// returns (unless long-lived snapshots remain).
    @exclusivity(unchecked) private var finalizing = false
    /// (thread, holds) for every thread that began an open transaction: nearly always empty
    /// or one or two entries, so a linear scan beats hashing.
    @exclusivity(unchecked) private var holdsByThread: [(thread: UInt, count: Int)] = []

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

    /// Takes a shared hold for `thread` (the thread beginning the transaction); `longLived`
    /// for a snapshot that may outlive the call that began it.
    ///
    /// - Throws: `LMDBError.closed` once the environment is closing (a thread that already
    ///   holds it may still nest holds: it is finishing work that began before).
    func enter(_ thread: UInt, longLived isLong: Bool = false) throws(LMDBError) {
        pthread_mutex_lock(mutex)
        if let i = holdsByThread.firstIndex(where: { $0.thread == thread }) {
            holdsByThread[i].count += 1
        } else {
            while remapPending && !refusing { pthread_cond_wait(changed, mutex) }
            if refusing {
                pthread_mutex_unlock(mutex)
                throw LMDBError.closed
            }
            holdsByThread.append((thread, 1))
        }
        active += 1
        if isLong { longLived += 1 }
        pthread_mutex_unlock(mutex)
    }

    /// Releases a shared hold taken for `thread` (on any thread).
    ///
    /// - Returns: true when the environment is closing and this was its last hold: the caller
    ///   must now close it (once; no transaction is left), then call `didFinalize()`.
    @discardableResult
    func leave(_ thread: UInt, longLived isLong: Bool = false) -> Bool {
        pthread_mutex_lock(mutex)
        active -= 1
        if isLong { longLived -= 1 }
        if let i = holdsByThread.firstIndex(where: { $0.thread == thread }) {
            if holdsByThread[i].count > 1 { holdsByThread[i].count -= 1 } else { holdsByThread.remove(at: i) }
        }
        if active == 0 || closing { pthread_cond_broadcast(changed) }
        let finalize = closing && active == 0 && !finalized
        if finalize {
            finalized = true
            finalizing = true
        }
        pthread_mutex_unlock(mutex)
        return finalize
    }

    /// Called after the environment was closed because `leave` returned true.
    func didFinalize() {
        pthread_mutex_lock(mutex)
        finalizing = false
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
    }

    /// Refuses new holds and remaps from now on, without waiting for anything: the first step
    /// of closing, taken before the caller waits for a compaction to end (a compaction waiting
    /// for the transactions to end then gives up instead of waiting for the caller's own).
    func refuseNewHolds() {
        pthread_mutex_lock(mutex)
        refusing = true
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
    }

    /// Refuses new holds from now on and waits for the transactions other threads are running
    /// and for a remap in progress (not for long-lived snapshots, and not at all when the
    /// calling thread holds the environment itself: it would wait for itself; no remap can
    /// run then).
    ///
    /// - Returns: true when no hold is left: the caller must close the environment now.
    ///   Otherwise the last `leave` returns true.
    func close(_ thread: UInt) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if closing { return false }
        closing = true
        refusing = true
        pthread_cond_broadcast(changed)
        if !holdsByThread.contains(where: { $0.thread == thread }) {
            // A remap running now (`exclusively`: no hold is counted while it runs) uses the
            // environment as much as a transaction does. None can start from now on.
            // Nor can it return while the last hold's thread is still closing the environment.
            while active - longLived > 0 || exclusiveRunning || finalizing { pthread_cond_wait(changed, mutex) }
        }
        let finalize = active == 0 && !finalized
        if finalize { finalized = true }
        return finalize
    }

    /// True while a long-lived snapshot (one that may outlive the call that began it, such as
    /// a lazy result set) is open on any thread: `exclusively` would wait for it to end.
    var hasLongLivedHolds: Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return longLived > 0
    }

    /// True if a transaction begun on `thread` is still open.
    func holds(_ thread: UInt) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return holdsByThread.contains { $0.thread == thread }
    }

    /// Runs `body` once no transaction is open, keeping new ones out meanwhile.
    ///
    /// - Throws: `LMDBError.closed` when the environment is closing, also while this waits
    ///   (then `body` does not run).
    func exclusively<R>(_ body: () throws -> R) throws -> R {
        pthread_mutex_lock(mutex)
        while remapPending && !refusing { pthread_cond_wait(changed, mutex) }
        if refusing {
            pthread_mutex_unlock(mutex)
            throw LMDBError.closed
        }
        remapPending = true
        while active > 0 && !refusing { pthread_cond_wait(changed, mutex) }
        if refusing {
            remapPending = false
            pthread_cond_broadcast(changed)
            pthread_mutex_unlock(mutex)
            throw LMDBError.closed
        }
        exclusiveRunning = true
        pthread_mutex_unlock(mutex)
        defer {
            pthread_mutex_lock(mutex)
            remapPending = false
            exclusiveRunning = false
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
