/// The byte encoding of value-index keys: tuples of `Value`s whose `memcmp` order (LMDB's
/// default key order, a shorter prefix first) is the SPEC §5.4 total order.
///
/// An index entry's LMDB key is
///
/// ```
/// tuple ‖ docID ‖ docID length (UInt16, big-endian) ‖ flag (0x00, or 0x01 = truncated)
/// ```
///
/// where `tuple` is the encodings of the index expressions' values one after another.
/// The last three bytes (the *trailer*) let a scan recover the document ID and see whether the
/// tuple was cut short to fit LMDB's 511-byte key limit.
///
/// ## Value encoding
/// Every value starts with a type tag, and every encoding is self-delimiting, so a tuple
/// compares component by component:
///
/// | value | bytes |
/// | --- | --- |
/// | MISSING / NULL / FALSE / TRUE | `10` / `20` / `30` / `31` |
/// | NaN / −∞ / 0 / +∞ | `40` / `41` / `43` / `45` |
/// | finite x > 0 | `44`, e (2 bytes), f (8 bytes) with x = 2^(e − 1100) × (1 + f / 2^64) |
/// | finite x < 0 | `42`, then the 10 bytes of \|x\| with every bit inverted |
/// | string | `50`, UTF-8 with `00` written `00 FF`, then `00 00` |
/// | array | `60`, the elements, then `00` |
/// | object | `70`, key count (UInt32 BE), the sorted keys (escaped like strings), then the values in key order |
///
/// Numbers use one binary floating-point-like form for both `Int64` and `Double`: the exponent
/// of the leading one bit and up to 64 bits after it. Every `Int64` (at most 63 bits after the
/// leading one) and every finite `Double` (52) is exact, so `Int64.max` sorts below
/// `9.223372036854775807e18` (= 2^63) and 2^53 + 1 above `Double(2^53)`, while `1` and `1.0`
/// (and `0` and `-0.0`) encode to the same bytes. NaN sorts lowest among numbers, as in
/// `Value.compare`.
///
/// The byte `FF` never follows a complete value: tags are below `FF`, a string's next byte is
/// UTF-8 (never `FF`) or `00`, and a document ID is UTF-8 (a future binary doc key must not
/// start with `FF` either). So `B ‖ FF` is greater than every key that starts with the
/// complete encoding `B`, and no greater than any other key above `B`; the bound helpers rely
/// on it. Strings compare by code point (binary collation): only such comparisons can use an
/// index (SPEC §9.2).
///
/// ## Scans
/// A bound is a byte string; a ``KeyRange`` is `lower ≤ key < upper`. Build ranges from a leading
/// prefix of the index's components:
///
/// - point (`a = 1 AND b = 'x'` on index `(a, b, c)`): `KeyRange.point([1, "x"])`;
/// - IN-list: `KeyRange.points([[1], [2], [1.0]])` (sorted, duplicates removed);
/// - range on component k + 1 after equality on the first k:
///   `KeyRange.range(equal: [1], lower: 5, lowerInclusive: false, upper: 9, upperInclusive: true)`
///   (`a = 1 AND 5 < b <= 9`). A missing side stays inside the equality group: its bound is
///   `lowerBound(for: equal, inclusive: true)` / `upperBound(for: equal, inclusive: true)`;
/// - `LIKE 'abc%'` on component k + 1: `KeyRange.prefix(equal: [1], stringPrefix: "abc")`.
///
/// The helpers place bounds on the §5.4 total order only. SQL++ semantics are the planner's:
/// `b < 5` is NULL or MISSING (not TRUE) for b NULL/MISSING, so its lower bound is
/// `lowerBound(for: equal + [.null], inclusive: false)`, and `b > 5` is TRUE for strings,
/// arrays and objects (SPEC §5.3), so it needs no upper bound beyond the equality group.
///
/// ## Truncated keys
/// A key longer than `maxKeySize` keeps only the first `maxKeySize − 3 − docID bytes` bytes of
/// its tuple and sets the flag byte. Because the document ID is limited to ``maxDocIDBytes``,
/// at least ``minimumRetainedTupleBytes(maxKeySize:)`` (258 for 511) tuple bytes always remain.
/// A truncated key compares with any byte string of at most that many bytes exactly as its
/// full tuple would (they share those bytes), so it sits among the keys that share its prefix,
/// and a range whose bounds are short enough finds it. The rules for a scan:
///
/// 1. Iterate `range.clipped(maxKeySize:)`: it is the range itself when both bounds fit in
///    the retained length, otherwise a wider range (bounds cut to that length) that contains
///    every key whose full tuple lies in `range`.
/// 2. Classify each key with the **unclipped** range's ``KeyRange/match(key:)``: `.outside` →
///    skip; `.inside` → the entry's value lies in the range; `.ambiguous` (only truncated keys
///    meeting a long bound) → include it and re-check the predicate on the document.
/// 3. A truncated key never yields its values (``values(fromKey:)`` returns nil): covering
///    scans and residual predicates on index components must read the document for it.
enum IndexKey {
    // MARK: - Constants

