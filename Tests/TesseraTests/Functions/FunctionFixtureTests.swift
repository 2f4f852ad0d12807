import Foundation
import Testing
@testable import Tessera

/// Runs every step of Fixtures/functions and Fixtures/collation through the function
/// registry (via a small stand-in evaluator) and checks the fixture files themselves.
@Suite("Function fixtures")
struct FunctionFixtureTests {
    static let folders = ["functions", "collation"]

    static func allCases() throws -> [(FixtureCase, [String: [Value]])] {
        var out: [(FixtureCase, [String: [Value]])] = []
        for folder in folders {
            for url in FixtureFiles.jsonFiles(in: folder) {
                let (collections, cases, _) = try FixtureFiles.load(url)
                for c in cases { out.append((c, collections)) }
            }
        }
        return out
    }

    @Test func fixturesAreWellFormed() throws {
        var total = 0
        for folder in Self.folders {
            let files = FixtureFiles.jsonFiles(in: folder)
            #expect(!files.isEmpty, "no fixtures in \(folder)")
            for url in files {
                let (_, cases, root) = try FixtureFiles.load(url)
                guard case .object(let top) = root else { Issue.record("\(url.lastPathComponent): not an object"); continue }
                #expect(Set(top.keys).isSubset(of: ["format", "description", "collections", "indexes", "steps"]), "\(url.lastPathComponent)")
                #expect(root["format"] == 1)
                for c in root["collections"].arrayValue ?? [] {
                    for d in c["docs"].arrayValue ?? [] { #expect(d["_id"].stringValue != nil, "document without _id in \(url.lastPathComponent)") }
                }
                var names = Set<String>()
                for s in root["steps"].arrayValue ?? [] {
                    guard case .object(let step) = s else { Issue.record("step not an object"); continue }
                    #expect(Set(step.keys).isSubset(of: ["name", "query", "params", "expect", "ordered", "expectCount", "uses", "error", "errorContains"]))
                    if let n = step["name"]?.stringValue { #expect(names.insert(n).inserted, "duplicate step name \(n)") }
                }
                total += cases.count
            }
        }
        #expect(total >= 380)
    }

    @Test func functionFixturesHaveAtLeast300Cases() throws {
        let n = try FixtureFiles.jsonFiles(in: "functions").reduce(0) { $0 + (try FixtureFiles.load($1).cases.count) }
        #expect(n >= 300)
    }

    @Test func everyRegisteredFunctionIsCoveredWithMissingAndNull() throws {
        var queries: [String] = []
        for url in FixtureFiles.jsonFiles(in: "functions") { queries += try FixtureFiles.load(url).cases.map { $0.query.uppercased() } }
        for name in FunctionRegistry.allNames {
            let calls = queries.filter { $0.contains(name + "(") }
            #expect(!calls.isEmpty, "no fixture calls \(name)")
            guard let def = FunctionRegistry.lookup(name), def.minArgs > 0, !def.isAggregate, !name.hasPrefix("IS_"), !name.hasPrefix("TO_"), name != "TYPENAME", name != "ARRAY_OF" else { continue }
            #expect(calls.contains { $0.contains(name + "(MISSING") || $0.contains(name + "(NOSUCH") }, "no MISSING case for \(name)")
            #expect(calls.contains { $0.contains(name + "(NULL") }, "no NULL case for \(name)")
        }
    }

    @Test func everyStepEvaluatesAsExpected() throws {
        let evaluator = MiniEvaluator()
        var failures = 0
        for (c, collections) in try Self.allCases() {
            let rows: [[String: Value]]
            do {
                rows = try evaluator.run(c.query, collections: collections)
            } catch {
                Issue.record("\(c): \(error)")
                failures += 1
                continue
            }
            let got = rows.map { Value.object($0) }
            let ok = c.ordered ? got == c.expect : (got.count == c.expect.count && c.expect.allSatisfy { e in got.contains(e) })
            if !ok {
                failures += 1
                Issue.record("\(c)\n  query: \(c.query)\n  expected: \(Value.array(c.expect))\n  got:      \(Value.array(got))")
            }
        }
        #expect(failures == 0)
    }
}
