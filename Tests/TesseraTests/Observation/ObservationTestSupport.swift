import Foundation
import Synchronization
@testable import Tessera

/// Collects what listeners receive (from any thread) for a test to inspect.
final class Recorder<T: Sendable>: Sendable {
    private let items = Mutex<[T]>([])

    func append(_ item: T) { items.withLock { $0.append(item) } }
    var all: [T] { items.withLock { $0 } }
    var count: Int { items.withLock { $0.count } }
    func removeAll() { items.withLock { $0.removeAll() } }

    /// Waits until `condition` holds for the items (true) or `timeout` passes (false).
    func wait(timeout: Double = observationTimeout, until condition: ([T]) -> Bool) -> Bool {
        waitUntil(timeout: timeout) { condition(self.all) }
    }
}

/// How long a test waits for something that should happen before it says it did not.
///
/// Generous on purpose: `swift test` runs suites in parallel, and synchronous tests hold the
/// threads of Swift's cooperative pool (two on a two-core machine) for as long as they run, so
/// an observed stream's task can wait many seconds for a thread while the machine is busy —
/// a CI run failed two stream tests at 5 s. The waits return as soon as their condition holds,
/// so the bound costs nothing when the code works; nothing here waits for a timeout to pass.
let observationTimeout: Double = 60

/// Polls `condition` every millisecond until it holds (true) or `timeout` seconds pass.
func waitUntil(timeout: Double = observationTimeout, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(timeout)
    while Date() < end {
        if condition() { return true }
        usleep(1000)
    }
    return condition()
}

/// `waitUntil` for async tests: sleeps between polls instead of blocking a thread of the
/// cooperative pool (which the observed stream's task may need).
func waitUntilAsync(timeout: Double = observationTimeout, _ condition: () -> Bool) async -> Bool {
    let end = Date().addingTimeInterval(timeout)
    while Date() < end {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 1_000_000)
    }
    return condition()
}

extension Recorder {
    /// `wait` for async tests.
    func waitAsync(timeout: Double = observationTimeout, until condition: ([T]) -> Bool) async -> Bool {
        await waitUntilAsync(timeout: timeout) { condition(self.all) }
    }
}

/// Lets the observation machinery settle: waits for the center's queue to drain twice and a
/// few poll intervals, so that a callback that would come has come.
func settle(_ db: Database, milliseconds: UInt32 = 80) {
    db.observation.waitUntilIdle()
    usleep(milliseconds * 1000)
    db.observation.waitUntilIdle()
}

extension Result {
    /// The row as JSON (for comparisons in messages).
    var json: String { toJSON() }
}
