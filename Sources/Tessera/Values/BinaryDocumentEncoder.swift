// MARK: - Binary document encoder
//
// Writes the format described in BinaryDocument.swift. Containers are written data
// first: elements are appended as they arrive (from a `Value` or straight from JSON
// text), their positions are remembered, and when the container closes its header and
// offset table are inserted in front of the data (one move of the data per nesting
// level). Object members keep document order in the data area; only the offset table
// is sorted by key, and a duplicated key keeps its last value.

/// Encodes values and JSON text into the binary document format.
///
/// ```swift
/// let bytes = try BinaryEncoder.encodeJSON(#"{"name": "Alice", "age": 30}"#)
/// ```
package enum BinaryEncoder {
    /// The binary document (header and root) of `value`.
    ///
    /// MISSING members of objects are left out; MISSING array elements and a MISSING root
    /// are written as null. Object keys are sorted by UTF-8 bytes.
    static func encode(_ value: Value) -> [UInt8] {
        var out: [UInt8] = []
        encode(value, into: &out)
        return out
    }

    /// Appends the binary document (header and root) of `value` to `out`.
    static func encode(_ value: Value, into out: inout [UInt8]) {
        var b = BinaryBuilder(capacity: 256)
        defer { b.deallocate() }
        b.buffer.append(BinaryFormat.header)
        b.write(value)
        b.buffer.copy(into: &out)
    }

    /// Encodes JSON text straight into a binary document, in one pass and without
    /// building a `Value`.
    ///
    /// The JSON rules are `JSONReader`'s (strict RFC 8259; duplicate keys: the last wins).
    /// - Throws: `JSONError` with the position of the first error.
    package static func encodeJSON(_ json: UnsafeRawBufferPointer, maxDepth: Int = JSONReader.defaultMaxDepth) throws(JSONError) -> [UInt8] {
        var out: [UInt8] = []
        try encodeJSON(json, into: &out, maxDepth: maxDepth)
        return out
    }

    /// Appends the binary document of JSON text to `out` (unchanged on error).
    static func encodeJSON(_ json: UnsafeRawBufferPointer, into out: inout [UInt8], maxDepth: Int = JSONReader.defaultMaxDepth) throws(JSONError) {
        // The builder is created in place so that its arrays stay uniquely referenced.
        var scanner = JSONScanner(json, maxDepth: maxDepth, sink: BinaryBuilder(capacity: json.count + 16))
        scanner.sink.buffer.append(BinaryFormat.header)
        do {
            try scanner.parseDocument()
        } catch {
            scanner.sink.deallocate()
            var e = error
            e.locate(in: json)
            throw e
        }
        scanner.sink.buffer.copy(into: &out)
        scanner.sink.deallocate()
    }

    /// Encodes JSON documents one after another with one builder, whose buffer and tables
    /// are allocated once instead of once per document (a batch's chunk of documents).
    struct Reusable: ~Copyable {
        /// nil only while a document is being encoded (the scanner owns the builder then,
        /// so that its tables stay uniquely referenced).
        private var builder: BinaryBuilder?

        init() {
            builder = BinaryBuilder(capacity: 4096)
            builder!.shapes = ObjectShapes()
        }

        deinit { builder?.deallocate() }

        /// The binary document of JSON text (as `encodeJSON(_:maxDepth:)`).
        mutating func encodeJSON(_ json: UnsafeRawBufferPointer, maxDepth: Int = JSONReader.defaultMaxDepth) throws(JSONError) -> [UInt8] {
            var b = builder.unsafelyUnwrapped
            builder = nil
            b.reset()
            b.buffer.reserve(json.count &+ 16)
            b.buffer.append(BinaryFormat.header)
            var scanner = JSONScanner(json, maxDepth: maxDepth, sink: consume b)
            do {
                try scanner.parseDocument()
            } catch {
                builder = scanner.sink
                var e = error
                e.locate(in: json)
                throw e
            }
            builder = scanner.sink
            return builder.unsafelyUnwrapped.buffer.bytes
        }
    }

    /// Encodes JSON text straight into a binary document.
    static func encodeJSON(_ json: String, maxDepth: Int = JSONReader.defaultMaxDepth) throws(JSONError) -> [UInt8] {
        var json = json
        let r: Swift.Result<[UInt8], JSONError> = json.withUTF8 { buf in
            do throws(JSONError) { return .success(try encodeJSON(UnsafeRawBufferPointer(buf), maxDepth: maxDepth)) } catch {
                return .failure(error)
            }
        }
        return try r.get()
    }

    /// Encodes JSON text straight into a binary document.
    static func encodeJSON(_ json: [UInt8], maxDepth: Int = JSONReader.defaultMaxDepth) throws(JSONError) -> [UInt8] {
        let r: Swift.Result<[UInt8], JSONError> = json.withUnsafeBytes { buf in
            do throws(JSONError) { return .success(try encodeJSON(buf, maxDepth: maxDepth)) } catch { return .failure(error) }
        }
        return try r.get()
    }

    /// The decimal form (m, e) of `d` such that `m × 10^e` evaluates back to exactly `d`
    /// (see the format notes), with the fewest digits; nil if there is none.
    static func decimalForm(_ d: Double) -> (mantissa: Int64, exponent: Int)? {
        guard d.isFinite else { return nil }
        if d == 0 { return d.sign == .minus ? nil : (0, 0) }
        let limit = Double(BinaryFormat.twoTo53)
        if d.magnitude <= limit {
            for k in 0...22 {
                let scaled = d * exactPowersOfTen[k]
                if scaled.magnitude > limit { return nil }
                let r = scaled.rounded()
                if (r / exactPowersOfTen[k]).bitPattern == d.bitPattern { return (Int64(r), -k) }
            }
            return nil
        }
        for k in 1...22 {
            let r = (d / exactPowersOfTen[k]).rounded()
            if r.magnitude > limit { continue }
            if (r * exactPowersOfTen[k]).bitPattern == d.bitPattern { return (Int64(r), k) }
        }
        return nil
    }
}

