import Foundation

/// A thread of its own that runs the work handed to it, one item at a time and in the order
/// given. A writer uses one to keep the second core busy with work that needs no transaction
/// (encoding JSON, tokenizing text) while it writes what came before.
///
/// Its own thread, not one of a shared pool: an application may have blocked the pool's
/// threads waiting for this very database while the writer waits for the worker.
final class WorkerThread: @unchecked Sendable {
    // @unchecked Sendable: `queue` and `stopping` are guarded by `condition`.
    private let condition = NSCondition()
    private var queue: [@Sendable () -> Void] = []
    private var stopping = false

    /// Starts the thread, named `name` (as debuggers and `top -H` show it).
    init(name: String) {
        let thread = Thread { [self] in
            while let work = self.next() { work() }
        }
        thread.name = name
        thread.start()
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
}
