/// Writes values as JSON text (RFC 8259): object keys sorted by code point, integers
/// exactly, doubles in shortest round-trip form, non-finite numbers as `null`.
public enum JSONWriter {
    /// The JSON text of `value` (MISSING writes as `null`).
    public static func string(_ value: Value, pretty: Bool = false) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        write(value, into: &out, pretty: pretty, indent: 0)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the JSON text of `value` to `out`.
    public static func write(_ value: Value, into out: inout [UInt8], pretty: Bool = false, indent: Int = 0) {
        switch value {
        case .missing, .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): out.append(contentsOf: String(i).utf8)
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
            for k in o.keys.sorted(by: { compareBinary($0, $1) < 0 }) {
                let v = o[k]!
                if case .missing = v { continue }
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

    private static func newline(_ out: inout [UInt8], _ indent: Int) {
        out.append(UInt8(ascii: "\n"))
        for _ in 0..<indent { out.append(contentsOf: [32, 32]) }
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

    /// A JSON string literal with the required escapes.
    static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): out.append(contentsOf: [92, 34])
            case UInt8(ascii: "\\"): out.append(contentsOf: [92, 92])
            case 0x0A: out.append(contentsOf: [92, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [92, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [92, UInt8(ascii: "t")])
            case 0x08: out.append(contentsOf: [92, UInt8(ascii: "b")])
            case 0x0C: out.append(contentsOf: [92, UInt8(ascii: "f")])
            case 0..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [92, UInt8(ascii: "u"), 48, 48, hex[Int(b >> 4)], hex[Int(b & 15)]])
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
