import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Cheap statistics of a value or array index for the planner's row estimates (issue 16,
// "cost, not rules"): the number of entries, the number of distinct leading-key prefixes
// per column count, and up to 64 evenly spaced sample keys (an equi-depth histogram of the
// whole key). They are computed when an index is built or back-filled, stored in the `meta`
// table under `stats:<scope>.<collection>:<index>` in the same transaction, and recomputed
// at the end of a write transaction once the index's entry count has drifted by a quarter
// (at least 64 entries) from the count they were taken at. Between refreshes the current
// entry count (LMDB keeps it, O(1)) scales them. Databases written before statistics
// existed have none stored: the planner computes them from its snapshot the first time
// (kept in memory with the index) and the next write to the collection stores them.

/// The statistics of one keyed index.
struct IndexStatistics: Equatable, Sendable {
    /// The most sample keys kept.
    static let maxSamples = 64
    /// The longest sample key kept (tuple bytes; longer keys are cut, which only blurs the
    /// histogram).
    static let maxSampleBytes = 96

    /// Entries when the statistics were taken.
    var entries: Int
    /// `distinct[k]`: distinct values of the first `k + 1` index columns.
    var distinct: [Int]
    /// Tuple bytes of evenly spaced entries, in key order.
    var samples: [[UInt8]]

    /// Reads every entry of `index` once, comparing each key's column encodings with the
    /// previous key's in place (equal values encode to equal bytes, IndexKey.swift), with no
    /// decoding and no allocation per entry.
    static func compute(_ index: IndexStore, snapshot: Snapshot) throws -> IndexStatistics {
        var builder = Builder(entries: try snapshot.count(index.table, recent: index.recent), columns: index.expressions.count)
        try snapshot.withCursor(index.table, recent: index.recent) { c in
            try c.forEach { key, _ in
                builder.add(key: key)
                return true
            }
        }
        return builder.statistics
    }

    /// Statistics taken from keys fed in key order: every key of an index (`compute`), or the
    /// keys a back-fill appends, before they are written.
    struct Builder {
        private let step: Int
        private var tally: DistinctTally
        private var samples: [[UInt8]] = []
        private var position = 0
        /// Keys to add before the next sample.
        private var untilSample = 0

        /// A builder for `entries` keys of an index on `columns` expressions.
        init(entries: Int, columns: Int) {
            step = max(1, (entries + maxSamples - 1) / maxSamples)
            tally = DistinctTally(columns: max(1, columns))
        }

        /// Adds the next key (an `IndexKey`; keys that do not parse are skipped).
        @inline(__always)
        mutating func add(key: UnsafeRawBufferPointer) {
            guard let (tupleCount, _) = IndexKey.layout(key) else { return }
            let tuple = UnsafeRawBufferPointer(rebasing: key[0..<tupleCount])
            tally.add(tuple)
            if untilSample == 0 {
                if samples.count < maxSamples { samples.append(Array(tuple.prefix(maxSampleBytes))) }
                untilSample = step
            }
            untilSample -= 1
            position += 1
        }

        /// The statistics of the keys added.
        var statistics: IndexStatistics {
            IndexStatistics(entries: position, distinct: tally.distinct, samples: samples)
        }
    }

    /// Counts the distinct leading-column prefixes of tuples fed in key order.
    struct DistinctTally {
        /// `distinct[k]`: distinct values of the first `k + 1` columns so far.
        private(set) var distinct: [Int]
        /// The previous tuple's bytes and the end offset of each of its columns (nil past the
        /// last complete one).
        private var previous: [UInt8] = []
        private var previousEnds: [Int?]
        private var started = false
        private var ends: [Int?]

        init(columns: Int) {
            distinct = [Int](repeating: 0, count: columns)
            previousEnds = [Int?](repeating: nil, count: columns)
            ends = previousEnds
        }

        /// Adds the next tuple (in key order). The first column whose bytes differ from the
        /// previous tuple's starts a new distinct prefix for it and every longer prefix; a
        /// column cut short by truncation counts as different unless the whole tuple is equal.
        mutating func add(_ tuple: UnsafeRawBufferPointer) {
            // The same tuple again (most neighbours in an index of few distinct values): nothing
            // is new, and the previous tuple and its column ends stand.
            if started && tuple.count == previous.count && samePrefix(tuple, tuple.count) { return }
            let columns = distinct.count
            var at: Int? = 0
            for k in 0..<columns {
                if let a = at { at = IndexKey.componentEnd(tuple, from: a) }
                ends[k] = at
            }
            var first = 0
            if started {
                // Columns cut short (a truncated key) count as different.
                while first < columns, let end = ends[first], end == previousEnds[first], samePrefix(tuple, end) {
                    first += 1
                }
            }
            for k in first..<columns { distinct[k] += 1 }
            started = true
            previous.removeAll(keepingCapacity: true)
            previous.append(contentsOf: tuple)
            swap(&previousEnds, &ends)
        }

        /// True if the first `count` bytes of `tuple` and of the previous tuple are equal.
        private func samePrefix(_ tuple: UnsafeRawBufferPointer, _ count: Int) -> Bool {
            count == 0 || previous.withUnsafeBytes { memcmp($0.baseAddress!, tuple.baseAddress!, count) == 0 }
        }
    }

