import Testing
@testable import Tessera

// MARK: - Seeded random values

/// The shared seeded generator (TestSupport.swift).
typealias KeyTestRNG = SplitMix64

extension SplitMix64 {
    /// True with probability 1/n.
    mutating func chance(_ n: Int) -> Bool { below(n) == 0 }
}

/// Random values aimed at the encoding's edge cases.
enum ValueGen {
    static let specialInts: [Int64] = [
        0, 1, -1, 2, -2, 255, 256, -256, .max, .min, .max - 1, .min + 1,
        1 << 53, (1 << 53) + 1, (1 << 53) - 1, -(1 << 53) - 1, (1 << 62), (1 << 62) + 1, -(1 << 62),
        4_611_686_018_427_387_903, 9_007_199_254_740_993,
    ]
    static let specialDoubles: [Double] = [
        0, -0.0, 1, -1, 0.5, -0.5, 1.5, 0x1p53, 0x1p53 + 2, 0x1p63, -0x1p63, 0x1p64, 0x1p62,
        9.223372036854775807e18, -9.223372036854775807e18, 1e300, -1e300, 1e-300,
        .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude,
        Double.leastNormalMagnitude.nextDown, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
        .infinity, -.infinity, .nan, 1.0.nextUp, 1.0.nextDown, (-1.0).nextUp, 0x1p63.nextDown,
        0x1p63.nextUp, (-0x1p63).nextUp, (-0x1p63).nextDown, 0.1, 0.2, 0.30000000000000004,
    ]
    static let stringPieces: [String] = [
        "", "\0", "a", "b", "ab", "é", "e\u{301}", "😀", "\u{7F}", "\u{80}", "\u{FFFF}",
        "\u{10FFFF}", "\u{1}", "Z", "\0\0", "ÿ", "中",
    ]
    static let keys: [String] = ["", "a", "b", "ab", "a\0", "\0", "é", "z"]

    static func int(_ r: inout KeyTestRNG) -> Int64 {
        switch r.below(5) {
        case 0: return r.pick(specialInts)
        case 1: return Int64(r.below(21)) - 10
        case 2: return Int64(bitPattern: r.next())
        case 3:
            let p = Int64(1) << Int64(r.below(63))
            let v = p &+ Int64(r.below(5)) &- 2
            return r.chance(2) ? v : 0 &- v
        default: return Int64(bitPattern: r.next()) >> Int64(r.below(64))
        }
    }

    static func double(_ r: inout KeyTestRNG) -> Double {
        switch r.below(6) {
        case 0: return r.pick(specialDoubles)
        case 1: return Double(bitPattern: r.next())
        case 2: return Double(int(&r))
        case 3: return Double(int(&r)) + r.pick([0.5, -0.25, 0.125])
        case 4:
            let d = Double(int(&r))
            return r.chance(2) ? d.nextUp : d.nextDown
        default: return Double(Int(r.below(2001)) - 1000) / 8
        }
    }

    static func string(_ r: inout KeyTestRNG) -> String {
        var s = ""
        for _ in 0..<r.below(5) { s += r.pick(stringPieces) }
        return s
    }

    static func scalar(_ r: inout KeyTestRNG) -> Value {
        switch r.below(10) {
        case 0: return r.chance(3) ? .missing : .null
        case 1: return .bool(r.chance(2))
        case 2, 3: return .int(int(&r))
        case 4, 5: return .double(double(&r))
        default: return .string(string(&r))
        }
    }

    static func value(_ r: inout KeyTestRNG, depth: Int = 3) -> Value {
        if depth == 0 || r.below(10) < 6 { return scalar(&r) }
        if r.chance(2) {
            return .array((0..<r.below(4)).map { _ in value(&r, depth: depth - 1) })
        }
        var o: [String: Value] = [:]
        for _ in 0..<r.below(4) { o[r.pick(keys)] = value(&r, depth: depth - 1) }
        return .object(o)
    }

