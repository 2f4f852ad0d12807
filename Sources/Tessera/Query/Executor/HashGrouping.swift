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
    /// The key's name when the path is one member (`country`), and where it was found last.
    private let memberKey: [UInt8]?
    private var memberHint = 0
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
        if let k = inPlaceKey, k.path.steps.count == 1, let name = k.path.name(k.path.steps[0]) {
            memberKey = name
        } else {
            memberKey = nil
        }
    }

    /// The in-place key's value in the current row, or nil (not a document, or absent).
    private mutating func inPlaceValue(_ ctx: ExecContext, _ k: (slot: Int, path: CompiledPath)) -> BinaryValue? {
        guard let name = memberKey else { return slotBinary(ctx, ctx.slots + k.slot, k.path) }
        let s = ctx.slots + k.slot
        if let body = s.pointee.body, let v = name.withUnsafeBytes({ body.member(utf8: $0, hint: &memberHint) }) {
            // Of a document's head alone (`SourceSlot.partial`), only a whole scalar.
            if !s.pointee.partial || v.isWholeScalar { return v }
        } else if !s.pointee.partial {
            return nil
        }
        return slotBinary(ctx, s, k.path)
    }

    /// The group of the current row and whether it is new.
    mutating func group(_ ctx: ExecContext) -> (index: Int, isNew: Bool) {
        if let k = inPlaceKey, let b = inPlaceValue(ctx, k),
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

/// An open-addressing hash table from UTF-8 byte strings to group numbers. The keys are kept
/// back to back in one buffer (no array per key, nothing retained per lookup).
struct StringGroupTable {
    private var buckets: [Int32] = Array(repeating: -1, count: 64)
    private var keyBytes: [UInt8] = []
    /// Where entry `e`'s key starts in `keyBytes` (entry `e + 1`'s start is its end).
    private var keyStarts: [Int] = [0]
    private var hashes: [UInt64] = []
    private var groups: [Int] = []

    /// The group of `bytes`; when absent it is added as group `next`.
    mutating func find(_ bytes: UnsafeRawBufferPointer, next: Int) -> (index: Int, isNew: Bool) {
        let h = hashBytes(bytes)
        let mask = buckets.count - 1
        var i = Int(truncatingIfNeeded: h) & mask
        let found: Int? = buckets.withUnsafeBufferPointer { b in
            hashes.withUnsafeBufferPointer { hs in
                keyStarts.withUnsafeBufferPointer { st in
                    keyBytes.withUnsafeBytes { kb in
                        while true {
                            let e = Int(b[i])
                            if e < 0 { return nil }
                            if hs[e] == h, st[e + 1] - st[e] == bytes.count,
                               bytes.count == 0 || bytesEqual(kb.baseAddress! + st[e], bytes.baseAddress!, bytes.count) {
                                return e
                            }
                            i = (i + 1) & mask
                        }
                    }
                }
            }
        }
        if let found { return (groups[found], false) }
        let entry = hashes.count
        buckets[i] = Int32(truncatingIfNeeded: entry)
        keyBytes.append(contentsOf: bytes)
        keyStarts.append(keyBytes.count)
        hashes.append(h)
        groups.append(next)
        if hashes.count * 2 > buckets.count { grow() }
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
}
