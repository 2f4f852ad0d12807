// Operator semantics of SPEC §5: truthiness, three-valued logic with MISSING, comparison,
// arithmetic. Pure functions over `Value`, shared by the compiler and the index code.

/// Three-valued truth with MISSING.
enum Truth {
    case `true`, `false`, missing

    var value: Value {
        switch self {
        case .true: .bool(true)
        case .false: .bool(false)
        case .missing: .missing
        }
    }
}

enum Semantics {
    /// SPEC §5.1 truthiness.
    @inline(__always)
    static func truth(_ v: Value) -> Truth {
        switch v {
        case .missing: return .missing
        case .bool(let b): return b ? .true : .false
        case .int(let i): return i != 0 ? .true : .false
        case .double(let d): return (d != 0 && !d.isNaN) ? .true : .false
        case .string(let s): return numericPrefixValue(s) != 0 ? .true : .false
        case .null, .array, .object: return .false
        }
    }

    /// The value of the longest leading numeric prefix of `s` (0 if none): `'2x'` → 2.
    static func numericPrefixValue(_ s: String) -> Double {
        let b = Array(s.utf8)
        var i = 0
        func digits() -> Int { let start = i; while i < b.count, b[i] >= 48, b[i] <= 57 { i += 1 }; return i - start }
        if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
        var n = digits()
        if i < b.count, b[i] == UInt8(ascii: ".") {
            let save = i
            i += 1
            let f = digits()
            if f == 0 && n == 0 { i = save }
            n += f
        }
        guard n > 0 else { return 0 }
        var end = i
        if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            if digits() > 0 { end = i }
        }
        return Double(String(decoding: b[0..<end], as: UTF8.self)) ?? 0
    }

    @inline(__always)
    static func and(_ a: Truth, _ b: Truth) -> Truth {
        if a == .false || b == .false { return .false }
        if a == .missing || b == .missing { return .missing }
        return .true
    }

    @inline(__always)
    static func or(_ a: Truth, _ b: Truth) -> Truth {
        if a == .true || b == .true { return .true }
        if a == .missing || b == .missing { return .missing }
        return .false
    }

    @inline(__always)
    static func not(_ a: Truth) -> Truth {
        switch a {
        case .true: .false
        case .false: .true
        case .missing: .missing
        }
    }

    /// `a = b` (SPEC §5.3): MISSING if either is MISSING, else structural equality.
    @inline(__always)
    static func equals(_ a: Value, _ b: Value, _ c: Collation) -> Value {
        if a.isMissing || b.isMissing { return .missing }
        return .bool(Value.equal(a, b, collation: c))
    }

    /// `< <= > >=`: MISSING → MISSING, NULL → NULL, else the §5.4 order.
    @inline(__always)
    static func relational(_ op: BinaryOperator, _ a: Value, _ b: Value, _ c: Collation) -> Value {
        if a.isMissing || b.isMissing { return .missing }
        if a.isNull || b.isNull { return .null }
        let r = Value.compare(a, b, collation: c)
        switch op {
        case .less: return .bool(r < 0)
        case .lessOrEqual: return .bool(r <= 0)
        case .greater: return .bool(r > 0)
        default: return .bool(r >= 0)
        }
    }

    /// `a IS b` for an arbitrary b: TRUE if both MISSING, FALSE if one is, else `a = b`.
    static func isOperator(_ a: Value, _ b: Value, _ c: Collation) -> Bool {
        if a.isMissing || b.isMissing { return a.isMissing && b.isMissing }
        return Value.equal(a, b, collation: c)
    }

    /// `IS [NOT] NULL/MISSING/VALUED` (SPEC §5.3 table).
    static func test(_ v: Value, _ kind: TestKind, negated: Bool) -> Value {
        switch kind {
        case .null:
            if v.isMissing { return .missing }
            return .bool(v.isNull != negated)
        case .missing:
            return .bool(v.isMissing != negated)
        case .valued:
            let valued = !v.isMissing && !v.isNull
            return .bool(valued != negated)
        }
    }

    /// Arithmetic (SPEC §5.5).
    static func arithmetic(_ op: BinaryOperator, _ a: Value, _ b: Value) -> Value {
        if a.isMissing || b.isMissing { return .missing }
        switch (a, b) {
        case (.int(let x), .int(let y)):
            switch op {
            case .add:
                let (r, o) = x.addingReportingOverflow(y)
                return o ? .double(Double(x) + Double(y)) : .int(r)
            case .subtract:
                let (r, o) = x.subtractingReportingOverflow(y)
                return o ? .double(Double(x) - Double(y)) : .int(r)
            case .multiply:
                let (r, o) = x.multipliedReportingOverflow(by: y)
                return o ? .double(Double(x) * Double(y)) : .int(r)
            case .divide:
                if y == 0 { return .missing }
                if x == .min && y == -1 { return .double(-Double(x)) }
                return .int(x / y)
            case .modulo:
                if y == 0 { return .missing }
                if y == -1 { return .int(0) }
                return .int(x % y)
            default: return .null
            }
        default:
            guard let x = a.doubleValue, let y = b.doubleValue else { return .null }
            switch op {
            case .add: return finite(x + y)
            case .subtract: return finite(x - y)
            case .multiply: return finite(x * y)
            case .divide:
                if y == 0 { return .missing }
                return finite(x / y)
            case .modulo:
                guard let xi = truncatedInt(x), let yi = truncatedInt(y) else { return .null }
                if yi == 0 { return .missing }
                if yi == -1 { return .int(0) }
                return .int(xi % yi)
            default: return .null
            }
        }
    }

    static func truncatedInt(_ d: Double) -> Int64? {
        let t = d.rounded(.towardZero)
        guard t.isFinite, t >= -9.223372036854775808e18, t < 9.223372036854775808e18 else { return nil }
        return Int64(t)
    }

    @inline(__always)
    static func finite(_ d: Double) -> Value { d.isFinite ? .double(d) : .null }

    /// Unary minus / plus.
    static func negate(_ v: Value) -> Value {
        switch v {
        case .missing: return .missing
        case .int(let i): return i == .min ? .double(-Double(i)) : .int(-i)
        case .double(let d): return .double(-d)
        default: return .null
        }
    }

    /// `x LIKE pattern` (SPEC §5.6).
    static func like(_ v: Value, _ p: Value, _ c: Collation) -> Value {
        if v.isMissing || p.isMissing { return .missing }
        if v.isNull || p.isNull { return .null }
        guard case .string(let pattern) = p else { return .bool(false) }
        return like(v, LikePattern(pattern, collation: c))
    }

    /// `x LIKE pattern` with the pattern (a non-null string) compiled.
    static func like(_ v: Value, _ pattern: LikePattern) -> Value {
        switch v {
        case .missing: return .missing
        case .null: return .null
        case .string(let s): return .bool(pattern.matches(s))
        case .int, .double: return .bool(pattern.matches(JSONWriter.string(v)))
        default: return .bool(false)
        }
    }

    /// `x IN (list)`: MISSING if x is; TRUE on a match; else MISSING if an element is; else FALSE.
    static func inList(_ x: Value, _ list: [Value], _ c: Collation) -> Truth {
        if x.isMissing { return .missing }
        var sawMissing = false
        for e in list {
            if e.isMissing { sawMissing = true; continue }
            if Value.equal(x, e, collation: c) { return .true }
        }
        return sawMissing ? .missing : .false
    }
}
