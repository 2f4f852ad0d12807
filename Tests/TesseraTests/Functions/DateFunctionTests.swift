#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
@testable import Tessera

/// SPEC §6.8 under fixed offsets (in process) and under real `TZ` settings (in child
/// processes, so the environment of the test run is never changed).
@Suite("Date functions")
struct DateFunctionTests {
    func call(_ name: String, _ args: Value..., zone: QueryTimeZone = .utc) -> Value {
        FunctionRegistry.lookup(name)!.evaluate(args, FunctionContext(timeZone: zone))
    }

    @Test func specExamples() {
        #expect(call("MILLIS_TO_UTC", 1540319581123) == "2018-10-23T18:33:01.123Z")
        #expect(call("MILLIS_TO_UTC", 0, "1111-11-11") == "1970-01-01")
        #expect(call("STR_TO_TZ", "2024-01-10T14:31:14Z", -300) == "2024-01-10T09:31:14-0500")
        #expect(call("DATE_ADD_STR", "2018-01-01", 1, "century") == "2118-01-01T00:00:00Z")   // §13 item 11: a string
        #expect(call("DATE_DIFF_STR", "2018-01-01T00:00:01Z", "2017-12-31T23:59:59Z", "year") == 1)
        #expect(call("DATE_DIFF_STR", "2018-03-01", "2018-02-01", "day") == 28)
        #expect(call("DATE_ADD_STR", "2018-01-31", 1, "month") == "2018-03-03T00:00:00Z")
        // §13 item 11: STR_TO_UTC does not keep the input's format.
        #expect(call("STR_TO_UTC", "2018-01-01 10:00") == "2018-01-01T10:00:00Z")
        #expect(call("DATE_ADD_MILLIS", 1540319581123, 1, "day") == .int(1540319581123 + 86_400_000))
    }

    @Test func inputFormats() {
        let base = 1_540_319_581_000 as Int64 // 2018-10-23T18:33:01Z
        for (s, ms) in [("2018-10-23T18:33:01Z", base), ("2018-10-23 18:33:01Z", base), ("2018-10-23T18:33:01.000Z", base),
                        ("2018-10-23T18:33:01.1234567Z", base + 123), ("2018-10-23T18:33:01.5Z", base + 500),
                        ("2018-10-23T20:33:01+02:00", base), ("2018-10-23T20:33:01+0200", base), ("2018-10-23T13:33:01-0500", base),
                        ("2018-10-23T18:33Z", base - 1000), ("2018-10-23", base - (18 * 3600 + 33 * 60 + 1) * 1000)] {
            #expect(call("STR_TO_MILLIS", .string(s)) == .int(ms), "\(s)")
        }
        for bad in ["2018-10-23T", "2018-10-23T18", "2018-10-23T24:00:00Z", "2018-10-23T18:60:00Z", "2018-10-23T18:33:60Z",
                    "2018-02-29", "2019-02-29", "2018-04-31", "2018-00-10", "2018-13-10", "2018-1-1", "18-10-23",
                    "2018-10-23T18:33:01.Z", "2018-10-23T18:33:01+2", "2018-10-23T18:33:01 +02:00", "2018-10-23x", "", " 2018-10-23"] {
            #expect(call("STR_TO_MILLIS", .string(bad)) == .null, "\(bad)")
        }
        #expect(call("STR_TO_MILLIS", "2000-02-29") == .int(951_782_400_000))
        #expect(call("STR_TO_MILLIS", "2016-02-29T00:00:00Z") != .null)
    }

    @Test func zoneLessInputUsesTheContextZone() {
        #expect(call("STR_TO_MILLIS", "1970-01-01T00:00:00", zone: .fixed(offsetMinutes: 60)) == .int(-3_600_000))
        #expect(call("STR_TO_MILLIS", "1970-01-01T00:00:00", zone: .fixed(offsetMinutes: -300)) == .int(18_000_000))
        #expect(call("STR_TO_UTC", "2024-01-10T09:31:14", zone: .fixed(offsetMinutes: -300)) == "2024-01-10T14:31:14Z")
        #expect(call("MILLIS_TO_STR", 0, zone: .fixed(offsetMinutes: 330)) == "1970-01-01T05:30:00+0530")
        #expect(call("MILLIS_TO_STR", 0, zone: .utc) == "1970-01-01T00:00:00Z")
        #expect(call("MILLIS_TO_STR", 0, "1111-11-11 11:11:11+00:00", zone: .fixed(offsetMinutes: -90)) == "1969-12-31 22:30:00-01:30")
        // DATE_ADD_STR reads a zone-less date as UTC whatever the context zone.
        #expect(call("DATE_ADD_STR", "2018-01-01", 1, "day", zone: .fixed(offsetMinutes: 600)) == "2018-01-02T00:00:00Z")
    }

