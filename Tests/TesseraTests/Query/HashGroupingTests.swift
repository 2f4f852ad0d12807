import Testing
@testable import Tessera

/// GROUP BY over rows that do not come grouped (a full scan, an UNNEST) hashes string keys by
/// their bytes in place and every other key by value: the groups must be exactly those of a
/// dictionary of values built in Swift from the same documents.
@Suite("Hash grouping")
struct HashGroupingTests {
    /// Documents with a key `k` of every type (and MISSING), many distinct strings (the byte
    /// table grows several times), and string arrays for UNNEST.
    static func make(seed: UInt64) throws -> (Database, keys: [Value], tags: [[String]], amounts: [Int]) {
        var r = SplitMix64(seed: seed)
        let db = try Database.temporary()
        let c = try db.createCollection(name: "c")
        var keys: [Value] = [], tags: [[String]] = [], amounts: [Int] = []
        try db.inBatch {
            for i in 0..<3_000 {
                let k: Value
                switch r.below(9) {
                case 0: k = .missing
                case 1: k = .null
                case 2: k = .int(Int64(r.below(5)))
                case 3: k = .double(Double(r.below(5)) + 0.5)
                case 4: k = .bool(r.chance(0.5))
                case 5: k = .string(String(repeating: "long ", count: 40) + "\(r.below(4))")
                default: k = .string("s\(r.below(700))")
                }
                let t = (0..<r.below(4)).map { _ in "t\(r.below(150))" }
                let amount = r.below(100)
                var body: [String: Value] = ["tags": .array(t.map(Value.string)), "amount": .int(Int64(amount))]
                if !k.isMissing { body["k"] = k }
                try c.save(id: "d\(i)", properties: body)
                keys.append(k); tags.append(t); amounts.append(amount)
            }
        }
        return (db, keys, tags, amounts)
    }

    @Test("groups by key equal a dictionary of values", arguments: [UInt64(1), 2, 3])
    func groupsEqualDictionary(seed: UInt64) throws {
        let (db, keys, _, amounts) = try Self.make(seed: seed)
        defer { try? db.close() }
        var expected: [Value: (n: Int, sum: Int)] = [:]
        for (k, a) in zip(keys, amounts) { expected[k, default: (0, 0)].n += 1; expected[k]!.sum += a }
        let q = try db.createQuery("SELECT k, count(*) AS n, sum(amount) AS total FROM c GROUP BY k")
        #expect(try q.explain().contains("SCAN c"))
        var got: [Value: (n: Int, sum: Int)] = [:]
        for row in try q.execute().allResults() {
            let k = row.value(forKey: "k") ?? .missing
            #expect(got[k] == nil, "group \(k) returned twice")
            got[k] = (row.int(forKey: "n"), row.int(forKey: "total"))
        }
        #expect(got.count == expected.count)
        for (k, e) in expected {
            #expect(got[k]?.n == e.n && got[k]?.sum == e.sum, "group \(k)")
        }
    }

    @Test("UNNEST elements (not read in place) group with the same strings", arguments: [UInt64(4), 5])
    func unnestGroups(seed: UInt64) throws {
        let (db, _, tags, _) = try Self.make(seed: seed)
        defer { try? db.close() }
        var expected: [String: Int] = [:]
        for t in tags { for x in t { expected[x, default: 0] += 1 } }
        let rows = try db.createQuery("SELECT t, count(*) AS n FROM c UNNEST c.tags AS t GROUP BY t").execute().allResults()
        var got: [String: Int] = [:]
        for row in rows {
            let t = try #require(row.string(forKey: "t"))
            #expect(got[t] == nil, "group \(t) returned twice")
            got[t] = row.int(forKey: "n")
        }
        #expect(got == expected)
    }

    @Test("the byte table finds every key again after growing")
    func tableGrows() {
        var table = StringGroupTable()
        var next = 0
        for i in 0..<5_000 {
            var s = "key-\(i * 7919 % 5_000)"
            let r = s.withUTF8 { table.find(UnsafeRawBufferPointer($0), next: next) }
            #expect(r.isNew && r.index == next)
            next += 1
        }
        for i in 0..<5_000 {
            var s = "key-\(i * 7919 % 5_000)"
            let r = s.withUTF8 { table.find(UnsafeRawBufferPointer($0), next: next) }
            #expect(!r.isNew && r.index == i)
        }
        var empty = ""
        let e = empty.withUTF8 { table.find(UnsafeRawBufferPointer($0), next: next) }
        #expect(e.isNew && e.index == next)
    }

    @Test("count(*)-only groups (counted without aggregate states) equal a dictionary", arguments: [UInt64(6), 7])
    func countOnlyGroups(seed: UInt64) throws {
        let (db, keys, _, amounts) = try Self.make(seed: seed)
        defer { try? db.close() }
        var expected: [Value: Int] = [:]
        for k in keys { expected[k, default: 0] += 1 }
        var got: [Value: Int] = [:]
        for row in try db.createQuery("SELECT k, count(*) AS n, count(*) AS m FROM c GROUP BY k").execute().allResults() {
            let k = row.value(forKey: "k") ?? .missing
            #expect(got[k] == nil, "group \(k) returned twice")
            #expect(row.int(forKey: "n") == row.int(forKey: "m"))
            got[k] = row.int(forKey: "n")
        }
        #expect(got == expected)
        // Without GROUP BY, over a scan: one row, also when no row passes.
        let big = amounts.filter { $0 >= 50 }.count
        #expect(try db.createQuery("SELECT count(*) AS n FROM c WHERE amount >= 50").execute().allResults().map { $0.int(forKey: "n") } == [big])
        #expect(try db.createQuery("SELECT count(*) AS n FROM c WHERE amount > 1000").execute().allResults().map { $0.int(forKey: "n") } == [0])
    }

    @Test("DISTINCT of one property (deduplicated before projecting) equals a set of values", arguments: [UInt64(8), 9])
    func distinctProperty(seed: UInt64) throws {
        let (db, keys, _, _) = try Self.make(seed: seed)
        defer { try? db.close() }
        // Documents of other shapes move `k` to other member positions (the lookup hint).
        var r = SplitMix64(seed: seed)
        var all = keys
        let c = try #require(try db.collection(name: "c"))
        for i in 0..<500 {
            let k: Value = r.chance(0.5) ? .string("s\(r.below(900))") : .int(Int64(r.below(7)))
            var body: [String: Value] = ["k": k]
            for extra in ["a", "b", "j", "kk", "z"].prefix(r.below(6)) { body[extra] = .int(1) }
            try c.save(id: "shape\(i)", properties: body)
            all.append(k)
        }
        let rows = try db.createQuery("SELECT DISTINCT k FROM c").execute().allResults()
        var got: [Value] = []
        for row in rows { got.append(row.value(forKey: "k") ?? .missing) }
        #expect(got.count == Set(got).count, "a value returned twice")
        #expect(Set(got) == Set(all))
        // With ORDER BY and LIMIT on top.
        let ordered = try db.createQuery("SELECT DISTINCT k FROM c WHERE k IS VALUED ORDER BY k LIMIT 5").execute().allResults()
        let expected = Set(all.filter { !$0.isMissing && !$0.isNull }).sorted { Value.compare($0, $1) < 0 }.prefix(5)
        #expect(ordered.map { $0.value(forKey: "k") ?? .missing } == Array(expected))
    }
}

