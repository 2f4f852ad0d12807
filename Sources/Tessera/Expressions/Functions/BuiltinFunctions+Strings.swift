import CICU

// SPEC §6.5: string functions. Non-strings give NULL.

extension BuiltinFunctions {
    /// `CONTAINS(s, sub)`: TRUE if `sub` occurs in `s` under the active collation (binary:
    /// code points; NOCASE: ASCII case folded; UNICODE: collation-aware search).
    static func contains(_ s: Value, _ sub: Value, collation: Collation) -> Value {
        if let u = propagateUnknown(s, sub) { return u }
        guard case .string(let text) = s, case .string(let pattern) = sub else { return .null }
        return .bool(stringContains(text, pattern, collation: collation))
    }

    /// `LENGTH(s)`: the number of code points.
    static func length(_ v: Value) -> Value {
        switch v {
        case .missing, .null: return v
        case .string(let s): return .int(Int64(s.unicodeScalars.count))
        default: return .null
        }
    }

    /// `LOWER(s)`: full Unicode lower-case mapping in the root locale, with its context rules
    /// (a word-final `Σ` becomes `ς`).
    static func lower(_ v: Value) -> Value {
        switch v {
        case .missing, .null: return v
        case .string(let s): return .string(unicodeCaseMap(s, upper: false))
        default: return .null
        }
    }

    /// `UPPER(s)`: full Unicode upper-case mapping in the root locale (`ß` → `SS`).
    static func upper(_ v: Value) -> Value {
        switch v {
        case .missing, .null: return v
        case .string(let s): return .string(unicodeCaseMap(s, upper: true))
        default: return .null
        }
    }

    /// `LTRIM`, `RTRIM`, `TRIM`: strip Unicode white space from one or both ends.
    static func trim(_ v: Value, leading: Bool, trailing: Bool) -> Value {
        switch v {
        case .missing, .null: return v
        case .string(let s):
            let scalars = s.unicodeScalars
            var start = scalars.startIndex, end = scalars.endIndex
            if leading {
                while start < end, scalars[start].properties.isWhitespace { start = scalars.index(after: start) }
            }
            if trailing {
                while end > start {
                    let before = scalars.index(before: end)
                    guard scalars[before].properties.isWhitespace else { break }
                    end = before
                }
            }
            return .string(String(scalars[start..<end]))
        default: return .null
        }
    }
}

/// Full Unicode case mapping (ICU, root locale); ASCII-only strings take a fast path.
func unicodeCaseMap(_ s: String, upper: Bool) -> String {
    if s.utf8.allSatisfy({ $0 < 0x80 }) {
        var bytes = Array(s.utf8)
        for i in bytes.indices {
            let b = bytes[i]
            if upper, b >= 97, b <= 122 { bytes[i] = b - 32 } else if !upper, b >= 65, b <= 90 { bytes[i] = b + 32 }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
    let src = Array(s.utf16)
    var capacity = src.count + src.count / 2 + 8
    while true {
        var dest = [UInt16](repeating: 0, count: capacity)
        let n = src.withUnsafeBufferPointer { sp in
            dest.withUnsafeMutableBufferPointer { dp in
                tessera_case_map(upper ? 1 : 0, dp.baseAddress, Int32(dp.count), sp.baseAddress, Int32(sp.count))
            }
        }
        guard n >= 0 else { return upper ? s.uppercased() : s.lowercased() }
        if Int(n) > capacity { capacity = Int(n); continue }
        return String(decoding: dest[0..<Int(n)], as: UTF16.self)
    }
}

/// Substring test under a collation (used by `CONTAINS`).
func stringContains(_ text: String, _ pattern: String, collation: Collation) -> Bool {
    if collation.unicode { return UnicodeCollator.contains(text, pattern, collation: collation) }
    if collation.ignoreCase { return binaryContains(asciiLowercased(text), asciiLowercased(pattern)) }
    return binaryContains(text, pattern)
}

/// `s` with ASCII capitals replaced by small letters (other characters unchanged).
func asciiLowercased(_ s: String) -> String {
    guard s.utf8.contains(where: { $0 >= 65 && $0 <= 90 }) else { return s }
    var bytes = Array(s.utf8)
    for i in bytes.indices where bytes[i] >= 65 && bytes[i] <= 90 { bytes[i] += 32 }
    return String(decoding: bytes, as: UTF8.self)
}

// MARK: - Concatenation

/// `a || b` (SPEC §5.5): MISSING if either operand is MISSING; otherwise the texts of both
/// joined — numbers and booleans as text (`99`, `123.45`, `true`), NULL as `null`, arrays
/// and objects as JSON [LC].
///
/// ```swift
/// concatenate("n=", 99)        // "n=99"
/// concatenate("x", .missing)   // MISSING
/// ```
func concatenate(_ a: Value, _ b: Value) -> Value {
    if a.isMissing || b.isMissing { return .missing }
    if case .string(let x) = a, case .string(let y) = b { return .string(x + y) }
    return .string(concatenationText(a) + concatenationText(b))
}

/// `CONCAT(a, b, …)`: `a || b || …` over all arguments.
func concatenate(_ values: [Value]) -> Value {
    var out = ""
    for v in values {
        if v.isMissing { return .missing }
        out += concatenationText(v)
    }
    return .string(out)
}
