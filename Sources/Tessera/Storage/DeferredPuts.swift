import LMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Puts held back and written in key order.
//
// A B-tree filled in random key order splits its pages in the middle and leaves them about
// half full; LMDB's leaf pages hold two or three ~1.5 KB document bodies, so a batch of
// documents with unordered IDs (UUIDs, `type_N` counters that do not sort numerically, a
// shuffled file) left the document table ~40 % larger than the same documents written in
// ID order, its pages scattered over the file (a full scan then misses the cache and TLB on
// every page), and the load itself 3× slower (every put descends to a different page).
//
// A write transaction therefore appends a collection's new documents straight to its tables
// while their IDs ascend past every stored ID, and from the first ID out of that order holds
// the puts to the document and ID tables back (`WriteContext.placeNewDocument`, taking back
// the few it had appended) and writes them sorted: after the table's last key with
// `MDB_APPEND`, which fills each page before starting the next and allocates them
// in order. Reads see the held-back puts: a point read (`Snapshot.get`) finds them here;
// anything that walks the table (a cursor, its entry count) first writes them out. So do the
// commit, and a put that finds more than `maxHeldBytes` held (8 GB).
//
// Held bytes live in the process's memory up to `memoryBytes` (256 MB, ~150,000 documents of
// 1.5 KB); beyond that in a temporary file of the database directory, mapped into memory
// (`SpillFile`: created and unlinked at once, so nothing of it outlives the process, whatever
// happens to it), whose pages the kernel may write back and evict. Writing out every 256 MB
// instead — as before — put the second and later write-outs of a large batch between keys of
// the first: a batch of 1,000,000 documents then left the table's pages half full (3.1 GB
// against 2.0 GB). When the file cannot grow (a full disk), the puts are written out as
// before.

/// The held-back puts and deletes of one table in one write transaction.
final class DeferredPuts {
    let table: StorageTable
    /// Held bytes (keys and values) above which a put writes everything out.
    let maxHeldBytes: Int
    /// The usual `maxHeldBytes`.
    static let defaultMaxHeldBytes = 8 << 30
    /// Held bytes kept in the process's own memory; beyond them, held bytes go to a mapped
    /// temporary file in `spillDirectory`, or without one the puts are written out.
    let memoryBytes: Int
    /// The usual `memoryBytes`: ~150,000 documents of 1.5 KB.
    static let defaultMemoryBytes = 256 << 20
    /// Where the temporary file for bytes beyond `memoryBytes` is made (the database directory).
    let spillDirectory: String?
    /// The temporary file, once bytes have gone beyond `memoryBytes`.
    private var spill: SpillFile?
    /// Bytes of the chunks allocated in memory (not in the temporary file).
    private var memoryChunkBytes = 0
    /// Set when bytes beyond `memoryBytes` could not go to a temporary file: the puts are
    /// written out after the current one.
    private var spillRefused = false

    private struct Entry {
        var key: UnsafeRawPointer
        var keyCount: Int
        /// nil: the key is deleted.
        var value: UnsafeRawPointer?
        var valueCount: Int
    }

    /// Newest entry per key, in order of first arrival.
    private var entries: [Entry] = []
    /// Open addressing: per bucket, entry number + 1 in the high 32 bits and the high 32 bits
    /// of the key's hash in the low ones; 0 when empty. A probe compares the hash bits in the
    /// bucket and reads an entry only when they match: a new key (most puts) costs one read of
    /// the bucket array, not of the entries and their hashes as well (cache misses at 100,000
    /// held documents).
    private var buckets: [UInt64] = Array(repeating: 0, count: 64)
    /// Each entry's full hash (for growing the bucket array).
    private var hashes: [UInt64] = []
    /// Memory the entries point into, kept until the next put after a write-out: bytes
    /// handed out by `lookup` stay valid until the transaction's next write (the contract of
    /// `Snapshot.get`).
    private var chunks: [UnsafeMutableRawPointer] = []
    /// Chunks mapped from the temporary file, with their sizes.
    private var mappedChunks: [(UnsafeMutableRawPointer, Int)] = []
    private var free: UnsafeMutableRawPointer?
    private var freeCount = 0
    /// The size of the next chunk: small for a transaction of one document, doubling to 4 MB.
    private var chunkSize = 16 << 10
    private var releaseOnNextPut = false
    private(set) var heldBytes = 0

    /// For a collection's document table: its tail table and where records are cut. Records
    /// are held whole and cut as they are written out (appended records where their leaf page
    /// ends: `RecordPieces.swift`); their second pieces go to `putTail`'s table.
    let records: RecordTablePacking?

