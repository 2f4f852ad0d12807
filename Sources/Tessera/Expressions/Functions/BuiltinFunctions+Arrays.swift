// SPEC §6.2: array functions. A non-array argument gives NULL; MISSING gives MISSING and NULL
// gives NULL, for these too ([T]: CBL gives 0 for some of them).

extension BuiltinFunctions {
    /// The array payload, or the value the function returns instead (MISSING, NULL).
    @inline(__always)
    static func arrayArgument(_ v: Value) -> Swift.Result<[Value], ValueResult> {
        switch v {
        case .array(let a): return .success(a)
        case .missing: return .failure(ValueResult(.missing))
        default: return .failure(ValueResult(.null))
        }
    }

    /// `ARRAY_CONTAINS(arr, v)`: TRUE if an element `=` v (type-strict, numbers by value).
    static func arrayContains(_ arr: Value, _ v: Value) -> Value {
        if let u = propagateUnknown(arr, v) { return u }
        guard case .array(let a) = arr else { return .null }
        return .bool(a.contains { $0 == v })
    }

    /// `ARRAY_COUNT(arr)`: the number of non-NULL elements.
    static func arrayCount(_ arr: Value) -> Value {
        switch arrayArgument(arr) {
        case .failure(let r): return r.value
        case .success(let a): return .int(Int64(a.reduce(0) { $1.isNull ? $0 : $0 + 1 }))
        }
    }

    /// `ARRAY_LENGTH(arr)`: the number of elements.
    static func arrayLength(_ arr: Value) -> Value {
        switch arrayArgument(arr) {
        case .failure(let r): return r.value
        case .success(let a): return .int(Int64(a.count))
        }
    }

    /// `ARRAY_SUM(arr)`: the sum of the numeric elements, 0 when there are none.
    static func arraySum(_ arr: Value) -> Value {
        switch arrayArgument(arr) {
        case .failure(let r): return r.value
        case .success(let a):
            var sum = NumericSum()
            for e in a { sum.add(e) }
            return sum.count == 0 ? .int(0) : sum.value
        }
    }

    /// `ARRAY_AVG(arr)`: the mean of the numeric elements, NULL when there are none [T].
    static func arrayAvg(_ arr: Value) -> Value {
        switch arrayArgument(arr) {
        case .failure(let r): return r.value
        case .success(let a):
            var sum = NumericSum()
            for e in a { sum.add(e) }
            return sum.average
        }
    }

    /// `ARRAY_MAX` / `ARRAY_MIN`: the largest/smallest non-NULL element in SPEC §5.4 order,
    /// NULL when there is none [T].
    static func arrayMinMax(_ arr: Value, max: Bool) -> Value {
        switch arrayArgument(arr) {
        case .failure(let r): return r.value
        case .success(let a):
            var best: Value?
            for e in a where !e.isNull && !e.isMissing {
                if let b = best {
                    let c = Value.compare(e, b)
                    if max ? c > 0 : c < 0 { best = e }
                } else {
                    best = e
                }
            }
            return best ?? .null
        }
    }

    /// `ARRAY_IFNULL(arr)`: the first non-NULL element, else NULL.
    static func arrayIfNull(_ arr: Value) -> Value {
        switch arrayArgument(arr) {
        case .failure(let r): return r.value
        case .success(let a): return a.first { !$0.isNull && !$0.isMissing } ?? .null
        }
    }

    /// `ARRAY_OF(e, …)`: the array of the arguments; MISSING ones are dropped, as in an array
    /// literal [LC].
    static func arrayOf(_ args: [Value]) -> Value {
        .array(args.filter { !$0.isMissing })
    }
}

/// A `Value` wrapped so it can be the failure of a `Result`.
struct ValueResult: Error {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Exact running sum of numbers: integers stay integers until a double appears or the sum
/// overflows, then it continues in floating point.
struct NumericSum: Sendable {
    private var intSum: Int64 = 0
    private var doubleSum: Double = 0
    private var isDouble = false
    /// How many numbers were added.
    private(set) var count = 0

    /// Adds `v` if it is a number; ignores anything else.
    mutating func add(_ v: Value) {
        switch v {
        case .int(let i):
            count += 1
            if isDouble { doubleSum += Double(i); return }
            let (s, overflow) = intSum.addingReportingOverflow(i)
            if overflow {
                isDouble = true
                doubleSum = Double(intSum) + Double(i)
            } else {
                intSum = s
            }
        case .double(let d):
            count += 1
            if !isDouble { isDouble = true; doubleSum = Double(intSum) }
            doubleSum += d
        default:
            break
        }
    }

    /// The sum (0 when empty).
    var value: Value { isDouble ? numberResult(doubleSum) : .int(intSum) }

    /// The mean, NULL when empty.
    var average: Value {
        guard count > 0 else { return .null }
        let total = isDouble ? doubleSum : Double(intSum)
        return numberResult(total / Double(count))
    }
}
