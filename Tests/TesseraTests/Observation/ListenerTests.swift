import Dispatch
import Foundation
import Testing
@testable import Tessera

/// Issue #17: collection and document change listeners (Couchbase Lite names) and streams.
@Suite("Observation: change listeners")
struct ListenerTests {
    @Test func collectionListenerSeesSavesDeletesPurgesAndBatches() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "hotels")
        let other = try db.createCollection(name: "other")
        let seen = Recorder<[String]>()
        let token = c.addChangeListener { change in
            #expect(change.collection.fullName == "_default.hotels")
            seen.append(change.documentIDs)
        }
        try c.save(id: "h1", properties: ["name": "Inn"])
        #expect(seen.wait { $0.count == 1 }, "no callback for a save")
        #expect(seen.all.last == ["h1"])

        try c.delete(id: "h1")
        #expect(seen.wait { $0.count == 2 })
        #expect(seen.all.last == ["h1"])

        try c.purge(id: "h1")
        #expect(seen.wait { $0.count == 3 }, "no callback for a purge")
        #expect(seen.all.last == ["h1"])

        // A batch is one commit: one callback with every ID.
        try db.inBatch {
            try c.save(id: "b1", properties: [:])
            try c.save(id: "b2", properties: [:])
            try c.save(id: "b1", properties: ["again": true])
            try other.save(id: "x", properties: [:])
        }
        #expect(seen.wait { $0.count == 4 })
        #expect(Set(seen.all.last ?? []) == ["b1", "b2"])
        #expect(seen.all.last?.count == 2)

        // Writes to another collection do not call this listener.
        try other.save(id: "y", properties: [:])
        settle(db)
        #expect(seen.count == 4)

        // remove() stops callbacks.
        token.remove()
        token.remove()
        try c.save(id: "after", properties: [:])
        settle(db)
        #expect(seen.count == 4)
        #expect(!db.observation.isObserving)
    }

    @Test func listenerRunsOnTheGivenQueueAfterTheCommit() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        let queue = DispatchQueue(label: "test.listener")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 7)
        let seen = Recorder<Int>()
        let token = c.addChangeListener(withQueue: queue) { change in
            seen.append(DispatchQueue.getSpecific(key: key) ?? -1)
            // The commit is visible: the listener runs after it, outside the transaction.
            seen.append((try? change.collection.document(id: "q1")) != nil ? 1 : 0)
        }
        defer { token.remove() }
        try c.save(id: "q1", properties: [:])
        #expect(seen.wait { $0.count == 2 })
        #expect(seen.all == [7, 1])
    }

    @Test func documentListenerSeesOnlyItsDocument() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "docs")
        let seen = Recorder<String>()
        let token = c.addDocumentChangeListener(id: "watched") { change in
            seen.append(change.documentID)
        }
        try c.save(id: "other", properties: [:])
        settle(db)
        #expect(seen.count == 0)
        try c.save(id: "watched", properties: ["v": 1])       // created
        #expect(seen.wait { $0.count == 1 })
        try c.save(id: "watched", properties: ["v": 2])       // updated
        #expect(seen.wait { $0.count == 2 })
        try c.delete(id: "watched")                           // deleted
        #expect(seen.wait { $0.count == 3 })
        try c.purge(id: "watched")                            // purged
        #expect(seen.wait { $0.count == 4 })
        #expect(seen.all == Array(repeating: "watched", count: 4))
        token.remove()
        try c.save(id: "watched", properties: [:])
        settle(db)
        #expect(seen.count == 4)
    }

    @Test func slowListenerDoesNotBlockWriters() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        let calls = Recorder<Int>()
        let firstReturned = Recorder<Bool>()
        let token = c.addChangeListener { change in
            calls.append(change.documentIDs.count)
            if calls.count == 1 {
                usleep(1_500_000)
                firstReturned.append(true)
            }
        }
        defer { token.remove() }
        try c.save(id: "s0", properties: [:])
        #expect(calls.wait { $0.count == 1 })
        // The listener is now asleep in its first callback; writers go on.
        for i in 1..<50 { try c.save(id: "s\(i)", properties: [:]) }
        #expect(firstReturned.count == 0, "the saves waited for the slow listener")
        // Every document is reported afterwards (bursts coalesce into fewer callbacks).
        #expect(calls.wait { $0.reduce(0, +) == 50 })
    }

    @Test func listenerThatWritesDoesNotDeadlock() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "in")
        let log = try db.createCollection(name: "log")
        let done = Recorder<String>()
        let token = c.addChangeListener { change in
            do {
                // A write inside the callback (own transaction), and a batch.
                for id in change.documentIDs { try log.save(id: "log-" + id, properties: ["seen": true]) }
                try db.inBatch { try c.save(id: "echo-\(done.count)", properties: ["echo": true]) }
                done.append("ok")
            } catch {
                done.append("error: \(error)")
            }
        }
        let docToken = c.addDocumentChangeListener(id: "d0") { change in
            try? change.collection.save(id: "d0-seen", properties: [:])
        }
        try c.save(id: "d0", properties: [:])
        #expect(done.wait { $0.count >= 2 }, "the listener's writes never finished")
        token.remove()
        docToken.remove()
        settle(db)
        #expect(done.all.allSatisfy { $0 == "ok" }, "\(done.all)")
        #expect(try log.document(id: "log-d0") != nil)
        #expect(try c.document(id: "d0-seen") != nil)
    }

    @Test func collectionStreamDeliversChangesAndStopsWhenCancelled() async throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "stream")
        let received = Recorder<[String]>()
        let stream = c.changes()   // observes from here on
        #expect(db.observation.isObserving)
        let task = Task {
            for await change in stream {
                received.append(change.documentIDs)
            }
            received.append(["<end>"])
        }
        try c.save(id: "s1", properties: [:])
        #expect(await received.waitAsync { $0.count == 1 })
        try db.inBatch {
            try c.save(id: "s2", properties: [:])
            try c.delete(id: "s1")
        }
        #expect(await received.waitAsync { $0.count == 2 })
        #expect(received.all == [["s1"], ["s2", "s1"]])
        task.cancel()
        _ = await task.value
        #expect(received.all.last == ["<end>"])
        #expect(await waitUntilAsync { !db.observation.isObserving }, "cancelling the task did not remove the observer")
    }

    @Test func documentStreamEndsWithTheLoop() async throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        // The stream lives only in the task (as in `for await c in coll.documentChanges(id:)`):
        // leaving the loop releases it, which ends the observation.
        func firstTwo(_ stream: AsyncStream<DocumentChange>) -> Task<[String], Never> {
            Task {
                var ids: [String] = []
                for await change in stream {
                    ids.append(change.documentID)
                    if ids.count == 2 { break }
                }
                return ids
            }
        }
        let task = firstTwo(c.documentChanges(id: "k"))
        try c.save(id: "not-k", properties: [:])
        // Commits close together may coalesce into one change: save until the loop ends.
        var i = 0
        while db.observation.isObserving && i < 250 {
            try c.save(id: "k", properties: ["v": .int(Int64(i))])
            i += 1
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        #expect(await task.value == ["k", "k"])
        #expect(!db.observation.isObserving, "ending the loop did not remove the observer")
    }

    @Test func closingTheDatabaseEndsStreamsAndStopsListeners() async throws {
        let db = try Database.temporary()
        let c = try db.defaultCollection()
        let stream = c.changes()
        let task = Task { () -> Int in
            var n = 0
            for await _ in stream { n += 1 }
            return n
        }
        let seen = Recorder<Int>()
        _ = c.addChangeListener { _ in seen.append(1) }
        try c.save(id: "x", properties: [:])
        #expect(await seen.waitAsync { $0.count == 1 })
        try db.close()
        let n = await task.value
        #expect(n >= 0)
        #expect(!db.observation.isObserving)
    }
}