    init(table: StorageTable, maxHeldBytes: Int = DeferredPuts.defaultMaxHeldBytes,
         memoryBytes: Int = DeferredPuts.defaultMemoryBytes, spillDirectory: String? = nil,
         records: RecordTablePacking? = nil) {
        self.table = table
        self.records = records
        self.maxHeldBytes = maxHeldBytes
        self.memoryBytes = memoryBytes
        self.spillDirectory = spillDirectory
    }

    deinit { release() }

    var isEmpty: Bool { entries.isEmpty }

    /// The number of keys held (puts and deletes).
    var count: Int { entries.count }

    /// The number of keys held with a value (puts).
    private(set) var putCount = 0

    /// Calls `body` with each held key and its value (nil: deleted), in order of arrival.
    func forEachHeld(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer?) throws -> Void) rethrows {
        for e in entries {
            try body(UnsafeRawBufferPointer(start: e.key, count: e.keyCount),
                     e.value.map { UnsafeRawBufferPointer(start: $0, count: e.valueCount) })
        }
    }

    /// True when the held puts must be written out now: too many bytes are held, or bytes
    /// beyond `memoryBytes` found no room in a temporary file.
    var isFull: Bool { heldBytes > maxHeldBytes || spillRefused }

    /// True once held bytes have gone to the temporary file (tests).
    var hasSpilled: Bool { !mappedChunks.isEmpty }

    private func release() {
        for c in chunks { c.deallocate() }
        chunks = []
        for (p, n) in mappedChunks { munmap(p, n) }
        mappedChunks = []
        // Closing the unlinked file returns its disk space.
        spill = nil
        memoryChunkBytes = 0
        spillRefused = false
        free = nil
        freeCount = 0
    }

    /// Size of the chunks mapped from the temporary file.
    static let mappedChunkSize = 64 << 20

    /// `n` bytes of held memory (aligned to 8).
    private func allocate(_ n: Int) -> UnsafeMutableRawPointer {
        let need = (n + 7) & ~7
        if need > freeCount || free == nil {
            var chunk: UnsafeMutableRawPointer?
            var size = max(need, chunkSize)
            if memoryChunkBytes + size > memoryBytes {
                // Beyond the memory budget: a chunk of the temporary file, or a write-out soon.
                // Whole 64 KB units, so that every later chunk starts at a page-aligned offset.
                let mapped = (max(need, Self.mappedChunkSize) + 0xFFFF) & ~0xFFFF
                if let directory = spillDirectory, !spillRefused {
                    if spill == nil { spill = SpillFile(directory: directory) }
                    chunk = spill?.map(mapped)
                }
                if let chunk {
                    mappedChunks.append((chunk, mapped))
                    size = mapped
                } else {
                    spillRefused = true
                }
            }
            if chunk == nil {
                chunkSize = min(chunkSize * 2, 4 << 20)
                let c = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
                chunks.append(c)
                memoryChunkBytes += size
                chunk = c
            }
            free = chunk
            freeCount = size
        }
        let p = free!
        free = p + need
        freeCount -= need
        return p
    }

    /// What is held for `key`: `.some(nil)` when deleted, `.some(bytes)` when put, nil when
    /// nothing is held (the table itself has the answer).
    @inline(__always)
    func lookup(_ key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer?? {
        if entries.isEmpty { return nil }
        guard let e = find(key, hashBytes(key)).entry else { return nil }
        let entry = entries[e]
        guard let v = entry.value else { return .some(nil) }
        return .some(UnsafeRawBufferPointer(start: v, count: entry.valueCount))
    }

    /// The entry holding `key` (or nil) and the bucket where it is or would go.
    @inline(__always)
    private func find(_ key: UnsafeRawBufferPointer, _ h: UInt64) -> (entry: Int?, bucket: Int) {
        let mask = buckets.count - 1
        let tag = h >> 32
        var i = Int(truncatingIfNeeded: h) & mask
        while true {
            let bucket = buckets[i]
            if bucket == 0 { return (nil, i) }
            if bucket & 0xFFFF_FFFF == tag {
                let e = Int(bucket >> 32) - 1
                let entry = entries[e]
                if entry.keyCount == key.count,
                   key.count == 0 || bytesEqual(entry.key, key.baseAddress!, key.count) {
                    return (e, i)
                }
            }
            i = (i + 1) & mask
        }
    }

    /// Holds a put of `size` bytes under `key`, written by `fill`.
    func put(key: UnsafeRawBufferPointer, size: Int, _ fill: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        prepareForPut()
        let value = allocate(size)
        try fill(UnsafeMutableRawBufferPointer(start: value, count: size))
        hold(key: key, value: UnsafeRawPointer(value), valueCount: size)
    }

    /// Holds a put of a copy of `value` under `key`.
    func put(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        put(key: key, size: value.count) { out in
            if value.count > 0 { out.baseAddress!.copyMemory(from: value.baseAddress!, byteCount: value.count) }
        }
    }

    /// Holds a delete of `key`.
    func delete(key: UnsafeRawBufferPointer) {
        prepareForPut()
        hold(key: key, value: nil, valueCount: 0)
    }

    private func prepareForPut() {
        if releaseOnNextPut {
            release()
            releaseOnNextPut = false
        }
    }

    private func hold(key: UnsafeRawBufferPointer, value: UnsafeRawPointer?, valueCount: Int) {
        let h = hashBytes(key)
        let (existing, bucket) = find(key, h)
        if let e = existing {
            // The newer put or delete replaces the held one (its bytes stay until the write-out).
            if (entries[e].value == nil) != (value == nil) { putCount += value == nil ? -1 : 1 }
            entries[e].value = value
            entries[e].valueCount = valueCount
            heldBytes += valueCount
            return
        }
        let k = allocate(key.count)
        if key.count > 0 { k.copyMemory(from: key.baseAddress!, byteCount: key.count) }
        entries.append(Entry(key: UnsafeRawPointer(k), keyCount: key.count, value: value, valueCount: valueCount))
        if value != nil { putCount += 1 }
        hashes.append(h)
        buckets[bucket] = UInt64(entries.count) << 32 | h >> 32
        heldBytes += key.count + valueCount
        if entries.count * 2 > buckets.count { grow() }
    }

    private func grow() {
        var bigger = [UInt64](repeating: 0, count: buckets.count * 2)
        let mask = bigger.count - 1
        for (e, h) in hashes.enumerated() {
            var i = Int(truncatingIfNeeded: h) & mask
            while bigger[i] != 0 { i = (i + 1) & mask }
            bigger[i] = UInt64(e + 1) << 32 | h >> 32
        }
        buckets = bigger
    }

    /// Writes every held put and delete to the table in key order and forgets them. Keys
    /// after the table's last key are appended (`MDB_APPEND`: full pages, allocated in order).
    /// The second pieces of records cut on the way (a document table: `records`) go to
    /// `putTail`, in key order.
    func writeOut(_ txn: Transaction, putTail: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        if entries.isEmpty { return }
        let order = sortedEntries()
        var last: [UInt8]?
        try txn.withCursor(table) { c in if try c.last() { last = Array(c.key) } }
        var appending = last == nil
        // Puts after the table's last key go through one cursor per batch (`AppendBatch`).
        var batch = AppendBatch()
        var batchEntries: [Int] = []
        // Puts and deletes among the table's keys go through one cursor too (`OrderedWrites`).
        var writes = OrderedWrites()
        for e in order {
            let entry = entries[e]
            let key = UnsafeRawBufferPointer(start: entry.key, count: entry.keyCount)
            if !appending, let l = last, compareKeys(key, l) > 0 { appending = true }
            if let v = entry.value {
                let value = UnsafeRawBufferPointer(start: v, count: entry.valueCount)
                if appending {
                    batch.add(key: key, referencing: value)
                    if records != nil { batchEntries.append(e) }
                    if batch.isFull { try append(&batch, &batchEntries, txn, putTail) }
                } else if let records {
                    try records.put(key: key, record: value, in: table, txn: txn, putTail: putTail)
                } else {
                    writes.put(key: key, value: value)
                    if writes.isFull { try txn.write(&writes, to: table) }
                }
            } else if !appending {
                // A key after the table's last one is not in it: nothing to delete.
                writes.delete(key: key)
                if writes.isFull { try txn.write(&writes, to: table) }
            }
        }
        try txn.write(&writes, to: table)
        try append(&batch, &batchEntries, txn, putTail)
        discard()
    }

    /// Appends `batch`; a document table's records are cut where their pages end.
    private func append(_ batch: inout AppendBatch, _ batchEntries: inout [Int], _ txn: Transaction,
                        _ putTail: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        guard let records else { return try txn.append(&batch, to: table) }
        defer { batchEntries.removeAll(keepingCapacity: true) }
        try txn.appendRecords(&batch, to: table, packing: records.splitting.packing) { i, head in
            let entry = entries[batchEntries[i]]
            let key = UnsafeRawBufferPointer(start: entry.key, count: entry.keyCount)
            let record = UnsafeRawBufferPointer(start: entry.value, count: entry.valueCount)
            if let head {
                if head < record.count { try putTail(key, UnsafeRawBufferPointer(rebasing: record[head...])) }
            } else {
                // Not after the table's last key after all: an ordinary put.
                try records.put(key: key, record: record, in: table, txn: txn, putTail: putTail)
            }
        }
    }

    /// Forgets everything held (written out, or the table is being emptied or deleted). The
    /// held bytes stay until the next put (bytes `lookup` handed out stay valid until then).
    func discard() {
        entries.removeAll(keepingCapacity: true)
        putCount = 0
        hashes.removeAll(keepingCapacity: true)
        buckets = Array(repeating: 0, count: 64)
        heldBytes = 0
        releaseOnNextPut = true
    }

    /// The held keys in the order a write-out puts them (tests).
    func keysInWriteOrder() -> [[UInt8]] {
        sortedEntries().map { Array(UnsafeRawBufferPointer(start: entries[$0].key, count: entries[$0].keyCount)) }
    }

    /// Entry numbers in key order (memcmp, shorter first on a common prefix): `keyOrder`.
    private func sortedEntries() -> [Int] {
        entries.withUnsafeBufferPointer { es in
            keyOrder(count: es.count) { UnsafeRawBufferPointer(start: es[$0].key, count: es[$0].keyCount) }
        }
    }
}