    /// The same value with numbers in the other representation where that is exact
    /// (`1` ↔ `1.0`, `0` → `-0.0`).
    static func reRepresent(_ v: Value, _ r: inout KeyTestRNG) -> Value {
        switch v {
        case .int(let i):
            if i == 0 { return .double(r.chance(2) ? -0.0 : 0.0) }
            let d = Double(i)
            if d < 0x1p63, Int64(exactly: d) == i { return .double(d) }
            return v
        case .double(let d):
            if let i = Int64(exactly: d) { return .int(i) }
            return v
        case .array(let a): return .array(a.map { reRepresent($0, &r) })
        case .object(let o): return .object(o.mapValues { reRepresent($0, &r) })
        default: return v
        }
    }

    /// A value close to `v`: one leaf changed, an element added or removed.
    static func mutate(_ v: Value, _ r: inout KeyTestRNG) -> Value {
        switch v {
        case .array(var a):
            if a.isEmpty || r.chance(4) {
                if !a.isEmpty && r.chance(2) { a.removeLast() } else { a.append(value(&r, depth: 1)) }
            } else {
                let i = r.below(a.count)
                a[i] = mutate(a[i], &r)
            }
            return .array(a)
        case .object(var o):
            if o.isEmpty || r.chance(3) {
                o[r.pick(keys)] = value(&r, depth: 1)
            } else {
                let k = o.keys.sorted(by: { compareBinary($0, $1) < 0 })[r.below(o.count)]
                o[k] = mutate(o[k]!, &r)
            }
            return .object(o)
        case .int(let i): return r.chance(2) ? .int(i &+ (r.chance(2) ? 1 : -1)) : .double(Double(i).nextUp)
        case .double(let d): return .double(r.chance(2) ? d.nextUp : d.nextDown)
        case .string(let s): return .string(r.chance(2) ? s + r.pick(stringPieces) : String(s.dropLast()))
        default: return scalar(&r)
        }
    }
}

/// memcmp sign of two byte strings.
func byteOrder(_ a: [UInt8], _ b: [UInt8]) -> Int {
    a.lexicographicallyPrecedes(b) ? -1 : (a == b ? 0 : 1)
}

/// Lexicographic Value.compare of two tuples.
func tupleOrder(_ a: [Value], _ b: [Value]) -> Int {
    for (x, y) in zip(a, b) {
        let c = Value.compare(x, y)
        if c != 0 { return c }
    }
    return a.count < b.count ? -1 : (a.count == b.count ? 0 : 1)
}

// MARK: - Tests

@Suite("IndexKey")
struct IndexKeyTests {
    /// A range scan on one column refills the range object of its last execution
    /// (`ScanRange.setRange`); it must hold exactly what building the range anew holds
    /// (`KeyRange.range` and `clipped()`), for values of every type, long strings that are
    /// clipped, open ends and empty ranges, reused in any order.
    @Test("A refilled one-column range equals the range built anew (seeded)")
    func refilledRangeEqualsBuiltRange() {
        var r = KeyTestRNG(seed: 0x5CA7_7E11)
        let reused = ScanRange(exact: IndexKey.KeyRange(), scan: IndexKey.KeyRange())
        for i in 0..<20_000 {
            func bound() -> Value {
                r.below(8) == 0 ? .string(String(repeating: "é", count: 100 + r.below(300))) : ValueGen.value(&r)
            }
            let hasLower = r.below(4) != 0
            let lower = hasLower ? bound() : .null
            let lowerInclusive = hasLower ? r.below(2) == 0 : false
            let upper: Value? = r.below(4) != 0 ? bound() : nil
            let upperInclusive = r.below(2) == 0
            let built = IndexKey.KeyRange.range(equal: [], lower: lower, lowerInclusive: lowerInclusive,
                                                upper: upper, upperInclusive: upperInclusive)
            let filled = reused.setRange(lower: lower, lowerInclusive: lowerInclusive, upper: upper, upperInclusive: upperInclusive)
            #expect(filled == !built.isEmpty, "case \(i): \(lower) … \(String(describing: upper))")
            if filled {
                #expect(reused.exact == built, "case \(i): exact \(reused.exact) against \(built)")
                #expect(reused.scan == built.clipped(), "case \(i): clipped \(reused.scan) against \(built.clipped())")
            }
        }
    }

