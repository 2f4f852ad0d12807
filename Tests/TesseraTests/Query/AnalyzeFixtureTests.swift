import Foundation
import Testing
@testable import Tessera
@testable import TesseraConformance

/// Issue 20: EXPLAIN ANALYZE counts what really happens, over every query of the conformance
/// fixture corpus (Fixtures/ and the shared examples): the rows it reports returned equal the
/// rows the query returns; the rows passing the last source equal the joined rows the
/// executor produces; a full scan reads every live document once; and analysing a query
/// never changes its rows.
@Suite("EXPLAIN ANALYZE over the fixture corpus (property)")
struct AnalyzeFixtureTests {
    static var root: String {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(4) // Tests/TesseraTests/Query/AnalyzeFixtureTests.swift
        return parts.joined(separator: "/")
    }

    /// The joined rows of a query's plan (before grouping and LIMIT), counted by running the
    /// executor without analysis.
    static func joinedRows(_ query: Query) throws -> Int? {
        let (prepared, params) = try query.database.read { txn in try query.prepare(txn: txn) }
        if prepared.plan.aggregateShortcut != nil { return nil }
        return try query.database.read { txn in
            let ex = try Executor(prepared: prepared, txn: txn, parameters: params) { sp, _ in
                try RowSourceFactory.make(sp, parameters: params.dictionary)
            }
            defer { ex.close() }
            var n = 0
            while try ex.nextJoinedRow() { n += 1 }
            return n
        }
    }

    @Test("figures equal the real counts on every fixture query")
    func corpus() throws {
        let files = ConformanceRunner.fixtureFiles(in: Self.root + "/Fixtures")
            + ConformanceRunner.fixtureFiles(in: Self.root + "/../shared/conformance/examples")
        #expect(files.count > 30)
        var checked = 0
        for path in files {
            guard let fixture = try? Fixture.load(path: path) else { continue }
            let db = try Database.temporary()
            defer { try? db.close() }
            guard (try? fixture.setUp(db)) != nil else { continue }
            for step in fixture.steps {
                guard case .query(let q) = step.action, q.error == nil else { _ = step.run(db); continue }
                guard let query = try? db.createQuery(q.sql) else { continue }
                query.parameters = Parameters(q.params)
                guard let rows = try? query.execute().allResults() else { continue }
                let plan = try query.explainPlan(analyze: true)
                let context = "\(path): \(q.sql)"
                #expect(plan.resultRows == rows.count, "\(context)")
                // Analysing does not change the rows.
                #expect(try query.execute().allResults().count == rows.count, "\(context)")
                if let joined = try Self.joinedRows(query), let last = plan.sources.last?.analysis {
                    // LIMIT stops a streaming query early.
                    if plan.limit == nil { #expect(last.rowsPassed == joined, "\(context): \(plan.text)") } else { #expect(last.rowsPassed <= joined, "\(context)") }
                }
                for (i, s) in plan.sources.enumerated() {
                    guard let a = s.analysis else { continue }
                    #expect(a.rowsPassed <= a.actualRows + a.loops, "\(context) source \(i)")
                    if i == 0, s.access == .fullScan, a.loops == 1, let name = s.collection,
                       plan.aggregateReads.isEmpty, plan.limit == nil {
                        let parts = name.split(separator: ".").map(String.init)
                        let count = try db.collection(name: parts[1], scope: parts[0])?.count ?? -1
                        // Tombstones are rows too when the query reads meta().deleted.
                        if q.sql.lowercased().contains("meta") { #expect(a.actualRows >= count, "\(context)") } else { #expect(a.actualRows == count, "\(context)") }
                    }
                }
                checked += 1
            }
        }
        #expect(checked > 1000)
    }
}
