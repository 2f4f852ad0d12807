// MARK: - Tessera binary document format, version 1
//
// Document bodies are stored in LMDB in this format and read in place from the memory
// map: no parsing on read, a member lookup is a binary search over sorted keys, an array
// element is found in O(1), scalars decode without allocating, and strings are handed
// out as UTF-8 bytes. Reading two fields of a large body touches only those bytes.
//
// Document   = 0xF1 (header: format version 1), then one value (the root).
// Integers inside the format are little-endian. `varint` = unsigned LEB128: 7 bits per
// byte, least significant group first, high bit set when more bytes follow; at most 9
// bytes. Readers accept non-minimal forms; the encoder always writes the shortest.
//
// Value = tag byte, then a payload that depends on the tag:
//
//   tag          meaning                                      payload
//   0x00         null                                         —
//   0x01 / 0x02  false / true                                 —
//   0x03         double                                       8 bytes IEEE-754 binary64
//   0x04         decimal double                               varint zigzag(m), 1 byte e (Int8)
//   0x08–0x0F    integer                                      n = (tag & 7) + 1 bytes, two's
//                                                             complement, sign-extended
//   0x20–0x3F    small integer (tag − 0x20 = 0…31)            —
//   0x40–0x5E    string of length tag − 0x40 (0…30)           UTF-8 bytes
//   0x5F         string                                       varint length, UTF-8 bytes
//   0x80–0x9F    array   ─┐ tag = type | c << 2 | w           see "Containers"
//   0xA0–0xBF    object  ─┘
//   other        invalid (0xF1 only ever appears as the document header)
//
// A decimal double is m × 10^e, evaluated as `Double(m) * 10^e` (e ≥ 0) or
// `Double(m) / 10^-e` (e < 0); it requires |m| ≤ 2^53 and −22 ≤ e ≤ 22, so both operands
// are exact and the single IEEE operation is correctly rounded: the stored double comes
// back bit for bit. `3.14` takes 4 bytes this way instead of 9. Both double tags have
// kind `.double` (an integral double stays a double).
//
// Containers: c (bits 2–4) is the element count 0…6, or 7 meaning a varint count
// follows the tag. w (bits 0–1) selects how elements are located:
//   w = 0, 1, 2: an offset table of `count` unsigned entries of 1, 2 or 4 bytes follows,
//                then the data area; entry i is the offset of element i from the start of
//                the data area (the byte after the table).
//   w = 3:       a varint stride s ≥ 1 follows, then the data area; element i is at s × i
//                (the encoder uses it for arrays whose elements all have the same size,
//                e.g. `[1, 2, 3]` or `["a", "b"]`).
// An array element is a value. An object member is a key followed by its value, where
// the key is a varint length and UTF-8 bytes (no tag). The members of an object appear in
// its table sorted by key bytes (unsigned lexicographic order, a prefix first) and keys
// are unique; the data area itself may be in any order (the encoder keeps document order
// and points the table at it) and may hold unreferenced bytes (dropped duplicate keys).
//
// Safety: every read is bounds-checked against the buffer. Offsets are unsigned and
// relative to a data area that starts after its container's tag, so every step from a
// container to a child moves strictly forward: corrupt bytes can produce wrong values,
// `nil` or `.invalid`, but never a crash, an out-of-bounds read, or a loop. Recursive
// walks (`toValue`, `isValid`) stop at `BinaryValue.maxDepth` levels, and visit at most
// one value per byte: offsets of several elements may point at the same child, and
// without that bound a few hundred corrupt bytes describe a tree of 2^40 values.

/// The type of a value in the binary document format.
package enum BinaryKind: Sendable, Hashable {
    /// JSON null.
    case null
    /// A boolean.
    case bool
    /// An integer (`Int64`).
    case int
    /// A floating-point number.
    case double
    /// A UTF-8 string.
    case string
    /// An array.
    case array
    /// An object with sorted keys.
    case object
    /// A byte that is not a valid tag, or a position outside the buffer.
    case invalid
}