    @Test func outputFormats() {
        let ms: Value = 1_540_319_581_123
        let cases: [(String, String)] = [
            ("1111-11-11", "2018-10-23"), ("1111/11/11", "2018/10/23"), ("11:11:11", "18:33:01"), ("11:11:11.111", "18:33:01.123"),
            ("1111-11-11T11:11:11Z", "2018-10-23T18:33:01Z"), ("1111-11-11T11:11:11.111Z", "2018-10-23T18:33:01.123Z"),
            ("1111/11/11 11:11:11.111+09:00", "2018/10/23 18:33:01.123Z"), ("2006-01-02T15:04:05+0700", "2018-10-23T18:33:01Z"),
            ("%Y-%m-%d", "2018-10-23"), ("%F", "2018-10-23"), ("%Y/%m/%d", "2018/10/23"), ("%H:%M:%S", "18:33:01"), ("%T", "18:33:01"),
            ("%FT%T%z", "2018-10-23T18:33:01Z"), ("%F %T%s", "2018-10-23 18:33:01.123"), ("%FT%T.%s%Ez", "2018-10-23T18:33:01.123Z"),
            ("nonsense", "2018-10-23T18:33:01.123Z"), ("%Q", "2018-10-23T18:33:01.123Z"), ("1111-11-11T", "2018-10-23T18:33:01.123Z"),
            ("11:11:11Zjunk", "2018-10-23T18:33:01.123Z"), ("", "2018-10-23T18:33:01.123Z"),
        ]
        for (fmt, out) in cases {
            #expect(call("MILLIS_TO_UTC", ms, .string(fmt)) == .string(out), "\(fmt)")
        }
        #expect(call("MILLIS_TO_TZ", ms, 540, "1111-11-11T11:11:11+00:00") == "2018-10-24T03:33:01+09:00")
        #expect(call("MILLIS_TO_TZ", ms, -150, "%FT%T%z") == "2018-10-23T16:03:01-0230")
        #expect(call("MILLIS_TO_UTC", ms, 5) == "2018-10-23T18:33:01.123Z")   // a non-string fmt is unusable
        #expect(call("MILLIS_TO_UTC", ms, .null) == .null)
        #expect(call("MILLIS_TO_UTC", -62_135_596_800_000) == "0001-01-01T00:00:00Z")
        #expect(call("MILLIS_TO_UTC", 253_402_300_799_999) == "9999-12-31T23:59:59.999Z")
        #expect(call("MILLIS_TO_UTC", 1.9) == "1970-01-01T00:00:00.001Z")
        #expect(call("MILLIS_TO_UTC", .double(.infinity)) == .null)
        #expect(call("MILLIS_TO_TZ", 0, .int(24 * 60)) == .null)
    }

