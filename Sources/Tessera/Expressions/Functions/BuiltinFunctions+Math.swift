#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// SPEC §6.4: math. Non-numbers give NULL, and so does any non-finite result (`SQRT(-1)`,
// `LN(0)`, `ACOS(3)`). Results are Doubles whatever the arguments' types (`1 / ABS(-4)` is
// 0.25), as in Couchbase Lite; only IDIV gives an integer. `-0.0` is kept (IEEE 754).

/// How ROUND, ROUND_EVEN and TRUNC treat the dropped digits.
enum DecimalRounding: Sendable {
    /// Halves away from zero (ROUND).
    case halfAwayFromZero
    /// Halves to the even neighbour (ROUND_EVEN).
    case halfEven
    /// Drop them (TRUNC).
    case towardZero
}

extension BuiltinFunctions {
    /// A one-argument function of a double.
    static func unaryMath(_ v: Value, _ op: (Double) -> Double) -> Value {
        if let u = propagateUnknown(v) { return u }
        guard let x = v.doubleValue else { return .null }
        return numberResult(op(x))
    }

    /// A two-argument function of doubles.
    static func binaryMath(_ a: Value, _ b: Value, _ op: (Double, Double) -> Double) -> Value {
        if let u = propagateUnknown(a, b) { return u }
        guard let x = a.doubleValue, let y = b.doubleValue else { return .null }
        return numberResult(op(x, y))
    }

    /// `ABS(x)`.
    static func abs(_ v: Value) -> Value {
        switch v {
        case .missing, .null: return v
        case .int(let i): return .double(Swift.abs(Double(i)))
        case .double(let d): return numberResult(Swift.abs(d))
        default: return .null
        }
    }

    /// `CEIL(x)` / `FLOOR(x)`.
    static func integralRounding(_ v: Value, _ rule: FloatingPointRoundingRule) -> Value {
        switch v {
        case .missing, .null: return v
        case .int(let i): return .double(Double(i))
        case .double(let d): return numberResult(d.rounded(rule))
        default: return .null
        }
    }

    /// `SIGN(x)`: -1, 0 or 1.
    static func sign(_ v: Value) -> Value {
        switch v {
        case .missing, .null: return v
        case .int(let i): return .double(i > 0 ? 1 : (i < 0 ? -1 : 0))
        case .double(let d):
            if d.isNaN { return .null }
            return .double(d > 0 ? 1 : (d < 0 ? -1 : 0))
        default: return .null
        }
    }

    /// `POWER(b, e)` = bᵉ, a Double (exact for integers whose power fits in 64 bits).
    static func power(_ b: Value, _ e: Value) -> Value {
        if let u = propagateUnknown(b, e) { return u }
        guard let x = b.doubleValue, let y = e.doubleValue else { return .null }
        if case .int(let base) = b, case .int(let exp) = e, exp >= 0, let exact = exactIntegerPower(base, exp) {
            return .double(Double(exact))
        }
        return numberResult(pow(x, y))
    }

    /// bᵉ in Int64, or nil on overflow.
    private static func exactIntegerPower(_ base: Int64, _ exp: Int64) -> Int64? {
        var result: Int64 = 1, b = base, e = exp
        while e > 0 {
            if e & 1 == 1 {
                let (r, o) = result.multipliedReportingOverflow(by: b)
                if o { return nil }
                result = r
            }
            e >>= 1
            if e > 0 {
                let (sq, o) = b.multipliedReportingOverflow(by: b)
                if o { return nil }
                b = sq
            }
        }
        return result
    }

    /// `DIV(a, b)`: floating-point division; a zero divisor gives NULL.
    static func div(_ a: Value, _ b: Value) -> Value {
        if let u = propagateUnknown(a, b) { return u }
        guard let x = a.doubleValue, let y = b.doubleValue, y != 0 else { return .null }
        return numberResult(x / y)
    }

    /// `IDIV(a, b)`: both truncated to integers, then integer division toward zero; a zero
    /// (truncated) divisor gives NULL: `IDIV(-3.9, 2.1)` → -1, `IDIV(1, 0.99)` → NULL.
    static func idiv(_ a: Value, _ b: Value) -> Value {
        if let u = propagateUnknown(a, b) { return u }
        guard a.isNumber, b.isNumber, let x = truncatedInteger(a), let y = truncatedInteger(b), y != 0 else { return .null }
        let (q, overflow) = x.dividedReportingOverflow(by: y)
        return overflow ? .double(-Double(x)) : .int(q)
    }

