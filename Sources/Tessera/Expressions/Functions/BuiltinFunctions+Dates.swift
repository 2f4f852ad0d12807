// SPEC §6.8: date functions. Any MISSING, NULL, invalid or wrongly typed input gives NULL
// [T]; an unusable format falls back to the default ISO-8601 output.

extension BuiltinFunctions {
    /// How MILLIS_TO_* choose the output offset.
    enum MillisOutput { case local, utc, offset }

    /// A parsed date argument.
    private static func dateArgument(_ v: Value) -> CivilDateTime? {
        guard case .string(let s) = v else { return nil }
        return CivilDateTime.parse(s)
    }

    /// A millisecond argument (numbers only; fractions truncated toward zero).
    private static func millisArgument(_ v: Value) -> Int64? {
        guard v.isNumber else { return nil }
        return truncatedInteger(v)
    }

    /// An offset-in-minutes argument, within ±24 hours.
    private static func offsetArgument(_ v: Value) -> Int? {
        guard v.isNumber, let m = truncatedInteger(v), Swift.abs(m) < 24 * 60 else { return nil }
        return Int(m)
    }

    /// The output format of an optional `fmt` argument (nil argument or unusable → default).
    private static func formatArgument(_ v: Value?) -> DateOutputFormat? {
        guard let v else { return .iso8601 }
        switch v {
        case .missing, .null: return nil
        case .string(let s): return DateOutputFormat.parse(s) ?? .iso8601
        default: return .iso8601
        }
    }

    /// `STR_TO_MILLIS(d)`: milliseconds since the epoch (zone-less input is local time).
    static func strToMillis(_ d: Value, _ ctx: FunctionContext) -> Value {
        guard let c = dateArgument(d) else { return .null }
        return .int(instant(of: c, defaultZone: ctx.timeZone))
    }

    /// `STR_TO_UTC(d [, fmt])` (`utc`) and `STR_TO_TZ(d, tzMin [, fmt])`.
    static func strToZone(_ d: Value, _ tz: Value?, _ fmt: Value?, _ ctx: FunctionContext, utc: Bool) -> Value {
        guard let c = dateArgument(d), let format = formatArgument(fmt) else { return .null }
        var offset = 0
        if !utc {
            guard let tz, let o = offsetArgument(tz) else { return .null }
            offset = o
        }
        return .string(format.format(millis: instant(of: c, defaultZone: ctx.timeZone), offsetMinutes: offset))
    }

    /// `MILLIS_TO_STR(ms [, fmt])` (local), `MILLIS_TO_UTC(ms [, fmt])`,
    /// `MILLIS_TO_TZ(ms, tzMin [, fmt])`.
    static func millisToString(_ ms: Value, _ tz: Value?, _ fmt: Value?, _ ctx: FunctionContext, mode: MillisOutput) -> Value {
        guard let millis = millisArgument(ms), let format = formatArgument(fmt) else { return .null }
        let offset: Int
        switch mode {
        case .local: offset = ctx.timeZone.offsetMinutes(atMillis: millis)
        case .utc: offset = 0
        case .offset:
            guard let tz, let o = offsetArgument(tz) else { return .null }
            offset = o
        }
        return .string(format.format(millis: millis, offsetMinutes: offset))
    }

    /// `DATE_DIFF_STR(d1, d2, part)`: boundaries of `part` from d2 to d1, on the wall-clock
    /// fields as written (offsets ignored).
    static func dateDiffStr(_ d1: Value, _ d2: Value, _ part: Value) -> Value {
        guard let a = dateArgument(d1), let b = dateArgument(d2), let p = DatePart(part) else { return .null }
        return .int(dateDifference(a, b, part: p))
    }

    /// `DATE_DIFF_MILLIS(m1, m2, part)`: as DATE_DIFF_STR on the UTC fields of the instants.
    static func dateDiffMillis(_ m1: Value, _ m2: Value, _ part: Value) -> Value {
        guard let a = millisArgument(m1), let b = millisArgument(m2), let p = DatePart(part) else { return .null }
        return .int(dateDifference(CivilDateTime(millis: a, offsetMinutes: 0), CivilDateTime(millis: b, offsetMinutes: 0), part: p))
    }

    /// `DATE_ADD_STR(d, n, part [, fmt])`: a date string, written at the input's offset
    /// (zone-less input is UTC).
    static func dateAddStr(_ d: Value, _ n: Value, _ part: Value, _ fmt: Value?) -> Value {
        guard let c = dateArgument(d), n.isNumber, let amount = truncatedInteger(n), let p = DatePart(part),
              let format = formatArgument(fmt)
        else { return .null }
        let offset = c.offsetMinutes ?? 0
        guard let result = dateAdd(c, amount, part: p, offsetMinutes: offset) else { return .null }
        return .string(format.format(millis: result, offsetMinutes: offset))
    }

    /// `DATE_ADD_MILLIS(ms, n, part)`: milliseconds since the epoch, calendar parts added on
    /// the UTC fields.
    static func dateAddMillis(_ ms: Value, _ n: Value, _ part: Value) -> Value {
        guard let millis = millisArgument(ms), n.isNumber, let amount = truncatedInteger(n), let p = DatePart(part) else { return .null }
        guard let r = dateAdd(CivilDateTime(millis: millis, offsetMinutes: 0), amount, part: p, offsetMinutes: 0) else { return .null }
        return .int(r)
    }
}