// MARK: - Byte buffer

/// A growable byte buffer with manual lifetime (the owner calls `deallocate()`).
struct ByteBuffer {
    var base: UnsafeMutablePointer<UInt8>
    var count = 0
    var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        self.base = .allocate(capacity: self.capacity)
    }

    func deallocate() { base.deallocate() }

    @inline(never)
    mutating func grow(_ minimum: Int) {
        var c = capacity &* 2
        while c < minimum { c &*= 2 }
        let nb = UnsafeMutablePointer<UInt8>.allocate(capacity: c)
        nb.update(from: base, count: count)
        base.deallocate()
        base = nb
        capacity = c
    }

    @inline(__always)
    mutating func reserve(_ extra: Int) {
        if count &+ extra > capacity { grow(count &+ extra) }
    }

    @inline(__always)
    mutating func append(_ b: UInt8) {
        if count == capacity { grow(count &+ 1) }
        base[count] = b
        count &+= 1
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        let n = bytes.count
        guard n > 0 else { return }
        reserve(n)
        UnsafeMutableRawPointer(base + count).copyMemory(from: bytes.baseAddress.unsafelyUnwrapped, byteCount: n)
        count &+= n
    }

    @inline(__always)
    mutating func appendVarint(_ v: Int) {
        var u = UInt(bitPattern: v)
        reserve(10)
        while u >= 0x80 {
            base[count] = UInt8(truncatingIfNeeded: u) | 0x80
            count &+= 1
            u >>= 7
        }
        base[count] = UInt8(u)
        count &+= 1
    }

    /// Writes `v` as a varint at `p` (the space must exist) and returns the next position.
    @inline(__always)
    func putVarint(_ v: Int, at p: Int) -> Int {
        var u = UInt(bitPattern: v)
        var q = p
        while u >= 0x80 {
            base[q] = UInt8(truncatingIfNeeded: u) | 0x80
            q &+= 1
            u >>= 7
        }
        base[q] = UInt8(u)
        return q &+ 1
    }

    func copy(into out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: base, count: count))
    }

    /// A copy of the bytes written.
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    /// The bytes of a stored key at `p`: (start, length).
    @inline(__always)
    func key(at p: Int) -> (start: Int, count: Int) {
        var q = p
        var n = 0
        var shift = 0
        while true {
            let c = base[q]
            q &+= 1
            n |= Int(c & 0x7F) << shift
            if c < 0x80 { break }
            shift &+= 7
        }
        return (q, n)
    }

    /// Compares the keys stored at positions `a` and `b` (<0, 0, >0).
    @inline(__always)
    func compareStoredKeys(_ a: Int, _ b: Int) -> Int {
        let ka = key(at: a), kb = key(at: b)
        return compareBytes(UnsafeRawBufferPointer(start: base + ka.start, count: ka.count),
                            UnsafeRawBufferPointer(start: base + kb.start, count: kb.count))
    }

    /// Key order; equal keys order by position (document order).
    @inline(__always)
    func keyLess(_ a: Int, _ b: Int) -> Bool {
        let r = compareStoredKeys(a, b)
        return r < 0 || (r == 0 && a < b)
    }

    @inline(__always)
    func keysEqual(_ a: Int, _ b: Int) -> Bool { compareStoredKeys(a, b) == 0 }

    /// The first eight bytes of the key at `p` as a big-endian integer (zero padded).
    @inline(__always)
    func keyPrefix(at p: Int) -> UInt64 {
        let k = key(at: p)
        if k.start &+ 8 <= capacity {
            // One load (the buffer's bytes past the key are allocated), the bytes after the
            // key masked off.
            let v = UInt64(bigEndian: UnsafeRawPointer(base + k.start).loadUnaligned(as: UInt64.self))
            return k.count >= 8 ? v : v & ~(UInt64.max >> UInt64(8 &* k.count))
        }
        var v: UInt64 = 0
        let n = min(k.count, 8)
        var i = 0
        while i < n {
            v |= UInt64(base[k.start &+ i]) << UInt64(56 &- 8 &* i)
            i &+= 1
        }
        return v
    }
}

