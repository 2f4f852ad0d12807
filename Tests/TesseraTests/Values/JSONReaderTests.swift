import Testing
@testable import Tessera

@Suite("JSONReader")
struct JSONReaderTests {
    // MARK: Valid input

    static let valid: [(String, Value)] = [
        ("null", .null), ("true", true), ("false", false),
        ("0", .int(0)), ("-0", .int(0)), ("123", .int(123)), ("-123", .int(-123)),
        ("9223372036854775807", .int(.max)), ("-9223372036854775808", .int(.min)),
        ("1.5", .double(1.5)), ("-1.5e3", .double(-1500)), ("1E2", .double(100)), ("1e+2", .double(100)),
        ("1e-2", .double(0.01)), ("0.1", .double(0.1)), ("2.0", .double(2)), ("0e10", .double(0)),
        ("0e-400", .double(0)), ("5e-324", .double(.leastNonzeroMagnitude)), ("1.7976931348623157e308", .double(.greatestFiniteMagnitude)),
        ("2.2250738585072014e-308", .double(2.2250738585072014e-308)), ("0.30000000000000004", .double(0.30000000000000004)),
        ("123456789012345678901234567890.0", .double(1.2345678901234568e29)),
        ("0.000000000000000000000000000001", .double(1e-30)), ("1e0000000000000000000000001", .double(10)),
        (#""""#, ""), (#""abc""#, "abc"),
        (#""\n\t\"\\\/\b\f\r""#, "\n\t\"\\/\u{8}\u{C}\r"),
        (#""\u0041\u00e9\u4E2D""#, "Aé中"), (#""\ud83d\ude00""#, "😀"), (#""\uDBFF\uDFFF""#, "\u{10FFFF}"),
        (#""\u0000""#, "\u{0}"), ("\"héllo 😀 中文\"", "héllo 😀 中文"),
        ("[]", []), ("{}", [:]), (" [1, [2, [3]], {}] ", [1, [2, [3]], [:]]),
        (#"{"a":1,"b":[true,null],"c":{"d":"e"}}"#, ["a": 1, "b": [true, nil], "c": ["d": "e"]]),
        (#"{"a":1,"a":2}"#, ["a": 2]), // duplicate keys: the last wins
        ("\t\r\n [ 1 ]\n", [1]), (#"{"":0}"#, ["": 0]),
        (#"{"\u0061":1}"#, ["a": 1]),
    ]

    @Test("valid documents", arguments: 0..<valid.count)
    func validDocument(_ i: Int) throws {
        let (text, expected) = Self.valid[i]
        let v = try JSONReader.parse(text)
        #expect(valuesIdentical(v, expected), "\(text) → \(v)")
        // The binary path agrees.
        let bytes = try BinaryEncoder.encodeJSON(text)
        let decoded = bytes.withUnsafeBytes { BinaryValue.root($0)?.toValue() }
        #expect(decoded.map { valuesIdentical($0, expected) } == true, "\(text) → binary \(String(describing: decoded))")
    }

    @Test func longStringsAndEscapesAtEveryPosition() throws {
        // Exercises the eight-bytes-at-a-time scan around escapes and multi-byte characters.
        for len in 0..<40 {
            for k in 0...len {
                let plain = String(repeating: "x", count: len)
                var s = plain
                s.insert(contentsOf: "\\n", at: s.index(s.startIndex, offsetBy: k))
                #expect(try JSONReader.parse("\"\(s)\"") == .string(String(plain.prefix(k)) + "\n" + String(plain.dropFirst(k))))
                var u = plain
                u.insert(contentsOf: "é😀", at: u.index(u.startIndex, offsetBy: k))
                #expect(try JSONReader.parse("\"\(u)\"") == .string(u))
            }
        }
    }

    @Test func theFirstSpecialByteOfAWordIsFoundAtItsOffset() throws {
        // The word scan takes the first special byte's position from a mask of the whole
        // word: each kind (quote, backslash, control, non-ASCII) after 0–23 plain bytes, with
        // a second special byte later in the same word, must be the one acted on, and errors
        // must name its offset. The plain bytes are next in value to special ones (! # [ ] space ~).
        for len in 0..<24 {
            for filler: UInt8 in [0x21, 0x23, 0x5B, 0x5D, 0x20, 0x7E] {
                let plain = [UInt8](repeating: filler, count: len)
                // The string ends at its quote although a backslash follows within the word.
                let ended = try JSONReader.parse([0x5B, 0x22] + plain + Array(#"","\n"]"#.utf8))
                #expect(ended == .array([.string(String(decoding: plain, as: UTF8.self)), "\n"]))
                // A control byte before the quote is an error at its own offset.
                for control: UInt8 in [0x00, 0x0A, 0x1F] {
                    do {
                        _ = try JSONReader.parse([0x22] + plain + [control, 0x22, 0x22])
                        Issue.record("control \(control) after \(len) bytes accepted")
                    } catch {
                        #expect(error.offset == 1 + len && error.message.contains("control"), "\(len): \(error)")
                    }
                }
                // Non-ASCII: a valid sequence is kept whole, a bad one is reported at its lead byte.
                let accented = try JSONReader.parse([0x22] + plain + [0xC3, 0xA9, 0x22])
                #expect(accented == .string(String(decoding: plain, as: UTF8.self) + "é"))
                do {
                    _ = try JSONReader.parse([0x22] + plain + [0xC3, 0x22, 0x0A, 0x22])
                    Issue.record("truncated sequence after \(len) bytes accepted")
                } catch {
                    #expect(error.offset == 1 + len && error.message.contains("UTF-8"), "\(len): \(error)")
                }
                // A backslash is decoded, and the scan goes on after it.
                let escaped = try JSONReader.parse([0x22] + plain + Array(#"\t"#.utf8) + plain + [0x22])
                let text = String(decoding: plain, as: UTF8.self)
                #expect(escaped == .string(text + "\t" + text))
            }
        }
    }

    @Test func integersAndNumberKinds() throws {
        // Integers beyond 64 bits and numbers that underflow are errors, not silent Doubles
        // or 0 (issue #18); with a fraction or exponent a large integer is a Double.
        for text in ["9223372036854775808", "-9223372036854775809", "18446744073709551616", "123456789012345678901234567890"] {
            #expect(throws: JSONError.self) { try JSONReader.parse(text) }
        }
        #expect(throws: JSONError.self) { try JSONReader.parse("1e-400") }
        #expect(valuesIdentical(try JSONReader.parse("9223372036854775808.0"), .double(9223372036854775808)))
        #expect(valuesIdentical(try JSONReader.parse("1.8446744073709551616e19"), .double(18446744073709551616)))
        #expect(valuesIdentical(try JSONReader.parse("-0.0"), .double(-0.0)))
    }

    @Test func decimalTextMatchesStandardLibrary() throws {
        // The fast path (exact mantissa and power of ten) must agree with a correctly
        // rounded conversion on many decimal strings.
        var rng = ValuesTestRNG(seed: 42)
        for _ in 0..<20_000 {
            let digits = rng.int(1...20)
            var text = rng.chance(0.3) ? "-" : ""
            var mantissa = String(rng.int(1...9))
            for _ in 1..<digits { mantissa += String(rng.int(0...9)) }
            let point = rng.int(0...digits)
            if point < digits && point > 0 {
                mantissa.insert(".", at: mantissa.index(mantissa.startIndex, offsetBy: point))
            }
            text += mantissa
            if rng.chance(0.5) { text += "e\(rng.int(-30...30))" }
            if !text.contains(".") && !text.contains("e") { text += ".0" }
            let expected = Double(text)!
            guard case .double(let d) = try JSONReader.parse(text) else { Issue.record("\(text) not a double"); continue }
            #expect(d.bitPattern == expected.bitPattern, "\(text)")
        }
    }

    // MARK: Invalid input

    static let invalid: [(String, Int, Int, String)] = [
        ("", 1, 1, "unexpected end"), ("   ", 1, 4, "unexpected end"),
        ("[1,]", 1, 4, "trailing comma"), (#"{"a":1,}"#, 1, 8, "trailing comma"), ("[1,,2]", 1, 4, "expected a value"),
        ("01", 1, 2, "leading zeros"), ("-01", 1, 3, "leading zeros"), ("00", 1, 2, "leading zeros"),
        ("NaN", 1, 1, "expected a value"), ("Infinity", 1, 1, "expected a value"), ("-Infinity", 1, 2, "expected a digit"),
        ("1.", 1, 3, "after the decimal point"), ("1.e5", 1, 3, "after the decimal point"), ("1e", 1, 3, "exponent"),
        ("1e+", 1, 4, "exponent"), (".5", 1, 1, "expected a value"), ("+1", 1, 1, "expected a value"), ("-", 1, 2, "expected a digit"),
        ("1e400", 1, 1, "out of range"), ("-1e400", 1, 1, "out of range"),
        ("tru", 1, 4, "invalid literal"), ("nul1", 1, 4, "invalid literal"), ("True", 1, 1, "expected a value"),
        ("[1 2]", 1, 4, "expected ',' or ']'"), (#"{"a" 1}"#, 1, 6, "expected ':'"), ("{a:1}", 1, 2, "expected a string key"),
        (#"{"a":1 "b":2}"#, 1, 8, "expected ',' or '}'"), ("[", 1, 2, "unexpected end"), (#"{"a":1"#, 1, 7, "unexpected end"),
        (#""abc"#, 1, 5, "unterminated string"), ("\"a\u{1}b\"", 1, 3, "control character"), ("\"a\nb\"", 1, 3, "control character"),
        (#""\x""#, 1, 2, "invalid escape"), (#""\ud800""#, 1, 2, "lone surrogate"), (#""\udc00""#, 1, 2, "lone surrogate"),
        (#""\ud800\u0041""#, 1, 2, "lone surrogate"), (#""ab\ud800\n""#, 1, 4, "lone surrogate"),
        (#""\u12G4""#, 1, 2, #"invalid \u escape"#), (#""\u12""#, 1, 2, #"invalid \u escape"#), (#""\"#, 1, 3, "unterminated"),
        ("1 2", 1, 3, "end of input"), ("[1]]", 1, 4, "end of input"), ("{} x", 1, 4, "end of input"),
        ("\u{FEFF}1", 1, 1, "byte order mark"), ("\u{0B}1", 1, 1, "expected a value"), ("\u{A0}1", 1, 1, "expected a value"),
        ("[\n1,\n]", 3, 1, "trailing comma"), ("{\n  \"a\": tru\n}", 2, 11, "invalid literal"),
        ("[\"é\", x]", 1, 7, "expected a value"), ("// c\n1", 1, 1, "expected a value"), ("'a'", 1, 1, "expected a value"),
        ("[1,\r\n  2,\r\n  ]", 3, 3, "trailing comma"),
    ]

    @Test("invalid documents report line and column", arguments: 0..<invalid.count)
    func invalidDocument(_ i: Int) {
        let (text, line, column, message) = Self.invalid[i]
        do {
            let v = try JSONReader.parse(text)
            Issue.record("\(text.debugDescription) parsed as \(v)")
        } catch {
            #expect(error.line == line && error.column == column, "\(text.debugDescription): \(error)")
            #expect(error.message.contains(message), "\(text.debugDescription): \(error)")
        }
        // The binary encoder reports the same error.
        do {
            _ = try BinaryEncoder.encodeJSON(text)
            Issue.record("\(text.debugDescription) encoded")
        } catch {
            #expect(error.line == line && error.column == column && error.message.contains(message))
        }
    }

    static let invalidUTF8: [[UInt8]] = [
        [0x22, 0xC0, 0x80, 0x22], // overlong NUL
        [0x22, 0xC1, 0xBF, 0x22], // overlong
        [0x22, 0xE0, 0x80, 0x80, 0x22], // overlong 3-byte
        [0x22, 0xF0, 0x80, 0x80, 0x80, 0x22], // overlong 4-byte
        [0x22, 0xED, 0xA0, 0x80, 0x22], // UTF-16 surrogate D800
        [0x22, 0xED, 0xBF, 0xBF, 0x22], // surrogate DFFF
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], // > U+10FFFF
        [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22],
        [0x22, 0xFF, 0x22], [0x22, 0x80, 0x22], // stray continuation
        [0x22, 0xE2, 0x82, 0x22], // truncated sequence
        [0x22, 0xE2, 0x82], // truncated at end of input
        [0x22, 0xC3, 0x41, 0x22], // bad continuation
    ]

    @Test func invalidUTF8IsRejected() {
        for bytes in Self.invalidUTF8 {
            for prefix in [[UInt8](), Array("[\"abcdefghijk\",".utf8)] {
                let text = prefix + bytes + (prefix.isEmpty ? [] : [0x5D])
                do {
                    _ = try JSONReader.parse(text)
                    Issue.record("\(bytes) accepted")
                } catch {
                    #expect(error.message.contains("UTF-8"), "\(bytes): \(error)")
                    #expect(error.offset == prefix.count + 1, "\(bytes): \(error)")
                    #expect(error.line == 1)
                }
            }
        }
        // Outside strings any non-ASCII byte is a syntax error.
        #expect(throws: JSONError.self) { try JSONReader.parse([0xC3, 0xA9]) }
    }

    // MARK: Depth

    @Test func deepNestingFailsCleanly() throws {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        do {
            _ = try JSONReader.parse(deep)
            Issue.record("10,000 levels accepted")
        } catch {
            #expect(error.message.contains("nesting"))
            #expect(error.offset == 512 && error.column == 513)
        }
        let deepObjects = String(repeating: #"{"a":"#, count: 10_000)
        #expect(throws: JSONError.self) { try JSONReader.parse(deepObjects) }
        #expect(throws: JSONError.self) { try BinaryEncoder.encodeJSON(deep) }

        let ok = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        var v = try JSONReader.parse(ok)
        var depth = 0
        while case .array(let a) = v, let first = a.first { v = first; depth += 1 }
        #expect(depth == 511)
        let over = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
        #expect(throws: JSONError.self) { try JSONReader.parse(over) }
        #expect(throws: JSONError.self) { try JSONReader.parse(ok, maxDepth: 10) }
        _ = try JSONReader.parse(over, maxDepth: 600)
    }

    // MARK: Mutated input

    @Test func mutatedTextNeverCrashesAndBothPathsAgree() throws {
        // Random edits of valid JSON: the Value reader and the one-pass binary encoder must
        // either both succeed with the same value or both fail with the same error.
        var gen = ValuesRandomGenerator(rng: ValuesTestRNG(seed: 5))
        var rng = ValuesTestRNG(seed: 6)
        let alphabet = Array(#"{}[],:"\ -+.0123456789eEtrufalsn"#.utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xA9, 0xED, 0xF0, 0xFF]
        var failures: [String] = []
        var accepted = 0, rejected = 0
        for i in 0..<3_000 {
            var bytes = Array(JSONWriter.string(gen.value(), pretty: rng.chance(0.3)).utf8)
            for _ in 0..<rng.int(1...3) {
                let p = rng.int(0...bytes.count - 1)
                switch rng.int(0...3) {
                case 0: bytes[p] = alphabet[rng.int(0...alphabet.count - 1)]
                case 1: bytes.insert(alphabet[rng.int(0...alphabet.count - 1)], at: p)
                case 2: if bytes.count > 1 { bytes.remove(at: p) }
                default: bytes.removeLast(rng.int(0...min(3, bytes.count - 1)))
                }
            }
            let a: Swift.Result<Value, JSONError> = Swift.Result { () throws(JSONError) in try JSONReader.parse(bytes) }
            let b: Swift.Result<[UInt8], JSONError> = Swift.Result { () throws(JSONError) in try BinaryEncoder.encodeJSON(bytes) }
            switch (a, b) {
            case (.success(let v), .success(let bin)):
                accepted += 1
                let decoded = bin.withUnsafeBytes { BinaryValue.root($0)?.toValue() }
                if decoded.map({ valuesIdentical($0, v) }) != true && failures.count < 5 { failures.append("doc \(i): values differ") }
            case (.failure(let e1), .failure(let e2)):
                rejected += 1
                if e1 != e2 && failures.count < 5 { failures.append("doc \(i): \(e1) vs \(e2)") }
                if (e1.line < 1 || e1.column < 1 || e1.offset > bytes.count) && failures.count < 5 { failures.append("doc \(i): bad position \(e1)") }
            default:
                if failures.count < 5 { failures.append("doc \(i): one path failed") }
            }
        }
        #expect(failures.isEmpty, "\(failures)")
        #expect(accepted > 100 && rejected > 1000, "accepted \(accepted), rejected \(rejected)")
    }

    @Test func emptyBuffers() {
        #expect(throws: JSONError.self) { try JSONReader.parse([UInt8]()) }
        #expect(throws: JSONError.self) { try [UInt8]().withUnsafeBytes { buf throws(JSONError) in try JSONReader.parse(buf) } }
        #expect(throws: JSONError.self) { try BinaryEncoder.encodeJSON([UInt8]()) }
    }

    // MARK: Helpers

    @Test func parseObjectRequiresAnObject() throws {
        #expect(try JSONReader.parseObject(#" {"a": 1} "#) == ["a": 1])
        do {
            _ = try JSONReader.parseObject("\n  [1]")
            Issue.record("array accepted")
        } catch {
            #expect(error.message.contains("not an object") && error.line == 2 && error.column == 3)
        }
        #expect(throws: JSONError.self) { try JSONReader.parseObject("{") }
    }

    @Test func jsonLines() throws {
        let text = "{\"a\":1}\n\n  {\"b\":2}\r\n[3]\n"
        let rows = try JSONReader.parseLines(text)
        #expect(rows.map(\.line) == [1, 3, 4])
        #expect(rows.map(\.value) == [["a": 1], ["b": 2], [3]])
        do {
            _ = try JSONReader.parseLines("{\"a\":1}\n\n{\"b\":2}\n{\"c\":}\n{}")
            Issue.record("bad line accepted")
        } catch {
            #expect(error.line == 4 && error.column == 6, "\(error)")
            #expect(error.offset == 22)
        }
        #expect(try JSONReader.parseLines("").isEmpty)
        #expect(try JSONReader.parseLines("1\n2").map(\.value) == [1, 2]) // no final newline
    }

    @Test func errorDescription() {
        let e = JSONError(message: "trailing comma is not allowed", offset: 3, line: 1, column: 4)
        #expect(e.description == "trailing comma is not allowed at line 1, column 4")
    }

    // MARK: Round trips through the writer

    @Test func writerDoublesAreShortestAndExact() throws {
        #expect(JSONWriter.string(.double(0.1)) == "0.1")
        #expect(JSONWriter.string(.double(1.5)) == "1.5")
        #expect(JSONWriter.string(.double(100)) == "100")
        #expect(JSONWriter.string(.double(-0.0)) == "-0.0")
        #expect(JSONWriter.string(.double(0.30000000000000004)) == "0.30000000000000004")
        #expect(JSONWriter.string(.double(.infinity)) == "null")
        #expect(JSONWriter.string(.int(.min)) == "-9223372036854775808")
        var rng = ValuesTestRNG(seed: 7)
        for _ in 0..<50_000 {
            let d = Double(bitPattern: rng.next())
            guard d.isFinite else { continue }
            let text = JSONWriter.string(.double(d))
            let back = try JSONReader.parse(text)
            #expect(back.doubleValue.map { $0 == d || (d == 0 && $0 == 0) } == true, "\(d) → \(text)")
            if case .double(let x) = back { #expect(x.bitPattern == d.bitPattern, "\(d) → \(text)") }
            // Shortest: the standard library's description is the shortest round-trip form.
            #expect(text.count <= d.description.count + 1 || abs(d) < 1e15, "\(d) → \(text)")
            let i = Int64(bitPattern: rng.next())
            #expect(valuesIdentical(try JSONReader.parse(JSONWriter.string(.int(i))), .int(i)))
        }
    }

    @Test func writerEscapesAndReaderReadsBack() throws {
        var s = ""
        for u in 0..<0x80 { s.unicodeScalars.append(Unicode.Scalar(u)!) }
        s += "é中😀\u{2028}"
        let text = JSONWriter.string(.string(s))
        #expect(try JSONReader.parse(text) == .string(s))
        #expect(JSONWriter.string(["b": 1, "a": [true, nil]]) == #"{"a":[true,null],"b":1}"#)
    }
}
