#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Date parsing, calendar arithmetic and formatting for SPEC §6.8, in proleptic Gregorian
// civil time. Instants are milliseconds since the Unix epoch; the local zone comes from the
// C library (`tzset` + `localtime_r`/`mktime`), so the `TZ` environment variable applies.

/// Wall-clock fields of a date string, with the offset it was written with (if any).
struct CivilDateTime: Sendable, Equatable {
    var year: Int
    var month: Int
    var day: Int
    var hour = 0
    var minute = 0
    var second = 0
    var millisecond = 0
    /// The written offset in minutes east of UTC; nil when the string has no zone.
    var offsetMinutes: Int?

    /// Milliseconds of these fields read as UTC (ignoring `offsetMinutes`).
    var wallMillis: Int64 {
        let days = daysFromCivil(year, month, day)
        return ((days * 24 + Int64(hour)) * 60 + Int64(minute)) * 60_000 + Int64(second) * 1000 + Int64(millisecond)
    }

    /// The fields of the instant `millis` seen at `offsetMinutes` from UTC.
    init(millis: Int64, offsetMinutes: Int) {
        let local = millis + Int64(offsetMinutes) * 60_000
        let days = floorDiv(local, 86_400_000)
        let rest = local - days * 86_400_000
        let (y, m, d) = civilFromDays(days)
        year = y; month = m; day = d
        hour = Int(rest / 3_600_000)
        minute = Int(rest / 60_000 % 60)
        second = Int(rest / 1000 % 60)
        millisecond = Int(rest % 1000)
        self.offsetMinutes = offsetMinutes
    }

    init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0, millisecond: Int = 0, offsetMinutes: Int? = nil) {
        self.year = year; self.month = month; self.day = day
        self.hour = hour; self.minute = minute; self.second = second; self.millisecond = millisecond
        self.offsetMinutes = offsetMinutes
    }

    /// Parses `YYYY-MM-DD`, optionally followed by `T` or a space and `hh:mm[:ss[.fff…]]`,
    /// optionally followed by `Z`, `±hh:mm` or `±hhmm` (the basic form of `ISO8601Fields`).
    /// Impossible dates are rejected. Fractional seconds beyond milliseconds are truncated.
    static func parse(_ s: String) -> CivilDateTime? {
        guard let f = ISO8601Fields.parse(s), f.isBasic else { return nil }
        return CivilDateTime(year: f.year, month: f.month, day: f.day, hour: f.hour, minute: f.minute, second: f.second,
                             millisecond: f.nanosecond / 1_000_000, offsetMinutes: f.offsetMinutes)
    }
}

// Calendar arithmetic (`daysFromCivil`, `civilFromDays`, `daysInMonth`) is in
// Values/ISO8601.swift, shared with `Codable` dates.

// MARK: - Time zones

extension QueryTimeZone {
    /// The offset from UTC (minutes) in force at the instant `millis`.
    func offsetMinutes(atMillis millis: Int64) -> Int {
        switch self {
        case .fixed(let m): return m
        case .local:
            tzset()
            var t = time_t(floorDiv(millis, 1000))
            var tmv = tm()
            guard localtime_r(&t, &tmv) != nil else { return 0 }
            return Int(tmv.tm_gmtoff) / 60
        }
    }

    /// The instant of wall-clock fields read in this zone.
    func millis(ofWallClock c: CivilDateTime) -> Int64 {
        switch self {
        case .fixed(let m):
            return c.wallMillis - Int64(m) * 60_000
        case .local:
            tzset()
            var tmv = tm()
            tmv.tm_year = Int32(c.year - 1900)
            tmv.tm_mon = Int32(c.month - 1)
            tmv.tm_mday = Int32(c.day)
            tmv.tm_hour = Int32(c.hour)
            tmv.tm_min = Int32(c.minute)
            tmv.tm_sec = Int32(c.second)
            tmv.tm_isdst = -1
            let secs = mktime(&tmv)
            if secs == -1 && !(c.year == 1969 && c.month == 12 && c.day == 31) {
                // Outside what mktime handles: fall back to the offset now.
                return c.wallMillis - Int64(offsetMinutes(atMillis: c.wallMillis)) * 60_000
            }
            return Int64(secs) * 1000 + Int64(c.millisecond)
        }
    }
}

/// The instant a parsed date string denotes: its own offset if written, else `zone`.
func instant(of c: CivilDateTime, defaultZone zone: QueryTimeZone) -> Int64 {
    if let off = c.offsetMinutes { return c.wallMillis - Int64(off) * 60_000 }
    return zone.millis(ofWallClock: c)
}

// MARK: - Output formats

/// How a date is written (SPEC §6.8): date part, time part, millis, zone.
struct DateOutputFormat: Sendable, Equatable {
    /// How the zone is written.
    enum Zone: Sendable, Equatable {
        /// No zone.
        case none
        /// `Z` at offset 0, else `±hhmm`.
        case compact
        /// `Z` at offset 0, else `±hh:mm`.
        case colon
    }

