// The one proleptic Gregorian calendar and ISO-8601 reader of the engine: `Codable` dates
// (`ISO8601Text` in ValueCodable.swift) and the SQL++ date functions (`CivilDateTime` in
// Query/Functions/DateSupport.swift) both use it.

/// The fields of an ISO-8601 date or date-time text.
///
/// `parse` reads a date (`YYYY-MM-DD`, a year of four or more digits with an optional sign),
/// optionally followed by `T`, `t` or a space and `hh:mm[:ss[(.|,)fraction]]`, optionally
/// followed by `Z`, `z`, `±hh:mm`, `±hhmm` or `±hh`. Impossible dates are rejected; `24:00:00`
/// (the end of the day) and a leap second `60` are accepted. `isBasic` tells whether the text
/// keeps to the narrower form the SQL++ date functions accept.
struct ISO8601Fields: Sendable, Equatable {
    var year: Int
    var month: Int
    var day: Int
    var hour = 0
    var minute = 0
    var second = 0
    /// The fraction of the second in nanoseconds (digits beyond the ninth are ignored).
    var nanosecond = 0
    /// The written offset in minutes east of UTC; nil when the text has no zone.
    var offsetMinutes: Int?
    /// True for the basic form: an unsigned four-digit year, `T` or a space, hour 0–23,
    /// second 0–59, a `.` fraction, and a zone `Z` or `±hh[:]mm`.
    var isBasic = true

    init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The fields of `text`, or nil if it is not an ISO-8601 date or date-time.
    static func parse(_ text: String) -> ISO8601Fields? {
        let b = Array(text.utf8)
        var i = 0
        func isDigit(_ k: Int) -> Bool { k < b.count && b[k] >= 48 && b[k] <= 57 }
        func digits(_ n: Int) -> Int? {
            guard i + n <= b.count else { return nil }
            var v = 0
            for k in 0..<n {
                guard isDigit(i + k) else { return nil }
                v = v * 10 + Int(b[i + k] - 48)
            }
            i += n
            return v
        }
        func eat(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        // Year: four digits, more (up to nine) for expanded years, with an optional sign.
        var sign = 1
        var basic = true
        if eat(UInt8(ascii: "-")) { sign = -1; basic = false } else if eat(UInt8(ascii: "+")) { basic = false }
        var year = 0, yearDigits = 0
        while isDigit(i), yearDigits < 9 {
            year = year * 10 + Int(b[i] - 48)
            i += 1
            yearDigits += 1
        }
        guard yearDigits >= 4, eat(UInt8(ascii: "-")), let month = digits(2), eat(UInt8(ascii: "-")), let day = digits(2) else { return nil }
        if yearDigits != 4 { basic = false }
        year *= sign
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year, month) else { return nil }
        var r = ISO8601Fields(year: year, month: month, day: day)
        if i == b.count {
            r.isBasic = basic
            return r
        }

        if eat(UInt8(ascii: "t")) { basic = false } else {
            guard eat(UInt8(ascii: "T")) || eat(UInt8(ascii: " ")) else { return nil }
        }
        guard let hour = digits(2), eat(UInt8(ascii: ":")), let minute = digits(2) else { return nil }
        r.hour = hour
        r.minute = minute
        if eat(UInt8(ascii: ":")) {
            guard let second = digits(2) else { return nil }
            r.second = second
            let comma = i < b.count && b[i] == UInt8(ascii: ",")
            if eat(UInt8(ascii: ".")) || eat(UInt8(ascii: ",")) {
                if comma { basic = false }
                var nanos = 0, count = 0
                while isDigit(i) {
                    if count < 9 { nanos = nanos * 10 + Int(b[i] - 48) }
                    i += 1
                    count += 1
                }
                guard count > 0 else { return nil }
                for _ in min(count, 9)..<9 { nanos *= 10 }
                r.nanosecond = nanos
            }
        }
        // 24:00:00 is the end of the day; a leap second 60 is accepted as the next second.
        guard r.hour <= 24, r.minute <= 59, r.second <= 60,
              r.hour < 24 || (r.minute == 0 && r.second == 0 && r.nanosecond == 0) else { return nil }
        if r.hour == 24 || r.second == 60 { basic = false }

        if eat(UInt8(ascii: "Z")) {
            r.offsetMinutes = 0
        } else if eat(UInt8(ascii: "z")) {
            r.offsetMinutes = 0
            basic = false
        } else if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let negative = b[i] == UInt8(ascii: "-")
            i += 1
            guard let oh = digits(2), oh <= 23 else { return nil }
            var om = 0
            if eat(UInt8(ascii: ":")) || i < b.count {
                guard let m = digits(2) else { return nil }
                om = m
            } else {
                basic = false  // `±hh` alone
            }
            guard om <= 59 else { return nil }
            r.offsetMinutes = (negative ? -1 : 1) * (oh * 60 + om)
        }
        r.isBasic = basic
        return i == b.count ? r : nil
    }
}

// MARK: - Calendar arithmetic

/// Floor division.
@inline(__always)
func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
    let q = a / b
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
}

/// True for Gregorian leap years.
func isLeapYear(_ y: Int) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

/// Days in month `m` (1–12) of year `y`.
func daysInMonth(_ y: Int, _ m: Int) -> Int {
    switch m {
    case 2: return isLeapYear(y) ? 29 : 28
    case 4, 6, 9, 11: return 30
    default: return 31
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date; `d` may overflow the month (Feb 31 is
/// Mar 3 or 2), which is how month arithmetic rolls over.
func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int64 {
    let y = Int64(month <= 2 ? year - 1 : year)
    let era = floorDiv(y, 400)
    let yoe = y - era * 400
    let m = Int64(month)
    let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146_097 + doe - 719_468 + Int64(day - 1)
}

/// The proleptic Gregorian date of a day number (days since 1970-01-01).
func civilFromDays(_ z0: Int64) -> (Int, Int, Int) {
    let z = z0 + 719_468
    let era = floorDiv(z, 146_097)
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
    let y = yoe + era * 400
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let d = doy - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    return (Int(m <= 2 ? y + 1 : y), Int(m), Int(d))
}