    /// LMDB's default maximum key size (`mdb_env_get_maxkeysize`), in bytes.
    static let defaultMaxKeySize = 511
    /// Bytes after the document ID: its length (UInt16 big-endian) and the truncation flag.
    static let trailerSize = 3
    /// The longest document ID (UTF-8 bytes) an index key can hold; the database must reject
    /// longer IDs. It guarantees every truncated key keeps ``minimumRetainedTupleBytes(maxKeySize:)``.
    static let maxDocIDBytes = 250

    /// The fewest tuple bytes a truncated key keeps: `maxKeySize − trailerSize − maxDocIDBytes`.
    ///
    /// Range bounds no longer than this are exact for every key; longer ones are clipped by
    /// ``KeyRange/clipped(maxKeySize:)``.
    static func minimumRetainedTupleBytes(maxKeySize: Int = defaultMaxKeySize) -> Int {
        maxKeySize - trailerSize - maxDocIDBytes
    }

    // MARK: - Tags

    static let tagEnd: UInt8 = 0x00
    static let tagMissing: UInt8 = 0x10
    static let tagNull: UInt8 = 0x20
    static let tagFalse: UInt8 = 0x30
    static let tagTrue: UInt8 = 0x31
    static let tagNaN: UInt8 = 0x40
    static let tagNegInfinity: UInt8 = 0x41
    static let tagNegative: UInt8 = 0x42
    static let tagZero: UInt8 = 0x43
    static let tagPositive: UInt8 = 0x44
    static let tagPosInfinity: UInt8 = 0x45
    static let tagString: UInt8 = 0x50
    static let tagArray: UInt8 = 0x60
    static let tagObject: UInt8 = 0x70
    /// Greater than any byte that can follow a complete encoding.
    static let highByte: UInt8 = 0xFF
    /// Added to the binary exponent (−1074 … 1023) so it is stored as a positive UInt16.
    static let exponentBias = 1100

    // MARK: - Encoding

    /// The tuple encoding of `values`: each value's encoding, one after another.
    ///
    /// `memcmp` of two tuple encodings orders them lexicographically by `Value.compare` of the
    /// components; equal tuples (`[1]` and `[1.0]`) have equal encodings.
    /// - Complexity: O(total size of the values); object keys are sorted.
    static func encode(_ values: [Value]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(16 * values.count)
        for v in values { encode(v, into: &out) }
        return out
    }

    /// Appends the self-delimiting encoding of one value to `out`.
    static func encode(_ value: Value, into out: inout [UInt8]) {
        switch value {
        case .missing: out.append(tagMissing)
        case .null: out.append(tagNull)
        case .bool(let b): out.append(b ? tagTrue : tagFalse)
        case .int(let i): encodeInt(i, into: &out)
        case .double(let d): encodeDouble(d, into: &out)
        case .string(let s):
            out.append(tagString)
            appendEscaped(s, into: &out)
        case .array(let a):
            out.append(tagArray)
            for e in a { encode(e, into: &out) }
            out.append(tagEnd)
        case .object(let o):
            out.append(tagObject)
            let n = UInt32(truncatingIfNeeded: o.count)
            out.append(UInt8(truncatingIfNeeded: n >> 24))
            out.append(UInt8(truncatingIfNeeded: n >> 16))
            out.append(UInt8(truncatingIfNeeded: n >> 8))
            out.append(UInt8(truncatingIfNeeded: n))
            let keys = o.keys.sorted(by: { compareBinary($0, $1) < 0 })
            for k in keys { appendEscaped(k, into: &out) }
            for k in keys { encode(o[k]!, into: &out) }
        }
    }

    static func encodeInt(_ i: Int64, into out: inout [UInt8]) {
        if i == 0 { out.append(tagZero); return }
        appendFinite(magnitude: i.magnitude, exponent: 0, negative: i < 0, into: &out)
    }

    static func encodeDouble(_ d: Double, into out: inout [UInt8]) {
        if d.isNaN { out.append(tagNaN); return }
        if d.isInfinite { out.append(d < 0 ? tagNegInfinity : tagPosInfinity); return }
        if d == 0 { out.append(tagZero); return }
        let significand = d.significandBitPattern
        if d.exponentBitPattern == 0 {
            // Subnormal: significand × 2^-1074.
            appendFinite(magnitude: significand, exponent: -1074, negative: d < 0, into: &out)
        } else {
            appendFinite(magnitude: (1 << 52) | significand, exponent: Int(d.exponent) - 52,
                         negative: d < 0, into: &out)
        }
    }

