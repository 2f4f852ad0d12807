// SPEC §5.1: how a value acts as a condition (WHERE, HAVING, ON, WHEN, SATISFIES and the
// operands of AND/OR/NOT).

/// The truth value of `v` as a condition: TRUE, FALSE or MISSING.
///
/// Booleans are themselves; a number is TRUE when non-zero and not NaN; a string is TRUE when
/// its longest leading numeric prefix is non-zero (`'1'`, `'2x'` TRUE; `'abc'`, `''`, `'0'`
/// FALSE); NULL, arrays and objects are FALSE; MISSING stays MISSING.
func isTruthy(_ v: Value) -> Value {
    switch v {
    case .missing: return .missing
    case .null: return .bool(false)
    case .bool: return v
    case .int(let i): return .bool(i != 0)
    case .double(let d): return .bool(d != 0 && !d.isNaN)
    case .string(let s): return .bool(leadingNumber(s) != 0)
    case .array, .object: return .bool(false)
    }
}

/// The value of the longest numeric prefix of `s` (after leading white space), as SQLite
/// reads a string in a numeric context: sign, digits, optional fraction, optional exponent.
/// 0 when there is none.
func leadingNumber(_ s: String) -> Double {
    let b = Array(s.utf8)
    var i = 0
    while i < b.count, b[i] == 32 || (b[i] >= 9 && b[i] <= 13) { i += 1 }
    let start = i
    if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
    var digits = 0
    while i < b.count, b[i] >= 48 && b[i] <= 57 { i += 1; digits += 1 }
    if i < b.count, b[i] == UInt8(ascii: ".") {
        var j = i + 1
        var frac = 0
        while j < b.count, b[j] >= 48 && b[j] <= 57 { j += 1; frac += 1 }
        if frac > 0 || digits > 0 { i = j; digits += frac }
    }
    guard digits > 0 else { return 0 }
    if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
        var j = i + 1
        if j < b.count, b[j] == UInt8(ascii: "+") || b[j] == UInt8(ascii: "-") { j += 1 }
        var expDigits = 0
        while j < b.count, b[j] >= 48 && b[j] <= 57 { j += 1; expDigits += 1 }
        if expDigits > 0 { i = j }
    }
    return Double(String(decoding: b[start..<i], as: UTF8.self)) ?? 0
}
