// MARK: - JSON reader
//
// A strict RFC 8259 reader over UTF-8 bytes. One scanner (`JSONScanner`) drives a
// sink: `JSONValueBuilder` builds a `Value`, and the binary document encoder builds
// the stored format directly from the text without an intermediate `Value`.
//
// Rules (strict):
// - whitespace is only SP, TAB, CR, LF; a byte order mark is rejected;
// - exactly one top-level value, followed only by whitespace;
// - no trailing commas, no leading zeros, no `NaN`/`Infinity`, no comments;
// - strings: UTF-8 is validated (overlong forms, surrogate code points, bytes that
//   cannot start or continue a sequence are errors), control characters U+0000–U+001F
//   must be escaped, `\u` escapes combine surrogate pairs and a lone surrogate is an error;
// - duplicate object keys: the LAST occurrence wins (as in Couchbase Lite / Fleece);
// - numbers without fraction or exponent are `Int64` when they fit (including
//   -9223372036854775808), else `Double`; numbers with a fraction or an exponent are
//   `Double`, correctly rounded; a number whose magnitude overflows `Double` is an error;
// - nesting deeper than `maxDepth` containers is an error (the scanner is iterative, so
//   even absurd depths never exhaust the stack).

/// An error in JSON text: what went wrong and where.
///
/// `offset` is the byte offset of the offending byte (or the input length for an
/// unexpected end); `line` and `column` are 1-based, lines are separated by LF and
/// columns count Unicode scalars (UTF-8 lead bytes) from the start of the line.
package struct JSONError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What went wrong, e.g. `trailing comma is not allowed`.
    package var message: String
    /// The byte offset of the error in the input.
    package var offset: Int
    /// The 1-based line of the error.
    package var line: Int
    /// The 1-based column of the error (in Unicode scalars).
    package var column: Int

    /// Creates an error.
    package init(message: String, offset: Int, line: Int, column: Int) {
        self.message = message
        self.offset = offset
        self.line = line
        self.column = column
    }

    /// `message at line L, column C`.
    package var description: String { "\(message) at line \(line), column \(column)" }

    /// An error whose line and column are filled in later by `locate(in:)`.
    @inline(never)
    static func at(_ offset: Int, _ message: String) -> JSONError {
        JSONError(message: message, offset: offset, line: 0, column: 0)
    }

    /// Computes `line` and `column` from `offset` within `bytes`.
    @inline(never)
    mutating func locate(in bytes: UnsafeRawBufferPointer) {
        var line = 1
        var lineStart = 0
        let end = min(offset, bytes.count)
        var i = 0
        while i < end {
            if bytes[i] == 0x0A { line += 1; lineStart = i + 1 }
            i += 1
        }
        var column = 1
        i = lineStart
        while i < end {
            if bytes[i] & 0xC0 != 0x80 { column += 1 }
            i += 1
        }
        self.line = line
        self.column = column
    }
}