    /// Appends ±m × 2^e (m ≠ 0) as tag, exponent of the leading one bit, and the bits after it.
    private static func appendFinite(magnitude m: UInt64, exponent e: Int, negative: Bool, into out: inout [UInt8]) {
        let lz = m.leadingZeroBitCount
        let k = e + (63 - lz)
        // Drop the leading one; the remaining bits become the left-aligned fraction.
        let fraction = lz >= 63 ? 0 : m << UInt64(lz + 1)
        var biased = UInt16(k + exponentBias)
        var f = fraction
        if negative {
            biased = ~biased
            f = ~f
            out.append(tagNegative)
        } else {
            out.append(tagPositive)
        }
        out.append(UInt8(truncatingIfNeeded: biased >> 8))
        out.append(UInt8(truncatingIfNeeded: biased))
        var shift: UInt64 = 56
        while true {
            out.append(UInt8(truncatingIfNeeded: f >> shift))
            if shift == 0 { break }
            shift &-= 8
        }
    }

    /// Appends the UTF-8 bytes of `s` with `00` escaped as `00 FF`, then the terminator `00 00`.
    private static func appendEscaped(_ s: String, into out: inout [UInt8]) {
        var s = s
        s.withUTF8 { appendEscaped(utf8: UnsafeRawBufferPointer($0), into: &out) }
    }

    // MARK: - Keys

    /// Builds the LMDB key of an index entry: `tuple ‖ docID ‖ length ‖ flag`.
    ///
    /// If the key would be longer than `maxKeySize`, the tuple is cut to the bytes that fit and
    /// the flag byte is set (see the type's discussion for how scans treat such keys).
    ///
    /// ```swift
    /// let (key, truncated) = IndexKey.make(values: ["Paris", 4.5], docID: "hotel_12")
    /// ```
    /// - Parameters:
    ///   - values: the values of the index expressions for the document.
    ///   - docID: the document ID; at most ``maxDocIDBytes`` UTF-8 bytes (precondition).
    ///   - maxKeySize: LMDB's key size limit (at least `trailerSize + maxDocIDBytes + 1`).
    /// - Returns: the key and whether its tuple was truncated.
    static func make(values: [Value], docID: String, maxKeySize: Int = defaultMaxKeySize)
        -> (key: [UInt8], truncated: Bool)
    {
        precondition(minimumRetainedTupleBytes(maxKeySize: maxKeySize) >= 1,
                     "IndexKey.make: maxKeySize \(maxKeySize) leaves no room for the tuple")
        var doc = docID
        let docCount = doc.utf8.count
        precondition(docCount <= maxDocIDBytes,
                     "IndexKey.make: document ID of \(docCount) bytes exceeds IndexKey.maxDocIDBytes (\(maxDocIDBytes))")
        var key = encode(values)
        var truncated = false
        let room = maxKeySize - trailerSize - docCount
        if key.count > room {
            key.removeSubrange(room...)
            truncated = true
        }
        key.reserveCapacity(key.count + docCount + trailerSize)
        doc.withUTF8 { key.append(contentsOf: $0) }
        key.append(UInt8(truncatingIfNeeded: docCount >> 8))
        key.append(UInt8(truncatingIfNeeded: docCount))
        key.append(truncated ? 1 : 0)
        return (key, truncated)
    }

    /// An entry's stored value: empty for one occurrence whose values the key gives back
    /// exactly (most entries); otherwise an unsigned LEB128 varint of `occurrences << 1`,
    /// plus 1 when the key does not give the values back exactly (see `decodesExactly`).
    /// A value index has one occurrence per entry; an array index counts the elements of the
    /// document with that key.
    static func entryValue(occurrences: Int, exact: Bool) -> [UInt8] {
        if occurrences <= 1 && exact { return [] }
        var out: [UInt8] = []
        var n = UInt64(max(occurrences, 1)) << 1 | (exact ? 0 : 1)
        while n >= 0x80 {
            out.append(UInt8(n & 0x7F) | 0x80)
            n >>= 7
        }
        out.append(UInt8(n))
        return out
    }

