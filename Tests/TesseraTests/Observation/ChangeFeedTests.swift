import Testing
@testable import Tessera

/// Issue #17: the durable change feed, served from the by-sequence table.
@Suite("Observation: change feed")
struct ChangeFeedTests {
    @Test func feedListsLatestRevisionsInSequenceOrder() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "feed")
        #expect(c.lastSequence == 0)
        #expect(try c.changes(since: 0).isEmpty)
        try c.save(id: "a", properties: ["n": 1])   // 1
        try c.save(id: "b", properties: ["n": 2])   // 2
        try c.save(id: "c", properties: ["n": 3])   // 3
        try c.save(id: "a", properties: ["n": 4])   // 4
        try c.delete(id: "b")                       // 5
        try c.save(id: "d", properties: ["n": 5])   // 6
        try c.purge(id: "c")                        // no sequence
        #expect(c.lastSequence == 6)

        let all = try c.changes(since: 0)
        #expect(all.map(\.documentID) == ["a", "b", "d"])
        #expect(all.map(\.sequence) == [4, 5, 6])
        #expect(all.map(\.isDeleted) == [false, true, false])
        #expect(all[0].revisionID == (try c.document(id: "a"))?.revisionID)
        #expect(all[0].revisionID.hasPrefix("2-"))
        #expect(all[1].revisionID.hasPrefix("2-"))

        #expect(try c.changes(since: 4).map(\.documentID) == ["b", "d"])
        #expect(try c.changes(since: 6).isEmpty)
        #expect(try c.changes(since: UInt64.max).isEmpty)
        #expect(try c.changes(since: 0, limit: 2).map(\.documentID) == ["a", "b"])
        #expect(try c.changes(since: 0, limit: 0).isEmpty)

        // Resuming from the last sequence read sees only what came after.
        let mark = c.lastSequence
        try c.inBatch(db) {
            try c.save(id: "e", properties: [:])
            try c.save(id: "a", properties: ["n": 9])
        }
        #expect(try c.changes(since: mark).map(\.documentID) == ["e", "a"])
        // Other collections have their own sequences.
        let other = try db.createCollection(name: "other")
        #expect(other.lastSequence == 0)
        #expect(try other.changes(since: 0).isEmpty)
    }

    @Test func feedAgreesWithDocumentsOnRandomMutations() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.createCollection(name: "r")
        var rng = SplitMix64(seed: 17)
        var model: [String: (seq: UInt64, deleted: Bool)] = [:]
        var seq: UInt64 = 0
        for _ in 0..<400 {
            let id = "d\(rng.below(40))"
            switch rng.below(10) {
            case 0..<6:
                try c.save(id: id, properties: ["v": .int(Int64(rng.below(100)))])
                seq += 1
                model[id] = (seq, false)
            case 6..<8:
                if let m = model[id], !m.deleted {
                    try c.delete(id: id)
                    seq += 1
                    model[id] = (seq, true)
                }
            default:
                if model[id] != nil {
                    try c.purge(id: id)
                    model[id] = nil
                }
            }
        }
        let since = UInt64(rng.below(Int(seq)))
        let expected = model.filter { $0.value.seq > since }.sorted { $0.value.seq < $1.value.seq }
        let feed = try c.changes(since: since)
        #expect(feed.map(\.documentID) == expected.map(\.key))
        #expect(feed.map(\.isDeleted) == expected.map(\.value.deleted))
        #expect(c.lastSequence == seq)
    }
}

extension Collection {
    /// `database.inBatch` for brevity in tests.
    func inBatch(_ db: Database, _ body: () throws -> Void) throws { try db.inBatch(body) }
}