    /// Write `YYYY-MM-DD` (with `dateSeparator`).
    var date = true
    /// `-` or `/`.
    var dateSeparator: Character = "-"
    /// Write `hh:mm:ss`.
    var time = true
    /// Between date and time: `T` or a space.
    var dateTimeSeparator: Character = "T"
    /// Append `.mmm` when the milliseconds are not zero.
    var millis = true
    /// The zone suffix.
    var zone = Zone.compact

    /// `YYYY-MM-DDThh:mm:ss[.mmm](Z|±hhmm)`.
    static let iso8601 = DateOutputFormat()

    /// A format from a model (`1111-11-11T11:11:11.111Z`) or a `%` token string
    /// (`%Y-%m-%dT%H:%M:%S%z`); nil when unusable (callers then use the default).
    static func parse(_ s: String) -> DateOutputFormat? {
        s.hasPrefix("%") ? parseTokens(s) : parseModel(s)
    }

    /// Model syntax: date part (`1111-11-11` or `1111/11/11`), `T` or space, time part
    /// (`11:11:11`, `.111` for millis), zone (`Z` or `+0000` → `±hhmm`, `+00:00` → `±hh:mm`).
    /// Any digits may stand for the `1`s; a zone needs a time part.
    static func parseModel(_ s: String) -> DateOutputFormat? {
        let b = Array(s.utf8)
        var i = 0
        func isDigit(_ k: Int) -> Bool { k < b.count && b[k] >= 48 && b[k] <= 57 }
        func digits(_ n: Int) -> Bool {
            for k in 0..<n where !isDigit(i + k) { return false }
            i += n
            return true
        }
        func take(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        var f = DateOutputFormat(date: false, time: false, millis: false, zone: .none)
        // Date part?
        if b.count >= 10, isDigit(0), isDigit(1), isDigit(2), isDigit(3), b[4] == 45 || b[4] == 47 {
            let sep = b[4]
            guard digits(4), take(sep), digits(2), take(sep), digits(2) else { return nil }
            f.date = true
            f.dateSeparator = Character(Unicode.Scalar(sep))
            if i == b.count { return f }
            guard take(UInt8(ascii: "T")) || take(UInt8(ascii: " ")) else { return nil }
            f.dateTimeSeparator = Character(Unicode.Scalar(b[i - 1]))
        }
        guard digits(2), take(58), digits(2), take(58), digits(2) else { return nil }
        f.time = true
        if take(UInt8(ascii: ".")) {
            var n = 0
            while isDigit(i) { i += 1; n += 1 }
            guard n > 0 else { return nil }
            f.millis = true
        }
        if i == b.count { return f }
        if take(UInt8(ascii: "Z")) {
            f.zone = .compact
        } else if take(UInt8(ascii: "+")) || take(UInt8(ascii: "-")) {
            guard digits(2) else { return nil }
            if take(58) {
                guard digits(2) else { return nil }
                f.zone = .colon
            } else {
                guard digits(2) else { return nil }
                f.zone = .compact
            }
        } else {
            return nil
        }
        return i == b.count ? f : nil
    }

    /// Token syntax: `%Y-%m-%d` or `%Y/%m/%d` or `%F`; then optionally `T` or a space; then
    /// `%H:%M:%S` or `%T`, optionally `%s` (or `.%s`, `%.s`) for millis; then optionally
    /// `%z` (`±hhmm`) or `%Ez` (`±hh:mm`). A time-only format is allowed.
    static func parseTokens(_ s: String) -> DateOutputFormat? {
        var rest = Substring(s)
        func take(_ t: String) -> Bool {
            guard rest.hasPrefix(t) else { return false }
            rest = rest.dropFirst(t.count)
            return true
        }
        var f = DateOutputFormat(date: false, time: false, millis: false, zone: .none)
        if take("%F") || take("%Y-%m-%d") {
            f.date = true
        } else if take("%Y/%m/%d") {
            f.date = true
            f.dateSeparator = "/"
        }
        if f.date {
            if rest.isEmpty { return f }
            if take("T") { f.dateTimeSeparator = "T" } else if take(" ") { f.dateTimeSeparator = " " } else { return nil }
        }
        guard take("%T") || take("%H:%M:%S") else { return nil }
        f.time = true
        if take("%s") || take(".%s") || take("%.s") { f.millis = true }
        if take("%Ez") { f.zone = .colon } else if take("%z") { f.zone = .compact }
        return rest.isEmpty ? f : nil
    }

    /// Writes `millis` seen at `offsetMinutes`.
    func format(millis: Int64, offsetMinutes: Int) -> String {
        let c = CivilDateTime(millis: millis, offsetMinutes: offsetMinutes)
        var out = ""
        out.reserveCapacity(29)
        func pad(_ v: Int, _ width: Int) {
            var s = String(Swift.abs(v))
            if s.count < width { s = String(repeating: "0", count: width - s.count) + s }
            if v < 0 { out.append("-") }
            out += s
        }
        if date {
            pad(c.year, 4); out.append(dateSeparator); pad(c.month, 2); out.append(dateSeparator); pad(c.day, 2)
        }
        if time {
            if date { out.append(dateTimeSeparator) }
            pad(c.hour, 2); out.append(":"); pad(c.minute, 2); out.append(":"); pad(c.second, 2)
            if self.millis && c.millisecond != 0 { out.append("."); pad(c.millisecond, 3) }
            if zone != .none {
                if offsetMinutes == 0 {
                    out.append("Z")
                } else {
                    let m = Swift.abs(offsetMinutes)
                    out.append(offsetMinutes < 0 ? "-" : "+")
                    pad(m / 60, 2)
                    if zone == .colon { out.append(":") }
                    pad(m % 60, 2)
                }
            }
        }
        return out
    }
}

// MARK: - Date parts

/// A `part` argument of DATE_DIFF_* / DATE_ADD_* (case-insensitive).
enum DatePart: String, Sendable, CaseIterable {
    case millisecond, second, minute, hour, day, week, month, quarter, year, decade, century, millennium