    /// What an entry's stored value says (see `entryValue`): how many occurrences it stands
    /// for, and whether the key's values are exact. A malformed value reads as one inexact
    /// occurrence (the document is then read).
    @inline(__always)
    static func entryInfo(_ value: UnsafeRawBufferPointer) -> (occurrences: Int, exact: Bool) {
        if value.isEmpty { return (1, true) }
        var n: UInt64 = 0
        var shift: UInt64 = 0
        for b in value {
            guard shift < 63 else { return (1, false) }
            n |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return (max(Int(truncatingIfNeeded: n >> 1), 1), n & 1 == 0) }
            shift += 7
        }
        return (1, false)
    }

    /// False if decoding the encoding of `values` could give back another value: a number
    /// keeps its value but not its type (an integral Double decodes as an Int, `-0.0` as `0`).
    static func decodesExactly(_ values: [Value]) -> Bool {
        values.allSatisfy { decodesExactly($0) }
    }

    /// `decodesExactly` of one value.
    static func decodesExactly(_ v: Value) -> Bool {
        switch v {
        case .double(let d): return decodesExactly(d)
        case .array(let a): return a.allSatisfy { decodesExactly($0) }
        case .object(let o): return o.values.allSatisfy { decodesExactly($0) }
        default: return true
        }
    }

    /// False for a Double the key encoding gives back as an Int (integral, `-0.0`).
    @inline(__always)
    static func decodesExactly(_ d: Double) -> Bool {
        !(d.isFinite && d == d.rounded(.towardZero) && abs(d) <= 0x1p63)
    }

    /// `decodesExactly` of a value read in place, as its decoding (`encode(binary:into:)`)
    /// would be: scalars are checked without decoding.
    @inline(__always)
    static func decodesExactly(binary v: BinaryValue) -> Bool {
        guard let tag = v.tag else { return true }
        switch tag {
        case 0x00...0x02, 0x08...0x0F, 0x20...0x5F: return true
        case 0x03, 0x04: return v.double.map { decodesExactly($0) } ?? true
        default: return decodesExactly(v.toValue())
        }
    }

    /// The document ID stored in an index key, or nil if the trailer is malformed.
    static func docID(fromKey key: [UInt8]) -> String? {
        key.withUnsafeBytes { docID(fromKey: $0) }
    }

    /// The document ID stored in an index key (bytes borrowed from LMDB), or nil if malformed.
    static func docID(fromKey key: UnsafeRawBufferPointer) -> String? {
        guard let (tupleCount, docCount) = layout(key) else { return nil }
        return String(decoding: UnsafeRawBufferPointer(rebasing: key[tupleCount..<(tupleCount + docCount)]),
                      as: UTF8.self)
    }

    /// True if the key's tuple was truncated to fit `maxKeySize`.
    static func isTruncated(key: [UInt8]) -> Bool {
        key.last == 1
    }

    /// True if the key (bytes borrowed from LMDB) has a truncated tuple.
    static func isTruncated(key: UnsafeRawBufferPointer) -> Bool {
        key.last == 1
    }

    /// The tuple part of a key (possibly truncated), or nil if the trailer is malformed.
    static func tupleBytes(fromKey key: [UInt8]) -> ArraySlice<UInt8>? {
        guard let (tupleCount, _) = key.withUnsafeBytes({ layout($0) }) else { return nil }
        return key[0..<tupleCount]
    }

    /// The index values stored in a key (for covering scans), or nil if the key is truncated.
    /// - Throws: ``DecodingError`` if the key is malformed.
    static func values(fromKey key: [UInt8]) throws(DecodingError) -> [Value]? {
        // withUnsafeBytes rethrows untyped errors: carry the typed one out in a Result.
        try key.withUnsafeBytes { p in Swift.Result { () throws(DecodingError) in try values(fromKey: p) } }.get()
    }

    /// The index values stored in a key borrowed from LMDB, or nil if the key is truncated.
    /// - Throws: ``DecodingError`` if the key is malformed.
    static func values(fromKey key: UnsafeRawBufferPointer) throws(DecodingError) -> [Value]? {
        guard let (tupleCount, _) = layout(key) else {
            throw DecodingError(message: "index key trailer is malformed", offset: key.count)
        }
        if isTruncated(key: key) { return nil }
        return try decode(UnsafeRawBufferPointer(rebasing: key[0..<tupleCount]))
    }

    /// (tuple length, docID length) of a full key, or nil if the trailer does not fit.
    /// The document ID an entry's key ends with (before its trailer), nil if the trailer does
    /// not fit the key.
    @inline(__always)
    static func documentID(in key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        let n = key.count
        guard n >= trailerSize else { return nil }
        let idLength = Int(key[n - 3]) << 8 | Int(key[n - 2])
        guard idLength + trailerSize <= n else { return nil }
        return UnsafeRawBufferPointer(rebasing: key[(n - 3 - idLength)..<(n - 3)])
    }

    static func layout(_ key: UnsafeRawBufferPointer) -> (Int, Int)? {
        let n = key.count
        guard n >= trailerSize, key[n - 1] <= 1 else { return nil }
        let docCount = Int(key[n - 3]) << 8 | Int(key[n - 2])
        let tupleCount = n - trailerSize - docCount
        guard tupleCount >= 0 else { return nil }
        return (tupleCount, docCount)
    }

    /// The offset just past the value encoding that starts at `start` in `bytes`, or nil when
    /// the bytes end inside it (a truncated tuple) or do not follow the encoding. It reads
    /// nothing but tags, lengths and string terminators, so equal values (which encode to equal
    /// bytes) can be compared component by component without decoding them.
    static func componentEnd(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var p = start
        let n = bytes.count
        // Open arrays and objects: an array ends at its `00`; an object's remaining value
        // count is kept as a negative number below the array marker.
        var open: [Int] = []
        while true {
            guard p < n else { return nil }
            let tag = bytes[p]
            p &+= 1
            switch tag {
            case tagMissing, tagNull, tagFalse, tagTrue, tagNaN, tagNegInfinity, tagZero, tagPosInfinity:
                break
            case tagPositive, tagNegative:
                p &+= 10
                guard p <= n else { return nil }
            case tagString:
                guard let end = stringEnd(bytes, from: p) else { return nil }
                p = end
            case tagArray:
                open.append(0)
                continue
            case tagObject:
                guard p + 4 <= n else { return nil }
                var count = 0
                for i in 0..<4 { count = count << 8 | Int(bytes[p + i]) }
                p &+= 4
                for _ in 0..<count {
                    guard let end = stringEnd(bytes, from: p) else { return nil }
                    p = end
                }
                if count > 0 { open.append(-count); continue }
            case tagEnd:
                // Only an open array may end here (an empty one, or after its last element).
                guard let last = open.last, last == 0 else { return nil }
                open.removeLast()
            default:
                return nil
            }
            // One value is complete: close what it completes.
            while let last = open.last {
                if last == 0 {
                    // Inside an array: its end marker, if next, closes it.
                    guard p < n else { return nil }
                    if bytes[p] != tagEnd { break }
                    p &+= 1
                    open.removeLast()
                } else if last == -1 {
                    open.removeLast()
                } else {
                    open[open.count - 1] = last + 1
                    break
                }
            }
            if open.isEmpty { return p }
        }
    }

    /// The offset past the `00 00` that ends the escaped string starting at `start`.
    private static func stringEnd(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var p = start
        while p + 1 < bytes.count {
            if bytes[p] == 0 {
                let next = bytes[p + 1]
                if next == 0 { return p + 2 }
                guard next == highByte else { return nil }
            }
            p &+= bytes[p] == 0 ? 2 : 1
        }
        return nil
    }

    // MARK: - Decoding

    /// An index key that does not follow the encoding (a corrupt or foreign key).
    struct DecodingError: Error, Sendable, CustomStringConvertible {
        /// What is wrong.
        var message: String
        /// The byte offset where decoding failed.
        var offset: Int
        /// `message at byte offset`.
        var description: String { "\(message) at byte \(offset)" }
    }

    /// Decodes a complete tuple encoding back into its values.
    ///
    /// Numbers come back as `.int` when integral and within `Int64`, else `.double`; they are
    /// numerically equal to the encoded ones (`1.0` decodes as `1`, `-0.0` as `0`).
    /// - Throws: ``DecodingError`` for bytes that are not a complete tuple encoding (a
    ///   truncated tuple among them).
    static func decode(_ bytes: [UInt8]) throws(DecodingError) -> [Value] {
        try bytes.withUnsafeBytes { p in Swift.Result { () throws(DecodingError) in try decode(p) } }.get()
    }

    /// Decodes a complete tuple encoding held in borrowed memory.
    /// - Throws: ``DecodingError`` for bytes that are not a complete tuple encoding.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(DecodingError) -> [Value] {
        var r = Reader(bytes: bytes)
        guard !bytes.isEmpty else { return [] }
        // The first value as an array literal (allocated at its size: most keys have one
        // column); appending to an empty array would go through the growth path.
        var out = [try r.value()]
        while r.position < bytes.count { out.append(try r.value()) }
        return out
    }

    /// Decodes a complete tuple encoding held in borrowed memory, appending its values to
    /// `out`; returns how many it appended (on a throw, `out` may hold some of them).
    /// - Throws: ``DecodingError`` for bytes that are not a complete tuple encoding.
    static func decode(_ bytes: UnsafeRawBufferPointer, appendingTo out: inout [Value]) throws(DecodingError) -> Int {
        var r = Reader(bytes: bytes)
        var n = 0
        while r.position < bytes.count {
            out.append(try r.value())
            n += 1
        }
        return n
    }

    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var position = 0

        @inline(never)
        func fail(_ message: String) -> DecodingError {
            DecodingError(message: message, offset: position)
        }

        mutating func byte() throws(DecodingError) -> UInt8 {
            guard position < bytes.count else { throw fail("index key ends inside a value") }
            defer { position &+= 1 }
            return bytes[position]
        }

        mutating func value() throws(DecodingError) -> Value {
            let tag = try byte()
            switch tag {
            case IndexKey.tagMissing: return .missing
            case IndexKey.tagNull: return .null
            case IndexKey.tagFalse: return .bool(false)
            case IndexKey.tagTrue: return .bool(true)
            case IndexKey.tagNaN: return .double(.nan)
            case IndexKey.tagNegInfinity: return .double(-.infinity)
            case IndexKey.tagZero: return .int(0)
            case IndexKey.tagPosInfinity: return .double(.infinity)
            case IndexKey.tagPositive: return try finite(negative: false)
            case IndexKey.tagNegative: return try finite(negative: true)
            case IndexKey.tagString: return .string(try string())
            case IndexKey.tagArray:
                var a: [Value] = []
                while true {
                    guard position < bytes.count else { throw fail("index key ends inside an array") }
                    if bytes[position] == IndexKey.tagEnd { position &+= 1; break }
                    a.append(try value())
                }
                return .array(a)
            case IndexKey.tagObject:
                var n = 0
                for _ in 0..<4 { n = n << 8 | Int(try byte()) }
                guard n <= (bytes.count - position) / 3 else { throw fail("object key count too large in index key") }
                var keys: [String] = []
                keys.reserveCapacity(n)
                for _ in 0..<n { keys.append(try string()) }
                var o: [String: Value] = [:]
                o.reserveCapacity(n)
                for k in keys { o[k] = try value() }
                guard o.count == n else { throw fail("index key holds an object with duplicate keys") }
                return .object(o)
            default:
                position &-= 1
                throw fail("unknown index key tag \(tag)")
            }
        }

        mutating func string() throws(DecodingError) -> String {
            let start = position
            var plain = true
            while true {
                guard position + 1 < bytes.count else { throw fail("index key ends inside a string") }
                if bytes[position] == 0 {
                    let next = bytes[position + 1]
                    if next == 0 { break }
                    guard next == IndexKey.highByte else { throw fail("bad string escape in index key") }
                    plain = false
                    position &+= 2
                } else {
                    position &+= 1
                }
            }
            let raw = UnsafeRawBufferPointer(rebasing: bytes[start..<position])
            position &+= 2
            if plain { return String(decoding: raw, as: UTF8.self) }
            var unescaped: [UInt8] = []
            unescaped.reserveCapacity(raw.count)
            var i = 0
            while i < raw.count {
                unescaped.append(raw[i])
                i &+= raw[i] == 0 ? 2 : 1
            }
            return String(decoding: unescaped, as: UTF8.self)
        }

        mutating func finite(negative: Bool) throws(DecodingError) -> Value {
            guard position + 10 <= bytes.count else { throw fail("index key ends inside a number") }
            var biased = UInt16(bytes[position]) << 8 | UInt16(bytes[position + 1])
            var f: UInt64 = 0
            for i in 2..<10 { f = f << 8 | UInt64(bytes[position + i]) }
            position &+= 10
            if negative { biased = ~biased; f = ~f }
            let k = Int(biased) - IndexKey.exponentBias
            guard k >= -1074, k <= 1023 else { throw fail("number exponent out of range in index key") }
            // Integral when no fraction bit lies right of the binary point.
            if k >= 0 && k <= 63 && f << UInt64(k) == 0 {
                if k <= 62 {
                    let m = Int64(1) << Int64(k) | Int64(f >> UInt64(64 - k))
                    return .int(negative ? -m : m)
                }
                if negative && f == 0 { return .int(.min) }
            }
            // Otherwise the value came from a Double: 52 bits after the leading one at most.
            let significand = 1 + Double(f >> 12) * 0x1p-52
            return .double(Double(sign: negative ? .minus : .plus, exponent: k, significand: significand))
        }
    }

    // MARK: - Bounds

    /// The smallest key of a scan that starts at the tuple prefix `prefixValues`.
    ///
    /// Inclusive: every key whose first components equal `prefixValues` or compare greater
    /// (the encoding itself). Exclusive: only keys whose first components compare greater
    /// (the encoding followed by `FF`).
    static func lowerBound(for prefixValues: [Value], inclusive: Bool) -> [UInt8] {
        var b = encode(prefixValues)
        if !inclusive { b.append(highByte) }
        return b
    }

    /// The exclusive end of a scan that stops at the tuple prefix `prefixValues`.
    ///
    /// Inclusive: keys whose first components equal `prefixValues` are inside (the bound is the
    /// encoding followed by `FF`). Exclusive: they are outside (the bound is the encoding).
    static func upperBound(for prefixValues: [Value], inclusive: Bool) -> [UInt8] {
        var b = encode(prefixValues)
        if inclusive { b.append(highByte) }
        return b
    }

    /// The range of keys whose component after `equalityPrefix` is a string starting with
    /// `stringPrefix` (`LIKE 'abc%'`, binary collation), `stringPrefix` itself included.
    static func prefixBound(stringPrefix: String, after equalityPrefix: [Value] = []) -> KeyRange {
        var lower = encode(equalityPrefix)
        lower.append(tagString)
        var s = stringPrefix
        s.withUTF8 { p in
            for b in p {
                lower.append(b)
                if b == 0 { lower.append(highByte) }
            }
        }
        var upper = lower
        // The byte after an escaped prefix inside a longer string is UTF-8 or 00, never FF.
        upper.append(highByte)
        return KeyRange(lower: lower, upper: upper)
    }

    /// The shortest byte string greater than every string that starts with `bytes`, or nil
    /// when there is none (all `FF`).
    static func prefixSuccessor(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        var b = Array(bytes)
        while let last = b.last {
            if last == highByte { b.removeLast(); continue }
            b[b.count - 1] = last &+ 1
            return b
        }
        return nil
    }
}

