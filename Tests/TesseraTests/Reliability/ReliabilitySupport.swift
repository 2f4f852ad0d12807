import Foundation
import Synchronization
@testable import Tessera

/// A fresh directory under the temporary directory, removed by `remove()`.
struct ScratchDirectory {
    let path: String

    init(_ label: String) {
        var template = Array((FileSystem.temporaryDirectory + "/tessera-\(label)-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        path = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
    }

    /// A path inside the directory (not created).
    func child(_ name: String) -> String { path + "/" + name }

    func remove() { FileSystem.removeTree(path) }
}

/// Problems found by worker threads, collected for the test thread.
final class ProblemLog: Sendable {
    private let problems = Mutex<[String]>([])

    func record(_ text: String) {
        problems.withLock { if $0.count < 50 { $0.append(text) } }
    }

    var all: [String] { problems.withLock { $0 } }
}

/// A value shared between threads behind a mutex.
final class Shared<T: Sendable>: Sendable {
    private let mutex: Mutex<T>
    init(_ value: T) { mutex = Mutex(value) }
    func withLock<R: Sendable>(_ body: (inout sending T) -> sending R) -> R { mutex.withLock(body) }
}

/// Runs `body(i)` on `count` new threads and waits for all of them.
func runThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for i in 0..<count {
        group.enter()
        let t = Thread {
            body(i)
            group.leave()
        }
        t.stackSize = 4 << 20
        t.start()
    }
    group.wait()
}

/// A value nested `depth` levels deep (`depth` containers, innermost holding 1): arrays,
/// objects or both alternating.
func nestedValue(depth: Int, style: Int = 0) -> Value {
    var v: Value = 1
    for level in 0..<depth {
        let useObject = style == 1 || (style == 2 && level % 2 == 1)
        v = useObject ? .object(["k": v]) : .array([v])
    }
    return v
}

/// JSON text nested `depth` levels deep.
func nestedJSON(depth: Int, object: Bool) -> String {
    object ? String(repeating: #"{"k":"#, count: depth) + "1" + String(repeating: "}", count: depth)
        : String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)
}

/// Reads the process umask without changing it (Linux: /proc/self/status).
func currentUmask() -> mode_t {
    if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
       let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
       let value = mode_t(line.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8) {
        return value
    }
    return 0o022
}