/// The numbers `0..<count` ordered by their keys `key(i)` (memcmp, shorter first on a common
/// prefix; equal keys by number, so the order is stable). Each key's first sixteen bytes are
/// compared as two integers (zero-padded: equal integers on keys of different lengths leave
/// the order to the rest and then the length), the rest with memcmp: most IDs (`hotel_12345`,
/// shared prefixes of eight bytes and more) are ordered without reading their bytes again.
/// Held-back puts (`DeferredPuts`) and a batch saved in ID order (`JSONDocumentOrder`) use it.
func keyOrder(count: Int, _ key: (Int) -> UnsafeRawBufferPointer) -> [Int] {
    struct Item {
        var first: UInt64
        var second: UInt64
        var index: Int
    }
    var items = (0..<count).map { i -> Item in
        let k = key(i)
        var first: UInt64 = 0, second: UInt64 = 0
        for j in 0..<8 { first = first << 8 | UInt64(j < k.count ? k[j] : 0) }
        for j in 8..<16 { second = second << 8 | UInt64(j < k.count ? k[j] : 0) }
        return Item(first: first, second: second, index: i)
    }
    items.sort { a, b in
        if a.first != b.first { return a.first < b.first }
        if a.second != b.second { return a.second < b.second }
        let x = key(a.index), y = key(b.index)
        let n = min(x.count, y.count)
        let c = n > 16 ? memcmp(x.baseAddress! + 16, y.baseAddress! + 16, n - 16) : 0
        if c != 0 { return c < 0 }
        if x.count != y.count { return x.count < y.count }
        return a.index < b.index
    }
    return items.map(\.index)
}