    @Test("100,000 random pairs: memcmp of encodings equals Value.compare")
    func randomPairsOrder() {
        var r = KeyTestRNG(seed: 0x7E55_E4A6)
        var equalPairs = 0, failures = 0
        for i in 0..<100_000 {
            let a = ValueGen.value(&r)
            let b: Value
            switch r.below(3) {
            case 0: b = ValueGen.value(&r)
            case 1: b = ValueGen.mutate(a, &r)
            default: b = ValueGen.reRepresent(a, &r)
            }
            let expected = Value.compare(a, b)
            var ea: [UInt8] = [], eb: [UInt8] = []
            IndexKey.encode(a, into: &ea)
            IndexKey.encode(b, into: &eb)
            let got = byteOrder(ea, eb)
            if expected == 0 { equalPairs += 1 }
            if got != expected {
                failures += 1
                if failures <= 5 {
                    Issue.record("pair \(i): \(a) vs \(b): Value.compare \(expected), memcmp \(got)")
                }
            }
        }
        #expect(failures == 0)
        // The generator must exercise the equality side (1 vs 1.0 and friends) too.
        #expect(equalPairs > 20_000)
    }

    @Test("Numbers: exact across Int64 and Double")
    func numberOrder() {
        let ascending: [Value] = [
            .double(.nan), .double(-.infinity), .double(-.greatestFiniteMagnitude), .double(-0x1p63.nextUp * 2),
            .int(.min), .int(.min + 1), .double(-0x1p62), .int(-(1 << 62) + 1), .int(-(1 << 53) - 1),
            .double(-0x1p53), .int(-1), .double(-0.5), .double(-.leastNonzeroMagnitude),
            .int(0), .double(.leastNonzeroMagnitude), .double(.leastNormalMagnitude), .double(0.5),
            .int(1), .double(1.0.nextUp), .double(1.5), .int(2), .double(0x1p53), .int((1 << 53) + 1),
            .double(0x1p53 + 2), .int((1 << 62) + 1), .int(.max - 1), .int(.max), .double(0x1p63),
            .double(0x1p64), .double(1e300), .double(.greatestFiniteMagnitude), .double(.infinity),
        ]
        for (x, y) in zip(ascending, ascending.dropFirst()) {
            #expect(Value.compare(x, y) < 0, "fixture \(x) < \(y)")
            #expect(byteOrder(IndexKey.encode([x]), IndexKey.encode([y])) < 0, "\(x) < \(y)")
        }
        #expect(IndexKey.encode([1]) == IndexKey.encode([1.0]))
        #expect(IndexKey.encode([.int(0)]) == IndexKey.encode([.double(-0.0)]))
        #expect(IndexKey.encode([.int(1 << 53)]) == IndexKey.encode([.double(0x1p53)]))
        #expect(IndexKey.encode([.int(.min)]) == IndexKey.encode([.double(-0x1p63)]))
        #expect(IndexKey.encode([.int((1 << 53) + 1)]) != IndexKey.encode([.double(0x1p53)]))
        #expect(IndexKey.encode([.double(.nan)]) == IndexKey.encode([.double(-.nan)]))
    }

    @Test("Types, strings with NUL, arrays and objects")
    func structuredOrder() {
        let ascending: [Value] = [
            .missing, .null, false, true, .double(.nan), .int(.min), 0, .int(.max), .double(.infinity),
            "", "\0", "\0\0", "\0\u{1}", "a", "a\0", "a\0\0", "a\0b", "a\u{1}", "ab", "b", "é", "中", "😀",
            [], [.missing], [.null], [.null, .null], [false], [1], [1, []], [1, [1]], [2], ["a"], [[]], [[:]],
            [:], ["z": 1], ["a": 1, "b": 0], ["a": 1, "c": 0], ["a": 2, "c": 0], ["a": 0, "b": 0, "c": 0],
        ]
        for (x, y) in zip(ascending, ascending.dropFirst()) {
            #expect(Value.compare(x, y) < 0, "fixture \(x) < \(y)")
            #expect(byteOrder(IndexKey.encode([x]), IndexKey.encode([y])) < 0, "\(x) < \(y)")
        }
    }