    // MARK: - Storage

    static func key(_ index: IndexStore) -> [UInt8] {
        Array(("stats:" + index.collection.fullName + ":" + index.definition.name).utf8)
    }

    /// Version 1: entries (UInt64), column count (UInt32) and each distinct count (UInt64),
    /// sample count (UInt32) and each sample (UInt16 length, bytes); little-endian.
    func encoded() -> [UInt8] {
        var out: [UInt8] = [1]
        func u64(_ v: Int) { withUnsafeBytes(of: UInt64(v).littleEndian) { out += $0 } }
        func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { out += $0 } }
        u64(entries)
        u32(distinct.count)
        for d in distinct { u64(d) }
        u32(samples.count)
        for s in samples {
            withUnsafeBytes(of: UInt16(s.count).littleEndian) { out += $0 }
            out += s
        }
        return out
    }

    /// Decodes `encoded()`; nil for anything else (then the statistics are recomputed).
    init?(encoded raw: UnsafeRawBufferPointer) {
        var at = 0
        func read(_ n: Int) -> UInt64? {
            guard at + n <= raw.count else { return nil }
            var v: UInt64 = 0
            for i in 0..<n { v |= UInt64(raw[at + i]) << (8 * UInt64(i)) }
            at += n
            return v
        }
        guard raw.count > 0, raw[0] == 1 else { return nil }
        at = 1
        guard let e = read(8), let n = read(4), n <= 64 else { return nil }
        var d: [Int] = []
        for _ in 0..<n { guard let v = read(8) else { return nil }; d.append(Int(clamping: v)) }
        guard let m = read(4), m <= UInt64(IndexStatistics.maxSamples) else { return nil }
        var s: [[UInt8]] = []
        for _ in 0..<m {
            guard let len = read(2), at + Int(len) <= raw.count else { return nil }
            s.append(Array(raw[at..<(at + Int(len))]))
            at += Int(len)
        }
        self.init(entries: Int(clamping: e), distinct: d, samples: s)
    }

    init(entries: Int, distinct: [Int], samples: [[UInt8]]) {
        self.entries = entries
        self.distinct = distinct
        self.samples = samples
    }

    /// The stored statistics of `index`, else those computed from `snapshot` (kept with the
    /// open index until a write stores them).
    static func load(_ index: IndexStore, snapshot: Snapshot, meta: StorageTable) throws -> IndexStatistics {
        if let raw = try snapshot.get(meta, key: key(index)), let s = IndexStatistics(encoded: raw) { return s }
        let entries = try snapshot.count(index.table, recent: index.recent)
        if let cached = index.computedStatistics.withLock({ $0 }), cached.entries == entries { return cached }
        let s = try compute(index, snapshot: snapshot)
        index.computedStatistics.withLock { $0 = s }
        return s
    }

    /// Computes and stores the statistics of `index`.
    static func refresh(_ index: IndexStore, txn: WriteTransaction, meta: StorageTable) throws {
        try compute(index, snapshot: txn).store(index, txn: txn, meta: meta)
    }

    /// Stores these statistics as those of `index`.
    func store(_ index: IndexStore, txn: WriteTransaction, meta: StorageTable) throws {
        try txn.put(meta, key: Self.key(index), value: encoded())
    }

    /// Recomputes the statistics of `index` when none are stored or its entry count moved by
    /// more than a quarter (and at least 64 entries) since they were taken.
    static func refreshIfDrifted(_ index: IndexStore, txn: WriteTransaction, meta: StorageTable) throws {
        let now = try txn.count(index.table, recent: index.recent)
        if let raw = try txn.get(meta, key: key(index)), let s = IndexStatistics(encoded: raw),
           abs(now - s.entries) <= max(64, s.entries / 4) { return }
        try refresh(index, txn: txn, meta: meta)
    }

    /// Forgets the statistics of a dropped index.
    static func remove(_ index: IndexStore, txn: WriteTransaction, meta: StorageTable) throws {
        _ = try txn.delete(meta, key: key(index))
    }

    // MARK: - Estimates

    /// Distinct values of the first `columns` columns when the index holds `entriesNow`
    /// entries: nearly unique columns grow with the entries, others keep their count.
    func distinct(columns: Int, entriesNow: Int) -> Double {
        guard columns > 0, entries > 0, !distinct.isEmpty else { return Double(max(1, entriesNow)) }
        let d = Double(distinct[min(columns, distinct.count) - 1])
        let e = Double(entries)
        let scaled = d * 2 >= e ? d * Double(entriesNow) / e : d
        return min(Double(max(1, entriesNow)), max(1, scaled))
    }

    /// How many sample keys lie in one of `ranges`, and how many samples there are.
    func sampleHits(_ ranges: [IndexKey.KeyRange]) -> (hits: Int, samples: Int) {
        var hits = 0
        for s in samples where ranges.contains(where: { $0.contains(key: s) }) { hits += 1 }
        return (hits, samples.count)
    }
}