/// A temporary file in the database directory that held-back puts beyond their memory budget
/// are mapped from (`MAP_SHARED`: the kernel may write its pages back and evict them instead
/// of keeping them in the process's memory). It is unlinked as soon as it is created, so it
/// disappears when it is closed or the process ends, and its space is reserved
/// (`posix_fallocate`) before a part of it is mapped: writing to a mapped page the disk has
/// no room for would kill the process instead of failing.
final class SpillFile {
    private let fd: Int32
    private var size = 0

    /// A new unlinked file in `directory`, or nil if none can be made there.
    init?(directory: String) {
        var template = Array((directory + "/.tessera-held-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { return nil }
        _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }
        self.fd = fd
    }

    deinit { close(fd) }

    /// `n` more bytes of the file, mapped for reading and writing; nil if the disk has no
    /// room for them or they cannot be mapped.
    func map(_ n: Int) -> UnsafeMutableRawPointer? {
        #if os(Linux)
        guard posix_fallocate(fd, off_t(size), off_t(n)) == 0 else { return nil }
        guard let p = mmap(nil, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(size)),
              p != UnsafeMutableRawPointer(bitPattern: -1) else { return nil }
        size += n
        return p
        #else
        // No portable way to reserve the space first: the puts are written out instead.
        return nil
        #endif
    }
}
