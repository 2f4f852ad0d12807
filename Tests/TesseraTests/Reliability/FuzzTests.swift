import Testing
import Foundation
@testable import Tessera
import TesseraConformance

/// Seeded fuzzing of every reader of outside input, bounded to a few seconds each: the JSON
/// reader, the binary document reader (corrupt and truncated bytes), the SQL++ parser and
/// the query engine behind it, the full-text query parser, and the conformance fixture
/// loader. Nothing may crash or hang; failures are typed errors. Each test checks a
/// property of the successful cases too (round trips, agreement between two readers).
///
/// The same inputs can be fuzzed open-endedly with libFuzzer: see Tests/FUZZING.md.
@Suite("Reliability: fuzzing")
struct FuzzTests {
    // MARK: Mutation

    /// Byte-level mutations in the style of libFuzzer's: flips, interesting bytes, inserted,
    /// deleted, duplicated and spliced runs, truncation.
    struct Mutator {
        var rng: SplitMix64
        let dictionary: [[UInt8]]

        init(seed: UInt64, dictionary: [String]) {
            rng = SplitMix64(seed: seed)
            self.dictionary = dictionary.map { Array($0.utf8) }
        }

        mutating func int(_ n: Int) -> Int { n <= 1 ? 0 : Int(rng.next() % UInt64(n)) }

        mutating func mutate(_ input: [UInt8], other: [UInt8] = []) -> [UInt8] {
            var b = input
            for _ in 0...int(4) {
                let p = int(b.count + 1)
                switch int(9) {
                case 0 where !b.isEmpty: b[min(p, b.count - 1)] ^= UInt8(1 << int(8))
                case 1 where !b.isEmpty: b[min(p, b.count - 1)] = UInt8(truncatingIfNeeded: rng.next())
                case 2: b.insert(contentsOf: dictionary[int(dictionary.count)], at: p)
                case 3 where !b.isEmpty: b.removeSubrange(min(p, b.count - 1)..<min(b.count, p + 1 + int(8)))
                case 4 where !b.isEmpty:
                    let start = min(p, b.count - 1), end = min(b.count, start + 1 + int(16))
                    b.insert(contentsOf: b[start..<end], at: int(b.count + 1))
                case 5: b = Array(b.prefix(p))
                case 6 where !other.isEmpty:
                    let q = int(other.count)
                    b = Array(b.prefix(p)) + Array(other[q...])
                case 7 where !b.isEmpty: b[min(p, b.count - 1)] = [0x00, 0x7F, 0x80, 0xBF, 0xC0, 0xFF, 0xF1, 0x5F][int(8)]
                default: b.insert(UInt8(truncatingIfNeeded: rng.next()), at: p)
                }
            }
            return b
        }
    }

    // MARK: JSON reader

    static let jsonSeeds: [String] = [
        #"{"a": [1, 2.5, -3e-7, "x\u00e9\ud83d\ude00", true, false, null], "b": {"c": {}}, "d": []}"#,
        #"[0, -0, 1E400, 123456789012345678901234567890, -9223372036854775808, 9223372036854775807, 0.1e1]"#,
        #""\"\\\/\b\f\n\r\t\u0000""#, "  {\"k\" : \"v\" , \"k\" : 2 }  ", "[[[[[[[[]]]]]]]]", "1", "\"é中😀\"",
    ]

