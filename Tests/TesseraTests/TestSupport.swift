import Tessera

/// Randomised tests draw from `SplitMix64`, the package's one seeded source (in Tessera's
/// Support folder), so failures reproduce. These are the tests' shorthands for it.
extension SplitMix64 {
    /// Uniform in 0..<n.
    mutating func int(_ n: Int) -> Int { below(n) }
    /// Uniform in `range`.
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
}

extension String {
    /// An EXPLAIN text without its `NOT USED:` section (tests of the plan lines alone).
    var planOnly: String {
        guard let r = range(of: "\nNOT USED:") else { return self }
        return String(self[..<r.lowerBound])
    }
}
