/// SplitMix64 with its own bounded-integer and double helpers, so that generated data depends
/// only on the seed (never on the standard library's `random(in:)` algorithms).
struct BenchRandom {
    private var state: UInt64

    /// A generator whose whole output is determined by `seed`.
    init(seed: UInt64) { state = seed }

    /// A generator for item `index` of stream `seed`: items are independent of each other,
    /// so item 7 is the same whatever the number of items generated.
    init(seed: UInt64, stream: UInt64, index: Int) {
        var mixer = BenchRandom(seed: seed ^ (stream &* 0xD6E8_FEB8_6659_FD93))
        let base = mixer.next()
        state = base ^ (UInt64(index) &* 0x9E37_79B9_7F4A_7C15)
        _ = next()
    }

    /// The next 64 random bits.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform integer in `0..<bound` (multiply-shift; the bias is below 2⁻³² for our bounds).
    mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0)
        return Int(((next() >> 32) &* UInt64(bound)) >> 32)
    }

    /// A uniform integer in `range`.
    mutating func int(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + below(range.count)
    }

    /// A uniform double in [0, 1).
    mutating func unit() -> Double {
        Double(next() >> 11) * (1.0 / 9_007_199_254_740_992.0)
    }

    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool { unit() < p }

    /// `k` distinct integers of `0..<n` (k ≤ n), in the order drawn.
    mutating func distinct(_ k: Int, below n: Int) -> [Int] {
        precondition(k <= n)
        if k * 4 > n {
            var all = Array(0..<n)
            for i in 0..<k { all.swapAt(i, i + below(n - i)) }
            return Array(all[0..<k])
        }
        var seen = Set<Int>()
        var out: [Int] = []
        out.reserveCapacity(k)
        while out.count < k {
            let v = below(n)
            if seen.insert(v).inserted { out.append(v) }
        }
        return out
    }
}
