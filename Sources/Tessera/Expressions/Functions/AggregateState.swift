// SPEC §6.1: aggregate accumulators.

/// The running state of one aggregate over the rows of a group.
///
/// ```swift
/// var s = AggregateState(function: "AVG")
/// for v in [1, 2, .null, "x", 4] as [Value] { s.add(v) }
/// s.result()   // 2.333…
/// ```
///
/// - `COUNT(*)` / `COUNT()` (`countStar`): every row. `COUNT(e)`: rows where e is not MISSING
///   (NULL counts) [LC].
/// - `SUM(e)`, `AVG(e)`: numbers only, other values ignored [T]; none → NULL.
/// - `MIN(e)`, `MAX(e)`: smallest/largest non-MISSING, non-NULL value in SPEC §5.4 order;
///   none → NULL.
/// - `ARRAY_AGG(e)`: the array of non-MISSING values (NULLs kept), in row order.
struct AggregateState: Sendable {
    /// Which aggregate.
    enum Kind: Sendable, Hashable {
        /// `COUNT(*)` / `COUNT()`: rows.
        case countRows
        /// `COUNT(e)`: non-MISSING values.
        case count
        /// `SUM(e)`.
        case sum
        /// `AVG(e)`.
        case avg
        /// `MIN(e)`.
        case min
        /// `MAX(e)`.
        case max
        /// `ARRAY_AGG(e)`.
        case arrayAgg
    }

    /// Which aggregate this is.
    let kind: Kind
    private let collation: Collation
    private var rows: Int64 = 0
    private var sum = NumericSum()
    private var best: Value?
    private var items: [Value] = []

    /// Creates an empty accumulator.
    /// - Parameters:
    ///   - function: `COUNT`, `SUM`, `AVG`, `MIN`, `MAX` or `ARRAY_AGG` (any case).
    ///   - countStar: for COUNT, count rows (`COUNT(*)`) rather than non-MISSING values.
    ///   - collation: string order for MIN/MAX.
    init(function: String, countStar: Bool = false, collation: Collation = .binary) {
        switch FunctionRegistry.upperASCII(function) {
        case "COUNT": kind = countStar ? .countRows : .count
        case "SUM": kind = .sum
        case "AVG": kind = .avg
        case "MIN": kind = .min
        case "MAX": kind = .max
        case "ARRAY_AGG": kind = .arrayAgg
        default: preconditionFailure("\(function) is not an aggregate function")
        }
        self.collation = collation
    }

    /// Folds in one row's value (for `COUNT(*)`, pass anything).
    mutating func add(_ v: Value) {
        switch kind {
        case .countRows:
            rows += 1
        case .count:
            if !v.isMissing { rows += 1 }
        case .sum, .avg:
            sum.add(v)
        case .min, .max:
            guard !v.isMissing, !v.isNull else { return }
            if let b = best {
                let c = Value.compare(v, b, collation: collation)
                if kind == .max ? c > 0 : c < 0 { best = v }
            } else {
                best = v
            }
        case .arrayAgg:
            if !v.isMissing { items.append(v) }
        }
    }

    /// The aggregate's value for the rows added so far.
    /// Adds `n` rows to a `COUNT(*)` (the same as `n` calls of `add`).
    mutating func addRows(_ n: Int64) {
        precondition(kind == .countRows, "addRows is for COUNT(*)")
        rows &+= n
    }

    func result() -> Value {
        switch kind {
        case .countRows, .count: return .int(rows)
        case .sum: return sum.count == 0 ? .null : sum.value
        case .avg: return sum.average
        case .min, .max: return best ?? .null
        case .arrayAgg: return .array(items)
        }
    }
}
