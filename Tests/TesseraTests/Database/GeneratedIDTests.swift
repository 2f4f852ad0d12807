import Testing
@testable import Tessera

/// Generated document IDs (`OrderedIDGenerator`): Couchbase Lite's shape (`-` and 22 URL-safe
/// characters), unique, and each after the one made before it — so documents saved without
/// an ID are appended to the tables keyed by ID instead of landing on random pages.
@Suite("Generated document IDs")
struct GeneratedIDTests {
    static let alphabet = OrderedIDGenerator.alphabet

    /// The milliseconds an ID's first eight characters encode.
    static func millisecond(of id: String) -> UInt64 {
        Array(id.utf8)[1..<9].reduce(0) { $0 << 6 | UInt64(alphabet.firstIndex(of: $1)!) }
    }

    /// The 84 bits its last fourteen characters encode.
    static func suffix(of id: String) -> UInt128 {
        Array(id.utf8)[9...].reduce(0) { $0 << 6 | UInt128(alphabet.firstIndex(of: $1)!) }
    }

    @Test func theAlphabetIsInByteOrder() {
        #expect(Self.alphabet.count == 64)
        #expect(zip(Self.alphabet, Self.alphabet.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test func newDocumentsGetUniqueIDsInTheOrderTheyWereMade() {
        let ids = (0..<20_000).map { _ in MutableDocument().id }
        for id in ids.prefix(100) {
            #expect(id.utf8.count == 23 && id.hasPrefix("-"))
            #expect(id.utf8.dropFirst().allSatisfy { Self.alphabet.contains($0) }, "\(id)")
        }
        #expect(Set(ids).count == ids.count)
        #expect(zip(ids, ids.dropFirst()).allSatisfy { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        // The first eight characters are the time it was made.
        let now = OrderedIDGenerator.now()
        let made = Self.millisecond(of: ids[0])
        #expect(made <= now + 1 && now - made < 60_000)
        #expect(MutableDocument(properties: ["a": 1]).id > ids.last!)
    }

    @Test func theSameMillisecondCountsUpAndAnEarlierOneToo() {
        var g = OrderedIDGenerator(millisecond: 1_000, suffix: 41)
        let a = g.next(at: 1_000)
        #expect(Self.millisecond(of: a) == 1_000 && Self.suffix(of: a) == 42)
        // The clock went back: still after the last ID.
        let b = g.next(at: 990)
        #expect(Self.millisecond(of: b) == 1_000 && Self.suffix(of: b) == 43)
        // A later millisecond: new random bits, with room to count up.
        let c = g.next(at: 1_001)
        #expect(Self.millisecond(of: c) == 1_001 && Self.suffix(of: c) < (1 << 83))
        let d = g.next(at: 1_001)
        #expect(Self.suffix(of: d) == Self.suffix(of: c) + 1)
        let ids = [a, b, c, d]
        #expect(zip(ids, ids.dropFirst()).allSatisfy { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    }

    @Test func aFullMillisecondRunsAheadOfTheClock() {
        var g = OrderedIDGenerator(millisecond: 7, suffix: OrderedIDGenerator.suffixMask - 1)
        let last = g.next(at: 7)
        #expect(Self.millisecond(of: last) == 7 && Self.suffix(of: last) == OrderedIDGenerator.suffixMask)
        let next = g.next(at: 7)
        #expect(Self.millisecond(of: next) == 8)
        #expect(last.utf8.lexicographicallyPrecedes(next.utf8))
        // The clock catching up to the millisecond taken continues from there.
        let after = g.next(at: 8)
        #expect(Self.millisecond(of: after) == 8 && next.utf8.lexicographicallyPrecedes(after.utf8))
    }

    @Test func threadsNeverGetTheSameID() async {
        let ids = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<4 { group.addTask { (0..<2_500).map { _ in MutableDocument().id } } }
            var all: [String] = []
            for await part in group {
                // Each task's IDs are in the order it made them.
                #expect(zip(part, part.dropFirst()).allSatisfy { $0.utf8.lexicographicallyPrecedes($1.utf8) })
                all += part
            }
            return all
        }
        #expect(Set(ids).count == 10_000)
    }

    @Test func documentsSavedWithoutIDsListInTheOrderTheyWereMade() throws {
        let db = try Database.temporary()
        defer { try? db.close() }
        let c = try db.defaultCollection()
        var made: [String] = []
        try db.inBatch {
            for i in 0..<500 {
                let doc = MutableDocument(properties: ["n": .int(Int64(i))])
                made.append(doc.id)
                try c.save(document: doc)
            }
        }
        var listed: [String] = []
        try c.forEachDocument { listed.append($0.id); return true }
        #expect(listed == made)
    }
}
