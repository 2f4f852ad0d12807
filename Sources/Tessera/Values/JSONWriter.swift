/// Writes values as JSON text (RFC 8259): object keys sorted by code point, integers
/// exactly, doubles in shortest round-trip form, non-finite numbers as `null`.
package enum JSONWriter {
    /// The JSON text of `value` (MISSING writes as `null`).
    package static func string(_ value: Value, pretty: Bool = false) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        write(value, into: &out, pretty: pretty, indent: 0)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the JSON text of `value` to `out`.
    package static func write(_ value: Value, into out: inout [UInt8], pretty: Bool = false, indent: Int = 0) {
        switch value {
        case .missing, .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): writeInt(i, into: &out)
        case .double(let d): writeDouble(d, into: &out)
        case .string(let s): writeString(s, into: &out)
        case .array(let a):
            out.append(UInt8(ascii: "["))
            for (i, e) in a.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { newline(&out, indent + 1) }
                write(e, into: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty && !a.isEmpty { newline(&out, indent) }
            out.append(UInt8(ascii: "]"))
        case .object(let o):
            out.append(UInt8(ascii: "{"))
            var first = true
            forEachSorted(o) { k, v in
                if case .missing = v { return }
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                if pretty { newline(&out, indent + 1) }
                writeString(k, into: &out)
                out.append(UInt8(ascii: ":"))
                if pretty { out.append(UInt8(ascii: " ")) }
                write(v, into: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty && !first { newline(&out, indent) }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Calls `body` for the members of `o` in code-point order of the keys.
    ///
    /// Sorts (first 8 UTF-8 bytes, position) pairs, comparing whole keys only on equal
    /// prefixes, so the sort itself moves no reference-counted values.
    static func forEachSorted(_ o: [String: Value], _ body: (String, Value) -> Void) {
        let n = o.count
        if n <= 1 {
            for (k, v) in o { body(k, v) }
            return
        }
        let indices = Array(o.indices)
        withUnsafeTemporaryAllocation(of: (prefix: UInt64, position: Int).self, capacity: n) { items in
            for j in 0..<n {
                let prefix = withUTF8Bytes(of: o[indices[j]].key) { bytes -> UInt64 in
                    var v: UInt64 = 0
                    for i in 0..<min(bytes.count, 8) { v |= UInt64(bytes[i]) << UInt64(56 - 8 * i) }
                    return v
                }
                items.initializeElement(at: j, to: (prefix, j))
            }
            var all = items
            all.sort { x, y in
                if x.prefix != y.prefix { return x.prefix < y.prefix }
                return compareBinary(o[indices[x.position]].key, o[indices[y.position]].key) < 0
            }
            for item in all {
                let (k, v) = o[indices[item.position]]
                body(k, v)
            }
        }
    }

    static func newline(_ out: inout [UInt8], _ indent: Int) {
        out.append(UInt8(ascii: "\n"))
        for _ in 0..<indent {
            out.append(32)
            out.append(32)
        }
    }

    /// Shortest text that reads back as the same double (Swift's `description` is round-trip exact).
    static func writeDouble(_ d: Double, into out: inout [UInt8]) {
        guard d.isFinite else { out.append(contentsOf: "null".utf8); return }
        if d == 0 && d.sign == .minus {
            // "-0" would read back as the integer 0: keep the sign with a fraction.
            out.append(contentsOf: "-0.0".utf8)
            return
        }
        if d == d.rounded(.towardZero) && abs(d) < 1e15 {
            // Integral doubles print without an exponent or a trailing ".0".
            out.append(contentsOf: String(Int64(d)).utf8)
            return
        }
        out.append(contentsOf: d.description.utf8)
    }

    /// Appends the decimal digits of `i`.
    static func writeInt(_ i: Int64, into out: inout [UInt8]) {
        if i >= 0 && i < 10 {
            out.append(48 &+ UInt8(i))
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0) // 24 bytes of scratch, filled from the end
        withUnsafeMutableBytes(of: &digits) { buf in
            var m = i.magnitude
            var p = buf.count
            repeat {
                p &-= 1
                buf[p] = 48 &+ UInt8(m % 10)
                m /= 10
            } while m != 0
            if i < 0 {
                p &-= 1
                buf[p] = UInt8(ascii: "-")
            }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buf[p...]))
        }
    }

    /// A JSON string literal with the required escapes (`"`, `\`, and controls below 0x20).
    static func writeString(_ s: String, into out: inout [UInt8]) {
        withUTF8Bytes(of: s) { writeString(utf8: $0, into: &out) }
    }

    /// A JSON string literal of UTF-8 bytes with the required escapes.
    static func writeString(utf8 bytes: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        do {
            var run = 0 // start of the pending run of bytes that need no escape
            var i = 0
            let n = bytes.count
            while i < n {
                let b = bytes[i]
                if b >= 0x20 && b != 0x22 && b != 0x5C {
                    i &+= 1
                    continue
                }
                if run < i { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[run..<i])) }
                switch b {
                case 0x22: out.append(92); out.append(34)
                case 0x5C: out.append(92); out.append(92)
                case 0x0A: out.append(92); out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(92); out.append(UInt8(ascii: "r"))
                case 0x09: out.append(92); out.append(UInt8(ascii: "t"))
                case 0x08: out.append(92); out.append(UInt8(ascii: "b"))
                case 0x0C: out.append(92); out.append(UInt8(ascii: "f"))
                default:
                    let hex: StaticString = "0123456789abcdef"
                    out.append(92)
                    out.append(UInt8(ascii: "u"))
                    out.append(48)
                    out.append(48)
                    out.append(hex.utf8Start[Int(b >> 4)])
                    out.append(hex.utf8Start[Int(b & 15)])
                }
                i &+= 1
                run = i
            }
            if run < n { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[run..<n])) }
        }
        out.append(UInt8(ascii: "\""))
    }
}
