@testable import Tessera
import Testing

/// Issue 15, part 4: one `Database`, a few `Query` objects and `Document`s shared by 8 tasks
/// that read, query, save, change query parameters and read document bodies at once.
/// Meant to run under ThreadSanitizer:
/// `swift test --sanitize=thread --scratch-path /tmp/tsan --filter SharedObjectsStress`.
@Suite("Reliability: shared objects under concurrency")
struct SharedObjectsStressTests {
    static let tasks = 8
    static let rounds = 60
    static let cities = ["Paris", "Lyon", "Nice", "Lille"]

    @Test func databaseQueriesAndDocumentsSharedByEightTasks() async throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "hotels")
        try db.inBatch {
            for i in 0..<200 {
                try c.save(id: "h\(i)", properties: [
                    "city": .string(Self.cities[i % 4]), "n": .int(Int64(i)),
                    "text": .string("room \(i) near the \(i % 2 == 0 ? "river" : "station")"),
                ])
            }
        }
        try c.createIndex(withName: "byCity", config: ValueIndexConfiguration(["city"]))
        try c.createIndex(withName: "ft", config: FullTextIndexConfiguration(["text"]))

        // Shared queries whose parameters several tasks change while others run them.
        let byCity = try db.createQuery("SELECT meta().id AS id, n FROM hotels WHERE city = $city")
        let above = try db.createQuery("SELECT COUNT(*) AS k FROM hotels WHERE n >= $min")
        let search = try db.createQuery("SELECT meta().id AS id FROM hotels WHERE MATCH(ft, $words) ORDER BY RANK(ft) DESC LIMIT 5")
        byCity.parameters = Parameters().setString("Paris", forName: "city")
        above.parameters = Parameters().setInt(0, forName: "min")
        search.parameters = Parameters().setString("river", forName: "words")
        // Shared documents whose bodies are still encoded: the first readers race to decode them.
        let documents = try (0..<20).map { try #require(try c.document(id: "h\($0)")) }
        // A shared mutable document that tasks change and save.
        let shared = MutableDocument(id: "shared")
        let problems = Shared<[String]>([])

        try await withThrowingTaskGroup(of: Void.self) { group in
            for t in 0..<Self.tasks {
                group.addTask {
                    // First, with no database call in between (whose locks would order
                    // everything): only the shared objects' own synchronisation keeps these
                    // reads and writes apart, and the documents' bodies are decoded here.
                    for i in 0..<200 {
                        let d = documents[(t + i) % documents.count]
                        if d.properties.count != 3 || d.revisionID == nil { problems.withLock { $0.append("document \(d.id) body") } }
                        if i % 2 == 0 {
                            byCity.parameters = Parameters().setString(Self.cities[(t + i) % 4], forName: "city")
                        } else if byCity.parameters?.value(forName: "city") == nil {
                            problems.withLock { $0.append("byCity lost its parameter") }
                        }
                        shared.setInt(i, forKey: "p\(t)")
                        _ = shared.int(forKey: "p\((t + 1) % Self.tasks)")
                    }
                    for r in 0..<Self.rounds {
                        switch (t + r) % 6 {
                        case 0:
                            byCity.parameters = Parameters().setString(Self.cities[(t + r) % 4], forName: "city")
                            let rows = try byCity.execute()
                            var n = 0
                            while try rows.next() != nil { n += 1 }
                            if n != 50 { problems.withLock { $0.append("byCity gave \(n) rows") } }
                        case 1:
                            let d = documents[(t * 7 + r) % documents.count]
                            if d.string(forKey: "city") == nil || d.properties.count != 3 {
                                problems.withLock { $0.append("document \(d.id) body \(d.properties)") }
                            }
                            _ = d.revisionID
                            _ = try c.document(id: d.id)?.toMutable()
                        case 2:
                            try c.save(id: "w\(t)-\(r)", properties: ["city": "Rome", "n": .int(Int64(1000 + r))])
                            shared.setInt(r, forKey: "t\(t)")
                            _ = shared["t\((t + 1) % Self.tasks)"]
                            try c.save(document: shared)
                        case 3:
                            above.parameters = Parameters().setInt(r, forName: "min")
                            // Other tasks set the shared query's parameter too, to any round's
                            // number, between this line and the run.
                            for try await row in try above.execute() where row.int(forKey: "k") < 200 - (Self.rounds - 1) {
                                problems.withLock { $0.append("COUNT(*) n >= \(r) gave \(row.int(forKey: "k"))") }
                            }
                        case 4:
                            search.parameters = Parameters().setString(r % 2 == 0 ? "river" : "station", forName: "words")
                            let ids = try search.execute().allResults()
                            if ids.count != 5 { problems.withLock { $0.append("search gave \(ids.count) rows") } }
                            _ = search.parameters
                        default:
                            if try c.count < 200 { problems.withLock { $0.append("count went down") } }
                            _ = try c.document(id: "shared")?.properties
                            try byCity.execute().forEach { row in _ = row.string(forKey: "id") }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(problems.withLock { $0 } == [])
        #expect(try c.count == 200 + Self.tasks * Self.rounds / 6 + 1)
    }
}