    @Test func dateDiffCountsCalendarBoundaries() {
        func diff(_ a: String, _ b: String, _ part: String) -> Value { call("DATE_DIFF_STR", .string(a), .string(b), .string(part)) }
        #expect(diff("2018-01-01T00:00:01Z", "2017-12-31T23:59:59Z", "second") == 2)
        #expect(diff("2018-01-01T00:00:01Z", "2017-12-31T23:59:59Z", "minute") == 1)
        #expect(diff("2018-01-01T00:00:01Z", "2017-12-31T23:59:59Z", "hour") == 1)
        #expect(diff("2018-01-01T00:00:01Z", "2017-12-31T23:59:59Z", "day") == 1)
        #expect(diff("2018-01-01T00:00:01Z", "2017-12-31T23:59:59Z", "month") == 1)
        #expect(diff("2018-01-01T00:00:01Z", "2017-12-31T23:59:59Z", "quarter") == 1)
        #expect(diff("2018-01-01T00:00:01Z", "2017-12-31T23:59:59Z", "week") == 0)
        #expect(diff("2017-12-31T23:59:59Z", "2018-01-01T00:00:01Z", "year") == -1)
        #expect(diff("2018-03-01", "2018-02-01", "day") == 28)
        #expect(diff("2020-03-01", "2020-02-01", "day") == 29)
        #expect(diff("2021-01-01", "2020-01-01", "day") == 366)
        #expect(diff("2018-01-15", "2018-01-01", "week") == 2)
        #expect(diff("2018-01-01", "2018-01-15", "week") == -2)
        #expect(diff("2018-01-14", "2018-01-01", "week") == 1)
        #expect(diff("2019-12-31", "2010-01-01", "decade") == 0)
        #expect(diff("2020-01-01", "2010-12-31", "decade") == 1)  // Server: year difference ÷ 10
        #expect(diff("2021-01-01", "2010-12-31", "decade") == 1)
        #expect(diff("2018-01-01T00:00:00.250Z", "2017-12-31T23:59:59.750Z", "millisecond") == 500)
        // Offsets are ignored: wall-clock fields as written.
        #expect(diff("2018-01-01T00:00:00+14:00", "2018-01-01T00:00:00-12:00", "hour") == 0)
        #expect(diff("2018-01-01T10:00:00", "2018-01-01T09:00:00Z", "hour") == 1)
        #expect(diff("2018-01-01", "2018-01-01", "Day") == 0)   // parts are case-insensitive
        // DATE_DIFF_MILLIS uses the UTC fields.
        #expect(call("DATE_DIFF_MILLIS", 1_514_764_800_000, 1_514_764_799_000, "year") == 1)
        #expect(call("DATE_DIFF_MILLIS", 0, 1, "millisecond") == -1)
    }

    @Test func dateAddArithmetic() {
        func add(_ d: String, _ n: Value, _ part: String) -> Value { call("DATE_ADD_STR", .string(d), n, .string(part)) }
        #expect(add("2018-01-31T00:00:00Z", 1, "month") == "2018-03-03T00:00:00Z")
        #expect(add("2020-01-31T00:00:00Z", 1, "month") == "2020-03-02T00:00:00Z")
        #expect(add("2018-03-31T00:00:00Z", -1, "month") == "2018-03-03T00:00:00Z")
        #expect(add("2018-12-15T00:00:00Z", 1, "month") == "2019-01-15T00:00:00Z")
        #expect(add("2018-01-15T00:00:00Z", -13, "month") == "2016-12-15T00:00:00Z")
        #expect(add("2018-01-15T12:00:00Z", 1.9, "day") == "2018-01-16T12:00:00Z")
        #expect(add("2018-01-15T12:00:00.250+05:30", 1, "quarter") == "2018-04-15T12:00:00.250+0530")
        #expect(add("2018-01-15T12:00:00-03:00", 12, "hour") == "2018-01-16T00:00:00-0300")
        #expect(add("2018-01-15", Value.int(.max), "week") == .null)
        #expect(call("DATE_ADD_STR", "2018-01-15T12:00:00Z", 1, "day", "%F") == "2018-01-16")
        #expect(call("DATE_ADD_MILLIS", 0, 1, "year") == .int(31_536_000_000))
        #expect(call("DATE_ADD_MILLIS", 2_592_000_000, -1, "month") == .int(-86_400_000 * 1))  // 1970-01-31 - 1 month = 1969-12-31
    }

    /// One ISO-8601 reader: the date functions take its basic form, `Codable` dates all of it,
    /// and both read the same instant.
    @Test func dateFunctionsAndCodableShareOneISO8601Reader() throws {
        for s in ["2024-05-01", "2024-05-01T12:30Z", "2024-05-01 12:30:00.125+05:30", "2024-05-01T12:30:00.1259-0200"] {
            let c = try #require(CivilDateTime.parse(s), "\(s)")
            let d = try #require(ISO8601Text.parse(s), "\(s)")
            #expect(instant(of: c, defaultZone: .utc) == Int64((d.timeIntervalSince1970 * 1000).rounded(.down)), "\(s)")
        }
        for extended in ["+2024-05-01", "20240-05-01", "2024-05-01t12:30", "2024-05-01T24:00", "2024-06-30T23:59:60Z",
                         "2024-05-01T12:30:00,5Z", "2024-05-01T12:30z", "2024-05-01T12:30+01"] {
            #expect(ISO8601Text.parse(extended) != nil, "\(extended)")
            #expect(CivilDateTime.parse(extended) == nil, "\(extended)")
        }
    }