/// Reads JSON text (RFC 8259, strict) into `Value`s.
///
/// ```swift
/// let v = try JSONReader.parse(#"{"a": [1, 2.5, "x"]}"#)
/// v["a"][1]   // .double(2.5)
/// ```
///
/// Duplicate keys in an object keep the last value. Integers that fit are `.int`, other
/// numbers `.double`. See the comment at the top of this file for the exact rules.
package enum JSONReader {
    /// The default maximum nesting depth of arrays and objects.
    package static let defaultMaxDepth = 512

    /// Parses one JSON value from UTF-8 bytes.
    ///
    /// - Parameters:
    ///   - bytes: UTF-8 JSON text.
    ///   - maxDepth: the deepest allowed nesting of arrays and objects.
    /// - Returns: the value.
    /// - Throws: `JSONError` with the offset, line and column of the first error.
    /// - Complexity: O(n) in the length of the text.
    package static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth) throws(JSONError) -> Value {
        var scanner = JSONScanner(bytes, maxDepth: maxDepth, sink: JSONValueBuilder())
        do {
            try scanner.parseDocument()
        } catch {
            var e = error
            e.locate(in: bytes)
            throw e
        }
        return scanner.sink.result
    }

    /// Parses one JSON value from UTF-8 bytes.
    package static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONError) -> Value {
        let r: Swift.Result<Value, JSONError> = bytes.withUnsafeBytes { buf in
            do throws(JSONError) { return .success(try parse(buf, maxDepth: maxDepth)) } catch { return .failure(error) }
        }
        return try r.get()
    }

    /// Parses one JSON value from a string.
    package static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONError) -> Value {
        var text = text
        let r: Swift.Result<Value, JSONError> = text.withUTF8 { buf in
            do throws(JSONError) { return .success(try parse(UnsafeRawBufferPointer(buf), maxDepth: maxDepth)) } catch {
                return .failure(error)
            }
        }
        return try r.get()
    }

    /// Parses JSON text that must be an object (a document body).
    ///
    /// - Throws: `JSONError` for invalid JSON, or `top-level value is not an object`
    ///   (at offset of the value) when it is valid JSON of another type.
    package static func parseObject(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth) throws(JSONError) -> [String: Value] {
        let v = try parse(bytes, maxDepth: maxDepth)
        if case .object(let o) = v { return o }
        var start = 0
        while start < bytes.count, isJSONWhitespace(bytes[start]) { start += 1 }
        var e = JSONError.at(start, "top-level value is not an object")
        e.locate(in: bytes)
        throw e
    }

    /// Parses JSON text that must be an object (a document body).
    package static func parseObject(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONError) -> [String: Value] {
        let r: Swift.Result<[String: Value], JSONError> = bytes.withUnsafeBytes { buf in
            do throws(JSONError) { return .success(try parseObject(buf, maxDepth: maxDepth)) } catch { return .failure(error) }
        }
        return try r.get()
    }

    /// Parses JSON text that must be an object (a document body).
    package static func parseObject(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONError) -> [String: Value] {
        var text = text
        let r: Swift.Result<[String: Value], JSONError> = text.withUTF8 { buf in
            do throws(JSONError) { return .success(try parseObject(UnsafeRawBufferPointer(buf), maxDepth: maxDepth)) } catch {
                return .failure(error)
            }
        }
        return try r.get()
    }

    // MARK: JSON Lines

    /// Calls `body` for each value of JSON Lines text (one JSON value per LF-terminated
    /// line; a CR before the LF and blank lines are ignored).
    ///
    /// - Parameters:
    ///   - bytes: UTF-8 JSON Lines text.
    ///   - body: receives the 1-based line number and the value.
    /// - Throws: a `JSONError` whose line, column and offset refer to the whole input
    ///   (so `line` is the failing line), or whatever `body` throws.
    package static func forEachLine(
        _ bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth,
        _ body: (_ line: Int, _ value: Value) throws -> Void
    ) throws {
        var lines = JSONLinesReader(bytes, maxDepth: maxDepth)
        while let (line, value) = try lines.next() { try body(line, value) }
    }

    /// Parses all values of JSON Lines text with their 1-based line numbers.
    ///
    /// - Throws: `JSONError` for the first invalid line (its `line` is that line's number).
    package static func parseLines(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth) throws(JSONError) -> [(line: Int, value: Value)] {
        var out: [(line: Int, value: Value)] = []
        do {
            try forEachLine(bytes, maxDepth: maxDepth) { out.append(($0, $1)) }
        } catch let e as JSONError {
            throw e
        } catch {
            fatalError("unreachable: the body does not throw")
        }
        return out
    }

    /// Parses all values of JSON Lines text with their 1-based line numbers.
    package static func parseLines(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONError) -> [(line: Int, value: Value)] {
        var text = text
        let r: Swift.Result<[(line: Int, value: Value)], JSONError> = text.withUTF8 { buf in
            do throws(JSONError) { return .success(try parseLines(UnsafeRawBufferPointer(buf), maxDepth: maxDepth)) } catch {
                return .failure(error)
            }
        }
        return try r.get()
    }
}

@inline(__always)
func isJSONWhitespace(_ c: UInt8) -> Bool {
    c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09
}

// MARK: - Sink protocol