    @Test("Tuples order lexicographically; full keys too")
    func tupleOrdering() {
        var r = KeyTestRNG(seed: 42)
        var failures = 0
        for i in 0..<20_000 {
            let n = 1 + r.below(3)
            let a = (0..<n).map { _ in ValueGen.value(&r, depth: 2) }
            var b = a
            let j = r.below(n)
            switch r.below(3) {
            case 0: b[j] = ValueGen.value(&r, depth: 2)
            case 1: b[j] = ValueGen.mutate(b[j], &r)
            default: b[j] = ValueGen.reRepresent(b[j], &r)
            }
            let expected = tupleOrder(a, b)
            let got = byteOrder(IndexKey.encode(a), IndexKey.encode(b))
            // Keys of different documents keep the tuple order; equal tuples order by doc ID.
            let ka = IndexKey.make(values: a, docID: "doc\(i)").key
            let kb = IndexKey.make(values: b, docID: "doc\(i)x").key
            let gotKeys = byteOrder(ka, kb)
            if got != expected || (expected != 0 && gotKeys != expected) || (expected == 0 && gotKeys >= 0) {
                failures += 1
                if failures <= 5 { Issue.record("tuple \(a) vs \(b): expected \(expected), got \(got)/\(gotKeys)") }
            }
        }
        #expect(failures == 0)
    }

    @Test("Decoding gives numerically equal values")
    func decodeRoundTrip() throws {
        var r = KeyTestRNG(seed: 7)
        for _ in 0..<20_000 {
            let tuple = (0..<(1 + r.below(3))).map { _ in ValueGen.value(&r) }
            let bytes = IndexKey.encode(tuple)
            let back = try IndexKey.decode(bytes)
            #expect(back.count == tuple.count)
            #expect(tupleOrder(back, tuple) == 0, "\(tuple) decoded as \(back)")
            #expect(IndexKey.encode(back) == bytes)
        }
        // Representation after decoding: integral numbers in range are ints.
        let back = try IndexKey.decode(IndexKey.encode([1.0, -0.0, 2.5, .double(0x1p63), .int(.min), .int(.max), .double((-0x1p63).nextDown)]))
        #expect(back.map(\.typeName) == Array(repeating: "number", count: 7))
        if case .int(1) = back[0] {} else { Issue.record("1.0 decodes as \(back[0])") }
        if case .int(0) = back[1] {} else { Issue.record("-0.0 decodes as \(back[1])") }
        if case .double(2.5) = back[2] {} else { Issue.record("2.5 decodes as \(back[2])") }
        if case .double(0x1p63) = back[3] {} else { Issue.record("2^63 decodes as \(back[3])") }
        if case .int(.min) = back[4] {} else { Issue.record("Int64.min decodes as \(back[4])") }
        if case .int(.max) = back[5] {} else { Issue.record("Int64.max decodes as \(back[5])") }
        if case .double(let d) = back[6], d == (-0x1p63).nextDown {} else { Issue.record("decodes as \(back[6])") }
        if case .double(let d) = try IndexKey.decode(IndexKey.encode([.double(.nan)]))[0], d.isNaN {} else {
            Issue.record("NaN does not decode as NaN")
        }
        let strings: [Value] = ["a\0b\0", "", "\0", ["k\0": ["\0x", 1], "": .null]]
        #expect(try IndexKey.decode(IndexKey.encode(strings)) == strings)
    }

    @Test("Malformed tuples throw")
    func decodeErrors() {
        let full = IndexKey.encode(["abc", 12, [1, 2]])
        for n in [1, 3, 5, 7, 12, full.count - 1] {
            #expect(throws: IndexKey.DecodingError.self) { try IndexKey.decode(Array(full.prefix(n))) }
        }
        #expect(throws: IndexKey.DecodingError.self) { try IndexKey.decode([0x99]) }
        #expect(throws: IndexKey.DecodingError.self) { try IndexKey.decode([0x50, 0x61, 0x00, 0x05, 0x00, 0x00]) }
        #expect(throws: IndexKey.DecodingError.self) { try IndexKey.values(fromKey: [1]) }
    }

