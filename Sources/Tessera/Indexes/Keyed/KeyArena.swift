#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Index keys built without a `Value` or an array per entry: the keys of one document (an
// update) or of a whole collection (a back-fill) go one after another into one byte buffer,
// and the index expressions that are plain property paths are encoded straight from the
// binary document read in place. Each key also records whether its values decode back
// exactly (`IndexKey.decodesExactly`), for the entry's stored value (`IndexKey.entryValue`).

/// Index keys stored back to back in one buffer (`IndexKey` layout: tuple ‖ docID ‖ trailer).
struct KeyArena {
    /// Every key's bytes, one after another.
    private(set) var bytes: [UInt8] = []
    /// Where each key starts in `bytes`, and where the next one would.
    private(set) var starts: [Int] = [0]
    /// Per key: its values do not decode back exactly (an integral Double, `-0.0`).
    private(set) var inexact: [Bool] = []
    /// The key being built has an inexact component.
    private var pendingInexact = false
    /// How many keys are known to be the only key of their document (`noteLoneKey`).
    private var loneKeys = 0
    /// Whether two keys may be equal: a key ends with its document's ID, so only keys of one
    /// document can be, and only when some key is not known to be its document's only one.
    var mayRepeat: Bool { loneKeys < count }

    /// The number of keys.
    var count: Int { starts.count - 1 }

    init(reservingBytes: Int = 0, keys: Int = 0) {
        bytes.reserveCapacity(reservingBytes)
        if keys > 0 {
            starts.reserveCapacity(keys + 1)
            inexact.reserveCapacity(keys)
        }
    }

    /// One entry of a sorted key range: a key number (for `withKey`), how many times the
    /// key was appended, and whether all its appends decode back exactly.
    struct Entry {
        var key: Int
        var occurrences: Int
        var exact: Bool
    }

    /// Calls `body` with the bytes of key `i` (valid only during the call).
    @inline(__always)
    func withKey<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes { all in try body(UnsafeRawBufferPointer(rebasing: all[starts[i]..<starts[i + 1]])) }
    }

    /// How many keys ahead a loop over keys in sorted order requests the next key's bytes.
    static let prefetchDistance = 8

    /// The keys of an arena by number, valid during `withKeys` (and on any thread: nothing
    /// writes to the arena meanwhile).
    struct Keys: @unchecked Sendable {
        // @unchecked Sendable: read-only views of the arena's buffers while `withKeys` runs.
        fileprivate let base: UnsafeRawPointer
        fileprivate let starts: UnsafeBufferPointer<Int>

        /// The bytes of key `i`.
        @inline(__always)
        subscript(i: Int) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(start: base + starts[i], count: starts[i + 1] - starts[i])
        }

        /// Requests where key `i` starts and ends (a loop over keys in sorted order reads
        /// them out of order: this some keys before `prefetchKey`, which needs them).
        @inline(__always)
        func prefetchBounds(_ i: Int) { prefetchMemory(starts.baseAddress! + i) }

        /// Requests the first and last bytes of key `i` (its tuple and its trailer).
        @inline(__always)
        func prefetchKey(_ i: Int) {
            prefetchMemory(base + starts[i])
            prefetchMemory(base + (starts[i + 1] &- 1))
        }
    }

    /// Calls `body` with the arena's keys, all valid during the call.
    @inline(__always)
    func withKeys<R>(_ body: (Keys) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes { all in
            try starts.withUnsafeBufferPointer { s in
                // An empty arena's buffer may have no address; no key is read from it then.
                try body(Keys(base: all.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, starts: s))
            }
        }
    }

    /// Key `i` as an array (for callers that keep keys).
    func key(_ i: Int) -> [UInt8] { Array(bytes[starts[i]..<starts[i + 1]]) }

    /// Forgets every key, keeping the capacity.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        starts.removeAll(keepingCapacity: true)
        starts.append(0)
        inexact.removeAll(keepingCapacity: true)
        pendingInexact = false
        loneKeys = 0
    }

    /// Records that the key just finished is the only key of its document.
    mutating func noteLoneKey() { loneKeys += 1 }

    /// Appends every key of `other` after this arena's, in their order.
    mutating func append(contentsOf other: KeyArena) {
        let offset = bytes.count
        bytes.append(contentsOf: other.bytes)
        // No reserveCapacity(count + other.count) here: reserving exactly, join after join,
        // would copy the whole array each time (a back-fill joins dozens of pieces).
        other.starts.withUnsafeBufferPointer { s in
            starts.append(contentsOf: s[1...].lazy.map { $0 + offset })
        }
        inexact.append(contentsOf: other.inexact)
        loneKeys += other.loneKeys
    }

    /// Forgets the keys from `index` on.
    mutating func removeKeys(from index: Int) {
        bytes.removeSubrange(starts[index]...)
        starts.removeSubrange((index + 1)...)
        inexact.removeSubrange(index...)
        pendingInexact = false
        loneKeys = 0
    }

    // MARK: - Building a key

    /// Appends one tuple component to the key being built (between keys: starts one).
    @inline(__always)
    mutating func appendComponent(binary v: BinaryValue) {
        if !IndexKey.decodesExactly(binary: v) { pendingInexact = true }
        IndexKey.encode(binary: v, into: &bytes)
    }

    /// Appends one tuple component given as a value.
    @inline(__always)
    mutating func appendComponent(_ v: Value) {
        if !IndexKey.decodesExactly(v) { pendingInexact = true }
        IndexKey.encode(v, into: &bytes)
    }

    /// Drops the components appended since the last finished key.
    mutating func discardUnfinished() {
        bytes.removeSubrange(starts[starts.count - 1]...)
        pendingInexact = false
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
        inexact.append(pendingInexact)
        pendingInexact = false
    }

    // MARK: - Order

    /// The order of keys `first..<end` (memcmp order, the store's), with repeats left out:
    /// key numbers, for `withKey`.
    func sortedUniqueOrder(from first: Int = 0, to end: Int? = nil) -> [Int] {
        sortedEntries(from: first, to: end).map(\.key)
    }

    /// The keys `first..<end` in memcmp order (the store's), repeats merged into one entry
    /// that counts them and is exact only if every repeat is. Keys are compared by their
    /// first eight bytes as one integer, then by memcmp only when those are equal.
    func sortedEntries(from first: Int = 0, to end: Int? = nil) -> [Entry] {
        let end = end ?? count
        if end - first < 2 { return (first..<end).map { Entry(key: $0, occurrences: 1, exact: !inexact[$0]) } }
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
                var out: [Entry] = []
                out.reserveCapacity(order.count)
                out.append(Entry(key: order[0].key, occurrences: 1, exact: !inexact[order[0].key]))
                for i in 1..<order.count {
                    let p = order[i - 1], q = order[i]
                    if p.prefix == q.prefix && compareStoredKeys(key(p.key), key(q.key)) == 0 {
                        out[out.count - 1].occurrences += 1
                        if inexact[q.key] { out[out.count - 1].exact = false }
                        continue
                    }
                    out.append(Entry(key: q.key, occurrences: 1, exact: !inexact[q.key]))
                }
                return out
            }
        }
    }
}