/// Receives the events of one JSON document from `JSONScanner`, in document order.
///
/// Byte buffers passed to a sink are valid only during the call.
protocol JSONSink {
    mutating func null()
    mutating func bool(_ b: Bool)
    mutating func int(_ i: Int64)
    /// A floating-point number. When `exponent` is not `Int.min`, `d` equals
    /// `mantissa × 10^exponent` exactly as computed by one correctly rounded
    /// multiplication or division (|mantissa| ≤ 2^53, |exponent| ≤ 22).
    mutating func double(_ d: Double, mantissa: Int64, exponent: Int)
    /// A string, as validated UTF-8 with escapes decoded.
    mutating func string(_ utf8: UnsafeRawBufferPointer)
    mutating func beginArray()
    mutating func endArray()
    mutating func beginObject()
    /// The key of the next member, as validated UTF-8 with escapes decoded.
    mutating func key(_ utf8: UnsafeRawBufferPointer)
    mutating func endObject()
}

// MARK: - Scanner

/// Exact powers of ten representable as Double (10^0 … 10^22).
let exactPowersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
]

/// The iterative JSON scanner: validates the grammar and feeds a sink.
struct JSONScanner<Sink: JSONSink>: ~Copyable {
    let base: UnsafePointer<UInt8>?
    let count: Int
    var pos = 0
    let maxDepth: Int
    var sink: Sink
    /// Open containers, innermost last: bit `i` of `bits` is set when the container at
    /// depth `i` is an object (depths of 64 and more spill into `deepStack`).
    var depth = 0
    var bits: UInt64 = 0
    var deepStack: [Bool] = []
    /// Scratch for strings with escapes (allocated on first use).
    var scratch: UnsafeMutablePointer<UInt8>? = nil
    var scratchCapacity = 0

    init(_ bytes: UnsafeRawBufferPointer, maxDepth: Int, sink: consuming Sink) {
        self.base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        self.count = bytes.count
        self.maxDepth = maxDepth
        self.sink = sink
    }

    deinit {
        scratch?.deallocate()
    }

    @inline(__always)
    func byte(_ i: Int) -> UInt8 { base.unsafelyUnwrapped[i] }

    @inline(__always)
    mutating func skipWhitespace() {
        while pos < count {
            let c = byte(pos)
            if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { pos &+= 1 } else { return }
        }
    }

    @inline(never)
    func unexpected(_ what: String) -> JSONError {
        if pos >= count { return .at(count, "unexpected end of input, \(what)") }
        let c = byte(pos)
        let shown: String
        if c >= 0x20 && c < 0x7F {
            shown = "'\(Character(Unicode.Scalar(c)))'"
        } else if c == 0xEF, pos == 0, count >= 3, byte(1) == 0xBB, byte(2) == 0xBF {
            return .at(pos, "byte order mark is not allowed")
        } else {
            let hex = Array("0123456789ABCDEF".utf8)
            shown = "byte 0x" + String(decoding: [hex[Int(c >> 4)], hex[Int(c & 15)]], as: UTF8.self)
        }
        return .at(pos, "unexpected \(shown), \(what)")
    }

    /// Parses one complete document (a value and trailing whitespace).
    mutating func parseDocument() throws(JSONError) {
        skipWhitespace()
        try parseValues()
        skipWhitespace()
        if pos < count { throw unexpected("expected end of input after the JSON value") }
    }