// MARK: - Ranges

extension IndexKey {
    /// A half-open range of index keys, `lower ≤ key < upper`, compared with `memcmp`.
    ///
    /// Build it with ``point(_:)``, ``points(_:)``, ``range(equal:lower:lowerInclusive:upper:upperInclusive:)``
    /// or ``prefix(equal:stringPrefix:)``; scan ``clipped(maxKeySize:)`` and classify each key
    /// with ``match(key:)`` of the unclipped range.
    struct KeyRange: Sendable, Hashable, CustomStringConvertible {
        /// Inclusive start; empty means the first key.
        var lower: [UInt8]
        /// Exclusive end; nil means past the last key.
        var upper: [UInt8]?
        /// False when ``clipped(maxKeySize:)`` widened the range: keys inside it may lie
        /// outside the original range and must be classified with the original.
        var isExact: Bool

        /// A range from raw bounds.
        init(lower: [UInt8] = [], upper: [UInt8]? = nil, isExact: Bool = true) {
            self.lower = lower
            self.upper = upper
            self.isExact = isExact
        }

        /// Every key.
        static let all = KeyRange()

        /// Keys whose first components equal `values` (all components for a full point lookup).
        static func point(_ values: [Value]) -> KeyRange {
            point(encoded: IndexKey.encode(values))
        }