@inline(__always)
func varintLength(_ v: Int) -> Int {
    var n = 1
    var u = UInt(bitPattern: v) >> 7
    while u != 0 { n &+= 1; u >>= 7 }
    return n
}

// MARK: - Builder

/// Builds a binary document from `JSONSink` events (or from a `Value`).
struct BinaryBuilder: JSONSink {
    struct SortItem {
        var prefix: UInt64
        var position: Int
    }

    struct Frame {
        var data: Int
        var entries: Int
        var isObject: Bool
    }

    var buffer: ByteBuffer
    /// Start positions of the elements / members of the open containers.
    var entries: [Int] = []
    var frames: [Frame] = []
    /// True when the innermost open container is an array (each value is an element).
    var inArray = false
    /// The keys of objects sorted lately and the order sorting gave them, when the builder
    /// encodes one document after another (`BinaryEncoder.Reusable`): a batch's documents
    /// mostly have the same keys in the same order, and their objects are not sorted again.
    var shapes: ObjectShapes?
    /// Where `smallMembersFirst` copies a root's data (allocated on first use, kept).
    var spare: UnsafeMutablePointer<UInt8>?
    var spareCapacity = 0

    init(capacity: Int) {
        buffer = ByteBuffer(capacity: capacity)
        entries.reserveCapacity(32)
        frames.reserveCapacity(8)
    }

    func deallocate() {
        buffer.deallocate()
        spare?.deallocate()
    }

    /// Empties the builder for the next document, keeping what it allocated.
    mutating func reset() {
        buffer.count = 0
        entries.removeAll(keepingCapacity: true)
        frames.removeAll(keepingCapacity: true)
        inArray = false
    }

    @inline(__always)
    mutating func element() {
        if inArray { entries.append(buffer.count) }
    }

    mutating func null() {
        element()
        buffer.append(BinaryFormat.null)
    }

    mutating func bool(_ b: Bool) {
        element()
        buffer.append(b ? BinaryFormat.trueTag : BinaryFormat.falseTag)
    }

    mutating func int(_ i: Int64) {
        element()
        if i >= 0 && i < 32 {
            buffer.append(BinaryFormat.smallInt | UInt8(i))
            return
        }
        let magnitude = i < 0 ? ~i : i
        let bits = 65 &- magnitude.leadingZeroBitCount // with the sign bit
        let n = (bits &+ 7) >> 3
        buffer.reserve(9)
        buffer.base[buffer.count] = BinaryFormat.int | UInt8(n &- 1)
        var u = UInt64(bitPattern: i)
        for k in 1...n {
            buffer.base[buffer.count &+ k] = UInt8(truncatingIfNeeded: u)
            u >>= 8
        }
        buffer.count &+= n &+ 1
    }