    /// Parses one value (with everything nested in it), iteratively.
    mutating func parseValues() throws(JSONError) {
        valueLoop: while true {
            // Expecting a value; whitespace before it has been skipped.
            guard pos < count else { throw unexpected("expected a value") }
            switch byte(pos) {
            case UInt8(ascii: "{"):
                if depth >= maxDepth { throw .at(pos, "nesting is deeper than \(maxDepth) levels") }
                pos &+= 1
                sink.beginObject()
                skipWhitespace()
                if pos < count, byte(pos) == UInt8(ascii: "}") {
                    pos &+= 1
                    sink.endObject()
                } else {
                    push(true)
                    try parseKey()
                    continue valueLoop
                }
            case UInt8(ascii: "["):
                if depth >= maxDepth { throw .at(pos, "nesting is deeper than \(maxDepth) levels") }
                pos &+= 1
                sink.beginArray()
                skipWhitespace()
                if pos < count, byte(pos) == UInt8(ascii: "]") {
                    pos &+= 1
                    sink.endArray()
                } else {
                    push(false)
                    continue valueLoop
                }
            case UInt8(ascii: "\""):
                try parseString(isKey: false)
            case UInt8(ascii: "t"):
                try literal("true")
                sink.bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                sink.bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                sink.null()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                try parseNumber()
            default:
                throw unexpected("expected a value")
            }
            // After a value: close containers or move to the next element.
            while depth > 0 {
                let isObject = top
                skipWhitespace()
                guard pos < count else {
                    throw unexpected(isObject ? "expected ',' or '}' in object" : "expected ',' or ']' in array")
                }
                let c = byte(pos)
                if c == UInt8(ascii: ",") {
                    pos &+= 1
                    skipWhitespace()
                    if pos < count, byte(pos) == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        throw .at(pos, "trailing comma is not allowed")
                    }
                    if isObject { try parseKey() }
                    continue valueLoop
                }
                if isObject {
                    guard c == UInt8(ascii: "}") else { throw unexpected("expected ',' or '}' in object") }
                    pos &+= 1
                    pop()
                    sink.endObject()
                } else {
                    guard c == UInt8(ascii: "]") else { throw unexpected("expected ',' or ']' in array") }
                    pos &+= 1
                    pop()
                    sink.endArray()
                }
            }
            return
        }
    }

    @inline(__always)
    mutating func push(_ isObject: Bool) {
        if depth < 64 {
            if isObject { bits |= 1 << UInt64(depth) } else { bits &= ~(1 << UInt64(depth)) }
        } else {
            deepStack.append(isObject)
        }
        depth &+= 1
    }

    @inline(__always)
    mutating func pop() {
        depth &-= 1
        if depth >= 64 { deepStack.removeLast() }
    }

    /// True when the innermost open container is an object (requires depth > 0).
    @inline(__always)
    var top: Bool {
        depth <= 64 ? bits & (1 << UInt64(depth &- 1)) != 0 : deepStack[deepStack.count &- 1]
    }

    /// Parses `"key"` `:` and leaves `pos` at the start of the member value.
    @inline(__always)
    mutating func parseKey() throws(JSONError) {
        guard pos < count, byte(pos) == UInt8(ascii: "\"") else { throw unexpected("expected a string key") }
        try parseString(isKey: true)
        skipWhitespace()
        guard pos < count, byte(pos) == UInt8(ascii: ":") else { throw unexpected("expected ':' after object key") }
        pos &+= 1
        skipWhitespace()
    }

    mutating func literal(_ word: StaticString) throws(JSONError) {
        let n = word.utf8CodeUnitCount
        let w = word.utf8Start
        var i = 0
        while i < n {
            guard pos &+ i < count, byte(pos &+ i) == w[i] else {
                pos &+= i
                throw unexpected("invalid literal (expected '\(word)')")
            }
            i &+= 1
        }
        pos &+= n
    }

    // MARK: Numbers

    mutating func parseNumber() throws(JSONError) {
        let start = pos
        var negative = false
        if byte(pos) == UInt8(ascii: "-") {
            negative = true
            pos &+= 1
        }
        guard pos < count, isDigit(byte(pos)) else { throw unexpected("expected a digit") }
        var mantissa: UInt64 = 0
        var digits = 0 // significant digits in mantissa
        var truncated = false
        var exponent = 0
        if byte(pos) == UInt8(ascii: "0") {
            pos &+= 1
            if pos < count, isDigit(byte(pos)) { throw .at(pos, "leading zeros are not allowed") }
        } else {
            while pos < count {
                let c = byte(pos)
                guard isDigit(c) else { break }
                if digits < 19 {
                    mantissa = mantissa &* 10 &+ UInt64(c &- 48)
                    digits &+= 1
                } else {
                    truncated = true
                    exponent &+= 1
                }
                pos &+= 1
            }
        }
        var isInteger = true
        if pos < count, byte(pos) == UInt8(ascii: ".") {
            isInteger = false
            pos &+= 1
            guard pos < count, isDigit(byte(pos)) else { throw unexpected("expected a digit after the decimal point") }
            while pos < count {
                let c = byte(pos)
                guard isDigit(c) else { break }
                if digits < 19 {
                    if mantissa != 0 || c != 48 {
                        mantissa = mantissa &* 10 &+ UInt64(c &- 48)
                        digits &+= 1
                    }
                    exponent &-= 1
                } else {
                    truncated = true
                }
                pos &+= 1
            }
        }
        if pos < count, byte(pos) | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            pos &+= 1
            var expNegative = false
            if pos < count, byte(pos) == UInt8(ascii: "+") || byte(pos) == UInt8(ascii: "-") {
                expNegative = byte(pos) == UInt8(ascii: "-")
                pos &+= 1
            }
            guard pos < count, isDigit(byte(pos)) else { throw unexpected("expected a digit in the exponent") }
            var e = 0
            while pos < count {
                let c = byte(pos)
                guard isDigit(c) else { break }
                if e < 1_000_000 { e = e &* 10 &+ Int(c &- 48) }
                pos &+= 1
            }
            exponent &+= expNegative ? -e : e
        }

        if isInteger && !truncated {
            if negative {
                if mantissa <= UInt64(Int64.max) {
                    sink.int(-Int64(mantissa))
                    return
                }
                if mantissa == UInt64(Int64.max) + 1 {
                    sink.int(Int64.min)
                    return
                }
            } else if mantissa <= UInt64(Int64.max) {
                sink.int(Int64(mantissa))
                return
            }
        }
        if isInteger {
            // No silent change to a Double: an integer must fit in 64 bits (README).
            throw .at(start, "integer does not fit in 64 bits (write it with a fraction or an exponent to store a Double, or as a string)")
        }
        if !truncated {
            if mantissa == 0 {
                sink.double(negative ? -0.0 : 0.0, mantissa: 0, exponent: negative ? Int.min : 0)
                return
            }
            if mantissa <= 1 << 53 && exponent >= -22 && exponent <= 22 {
                var d = Double(mantissa)
                if exponent >= 0 { d *= exactPowersOfTen[exponent] } else { d /= exactPowersOfTen[-exponent] }
                let m = Int64(mantissa)
                sink.double(negative ? -d : d, mantissa: negative ? -m : m, exponent: exponent)
                return
            }
        }
        try slowNumber(start: start)
    }

    /// Correctly rounded conversion of the number text at `start..<pos` by the standard library.
    @inline(never)
    mutating func slowNumber(start: Int) throws(JSONError) {
        let text = String(decoding: UnsafeBufferPointer(start: base.unsafelyUnwrapped + start, count: pos - start), as: UTF8.self)
        guard let d = Double(text), d.isFinite else { throw .at(start, "number is out of range") }
        // Underflow is out of range too (as overflow is): `1e-400` is not silently 0.
        if d == 0 && !numberTextIsZero(text.utf8) { throw .at(start, "number is out of range (too close to zero for a Double)") }
        sink.double(d, mantissa: 0, exponent: Int.min)
    }

    @inline(__always)
    func isDigit(_ c: UInt8) -> Bool { c &- 48 < 10 }

    // MARK: Strings

    /// Parses a string starting at the opening quote and passes it to the sink.
    mutating func parseString(isKey: Bool) throws(JSONError) {
        let quote = pos
        pos &+= 1
        let start = pos
        let b = base.unsafelyUnwrapped
        while true {
            // Eight bytes at a time while none is special (quote, backslash, control, non-ASCII);
            // the lowest special byte's position comes from the mask, with no byte loop to it.
            while pos &+ 8 <= count {
                let w = UInt64(littleEndian: UnsafeRawPointer(b + pos).loadUnaligned(as: UInt64.self))
                let special = Self.endsPlainRun(w) | (w & 0x8080_8080_8080_8080)
                if special != 0 {
                    pos &+= Int(truncatingIfNeeded: special.trailingZeroBitCount &>> 3)
                    break
                }
                pos &+= 8
            }
            guard pos < count else { throw .at(count, "unterminated string (opened at byte \(quote))") }
            let c = b[pos]
            if c == UInt8(ascii: "\"") {
                let s = UnsafeRawBufferPointer(start: b + start, count: pos &- start)
                pos &+= 1
                if isKey { sink.key(s) } else { sink.string(s) }
                return
            }
            if c == UInt8(ascii: "\\") {
                try parseEscapedString(start: start, quote: quote, isKey: isKey)
                return
            }
            if c < 0x20 { throw .at(pos, "control character in string must be escaped") }
            if c < 0x80 { pos &+= 1 } else { try validateUTF8Sequence() }
        }
    }

    /// A high bit in each byte of `w` that is `"`, `\` or below 0x20, zero if there is none.
    /// Exact for every byte (no carry crosses a byte, and no byte at or above 0x80 is taken for
    /// one of them), so the lowest set bit marks the first such byte (little-endian load).
    @inline(__always)
    static func endsPlainRun(_ w: UInt64) -> UInt64 {
        let low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        @inline(__always) func zeroBytes(_ x: UInt64) -> UInt64 { ~(((x & low7) &+ low7) | x | low7) }
        let quote = zeroBytes(w ^ 0x2222_2222_2222_2222)
        let backslash = zeroBytes(w ^ 0x5C5C_5C5C_5C5C_5C5C)
        let control = ~(((w & low7) &+ 0x6060_6060_6060_6060) | w | low7)
        return quote | backslash | control
    }

    /// Validates the multi-byte UTF-8 sequence at `pos` and moves past it.
    @inline(__always)
    mutating func validateUTF8Sequence() throws(JSONError) {
        let b = base.unsafelyUnwrapped
        let c = b[pos]
        let n: Int
        var lo: UInt8 = 0x80, hi: UInt8 = 0xBF
        switch c {
        case 0xC2...0xDF: n = 2
        case 0xE0: n = 3; lo = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: n = 3
        case 0xED: n = 3; hi = 0x9F
        case 0xF0: n = 4; lo = 0x90
        case 0xF1...0xF3: n = 4
        case 0xF4: n = 4; hi = 0x8F
        default: throw .at(pos, "invalid UTF-8 in string")
        }
        guard pos &+ n <= count else { throw .at(pos, "invalid UTF-8 in string") }
        let c1 = b[pos &+ 1]
        guard c1 >= lo && c1 <= hi else { throw .at(pos, "invalid UTF-8 in string") }
        if n >= 3 { guard b[pos &+ 2] & 0xC0 == 0x80 else { throw .at(pos, "invalid UTF-8 in string") } }
        if n == 4 { guard b[pos &+ 3] & 0xC0 == 0x80 else { throw .at(pos, "invalid UTF-8 in string") } }
        pos &+= n
    }

    /// The slow path for a string with escapes: decodes into the scratch buffer.
    @inline(never)
    mutating func parseEscapedString(start: Int, quote: Int, isKey: Bool) throws(JSONError) {
        let b = base.unsafelyUnwrapped
        // The decoded string is never longer than the remaining input.
        let need = count &- start
        if scratchCapacity < need {
            scratch?.deallocate()
            scratchCapacity = max(need, 64)
            scratch = .allocate(capacity: scratchCapacity)
        }
        let out = scratch.unsafelyUnwrapped
        var n = pos &- start
        out.update(from: b + start, count: n)
        while true {
            guard pos < count else { throw .at(count, "unterminated string (opened at byte \(quote))") }
            let c = b[pos]
            if c == UInt8(ascii: "\"") {
                pos &+= 1
                let s = UnsafeRawBufferPointer(start: out, count: n)
                if isKey { sink.key(s) } else { sink.string(s) }
                return
            }
            if c == UInt8(ascii: "\\") {
                let escape = pos
                guard pos &+ 1 < count else { throw .at(count, "unterminated string (opened at byte \(quote))") }
                let e = b[pos &+ 1]
                pos &+= 2
                switch e {
                case UInt8(ascii: "\""): out[n] = 0x22
                case UInt8(ascii: "\\"): out[n] = 0x5C
                case UInt8(ascii: "/"): out[n] = 0x2F
                case UInt8(ascii: "b"): out[n] = 0x08
                case UInt8(ascii: "f"): out[n] = 0x0C
                case UInt8(ascii: "n"): out[n] = 0x0A
                case UInt8(ascii: "r"): out[n] = 0x0D
                case UInt8(ascii: "t"): out[n] = 0x09
                case UInt8(ascii: "u"):
                    var scalar = try hex4(escape: escape)
                    if scalar >= 0xD800 && scalar < 0xDC00 {
                        guard pos &+ 1 < count, b[pos] == UInt8(ascii: "\\"), b[pos &+ 1] == UInt8(ascii: "u") else {
                            throw .at(escape, "lone surrogate in \\u escape")
                        }
                        pos &+= 2
                        let low = try hex4(escape: pos &- 2)
                        guard low >= 0xDC00 && low < 0xE000 else { throw .at(escape, "lone surrogate in \\u escape") }
                        scalar = 0x10000 &+ ((scalar &- 0xD800) << 10) &+ (low &- 0xDC00)
                    } else if scalar >= 0xDC00 && scalar < 0xE000 {
                        throw .at(escape, "lone surrogate in \\u escape")
                    }
                    // Encode as UTF-8 (at most 4 bytes; the escape took at least 6).
                    if scalar < 0x80 {
                        out[n] = UInt8(scalar)
                    } else if scalar < 0x800 {
                        out[n] = UInt8(0xC0 | (scalar >> 6))
                        out[n &+ 1] = UInt8(0x80 | (scalar & 0x3F))
                        n &+= 1
                    } else if scalar < 0x10000 {
                        out[n] = UInt8(0xE0 | (scalar >> 12))
                        out[n &+ 1] = UInt8(0x80 | ((scalar >> 6) & 0x3F))
                        out[n &+ 2] = UInt8(0x80 | (scalar & 0x3F))
                        n &+= 2
                    } else {
                        out[n] = UInt8(0xF0 | (scalar >> 18))
                        out[n &+ 1] = UInt8(0x80 | ((scalar >> 12) & 0x3F))
                        out[n &+ 2] = UInt8(0x80 | ((scalar >> 6) & 0x3F))
                        out[n &+ 3] = UInt8(0x80 | (scalar & 0x3F))
                        n &+= 3
                    }
                default:
                    throw .at(escape, "invalid escape sequence")
                }
                n &+= 1
                continue
            }
            if c < 0x20 { throw .at(pos, "control character in string must be escaped") }
            if c < 0x80 {
                out[n] = c
                n &+= 1
                pos &+= 1
            } else {
                let s = pos
                try validateUTF8Sequence()
                let len = pos &- s
                (out + n).update(from: b + s, count: len)
                n &+= len
            }
        }
    }

    /// Reads the four hex digits after `\u` (at `pos`) and moves past them.
    @inline(__always)
    mutating func hex4(escape: Int) throws(JSONError) -> UInt32 {
        guard pos &+ 4 <= count else { throw .at(escape, "invalid \\u escape") }
        var v: UInt32 = 0
        for i in 0..<4 {
            let c = byte(pos &+ i)
            let d: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c &- 48
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c &- 87
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c &- 55
            default: throw .at(escape, "invalid \\u escape")
            }
            v = v << 4 | UInt32(d)
        }
        pos &+= 4
        return v
    }
}

