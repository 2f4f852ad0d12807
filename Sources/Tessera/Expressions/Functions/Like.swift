// SPEC §5.6: LIKE. `%` matches any run of characters (possibly empty), `_` exactly one, and a
// backslash makes the next pattern character literal. The whole string must match.

/// True when `s` matches the LIKE `pattern` under `collation`.
///
/// - Binary (default): case-sensitive, character by character (code points).
/// - `NOCASE` without UNICODE: ASCII letters fold to lower case.
/// - `UNICODE` (with `NOCASE`/`NODIAC`/locale): each literal character is compared with the
///   Unicode collator, and `_` matches one user-perceived character (grapheme cluster), so
///   `'Éclair' LIKE 'e_lair' COLLATE (UNICODE NOCASE NODIAC)` is TRUE.
///
/// A backslash at the very end of the pattern matches a backslash.
func likeMatch(_ s: String, pattern: String, collation: Collation) -> Bool {
    LikePattern(pattern, collation: collation).matches(s)
}

/// Limits on LIKE (README "Limits").
enum LikeLimits {
    /// The longest pattern accepted, in bytes of UTF-8.
    static let maxPatternBytes = 100_000

    /// The error for a longer pattern.
    static func tooLong(_ pattern: String) -> QueryError {
        QueryError(.runtime, "LIKE pattern too long: \(pattern.utf8.count) bytes (at most \(maxPatternBytes))")
    }
}

/// A LIKE pattern compiled once (per query, for a constant pattern) and matched in time
/// linear in the text: the pattern is split at `%` into segments; the first must start the
/// text, the last must end it, and each one between is found at its leftmost place after the
/// previous one (leftmost is always right when only `%` separates segments). A segment
/// without `_` is found with `memmem` on UTF-8; one with `_` by bit-parallel matching over
/// code points (bitap: a word of state per 64 pattern characters). A pattern without
/// wildcards is a plain comparison. (UNICODE collations compare through the collator,
/// character by character, with backtracking to the last `%`.)
struct LikePattern {
    private enum Element: Equatable {
        case scalar(Unicode.Scalar)
        case one
    }

    private let collation: Collation
    /// Segments between `%`s, in order.
    private let segments: [[Element]]
    /// The same segments in UTF-8 when no `_` occurs (the byte fast path).
    private let byteSegments: [[UInt8]]?
    /// Characters the text needs at least (the sum of the segments).
    private let minimumLength: Int
    private let bitaps: [Bitap?]
    /// KMP failure tables of `byteSegments`.
    private let failures: [[Int]]
    private let unicodeTokens: [LikeToken<Character>]?

    init(_ pattern: String, collation: Collation) {
        self.collation = collation
        if collation.unicode {
            unicodeTokens = likeTokens(pattern.map { $0 })
            segments = []; byteSegments = nil; minimumLength = 0; bitaps = []; failures = []
            return
        }
        unicodeTokens = nil
        var scalars = Array(pattern.unicodeScalars)
        if collation.ignoreCase { scalars = scalars.map(LikePattern.fold) }
        var segs: [[Element]] = [[]]
        var i = 0
        while i < scalars.count {
            let c = scalars[i]
            if c.isLikeEscape, i + 1 < scalars.count {
                segs[segs.count - 1].append(.scalar(scalars[i + 1]))
                i += 2
                continue
            }
            if c.isLikeAny {
                // Runs of `%` are one: only a segment with something in it is closed.
                if !segs[segs.count - 1].isEmpty || segs.count == 1 { segs.append([]) }
            } else if c.isLikeOne {
                segs[segs.count - 1].append(.one)
            } else {
                segs[segs.count - 1].append(.scalar(c))
            }
            i += 1
        }
        // `%` at the start leaves an empty first segment, at the end an empty last one.
        segments = segs
        minimumLength = segs.reduce(0) { $0 + $1.count }
        if segs.allSatisfy({ !$0.contains(.one) }) {
            let bytes = segs.map { seg in
                var bytes: [UInt8] = []
                for case .scalar(let c) in seg { bytes.append(contentsOf: String(c).utf8) }
                return bytes
            }
            byteSegments = bytes
            failures = bytes.map(LikePattern.failureTable)
            bitaps = []
        } else {
            byteSegments = nil
            failures = []
            bitaps = segs.map { $0.isEmpty ? nil : Bitap($0.map { if case .scalar(let c) = $0 { c } else { nil } }) }
        }
    }