    mutating func double(_ d: Double, mantissa: Int64, exponent: Int) {
        element()
        var m = mantissa, e = exponent
        if e == Int.min {
            guard let f = BinaryEncoder.decimalForm(d) else { return writeRawDouble(d) }
            (m, e) = f
        }
        // Fewer digits, same value: (m/10) op 10^(e+1) is the same correctly rounded
        // quotient/product of the same exact rational.
        while m != 0 && m % 10 == 0 && e < 22 {
            m /= 10
            e &+= 1
        }
        let z = UInt64(bitPattern: (m << 1) ^ (m >> 63))
        let len = varintLength(Int(bitPattern: UInt(z)))
        if len &+ 2 >= 9 { return writeRawDouble(d) }
        buffer.append(BinaryFormat.decimal)
        buffer.appendVarint(Int(bitPattern: UInt(z)))
        buffer.append(UInt8(bitPattern: Int8(e)))
    }

    mutating func writeRawDouble(_ d: Double) {
        buffer.reserve(9)
        buffer.base[buffer.count] = BinaryFormat.double
        UnsafeMutableRawPointer(buffer.base + (buffer.count &+ 1)).storeBytes(of: d.bitPattern.littleEndian, as: UInt64.self)
        buffer.count &+= 9
    }

    mutating func string(_ utf8: UnsafeRawBufferPointer) {
        element()
        let n = utf8.count
        if n <= BinaryFormat.maxInlineStringLength {
            buffer.append(BinaryFormat.string | UInt8(n))
        } else {
            buffer.append(BinaryFormat.longString)
            buffer.appendVarint(n)
        }
        buffer.append(utf8)
    }

    mutating func key(_ utf8: UnsafeRawBufferPointer) {
        entries.append(buffer.count)
        buffer.appendVarint(utf8.count)
        buffer.append(utf8)
    }

    mutating func beginArray() {
        element()
        frames.append(Frame(data: buffer.count, entries: entries.count, isObject: false))
        inArray = true
    }

    mutating func beginObject() {
        element()
        frames.append(Frame(data: buffer.count, entries: entries.count, isObject: true))
        inArray = false
    }

    mutating func endArray() {
        let f = frames.removeLast()
        finish(f, count: entries.count &- f.entries)
        entries.removeLast(entries.count &- f.entries)
        inArray = frames.last.map { !$0.isObject } ?? false
    }

    mutating func endObject() {
        let f = frames.removeLast()
        let n = sortMembers(from: f.entries)
        if frames.isEmpty && n > 1 && buffer.count &- f.data > Self.smallFirstAbove { smallMembersFirst(f, count: n) }
        finish(f, count: n)
        entries.removeLast(entries.count &- f.entries)
        inArray = frames.last.map { !$0.isObject } ?? false
    }

    /// Sorts the member entries from `start` by key and drops all but the last of equal
    /// keys; returns the number of members left (they stay at `entries[start...]`).
    mutating func sortMembers(from start: Int) -> Int {
        let end = entries.count
        let n = end &- start
        if n < 2 { return n }
        let buf = buffer
        // Already strictly increasing (the common case for generated documents): done. Most
        // neighbours differ in their first eight bytes.
        var sorted = true
        var previous = buf.keyPrefix(at: entries[start])
        for i in (start &+ 1)..<end {
            let prefix = buf.keyPrefix(at: entries[i])
            if prefix < previous || (prefix == previous && buf.compareStoredKeys(entries[i &- 1], entries[i]) >= 0) {
                sorted = false
                break
            }
            previous = prefix
        }
        if sorted { return n }
        let remembers = shapes != nil && n <= ObjectShapes.largestObject
        if remembers, let slot = shapes!.slot(matching: entries, from: start, in: buf) {
            let order = shapes!.order(slot)
            withUnsafeTemporaryAllocation(of: Int.self, capacity: n) { inDocumentOrder in
                for i in 0..<n { inDocumentOrder.initializeElement(at: i, to: entries[start &+ i]) }
                for (k, i) in order.enumerated() { entries[start &+ k] = inDocumentOrder[Int(i)] }
            }
            entries.removeLast(n &- order.count)
            return order.count
        }
        let inDocumentOrder = remembers ? Array(entries[start...]) : []
        let kept = withUnsafeTemporaryAllocation(of: SortItem.self, capacity: n) { items in
            // Sort (first 8 key bytes as a big-endian integer, position) with a full key
            // comparison only when the prefixes are equal.
            for i in 0..<n {
                let p = entries[start &+ i]
                items.initializeElement(at: i, to: SortItem(prefix: buf.keyPrefix(at: p), position: p))
            }
            @inline(__always) func less(_ x: SortItem, _ y: SortItem) -> Bool {
                if x.prefix != y.prefix { return x.prefix < y.prefix }
                let r = buf.compareStoredKeys(x.position, y.position)
                return r < 0 || (r == 0 && x.position < y.position)
            }
            sortSmall(items, by: less)
            // Equal keys are adjacent, in document order: keep the last of each run.
            var w = 0
            var i = 0
            while i < n {
                var last = i
                while last &+ 1 < n && items[i].prefix == items[last &+ 1].prefix
                    && buf.keysEqual(items[i].position, items[last &+ 1].position) { last &+= 1 }
                entries[start &+ w] = items[last].position
                w &+= 1
                i = last &+ 1
            }
            entries.removeLast(n &- w)
            return w
        }
        if remembers { shapes!.remember(inDocumentOrder, sorted: entries[start..<(start &+ kept)], in: buf) }
        return kept
    }