        /// Keys whose first components are the tuple encoded as `lower`.
        static func point(encoded lower: [UInt8]) -> KeyRange {
            var upper = lower
            upper.append(IndexKey.highByte)
            return KeyRange(lower: lower, upper: upper)
        }

        /// One point range per tuple of an IN-list, in key order, equal tuples (`1`, `1.0`) once.
        static func points(_ tuples: [[Value]]) -> [KeyRange] {
            points(encoded: tuples.map { IndexKey.encode($0) })
        }

        /// One point range per encoded tuple, in key order, each once (equal values encode
        /// equally).
        static func points(encoded: consuming [[UInt8]]) -> [KeyRange] {
            var sorted = encoded
            if sorted.count > 1 {
                sorted.sort { IndexKey.compareStoredKeys($0, $1) < 0 }
            }
            var out: [KeyRange] = []
            out.reserveCapacity(sorted.count)
            for (i, b) in sorted.enumerated() where i == 0 || b != sorted[i - 1] { out.append(point(encoded: b)) }
            return out
        }

        /// Equality on the first components (`equal`), then a range on the next one.
        ///
        /// A nil side is unbounded inside the equality group (or the whole index when `equal`
        /// is empty). Example, `a = 'x' AND b >= 2 AND b < 7` on index `(a, b)`:
        /// `range(equal: ["x"], lower: 2, lowerInclusive: true, upper: 7, upperInclusive: false)`.
        static func range(equal: [Value] = [], lower: Value?, lowerInclusive: Bool = true,
                                 upper: Value?, upperInclusive: Bool = true) -> KeyRange
        {
            let lo: [UInt8] = lower.map { IndexKey.lowerBound(for: equal + [$0], inclusive: lowerInclusive) }
                ?? IndexKey.lowerBound(for: equal, inclusive: true)
            let hi: [UInt8]? = upper.map { IndexKey.upperBound(for: equal + [$0], inclusive: upperInclusive) }
                ?? (equal.isEmpty ? nil : IndexKey.upperBound(for: equal, inclusive: true))
            return KeyRange(lower: lo, upper: hi)
        }

