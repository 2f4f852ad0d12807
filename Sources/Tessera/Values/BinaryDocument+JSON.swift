// MARK: - Binary document → JSON text

extension JSONWriter {
    /// The JSON text of a binary value, written straight from the encoded bytes without
    /// building a `Value`; the same text as `string(value.toValue())` (keys in code-point
    /// order, integers exactly, doubles in shortest round-trip form). Nil if the bytes are
    /// corrupt or nested deeper than `BinaryValue.maxDepth`.
    static func string(_ value: BinaryValue, pretty: Bool = false) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(max(64, value.buffer.count &* 5 / 4))
        guard write(value, into: &out, pretty: pretty) else { return nil }
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the JSON text of a binary value to `out`; returns false (leaving partial
    /// output) if the bytes are corrupt.
    @discardableResult
    static func write(_ value: BinaryValue, into out: inout [UInt8], pretty: Bool = false, indent: Int = 0) -> Bool {
        write(value, into: &out, pretty: pretty, indent: indent, depth: 0)
    }

    static func write(_ value: BinaryValue, into out: inout [UInt8], pretty: Bool, indent: Int, depth: Int) -> Bool {
        switch value.kind {
        case .invalid:
            return false
        case .null:
            out.append(contentsOf: "null".utf8)
        case .bool:
            out.append(contentsOf: (value.bool == true ? "true" : "false").utf8)
        case .int:
            guard let i = value.int else { return false }
            writeInt(i, into: &out)
        case .double:
            guard let d = value.double else { return false }
            writeDouble(d, into: &out)
        case .string:
            guard let ok = value.withUTF8({ writeString(utf8: $0, into: &out) }) else { return false }
            _ = ok
        case .array:
            guard depth < BinaryValue.maxDepth, let c = value.container() else { return false }
            out.append(UInt8(ascii: "["))
            for i in 0..<c.count {
                guard let p = value.position(c, i) else { return false }
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { newline(&out, indent + 1) }
                guard write(BinaryValue(buffer: value.buffer, offset: p), into: &out, pretty: pretty, indent: indent + 1, depth: depth + 1) else {
                    return false
                }
            }
            if pretty && c.count > 0 { newline(&out, indent) }
            out.append(UInt8(ascii: "]"))
        case .object:
            guard depth < BinaryValue.maxDepth, let c = value.container() else { return false }
            out.append(UInt8(ascii: "{"))
            for i in 0..<c.count {
                guard let p = value.position(c, i), let m = value.memberSlot(at: p) else { return false }
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { newline(&out, indent + 1) }
                writeString(utf8: UnsafeRawBufferPointer(rebasing: value.buffer[m.key]), into: &out)
                out.append(UInt8(ascii: ":"))
                if pretty { out.append(UInt8(ascii: " ")) }
                guard write(BinaryValue(buffer: value.buffer, offset: m.value), into: &out, pretty: pretty, indent: indent + 1, depth: depth + 1) else {
                    return false
                }
            }
            if pretty && c.count > 0 { newline(&out, indent) }
            out.append(UInt8(ascii: "}"))
        }
        return true
    }
}