    /// Root objects with more data than this have their members' data ordered by size.
    static let smallFirstAbove = 1_024

    /// Rewrites the data area of the root object `f` (its `n` members sorted by key in
    /// `entries`) with the members in order of their size, the smallest first (document
    /// order among equals); bytes of dropped duplicate keys are left out. The format allows
    /// any data order; this one puts a large document's scalars at its start, which is the
    /// part of a record stored in two pieces that a query reads without the rest
    /// (`RecordPieces.swift`).
    mutating func smallMembersFirst(_ f: Frame, count n: Int) {
        let e = f.entries
        let end = buffer.count
        let total = end &- f.data
        if spareCapacity < total {
            spare?.deallocate()
            spareCapacity = max(total, 4096)
            spare = .allocate(capacity: spareCapacity)
        }
        let copy = spare.unsafelyUnwrapped
        withUnsafeTemporaryAllocation(of: SizedMember.self, capacity: n) { members in
            for i in 0..<n { members.initializeElement(at: i, to: SizedMember(position: entries[e &+ i], size: 0, entry: e &+ i)) }
            // Each member runs to the next member's key in the data area.
            sortSmall(members) { $0.position < $1.position }
            for i in 0..<n { members[i].size = (i &+ 1 < n ? members[i &+ 1].position : end) &- members[i].position }
            sortSmall(members) { $0.size != $1.size ? $0.size < $1.size : $0.position < $1.position }
            var w = 0
            for i in 0..<n {
                let m = members[i]
                (copy + w).update(from: buffer.base + m.position, count: m.size)
                entries[m.entry] = f.data &+ w
                w &+= m.size
            }
            (buffer.base + f.data).update(from: copy, count: w)
            buffer.count = f.data &+ w
        }
    }

    /// A member of a root object being reordered: its data's position and size, and its entry.
    struct SizedMember {
        var position: Int
        var size: Int
        var entry: Int
    }

    /// Inserts the header and offset table of a finished container in front of its data.
    mutating func finish(_ f: Frame, count n: Int) {
        let dataSize = buffer.count &- f.data
        let e = f.entries
        var stride = 0
        if !f.isObject && n >= 2 {
            let s = entries[e &+ 1] &- entries[e]
            if s &* n == dataSize {
                stride = s
                for i in (e &+ 2)..<(e &+ n) where entries[i] &- entries[i &- 1] != s {
                    stride = 0
                    break
                }
            }
        }
        var width = 1
        if stride != 0 && varintLength(stride) <= n {
            width = 0
        } else {
            stride = 0
            var maxOffset = 0
            for i in e..<(e &+ n) { maxOffset = max(maxOffset, entries[i] &- f.data) }
            width = maxOffset < 0x100 ? 1 : (maxOffset < 0x1_0000 ? 2 : 4)
        }
        let countField = min(n, 7)
        let code = width == 0 ? 3 : (width == 1 ? 0 : (width == 2 ? 1 : 2))
        var headerSize = 1
        if n >= 7 { headerSize &+= varintLength(n) }
        headerSize &+= width == 0 ? varintLength(stride) : n &* width

        buffer.reserve(headerSize)
        let base = buffer.base
        (base + (f.data &+ headerSize)).update(from: base + f.data, count: dataSize) // overlapping move
        buffer.count &+= headerSize

        var p = f.data
        base[p] = (f.isObject ? BinaryFormat.object : BinaryFormat.array) | UInt8(countField << 2) | UInt8(code)
        p &+= 1
        if n >= 7 { p = buffer.putVarint(n, at: p) }
        if width == 0 {
            _ = buffer.putVarint(stride, at: p)
            return
        }
        let raw = UnsafeMutableRawPointer(base + p)
        for i in 0..<n {
            let rel = entries[e &+ i] &- f.data
            switch width {
            case 1: raw.storeBytes(of: UInt8(truncatingIfNeeded: rel), toByteOffset: i, as: UInt8.self)
            case 2: raw.storeBytes(of: UInt16(truncatingIfNeeded: rel).littleEndian, toByteOffset: 2 &* i, as: UInt16.self)
            default: raw.storeBytes(of: UInt32(truncatingIfNeeded: rel).littleEndian, toByteOffset: 4 &* i, as: UInt32.self)
            }
        }
    }

