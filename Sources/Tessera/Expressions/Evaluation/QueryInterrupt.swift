import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Stopping a running query: `ResultSet.interrupt()`, `Query.interrupt()`,
// `Database.interrupt()`, a cancelled `Task` around `for try await`, or
// `DatabaseConfiguration.queryTimeout`. Every loop that can run long (scans, joins, grouping,
// sorting, full-text evaluation, regular expressions through ICU's match callback) calls
// `ExecContext.checkInterrupt()`, which reads one atomic flag per call and the clock every
// few hundred calls.

/// A counter that `interrupt()` bumps: every execution that began before stops.
final class InterruptEpoch: Sendable {
    private let value = Atomic<UInt64>(0)
    /// The current value (recorded when an execution starts).
    var current: UInt64 { value.load(ordering: .acquiring) }
    /// Interrupts every execution that recorded an earlier value.
    func interrupt() { value.add(1, ordering: .releasing) }
}

/// Why a query stopped early.
enum InterruptReason: UInt8 {
    case none = 0, interrupted, cancelled, timedOut
}

/// The interruption state of one query execution.
final class QueryInterrupt: Sendable {
    private let flag = Atomic<UInt8>(0)
    /// Epochs whose advance interrupts this execution (its query's and its database's) and
    /// their values when it started; two fields rather than an array (no allocation per execution).
    private let epoch0: (InterruptEpoch, UInt64)?
    private let epoch1: (InterruptEpoch, UInt64)?
    /// Monotonic deadline in nanoseconds (0: none), and the timeout it came from.
    private let deadline: UInt64
    private let timeout: Double
    /// Checks since the clock was last read (a clock read per check would cost more than
    /// the rows it guards).
    private let sinceClock = Atomic<UInt32>(0)

    /// - Parameters:
    ///   - query: the query's epoch, `database`: the database's; advancing either stops this
    ///     execution.
    ///   - timeout: seconds from now after which the execution stops (nil: never).
    init(query: InterruptEpoch? = nil, database: InterruptEpoch? = nil, timeout: Double? = nil) {
        epoch0 = query.map { ($0, $0.current) }
        epoch1 = database.map { ($0, $0.current) }
        if let timeout, timeout > 0, timeout.isFinite {
            self.timeout = timeout
            let ns = min(timeout * 1e9, Double(UInt64.max / 4))
            deadline = QueryInterrupt.now() &+ UInt64(ns)
        } else {
            self.timeout = 0
            deadline = 0
        }
    }

    /// Monotonic time in nanoseconds.
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// Stops the execution (`reason` is reported by the error).
    func interrupt(_ reason: InterruptReason = .interrupted) {
        _ = flag.compareExchange(expected: 0, desired: reason.rawValue, ordering: .relaxed)
    }

    /// Why the execution must stop, or `.none` to go on. Cheap: one atomic load, and the
    /// clock every 256 calls when there is a deadline.
    @inline(__always)
    var reason: InterruptReason {
        let f = flaggedReason
        return f != .none ? f : slowReason()
    }

    /// `reason`, reading the clock on every call (for callers that are themselves called
    /// rarely, such as ICU's match callback).
    var reasonNow: InterruptReason {
        let r = reason
        if r != .none || deadline == 0 { return r }
        if QueryInterrupt.now() >= deadline {
            interrupt(.timedOut)
            return .timedOut
        }
        return .none
    }

    /// Why the execution must stop, from the flag alone (`interrupt(_:)`: a result set's
    /// interrupt, task cancellation); `.none` when it is not set.
    @inline(__always)
    var flaggedReason: InterruptReason {
        let f = flag.load(ordering: .relaxed)
        return f == 0 ? .none : InterruptReason(rawValue: f) ?? .interrupted
    }

    /// The epochs and the deadline (`reason` after the flag): a scan polls them every few
    /// dozen rows (`ExecContext.checkInterrupt`).
    @inline(never)
    func slowReason() -> InterruptReason {
        if let (epoch, started) = epoch0, epoch.current != started {
            interrupt(.interrupted)
            return .interrupted
        }
        if let (epoch, started) = epoch1, epoch.current != started {
            interrupt(.interrupted)
            return .interrupted
        }
        if deadline != 0 {
            let n = sinceClock.add(1, ordering: .relaxed).newValue
            if n & 255 == 0 || n == 1, QueryInterrupt.now() >= deadline {
                interrupt(.timedOut)
                return .timedOut
            }
        }
        return .none
    }

    /// Throws `DatabaseError.interrupted` when the execution must stop.
    @inline(__always)
    func check() throws {
        let r = reason
        if r != .none { throw error(r) }
    }

    /// The error an interrupted execution throws.
    func error(_ r: InterruptReason) -> DatabaseError {
        switch r {
        case .timedOut:
            return DatabaseError(.interrupted, "query timed out after \(numberText(timeout)) s (DatabaseConfiguration.queryTimeout)")
        case .cancelled:
            return DatabaseError(.interrupted, "query cancelled (its task was cancelled)")
        case .none, .interrupted:
            return DatabaseError(.interrupted, "query interrupted")
        }
    }
}
