// SPEC §6.7: type tests and conversions.

extension BuiltinFunctions {
    /// `ISARRAY` … `ISSTRING`: MISSING → MISSING, NULL → NULL, else whether `test` holds.
    static func typeTest(_ v: Value, _ test: (Value) -> Bool) -> Value {
        if let u = propagateUnknown(v) { return u }
        return .bool(test(v))
    }

    /// `TOARRAY(v)`: an array is itself; anything else is wrapped, `[v]`.
    static func toArray(_ v: Value) -> Value {
        switch v {
        case .missing, .null, .array: return v
        default: return .array([v])
        }
    }

    /// `TOATOM(v)`: booleans, numbers, strings are themselves; a one-element array gives its
    /// element and a one-member object its value; anything else NULL.
    static func toAtom(_ v: Value) -> Value {
        switch v {
        case .missing, .null, .bool, .int, .double, .string: return v
        case .array(let a): return a.count == 1 ? a[0] : .null
        case .object(let o): return o.count == 1 ? o.first!.value : .null
        }
    }

    /// `TOBOOLEAN(v)`: FALSE for false, 0, NaN, `""`, `[]` and `{}`; TRUE otherwise.
    static func toBoolean(_ v: Value) -> Value {
        switch v {
        case .missing, .null: return v
        case .bool: return v
        case .int(let i): return .bool(i != 0)
        case .double(let d): return .bool(d != 0 && !d.isNaN)
        case .string(let s): return .bool(!s.isEmpty)
        case .array(let a): return .bool(!a.isEmpty)
        case .object(let o): return .bool(!o.isEmpty)
        }
    }

    /// `TONUMBER(v)`: false → 0, true → 1, numbers themselves, a numeric string → its number
    /// (an integer when written as one and in range), anything else NULL.
    static func toNumber(_ v: Value) -> Value {
        switch v {
        case .missing, .null, .int, .double: return v
        case .bool(let b): return .int(b ? 1 : 0)
        case .string(let s): return parseNumber(s) ?? .null
        default: return .null
        }
    }

    /// `TOOBJECT(v)`: an object is itself; anything else is `{}`.
    static func toObject(_ v: Value) -> Value {
        switch v {
        case .missing, .null, .object: return v
        default: return .object([:])
        }
    }

    /// `TOSTRING(v)`: `"true"`/`"false"`, numbers in shortest round-trip text, strings
    /// themselves, arrays and objects NULL.
    static func toStringValue(_ v: Value) -> Value {
        switch v {
        case .missing, .null, .string: return v
        case .bool(let b): return .string(b ? "true" : "false")
        case .int(let i): return .string(String(i))
        case .double(let d): return d.isFinite ? .string(numberText(d)) : .null
        case .array, .object: return .null
        }
    }

    /// A number written as a whole string (surrounding white space allowed): optional sign,
    /// digits with an optional fraction (or a fraction alone), optional exponent. Integers
    /// stay integers when they fit; non-finite values are rejected.
    static func parseNumber(_ s: String) -> Value? {
        let b = Array(s.utf8)
        var lo = 0, hi = b.count
        func isSpace(_ c: UInt8) -> Bool { c == 32 || (c >= 9 && c <= 13) }
        while lo < hi, isSpace(b[lo]) { lo += 1 }
        while hi > lo, isSpace(b[hi - 1]) { hi -= 1 }
        var i = lo
        if i < hi, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
        var intDigits = 0, fracDigits = 0
        while i < hi, b[i] >= 48 && b[i] <= 57 { i += 1; intDigits += 1 }
        var integral = true
        if i < hi, b[i] == UInt8(ascii: ".") {
            integral = false
            i += 1
            while i < hi, b[i] >= 48 && b[i] <= 57 { i += 1; fracDigits += 1 }
        }
        guard intDigits + fracDigits > 0 else { return nil }
        if i < hi, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            integral = false
            i += 1
            if i < hi, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            var expDigits = 0
            while i < hi, b[i] >= 48 && b[i] <= 57 { i += 1; expDigits += 1 }
            guard expDigits > 0 else { return nil }
        }
        guard i == hi else { return nil }
        var text = String(decoding: b[lo..<hi], as: UTF8.self)
        if text.hasPrefix("+") { text.removeFirst() }
        if integral, let n = Int64(text) { return .int(n) }
        guard let d = Double(text), d.isFinite else { return nil }
        return .double(d)
    }
}
