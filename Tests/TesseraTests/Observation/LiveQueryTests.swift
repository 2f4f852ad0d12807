import Foundation
import Testing
@testable import Tessera

/// Issue #17: live queries (`Query.addChangeListener`) and `Query.changes()` with diffs.
@Suite("Observation: live queries")
struct LiveQueryTests {
    /// Rows of a QueryChange as JSON lines (nil if it carries an error).
    static func rows(_ change: QueryChange) -> [String]? {
        guard let rs = change.results else { return nil }
        return (try? rs.allResults())?.map(\.json)
    }

    @Test func liveQueryRunsAtOnceAndAfterCommitsThatChangeItsRows() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let hotels = try db.createCollection(name: "hotels")
        let other = try db.createCollection(name: "other")
        try hotels.save(id: "h1", properties: ["name": "Alpha", "city": "Paris"])
        let query = try db.createQuery("SELECT meta().id, name FROM hotels WHERE city = 'Paris' ORDER BY name")
        let seen = Recorder<[String]>()
        let token = query.addChangeListener { change in
            #expect(change.query === query)
            #expect(change.error == nil)
            seen.append(Self.rows(change) ?? ["error"])
        }
        // 1. Initial result.
        #expect(seen.wait { $0.count == 1 })
        #expect(seen.all[0] == [#"{"id":"h1","name":"Alpha"}"#])

        // 2. An insert into the result.
        try hotels.save(id: "h2", properties: ["name": "Beta", "city": "Paris"])
        #expect(seen.wait { $0.count == 2 })
        #expect(seen.all[1] == [#"{"id":"h1","name":"Alpha"}"#, #"{"id":"h2","name":"Beta"}"#])

        // 3. Commits that do not change the rows: no callback (one re-runs, one does not).
        let runs = db.observation.queryRuns.load(ordering: .relaxed)
        try hotels.save(id: "h3", properties: ["name": "Gamma", "city": "Rome"])
        settle(db)
        #expect(db.observation.queryRuns.load(ordering: .relaxed) == runs + 1, "a commit to 'hotels' re-runs the query")
        try other.save(id: "o1", properties: ["city": "Paris"])
        settle(db)
        #expect(db.observation.queryRuns.load(ordering: .relaxed) == runs + 1, "a commit to 'other' must not re-run it")
        #expect(seen.count == 2)

        // 4. Update, delete, purge.
        try hotels.save(id: "h1", properties: ["name": "Zulu", "city": "Paris"])
        #expect(seen.wait { $0.count == 3 })
        #expect(seen.all[2] == [#"{"id":"h2","name":"Beta"}"#, #"{"id":"h1","name":"Zulu"}"#])
        try hotels.delete(id: "h2")
        #expect(seen.wait { $0.count == 4 })
        #expect(seen.all[3] == [#"{"id":"h1","name":"Zulu"}"#])
        try hotels.purge(id: "h1")
        #expect(seen.wait { $0.count == 5 })
        #expect(seen.all[4] == [])

        // 5. A batch gives one result.
        try db.inBatch {
            for i in 0..<5 { try hotels.save(id: "b\(i)", properties: ["name": .string("B\(i)"), "city": "Paris"]) }
        }
        #expect(seen.wait { $0.count == 6 })
        #expect(seen.all[5].count == 5)
        settle(db)
        #expect(seen.count == 6)