    @Test("Keys carry the document ID and the truncation flag")
    func keysAndTrailer() throws {
        let (key, truncated) = IndexKey.make(values: ["Paris", 4.5], docID: "hotel_12")
        #expect(!truncated)
        #expect(!IndexKey.isTruncated(key: key))
        #expect(IndexKey.docID(fromKey: key) == "hotel_12")
        #expect(IndexKey.tupleBytes(fromKey: key).map(Array.init) == IndexKey.encode(["Paris", 4.5]))
        #expect(try IndexKey.values(fromKey: key) == ["Paris", 4.5])
        #expect(key.count == IndexKey.encode(["Paris", 4.5]).count + 8 + IndexKey.trailerSize)

        let unicodeID = "dóc\0😀"
        let k2 = IndexKey.make(values: [.missing], docID: unicodeID).key
        #expect(IndexKey.docID(fromKey: k2) == unicodeID)
        #expect(try IndexKey.values(fromKey: k2)?.first?.isMissing == true)

        let long = String(repeating: "x", count: 600)
        let id = String(repeating: "d", count: 40)
        let (tk, tr) = IndexKey.make(values: [1, .string(long)], docID: id)
        #expect(tr)
        #expect(tk.count == IndexKey.defaultMaxKeySize)
        #expect(IndexKey.isTruncated(key: tk))
        #expect(IndexKey.docID(fromKey: tk) == id)
        #expect(try IndexKey.values(fromKey: tk) == nil)
        let tuple = try #require(IndexKey.tupleBytes(fromKey: tk))
        #expect(IndexKey.encode([1, .string(long)]).starts(with: tuple))
        #expect(tuple.count == IndexKey.defaultMaxKeySize - IndexKey.trailerSize - id.utf8.count)

        // The longest allowed ID still leaves the guaranteed tuple room.
        let maxID = String(repeating: "m", count: IndexKey.maxDocIDBytes)
        let (mk, _) = IndexKey.make(values: [.string(long)], docID: maxID)
        #expect(mk.count == IndexKey.defaultMaxKeySize)
        #expect(IndexKey.tupleBytes(fromKey: mk)?.count == IndexKey.minimumRetainedTupleBytes())
        #expect(IndexKey.minimumRetainedTupleBytes() == 258)

        // Exactly at the limit is not truncated.
        let fit = IndexKey.defaultMaxKeySize - IndexKey.trailerSize - 2 - 1 - 2
        let (fk, ft) = IndexKey.make(values: [.string(String(repeating: "y", count: fit))], docID: "ab")
        #expect(!ft && fk.count == IndexKey.defaultMaxKeySize)
    }

