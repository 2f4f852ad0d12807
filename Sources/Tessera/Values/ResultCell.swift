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
    @inline(__always)
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

/// The cells of one output row. Rows of one to three columns — the shapes most queries
/// return — keep their cells inline, so handing out such a row allocates nothing and
/// releasing it frees nothing; wider rows keep an array.
enum RowCells: Sendable, RandomAccessCollection {
    case one(ResultCell)
    case two(ResultCell, ResultCell)
    case three(ResultCell, ResultCell, ResultCell)
    case many([ResultCell])

    /// The cells of `cells`, inline when there are one to three.
    init(_ cells: [ResultCell]) {
        switch cells.count {
        case 1: self = .one(cells[0])
        case 2: self = .two(cells[0], cells[1])
        case 3: self = .three(cells[0], cells[1], cells[2])
        default: self = .many(cells)
        }
    }

    /// Cells holding `values`, in order.
    init(values: [Value]) {
        self.init(count: values.count) { .value(values[$0]) }
    }

    /// `count` cells, the `i`th made by `cell(i)` (inline when there are one to three).
    @inline(__always)
    init(count: Int, _ cell: (Int) -> ResultCell) {
        switch count {
        case 1: self = .one(cell(0))
        case 2: self = .two(cell(0), cell(1))
        case 3: self = .three(cell(0), cell(1), cell(2))
        default: self = .many((0..<count).map(cell))
        }
    }

    var startIndex: Int { 0 }

    var endIndex: Int {
        switch self {
        case .one: return 1
        case .two: return 2
        case .three: return 3
        case .many(let cells): return cells.count
        }
    }

    @inline(__always)
    subscript(i: Int) -> ResultCell {
        switch self {
        case .one(let a): return a
        case .two(let a, let b): return i == 0 ? a : b
        case .three(let a, let b, let c): return i == 0 ? a : i == 1 ? b : c
        case .many(let cells): return cells[i]
        }
    }
}
