import Testing
@testable import Tessera

@Suite("BinaryDocument")
struct BinaryDocumentTests {
    /// Runs `body` with the root of the encoding of `value`.
    func withRoot<R>(_ value: Value, _ body: (BinaryValue) throws -> R) rethrows -> R {
        let bytes = BinaryEncoder.encode(value)
        return try bytes.withUnsafeBytes { buf in try body(BinaryValue.root(buf)!) }
    }

    func withRoot<R>(json: String, _ body: (BinaryValue) throws -> R) throws -> R {
        let bytes = try BinaryEncoder.encodeJSON(json)
        return try bytes.withUnsafeBytes { buf in try body(BinaryValue.root(buf)!) }
    }

    @Test func memoryLayoutOfValue() {
        // Value payloads: String (16 bytes) is the largest; one extra byte for the case.
        #expect(MemoryLayout<Value>.size == 17)
        #expect(MemoryLayout<Value>.stride == 24)
        #expect(MemoryLayout<BinaryValue>.size == 24)
    }

    // MARK: Typed reads

    @Test func scalars() throws {
        try withRoot(json: "null") { #expect($0.kind == .null && $0.isNull && $0.bool == nil && $0.int == nil) }
        try withRoot(json: "true") { #expect($0.kind == .bool && $0.bool == true) }
        try withRoot(json: "false") { #expect($0.kind == .bool && $0.bool == false && $0.double == nil) }
        for i: Int64 in [0, 1, 31, 32, -1, 127, 128, -128, -129, 255, 256, 32767, 32768, -32768, 1 << 40, .max, .min, .min + 1] {
            withRoot(.int(i)) { v in
                #expect(v.kind == .int && v.int == i && v.double == Double(i), "\(i)")
                #expect(v.string == nil && v.count == 0 && v[0] == nil && v.member("a") == nil)
                #expect(valuesIdentical(v.toValue(), .int(i)))
            }
        }
        for d in [0.0, -0.0, 0.1, -2.5, 3.14, 1e22, 1e23, 1e-22, 1e-23, 2.0, 1e300, .leastNonzeroMagnitude,
                  .greatestFiniteMagnitude, 123456.789, 9007199254740993.0, 0.30000000000000004, 37.7749295] {
            withRoot(.double(d)) { v in
                #expect(v.kind == .double && v.double?.bitPattern == d.bitPattern, "\(d)")
                #expect(valuesIdentical(v.toValue(), .double(d)), "\(d)")
                #expect(v.int == Value.double(d).intValue)
            }
        }
        try withRoot(json: "2.0") { #expect($0.kind == .double && $0.int == 2 && $0.double == 2) }
        try withRoot(json: "2.5") { #expect($0.int == nil) }
        for s in ["", "a", String(repeating: "x", count: 30), String(repeating: "y", count: 31), String(repeating: "é", count: 200), "😀\u{0}"] {
            withRoot(.string(s)) { v in
                #expect(v.kind == .string && v.string == s)
                #expect(v.withUTF8 { Array($0) } == Array(s.utf8))
                #expect(v.stringEquals(s) && !v.stringEquals(s + "!"))
                #expect(v.int == nil && v.bool == nil)
            }
        }
    }

    @Test func compactEncodings() {
        // header + tag for small ints, booleans, null
        #expect(BinaryEncoder.encode(.int(5)) == [0xF1, 0x25])
        #expect(BinaryEncoder.encode(.int(-1)) == [0xF1, 0x08, 0xFF])
        #expect(BinaryEncoder.encode(.int(200)) == [0xF1, 0x09, 200, 0])
        #expect(BinaryEncoder.encode(.double(3.14)) == [0xF1, 0x04, 0xF4, 0x04, 0xFE]) // zigzag(314) = 628, e = -2
        #expect(BinaryEncoder.encode(.double(.pi)).count == 10) // full 8 bytes
        #expect(BinaryEncoder.encode("ab") == [0xF1, 0x42, 0x61, 0x62])
        // [1,2,3]: all elements one byte → stride mode, no offset table
        #expect(BinaryEncoder.encode([1, 2, 3]) == [0xF1, 0x80 | 3 << 2 | 3, 1, 0x21, 0x22, 0x23])
        // {"a":1,"b":"x"}: 1-byte offset table
        #expect(BinaryEncoder.encode(["b": "x", "a": 1]).count == 1 + 1 + 2 + 3 + 4)
        let doc: Value = ["name": "Alice", "age": 30, "city": "Paris", "tags": ["a", "b"], "score": 12.5, "active": true]
        let json = JSONWriter.string(doc)
        #expect(BinaryEncoder.encode(doc).count < json.utf8.count)
    }

    @Test func containersAndLookup() throws {
        let json = #"{"name":"Alice","age":30,"tags":["a","bb",{"x":[1,2.5]}],"address":{"city":"Paris","zip":"75001"},"":0,"z":null}"#
        let parsed = try JSONReader.parse(json)
        try withRoot(json: json) { root in
            #expect(root.kind == .object && root.count == 6)
            #expect(root.keys == ["", "address", "age", "name", "tags", "z"]) // sorted by UTF-8 bytes
            #expect(root.member("name")?.string == "Alice")
            #expect(root.member("age")?.int == 30)
            #expect(root.member("")?.int == 0)
            #expect(root.member("z")?.isNull == true)
            #expect(root.member("nope") == nil && root.member("nam") == nil && root.member("namee") == nil)
            #expect(root[0] == nil) // not an array
            let k: [UInt8] = Array("address".utf8)
            let addr = k.withUnsafeBytes { root.member(utf8: $0) }
            #expect(addr?.member("zip")?.string == "75001")
            let tags = root.member("tags")!
            #expect(tags.kind == .array && tags.count == 3)
            #expect(tags[0]?.string == "a" && tags[1]?.string == "bb" && tags[-1]?.kind == .object)
            #expect(tags[-3]?.string == "a" && tags[3] == nil && tags[-4] == nil)
            #expect(tags.member("a") == nil)
            #expect(tags.elements.map { $0.kind } == [.string, .string, .object])
            #expect(root.lookup([.key("tags"), .index(2), .key("x"), .index(1)])?.double == 2.5)
            #expect(root.value(at: [.key("tags"), .index(-1), .key("x")]) == [1, 2.5])
            #expect(root.value(at: [.key("address"), .key("city")]) == "Paris")
            #expect(root.value(at: [.key("tags"), .key("x")]).isMissing)
            #expect(root.value(at: [.key("age"), .index(0)]).isMissing)
            #expect(root.value(at: [.key("missing")]).isMissing)
            #expect(root.value(at: []) == parsed)
            var seen: [String] = []
            for (key, value) in root.members {
                seen.append(String(decoding: key, as: UTF8.self))
                #expect(value.kind != .invalid)
            }
            #expect(seen == root.keys)
            #expect(root.member(at: 1)?.value.member("city")?.string == "Paris")
            #expect(root.member(at: 6) == nil)
            #expect(root.equals(parsed))
            #expect(!root.equals(["name": "Alice"]))
            #expect(root.isValid)
        }
    }

    /// `hasKey(startingWith:)` (the reserved-key check of every save) agrees with looking at
    /// every key, for objects of 0 to 40 random keys around the byte searched for.
    @Test func aKeyStartingWithAByteIsFoundByOneSearch() throws {
        var r = SplitMix64(seed: 77)
        let firsts: [String] = ["", "^", "_", "`", "A", "z", "é", "_x", "__"]
        for _ in 0..<400 {
            var object: [String: Value] = [:]
            for _ in 0..<r.int(41) { object[firsts[r.int(firsts.count)] + String(r.int(1_000))] = .int(1) }
            if r.int(4) == 0 { object[""] = .null }
            let body = BinaryEncoder.encode(.object(object))
            try body.withUnsafeBytes { raw in
                let root = try #require(BinaryValue.root(raw))
                for byte in [UInt8(ascii: "_"), UInt8(ascii: "^"), UInt8(ascii: "A"), 0xC3] {
                    #expect(root.hasKey(startingWith: byte) == object.keys.contains { $0.utf8.first == byte },
                            "\(object.keys.sorted()) \(byte)")
                }
            }
        }
        // Not an object: no keys.
        let array = BinaryEncoder.encode(.array([.string("_a")]))
        #expect(array.withUnsafeBytes { BinaryValue.root($0)?.hasKey(startingWith: UInt8(ascii: "_")) } == false)
    }

    @Test func largeContainersUseWiderOffsets() throws {
        // > 255 bytes of data needs 2-byte offsets; > 65535 needs 4-byte offsets.
        for n in [10, 100, 1000, 20_000] {
            var a: [Value] = []
            var o: [String: Value] = [:]
            for i in 0..<n {
                a.append(i % 3 == 0 ? .string("s\(i)") : .int(Int64(i)))
                o["key\(i)"] = .string(String(repeating: "v", count: i % 40))
            }
            // Offset width code in the container tag: 0 = 1 byte, 1 = 2 bytes, 2 = 4 bytes.
            let tag = BinaryEncoder.encode(.array(a))[1]
            #expect(Int(tag & 3) == (n <= 100 ? 0 : (n == 20_000 ? 2 : 1)), "n = \(n)")
            withRoot(.array(a)) { v in
                #expect(v.count == n)
                for i in stride(from: 0, to: n, by: 7) { #expect(valuesIdentical(v[i]!.toValue(), a[i])) }
                #expect(valuesIdentical(v.toValue(), .array(a)))
            }
            withRoot(.object(o)) { v in
                #expect(v.count == n)
                for i in stride(from: 0, to: n, by: 7) { #expect(v.member("key\(i)")?.string == o["key\(i)"]?.stringValue) }
                #expect(v.member("key\(n)") == nil)
                #expect(v.isValid)
            }
        }
    }

    @Test func duplicateKeysInJSONKeepTheLast() throws {
        try withRoot(json: #"{"x":1,"x":2}"#) { root in
            #expect(root.count == 1 && root.member("x")?.int == 2 && root.isValid)
        }
        try withRoot(json: #"{"b":1,"a":2,"b":3,"c":{"x":1,"x":[2]},"a":4}"#) { root in
            #expect(root.count == 3)
            #expect(root.member("a")?.int == 4 && root.member("b")?.int == 3)
            #expect(root.value(at: [.key("c"), .key("x")]) == [2])
            #expect(root.isValid)
        }
    }

    @Test func missingIsNotStored() {
        withRoot(["a": .missing, "b": 1, "c": [.missing, 2]]) { root in
            #expect(root.count == 2 && root.member("a") == nil)
            #expect(root.value(at: [.key("c")]) == [nil, 2])
        }
        withRoot(.missing) { #expect($0.isNull) }
    }

    // MARK: Random round trips

    @Test func randomRoundTrips() throws {
        var gen = ValuesRandomGenerator(rng: ValuesTestRNG(seed: 2026))
        var binaryBytes = 0, jsonBytes = 0
        var failures: [String] = []
        func fail(_ i: Int, _ what: String) { if failures.count < 10 { failures.append("doc \(i): \(what)") } }
        for i in 0..<10_000 {
            let value = gen.value()
            let json = JSONWriter.string(value)
            let parsed = try JSONReader.parse(json)
            if parsed != value { fail(i, "JSON round trip") }
            let fromJSON = try BinaryEncoder.encodeJSON(json)
            let fromValue = BinaryEncoder.encode(value)
            binaryBytes += fromJSON.count
            jsonBytes += json.utf8.count
            for (label, bytes) in [("from JSON", fromJSON), ("from Value", fromValue)] {
                bytes.withUnsafeBytes { buf in
                    guard let root = BinaryValue.root(buf) else { return fail(i, "\(label): no root") }
                    if !root.isValid { fail(i, "\(label): not valid") }
                    let decoded = root.toValue()
                    if decoded != value { fail(i, "\(label): binary round trip") }
                    if !root.equals(value) { fail(i, "\(label): equals") }
                    if JSONWriter.string(decoded) != json { fail(i, "\(label): JSON text round trip") }
                    if JSONWriter.string(root) != json { fail(i, "\(label): JSON written from binary") }
                    if i % 10 == 0 && JSONWriter.string(root, pretty: true) != JSONWriter.string(value, pretty: true) {
                        fail(i, "\(label): pretty JSON written from binary")
                    }
                    // Every member is found by lookup.
                    if case .object(let o) = value {
                        for (k, v) in o where root.member(k)?.equals(v) != true { fail(i, "\(label): member \(k.debugDescription)") }
                    }
                }
            }
            // Parsed numbers keep their kind through the binary form (int stays int, double stays double).
            let again = fromJSON.withUnsafeBytes { BinaryValue.root($0)!.toValue() }
            if !valuesIdentical(again, parsed) { fail(i, "kinds differ") }
        }
        #expect(failures.isEmpty, "\(failures)")
        #expect(binaryBytes < jsonBytes, "binary \(binaryBytes) vs JSON \(jsonBytes)")
    }

    /// One encoder kept across documents (a batch's chunk) writes the bytes a fresh encoder
    /// writes, also after a document that failed half way; a large root's data is ordered by
    /// member size, smallest first.
    @Test func aReusedEncoderWritesWhatAFreshOneWrites() throws {
        var gen = ValuesRandomGenerator(rng: ValuesTestRNG(seed: 2027))
        var encoder = BinaryEncoder.Reusable()
        var failures: [String] = []
        var broken = 0, largeRoots = 0
        for i in 0..<4_000 {
            var json = JSONWriter.string(gen.value())
            if i % 7 == 3 { json = String(json.prefix(json.count / 2)) } // cut short: an error mid-document
            if i % 11 == 5 { json = #"{"dup":1,"# + json.dropFirst() } // a duplicated key, or an error
            let fresh: EncodingOutcome
            do { fresh = .bytes(try BinaryEncoder.encodeJSON(json)) } catch { fresh = .error("\(error)") }
            let reused: EncodingOutcome
            do {
                reused = .bytes(try Array(json.utf8).withUnsafeBytes { try encoder.encodeJSON($0) })
            } catch {
                reused = .error("\(error)")
            }
            if fresh != reused, failures.count < 5 { failures.append("document \(i): \(fresh) vs \(reused)") }
            guard case .bytes(let bytes) = fresh else { broken += 1; continue }
            // The root's members in data order have non-decreasing sizes when it holds more than 1 KB.
            if let sizes = rootMemberSizesInDataOrder(bytes), sizes.reduce(0, +) > BinaryBuilder.smallFirstAbove {
                largeRoots += 1
                if sizes != sizes.sorted(), failures.count < 5 { failures.append("document \(i): data order \(sizes)") }
            }
        }
        #expect(failures.isEmpty, "\(failures)")
        #expect(broken > 500)
        #expect(largeRoots > 20)
    }

    /// Documents that repeat the shapes of their objects (a pool of key lists larger than the
    /// encoder remembers, some with duplicated keys, keys sharing their first eight bytes, the
    /// same keys in other orders, nested objects) get from one reused encoder the bytes a
    /// fresh encoder gives each.
    @Test func repeatedObjectShapesAreEncodedAsFreshOnes() throws {
        var rng = ValuesTestRNG(seed: 77)
        let names = ["type", "name", "city", "a", "b", "zz", "description_long_a", "description_long_b", "rating", "_x"]
        var pool: [[String]] = []
        for _ in 0..<9 {
            var keys = (0..<rng.int(2...8)).map { _ in names[rng.int(0...(names.count - 1))] }
            if rng.chance(0.3) { keys.append(keys[0]) }  // a duplicated key: the last one wins
            pool.append(keys)
            pool.append(keys.reversed())
        }
        var encoder = BinaryEncoder.Reusable()
        var failures: [String] = []
        func object(_ depth: Int) -> String {
            let keys = pool[rng.int(0...(pool.count - 1))]
            let members = keys.map { key -> String in
                let value = depth < 2 && rng.chance(0.3) ? object(depth + 1) : "\(rng.int(0...1000))"
                return "\"\(key)\":\(value)"
            }
            return "{" + members.joined(separator: ",") + "}"
        }
        for i in 0..<3_000 {
            let json = object(0)
            let fresh = try BinaryEncoder.encodeJSON(json)
            let reused = try Array(json.utf8).withUnsafeBytes { try encoder.encodeJSON($0) }
            if fresh != reused, failures.count < 5 { failures.append("document \(i): \(json)") }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    private enum EncodingOutcome: Equatable {
        case bytes([UInt8])
        case error(String)
    }

    /// The sizes of a root object's members (key and value) in the order of its data area, read
    /// from the format's header and offset table; nil for another root or a stride table.
    private func rootMemberSizesInDataOrder(_ bytes: [UInt8]) -> [Int]? {
        guard bytes.count > 2, bytes[1] & 0xE0 == 0xA0 else { return nil }
        let tag = bytes[1]
        let width = [1, 2, 4, 0][Int(tag & 3)]
        guard width > 0 else { return nil }
        var p = 2
        var count = Int(tag >> 2) & 7
        if count == 7 {
            count = 0
            var shift = 0
            while true {
                let b = bytes[p]; p += 1
                count |= Int(b & 0x7F) << shift
                if b < 0x80 { break }
                shift += 7
            }
        }
        let data = p + count * width
        var offsets: [Int] = []
        for i in 0..<count {
            var o = 0
            for k in 0..<width { o |= Int(bytes[p + i * width + k]) << (8 * k) }
            offsets.append(o)
        }
        let starts = offsets.sorted()
        let end = bytes.count - data
        return starts.indices.map { (i: Int) -> Int in (i + 1 < starts.count ? starts[i + 1] : end) - starts[i] }
    }

    // MARK: Corrupt input

    /// Reads everything reachable, the way a query would, with bounded depth.
    func touch(_ v: BinaryValue, depth: Int, rng: inout ValuesTestRNG) -> Int {
        var n = 1
        _ = v.kind; _ = v.bool; _ = v.int; _ = v.double; _ = v.string; _ = v.count
        _ = v.withUTF8 { $0.count }
        _ = v.member("a"); _ = v.member(""); _ = v[rng.int(-3...3)]
        guard depth < 64 else { return n }
        for e in v.elements { n += touch(e, depth: depth + 1, rng: &rng) }
        for (k, m) in v.members {
            _ = String(decoding: k, as: UTF8.self)
            n += touch(m, depth: depth + 1, rng: &rng)
        }
        return n
    }

    @Test func corruptBytesNeverCrash() throws {
        var gen = ValuesRandomGenerator(rng: ValuesTestRNG(seed: 99))
        var rng = ValuesTestRNG(seed: 1234)
        let clock = ContinuousClock()
        let start = clock.now
        var readable = 0
        for _ in 0..<2_000 {
            let original = try BinaryEncoder.encodeJSON(JSONWriter.string(gen.value()))
            for round in 0..<10 {
                var bytes = original
                switch round % 4 {
                case 0: bytes.removeLast(rng.int(1...bytes.count - 1)) // truncate
                case 1: // flip bits
                    for _ in 0..<rng.int(1...4) { bytes[rng.int(1...bytes.count - 1)] ^= UInt8(1 << rng.int(0...7)) }
                case 2: // random bytes
                    for _ in 0..<rng.int(1...4) { bytes[rng.int(1...bytes.count - 1)] = UInt8(truncatingIfNeeded: rng.next()) }
                default: // random garbage after the header
                    bytes = [0xF1] + (0..<rng.int(1...64)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                }
                bytes.withUnsafeBytes { buf in
                    guard let root = BinaryValue.root(buf) else { return }
                    readable += 1
                    _ = root.isValid
                    _ = root.toValue()
                    _ = JSONWriter.string(root)
                    _ = root.value(at: [.key("a"), .index(0)])
                    _ = touch(root, depth: 0, rng: &rng)
                }
            }
        }
        #expect(readable > 1000)
        #expect(clock.now - start < .seconds(60))
    }

    @Test func truncatedDocumentsAreRejectedOrReadSafely() throws {
        let bytes = try BinaryEncoder.encodeJSON(#"{"a":[1,2,3,"long string value here!!!!!!!!"],"b":{"c":3.14159,"d":-123456789}}"#)
        for n in 0..<bytes.count {
            let prefix = Array(bytes.prefix(n))
            prefix.withUnsafeBytes { buf in
                if let root = BinaryValue.root(buf) {
                    #expect(!root.isValid, "prefix \(n)")
                    #expect(root.toValue().isMissing, "prefix \(n)")
                    #expect(JSONWriter.string(root) == nil, "prefix \(n)")
                }
            }
        }
        #expect(bytes.withUnsafeBytes { BinaryValue.isValidDocument($0) })
        #expect([UInt8]().withUnsafeBytes { BinaryValue.root($0) } == nil)
        #expect(([0xF0, 0x00] as [UInt8]).withUnsafeBytes { BinaryValue.root($0) } == nil) // wrong header
        #expect(([0xF1, 0xFF] as [UInt8]).withUnsafeBytes { BinaryValue.root($0) } == nil) // invalid tag
    }

    @Test func absurdNestingIsBounded() {
        // 100,000 nested one-element arrays: [0xF1] + (tag 0x84 = array, count 1, 1-byte table; entry 0) * n + null
        let n = 100_000
        var bytes: [UInt8] = [0xF1]
        for _ in 0..<n { bytes += [0x84, 0x00] }
        bytes.append(0x00)
        bytes.withUnsafeBytes { buf in
            let root = BinaryValue.root(buf)!
            #expect(root.toValue().isMissing)
            #expect(!root.isValid)
            #expect(!root.equals(.null))
            #expect(root.lookup(Array(repeating: .index(0), count: n))?.isNull == true) // iterative, fine
        }
        // Within the limit it decodes.
        var ok: [UInt8] = [0xF1]
        for _ in 0..<100 { ok += [0x84, 0x00] }
        ok.append(0x21)
        ok.withUnsafeBytes { buf in
            var v = BinaryValue.root(buf)!.toValue()
            var depth = 0
            while case .array(let a) = v { v = a[0]; depth += 1 }
            #expect(depth == 100 && v == 1)
        }
    }

    @Test func oversizedCountsAreRejected() {
        // An array claiming 2^40 elements in a tiny buffer.
        let bytes: [UInt8] = [0xF1, 0x80 | 7 << 2 | 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0x00]
        #expect(bytes.withUnsafeBytes { BinaryValue.root($0) } == nil)
        // A long string whose length runs past the end.
        let s: [UInt8] = [0xF1, 0x5F, 0xFF, 0x01, 0x61]
        s.withUnsafeBytes { buf in
            let v = BinaryValue.root(buf)!
            #expect(v.kind == .string && v.string == nil && v.withUTF8 { $0.count } == nil)
        }
        // A decimal with an exponent out of range.
        let d: [UInt8] = [0xF1, 0x04, 0x02, 23]
        #expect(d.withUnsafeBytes { BinaryValue.root($0)!.double } == nil)
    }
}