    @Test("A document ID over the limit is a precondition failure")
    func docIDTooLong() async {
        await #expect(processExitsWith: .failure) {
            _ = IndexKey.make(values: [1], docID: String(repeating: "x", count: IndexKey.maxDocIDBytes + 1))
        }
    }

    @Test("Bounds: inclusive and exclusive ends, compound prefixes, IN-lists")
    func bounds() {
        // Index (a, b): a from a few values, b numbers and strings.
        var entries: [(tuple: [Value], key: [UInt8])] = []
        var n = 0
        for a: Value in [.missing, .null, "x", "y", 1, 1.5] {
            for b: Value in [.missing, .null, false, 0, 2, 2.0, 3, 7.5, 9, "", "a", "ab", "abc", "abd", "b", [1], ["k": 1]] {
                n += 1
                entries.append(([a, b], IndexKey.make(values: [a, b], docID: "d\(n)").key))
            }
        }
        func scan(_ range: IndexKey.KeyRange) -> Set<[UInt8]> {
            Set(entries.filter { range.contains(key: $0.key) }.map(\.key))
        }
        func expect(_ range: IndexKey.KeyRange, _ label: String, _ predicate: ([Value]) -> Bool) {
            let want = Set(entries.filter { predicate($0.tuple) }.map(\.key))
            #expect(scan(range) == want, "\(label): \(range)")
            #expect(!want.isEmpty || label.hasPrefix("empty"), "\(label) selects something")
        }
        let cmp = { (x: Value, y: Value) in Value.compare(x, y) }
        expect(.point(["x"]), "a = x") { cmp($0[0], "x") == 0 }
        expect(.point([1.0]), "a = 1.0") { cmp($0[0], 1) == 0 }
        expect(.point(["x", 2]), "a = x, b = 2") { cmp($0[0], "x") == 0 && cmp($0[1], 2) == 0 }
        expect(.point([.missing]), "a IS MISSING") { $0[0].isMissing }
        expect(.range(equal: ["x"], lower: 2, lowerInclusive: true, upper: 9, upperInclusive: false), "2 <= b < 9") {
            cmp($0[0], "x") == 0 && cmp($0[1], 2) >= 0 && cmp($0[1], 9) < 0
        }
        expect(.range(equal: ["x"], lower: 2, lowerInclusive: false, upper: 9, upperInclusive: true), "2 < b <= 9") {
            cmp($0[0], "x") == 0 && cmp($0[1], 2) > 0 && cmp($0[1], 9) <= 0
        }
        expect(.range(equal: ["y"], lower: 3, lowerInclusive: false, upper: nil), "b > 3") {
            cmp($0[0], "y") == 0 && cmp($0[1], 3) > 0
        }
        expect(.range(equal: ["y"], lower: .null, lowerInclusive: false, upper: 3, upperInclusive: false), "b < 3 (no NULL)") {
            cmp($0[0], "y") == 0 && cmp($0[1], .null) > 0 && cmp($0[1], 3) < 0
        }
        expect(.range(lower: 1, lowerInclusive: true, upper: "y", upperInclusive: true), "1 <= a <= y") {
            cmp($0[0], 1) >= 0 && cmp($0[0], "y") <= 0
        }
        expect(.range(lower: "x", lowerInclusive: false, upper: nil), "a > x") { cmp($0[0], "x") > 0 }
        expect(.range(lower: nil, upper: .null, upperInclusive: true), "a <= null") { cmp($0[0], .null) <= 0 }
        expect(.prefix(equal: [1.5], stringPrefix: "ab"), "b LIKE 'ab%'") {
            cmp($0[0], 1.5) == 0 && $0[1].stringValue.map { $0.utf8.starts(with: "ab".utf8) } == true
        }
        expect(.prefix(stringPrefix: ""), "a LIKE '%'") { $0[0].stringValue != nil }
        expect(.prefix(equal: ["x"], stringPrefix: ""), "b LIKE '%'") { cmp($0[0], "x") == 0 && $0[1].stringValue != nil }
        expect(.range(equal: ["x"], lower: 9, lowerInclusive: false, upper: 2, upperInclusive: true), "empty: 9 < b <= 2") { _ in false }
        #expect(IndexKey.KeyRange.range(equal: ["x"], lower: 9, upper: 2).isEmpty)
        #expect(IndexKey.KeyRange.all.contains(key: entries[0].key))

        // IN (2, 2.0, 9, 3): three point ranges in key order.
        let ins = IndexKey.KeyRange.points([["x", 2], ["x", 2.0], ["x", 9], ["x", 3]])
        #expect(ins.count == 3)
        #expect(ins.map(\.lower) == [IndexKey.encode(["x", 2]), IndexKey.encode(["x", 3]), IndexKey.encode(["x", 9])])

        // Prefix bounds with NUL in the prefix.
        let nul = IndexKey.prefixBound(stringPrefix: "a\0")
        for (s, inside) in [("a", false), ("a\0", true), ("a\0\0", true), ("a\0z", true), ("a\u{1}", false), ("a\0\u{10FFFF}", true)] {
            #expect(nul.contains(key: IndexKey.make(values: [.string(s)], docID: "d").key) == inside, "\(s)")
        }
        // Raw bound helpers.
        #expect(IndexKey.lowerBound(for: ["a"], inclusive: true) == IndexKey.encode(["a"]))
        #expect(IndexKey.lowerBound(for: ["a"], inclusive: false) == IndexKey.encode(["a"]) + [0xFF])
        #expect(IndexKey.upperBound(for: ["a"], inclusive: false) == IndexKey.encode(["a"]))
        #expect(IndexKey.upperBound(for: ["a"], inclusive: true) == IndexKey.encode(["a"]) + [0xFF])
    }

    @Test("Scans find truncated keys and classify them correctly")
    func truncatedScans() throws {
        var r = KeyTestRNG(seed: 99)
        // Long strings sharing long prefixes, so truncation points fall inside shared bytes.
        let stems = (0..<4).map { i in String(repeating: "s\(i)", count: 100 + 40 * i) }
        func longString() -> String {
            var s = r.pick(stems)
            if r.chance(3) { s = String(s.prefix(200 + r.below(300))) }
            for _ in 0..<r.below(4) { s += r.pick(["a", "b", "\0", "é", String(repeating: "q", count: 150)]) }
            return s
        }
        var docs: [(tuple: [Value], key: [UInt8], truncated: Bool)] = []
        for i in 0..<1_500 {
            let a: Value = r.pick(["k", "l", .int(Int64(r.below(3)))])
            let b: Value = r.chance(4) ? .int(Int64(r.below(10))) : .string(longString())
            let c: Value = r.chance(2) ? .int(Int64(r.below(5))) : .string(longString())
            let id = String(repeating: "i", count: r.below(IndexKey.maxDocIDBytes - 8)) + "\(i)"
            let (key, truncated) = IndexKey.make(values: [a, b, c], docID: id)
            #expect(key.count <= IndexKey.defaultMaxKeySize)
            docs.append(([a, b, c], key, truncated))
        }
        #expect(docs.filter(\.truncated).count > 300)
        let sorted = docs.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        let sortedKeys = sorted.map(\.key)

        var totalAmbiguous = 0, clippedRanges = 0, truncatedInside = 0
        func check(_ exact: IndexKey.KeyRange, _ label: String, _ predicate: ([Value]) -> Bool) {
            let scanRange = exact.clipped()
            if !scanRange.isExact { clippedRanges += 1 }
            // The cursor walk: seek to lower, stop at upper.
            var start = sortedKeys.firstIndex { !$0.lexicographicallyPrecedes(scanRange.lower) } ?? sortedKeys.count
            var found: Set<Int> = []
            var ambiguous = 0
            while start < sorted.count {
                let e = sorted[start]
                if let upper = scanRange.upper, !e.key.lexicographicallyPrecedes(upper) { break }
                switch exact.match(key: e.key) {
                case .outside:
                    #expect(!predicate(e.tuple), "\(label): a matching entry was classified outside")
                case .inside:
                    #expect(predicate(e.tuple), "\(label): an entry outside the range was classified inside")
                    if e.truncated { truncatedInside += 1 }
                    found.insert(start)
                case .ambiguous:
                    #expect(e.truncated)
                    ambiguous += 1
                    if predicate(e.tuple) { found.insert(start) } // the re-check against the document
                }
                start += 1
            }
            let want = Set(sorted.indices.filter { predicate(sorted[$0].tuple) })
            #expect(found == want, "\(label): scan found \(found.count), expected \(want.count)")
            totalAmbiguous += ambiguous
        }

        let cmp = { (x: Value, y: Value) in Value.compare(x, y) }
        for _ in 0..<60 {
            let probe = r.pick(docs).tuple
            let other = r.pick(docs).tuple
            let (lo, hi) = cmp(probe[1], other[1]) <= 0 ? (probe[1], other[1]) : (other[1], probe[1])
            let li = r.chance(2), ui = r.chance(2)
            check(.point([probe[0], probe[1]]), "point") { cmp($0[0], probe[0]) == 0 && cmp($0[1], probe[1]) == 0 }
            check(.point(probe), "full point") { tupleOrder($0, probe) == 0 }
            check(.range(equal: [probe[0]], lower: lo, lowerInclusive: li, upper: hi, upperInclusive: ui), "range") {
                cmp($0[0], probe[0]) == 0 && (li ? cmp($0[1], lo) >= 0 : cmp($0[1], lo) > 0)
                    && (ui ? cmp($0[1], hi) <= 0 : cmp($0[1], hi) < 0)
            }
            check(.range(equal: [probe[0], probe[1]], lower: probe[2], lowerInclusive: li, upper: nil), "range on c") {
                cmp($0[0], probe[0]) == 0 && cmp($0[1], probe[1]) == 0
                    && (li ? cmp($0[2], probe[2]) >= 0 : cmp($0[2], probe[2]) > 0)
            }
            if let s = probe[1].stringValue {
                let scalars = s.unicodeScalars
                let p = String(String.UnicodeScalarView(scalars.prefix(r.below(scalars.count + 1))))
                check(.prefix(equal: [probe[0]], stringPrefix: p), "prefix \(p.utf8.count)") {
                    cmp($0[0], probe[0]) == 0 && $0[1].stringValue.map { $0.utf8.starts(with: p.utf8) } == true
                }
            }
        }
        // The workload must reach every branch: clipped scans, ambiguous and decided truncated keys.
        #expect(clippedRanges > 20)
        #expect(totalAmbiguous > 20)
        #expect(truncatedInside > 20)
    }

    @Test("Clipping widens long bounds and keeps short ones")
    func clipping() {
        let short = IndexKey.KeyRange.point(["abc"])
        #expect(short.clipped() == short)
        #expect(short.clipped().isExact)
        let longValue = Value.string(String(repeating: "z", count: 400))
        let long = IndexKey.KeyRange.point([longValue])
        let c = long.clipped()
        #expect(!c.isExact)
        #expect(c.lower.count == IndexKey.minimumRetainedTupleBytes())
        #expect(long.lower.starts(with: c.lower))
        #expect(c.upper.map { byteOrder($0, long.upper!) > 0 } == true)
        #expect(IndexKey.prefixSuccessor([1, 0xFF, 0xFF][...]) == [2])
        #expect(IndexKey.prefixSuccessor([0xFF][...]) == nil)
    }
}