        /// Equality on the first components, then `LIKE 'stringPrefix%'` on the next one.
        static func prefix(equal: [Value] = [], stringPrefix: String) -> KeyRange {
            IndexKey.prefixBound(stringPrefix: stringPrefix, after: equal)
        }

        /// True when no key can lie in the range.
        var isEmpty: Bool {
            guard let upper else { return false }
            return !lower.lexicographicallyPrecedes(upper)
        }

        /// True if `lower ≤ key < upper` bytewise (the position of the key, whatever its flag).
        func contains(key: [UInt8]) -> Bool {
            key.withUnsafeBytes { contains(key: $0) }
        }

        /// True if `lower ≤ key < upper` bytewise, for a key borrowed from LMDB.
        func contains(key: UnsafeRawBufferPointer) -> Bool {
            if IndexKey.compareBytes(key, lower) < 0 { return false }
            if let upper, IndexKey.compareBytes(key, upper) >= 0 { return false }
            return true
        }

        /// Whether an entry's value lies in this range.
        enum Match: Sendable, Hashable {
            /// The entry's full tuple is outside the range.
            case outside
            /// The entry's full tuple is inside the range (a truncated entry still needs its
            /// document for values or other predicates).
            case inside
            /// A truncated entry whose kept prefix cannot tell: re-check against the document.
            case ambiguous
        }