extension KeyArena {
    /// The same entries as `sortedEntries()`, for an arena filled in document-ID order (a
    /// back-fill reads the document table in key order) whose keys `groups` has grouped by
    /// tuple: only the distinct tuples are sorted, and the keys are placed by counting, each
    /// group in the order the keys were appended. That is the store's order because a complete
    /// tuple is self-delimiting (two tuples differ inside both) and a document ID without a `00`
    /// byte followed by its length sorts like the ID itself (`TupleGroups.add` refuses other
    /// keys). Falls back to `sortedEntries()` when the keys are mostly distinct (nothing to gain).
    func sortedEntries(grouped groups: TupleGroups) -> [Entry] {
        let n = count
        precondition(groups.keyCount == n, "KeyArena: \(groups.keyCount) keys grouped, \(n) in the arena")
        if n < 2 || groups.groupCount * 2 > n { return sortedEntries() }
        return bytes.withUnsafeBytes { all -> [Entry] in
            let base = all.baseAddress!
            return starts.withUnsafeBufferPointer { s -> [Entry] in
                @inline(__always) func tuple(_ g: Int) -> UnsafeRawBufferPointer {
                    UnsafeRawBufferPointer(start: base + s[groups.firstKey[g]], count: groups.tupleLength[g])
                }
                // Rank the distinct tuples, then place the keys by counting (stable).
                let groupCount = groups.groupCount
                let byTuple = (0..<groupCount).sorted { compareStoredKeys(tuple($0), tuple($1)) < 0 }
                var rank = [Int](repeating: 0, count: groupCount)
                for (r, g) in byTuple.enumerated() { rank[g] = r }
                let groupOf = groups.groupOf
                var next = [Int](repeating: 0, count: groupCount + 1)
                for i in 0..<n { next[rank[Int(groupOf[i])] + 1] += 1 }
                for r in 0..<groupCount { next[r + 1] += next[r] }
                var order = [Int](repeating: 0, count: n)
                for i in 0..<n {
                    let r = rank[Int(groupOf[i])]
                    order[next[r]] = i
                    next[r] += 1
                }
                // Every key is its document's only one: none repeats, and none is read here.
                if !mayRepeat { return order.map { Entry(key: $0, occurrences: 1, exact: !inexact[$0]) } }
                // Merge repeats: equal keys are neighbours within a group (one document's).
                // The keys are read in sorted order, scattered over the arena: each one's end is
                // requested a few keys ahead.
                var out: [Entry] = []
                out.reserveCapacity(n)
                out.append(Entry(key: order[0], occurrences: 1, exact: !inexact[order[0]]))
                for j in 1..<n {
                    if j &+ KeyArena.prefetchDistance < n { prefetchMemory(base + (s[order[j &+ KeyArena.prefetchDistance] &+ 1] &- 8)) }
                    let p = order[j - 1], q = order[j]
                    // Same tuple, same length and the same last eight bytes (the ID's end and
                    // the trailer) before comparing the whole key: most neighbours differ there.
                    if groupOf[p] == groupOf[q], s[p + 1] - s[p] == s[q + 1] - s[q],
                       s[p + 1] - s[p] < 8
                        || (base + s[p + 1] - 8).loadUnaligned(as: UInt64.self) == (base + s[q + 1] - 8).loadUnaligned(as: UInt64.self),
                       bytesEqual(base + s[p], base + s[q], s[p + 1] - s[p]) {
                        out[out.count - 1].occurrences += 1
                        if inexact[q] { out[out.count - 1].exact = false }
                        continue
                    }
                    out.append(Entry(key: q, occurrences: 1, exact: !inexact[q]))
                }
                return out
            }
        }
    }
}

