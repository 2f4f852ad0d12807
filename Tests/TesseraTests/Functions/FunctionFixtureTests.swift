import Foundation
import Testing
@testable import Tessera
@testable import TesseraConformance

/// Runs every step of Fixtures/functions and Fixtures/collation through the conformance runner
/// (the real engine, as `tessera conformance` does) and checks the fixture files themselves.
@Suite("Function fixtures")
struct FunctionFixtureTests {
    static let folders = ["functions", "collation"]

    /// `Fixtures/<folder>` in the package root (four levels above this file).
    static func folderPath(_ folder: String) -> String {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(4) // Tests/TesseraTests/Functions/FunctionFixtureTests.swift
        return parts.joined(separator: "/") + "/Fixtures/" + folder
    }

    static func files(in folder: String) -> [String] {
        ConformanceRunner.fixtureFiles(in: folderPath(folder))
    }

    /// The query steps of a fixture that expect rows.
    static func queryCases(_ path: String) throws -> [Step.QueryStep] {
        try Fixture.load(path: path).steps.compactMap { step in
            if case .query(let q) = step.action, q.expect != nil { q } else { nil }
        }
    }

    static func name(_ path: String) -> String { String(path.split(separator: "/").last ?? "") }

    @Test func fixturesAreWellFormed() throws {
        var total = 0
        for folder in Self.folders {
            let files = Self.files(in: folder)
            #expect(!files.isEmpty, "no fixtures in \(folder)")
            for path in files {
                // The runner's loader rejects unknown keys, a format other than 1 and documents
                // without a string `_id`.
                let cases = try Self.queryCases(path)
                let root = try JSONReader.parse(try String(contentsOfFile: path, encoding: .utf8))
                guard case .object(let top) = root else { Issue.record("\(Self.name(path)): not an object"); continue }
                #expect(Set(top.keys).isSubset(of: ["format", "description", "collections", "indexes", "steps"]), "\(Self.name(path))")
                #expect(root["format"] == 1)
                for c in root["collections"].arrayValue ?? [] {
                    for d in c["docs"].arrayValue ?? [] { #expect(d["_id"].stringValue != nil, "document without _id in \(Self.name(path))") }
                }
                var names = Set<String>()
                for s in root["steps"].arrayValue ?? [] {
                    guard case .object(let step) = s else { Issue.record("step not an object"); continue }
                    #expect(Set(step.keys).isSubset(of: Step.queryKeys))
                    if let n = step["name"]?.stringValue { #expect(names.insert(n).inserted, "duplicate step name \(n)") }
                }
                total += cases.count
            }
        }
        #expect(total >= 380)
    }

    @Test func functionFixturesHaveAtLeast300Cases() throws {
        let n = try Self.files(in: "functions").reduce(0) { $0 + (try Self.queryCases($1).count) }
        #expect(n >= 300)
    }

    @Test func everyRegisteredFunctionIsCoveredWithMissingAndNull() throws {
        var queries: [String] = []
        for path in Self.files(in: "functions") { queries += try Self.queryCases(path).map { $0.sql.uppercased() } }
        for name in FunctionRegistry.allNames {
            let calls = queries.filter { $0.contains(name + "(") }
            #expect(!calls.isEmpty, "no fixture calls \(name)")
            guard let def = FunctionRegistry.lookup(name), def.minArgs > 0, !def.isAggregate, !name.hasPrefix("IS_"), !name.hasPrefix("TO_"), name != "TYPENAME", name != "ARRAY_OF" else { continue }
            #expect(calls.contains { $0.contains(name + "(MISSING") || $0.contains(name + "(NOSUCH") }, "no MISSING case for \(name)")
            #expect(calls.contains { $0.contains(name + "(NULL") }, "no NULL case for \(name)")
        }
    }

    @Test func everyStepEvaluatesAsExpected() throws {
        let report = ConformanceRunner().run(paths: Self.folders.map(Self.folderPath))
        for c in report.cases where !c.passed {
            Issue.record("\(Self.name(c.file)) step \(c.step) (\(c.name)): \(c.message ?? "failed")")
        }
        #expect(report.failed == 0)
        #expect(report.passed >= 380)
    }
}
