/// The total order of SPEC §5.4 used by ORDER BY, MIN/MAX, relational operators and index keys:
/// `MISSING < NULL < FALSE < TRUE < numbers < strings < arrays < objects`.
extension Value {
    /// Rank of the type in the total order.
    @inlinable
    var typeRank: Int {
        switch self {
        case .missing: 0
        case .null: 1
        case .bool(let b): b ? 3 : 2
        case .int, .double: 4
        case .string: 5
        case .array: 6
        case .object: 7
        }
    }

    /// Three-way comparison in SPEC §5.4 order; strings use `collation`.
    public static func compare(_ a: Value, _ b: Value, collation: Collation = .binary) -> Int {
        let ra = a.typeRank, rb = b.typeRank
        if ra != rb { return ra < rb ? -1 : 1 }
        switch (a, b) {
        case (.int(let x), .int(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.int(let x), .double(let y)): return -compareDoubleInt(y, x)
        case (.double(let x), .int(let y)): return compareDoubleInt(x, y)
        case (.double(let x), .double(let y)): return compareDoubles(x, y)
        case (.string(let x), .string(let y)):
            let c = collation.compare(x, y)
            return c < 0 ? -1 : (c == 0 ? 0 : 1)
        case (.array(let x), .array(let y)):
            let n = min(x.count, y.count)
            for i in 0..<n {
                let c = compare(x[i], y[i], collation: collation)
                if c != 0 { return c }
            }
            return x.count < y.count ? -1 : (x.count == y.count ? 0 : 1)
        case (.object(let x), .object(let y)):
            if x.count != y.count { return x.count < y.count ? -1 : 1 }
            let kx = x.keys.sorted(by: { compareBinary($0, $1) < 0 })
            let ky = y.keys.sorted(by: { compareBinary($0, $1) < 0 })
            for i in 0..<kx.count {
                let c = compareBinary(kx[i], ky[i])
                if c != 0 { return c < 0 ? -1 : 1 }
            }
            for k in kx {
                let c = compare(x[k]!, y[k]!, collation: collation)
                if c != 0 { return c }
            }
            return 0
        default:
            return 0 // same rank, no payload (missing, null, equal booleans)
        }
    }

    /// Structural equality under a collation (SQL++ `=` once MISSING has been handled).
    public static func equal(_ a: Value, _ b: Value, collation: Collation) -> Bool {
        if collation.isBinary { return a == b }
        return compare(a, b, collation: collation) == 0
    }
}

/// Orders doubles with NaN lowest among numbers (a total order).
@inlinable
func compareDoubles(_ x: Double, _ y: Double) -> Int {
    if x < y { return -1 }
    if x > y { return 1 }
    if x == y { return 0 }
    if x.isNaN { return y.isNaN ? 0 : -1 }
    return 1
}

/// Exact comparison of a double with an integer (no precision loss for large integers).
@inlinable
func compareDoubleInt(_ d: Double, _ i: Int64) -> Int {
    if d.isNaN { return -1 }
    if d < -9.223372036854775808e18 { return -1 }
    if d >= 9.223372036854775808e18 { return 1 }
    let t = d.rounded(.down)
    let ti = Int64(t)
    if ti < i { return -1 }
    if ti > i { return 1 }
    return d > t ? 1 : 0
}