    @Test func jsonReader() throws {
        var gen = ValuesRandomGenerator(rng: ValuesTestRNG(seed: 7))
        var corpus = Self.jsonSeeds.map { Array($0.utf8) }
        for _ in 0..<40 { corpus.append(Array(JSONWriter.string(gen.value()).utf8)) }
        var m = Mutator(seed: 1, dictionary: ["{", "}", "[", "]", ",", ":", "\"", "\\u", "\\ud800", "true", "null", "-", "1e", ".",
                                              "0", "\u{0}", "é", "\u{FEFF}", "\\", "\"\\ud83d\\ude00\"", "[[[[[[", "1e99999"])
        var parsed = 0, rejected = 0
        let deadline = Date().addingTimeInterval(3)
        var i = 0
        while i < 30_000 && (i < 1000 || Date() < deadline) {
            i += 1
            let input = m.mutate(corpus[m.int(corpus.count)], other: corpus[m.int(corpus.count)])
            let viaValue: Value
            do {
                viaValue = try JSONReader.parse(input)
            } catch {
                rejected += 1
                #expect(error.offset >= 0 && error.offset <= input.count && error.line >= 1 && error.column >= 1, "\(error)")
                // The binary encoder reads JSON with the same scanner: it refuses it too.
                #expect(throws: JSONError.self) { try BinaryEncoder.encodeJSON(input) }
                continue
            }
            parsed += 1
            // Written back, it reads the same; the binary encoder reads the text the same way.
            let text = JSONWriter.string(viaValue)
            #expect(try JSONReader.parse(text) == viaValue, "round trip of \(text.prefix(200))")
            let binary = try BinaryEncoder.encodeJSON(input)
            let decoded = binary.withUnsafeBytes { BinaryValue.root($0)?.decode() }
            #expect(decoded == viaValue, "binary reading of \(String(decoding: input.prefix(200), as: UTF8.self))")
            if parsed % 50 == 0 { corpus.append(input) }
        }
        // Both outcomes are common (the mutations are neither too timid nor too destructive);
        // proportions, since a sanitizer build gets through fewer inputs before the deadline.
        #expect(i >= 1000 && parsed * 20 > i && rejected * 20 > i, "\(i) inputs: parsed \(parsed), rejected \(rejected)")
        // Pathological shapes: absurd nesting, long runs, unterminated input.
        for text in [String(repeating: "[", count: 200_000), String(repeating: "{\"a\":", count: 200_000),
                     "\"" + String(repeating: "\\u00e9", count: 100_000), String(repeating: "1", count: 100_000),
                     "[" + String(repeating: "1,", count: 100_000)] {
            let start = Date()
            #expect(throws: JSONError.self) { try JSONReader.parse(text) }
            #expect(Date().timeIntervalSince(start) < 10)
        }
    }

    // MARK: Binary document reader

