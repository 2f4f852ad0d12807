@testable import Tessera

/// The shared seeded generator (Sources/Tessera/Support/SplitMix64.swift).
typealias ValuesTestRNG = SplitMix64

/// Builds random JSON-compatible values (no MISSING, no NaN/infinity).
struct ValuesRandomGenerator {
    var rng: ValuesTestRNG

    static let scalars: [Unicode.Scalar] = [
        "a", "b", "z", "A", "0", "9", " ", "_", "-", ".", "\"", "\\", "/", "\n", "\t", "\r",
        "\u{0}", "\u{1}", "\u{1F}", "\u{7F}", "é", "ß", "中", "\u{FFFF}", "\u{FEFF}", "😀", "\u{10FFFF}",
    ]

    mutating func string(maxLength: Int = 12) -> String {
        var s = String.UnicodeScalarView()
        let n = rng.chance(0.1) ? rng.int(20...80) : rng.int(0...maxLength)
        for _ in 0..<n {
            if rng.chance(0.7) {
                s.append(Unicode.Scalar(UInt8(rng.int(0x61...0x7A))))
            } else {
                s.append(Self.scalars[rng.int(0...(Self.scalars.count - 1))])
            }
        }
        return String(s)
    }

    mutating func double() -> Double {
        switch rng.int(0...5) {
        case 0: // any finite bit pattern
            while true {
                let d = Double(bitPattern: rng.next())
                if d.isFinite { return d }
            }
        case 1: return Double(rng.int(-100_000...100_000)) / 100 // short decimals
        case 2: return Double(rng.int(-1_000_000...1_000_000)) * 1e-7
        case 3: return Double.random(in: -1e6...1e6, using: &rng)
        case 4: return [0.1, 0.5, -0.0, 0.0, 1e-300, .leastNonzeroMagnitude, 1.7976931348623157e308, 2.0, 1e22, 1e23, 123456789.125][rng.int(0...10)]
        default: return Double(rng.int(-50...50)) * 1e15
        }
    }

    mutating func int() -> Int64 {
        switch rng.int(0...3) {
        case 0: return Int64(rng.int(0...31))
        case 1: return Int64(rng.int(-1000...1000))
        case 2: return Int64(bitPattern: rng.next()) >> UInt64(rng.int(0...63))
        default: return [Int64.min, Int64.max, Int64.min + 1, -1, 255, 256, -129, 65536][rng.int(0...7)]
        }
    }

    mutating func value(depth: Int = 0) -> Value {
        let containerChance = depth == 0 ? 1.0 : (depth > 3 ? 0.0 : 0.25)
        if rng.chance(containerChance) {
            // Now and then a large container (wide offset tables), only near the top.
            let large = depth <= 1 && rng.chance(0.03)
            if depth > 0 && rng.chance(0.4) {
                let n = large ? rng.int(10...200) : rng.int(0...6)
                return .array((0..<n).map { _ in value(depth: depth + 1) })
            }
            let n = large ? rng.int(10...100) : rng.int(0...8)
            var o: [String: Value] = [:]
            for _ in 0..<n { o[string(maxLength: 8)] = value(depth: depth + 1) }
            return .object(o)
        }
        switch rng.int(0...6) {
        case 0: return .null
        case 1: return .bool(rng.chance(0.5))
        case 2, 3: return .int(int())
        case 4: return .double(double())
        default: return .string(string())
        }
    }
}

/// Strict equality that also distinguishes int from double and compares doubles by bits.
func valuesIdentical(_ a: Value, _ b: Value) -> Bool {
    switch (a, b) {
    case (.missing, .missing), (.null, .null): return true
    case (.bool(let x), .bool(let y)): return x == y
    case (.int(let x), .int(let y)): return x == y
    case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
    case (.string(let x), .string(let y)): return x.utf8.elementsEqual(y.utf8)
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { valuesIdentical($0, $1) }
    case (.object(let x), .object(let y)):
        return x.count == y.count && x.allSatisfy { k, v in y[k].map { valuesIdentical(v, $0) } ?? false }
    default: return false
    }
}