    // MARK: From a Value

    mutating func write(_ value: Value) {
        switch value {
        case .missing, .null: null()
        case .bool(let b): bool(b)
        case .int(let i): int(i)
        case .double(let d): double(d, mantissa: 0, exponent: Int.min)
        case .string(let s): withUTF8Bytes(of: s) { string($0) }
        case .array(let a):
            beginArray()
            for v in a { write(v) }
            endArray()
        case .object(let o):
            beginObject()
            for (k, v) in o {
                if case .missing = v { continue }
                withUTF8Bytes(of: k) { key($0) }
                write(v)
            }
            endObject()
        }
    }
}

/// The last few objects sorted (`BinaryBuilder.sortMembers`): each one's keys in document
/// order, as stored (varint length, bytes), and the order sorting gave its members
/// (positions in document order, duplicates dropped).
struct ObjectShapes {
    private struct Shape {
        var keys: [UInt8]
        var count: Int
        var order: [Int32]
    }

    /// At most this many shapes are kept (a document's kinds of objects).
    static let capacity = 4
    /// Objects with more members are sorted each time (documents that repeat their shape
    /// have few keys per object; remembering large ones would only cost).
    static let largestObject = 64
    private var shapes: [Shape] = []
    private var replaced = 0

    /// The shape whose keys are those at `entries[start...]`, in that order.
    func slot(matching entries: [Int], from start: Int, in buffer: ByteBuffer) -> Int? {
        let n = entries.count &- start
        for (slot, shape) in shapes.enumerated() where shape.count == n {
            let same = shape.keys.withUnsafeBufferPointer { stored -> Bool in
                var offset = 0
                for i in start..<entries.count {
                    let p = entries[i]
                    let k = buffer.key(at: p)
                    let length = k.start &+ k.count &- p
                    guard offset &+ length <= stored.count,
                          bytesEqual(buffer.base + p, stored.baseAddress! + offset, length) else { return false }
                    offset &+= length
                }
                return offset == stored.count
            }
            if same { return slot }
        }
        return nil
    }

    /// The sorted order of shape `slot`.
    func order(_ slot: Int) -> [Int32] { shapes[slot].order }

    /// Remembers the keys at `inDocumentOrder` (ascending positions) and the order `sorted`
    /// (the positions sorting kept) gives them, in place of the oldest shape when full.
    mutating func remember(_ inDocumentOrder: [Int], sorted: ArraySlice<Int>, in buffer: ByteBuffer) {
        var keys: [UInt8] = []
        for p in inDocumentOrder {
            let k = buffer.key(at: p)
            keys.append(contentsOf: UnsafeBufferPointer(start: buffer.base + p, count: k.start &+ k.count &- p))
        }
        let order = sorted.map { p in
            // Positions ascend in document order: a binary search finds each one's place.
            var lo = 0, hi = inDocumentOrder.count
            while lo < hi {
                let mid = (lo &+ hi) >> 1
                if inDocumentOrder[mid] < p { lo = mid &+ 1 } else { hi = mid }
            }
            return Int32(lo)
        }
        let shape = Shape(keys: keys, count: inDocumentOrder.count, order: order)
        if shapes.count < Self.capacity {
            shapes.append(shape)
        } else {
            shapes[replaced] = shape
            replaced = (replaced &+ 1) % Self.capacity
        }
    }
}

/// Sorts `items` by `less`: insertion sort for the few members of an object (no closure
/// context, no allocation), the standard sort for more.
@inline(__always)
func sortSmall<T>(_ items: UnsafeMutableBufferPointer<T>, by less: (T, T) -> Bool) {
    let n = items.count
    if n > 24 {
        var all = items
        all.sort(by: less)
        return
    }
    var i = 1
    while i < n {
        let x = items[i]
        var j = i
        while j > 0 && less(x, items[j &- 1]) {
            items[j] = items[j &- 1]
            j &-= 1
        }
        items[j] = x
        i &+= 1
    }
}
