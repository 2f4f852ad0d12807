/// One column of a result row: a value, or a whole document kept in the binary format
/// (a copy of its bytes, valid after the read transaction) and decoded each time it is read.
enum ResultCell: Sendable {
    case value(Value)
    /// The encoded bytes and the offset of the value's tag byte in them.
    case encoded([UInt8], offset: Int)

    /// Copies the bytes of `body`'s buffer out of LMDB memory.
    @inline(__always)
    init(copying body: BinaryValue) {
        let source = body.buffer
        let bytes = [UInt8](unsafeUninitializedCapacity: source.count) { out, n in
            if let base = source.baseAddress, source.count > 0 {
                UnsafeMutableRawPointer(out.baseAddress!).copyMemory(from: base, byteCount: source.count)
            }
            n = source.count
        }
        self = .encoded(bytes, offset: body.offset)
    }

    /// The decoded value (MISSING if the bytes are corrupt, as `BinaryValue.toValue()`).
    var value: Value {
        switch self {
        case .value(let v): return v
        case .encoded(let bytes, let offset):
            return bytes.withUnsafeBytes { BinaryValue(buffer: $0, offset: offset).toValue() }
        }
    }

    /// The value as plain Swift values (`Value.anyValue`), nil for MISSING. An encoded
    /// document converts straight from its bytes, without building a `Value` first.
    var anyValue: Any? {
        switch self {
        case .value(let v): return v.anyValue
        case .encoded(let bytes, let offset):
            return bytes.withUnsafeBytes { BinaryValue(buffer: $0, offset: offset).anyValue() }
        }
    }
}
