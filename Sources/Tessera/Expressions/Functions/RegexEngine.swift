import CICU
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Regular expressions for SPEC §6.6 on ICU's regex engine (ECMAScript-like syntax: classes
// \d \w \s \b, lazy quantifiers, look-ahead, groups and back-references; case-sensitive).
//
// A constant pattern is compiled once per query (`PrecompiledRegex`); other patterns go
// through a cache per thread (bounded; cleared when full), since an ICU regex object holds its
// match state and cannot be shared between threads. Every match runs with ICU's time limit
// and backtracking-stack limit, and checks the query's interruption from ICU's callback:
// `(a+)+$` on a long run of `a` fails with "regular expression too slow" instead of running
// for minutes.

/// Limits that keep a regular expression from hanging a query (README "Limits").
enum RegexLimits {
    /// The longest pattern accepted, in UTF-16 code units.
    static let maxPatternLength = 10_000
    /// ICU match steps one match may take (a step is about ten thousand backtracking
    /// moves, 0.1–0.3 ms): about a third of a second on a slow machine. Long texts get
    /// one more step per 1,000 code units.
    static let stepsPerMatch = 1_000
    /// The wall-clock time one match may take, whatever the machine's speed
    /// (`TESSERA_REGEX_WALL_LIMIT_NS`, checked from ICU's callback at every step).
    static let wallMilliseconds = Int(TESSERA_REGEX_WALL_LIMIT_NS / 1_000_000)

    static func steps(forTextLength n: Int) -> Int32 {
        Int32(clamping: stepsPerMatch + n / 1_000)
    }
}

/// Why a match stopped before it finished.
enum RegexFailure: Error {
    /// It used up its steps (`RegexLimits.stepsPerMatch`).
    case tooSlow
    /// Its backtracking stack outgrew ICU's limit.
    case stackOverflow
    /// The query was interrupted, cancelled or timed out.
    case interrupted
    /// ICU reported another error.
    case failed
}

/// One compiled pattern (used by one thread at a time: a query's own, or a thread's cache).
final class CompiledRegex: @unchecked Sendable {
    // @unchecked Sendable: the ICU object holds match state; `PrecompiledRegex` hands it to
    // one thread at a time, and the thread caches never share theirs.

    /// The ICU regex object (through the CICU bridge).
    let handle: UnsafeMutableRawPointer
    /// The number of capture groups.
    let groupCount: Int
    /// The pattern as written (for error messages).
    let pattern: String

    /// Compiles `pattern`; nil when it is not a valid regular expression.
    init?(pattern: String) {
        let units = Array(ecmaScriptPatternForICU(pattern).utf16)
        guard let re = units.withUnsafeBufferPointer({ tessera_regex_open($0.baseAddress, Int32($0.count)) }) else { return nil }
        handle = re
        groupCount = max(0, Int(tessera_regex_group_count(re)))
        self.pattern = pattern
    }

    deinit { tessera_regex_close(handle) }

    /// A match: UTF-16 ranges of the whole match and of each group (nil when a group did not
    /// take part).
    struct Match {
        var range: Range<Int>
        var groups: [Range<Int>?]
    }

    /// Runs `body` with this regex bound to `text` (UTF-16); the binding ends with the call.
    /// Each match honours `interrupt` (checked from ICU's callback) and the step limit.
    func withText<R>(_ text: [UInt16], interrupt: QueryInterrupt? = nil, _ body: (Matcher) throws -> R) throws -> R {
        try text.withUnsafeBufferPointer { buf in
            _ = tessera_regex_set_text(handle, buf.baseAddress, Int32(buf.count))
            // Unbind so the regex never points at freed text.
            defer { _ = tessera_regex_set_text(handle, nil, 0) }
            return try body(Matcher(regex: self, steps: RegexLimits.steps(forTextLength: buf.count), interrupt: interrupt))
        }
    }

    /// Match operations on the bound text.
    struct Matcher {
        let regex: CompiledRegex
        let steps: Int32
        let interrupt: QueryInterrupt?

        private func run(_ op: Int32, _ start: Int32 = 0) throws(RegexFailure) -> Bool {
            let r: Int32
            if let interrupt {
                let context = UnsafeRawPointer(Unmanaged.passUnretained(interrupt).toOpaque())
                r = withExtendedLifetime(interrupt) { tessera_regex_run(regex.handle, op, start, steps, regexCheck, context) }
            } else {
                r = tessera_regex_run(regex.handle, op, start, steps, nil, nil)
            }
            switch r {
            case 1: return true
            case 0: return false
            case TESSERA_REGEX_TIME_OUT: throw .tooSlow
            case TESSERA_REGEX_STOPPED: throw .interrupted
            case TESSERA_REGEX_STACK_OVERFLOW: throw .stackOverflow
            default: throw .failed
            }
        }

        /// True when the whole text matches.
        func matchesWhole() throws(RegexFailure) -> Bool { try run(0) }

        /// The first match, if any.
        func first() throws(RegexFailure) -> Match? { try run(1, 0) ? current() : nil }

        /// The match after the previous one, if any.
        func next() throws(RegexFailure) -> Match? { try run(2) ? current() : nil }