/// Constants of the binary document format.
enum BinaryFormat {
    static let header: UInt8 = 0xF1
    static let null: UInt8 = 0x00
    static let falseTag: UInt8 = 0x01
    static let trueTag: UInt8 = 0x02
    static let double: UInt8 = 0x03
    static let decimal: UInt8 = 0x04
    static let int: UInt8 = 0x08
    static let smallInt: UInt8 = 0x20
    static let string: UInt8 = 0x40
    static let longString: UInt8 = 0x5F
    static let array: UInt8 = 0x80
    static let object: UInt8 = 0xA0
    static let maxInlineStringLength = 30
    static let twoTo53: UInt64 = 1 << 53
}

/// A read-only view of one value inside an encoded binary document.
///
/// A `BinaryValue` does not own its bytes: it is valid only while the buffer it was made
/// from is (for LMDB, until the transaction ends or the next write). Copy what must
/// outlive them with `toValue()` or `string`.
///
/// ```swift
/// bytes.withUnsafeBytes { buf in
///     guard let root = BinaryValue.root(buf) else { return }
///     root.member("name")?.string        // "Alice"
///     root.lookup([.key("tags"), .index(-1)])?.string
/// }
/// ```
///
/// Every read is bounds-checked: on corrupt or truncated bytes the accessors return nil,
/// `.invalid` or MISSING, never crash or loop.
package struct BinaryValue {
    /// The whole encoded document.
    let buffer: UnsafeRawBufferPointer
    /// The offset of this value's tag byte in `buffer`.
    let offset: Int

    /// The deepest nesting that recursive walks (`toValue`, `isValid`) follow.
    static let maxDepth = 1024

    /// A view of the value at `offset` (not checked until read).
    @inlinable
    init(buffer: UnsafeRawBufferPointer, offset: Int) {
        self.buffer = buffer
        self.offset = offset
    }

    /// The root value of an encoded document, or nil if the header is wrong or the root
    /// is not a readable value.
    ///
    /// Checks the format header and the root's tag and container header; deeper parts
    /// are checked as they are read (use `isValid` to check everything).
    package static func root(_ bytes: UnsafeRawBufferPointer) -> BinaryValue? {
        guard bytes.count >= 2, bytes[0] == BinaryFormat.header else { return nil }
        let v = BinaryValue(buffer: bytes, offset: 1)
        switch v.kind {
        case .invalid: return nil
        case .array, .object: return v.container() == nil ? nil : v
        default: return v
        }
    }

    // MARK: Scalars

    @inline(__always)
    var tag: UInt8? { offset >= 0 && offset < buffer.count ? buffer[offset] : nil }

    /// The type of this value (from its tag byte; a truncated payload shows up as nil
    /// from the typed accessors).
    package var kind: BinaryKind {
        guard let t = tag else { return .invalid }
        switch t {
        case 0x00: return .null
        case 0x01, 0x02: return .bool
        case 0x03, 0x04: return .double
        case 0x08...0x0F, 0x20...0x3F: return .int
        case 0x40...0x5F: return .string
        case 0x80...0x9F: return .array
        case 0xA0...0xBF: return .object
        default: return .invalid
        }
    }

    /// True for `null`.
    var isNull: Bool { tag == BinaryFormat.null }

    /// The boolean, or nil for other kinds.
    package var bool: Bool? {
        switch tag {
        case BinaryFormat.falseTag: false
        case BinaryFormat.trueTag: true
        default: nil
        }
    }

    /// The integer; also an integral double that fits in `Int64` (as `Value.intValue`);
    /// nil for other kinds.
    package var int: Int64? {
        guard let t = tag else { return nil }
        switch t {
        case 0x20...0x3F:
            return Int64(t &- 0x20)
        case 0x08...0x0F:
            let n = Int(t & 7) &+ 1
            guard offset &+ n < buffer.count else { return nil }
            var u: UInt64 = 0
            var i = n
            while i > 0 {
                u = u << 8 | UInt64(buffer[offset &+ i])
                i &-= 1
            }
            let shift = UInt64(64 &- 8 &* n)
            return Int64(bitPattern: u << shift) >> shift
        case 0x03, 0x04:
            guard let d = double else { return nil }
            return Value.double(d).intValue
        default:
            return nil
        }
    }

    /// The number as a Double (integers convert, rounding if beyond 2^53); nil for other kinds.
    package var double: Double? {
        guard let t = tag else { return nil }
        switch t {
        case BinaryFormat.double:
            guard offset &+ 8 < buffer.count else { return nil }
            return Double(bitPattern: UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: offset &+ 1, as: UInt64.self)))
        case BinaryFormat.decimal:
            var p = offset &+ 1
            guard let z = readVarint(&p), p < buffer.count else { return nil }
            let u = UInt64(z)
            let m = Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
            let e = Int(Int8(bitPattern: buffer[p]))
            guard m.magnitude <= BinaryFormat.twoTo53, e >= -22, e <= 22 else { return nil }
            let d = Double(m)
            return e >= 0 ? d * exactPowersOfTen[e] : d / exactPowersOfTen[-e]
        case 0x08...0x0F, 0x20...0x3F:
            return int.map(Double.init)
        default:
            return nil
        }
    }

    /// The number as a `Value` (`.int` or `.double`), or nil for other kinds.
    var number: Value? {
        switch kind {
        case .int: int.map(Value.int)
        case .double: double.map(Value.double)
        default: nil
        }
    }

    /// True for a scalar (null, boolean, number, string) whose whole encoding is inside the
    /// buffer; false for arrays, objects and anything cut off or invalid.
    var isWholeScalar: Bool {
        guard let t = tag else { return false }
        switch t {
        case 0x00, 0x01, 0x02, 0x20...0x3F: return true
        case 0x08...0x0F: return offset &+ Int(t & 7) &+ 1 < buffer.count
        case 0x03, 0x04: return double != nil
        case 0x40...0x5F: return stringRange != nil
        default: return false
        }
    }

    /// The byte range of the string's UTF-8, or nil.
    @inline(__always)
    var stringRange: Range<Int>? {
        guard let t = tag, t >= 0x40, t <= 0x5F else { return nil }
        var p = offset &+ 1
        var n = Int(t &- 0x40)
        if t == BinaryFormat.longString {
            guard let len = readVarint(&p) else { return nil }
            n = len
        }
        guard n <= buffer.count &- p else { return nil }
        return p..<(p &+ n)
    }

    /// Calls `body` with the string's UTF-8 bytes (valid only during the call), without
    /// allocating; nil if this is not a string.
    func withUTF8<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        guard let r = stringRange else { return nil }
        return try body(UnsafeRawBufferPointer(rebasing: buffer[r]))
    }

    /// The string (copied out of the buffer), or nil. Invalid UTF-8 in corrupt data is
    /// repaired with U+FFFD.
    package var string: String? {
        guard let r = stringRange else { return nil }
        return String(decoding: UnsafeRawBufferPointer(rebasing: buffer[r]), as: UTF8.self)
    }

    /// True if this is a string equal to `s` (byte for byte).
    func stringEquals(_ s: String) -> Bool {
        guard let r = stringRange else { return false }
        let bytes = UnsafeRawBufferPointer(rebasing: buffer[r])
        return withUTF8Bytes(of: s) { compareBytes(bytes, $0) == 0 }
    }

    // MARK: Containers

    /// Where a container's elements are.
    @usableFromInline
    struct Container {
        var count: Int
        /// Offset-table entry width 1, 2 or 4; 0 in stride mode.
        var width: Int
        var stride: Int
        var table: Int
        var data: Int
        var isObject: Bool
    }

    /// Reads and checks a container header.
    @inline(__always)
    func container() -> Container? {
        guard let t = tag, t >= 0x80, t <= 0xBF else { return nil }
        var p = offset &+ 1
        var n = Int((t >> 2) & 7)
        if n == 7 {
            guard let v = readVarint(&p) else { return nil }
            n = v
        }
        let code = Int(t & 3)
        if code == 3 {
            guard let s = readVarint(&p), s >= 1 else { return nil }
            guard p <= buffer.count, n <= (buffer.count &- p) / s else { return nil }
            return Container(count: n, width: 0, stride: s, table: p, data: p, isObject: t >= 0xA0)
        }
        let w = 1 << code
        guard p <= buffer.count, n <= (buffer.count &- p) / w else { return nil }
        let data = p &+ n &* w
        if n > 0 && data >= buffer.count { return nil }
        return Container(count: n, width: w, stride: 0, table: p, data: data, isObject: t >= 0xA0)
    }

    /// The position of element (or member) `i` of `c`, or nil if it lies outside the buffer.
    @inline(__always)
    func position(_ c: Container, _ i: Int) -> Int? {
        let rel: Int
        switch c.width {
        case 0: rel = c.stride &* i
        case 1: rel = Int(buffer[c.table &+ i])
        case 2: rel = Int(UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: c.table &+ 2 &* i, as: UInt16.self)))
        default: rel = Int(UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: c.table &+ 4 &* i, as: UInt32.self)))
        }
        let p = c.data &+ rel
        return p < buffer.count ? p : nil
    }

    /// The key bytes and value position of the member at `p`.
    @inline(__always)
    func memberSlot(at p: Int) -> (key: Range<Int>, value: Int)? {
        var q = p
        guard let n = readVarint(&q), n < buffer.count &- q else { return nil }
        return (q..<(q &+ n), q &+ n)
    }

    /// The number of elements of an array or members of an object; 0 for other kinds
    /// (and for a corrupt container header).
    package var count: Int { container()?.count ?? 0 }

    /// The element at `index` of an array (negative counts from the end), or nil if out of
    /// range or not an array.
    ///
    /// - Complexity: O(1).
    package subscript(index: Int) -> BinaryValue? {
        guard let c = container(), !c.isObject else { return nil }
        let i = index < 0 ? c.count &+ index : index
        guard i >= 0, i < c.count, let p = position(c, i) else { return nil }
        return BinaryValue(buffer: buffer, offset: p)
    }

    /// The value of member `key` of an object, or nil if absent or not an object.
    ///
    /// - Complexity: O(log n) key comparisons (binary search over the sorted keys).
    package func member(_ key: String) -> BinaryValue? {
        withUTF8Bytes(of: key) { member(utf8: $0) }
    }

    /// The value of the member whose key has these UTF-8 bytes, or nil.
    ///
    /// - Complexity: O(log n) key comparisons.
    func member(utf8 key: UnsafeRawBufferPointer) -> BinaryValue? {
        var noHint = Int.max
        return member(utf8: key, hint: &noHint)
    }

    /// `member(utf8:)` that first tries the position `hint` (where the key was found in the
    /// last document of the same shape) and leaves the position found in `hint`: documents
    /// written by the same code have the same keys, so a scan reading one property of each
    /// mostly compares one key instead of searching.
    @inline(__always)
    func member(utf8 key: UnsafeRawBufferPointer, hint: inout Int) -> BinaryValue? {
        guard let c = container(), c.isObject else { return nil }
        if hint < c.count, let p = position(c, hint), let m = memberSlot(at: p),
           compareBytes(UnsafeRawBufferPointer(rebasing: buffer[m.key]), key) == 0 {
            return BinaryValue(buffer: buffer, offset: m.value)
        }
        var lo = 0
        var hi = c.count
        while lo < hi {
            let mid = Int(bitPattern: UInt(bitPattern: lo &+ hi) >> 1)
            guard let p = position(c, mid), let m = memberSlot(at: p) else { return nil }
            let r = compareBytes(UnsafeRawBufferPointer(rebasing: buffer[m.key]), key)
            if r == 0 { hint = mid; return BinaryValue(buffer: buffer, offset: m.value) }
            if r < 0 { lo = mid &+ 1 } else { hi = mid }
        }
        return nil
    }

    /// True if the object has a key that starts with the byte `first` (keys are in order: one
    /// search for the first key at or after it).
    func hasKey(startingWith first: UInt8) -> Bool {
        guard let c = container(), c.isObject else { return false }
        var lo = 0
        var hi = c.count
        while lo < hi {
            let mid = Int(bitPattern: UInt(bitPattern: lo &+ hi) >> 1)
            guard let p = position(c, mid), let m = memberSlot(at: p) else { return false }
            if m.key.isEmpty || buffer[m.key.lowerBound] < first { lo = mid &+ 1 } else { hi = mid }
        }
        guard lo < c.count, let p = position(c, lo), let m = memberSlot(at: p), !m.key.isEmpty else { return false }
        return buffer[m.key.lowerBound] == first
    }

    /// The member at position `index` in key order, or nil if out of range or not an object.
    func member(at index: Int) -> (key: UnsafeRawBufferPointer, value: BinaryValue)? {
        guard let c = container(), c.isObject, index >= 0, index < c.count,
              let p = position(c, index), let m = memberSlot(at: p) else { return nil }
        return (UnsafeRawBufferPointer(rebasing: buffer[m.key]), BinaryValue(buffer: buffer, offset: m.value))
    }

    // MARK: Paths

    /// The value at `path` (member names and array indexes), or nil if any step is
    /// absent or of the wrong type. An empty path is this value.
    package func lookup(_ path: [PathComponent]) -> BinaryValue? {
        var v = self
        for step in path {
            switch step {
            case .key(let k): guard let next = v.member(k) else { return nil }; v = next
            case .index(let i): guard let next = v[i] else { return nil }; v = next
            }
        }
        return v
    }

    /// The decoded value at `path`, or MISSING if absent (or corrupt).
    func value(at path: [PathComponent]) -> Value {
        lookup(path)?.toValue() ?? .missing
    }

    // MARK: Decoding

    /// The whole value decoded into a `Value`, or MISSING if any part is corrupt or nested
    /// deeper than `maxDepth`.
    func toValue() -> Value {
        decode() ?? .missing
    }

    /// Decodes the value, or nil if any part is corrupt.
    package func decode() -> Value? {
        var budget = visitBudget
        return decode(depth: 0, budget: &budget)
    }

    /// How many values a recursive walk may visit: every value of a well-formed document
    /// starts at a byte of its own, so more visits than bytes mean offsets that share
    /// subtrees — a few hundred corrupt bytes could otherwise describe 2^40 values.
    var visitBudget: Int { buffer.count &- offset }

    func decode(depth: Int, budget: inout Int) -> Value? {
        budget &-= 1
        guard budget >= 0 else { return nil }
        guard let t = tag else { return nil }
        switch t {
        case 0x00: return .null
        case 0x01: return .bool(false)
        case 0x02: return .bool(true)
        case 0x03, 0x04: return double.map(Value.double)
        case 0x08...0x0F, 0x20...0x3F: return int.map(Value.int)
        case 0x40...0x5F: return string.map(Value.string)
        case 0x80...0xBF:
            guard depth < BinaryValue.maxDepth, let c = container() else { return nil }
            if c.isObject {
                var o = [String: Value](minimumCapacity: c.count)
                for i in 0..<c.count {
                    guard let p = position(c, i), let m = memberSlot(at: p),
                          let v = BinaryValue(buffer: buffer, offset: m.value).decode(depth: depth &+ 1, budget: &budget) else { return nil }
                    o[String(decoding: UnsafeRawBufferPointer(rebasing: buffer[m.key]), as: UTF8.self)] = v
                }
                return .object(o)
            }
            var a: [Value] = []
            a.reserveCapacity(c.count)
            for i in 0..<c.count {
                guard let p = position(c, i), let v = BinaryValue(buffer: buffer, offset: p).decode(depth: depth &+ 1, budget: &budget) else {
                    return nil
                }
                a.append(v)
            }
            return .array(a)
        default:
            return nil
        }
    }

    /// The whole value as plain Swift values, the same as `toValue().anyValue` without
    /// building the `Value`: NULL is `JSONNull`, integers `Int`, objects `[String: Any]`,
    /// arrays `[Any]`. Nil where `toValue()` is MISSING (corrupt bytes, too deep).
    func anyValue() -> Any? {
        var budget = visitBudget
        return anyValue(depth: 0, budget: &budget)
    }

    func anyValue(depth: Int, budget: inout Int) -> Any? {
        budget &-= 1
        guard budget >= 0 else { return nil }
        guard let t = tag else { return nil }
        switch t {
        case 0x00: return JSONNull()
        case 0x01: return false
        case 0x02: return true
        case 0x03, 0x04:
            guard let d = double else { return nil }
            return d
        case 0x08...0x0F, 0x20...0x3F:
            guard let i = int else { return nil }
            return Int(i)
        case 0x40...0x5F:
            guard let s = string else { return nil }
            return s
        case 0x80...0xBF:
            guard depth < BinaryValue.maxDepth, let c = container() else { return nil }
            // Strings and small integers, the commonest members, are stored without going
            // through an `Any?` return (an existential copied and destroyed per member).
            if c.isObject {
                var o = [String: Any](minimumCapacity: c.count)
                for i in 0..<c.count {
                    guard let p = position(c, i), let m = memberSlot(at: p) else { return nil }
                    let key = String(decoding: UnsafeRawBufferPointer(rebasing: buffer[m.key]), as: UTF8.self)
                    let child = BinaryValue(buffer: buffer, offset: m.value)
                    switch child.tag ?? 0xFF {
                    case 0x40...0x5F:
                        budget &-= 1
                        guard budget >= 0, let s = child.string else { return nil }
                        o[key] = s
                    case 0x20...0x3F:
                        budget &-= 1
                        guard budget >= 0 else { return nil }
                        o[key] = Int(buffer[m.value] &- 0x20)
                    default:
                        guard let v = child.anyValue(depth: depth &+ 1, budget: &budget) else { return nil }
                        o[key] = v
                    }
                }
                return o
            }
            var a: [Any] = []
            a.reserveCapacity(c.count)
            for i in 0..<c.count {
                guard let p = position(c, i) else { return nil }
                let child = BinaryValue(buffer: buffer, offset: p)
                switch child.tag ?? 0xFF {
                case 0x40...0x5F:
                    budget &-= 1
                    guard budget >= 0, let s = child.string else { return nil }
                    a.append(s)
                case 0x20...0x3F:
                    budget &-= 1
                    guard budget >= 0 else { return nil }
                    a.append(Int(buffer[p] &- 0x20))
                default:
                    guard let v = child.anyValue(depth: depth &+ 1, budget: &budget) else { return nil }
                    a.append(v)
                }
            }
            return a
        default:
            return nil
        }
    }

    /// True if the whole value is well formed: valid tags, payloads inside the buffer,
    /// valid UTF-8, object keys strictly increasing, nesting within `maxDepth`.
    ///
    /// - Complexity: O(size of the value).
    package var isValid: Bool {
        var budget = visitBudget
        return check(depth: 0, budget: &budget)
    }

    func check(depth: Int, budget: inout Int) -> Bool {
        budget &-= 1
        guard budget >= 0 else { return false }
        guard let t = tag else { return false }
        switch t {
        case 0x00, 0x01, 0x02: return true
        case 0x03, 0x04: return double != nil
        case 0x08...0x0F, 0x20...0x3F: return int != nil
        case 0x40...0x5F:
            guard let r = stringRange else { return false }
            return isValidUTF8(UnsafeRawBufferPointer(rebasing: buffer[r]))
        case 0x80...0xBF:
            guard depth < BinaryValue.maxDepth, let c = container() else { return false }
            var previous: Range<Int>? = nil
            for i in 0..<c.count {
                guard let p = position(c, i) else { return false }
                if c.isObject {
                    guard let m = memberSlot(at: p) else { return false }
                    let key = UnsafeRawBufferPointer(rebasing: buffer[m.key])
                    guard isValidUTF8(key) else { return false }
                    if let prev = previous, compareBytes(UnsafeRawBufferPointer(rebasing: buffer[prev]), key) >= 0 { return false }
                    previous = m.key
                    guard BinaryValue(buffer: buffer, offset: m.value).check(depth: depth &+ 1, budget: &budget) else { return false }
                } else {
                    guard BinaryValue(buffer: buffer, offset: p).check(depth: depth &+ 1, budget: &budget) else { return false }
                }
            }
            return true
        default:
            return false
        }
    }

    /// True if `bytes` is a complete, well-formed document (header and every value).
    static func isValidDocument(_ bytes: UnsafeRawBufferPointer) -> Bool {
        root(bytes)?.isValid ?? false
    }

    // MARK: Iteration

    /// The elements of an array, in order (empty for other kinds). Iteration stops early
    /// at a corrupt element position.
    package var elements: Elements {
        if let c = container(), !c.isObject { return Elements(value: self, container: c, index: 0) }
        return Elements(value: self, container: nil, index: 0)
    }

    /// The members of an object in key order, as (UTF-8 key bytes, value); empty for
    /// other kinds. Iteration stops early at a corrupt member.
    package var members: Members {
        if let c = container(), c.isObject { return Members(value: self, container: c, index: 0) }
        return Members(value: self, container: nil, index: 0)
    }

    /// An iterator over the elements of an array.
    package struct Elements: Sequence, IteratorProtocol {
        let value: BinaryValue
        let container: Container?
        var index: Int

        /// The next element, or nil at the end.
        package mutating func next() -> BinaryValue? {
            guard let c = container, index < c.count, let p = value.position(c, index) else { return nil }
            index &+= 1
            return BinaryValue(buffer: value.buffer, offset: p)
        }
    }

    /// An iterator over the members of an object, in key order.
    package struct Members: Sequence, IteratorProtocol {
        let value: BinaryValue
        let container: Container?
        var index: Int

        /// The next member, or nil at the end. The key bytes are valid as long as the buffer.
        package mutating func next() -> (key: UnsafeRawBufferPointer, value: BinaryValue)? {
            guard let c = container, index < c.count, let p = value.position(c, index),
                  let m = value.memberSlot(at: p) else { return nil }
            index &+= 1
            return (UnsafeRawBufferPointer(rebasing: value.buffer[m.key]), BinaryValue(buffer: value.buffer, offset: m.value))
        }
    }

    /// The keys of an object in order, as strings (allocates).
    package var keys: [String] {
        members.map { String(decoding: $0.key, as: UTF8.self) }
    }

    // MARK: Helpers

    /// Reads a varint at `p` and moves past it; nil if truncated or longer than 9 bytes.
    @inline(__always)
    func readVarint(_ p: inout Int) -> Int? {
        guard p >= 0, p < buffer.count else { return nil }
        var c = buffer[p]
        p &+= 1
        if c < 0x80 { return Int(c) }
        var result = UInt64(c & 0x7F)
        var shift: UInt64 = 7
        while p < buffer.count {
            c = buffer[p]
            p &+= 1
            result |= UInt64(c & 0x7F) << shift
            if c < 0x80 { return result <= UInt64(Int.max) ? Int(result) : nil }
            shift &+= 7
            if shift > 56 { return nil }
        }
        return nil
    }
}