    /// `c` with ASCII letters folded to lower case.
    private static func fold(_ c: Unicode.Scalar) -> Unicode.Scalar {
        c.value >= 65 && c.value <= 90 ? Unicode.Scalar(c.value + 32)! : c
    }

    /// True when the whole of `s` matches.
    func matches(_ s: String) -> Bool {
        if let unicodeTokens {
            let c = collation
            return wildcardMatch(s.map { $0 }, unicodeTokens) { a, b in
                let x = String(a), y = String(b)
                return x.utf8.elementsEqual(y.utf8) || c.compare(x, y) == 0
            }
        }
        if let byteSegments {
            var text = s
            if collation.ignoreCase { text = String(String.UnicodeScalarView(s.unicodeScalars.map(LikePattern.fold))) }
            var t = text
            return t.withUTF8 { matchBytes($0, byteSegments) }
        }
        var text = Array(s.unicodeScalars)
        if collation.ignoreCase { text = text.map(LikePattern.fold) }
        return matchScalars(text)
    }

    private func matchBytes(_ text: UnsafeBufferPointer<UInt8>, _ segs: [[UInt8]]) -> Bool {
        let n = text.count
        if segs.count == 1 { return text.elementsEqual(segs[0]) }
        let first = segs[0], last = segs[segs.count - 1]
        guard n >= first.count + last.count, text.starts(with: first) else { return false }
        var pos = first.count
        let end = n - last.count
        guard text[end...].elementsEqual(last) else { return false }
        for k in 1..<(segs.count - 1) where !segs[k].isEmpty {
            guard let found = LikePattern.find(segs[k], failures[k], in: text, from: pos, to: end) else { return false }
            pos = found
        }
        return true
    }

    /// Knuth–Morris–Pratt: for each prefix of `p`, the length of its longest proper border.
    private static func failureTable(_ p: [UInt8]) -> [Int] {
        var f = [Int](repeating: 0, count: p.count)
        var k = 0
        for i in p.indices.dropFirst() {
            while k > 0 && p[i] != p[k] { k = f[k - 1] }
            if p[i] == p[k] { k += 1 }
            f[i] = k
        }
        return f
    }

    /// The end (exclusive) of the leftmost occurrence of `p` in `text[from..<to]`, or nil.
    private static func find(_ p: [UInt8], _ f: [Int], in text: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Int? {
        guard to - from >= p.count else { return nil }
        var k = 0
        var i = from
        while i < to {
            let b = text[i]
            while k > 0 && b != p[k] { k = f[k - 1] }
            if b == p[k] { k += 1 }
            i += 1
            if k == p.count { return i }
        }
        return nil
    }

    private func matchScalars(_ text: [Unicode.Scalar]) -> Bool {
        let n = text.count
        guard n >= minimumLength else { return false }
        func matchAt(_ seg: [Element], _ at: Int) -> Bool {
            for (k, e) in seg.enumerated() {
                if case .scalar(let c) = e, text[at + k] != c { return false }
            }
            return true
        }
        if segments.count == 1 { return n == segments[0].count && matchAt(segments[0], 0) }
        let first = segments[0], last = segments[segments.count - 1]
        guard matchAt(first, 0), matchAt(last, n - last.count) else { return false }
        var pos = first.count
        let end = n - last.count
        for k in 1..<(segments.count - 1) {
            guard let bitap = bitaps[k] else { continue }
            guard let found = bitap.firstEnd(in: text, from: pos, to: end) else { return false }
            pos = found
        }
        return true
    }
}

/// Finds a pattern of literal code points and `_` (nil) in a text by bit-parallel matching:
/// bit i of the state is set when the last i + 1 characters read match the first i + 1 of
/// the pattern.
private struct Bitap {
    let length: Int
    let words: Int
    /// Per character, the positions where it (or `_`) may stand.
    let masks: [Unicode.Scalar: [UInt64]]
    /// The positions of `_` (what any other character may match).
    let anyMask: [UInt64]

