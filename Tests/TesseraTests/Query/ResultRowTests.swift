import Testing
@testable import Tessera

/// Rows whose `SELECT *` columns stay encoded until read: every accessor must give what a
/// decoded row gives, and the rows must outlive their read transaction.
@Suite("Result rows")
struct ResultRowTests {
    /// Same type and same content (doubles by bit pattern, strings by UTF-8 bytes).
    static func anyIdentical(_ a: Any?, _ b: Any?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        guard type(of: a) == type(of: b) else { return false }
        switch (a, b) {
        case (is JSONNull, is JSONNull): return true
        case (let x as Bool, let y as Bool): return x == y
        case (let x as Int, let y as Int): return x == y
        case (let x as Double, let y as Double): return x.bitPattern == y.bitPattern
        case (let x as String, let y as String): return x.utf8.elementsEqual(y.utf8)
        case (let x as [Any], let y as [Any]):
            return x.count == y.count && zip(x, y).allSatisfy { anyIdentical($0, $1) }
        case (let x as [String: Any], let y as [String: Any]):
            return x.count == y.count && x.allSatisfy { k, v in y[k].map { anyIdentical(v, $0) } ?? false }
        default: return false
        }
    }

    @Test func binaryToAnyMatchesDecodingFirst() {
        var gen = ValuesRandomGenerator(rng: ValuesTestRNG(seed: 606))
        var failures: [String] = []
        for i in 0..<3000 {
            let value = gen.value()
            var bytes = BinaryEncoder.encode(value)
            if i % 3 == 1, bytes.count > 2 {
                // Corrupt one byte: both paths must agree on the value or on failing.
                let at = gen.rng.int(1...(bytes.count - 1))
                bytes[at] = UInt8(truncatingIfNeeded: gen.rng.next())
            } else if i % 3 == 2, bytes.count > 2 {
                bytes.removeLast(gen.rng.int(1...(bytes.count - 2)))
            }
            bytes.withUnsafeBytes { buf in
                let root = BinaryValue(buffer: buf, offset: 1)
                let decoded = root.toValue()
                let direct = root.anyValue()
                if decoded.isMissing {
                    if direct != nil, failures.count < 10 { failures.append("doc \(i): direct conversion of corrupt bytes") }
                } else if !ResultRowTests.anyIdentical(direct, decoded.anyValue), failures.count < 10 {
                    failures.append("doc \(i): \(JSONWriter.string(decoded))")
                }
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    struct Hotel: Decodable, Equatable {
        var name: String
        var k: Int
        var tags: [String]
    }

    @Test func starRowsReadLikeDecodedRowsAndOutliveTheTransaction() throws {
        let d = try Database.temporary()
        defer { try? d.close() }
        let c = try d.defaultCollection()
        try c.createIndex(withName: "byK", config: ValueIndexConfiguration(["k"]))
        var gen = ValuesRandomGenerator(rng: ValuesTestRNG(seed: 7))
        var expected: [String: Value] = [:]
        try d.inBatch {
            for i in 0..<300 {
                let props: [String: Value] = [
                    "name": .string("hotel \(i)"), "k": .int(Int64(i % 7)),
                    "tags": .array((0..<(i % 4)).map { .string("t\($0)") }), "extra": gen.value(),
                ]
                try c.save(id: "d\(i)", properties: props)
                expected["d\(i)"] = .object(props)
            }
        }
        // Streamed (index scan), sorted (ORDER BY), DISTINCT, and a star next to other columns.
        let queries: [(String, Int)] = [
            ("SELECT *, meta().id AS id FROM _ WHERE k = 3", 0),
            ("SELECT meta().id AS id, * FROM _ ORDER BY meta().id DESC LIMIT 50", 1),
            ("SELECT DISTINCT *, meta().id AS id FROM _ WHERE k < 2", 0),
            ("SELECT h.*, h, meta(h).id AS id FROM _ AS h WHERE h.k = 5", 1),
        ]
        var kept: [(Result, Int, Value)] = []
        for (sql, star) in queries {
            let rows = try d.createQuery(sql).execute().allResults()
            #expect(!rows.isEmpty, "\(sql)")
            for r in rows {
                let id = try #require(r.string(forKey: "id"))
                let doc = try #require(expected[id])
                kept.append((r, star, doc))
            }
        }
        let plain = try d.createQuery("SELECT * FROM _ WHERE k = 1").execute().allResults()
        #expect(plain.count == 43 && plain.allSatisfy { $0.count == 1 })
        // Rewrite and delete every document: pages of the old snapshot get reused.
        try d.inBatch {
            for i in 0..<300 {
                if i % 2 == 0 { try c.delete(id: "d\(i)") } else {
                    try c.save(id: "d\(i)", properties: ["name": .string(String(repeating: "x", count: 200)), "k": .int(99)])
                }
            }
        }
        for (r, star, doc) in kept {
            // `h.*` is the document's members flattened into the row, not a star column.
            guard case .object(let members) = doc else { continue }
            let flat = r.keys.contains("name")
            let value = try #require(flat ? r.value(forKey: "h") : r.value(at: star))
            #expect(valuesIdentical(value, doc))
            #expect(valuesIdentical(r[star], r.values[star]))
            #expect(r.dictionary(at: star).map { valuesIdentical(.object($0), doc) } ?? flat)
            if flat {
                #expect(r.string(forKey: "name") == members["name"]?.stringValue)
            }
            // Whole-row accessors against the same row built from decoded values.
            let decoded = Result(values: r.values, columns: r.columns)
            #expect(valuesIdentical(r.object, decoded.object))
            #expect(ResultRowTests.anyIdentical(r.toDictionary(), decoded.toDictionary()))
            #expect(ResultRowTests.anyIdentical(r.toArray(), decoded.toArray()))
            #expect(r.toJSON() == decoded.toJSON())
            #expect(r.description == decoded.description)
            #expect(r.count == decoded.count && r.keys == decoded.keys)
            struct IDRow: Decodable { var id: String }
            #expect(try r.data(as: IDRow.self).id == r.string(forKey: "id"))
        }
        // A typed decode of rows that hold only the document column.
        for r in plain {
            let typed = try r.data(as: [String: Hotel].self)
            let hotel = try #require(typed[r.keys[0]])
            let doc = try #require(expected["d\(hotel.name.dropFirst(6))"])
            #expect(hotel == Hotel(name: doc["name"].stringValue ?? "", k: Int(doc["k"].intValue ?? -1),
                                   tags: doc["tags"].arrayValue?.compactMap(\.stringValue) ?? []))
            #expect(hotel.k == 1)
        }
    }
}

/// The typed accessors (`string(at:)` and `int(at:)` read the common cells without copying
/// them first) give what `value(at:)` gives, for every kind of cell and index.
@Suite("Result accessors")
struct ResultAccessorTests {
    @Test func typedAccessorsAgreeWithValue() throws {
        let values: [Value] = [.missing, .null, .bool(true), .int(-7), .int(Int64.max), .double(2.5), .double(-3.0),
                               .double(1e300), .string(""), .string("short"), .string(String(repeating: "long é ", count: 9)),
                               .array([.int(1)]), .object(["a": .int(1)])]
        let columns = ResultColumns(values.indices.map { "c\($0)" })
        // Cells kept encoded (as `SELECT *` columns are): a string and a number.
        let encoded = [Value.string("kept encoded"), .int(4)].map { v in
            BinaryEncoder.encode(v).withUnsafeBytes { ResultCell(copying: BinaryValue(buffer: $0, offset: 1)) }
        }
        for width in [1, 2, 3, values.count] {
            for start in 0..<(values.count - width + 1) {
                var cells = values[start..<(start + width)].map { ResultCell.value($0) }
                if width >= 2 { cells[start % 2] = encoded[start % 2] }
                let row = Result(cells: RowCells(cells), columns: columns)
                for i in -1...(width) {
                    let v = row.value(at: i)
                    #expect(row.string(at: i) == v?.stringValue, "width \(width), start \(start), column \(i)")
                    let wantInt = v?.intValue.map { Int($0) } ?? Int(exactly: (v?.doubleValue ?? 0).rounded(.towardZero)) ?? 0
                    if v?.doubleValue.map({ abs($0) < 1e18 }) ?? true {
                        #expect(row.int(at: i) == wantInt, "width \(width), start \(start), column \(i)")
                    }
                }
            }
        }
    }
}
