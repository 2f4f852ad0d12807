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

    @Test("a path looked up with a position hint finds what a search finds, in documents of changing shapes (seeded)")
    func hintedLookupsEqualSearches() {
        var r = KeyTestRNG(seed: 0x41A7)
        let names = ["a", "b", "city", "d", "n", "name", "o", "tags", "zz"]
        let paths = [[PathComponent.key("city")], [.key("n")], [.key("o"), .key("p")], [.key("tags"), .index(1)], [.key("zz")], [.key("q")]]
            .map { CompiledPath($0) }
        var hints = [Int](repeating: Int.max, count: paths.count)
        for round in 0..<2_000 {
            // Runs of documents of one shape, then another: the hints go stale and recover.
            var d: [String: Value] = [:]
            let shape = round / 50
            for (i, name) in names.enumerated() where (shape >> i) & 1 == 0 || r.chance(10) {
                d[name] = name == "o" ? .object(["p": .int(Int64(round))]) : name == "tags" ? .array([.int(1), .int(Int64(round))]) : .string("\(name)\(round)")
            }
            let bytes = BinaryEncoder.encode(.object(d))
            bytes.withUnsafeBytes { raw in
                let root = BinaryValue.root(raw)!
                for (i, p) in paths.enumerated() {
                    #expect(p.lookup(in: root, hint: &hints[i])?.toValue() == p.lookup(in: root)?.toValue(), "round \(round), path \(p.components)")
                }
            }
        }
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

    @Test func inPlaceExactnessIsTheDecodedValuesExactness() {
        var r = KeyTestRNG(seed: 74)
        var inexact = 0
        for i in 0..<3_000 {
            var v = ValueGen.value(&r)
            if v.isMissing { v = .null }
            if i % 5 == 0 { v = .double(r.pick([2.0, -0.0, 0.0, -3.0, 1e300, 0.5, 9.2e18])) }
            let (inPlace, decoded) = Self.withMember(v) { b in
                (IndexKey.decodesExactly(binary: b), IndexKey.decodesExactly(b.toValue()))
            }
            #expect(inPlace == decoded, "\(v)")
            if !decoded { inexact += 1 }
        }
        #expect(inexact > 100)
    }

    /// Repeats of a key merge into one entry that counts them and is exact only if every
    /// repeat is (an integral Double or -0.0 is not: its key decodes as an Int).
    @Test func sortedEntriesCountRepeatsAndMergeExactness() {
        var arena = KeyArena()
        let keys: [Value] = ["b", 2, 2.0, "b", -0.0, 0, "b", 2.5]
        for v in keys {
            arena.appendComponent(v)
            arena.finishKey(docID: UnsafeRawBufferPointer(start: nil, count: 0))
        }
        let got = arena.sortedEntries().map {
            KeyedEntry(key: arena.key($0.key), value: IndexKey.entryValue(occurrences: $0.occurrences, exact: $0.exact))
        }
        func entry(_ v: Value, _ n: Int, _ exact: Bool) -> KeyedEntry {
            KeyedEntry(key: IndexKey.make(values: [v], docID: "").key, value: IndexKey.entryValue(occurrences: n, exact: exact))
        }
        let expected = [entry(0, 2, false), entry(2, 2, false), entry(2.5, 1, true), entry("b", 3, true)]
            .sorted { bytesLess($0.key, $1.key) }
        #expect(got == expected)
        #expect(arena.sortedEntries(from: 1, to: 2).map(\.exact) == [true])
        #expect(arena.sortedEntries(from: 2, to: 3).map(\.exact) == [false])
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

    /// The entries as the definition gives them through `Value`s: for arrays, one per
    /// distinct key counting its elements; the stored value says the count and whether the
    /// key gives the values back exactly (`IndexKey.entryValue`).
    static func evaluatedEntries(_ index: IndexStore, id: String, body: UnsafeRawBufferPointer, snapshot: Snapshot) -> [KeyedEntry] {
        if let array = index.kind as? ArrayIndexKind {
            let ctx = index.makeContext(snapshot)
            guard index.bind(ctx, body: body), let root = ctx.slots[0].body else { return [] }
            var elements: [Value] = []
            array.collectElements(root.value(at: array.levels[0]), level: 1, into: &elements)
            var keys: [[UInt8]: (occurrences: Int, exact: Bool)] = [:]
            for e in elements {
                var values = [e]
                if !index.expressions.isEmpty {
                    ctx.slots[0] = SourceSlot(state: .element, element: e)
                    values = index.evaluate(ctx)
                }
                let key = IndexKey.make(values: values, docID: id).key
                let old = keys[key] ?? (0, true)
                keys[key] = (old.occurrences + 1, old.exact && IndexKey.decodesExactly(values))
            }
            return keys.sorted { bytesLess($0.key, $1.key) }.map {
                KeyedEntry(key: $0.key, value: IndexKey.entryValue(occurrences: $0.value.occurrences, exact: $0.value.exact))
            }
        }
        guard let values = index.columnValues(body: body, txn: snapshot) else { return [] }
        return [KeyedEntry(key: IndexKey.make(values: values, docID: id).key,
                           value: IndexKey.entryValue(occurrences: 1, exact: IndexKey.decodesExactly(values)))]
    }

    /// A back-fill's grouped sort gives exactly the general sort's entries: random tuples from
    /// small pools (many repeats, 1 vs 1.0), documents in ID order with 0–4 keys each
    /// (repeats within a document), IDs that are prefixes of others, and the fall-backs
    /// (truncated keys, an ID with a 00 byte, mostly distinct keys).
    @Test("Grouped back-fill sort equals the general sort (seeded)")
    func groupedSortEqualsGeneralSort() {
        var r = KeyTestRNG(seed: 0xB4CF)
        var grouped = 0, lone = 0
        for round in 0..<120 {
            let columns = 1 + r.below(2)
            let pool = (0..<(1 + r.below(round % 3 == 0 ? 400 : 12))).map { _ in
                (0..<columns).map { _ -> Value in
                    if r.chance(40) { return .string(String(repeating: "long", count: 130)) }
                    return ValueGen.scalar(&r)
                }
            }
            var ids = Set<String>()
            for _ in 0..<(10 + r.below(400)) {
                var id = r.pick(["a", "ab", "abc", "b", "doc_", "é", "z"]) + String(r.below(1000))
                if round % 17 == 5 && r.chance(50) { id += "\0x" }
                ids.insert(id)
            }
            // Keys appended in ID order, grouped piece by piece as a two-thread back-fill joins them.
            var arena = KeyArena()
            var groups: TupleGroups? = TupleGroups()
            var groupedFrom = 0
            var severalKeys = false
            for id in ids.sorted(by: { compareBinary($0, $1) < 0 }) {
                let idBytes = Array(id.utf8)
                // Every fourth round one key per document (a value index): no key can repeat,
                // and the grouped sort places the keys without reading them.
                let keys = round % 4 == 1 ? 1 : r.below(5)
                for _ in 0..<keys {
                    for v in r.pick(pool) { arena.appendComponent(ValueGen.reRepresent(v, &r)) }
                    idBytes.withUnsafeBytes { arena.finishKey(docID: $0) }
                }
                // As a back-fill notes a document's only key.
                if keys == 1 { arena.noteLoneKey() }
                if keys > 1 { severalKeys = true }
                if r.chance(5) {
                    if groups?.add(arena, from: groupedFrom) == false { groups = nil }
                    groupedFrom = arena.count
                }
            }
            if groups?.add(arena, from: groupedFrom) == false { groups = nil }
            func entries(_ e: [KeyArena.Entry]) -> [KeyedEntry] {
                e.map { KeyedEntry(key: arena.key($0.key), value: IndexKey.entryValue(occurrences: $0.occurrences, exact: $0.exact)) }
            }
            let expected = entries(arena.sortedEntries())
            // Grouped at once, as a back-fill read on one thread groups them.
            var whole = TupleGroups()
            if whole.add(arena, from: 0) { #expect(entries(arena.sortedEntries(grouped: whole)) == expected, "round \(round)") }
            if let groups {
                grouped += 1
                if !arena.mayRepeat { lone += 1 }
                #expect(entries(arena.sortedEntries(grouped: groups)) == expected, "round \(round), grouped in pieces")
            }
            #expect(arena.mayRepeat == severalKeys, "round \(round)")
        }
        #expect(grouped >= 30, "only \(grouped) of 120 rounds could be grouped")
        #expect(lone >= 10, "only \(lone) grouped rounds had one key per document")
    }
}

