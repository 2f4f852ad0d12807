// Hash aggregation for GROUP BY over rows that do not come grouped (a full scan, a join).
//
// Most GROUP BY keys are one string property. Such keys are looked up by their UTF-8 bytes,
// read in place from the document, in an open-addressing table: a row of an existing group
// builds no `Value`, no array and no Swift dictionary key. Every other key (numbers, NULL,
// MISSING, several keys, computed expressions) goes through a dictionary of values. A string
// never equals a non-string, so the two never hold the same group.

/// Finds the group of the current row; groups are numbered in order of first appearance.
struct GroupIndex {
    /// The single group key when it is a plain document path (read in place), else nil.
    private let inPlaceKey: (slot: Int, path: CompiledPath)?
    private let keys: [Compiled]
    private var strings = StringGroupTable()
    private var others: [[Value]: Int] = [:]
    /// Groups so far.
    private(set) var count = 0

    init(groupBy: [BoundExpr], compiled: [Compiled]) {
        keys = compiled
        if groupBy.count == 1, case .sourcePath(let slot, let path) = groupBy[0], !path.isEmpty {
            inPlaceKey = (slot, CompiledPath(path))
        } else {
            inPlaceKey = nil
        }
    }

    /// The group of the current row and whether it is new.
    mutating func group(_ ctx: ExecContext) -> (index: Int, isNew: Bool) {
        if let k = inPlaceKey, let b = slotBinary(ctx.slots + k.slot, k.path),
           let found = b.withUTF8({ bytes in strings.find(bytes, next: count) }) {
            if found.isNew { count += 1 }
            return found
        }
        let values = keys.map { $0(ctx) }
        if values.count == 1, case .string(var s) = values[0] {
            let found = s.withUTF8 { strings.find(UnsafeRawBufferPointer($0), next: count) }
            if found.isNew { count += 1 }
            return found
        }
        if let g = others[values] { return (g, false) }
        others[values] = count
        count += 1
        return (count - 1, true)
    }
}

/// An open-addressing hash table from UTF-8 byte strings to group numbers.
struct StringGroupTable {
    private var buckets: [Int32] = Array(repeating: -1, count: 64)
    private var keys: [[UInt8]] = []
    private var hashes: [UInt64] = []
    private var groups: [Int] = []

    /// The group of `bytes`; when absent it is added as group `next`.
    mutating func find(_ bytes: UnsafeRawBufferPointer, next: Int) -> (index: Int, isNew: Bool) {
        let h = Self.hash(bytes)
        let mask = buckets.count - 1
        var i = Int(truncatingIfNeeded: h) & mask
        while true {
            let e = Int(buckets[i])
            if e < 0 { break }
            if hashes[e] == h && keys[e].withUnsafeBytes({ $0.elementsEqual(bytes) }) { return (groups[e], false) }
            i = (i + 1) & mask
        }
        let entry = keys.count
        buckets[i] = Int32(truncatingIfNeeded: entry)
        keys.append(Array(bytes))
        hashes.append(h)
        groups.append(next)
        if keys.count * 2 > buckets.count { grow() }
        return (next, true)
    }

    private mutating func grow() {
        var bigger = [Int32](repeating: -1, count: buckets.count * 2)
        let mask = bigger.count - 1
        for (e, h) in hashes.enumerated() {
            var i = Int(truncatingIfNeeded: h) & mask
            while bigger[i] >= 0 { i = (i + 1) & mask }
            bigger[i] = Int32(truncatingIfNeeded: e)
        }
        buckets = bigger
    }

    /// FNV-1a, then a final mix so that the low bits (the bucket) depend on every byte.
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        h ^= h >> 33
        h = h &* 0xff51_afd7_ed55_8ccd
        h ^= h >> 33
        return h
    }
}
