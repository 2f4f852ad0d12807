/// SplitMix64: the package's one seeded random source, for data that must be the same on
/// every run — randomised tests (so a failure reproduces), `tessera demo`'s sample data and
/// `tessera-bench`'s generated documents. Not for anything that needs unpredictability.
///
/// ```swift
/// var rng = SplitMix64(seed: 42)
/// let die = rng.below(6) + 1
/// ```
///
/// The bounded helpers are written out here, not taken from the standard library's
/// `random(in:using:)`, so generated data depends only on the seed. `below` reduces modulo
/// the bound; the `scaled` helpers multiply and shift instead (tessera-bench's datasets
/// are defined by them: changing either changes every generated document).
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose whole output is determined by `seed`.
    package init(seed: UInt64) { state = seed }

    /// A generator for item `index` of stream `stream` of `seed`: items are independent of
    /// each other, so item 7 is the same whatever the number of items generated.
    package init(seed: UInt64, stream: UInt64, index: Int) {
        var mixer = SplitMix64(seed: seed ^ (stream &* 0xD6E8_FEB8_6659_FD93))
        let base = mixer.next()
        state = base ^ (UInt64(index) &* 0x9E37_79B9_7F4A_7C15)
        _ = next()
    }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in `0..<n` (modulo; the bias is negligible for small `n`).
    package mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }

    /// A random element of `list`.
    package mutating func pick<T>(_ list: [T]) -> T { list[below(list.count)] }

    /// `k` distinct elements of `list`, in list order.
    package mutating func sample<T>(_ list: [T], _ k: Int) -> [T] {
        var idx = Array(list.indices)
        for i in 0..<min(k, idx.count) { idx.swapAt(i, i + below(idx.count - i)) }
        return idx.prefix(k).sorted().map { list[$0] }
    }

    /// A uniform double in [0, 1).
    package mutating func unit() -> Double {
        Double(next() >> 11) * (1.0 / 9_007_199_254_740_992.0)
    }

    /// True with probability `p`.
    package mutating func chance(_ p: Double) -> Bool { unit() < p }

    // MARK: - Multiply-shift helpers (tessera-bench)

    /// Uniform in `0..<bound` by multiply-shift (the bias is below 2⁻³² for our bounds).
    package mutating func scaled(below bound: Int) -> Int {
        precondition(bound > 0)
        return Int(((next() >> 32) &* UInt64(bound)) >> 32)
    }

    /// Uniform in `range`, by `scaled(below:)`.
    package mutating func scaled(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + scaled(below: range.count)
    }

    /// `k` distinct integers of `0..<n` (k ≤ n), in the order drawn, by `scaled(below:)`.
    package mutating func distinct(_ k: Int, below n: Int) -> [Int] {
        precondition(k <= n)
        if k * 4 > n {
            var all = Array(0..<n)
            for i in 0..<k { all.swapAt(i, i + scaled(below: n - i)) }
            return Array(all[0..<k])
        }
        var seen = Set<Int>()
        var out: [Int] = []
        out.reserveCapacity(k)
        while out.count < k {
            let v = scaled(below: n)
            if seen.insert(v).inserted { out.append(v) }
        }
        return out
    }
}
