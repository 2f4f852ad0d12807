// Helpers shared by the built-in functions: MISSING/NULL propagation, number results and the
// text form of values used by `||`, CONCAT and TOSTRING.

/// MISSING if any argument is MISSING, else NULL if any is NULL, else nil (SPEC §6 defaults).
@inline(__always)
func propagateUnknown(_ args: [Value]) -> Value? {
    var sawNull = false
    for a in args {
        switch a {
        case .missing: return .missing
        case .null: sawNull = true
        default: break
        }
    }
    return sawNull ? .null : nil
}

/// The one-argument form of ``propagateUnknown(_:)``.
@inline(__always)
func propagateUnknown(_ a: Value) -> Value? {
    switch a {
    case .missing: return .missing
    case .null: return .null
    default: return nil
    }
}

/// The two-argument form of ``propagateUnknown(_:)``.
@inline(__always)
func propagateUnknown(_ a: Value, _ b: Value) -> Value? {
    if a.isMissing || b.isMissing { return .missing }
    if a.isNull || b.isNull { return .null }
    return nil
}

/// A numeric result: NULL when not finite (SPEC §6.4), an integer when integral and in range,
/// and never a negative zero.
@inline(__always)
func numberResult(_ d: Double) -> Value {
    d.isFinite ? .double(d) : .null
}

/// The text of a value inside a string concatenation (SPEC §5.5): strings as they are,
/// numbers in shortest round-trip form, `true`/`false`, `null`, arrays and objects as JSON.
/// MISSING has no text (callers handle it first).
func concatenationText(_ v: Value) -> String {
    switch v {
    case .string(let s): return s
    case .int(let i): return String(i)
    case .double(let d): return numberText(d)
    default: return JSONWriter.string(v)
    }
}

/// Shortest round-trip text of a double (`4.5`, `1e+20`), with `.0` when it is integral
/// (`2.0`, `-0.0`, `1426400835383.0`), as SPEC §5.5 and Couchbase Lite print Doubles.
func numberText(_ d: Double) -> String {
    if d.isNaN { return "NaN" }
    if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
    var out: [UInt8] = []
    JSONWriter.writeDouble(d, into: &out)
    if !out.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
        out.append(contentsOf: [UInt8(ascii: "."), UInt8(ascii: "0")])
    }
    return String(decoding: out, as: UTF8.self)
}

/// An integer argument: an Int64, or a finite double truncated toward zero; nil otherwise.
func truncatedInteger(_ v: Value) -> Int64? {
    switch v {
    case .int(let i): return i
    case .double(let d):
        guard d.isFinite else { return nil }
        let t = d.rounded(.towardZero)
        guard t >= -9.223372036854775808e18, t < 9.223372036854775808e18 else { return nil }
        return Int64(t)
    default: return nil
    }
}

/// The argument at `index` when present. (Spelled out because `Value` is
/// `ExpressibleByNilLiteral`: a bare `nil` next to a `Value` would become NULL, not "absent".)
@inline(__always)
func optionalArgument(_ args: [Value], _ index: Int) -> Value? {
    index < args.count ? Optional.some(args[index]) : Optional.none
}
