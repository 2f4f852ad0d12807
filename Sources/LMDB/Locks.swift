#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A reader-writer lock over `pthread_rwlock_t` (heap-allocated so its address is stable).
///
/// A waiting writer goes before readers that arrive after it (glibc's default prefers
/// readers, which lets a steady stream of readers starve a writer forever). So a thread
/// must not take the read lock twice: a writer queued in between would deadlock it.
@usableFromInline
final class RWLock: @unchecked Sendable {
    // @unchecked Sendable: the pthread lock is itself the synchronisation.
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    init() {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        var attr = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attr)
        #if canImport(Glibc)
        pthread_rwlockattr_setkind_np(&attr, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        #endif
        pthread_rwlock_init(lock, &attr)
        pthread_rwlockattr_destroy(&attr)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    func readLock() { pthread_rwlock_rdlock(lock) }
    func writeLock() { pthread_rwlock_wrlock(lock) }
    func unlock() { pthread_rwlock_unlock(lock) }
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
}
