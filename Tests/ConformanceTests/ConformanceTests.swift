import Testing
@testable import Tessera

@Suite("Conformance fixtures")
struct ConformanceTests {
    @Test func placeholder() { #expect(Bool(true)) }
}