@Suite("IndexKey components and index statistics")
struct IndexKeyComponentTests {
    @Test("componentEnd finds the end of every value, and no end inside a cut encoding")
    func componentEnds() {
        var r = KeyTestRNG(seed: 0xC0_FFEE)
        for _ in 0..<20_000 {
            let values = (0..<(1 + r.below(3))).map { _ in ValueGen.value(&r) }
            let bytes = IndexKey.encode(values)
            // Walking the components gives each value's own encoding length.
            var at = 0
            bytes.withUnsafeBytes { p in
                for v in values {
                    let end = IndexKey.componentEnd(p, from: at)
                    #expect(end == at + IndexKey.encode([v]).count, "value \(v)")
                    at = end ?? bytes.count
                }
            }
            #expect(at == bytes.count)
            // A value cut anywhere before its end is never complete.
            let first = IndexKey.encode([values[0]])
            let cut = r.below(first.count)
            Array(first[0..<cut]).withUnsafeBytes { p in
                #expect(IndexKey.componentEnd(p, from: 0) == nil, "cut at \(cut) of \(values[0])")
            }
        }
    }

    @Test("Distinct prefix counts from the key bytes equal those of the decoded values (seeded)")
    func distinctTally() {
        var r = KeyTestRNG(seed: 0x5747)
        for round in 0..<200 {
            let columns = 1 + r.below(3)
            // Few distinct values per column so that prefixes repeat; numbers in both forms.
            let pool = (0..<(1 + r.below(6))).map { _ in ValueGen.value(&r, depth: 2) }
            var tuples: [[UInt8]] = []
            var decoded: [[Value]] = []
            for _ in 0..<(1 + r.below(60)) {
                let values = (0..<columns).map { _ in ValueGen.reRepresent(r.pick(pool), &r) }
                tuples.append(IndexKey.encode(values))
                decoded.append(values)
            }
            let order = tuples.indices.sorted { byteOrder(tuples[$0], tuples[$1]) < 0 }
            var tally = IndexStatistics.DistinctTally(columns: columns)
            for i in order { tuples[i].withUnsafeBytes { tally.add($0) } }
            for k in 0..<columns {
                // Distinct prefixes by their encodings (1 and 1.0 encode alike).
                let expected = Set(decoded.map { IndexKey.encode(Array($0.prefix(k + 1))) }).count
                #expect(tally.distinct[k] == expected, "round \(round), \(k + 1) columns")
            }
        }
    }

    @Test("A truncated tuple shares its complete leading columns' counts")
    func truncatedTuples() {
        let long = String(repeating: "x", count: 300)
        let a = IndexKey.encode(["city", .string(long + "a")])
        let b = IndexKey.encode(["city", .string(long + "b")])
        var tally = IndexStatistics.DistinctTally(columns: 2)
        // Both cut inside the second column: the first column is the same value.
        Array(a.prefix(100)).withUnsafeBytes { tally.add($0) }
        Array(b.prefix(100)).withUnsafeBytes { tally.add($0) }
        #expect(tally.distinct == [1, 1])
        Array(b.prefix(120)).withUnsafeBytes { tally.add($0) }
        #expect(tally.distinct == [1, 2])
    }
}