// MARK: - Comparison with Value

extension BinaryValue {
    /// Structural equality with a decoded value, using `Value`'s `==` rules (numbers by
    /// value, strings byte for byte), without decoding this value. MISSING equals nothing.
    package func equals(_ value: Value) -> Bool {
        equals(value, depth: 0)
    }

    func equals(_ value: Value, depth: Int) -> Bool {
        switch value {
        case .missing: return false
        case .null: return isNull
        case .bool(let b): return bool == b
        case .int, .double:
            switch kind {
            case .int: guard let i = int else { return false }; return Value.int(i) == value
            case .double: guard let d = double else { return false }; return Value.double(d) == value
            default: return false
            }
        case .string(let s): return stringEquals(s)
        case .array(let a):
            guard depth < BinaryValue.maxDepth, let c = container(), !c.isObject, c.count == a.count else { return false }
            for i in 0..<c.count {
                guard let p = position(c, i), BinaryValue(buffer: buffer, offset: p).equals(a[i], depth: depth &+ 1) else { return false }
            }
            return true
        case .object(let o):
            guard depth < BinaryValue.maxDepth, let c = container(), c.isObject, c.count == o.count else { return false }
            for (k, v) in o {
                guard let m = member(k), m.equals(v, depth: depth &+ 1) else { return false }
            }
            return true
        }
    }
}

