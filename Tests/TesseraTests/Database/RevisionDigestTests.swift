import Testing
@testable import Tessera

/// The revision digest (`DocumentRecord.digest`): deterministic, and changed by any change
/// of the body or the generation.
@Suite("Revision digest")
struct RevisionDigestTests {
    func digest(_ bytes: [UInt8], generation: UInt32 = 1) -> UInt64 {
        bytes.withUnsafeBytes { DocumentRecord.digest(generation: generation, body: $0) }
    }

    @Test func everyByteAndTheGenerationCount() {
        var rng = SplitMix64(seed: 19)
        var seen = Set<UInt64>()
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000] {
            for _ in 0..<20 {
                let body = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                let d = digest(body)
                #expect(d == digest(body), "not deterministic")
                #expect(seen.insert(d).inserted || length == 0, "two bodies share a digest")
                #expect(digest(body, generation: 2) != d)
                for i in 0..<length {
                    var changed = body
                    changed[i] ^= UInt8(1 << rng.int(8))
                    #expect(digest(changed) != d, "a change of byte \(i) of \(length) left the digest")
                }
                // A trailing zero byte is not the same body.
                #expect(digest(body + [0]) != d)
            }
        }
        // 100,000 random 24-byte bodies: no two share a digest.
        var many = Set<UInt64>()
        for _ in 0..<100_000 {
            let body = (0..<3).flatMap { _ in withUnsafeBytes(of: rng.next()) { Array($0) } }
            many.insert(digest(body))
        }
        #expect(many.count == 100_000)
    }
}