    /// Reads everything it can from (possibly corrupt) bytes; returns the number of values visited.
    @discardableResult
    static func exercise(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let root = BinaryValue.root(bytes) else { return 0 }
        var visited = 0
        let valid = root.isValid
        let decoded = root.decode()
        if valid { #expect(decoded != nil, "isValid but decode() failed") }
        if let decoded {
            _ = JSONWriter.string(decoded)
            if valid, !decoded.containsNaN { #expect(root.equals(decoded), "decoded value differs from its bytes") }
        }
        _ = root.toValue()
        // Walk without decoding, bounded.
        var stack: [(BinaryValue, Int)] = [(root, 0)]
        while let (v, depth) = stack.popLast(), visited < 2_000 {
            visited += 1
            _ = (v.kind, v.isNull, v.bool, v.int, v.double, v.number, v.string, v.count)
            _ = v.withUTF8 { $0.count }
            _ = v.stringEquals("a")
            _ = v.member("a"); _ = v.member(""); _ = v[0]; _ = v[-1]; _ = v[Int.max]; _ = v[Int.min]
            _ = v.lookup([.key("a"), .index(0), .index(-1)])
            _ = v.value(at: [.index(1)])
            if depth < 50 {
                for (i, e) in v.elements.enumerated() where i < 20 { stack.append((e, depth + 1)) }
                for (i, m) in v.members.enumerated() where i < 20 {
                    _ = m.key.count
                    stack.append((m.value, depth + 1))
                }
                _ = v.keys
                if let m = v.member(at: 0) { stack.append((m.value, depth + 1)) }
            }
        }
        return visited
    }

    @Test func binaryDocumentReader() throws {
        var gen = ValuesRandomGenerator(rng: ValuesTestRNG(seed: 99))
        var corpus: [[UInt8]] = []
        for _ in 0..<60 { corpus.append(BinaryEncoder.encode(gen.value())) }
        corpus.append(BinaryEncoder.encode(["a": [1, 2, 3], "b": ["x", "y"], "c": ["d": [["e": 1.5]]]]))
        var m = Mutator(seed: 2, dictionary: ["\u{F1}", "\u{0}", "\u{88}", "\u{A4}", "\u{9F}", "\u{BF}", "\u{5F}\u{FF}\u{FF}\u{FF}\u{FF}\u{0F}",
                                              "\u{8F}\u{FF}\u{FF}\u{FF}\u{FF}\u{FF}\u{FF}\u{FF}\u{FF}\u{7F}", "\u{83}\u{FF}\u{FF}\u{FF}\u{FF}\u{FF}\u{FF}\u{FF}\u{FF}\u{01}"])
        var readable = 0
        let deadline = Date().addingTimeInterval(3)
        var i = 0
        while i < 30_000 && (i < 1000 || Date() < deadline) {
            i += 1
            let original = corpus[m.int(corpus.count)]
            // Truncations of valid documents, and mutations.
            let input = i % 4 == 0 ? Array(original.prefix(m.int(original.count))) : m.mutate(original, other: corpus[m.int(corpus.count)])
            input.withUnsafeBytes { if FuzzTests.exercise($0) > 0 { readable += 1 } }
            // Bytes that claim to be more than they are: offsets past the end of the slice.
            if input.count > 4 {
                _ = input.withUnsafeBytes { FuzzTests.exercise(UnsafeRawBufferPointer(rebasing: $0[0..<($0.count - 2)])) }
            }
        }
        #expect(i >= 1000 && readable * 4 > i, "only \(readable) of \(i) inputs had a readable root")
        // Random bytes after a valid header.
        var rng = SplitMix64(seed: 3)
        for _ in 0..<2000 {
            let bytes: [UInt8] = [0xF1] + (0..<Int.random(in: 0..<64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            _ = bytes.withUnsafeBytes { FuzzTests.exercise($0) }
        }
    }

    /// Offsets may point several elements at the same child: a tiny file describing a tree
    /// of 2^40 nodes must be rejected quickly, not decoded for ever.
    @Test func sharedSubtreesDoNotBlowUp() throws {
        var bytes: [UInt8] = [0xF1]
        for _ in 0..<40 { bytes += [0x88, 0x00, 0x00] } // array of 2, both elements at offset 0
        bytes.append(0x00)
        var objectBytes: [UInt8] = [0xF1]
        for _ in 0..<40 { objectBytes += [0xA8, 0x00, 0x00, 0x01, 0x61] } // object of 2 members, both at offset 0 (key "a")
        objectBytes.append(0x00)
        let start = Date()
        for doc in [bytes, objectBytes] {
            doc.withUnsafeBytes { buf in
                guard let root = BinaryValue.root(buf) else { return }
                #expect(!root.isValid)
                #expect(root.decode() == nil)
                #expect(root.toValue() == .missing)
                #expect(!BinaryValue.isValidDocument(buf))
            }
        }
        #expect(Date().timeIntervalSince(start) < 5)
    }

    // MARK: SQL++ parser and query engine

    static let sqlSeeds: [String] = [
        "SELECT a, b AS x, t.c[0].d FROM t WHERE a > 1 AND b IN (1, 2, 'x') ORDER BY a DESC LIMIT 10 OFFSET 2",
        "SELECT COUNT(*) AS n, AVG(a), MIN(b), MAX(c) FROM t GROUP BY b HAVING COUNT(*) > 1",
        "SELECT DISTINCT t.a, u.b FROM t JOIN u ON t.a = u.a LEFT JOIN t AS v ON v.b = u.b",
        "SELECT meta().id, meta(t).sequence FROM t WHERE meta().deleted = false",
        "SELECT e, e.k FROM t UNNEST t.arr AS e WHERE e.k IS NOT MISSING",
        "SELECT CASE WHEN a > 1 THEN 'big' ELSE 'small' END AS size, {'x': a, 'y': [b, c]} AS o FROM t",
        "SELECT * FROM t WHERE ANY x IN arr SATISFIES x = 2 END OR EVERY y IN arr SATISFIES y > 0 END",
        "SELECT lower(s), upper(s), length(s), substr(s, 1, 2), contains(s, 'a'), regexp_like(s, '^a.*') FROM t WHERE s LIKE 'a%'",
        "SELECT a + b * 2 - c / 3 % 4, -a, NOT b, a || 'x', ARRAY_LENGTH(arr), ABS(a), ROUND(a, 2) FROM t",
        "SELECT a FROM t WHERE a BETWEEN $lo AND $hi AND b IS NULL OR c IS VALUED ORDER BY a COLLATE NOCASE",
        "SELECT MATCH(ftx, 'hello'), RANK(ftx) FROM t WHERE MATCH(ftx, 'hel* OR world') ORDER BY RANK(ftx)",
        "SELECT t.*, u.* FROM t CROSS JOIN u LIMIT 5",
        "SELECT a FROM `t` WHERE `a` = \"quoted\" AND b = 'it''s'",
    ]

    static func setUpQueryDatabase() throws -> Database {
        let db = try Database.temporary()
        let t = try db.createCollection(name: "t")
        let u = try db.createCollection(name: "u")
        var rng = SplitMix64(seed: 4)
        let words = ["hello", "world", "apple", "about", "zebra", "Ärger", "naïve"]
        try db.inBatch {
            for i in 0..<25 {
                var body: [String: Value] = ["a": .int(Int64(i % 7)), "s": .string(words[i % words.count] + " " + words[(i * 3) % words.count])]
                if i % 3 != 0 { body["b"] = i % 4 == 0 ? .null : .double(Double(i) / 3) }
                if i % 5 != 0 { body["c"] = .array([.int(Int64(i)), ["d": .string("x\(i)")]]) }
                body["arr"] = .array((0..<(i % 4)).map { _ in ["k": .int(Int64.random(in: -3...3, using: &rng))] })
                try t.save(id: "t\(i)", properties: body)
                if i % 2 == 0 { try u.save(id: "u\(i)", properties: ["a": .int(Int64(i % 5)), "b": .string("b\(i % 3)")]) }
            }
            try t.delete(id: "t3")
        }
        try t.createIndex(withName: "byA", config: ValueIndexConfiguration(["a", "b"]))
        try t.createIndex(withName: "byArr", config: ArrayIndexConfiguration(path: "arr", expressions: ["k"]))
        try t.createIndex(withName: "ftx", config: FullTextIndexConfiguration(["s"]))
        return db
    }

    static func sqlTokens(_ text: String) -> [String] {
        var out: [String] = []
        var current = ""
        for ch in text {
            if ch.isLetter || ch.isNumber || ch == "_" || ch == "$" {
                current.append(ch)
            } else {
                if !current.isEmpty { out.append(current); current = "" }
                if ch != " " { out.append(String(ch)) }
            }
        }
        if !current.isEmpty { out.append(current) }
        return out
    }

    @Test func sqlParserAndEngine() throws {
        let db = try FuzzTests.setUpQueryDatabase()
        defer { try? db.close() }
        var corpus = Self.sqlSeeds
        // The conformance fixtures' queries are a large corpus of valid and invalid SQL++.
        for file in ConformanceRunner.fixtureFiles(in: FuzzTests.fixturesPath + "/query").prefix(20) {
            guard let data = FileManager.default.contents(atPath: file), let json = try? JSONReader.parse(Array(data)) else { continue }
            for step in json["steps"].arrayValue ?? [] { if let q = step["query"].stringValue { corpus.append(q) } }
        }
        let extraTokens = ["SELECT", "FROM", "WHERE", "(", ")", "[", "]", "{", "}", ",", ".", "*", "AND", "OR", "NOT", "IN", "ANY",
                           "END", "SATISFIES", "CASE", "WHEN", "THEN", "'", "\"", "`", "$p", "-", "||", "=", "!=", "<>", "ORDER BY",
                           "GROUP BY", "LIMIT", "OFFSET", "JOIN", "ON", "UNNEST", "AS", "meta()", "MATCH(ftx, 'x')", "1e308", "-9223372036854775808",
                           "9223372036854775807", "0.0", "NULL", "MISSING", "t", "u", "a", "arr", "COLLATE", "UNICODE", "DISTINCT", "COUNT(*)",
                           "abs(", "ARRAY_AGG(", "round(", "div(", "regexp_replace(s, '(a*)*b', 'x')", "/*", "*/", "--", ";"]
        var m = Mutator(seed: 5, dictionary: extraTokens.map { " \($0) " })
        var stats = (parsed: 0, syntax: 0, analyzed: 0, executed: 0, rows: 0)
        let deadline = Date().addingTimeInterval(5)
        var i = 0
        while i < 15_000 && (i < 1000 || Date() < deadline) {
            i += 1
            // Mostly the seeds over the test collections (which run), sometimes fixture queries.
            let seed = m.int(3) > 0 ? Self.sqlSeeds[m.int(Self.sqlSeeds.count)] : corpus[m.int(corpus.count)]
            let text: String
            if i % 2 == 0 {
                // Token-level: drop, repeat, swap or insert tokens.
                var tokens = FuzzTests.sqlTokens(seed)
                for _ in 0...m.int(2) {
                    let p = m.int(tokens.count + 1)
                    switch m.int(4) {
                    case 0 where !tokens.isEmpty: tokens.remove(at: min(p, tokens.count - 1))
                    case 1 where !tokens.isEmpty: tokens.insert(tokens[min(p, tokens.count - 1)], at: m.int(tokens.count + 1))
                    case 2 where tokens.count > 1: tokens.swapAt(min(p, tokens.count - 1), m.int(tokens.count))
                    default: tokens.insert(extraTokens[m.int(extraTokens.count)], at: p)
                    }
                }
                text = tokens.joined(separator: " ")
            } else {
                text = String(decoding: m.mutate(Array(seed.utf8), other: Array(corpus[m.int(corpus.count)].utf8)), as: UTF8.self)
            }
            let statement: SelectStatement
            do {
                statement = try SQLParser.parseStatement(text)
            } catch {
                stats.syntax += 1
                #expect(error.kind == .syntax, "\(error)")
                if let loc = error.location { #expect(loc.offset >= 0 && loc.offset <= text.utf8.count, "\(error)") }
                continue
            }
            stats.parsed += 1
            // What parses prints back to text that parses to the same printed form.
            let printed = SQLPrinter.print(statement)
            do {
                let again = try SQLParser.parseStatement(printed)
                #expect(SQLPrinter.print(again) == printed, "printer round trip of \(text)")
            } catch where error.message.contains("nested too deeply") {
                // The printer's parentheses can take a deep expression past the nesting limit.
            } catch {
                Issue.record("printed form does not parse: \(text)\n→ \(printed)\n\(error)")
            }
            // Analyse, plan and run it; a limited number of rows.
            do {
                let q = try db.createQuery(text)
                stats.analyzed += 1
                if text.contains("$") { q.parameters = Parameters().setInt(2, forName: "lo").setDouble(4.5, forName: "hi") }
                _ = try q.explain()
                let rows = try q.execute()
                var n = 0
                while n < 2000, let row = try rows.next() { _ = row.toJSON(); n += 1 }
                stats.executed += 1
                stats.rows += n
            } catch is QueryError {
            } catch let e as DatabaseError {
                Issue.record("query failed with a storage-level error: \(text)\n\(e)")
            }
            if stats.parsed % 40 == 0 { corpus.append(text) }
        }
        #expect(i >= 1000 && stats.parsed * 40 > i && stats.syntax * 4 > i && stats.executed * 100 > i, "\(i) inputs: \(stats)")
        // Pathological texts: refused or run, each in bounded time.
        for text in [String(repeating: "(", count: 100_000), "SELECT " + String(repeating: "'", count: 100_001),
                     "SELECT " + String(repeating: "a.", count: 50_000) + "b FROM t",
                     "SELECT " + Array(repeating: "a", count: 20_000).joined(separator: ", ") + " FROM t",
                     "SELECT a FROM t WHERE a IN [" + Array(repeating: "1", count: 50_000).joined(separator: ",") + "]",
                     "SELECT \u{0} FROM t", "SELECT a FROM t /* unterminated", String(repeating: "\u{FFFF}", count: 1000)] {
            let start = Date()
            do { _ = try db.createQuery(text).execute().allResults() } catch is QueryError {} catch {
                Issue.record("\(text.prefix(40))…: \(error)")
            }
            #expect(Date().timeIntervalSince(start) < 10, "\(text.prefix(40))… took \(Date().timeIntervalSince(start)) s")
        }
    }

    // MARK: Full-text query parser

    @Test func fullTextQueryParser() throws {
        let db = try FuzzTests.setUpQueryDatabase()
        defer { try? db.close() }
        let match = try db.createQuery("SELECT meta().id FROM t WHERE MATCH(ftx, $q) ORDER BY RANK(ftx)")
        let tokenizers = [FullTextTokenizer(language: "en"), FullTextTokenizer(language: nil, ignoreAccents: true), FullTextTokenizer(language: "de")]
        let pieces = ["hello", "world", "hel*", "*", "\"", "(", ")", "AND", "OR", "NOT", "NEAR", "NEAR/", "NEAR/3", "NEAR/99999999999999999999",
                      "/", ":", "s:", "title:", "-", "'", "the", "a", "Ärger", "naïve", "中文", "😀", " ", "  ", "\t", "\u{0}", "\u{301}", "e\u{301}",
                      "don't", "e-mail*", "**", "a*b", "and", "or", "not", "near"]
        var rng = SplitMix64(seed: 6)
        var parsed = 0, rejected = 0
        let deadline = Date().addingTimeInterval(4)
        var i = 0
        while i < 6000 && (i < 1000 || Date() < deadline) {
            i += 1
            var text = ""
            for _ in 0..<Int.random(in: 0...12, using: &rng) {
                text += pieces.randomElement(using: &rng)!
                if Bool.random(using: &rng) { text += " " }
            }
            if i % 5 == 0 {
                var bytes = Array(text.utf8)
                if !bytes.isEmpty { bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
                text = String(decoding: bytes, as: UTF8.self)
            }
            do {
                let q = try FullTextQuery.parse(text)
                parsed += 1
                _ = q.description
                for tk in tokenizers {
                    do { _ = try CompiledFullTextQuery(q, tokenizer: tk, columns: ["s", "title"]) } catch is QueryError {}
                }
            } catch let e as QueryError {
                rejected += 1
                if let loc = e.location { #expect(loc.offset >= 0 && loc.offset <= text.utf8.count, "\(e)") }
            }
            if i % 10 == 0 {
                // Evaluated against a real index.
                match.parameters = Parameters().setString(text, forName: "q")
                do { _ = try match.execute().allResults() } catch is QueryError {}
            }
        }
        #expect(i >= 1000 && parsed * 10 > i && rejected * 20 > i, "\(i) inputs: parsed \(parsed), rejected \(rejected)")
        for text in [String(repeating: "(", count: 100_000), String(repeating: "a NEAR ", count: 20_000) + "b",
                     String(repeating: "\"", count: 100_001), String(repeating: "x:", count: 50_000) + "y",
                     Array(repeating: "w", count: 50_000).joined(separator: " OR ")] {
            let start = Date()
            do { _ = try CompiledFullTextQuery(text, tokenizer: tokenizers[0], columns: ["s"]) } catch is QueryError {}
            match.parameters = Parameters().setString(text, forName: "q")
            do { _ = try match.execute().allResults() } catch is QueryError {}
            #expect(Date().timeIntervalSince(start) < 10, "\(text.prefix(40))… took \(Date().timeIntervalSince(start)) s")
        }
    }

    // MARK: Fixture loader

    static var fixturesPath: String {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(4)
        return parts.joined(separator: "/") + "/Fixtures"
    }

    /// A structural mutation of a fixture: keys dropped or renamed, values of the wrong type,
    /// strings and numbers changed, arrays cut or repeated.
    static func mutate(_ v: Value, _ rng: inout SplitMix64, depth: Int = 0) -> Value {
        let roll = Int.random(in: 0..<100, using: &rng)
        let odd: [Value] = [.null, .bool(true), .int(-1), .int(Int64.max), .double(1e300), .string(""), .string("x"), .array([]), .object([:]),
                            .string("SELECT"), .string("../../nope.jsonl"), .int(0)]
        if roll < 2 && depth > 0 { return odd.randomElement(using: &rng)! }
        switch v {
        case .object(var o):
            if roll < 10, let k = o.keys.randomElement(using: &rng) { o[k] = nil }
            if roll >= 10 && roll < 13 { o[["bogus", "expect", "error", "query", "name", "params", "docs", "file"].randomElement(using: &rng)!] = odd.randomElement(using: &rng)! }
            for k in Array(o.keys) where Int.random(in: 0..<4, using: &rng) == 0 || depth < 2 { o[k] = mutate(o[k]!, &rng, depth: depth + 1) }
            return .object(o)
        case .array(var a):
            if roll < 8 && !a.isEmpty { a.removeSubrange(Int.random(in: 0..<a.count, using: &rng)...) }
            if roll >= 8 && roll < 12 && !a.isEmpty { a.append(a.randomElement(using: &rng)!) }
            for i in a.indices where Int.random(in: 0..<6, using: &rng) == 0 || depth < 1 { a[i] = mutate(a[i], &rng, depth: depth + 1) }
            return .array(a)
        case .string(let s):
            guard roll < 25 else { return v }
            var chars = Array(s)
            if !chars.isEmpty { chars.remove(at: Int.random(in: 0..<chars.count, using: &rng)) }
            if roll < 8 { chars.insert(["(", "'", "\"", "$", ",", "*", "\u{0}", "é"].randomElement(using: &rng)!, at: Int.random(in: 0...chars.count, using: &rng)) }
            return .string(String(chars))
        case .int(let n):
            return roll < 20 ? .int([n &+ 1, n &- 1, 0 &- n, 0, 1_000_000].randomElement(using: &rng)!) : v
        default:
            return v
        }
    }

    @Test func fixtureLoader() throws {
        let files = ConformanceRunner.fixtureFiles(in: FuzzTests.fixturesPath).filter { !$0.contains("/data/") }
        try #require(files.count > 10, "no fixtures under \(FuzzTests.fixturesPath)")
        let dir = ScratchDirectory("fixture-fuzz")
        defer { dir.remove() }
        // Relative `file` paths resolve as they do for the real fixtures.
        let sub = dir.child("sub")
        try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir.child("data"), withDestinationPath: FuzzTests.fixturesPath + "/data")
        var rng = SplitMix64(seed: 8)
        var m = Mutator(seed: 9, dictionary: ["{", "}", "[", "]", "\"steps\"", "\"query\"", "\"expect\"", ":", ",", "null", "\"format\": 2"])
        var loadFailures = 0, ran = 0
        let runner = ConformanceRunner()
        let deadline = Date().addingTimeInterval(6)
        var i = 0
        while i < 150 && (i < 20 || Date() < deadline) {
            i += 1
            let file = files.randomElement(using: &rng)!
            guard let data = FileManager.default.contents(atPath: file) else { continue }
            let bytes: [UInt8]
            if i % 3 == 0 {
                bytes = m.mutate(Array(data))
            } else if let v = try? JSONReader.parse(Array(data)) {
                bytes = Array(JSONWriter.string(FuzzTests.mutate(v, &rng)).utf8)
            } else {
                continue
            }
            let path = sub + "/case\(i).json"
            #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
            let results = runner.runFixture(at: path)
            if results.isEmpty {
                // Only a fixture without steps has no case to report.
                #expect((try? JSONReader.parse(bytes))?["steps"].arrayValue?.isEmpty == true, "\(String(decoding: bytes.prefix(300), as: UTF8.self))")
                continue
            }
            if results.count == 1 && results[0].step == 0 && !results[0].passed {
                loadFailures += 1
                #expect(results[0].message?.isEmpty == false)
            } else {
                ran += 1
            }
        }
        #expect(i >= 20 && loadFailures * 10 > i && ran * 10 > i, "\(i) fixtures: load failures \(loadFailures), ran \(ran)")
        // Not JSON at all, empty, a directory, a missing file.
        for junk in ["", "\u{0}\u{1}\u{2}", "[]", "{\"format\": 1}", "{\"format\": 1, \"steps\": \"x\"}"] {
            let path = dir.child("junk.json")
            #expect(FileManager.default.createFile(atPath: path, contents: Data(junk.utf8)))
            let r = runner.runFixture(at: path)
            #expect(r.count == 1 && !r[0].passed, "\(junk): \(r)")
        }
        #expect(runner.runFixture(at: dir.child("missing.json")).first?.passed == false)
        // A `file` that is a device or a directory is refused at once (reading /dev/zero would
        // never end), naming the file.
        for target in ["/dev/zero", sub] {
            let path = dir.child("device.json")
            let fixture = "{\"format\": 1, \"collections\": [{\"name\": \"c\", \"file\": \"\(target)\"}], \"steps\": [{\"query\": \"SELECT 1\", \"expect\": [{\"$1\": 1}]}]}"
            #expect(FileManager.default.createFile(atPath: path, contents: Data(fixture.utf8)))
            let r = runner.runFixture(at: path)
            #expect(r.count == 1 && !r[0].passed && (r[0].message ?? "").contains("not a regular file") && (r[0].message ?? "").contains(target), "\(r)")
        }
    }
}

extension Value {
    /// True if a NaN double occurs anywhere in the value (NaN is not equal to itself).
    var containsNaN: Bool {
        switch self {
        case .double(let d): return d.isNaN
        case .array(let a): return a.contains { $0.containsNaN }
        case .object(let o): return o.values.contains { $0.containsNaN }
        default: return false
        }
    }
}