// MARK: - Value builder

/// A sink that builds a `Value` (duplicate keys: the last wins).
struct JSONValueBuilder: JSONSink {
    var values: [Value] = []
    var keys: [String] = []
    var frames: [(values: Int, keys: Int)] = []

    init() {
        values.reserveCapacity(16)
    }

    var result: Value { values.last ?? .missing }

    mutating func null() { values.append(.null) }
    mutating func bool(_ b: Bool) { values.append(.bool(b)) }
    mutating func int(_ i: Int64) { values.append(.int(i)) }
    mutating func double(_ d: Double, mantissa: Int64, exponent: Int) { values.append(.double(d)) }
    mutating func string(_ utf8: UnsafeRawBufferPointer) { values.append(.string(String(decoding: utf8, as: UTF8.self))) }
    mutating func key(_ utf8: UnsafeRawBufferPointer) { keys.append(String(decoding: utf8, as: UTF8.self)) }

    mutating func beginArray() { frames.append((values.count, keys.count)) }
    mutating func beginObject() { frames.append((values.count, keys.count)) }

    mutating func endArray() {
        let f = frames.removeLast()
        let a = Array(values[f.values...])
        values.removeSubrange(f.values...)
        values.append(.array(a))
    }

    mutating func endObject() {
        let f = frames.removeLast()
        let n = values.count - f.values
        var o = [String: Value](minimumCapacity: n)
        for i in 0..<n { o[keys[f.keys + i]] = values[f.values + i] }
        values.removeSubrange(f.values...)
        keys.removeSubrange(f.keys...)
        values.append(.object(o))
    }
}

/// True when the digits of a number's text before any exponent are all zero (`0.000e5`):
/// a Double of 0 from other text is an underflow.
func numberTextIsZero(_ text: some Sequence<UInt8>) -> Bool {
    for c in text {
        if c == UInt8(ascii: "e") || c == UInt8(ascii: "E") { break }
        if c >= UInt8(ascii: "1") && c <= UInt8(ascii: "9") { return false }
    }
    return true
}