/// The keys of an arena grouped by their tuple (the encoded values, without the document ID),
/// for the back-fill's sort (`KeyArena.sortedEntries(grouped:)`). Keys are added as the arena
/// grows (`add(_:from:)`): a back-fill on two threads groups each piece's keys as it joins
/// them, while the other thread is still reading, instead of all of them after the read.
struct TupleGroups {
    /// Per key: its group.
    private(set) var groupOf: [Int32] = []
    /// Per group: its first key, and the length and hash of its tuple.
    private(set) var firstKey: [Int] = []
    private(set) var tupleLength: [Int] = []
    private var groupHash: [UInt64] = []
    /// Open addressing over the tuples' hashes; slots hold group number + 1.
    private var slots = [Int32](repeating: 0, count: 1024)

    /// Groups for about `keys` keys.
    init(reservingKeys keys: Int = 0) {
        groupOf.reserveCapacity(keys)
    }

    /// The number of keys grouped.
    var keyCount: Int { groupOf.count }
    /// The number of distinct tuples.
    var groupCount: Int { firstKey.count }

    /// Groups the keys of `arena` from `first` on (the keys before it are grouped already).
    /// False when the grouped sort does not apply: a key is truncated or its ID holds a `00`
    /// byte (the ID would not sort like the key); the groups are then incomplete.
    mutating func add(_ arena: KeyArena, from first: Int) -> Bool {
        precondition(first == keyCount, "TupleGroups: adding from key \(first), \(keyCount) grouped")
        let n = arena.count
        guard first < n else { return true }
        return arena.bytes.withUnsafeBytes { all -> Bool in
            let base = all.baseAddress!
            return arena.starts.withUnsafeBufferPointer { s -> Bool in
                for i in first..<n {
                    let key = UnsafeRawBufferPointer(start: base + s[i], count: s[i + 1] - s[i])
                    guard let (tupleCount, docCount) = IndexKey.layout(key), key[key.count - 1] == 0,
                          memchr(key.baseAddress! + tupleCount, 0, docCount) == nil else { return false }
                    let t = UnsafeRawBufferPointer(start: key.baseAddress!, count: tupleCount)
                    groupOf.append(group(of: t, firstKey: i) { base + s[$0] })
                }
                return true
            }
        }
    }

    /// The group of tuple `t`, made for it (with `firstKey`) when it is new; `keyStart` gives
    /// where a key starts (a group's tuple is at its first key's start).
    @inline(__always)
    private mutating func group(of t: UnsafeRawBufferPointer, firstKey key: Int, keyStart: (Int) -> UnsafeRawPointer) -> Int32 {
        let h = hashBytes(t)
        var at = Int(truncatingIfNeeded: h) & (slots.count - 1)
        while true {
            let g = Int(slots[at]) - 1
            if g < 0 { break }
            if groupHash[g] == h, tupleLength[g] == t.count,
               t.count == 0 || bytesEqual(keyStart(firstKey[g]), t.baseAddress!, t.count) {
                return Int32(g)
            }
            at = (at + 1) & (slots.count - 1)
        }
        let g = firstKey.count
        slots[at] = Int32(g + 1)
        firstKey.append(key)
        tupleLength.append(t.count)
        groupHash.append(h)
        if firstKey.count * 2 > slots.count { grow() }
        return Int32(g)
    }

    /// Doubles the table and places every group again.
    private mutating func grow() {
        let capacity = slots.count * 2
        slots = [Int32](repeating: 0, count: capacity)
        for g in 0..<firstKey.count {
            var a = Int(truncatingIfNeeded: groupHash[g]) & (capacity - 1)
            while slots[a] != 0 { a = (a + 1) & (capacity - 1) }
            slots[a] = Int32(g + 1)
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
        if let base = p.baseAddress, p.count > 0 {
            if memchr(base, 0, p.count) == nil {
                // The usual case: one copy (a typed buffer appends with memcpy).
                out.append(contentsOf: UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: p.count))
            } else {
                for b in p {
                    out.append(b)
                    if b == 0 { out.append(highByte) }
                }
            }
        }
        out.append(0)
        out.append(0)
    }
}