        // 6. remove() stops it.
        token.remove()
        try hotels.save(id: "late", properties: ["name": "Late", "city": "Paris"])
        settle(db)
        #expect(seen.count == 6)
        #expect(!db.observation.isObserving)
    }

    @Test func emptyInitialResultIsDelivered() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let query = try db.createQuery("SELECT name FROM _ WHERE name = 'nobody'")
        let seen = Recorder<[String]>()
        let token = query.addChangeListener(withQueue: DispatchQueue(label: "q")) { seen.append(Self.rows($0) ?? ["error"]) }
        defer { token.remove() }
        #expect(seen.wait { $0.count == 1 })
        #expect(seen.all == [[]])
    }

    @Test func aFailingQueryReportsItsError() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let query = try db.createQuery("SELECT name FROM _ WHERE name = $name")
        query.parameters = Parameters().setString("x", forName: "unknown")
        let errors = Recorder<String>()
        let token = query.addChangeListener { change in
            #expect(change.results == nil)
            errors.append(change.error.map { "\($0)" } ?? "none")
        }
        defer { token.remove() }
        #expect(errors.wait { $0.count == 1 })
        #expect(errors.all[0].contains("unknown parameter"))
    }

    @Test func aListenerThatWritesDoesNotDeadlock() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        let query = try db.createQuery("SELECT COUNT(*) AS n FROM _")
        let counts = Recorder<Int>()
        let token = query.addChangeListener { change in
            let n = (try? change.results?.allResults().first?.int(forKey: "n")) ?? -1
            counts.append(n)
            // Each result writes one more document until there are 5: a chain of commits
            // started from inside the callbacks.
            if n < 5 { try? c.save(id: "auto\(n)", properties: [:]) }
        }
        defer { token.remove() }
        #expect(counts.wait { $0.last == 5 }, "counts: \(counts.all)")
        #expect(try c.count == 5)
    }

    @Test func streamStartsWithEveryRowInsertedThenDiffsByDocumentID() async throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        try c.save(id: "a", properties: ["n": 1])
        try c.save(id: "b", properties: ["n": 2])
        let query = try db.createQuery("SELECT meta().id, n FROM _ ORDER BY n")
        let updates = Recorder<LiveQueryUpdate>()
        let stream = query.changes()
        let task = Task {
            for try await u in stream { updates.append(u) }
        }
        #expect(await updates.waitAsync { $0.count == 1 })
        let first = updates.all[0]
        #expect(first.results.count == 2)
        #expect(first.diff.isKeyedByDocumentID)
        #expect(first.diff.inserted.map(\.documentID) == ["a", "b"])
        #expect(first.diff.removed.isEmpty && first.diff.updated.isEmpty)

        // b moves before a, c is inserted, a is not removed: one commit.
        try db.inBatch {
            try c.save(id: "b", properties: ["n": 0])
            try c.save(id: "c", properties: ["n": 5])
        }
        #expect(await updates.waitAsync { $0.count == 2 })
        let second = updates.all[1].diff
        #expect(second.inserted.map(\.documentID) == ["c"])
        #expect(second.inserted.map(\.index) == [2])
        #expect(second.updated.map(\.documentID) == ["b"])
        #expect(second.updated.map(\.index) == [0])
        #expect(second.removed.isEmpty)

        try c.delete(id: "a")
        #expect(await updates.waitAsync { $0.count == 3 })
        let third = updates.all[2].diff
        #expect(third.removed.map(\.documentID) == ["a"])
        #expect(third.removed.map(\.index) == [1])
        #expect(third.removed.first?.result.int(forKey: "n") == 1)
        #expect(updates.all[2].results.map { $0.string(forKey: "id") } == ["b", "c"])

        task.cancel()
        _ = try? await task.value
        #expect(await waitUntilAsync { !db.observation.isObserving }, "cancelling did not stop the live query")
    }

    @Test func streamWithoutDocumentIDDiffsByPosition() async throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        try c.save(id: "a", properties: ["n": 1])
        let query = try db.createQuery("SELECT n FROM _ ORDER BY n")
        var iterator = query.changes().makeAsyncIterator()
        let first = try #require(try await iterator.next())
        #expect(!first.diff.isKeyedByDocumentID)
        #expect(first.diff.inserted.map(\.key) == [.position(0)])
        try c.save(id: "z", properties: ["n": 0])
        let second = try #require(try await iterator.next())
        // [1] → [0, 1]: position 0 changed, position 1 is new.
        #expect(second.diff.updated.map(\.key) == [.position(0)])
        #expect(second.diff.inserted.map(\.key) == [.position(1)])
        #expect(second.results.map { $0.int(forKey: "n") } == [0, 1])
    }

    @Test func streamThrowsTheQueryError() async throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let query = try db.createQuery("SELECT name FROM _")
        query.parameters = Parameters().setInt(1, forName: "bogus")
        await #expect(throws: QueryError.self) {
            for try await _ in query.changes() {}
        }
        #expect(await waitUntilAsync { !db.observation.isObserving })
    }

    @Test func closingTheDatabaseEndsLiveQueryStreams() async throws {
        let db = try Database.temporary()
        let query = try db.createQuery("SELECT meta().id FROM _")
        let stream = query.changes()
        let task = Task { () -> Int in
            var n = 0
            for try await _ in stream { n += 1 }
            return n
        }
        #expect(await waitUntilAsync { db.observation.queryRuns.load(ordering: .relaxed) >= 1 })
        try db.close()
        let n = try await task.value
        #expect(n <= 1)
    }
}
