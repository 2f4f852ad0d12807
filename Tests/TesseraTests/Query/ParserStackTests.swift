// Stack use: the deepest input the parser accepts must parse and print on a thread with a
// 512 KB stack (the size of secondary threads on Apple platforms), even in a debug build,
// where every local gets its own stack slot. A regression here crashes the test process.

#if canImport(Glibc)
import Glibc
import Testing
@testable import Tessera

/// Shared between the test and its thread (written by the thread before `pthread_join`).
private final class StackProbe: @unchecked Sendable {
    let work: @Sendable () throws -> Bool
    var ok = false
    init(_ work: @escaping @Sendable () throws -> Bool) { self.work = work }
}

/// Runs `work` on a new thread with a stack of `bytes`.
private func onSmallStack(_ bytes: Int, _ work: @escaping @Sendable () throws -> Bool) -> Bool {
    let probe = StackProbe(work)
    var attr = pthread_attr_t()
    pthread_attr_init(&attr)
    defer { pthread_attr_destroy(&attr) }
    pthread_attr_setstacksize(&attr, bytes)
    var thread = pthread_t()
    let context = Unmanaged.passRetained(probe).toOpaque()
    let rc = pthread_create(&thread, &attr, { raw in
        let probe = Unmanaged<StackProbe>.fromOpaque(raw!).takeRetainedValue()
        probe.ok = (try? probe.work()) ?? false
        return nil
    }, context)
    guard rc == 0 else { return false }
    pthread_join(thread, nil)
    return probe.ok
}

/// AddressSanitizer enlarges every stack frame several times over, so a pinned 512 KB stack
/// measures the sanitizer, not the parser: the suite runs only without it.
private let runningUnderAddressSanitizer = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil

@Suite("Parser stack use", .enabled(if: !runningUnderAddressSanitizer, "AddressSanitizer enlarges stack frames"))
struct ParserStackTests {
    @Test func deepestNestingFitsIn512KB() {
        #expect(onSmallStack(512 * 1024) {
            let text = "SELECT " + String(repeating: "(", count: Parser.maxDepth - 1) + "1"
                + String(repeating: ")", count: Parser.maxDepth - 1) + " FROM _"
            let s = try SQLParser.parseStatement(text)
            return SQLPrinter.print(s) == "SELECT 1 FROM _"
        })
        #expect(onSmallStack(512 * 1024) {
            let text = String(repeating: "-[", count: 120) + "x" + String(repeating: "]", count: 120)
            let e = try SQLParser.parseExpression(text)
            return SQLPrinter.print(e).count > 240
        })
    }

    @Test func tallestTreeParsesAndPrintsIn512KB() {
        #expect(onSmallStack(512 * 1024) {
            // `+` chains stay left-deep (OR, AND and || chains become balanced trees).
            let text = (0..<(Parser.maxHeight - 10)).map { "a\($0)" }.joined(separator: " + ")
            let e = try SQLParser.parseExpression(text)
            return SQLPrinter.print(e) == text
        })
    }
}
#endif
