import Testing
import TesseraConformance

/// Runs every fixture in `Fixtures/` (and the shared examples when present) through the
/// same runner as `tessera conformance`.
@Suite("Conformance fixtures")
struct ConformanceTests {
    static let root: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3) // Tests/ConformanceTests/ConformanceTests.swift
        return parts.joined(separator: "/")
    }()

    static var fixtureFiles: [String] {
        ConformanceRunner.fixtureFiles(in: root + "/Fixtures")
    }

    @Test func fixturesExist() {
        #expect(!ConformanceTests.fixtureFiles.isEmpty)
    }

    @Test(arguments: ConformanceTests.fixtureFiles)
    func fixture(_ path: String) {
        let results = ConformanceRunner().runFixture(at: path)
        for r in results where !r.passed {
            Issue.record("\(path) step \(r.step) (\(r.name)): \(r.message ?? "failed")")
        }
        #expect(!results.isEmpty)
    }
}
