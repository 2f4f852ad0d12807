// Index keys built without a `Value` or an array per entry: the keys of one document (an
// update) or of a whole collection (a back-fill) go one after another into one byte buffer,
// and the index expressions that are plain property paths are encoded straight from the
// binary document read in place.

/// Index keys stored back to back in one buffer (`IndexKey` layout: tuple ‖ docID ‖ trailer).
struct KeyArena {
    /// Every key's bytes, one after another.
    private(set) var bytes: [UInt8] = []
    /// Where each key starts in `bytes`, and where the next one would.
    private(set) var starts: [Int] = [0]

    /// The number of keys.
    var count: Int { starts.count - 1 }

    init(reservingBytes: Int = 0) {
        bytes.reserveCapacity(reservingBytes)
    }

    /// Calls `body` with the bytes of key `i` (valid only during the call).
    @inline(__always)
    func withKey<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes { all in try body(UnsafeRawBufferPointer(rebasing: all[starts[i]..<starts[i + 1]])) }
    }

    /// Key `i` as an array (for callers that keep keys).
    func key(_ i: Int) -> [UInt8] { Array(bytes[starts[i]..<starts[i + 1]]) }

    /// Forgets every key, keeping the capacity.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        starts.removeAll(keepingCapacity: true)
        starts.append(0)
    }

    /// Forgets the keys from `index` on.
    mutating func removeKeys(from index: Int) {
        bytes.removeSubrange(starts[index]...)
        starts.removeSubrange((index + 1)...)
    }

    // MARK: - Building a key

    /// Appends one tuple component to the key being built (between keys: starts one).
    @inline(__always)
    mutating func appendComponent(binary v: BinaryValue) {
        IndexKey.encode(binary: v, into: &bytes)
    }

    /// Appends one tuple component given as a value.
    @inline(__always)
    mutating func appendComponent(_ v: Value) {
        IndexKey.encode(v, into: &bytes)
    }

    /// Drops the components appended since the last finished key.
    mutating func discardUnfinished() {
        bytes.removeSubrange(starts[starts.count - 1]...)
    }

    /// Ends the key being built with the document ID and the trailer, truncating its tuple
    /// the way `IndexKey.make` does when the key would exceed `maxKeySize`.
    mutating func finishKey(docID: UnsafeRawBufferPointer, maxKeySize: Int = IndexKey.defaultMaxKeySize) {
        let start = starts[starts.count - 1]
        let docCount = docID.count
        precondition(docCount <= IndexKey.maxDocIDBytes,
                     "KeyArena: document ID of \(docCount) bytes exceeds IndexKey.maxDocIDBytes (\(IndexKey.maxDocIDBytes))")
        let room = maxKeySize - IndexKey.trailerSize - docCount
        var truncated = false
        if bytes.count - start > room {
            bytes.removeSubrange((start + room)...)
            truncated = true
        }
        bytes.append(contentsOf: docID)
        bytes.append(UInt8(truncatingIfNeeded: docCount >> 8))
        bytes.append(UInt8(truncatingIfNeeded: docCount))
        bytes.append(truncated ? 1 : 0)
        starts.append(bytes.count)
    }

    // MARK: - Order

    /// The order of keys `first..<end` (memcmp order, the store's), with repeats left out:
    /// key numbers, for `withKey`. Keys are compared by their first eight bytes as one
    /// integer, then by memcmp only when those are equal.
    func sortedUniqueOrder(from first: Int = 0, to end: Int? = nil) -> [Int] {
        let end = end ?? count
        if end - first < 2 { return Array(first..<end) }
        return bytes.withUnsafeBytes { all in
            let base = all.baseAddress!
            return starts.withUnsafeBufferPointer { s in
                @inline(__always) func key(_ i: Int) -> UnsafeRawBufferPointer {
                    UnsafeRawBufferPointer(start: base + s[i], count: s[i + 1] - s[i])
                }
                @inline(__always) func prefix(_ i: Int) -> UInt64 {
                    let k = key(i)
                    var v: UInt64 = 0
                    for j in 0..<Swift.min(8, k.count) { v |= UInt64(k[j]) << UInt64(56 - 8 * j) }
                    return v
                }
                // A prefix shorter than 8 bytes is padded with zeros, so equal prefixes do not
                // mean equal keys (or even equal lengths): memcmp decides.
                var order = (first..<end).map { (prefix: prefix($0), key: $0) }
                order.sort { a, b in
                    a.prefix != b.prefix ? a.prefix < b.prefix : compareStoredKeys(key(a.key), key(b.key)) < 0
                }
                var out: [Int] = []
                out.reserveCapacity(order.count)
                out.append(order[0].key)
                for i in 1..<order.count {
                    let p = order[i - 1], q = order[i]
                    if p.prefix == q.prefix && compareStoredKeys(key(p.key), key(q.key)) == 0 { continue }
                    out.append(q.key)
                }
                return out
            }
        }
    }
}

extension IndexKey {
    /// Appends the encoding of a value read in place: the same bytes as
    /// `encode(value.toValue(), into:)`, without decoding scalars (arrays and objects are
    /// decoded). An unreadable value encodes as MISSING, as its decoding would be.
    static func encode(binary v: BinaryValue, into out: inout [UInt8]) {
        guard let tag = v.tag else { out.append(tagMissing); return }
        switch tag {
        case 0x00: out.append(tagNull)
        case 0x01: out.append(tagFalse)
        case 0x02: out.append(tagTrue)
        case 0x03, 0x04:
            if let d = v.double { encodeDouble(d, into: &out) } else { out.append(tagMissing) }
        case 0x08...0x0F, 0x20...0x3F:
            if let i = v.int { encodeInt(i, into: &out) } else { out.append(tagMissing) }
        case 0x40...0x5F:
            guard let r = v.stringRange else { out.append(tagMissing); return }
            out.append(tagString)
            appendEscaped(utf8: UnsafeRawBufferPointer(rebasing: v.buffer[r]), into: &out)
        default:
            encode(v.toValue(), into: &out)
        }
    }

    /// Appends UTF-8 bytes with `00` escaped as `00 FF`, then the terminator `00 00`.
    static func appendEscaped(utf8 p: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        if !p.contains(0) {
            out.append(contentsOf: p)
        } else {
            for b in p {
                out.append(b)
                if b == 0 { out.append(highByte) }
            }
        }
        out.append(0)
        out.append(0)
    }
}