        /// Classifies an index key against this (unclipped) range.
        ///
        /// Untruncated keys are decided by their bytes. A truncated key keeping L tuple bytes is
        /// decided the same way when both bounds have at most L bytes (it agrees with its full
        /// tuple on them); otherwise it is `.outside` when its kept prefix already lies outside,
        /// else `.ambiguous`.
        func match(key: [UInt8]) -> Match {
            key.withUnsafeBytes { match(key: $0) }
        }

        /// Classifies an index key borrowed from LMDB; like the array overload.
        func match(key: UnsafeRawBufferPointer) -> Match {
            guard IndexKey.isTruncated(key: key), let (kept, _) = IndexKey.layout(key) else {
                return contains(key: key) ? .inside : .outside
            }
            if lower.count <= kept && (upper?.count ?? 0) <= kept {
                return contains(key: key) ? .inside : .outside
            }
            // Every full tuple extending the kept prefix P lies in [P, successor(P)).
            let prefix = UnsafeRawBufferPointer(rebasing: key[0..<kept])
            if let upper, IndexKey.compareBytes(prefix, upper) >= 0 { return .outside }
            // Here `lower` is longer than P or short enough to compare whole: P below its first
            // `kept` bytes means every extension of P is below `lower`.
            if IndexKey.compareBytes(prefix, Array(lower.prefix(kept))) < 0 { return .outside }
            return .ambiguous
        }

        /// The range to iterate so that truncated keys are not missed.
        ///
        /// Bounds longer than ``IndexKey/minimumRetainedTupleBytes(maxKeySize:)`` are cut to that
        /// length (the upper one rounded up to the next prefix), and `isExact` becomes false.
        /// Shorter bounds are returned unchanged.
        func clipped(maxKeySize: Int = IndexKey.defaultMaxKeySize) -> KeyRange {
            let n = IndexKey.minimumRetainedTupleBytes(maxKeySize: maxKeySize)
            var r = self
            if lower.count > n {
                r.lower = Array(lower.prefix(n))
                r.isExact = false
            }
            if let upper, upper.count > n {
                r.upper = IndexKey.prefixSuccessor(upper.prefix(n))
                r.isExact = false
            }
            return r
        }

        /// The bounds in hex, for EXPLAIN and test failures.
        var description: String {
            func hex(_ b: [UInt8]) -> String {
                let digits = Array("0123456789abcdef")
                return String(b.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
            }
            return "[\(hex(lower)), \(upper.map(hex) ?? "∞"))\(isExact ? "" : " clipped")"
        }
    }

    /// `memcmp` order of a key and a bound, the shorter prefix first (<0, 0, >0).
    @inline(__always)
    static func compareBytes(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Int {
        b.withUnsafeBytes { Tessera.compareBytes(a, $0) }
    }

    /// `memcmp` order of two byte strings, the shorter prefix first (<0, 0, >0).
    static func compareStoredKeys(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBytes { compareBytes($0, b) }
    }
}
