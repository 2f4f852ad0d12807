import CICU

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
// Patterns are usually constants, so compiled patterns are cached. An ICU regex object holds
// its match state and cannot be shared between threads, so each thread keeps its own cache
// (bounded; cleared when full).

/// One compiled pattern (owned by a single thread's cache).
final class CompiledRegex {
    /// The ICU regex object (through the CICU bridge).
    let handle: UnsafeMutableRawPointer
    /// The number of capture groups.
    let groupCount: Int

    /// Compiles `pattern`; nil when it is not a valid regular expression.
    init?(pattern: String) {
        let units = Array(ecmaScriptPatternForICU(pattern).utf16)
        guard let re = units.withUnsafeBufferPointer({ tessera_regex_open($0.baseAddress, Int32($0.count)) }) else { return nil }
        handle = re
        groupCount = max(0, Int(tessera_regex_group_count(re)))
    }

    deinit { tessera_regex_close(handle) }

    /// A match: UTF-16 ranges of the whole match and of each group (nil when a group did not
    /// take part).
    struct Match {
        var range: Range<Int>
        var groups: [Range<Int>?]
    }

    /// Runs `body` with this regex bound to `text` (UTF-16); the binding ends with the call.
    func withText<R>(_ text: [UInt16], _ body: (Matcher) -> R) -> R {
        text.withUnsafeBufferPointer { buf in
            _ = tessera_regex_set_text(handle, buf.baseAddress, Int32(buf.count))
            // Unbind so the regex never points at freed text.
            defer { _ = tessera_regex_set_text(handle, nil, 0) }
            return body(Matcher(regex: self))
        }
    }

    /// Match operations on the bound text.
    struct Matcher {
        let regex: CompiledRegex

        /// True when the whole text matches.
        func matchesWhole() -> Bool { tessera_regex_matches(regex.handle) == 1 }

        /// The first match, if any.
        func first() -> Match? { tessera_regex_find(regex.handle, 0) == 1 ? current() : nil }

        /// The match after the previous one, if any.
        func next() -> Match? { tessera_regex_find_next(regex.handle) == 1 ? current() : nil }

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