    @Test func calendarConversionsRoundTrip() {
        var rng = SplitMix64(seed: 0x7E55E7A)
        for _ in 0..<2000 {
            let days = Int64(rng.next() % 4_000_000) - 1_000_000
            let (y, m, d) = civilFromDays(days)
            #expect(daysFromCivil(y, m, d) == days)
            #expect(m >= 1 && m <= 12 && d >= 1 && d <= daysInMonth(y, m))
            let ms = days * 86_400_000 + Int64(rng.next() % 86_400_000)
            let s = call("MILLIS_TO_UTC", .int(ms))
            if y >= 0 && y <= 9999 {
                #expect(call("STR_TO_MILLIS", s) == .int(ms), "\(s)")
            }
        }
    }

    // MARK: - The process's local zone

    /// Runs the local-time checks in a child process with `TZ` set there, so the parent's
    /// environment (and other tests) never see the change. Two zones with different offsets
    /// (one with daylight saving time) must give their own answers.
    @Test func localTimeFollowsTZ() async {
        await #expect(processExitsWith: .success) {
            func call(_ name: String, _ args: Value...) -> Value {
                FunctionRegistry.lookup(name)!.evaluate(args, FunctionContext(timeZone: .local))
            }
            func check(_ ok: Bool, _ code: Int32) { if !ok { exit(code) } }
            // US Eastern with its DST rule, as a POSIX TZ string (needs no tz database).
            setenv("TZ", "EST5EDT,M3.2.0,M11.1.0", 1)
            tzset()
            check(call("MILLIS_TO_STR", 0) == "1969-12-31T19:00:00-0500", 10)
            check(call("MILLIS_TO_STR", 1_719_835_200_000) == "2024-07-01T08:00:00-0400", 11)
            check(call("STR_TO_MILLIS", "2024-07-01T08:00:00") == .int(1_719_835_200_000), 12)
            check(call("STR_TO_MILLIS", "2024-01-10T09:31:14") == .int(1_704_897_074_000), 13)
            check(call("STR_TO_UTC", "2024-01-10T09:31:14") == "2024-01-10T14:31:14Z", 14)
            check(call("STR_TO_MILLIS", "2024-01-10T09:31:14Z") == .int(1_704_879_074_000), 15)
            // India: +05:30, no DST.
            setenv("TZ", "IST-5:30", 1)
            tzset()
            check(call("MILLIS_TO_STR", 0) == "1970-01-01T05:30:00+0530", 20)
            check(call("MILLIS_TO_STR", 1_719_835_200_000) == "2024-07-01T17:30:00+0530", 21)
            check(call("STR_TO_MILLIS", "1970-01-01T05:30:00") == .int(0), 22)
            check(call("MILLIS_TO_STR", 0, "1111-11-11T11:11:11+00:00") == "1970-01-01T05:30:00+05:30", 23)
            // UTC.
            setenv("TZ", "UTC0", 1)
            tzset()
            check(call("MILLIS_TO_STR", 0) == "1970-01-01T00:00:00Z", 30)
            check(call("STR_TO_MILLIS", "1970-01-02") == .int(86_400_000), 31)
            exit(0)
        }
    }

    @Test func namedZoneFromTheTzDatabase() async {
        await #expect(processExitsWith: .success) {
            // Skip quietly where the tz database is not installed.
            guard access("/usr/share/zoneinfo/Europe/Paris", F_OK) == 0 else { exit(0) }
            setenv("TZ", "Europe/Paris", 1)
            tzset()
            let f = FunctionRegistry.lookup("MILLIS_TO_STR")!
            let winter = f.evaluate([0], FunctionContext(timeZone: .local))
            let summer = f.evaluate([1_719_835_200_000], FunctionContext(timeZone: .local))
            exit(winter == "1970-01-01T01:00:00+0100" && summer == "2024-07-01T14:00:00+0200" ? 0 : 1)
        }
    }
}