    /// `ROUND(x [, d])`, `ROUND_EVEN(x [, d])`, `TRUNC(x [, d])`: x to d decimal places
    /// (default 0; negative d rounds left of the point). Decimal rounding works on the
    /// shortest decimal text of x, so `ROUND(1.85, 1)` → 1.9 and `ROUND(2.675, 2)` → 2.68,
    /// as written, despite binary representation error.
    static func round(_ args: [Value], mode: DecimalRounding) -> Value {
        if let u = propagateUnknown(args) { return u }
        guard args[0].isNumber else { return .null }
        var digits: Int64 = 0
        if args.count > 1 {
            guard args[1].isNumber, let d = truncatedInteger(args[1]) else { return .null }
            digits = Swift.max(-400, Swift.min(400, d))
        }
        switch args[0] {
        case .int(let i):
            if digits >= 0 { return .double(Double(i)) }
            if let r = roundInteger(i, places: Int(-digits), mode: mode) { return .double(Double(r)) }
            return roundDouble(Double(i), digits: Int(digits), mode: mode)
        case .double(let d):
            return roundDouble(d, digits: Int(digits), mode: mode)
        default:
            return .null
        }
    }

    /// Exact integer rounding to a multiple of 10^places; nil when it does not fit.
    private static func roundInteger(_ x: Int64, places: Int, mode: DecimalRounding) -> Int64? {
        guard places <= 18 else { return x == 0 ? 0 : nil }
        var p: Int64 = 1
        for _ in 0..<places { p *= 10 }
        var q = x / p
        let r = x % p
        let twice = Swift.abs(r) * 2
        let up: Bool
        switch mode {
        case .towardZero: up = false
        case .halfAwayFromZero: up = twice >= p
        case .halfEven: up = twice > p || (twice == p && q % 2 != 0)
        }
        if up { q += x < 0 ? -1 : 1 }
        let (v, o) = q.multipliedReportingOverflow(by: p)
        return o ? nil : v
    }

    /// Decimal rounding of a double through its shortest round-trip digits.
    static func roundDouble(_ x: Double, digits: Int, mode: DecimalRounding) -> Value {
        guard x.isFinite else { return .null }
        if x == 0 { return .double(x) }
        // x = ±D × 10^exp with D the shortest decimal digit string.
        let (negative, allDigits, exponent) = decimalDigits(of: x)
        // Digits to drop so that the result has `digits` decimals.
        let drop = -(exponent + digits)
        if drop <= 0 { return numberResult(x) }
        var kept: [UInt8]
        var firstDropped: UInt8 = 0
        var restNonZero = false
        if drop > allDigits.count {
            kept = []
            // Everything is dropped; the first dropped digit is a leading zero unless the
            // digit string reaches exactly the rounding position.
            firstDropped = 0
            restNonZero = allDigits.contains { $0 != 0 }
        } else {
            kept = Array(allDigits[0..<(allDigits.count - drop)])
            firstDropped = allDigits[allDigits.count - drop]
            restNonZero = allDigits[(allDigits.count - drop + 1)...].contains { $0 != 0 }
        }
        let lastKeptOdd = (kept.last ?? 0) % 2 == 1
        let roundUp: Bool
        switch mode {
        case .towardZero: roundUp = false
        case .halfAwayFromZero: roundUp = firstDropped >= 5
        case .halfEven: roundUp = firstDropped > 5 || (firstDropped == 5 && (restNonZero || lastKeptOdd))
        }
        if roundUp {
            var i = kept.count - 1
            var carry = true
            while carry && i >= 0 {
                if kept[i] == 9 { kept[i] = 0; i -= 1 } else { kept[i] += 1; carry = false }
            }
            if carry { kept.insert(1, at: 0) }
        }
        // Everything rounded away: zero, with x's sign (`ROUND(-0.3)` → -0.0).
        if kept.isEmpty || kept.allSatisfy({ $0 == 0 }) { return .double(negative ? -0.0 : 0.0) }
        var text = negative ? "-" : ""
        for k in kept { text.append(Character(Unicode.Scalar(48 + k))) }
        text += "e\(-digits)"
        guard let r = Double(text) else { return .null }
        return numberResult(r)
    }

    /// The sign, the decimal digits (values 0–9, no leading zeros) and the exponent of the
    /// last digit of the shortest round-trip text of a finite non-zero double.
    static func decimalDigits(of x: Double) -> (negative: Bool, digits: [UInt8], exponent: Int) {
        let text = Swift.abs(x).description // e.g. "1.85", "1e-05", "1.2345e+20", "120.0"
        var mantissa = Substring(text)
        var exp = 0
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = text[..<e]
            exp = Int(text[text.index(after: e)...]) ?? 0
        }
        var digits: [UInt8] = []
        var fractionDigits = 0
        var afterPoint = false
        for ch in mantissa.utf8 {
            if ch == UInt8(ascii: ".") { afterPoint = true; continue }
            digits.append(ch - 48)
            if afterPoint { fractionDigits += 1 }
        }
        exp -= fractionDigits
        while digits.count > 1, digits.last == 0 { digits.removeLast(); exp += 1 }
        while digits.count > 1, digits.first == 0 { digits.removeFirst() }
        return (x < 0, digits, exp)
    }
}
