import Testing
@testable import Tessera

/// Keyed index entries built in place (`KeyArena`, `IndexKey.encode(binary:)`) are the bytes
/// the definition gives through evaluated `Value`s and `IndexKey.make`: the same keys for
/// every kind of value, for truncated keys, for partial indexes and for array elements.
@Suite("Indexes: keys built in place")
struct KeyArenaTests {
    /// `value` as a document member read in place.
    static func withMember<R>(_ value: Value, _ body: (BinaryValue) -> R) -> R {
        let bytes = BinaryEncoder.encode(.object(["v": value]))
        return bytes.withUnsafeBytes { raw in body(BinaryValue.root(raw)!.member("v")!) }
    }

    @Test func inPlaceEncodingIsTheDecodedValuesEncoding() {
        var r = KeyTestRNG(seed: 71)
        for _ in 0..<3_000 {
            var v = ValueGen.value(&r)
            if v.isMissing { v = .null }
            let (inPlace, decoded) = Self.withMember(v) { b -> ([UInt8], [UInt8]) in
                var out: [UInt8] = [7]
                IndexKey.encode(binary: b, into: &out)
                return (out, [7] + IndexKey.encode([b.toValue()]))
            }
            #expect(inPlace == decoded, "\(v)")
        }
    }

    @Test func arenaKeysAreMakeKeysTruncatedAlike() {
        var r = KeyTestRNG(seed: 72)
        for round in 0..<1_000 {
            var values = (0..<(1 + r.below(3))).map { _ in ValueGen.value(&r) }
            // Long strings: keys over 511 bytes are cut and flagged.
            if round % 4 == 0 { values.append(.string(String(repeating: "x\u{0}é", count: 60 + r.below(200)))) }
            let id = String(repeating: "d", count: 1 + r.below(IndexKey.maxDocIDBytes))
            var arena = KeyArena()
            arena.appendComponent(.null)
            arena.discardUnfinished()
            for v in values { arena.appendComponent(v) }
            var idCopy = id
            idCopy.withUTF8 { arena.finishKey(docID: UnsafeRawBufferPointer($0)) }
            #expect(arena.count == 1)
            #expect(arena.key(0) == IndexKey.make(values: values, docID: id).key, "round \(round)")
        }
    }

    @Test func sortedUniqueOrderIsStoreOrderWithoutRepeats() {
        var arena = KeyArena()
        let keys: [[Value]] = [["b"], ["a"], [2], ["b"], [1.0], [1], [.null]]
        for k in keys {
            for v in k { arena.appendComponent(v) }
            arena.finishKey(docID: UnsafeRawBufferPointer(start: nil, count: 0))
        }
        let sorted = arena.sortedUniqueOrder().map { arena.key($0) }
        let expected = Set(keys.map { IndexKey.make(values: $0, docID: "").key }).sorted(by: bytesLess)
        #expect(sorted == expected)
        #expect(arena.sortedUniqueOrder(from: 3, to: 6).map { arena.key($0) }
                == [IndexKey.make(values: [1], docID: "").key, IndexKey.make(values: ["b"], docID: "").key])
    }

    /// Random documents: each keyed index's entries equal those of the evaluated definition
    /// (`IndexKey.make` of the `Value`s; for arrays, one per distinct element).
    @Test func entriesAreThoseOfTheEvaluatedDefinition() throws {
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        try coll.createIndex(withName: "plain", config: ValueIndexConfiguration(["city", "n.x", "likes"]))
        try coll.createIndex(withName: "partial", config: ValueIndexConfiguration(["city"], where: "n.x > 0"))
        try coll.createIndex(withName: "computed", config: ValueIndexConfiguration(["lower(city)", "n.x + 1"]))
        try coll.createIndex(withName: "likes", config: ArrayIndexConfiguration(path: "likes"))
        try coll.createIndex(withName: "nested", config: ArrayIndexConfiguration(path: "rooms[].beds"))
        try coll.createIndex(withName: "elementExprs", config: ArrayIndexConfiguration(path: "rooms", expressions: ["beds", "size"]))
        let store = try coll.currentStore()
        var r = KeyTestRNG(seed: 73)
        for i in 0..<400 {
            var body: [String: Value] = [:]
            if !r.chance(5) { body["city"] = r.chance(3) ? ValueGen.value(&r) : .string(ValueGen.string(&r)) }
            if !r.chance(5) { body["n"] = r.chance(4) ? ValueGen.value(&r) : .object(["x": ValueGen.scalar(&r)]) }
            if !r.chance(6) {
                body["likes"] = r.chance(6) ? ValueGen.value(&r) : .array((0..<r.below(6)).map { _ in
                    r.chance(2) ? .string(r.pick(["pool", "spa", "view", "\u{0}"])) : ValueGen.value(&r, depth: 1)
                })
            }
            body["rooms"] = .array((0..<r.below(3)).map { _ in
                .object(["beds": r.chance(3) ? ValueGen.value(&r, depth: 1) : .array([ValueGen.scalar(&r), ValueGen.scalar(&r)]),
                         "size": ValueGen.scalar(&r)])
            })
            body = body.filter { !$0.value.isMissing }
            let id = "doc\(i)"
            let bytes = BinaryEncoder.encode(.object(body))
            try db.read { snap in
                try bytes.withUnsafeBytes { raw in
                    for index in store.indexes {
                        let kind = try #require(index.kind as? any KeyedIndexKind)
                        let got = kind.entries(index, docID: id, body: raw, snapshot: snap)
                        #expect(got == Self.evaluatedEntries(index, id: id, body: raw, snapshot: snap), "\(index.definition.name) \(body)")
                    }
                }
            }
        }
    }

    /// The entries as the definition gives them through `Value`s.
    static func evaluatedEntries(_ index: IndexStore, id: String, body: UnsafeRawBufferPointer, snapshot: Snapshot) -> [[UInt8]] {
        if let array = index.kind as? ArrayIndexKind {
            let ctx = index.makeContext(snapshot)
            guard index.bind(ctx, body: body), let root = ctx.slots[0].body else { return [] }
            var elements: [Value] = []
            array.collectElements(root.value(at: array.levels[0]), level: 1, into: &elements)
            var keys = Set<[UInt8]>()
            for e in elements {
                var values = [e]
                if !index.expressions.isEmpty {
                    ctx.slots[0] = SourceSlot(state: .element, element: e)
                    values = index.evaluate(ctx)
                }
                keys.insert(IndexKey.make(values: values, docID: id).key)
            }
            return keys.sorted(by: bytesLess)
        }
        guard let values = index.columnValues(body: body, txn: snapshot) else { return [] }
        return [IndexKey.make(values: values, docID: id).key]
    }
}
