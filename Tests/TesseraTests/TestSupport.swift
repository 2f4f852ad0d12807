import Tessera

/// Randomised tests draw from `SplitMix64`, the package's one seeded source (in Tessera's
/// Support folder), so failures reproduce. These are the tests' shorthands for it.
extension SplitMix64 {
    /// Uniform in 0..<n.
    mutating func int(_ n: Int) -> Int { below(n) }
    /// Uniform in `range`.
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
}