    /// The part named by `v`, or nil.
    init?(_ v: Value) {
        guard case .string(let s) = v else { return nil }
        self.init(rawValue: s.lowercased())
    }
}

/// The signed number of `part` boundaries from `b` to `a` (positive when a is later),
/// counted on the wall-clock fields as Couchbase Server does: years, quarters and months by
/// calendar field, days by calendar day, then hours, minutes, seconds and milliseconds from
/// those; a week is 7 days (truncated); decades, centuries, millennia divide the year count.
func dateDifference(_ a: CivilDateTime, _ b: CivilDateTime, part: DatePart) -> Int64 {
    var l = a, r = b, sign: Int64 = 1
    if l.wallMillis < r.wallMillis { swap(&l, &r); sign = -1 }
    let years = Int64(l.year - r.year)
    let days = daysFromCivil(l.year, l.month, l.day) - daysFromCivil(r.year, r.month, r.day)
    let hours = days * 24 + Int64(l.hour - r.hour)
    let minutes = hours * 60 + Int64(l.minute - r.minute)
    let seconds = minutes * 60 + Int64(l.second - r.second)
    let result: Int64
    switch part {
    case .millisecond: result = seconds * 1000 + Int64(l.millisecond - r.millisecond)
    case .second: result = seconds
    case .minute: result = minutes
    case .hour: result = hours
    case .day: result = days
    case .week: result = days / 7
    case .month: result = Int64(l.year * 12 + l.month) - Int64(r.year * 12 + r.month)
    case .quarter: result = Int64(l.year * 4 + (l.month + 2) / 3) - Int64(r.year * 4 + (r.month + 2) / 3)
    case .year: result = years
    case .decade: result = years / 10
    case .century: result = years / 100
    case .millennium: result = years / 1000
    }
    return result * sign
}

/// Adds `n` parts to the wall-clock fields `c` and returns the instant, with the fields read
/// at `offsetMinutes`. Durations (millisecond … week) add exact time; months, quarters, years
/// and longer change the calendar fields and keep the day, an impossible day rolling over
/// into the next month (`2018-01-31` + 1 month → `2018-03-03`). nil on overflow.
func dateAdd(_ c: CivilDateTime, _ n: Int64, part: DatePart, offsetMinutes: Int) -> Int64? {
    let start = c.wallMillis - Int64(offsetMinutes) * 60_000
    func addDuration(_ unit: Int64) -> Int64? {
        let (d, o1) = n.multipliedReportingOverflow(by: unit)
        let (r, o2) = start.addingReportingOverflow(d)
        return o1 || o2 ? nil : r
    }
    func addMonths(_ k: Int64) -> Int64? {
        let (months, o) = n.multipliedReportingOverflow(by: k)
        guard !o, Swift.abs(months) < 12 * 1_000_000 else { return nil }
        let total = Int64(c.year) * 12 + Int64(c.month - 1) + months
        let y = Int(floorDiv(total, 12)), m = Int(total - floorDiv(total, 12) * 12) + 1
        let days = daysFromCivil(y, m, 1) + Int64(c.day - 1)
        let tod = ((Int64(c.hour) * 60 + Int64(c.minute)) * 60 + Int64(c.second)) * 1000 + Int64(c.millisecond)
        return days * 86_400_000 + tod - Int64(offsetMinutes) * 60_000
    }
    switch part {
    case .millisecond: return addDuration(1)
    case .second: return addDuration(1000)
    case .minute: return addDuration(60_000)
    case .hour: return addDuration(3_600_000)
    case .day: return addDuration(86_400_000)
    case .week: return addDuration(7 * 86_400_000)
    case .month: return addMonths(1)
    case .quarter: return addMonths(3)
    case .year: return addMonths(12)
    case .decade: return addMonths(120)
    case .century: return addMonths(1200)
    case .millennium: return addMonths(12_000)
    }
}
