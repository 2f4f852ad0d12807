#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value behind a pthread mutex: `withLock` as `Synchronization.Mutex`.
///
/// The observation center's locks are contended by writers (after each commit) and its queue.
/// On Linux, `Mutex` waits in the (uninstrumented) standard library, so ThreadSanitizer does
/// not see the ordering it provides under contention and reports false races; it intercepts
/// pthread mutexes, so this lock keeps `--sanitize=thread` runs meaningful.
final class ObservationLock<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only accessed inside `withLock`, under `mutex`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value (not re-entrant).
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