    init(_ pattern: [Unicode.Scalar?]) {
        length = pattern.count
        words = (pattern.count + 63) / 64
        var any = [UInt64](repeating: 0, count: words)
        for (i, c) in pattern.enumerated() where c == nil { any[i / 64] |= 1 << UInt64(i % 64) }
        var m: [Unicode.Scalar: [UInt64]] = [:]
        for (i, c) in pattern.enumerated() {
            guard let c else { continue }
            m[c, default: any][i / 64] |= 1 << UInt64(i % 64)
        }
        masks = m
        anyMask = any
    }

    /// The end (exclusive) of the leftmost occurrence inside `text[from..<to]`, or nil.
    func firstEnd(in text: [Unicode.Scalar], from: Int, to: Int) -> Int? {
        var state = [UInt64](repeating: 0, count: words)
        let top = UInt64(1) << UInt64((length - 1) % 64)
        var i = from
        while i < to {
            let mask = masks[text[i]] ?? anyMask
            var carry: UInt64 = 1
            for w in 0..<words {
                let next = state[w] >> 63
                state[w] = ((state[w] << 1) | carry) & mask[w]
                carry = next
            }
            i += 1
            if state[words - 1] & top != 0 { return i }
        }
        return nil
    }
}

/// `value LIKE pattern` on values (SPEC §5.6): MISSING → MISSING, NULL → NULL; a number on
/// the left matches as its text; any other non-string operand gives FALSE.
func likeMatch(_ value: Value, pattern: Value, collation: Collation) -> Value {
    if let u = propagateUnknown(value, pattern) { return u }
    let text: String
    switch value {
    case .string(let s): text = s
    case .int, .double: text = concatenationText(value)
    default: return .bool(false)
    }
    guard case .string(let p) = pattern else { return .bool(false) }
    return .bool(likeMatch(text, pattern: p, collation: collation))
}

/// One element of a LIKE pattern under a UNICODE collation.
enum LikeToken<C: Equatable>: Equatable {
    /// A character that must match.
    case literal(C)
    /// `_`
    case one
    /// `%`
    case any
}

/// Splits a pattern into tokens, resolving backslash escapes and merging runs of `%`.
func likeTokens<C: Equatable & LikeCharacter>(_ pattern: [C]) -> [LikeToken<C>] {
    var out: [LikeToken<C>] = []
    out.reserveCapacity(pattern.count)
    var i = 0
    while i < pattern.count {
        let c = pattern[i]
        if c.isLikeEscape, i + 1 < pattern.count {
            out.append(.literal(pattern[i + 1]))
            i += 2
            continue
        }
        if c.isLikeAny {
            if out.last != .any { out.append(.any) }
        } else if c.isLikeOne {
            out.append(.one)
        } else {
            out.append(.literal(c))
        }
        i += 1
    }
    return out
}

/// Greedy wildcard matching with backtracking to the last `%` (UNICODE collations; linear in
/// the common case, O(n·m) at worst).
func wildcardMatch<C>(_ text: [C], _ tokens: [LikeToken<C>], equal: (C, C) -> Bool) -> Bool {
    var t = 0, p = 0
    var starP = -1, starT = 0
    while t < text.count {
        if p < tokens.count {
            switch tokens[p] {
            case .any:
                starP = p
                starT = t
                p += 1
                continue
            case .one:
                t += 1
                p += 1
                continue
            case .literal(let c):
                if equal(text[t], c) {
                    t += 1
                    p += 1
                    continue
                }
            }
        }
        guard starP >= 0 else { return false }
        p = starP + 1
        starT += 1
        t = starT
    }
    while p < tokens.count, tokens[p] == .any { p += 1 }
    return p == tokens.count
}

/// Characters that can appear in a LIKE pattern.
protocol LikeCharacter {
    /// `\`
    var isLikeEscape: Bool { get }
    /// `%`
    var isLikeAny: Bool { get }
    /// `_`
    var isLikeOne: Bool { get }
}

extension Unicode.Scalar: LikeCharacter {
    var isLikeEscape: Bool { value == 92 }
    var isLikeAny: Bool { value == 37 }
    var isLikeOne: Bool { value == 95 }
}

extension Character: LikeCharacter {
    var isLikeEscape: Bool { self == "\\" }
    var isLikeAny: Bool { self == "%" }
    var isLikeOne: Bool { self == "_" }
}