        private func current() -> Match? {
            let s = Int(tessera_regex_start(regex.handle, 0)), e = Int(tessera_regex_end(regex.handle, 0))
            guard s >= 0, e >= s else { return nil }
            var groups: [Range<Int>?] = []
            if regex.groupCount > 0 {
                groups.reserveCapacity(regex.groupCount)
                for g in 1...regex.groupCount {
                    let gs = Int(tessera_regex_start(regex.handle, Int32(g))), ge = Int(tessera_regex_end(regex.handle, Int32(g)))
                    groups.append(gs >= 0 && ge >= gs ? gs..<ge : nil)
                }
            }
            return Match(range: s..<e, groups: groups)
        }

        /// The group number of a named group, if the pattern has one of that name.
        func groupNumber(named name: String) -> Int? {
            let units = Array(name.utf16)
            let n = units.withUnsafeBufferPointer { tessera_regex_group_number(regex.handle, $0.baseAddress, Int32($0.count)) }
            return n > 0 ? Int(n) : nil
        }
    }
}

/// ICU's periodic check during a match: go on unless the query must stop.
private let regexCheck: tessera_regex_check_fn = { context in
    guard let context else { return 1 }
    let interrupt = Unmanaged<QueryInterrupt>.fromOpaque(context).takeUnretainedValue()
    return interrupt.reasonNow == .none ? 1 : 0
}

/// A constant pattern compiled once for a query (`REGEXP_LIKE(name, 'a+b')`, or a pattern
/// parameter bound before compiling). Lent to one evaluation at a time; a concurrent one
/// (an expression shared between threads) uses its thread's cache instead.
final class PrecompiledRegex: Sendable {
    let pattern: String
    private let compiled: CompiledRegex?
    private let busy = Atomic<Bool>(false)

    init(pattern: String) {
        self.pattern = pattern
        compiled = pattern.utf16.count <= RegexLimits.maxPatternLength ? CompiledRegex(pattern: pattern) : nil
    }

    /// Runs `body` with the compiled pattern (nil when it is invalid).
    func with<R>(_ body: (CompiledRegex?) throws -> R) rethrows -> R {
        guard compiled != nil, busy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            return try body(compiled == nil ? nil : RegexCache.regex(pattern))
        }
        defer { busy.store(false, ordering: .releasing) }
        return try body(compiled)
    }
}

/// Adapts ECMAScript escapes whose meaning differs in ICU: ECMAScript's `\d`, `\w` (and
/// `\D`, `\W`) are ASCII-only, ICU's match any Unicode digit or word character. Everything
/// else (`\s`, `\b`, classes, groups, look-ahead, lazy quantifiers, back-references) is
/// passed through. Inside a character class the ASCII set nests as an ICU set union
/// (`[\d.]` → `[[0-9].]`).
func ecmaScriptPatternForICU(_ pattern: String) -> String {
    guard pattern.utf8.contains(UInt8(ascii: "\\")) else { return pattern }
    var out = ""
    out.reserveCapacity(pattern.utf8.count + 16)
    var it = pattern.unicodeScalars.makeIterator()
    while let c = it.next() {
        guard c == "\\" else { out.unicodeScalars.append(c); continue }
        guard let e = it.next() else { out.unicodeScalars.append(c); break }
        switch e {
        case "d": out += "[0-9]"
        case "D": out += "[^0-9]"
        case "w": out += "[A-Za-z0-9_]"
        case "W": out += "[^A-Za-z0-9_]"
        default:
            out.unicodeScalars.append(c)
            out.unicodeScalars.append(e)
        }
    }
    return out
}

/// The calling thread's compiled patterns.
enum RegexCache {
    /// Most patterns a thread keeps compiled.
    static let capacity = 64

    /// The compiled form of `pattern`, or nil when it is invalid (also cached).
    static func regex(_ pattern: String) -> CompiledRegex? {
        RegexThreadCache.current.regex(pattern)
    }
}

/// The pthread key of each thread's `RegexThreadCache`, released when the thread exits.
private let regexCacheKey: pthread_key_t = {
    var key = pthread_key_t()
    let rc = pthread_key_create(&key) { raw in
        guard let raw else { return }
        Unmanaged<RegexThreadCache>.fromOpaque(raw).release()
    }
    precondition(rc == 0, "pthread_key_create failed for the regex cache")
    return key
}()

/// One thread's compiled regexes; reached only by its own thread.
private final class RegexThreadCache {
    private var entries: [String: CompiledRegex?] = [:]
    private var lastPattern: String?
    private var lastRegex: CompiledRegex?

    static var current: RegexThreadCache {
        if let raw = pthread_getspecific(regexCacheKey) {
            return Unmanaged<RegexThreadCache>.fromOpaque(raw).takeUnretainedValue()
        }
        let cache = RegexThreadCache()
        pthread_setspecific(regexCacheKey, Unmanaged.passRetained(cache).toOpaque())
        return cache
    }

    func regex(_ pattern: String) -> CompiledRegex? {
        if let lastPattern, lastPattern.utf8.elementsEqual(pattern.utf8) { return lastRegex }
        let compiled: CompiledRegex?
        if let hit = entries[pattern] {
            compiled = hit
        } else {
            if entries.count >= RegexCache.capacity { entries.removeAll(keepingCapacity: true) }
            compiled = CompiledRegex(pattern: pattern)
            entries[pattern] = compiled
        }
        lastPattern = pattern
        lastRegex = compiled
        return compiled
    }
}