// MARK: - Byte helpers

/// Calls `body` with the UTF-8 bytes of `s` (no copy for native strings).
@inline(__always)
func withUTF8Bytes<R>(of s: String, _ body: (UnsafeRawBufferPointer) -> R) -> R {
    if let r = s.utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) { return r }
    var copy = s
    copy.makeContiguousUTF8()
    return copy.utf8.withContiguousStorageIfAvailable { body(UnsafeRawBufferPointer($0)) }!
}

/// Unsigned lexicographic comparison of two byte strings (<0, 0, >0); a prefix sorts first.
@inline(__always)
func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let n = min(a.count, b.count)
    if n > 0 {
        let pa = a.baseAddress.unsafelyUnwrapped, pb = b.baseAddress.unsafelyUnwrapped
        var i = 0
        while i &+ 8 <= n {
            let x = UInt64(bigEndian: pa.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            let y = UInt64(bigEndian: pb.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            if x != y { return x < y ? -1 : 1 }
            i &+= 8
        }
        while i < n {
            let x = pa.load(fromByteOffset: i, as: UInt8.self), y = pb.load(fromByteOffset: i, as: UInt8.self)
            if x != y { return x < y ? -1 : 1 }
            i &+= 1
        }
    }
    return a.count < b.count ? -1 : (a.count == b.count ? 0 : 1)
}

/// True if `bytes` is well-formed UTF-8 (no overlong forms, surrogates or values past U+10FFFF).
func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
    var i = 0
    let n = bytes.count
    while i < n {
        // Eight ASCII bytes at a time.
        if i &+ 8 <= n, bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
            i &+= 8
            continue
        }
        let c = bytes[i]
        if c < 0x80 { i &+= 1; continue }
        let len: Int
        var lo: UInt8 = 0x80, hi: UInt8 = 0xBF
        switch c {
        case 0xC2...0xDF: len = 2
        case 0xE0: len = 3; lo = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: len = 3
        case 0xED: len = 3; hi = 0x9F
        case 0xF0: len = 4; lo = 0x90
        case 0xF1...0xF3: len = 4
        case 0xF4: len = 4; hi = 0x8F
        default: return false
        }
        guard i &+ len <= n, bytes[i &+ 1] >= lo, bytes[i &+ 1] <= hi else { return false }
        if len >= 3 && bytes[i &+ 2] & 0xC0 != 0x80 { return false }
        if len == 4 && bytes[i &+ 3] & 0xC0 != 0x80 { return false }
        i &+= len
    }
    return true
}
