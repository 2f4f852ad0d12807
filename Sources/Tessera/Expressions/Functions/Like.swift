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
    if collation.unicode {
        let tokens = likeTokens(pattern.map { $0 })
        let text = s.map { $0 }
        return wildcardMatch(text, tokens) { a, b in
            let x = String(a), y = String(b)
            return x.utf8.elementsEqual(y.utf8) || collation.compare(x, y) == 0
        }
    }
    var patternScalars = Array(pattern.unicodeScalars)
    var textScalars = Array(s.unicodeScalars)
    if collation.ignoreCase {
        func fold(_ c: Unicode.Scalar) -> Unicode.Scalar {
            c.value >= 65 && c.value <= 90 ? Unicode.Scalar(c.value + 32)! : c
        }
        // Fold after escapes are recognised: a backslash is not a letter, so folding first is safe.
        patternScalars = patternScalars.map(fold)
        textScalars = textScalars.map(fold)
    }
    return wildcardMatch(textScalars, likeTokens(patternScalars)) { $0 == $1 }
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

/// One element of a compiled LIKE pattern.
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

/// Greedy wildcard matching with backtracking to the last `%` (linear in the common case,
/// O(n·m) at worst).
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
