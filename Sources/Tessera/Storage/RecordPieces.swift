import LMDB

// Records too large for a leaf page, stored in two pieces.
//
// LMDB keeps a value in its leaf page only while the node (8 bytes, the key, the value)
// fits half a page (2,038 bytes on 4 KB pages); a larger value gets overflow pages of its
// own, whole pages: a 2.1 KB document took 4 KB. tessera-bench's documents average 1.5 KB
// stored and a fifth of them are over that limit: their overflow pages were 80 MB of the
// document table's 219 MB, half of it empty.
//
// Such a record is split (on-disk format 8): the head (the 29-byte header and as much of
// the body as fits a leaf node) stays in the document table with flag bit 1
// (`DocumentRecord.continuedFlag`), and the rest of the body goes into the collection's
// `tail:` table under the same ID. A record of up to twice the limit is so two ordinary
// leaf entries that pack with their neighbours; a larger one's tail uses overflow pages
// (wasting less than one page on a document of over 4 KB). The `tail:` table is in ID
// order like the document table, and writes follow the same rules (appended while IDs
// ascend, held back and written sorted otherwise).
//
// Readers get the whole record back as one buffer (`RecordAssembly`, `TailFollower`): the
// bytes in LMDB's memory when it is in one piece, else both pieces copied into a buffer of
// the reader's. A query binds a split document's head alone and reads the tail only when
// an expression needs bytes past the head (`ExecContext.completeBody`): a field found whole
// in the head is the field (the head is a prefix of the record, and every read of the
// binary format is bounds-checked, so a read that would cross the end fails instead).
// The revision digest and the body format do not change: a split record assembles to the
// bytes it would have had in one piece. Databases of format 7 need nothing rewritten (none
// of their records is split); they gain the `tail:` tables when first opened.

extension DocumentRecord {
    /// Flag bit 1: the body continues in the collection's `tail:` table.
    static let continuedFlag: UInt8 = 2

    /// True when `record` (as stored) is the head of a record in two pieces.
    @inline(__always)
    static func isContinued(_ record: UnsafeRawBufferPointer) -> Bool {
        record.count > 0 && record[0] & continuedFlag != 0
    }
}

/// Where records are split (see the comment at the top of this file).
struct RecordSplitting: Sendable {
    /// LMDB's largest leaf node for the data file's page size.
    let largestNode: Int
    /// A smaller limit on the whole record, for tests (nil: what fits a leaf page).
    let recordLimit: Int?

    init(pageSize: Int, recordLimit: Int?) {
        // mdb.c: me_nodemax = (((psize - PAGEHDRSZ) / MDB_MINKEYS) & -2) - sizeof(indx_t).
        largestNode = (((pageSize - 16) / 2) & ~1) - 2
        self.recordLimit = recordLimit
    }

    /// The size of the head of a record of `size` bytes stored under a key of `keyCount`
    /// bytes, or nil when the record stays in one piece.
    func headSize(recordSize size: Int, keyCount: Int) -> Int? {
        var limit = largestNode - 8 - keyCount
        if let recordLimit { limit = min(limit, recordLimit) }
        limit = max(limit, DocumentRecord.headerSize + 1)
        guard size > limit else { return nil }
        // The longest head that fits: most fields are then read from the head alone
        // (`ExecContext.completeBody`), and the tail is a leaf entry up to twice the limit
        // (beyond, it is on overflow pages: the tail's node has the same key, so the same
        // limit). Packs as well as halves (tessera-bench's documents: 189 vs 192 MB).
        return limit
    }
}

/// A reader's memory for records assembled from two pieces: valid until the next
/// `assemble` through the same buffer (or until the buffer is released).
final class RecordBuffer {
    private var base: UnsafeMutableRawPointer?
    private var capacity = 0

    init() {}

    deinit { base?.deallocate() }

    /// `head ‖ tail` in this buffer.
    func assemble(head: UnsafeRawBufferPointer, tail: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let n = head.count + tail.count
        if n > capacity {
            base?.deallocate()
            capacity = max(n, 4096, capacity * 2)
            base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        }
        let out = base!
        if head.count > 0 { out.copyMemory(from: head.baseAddress!, byteCount: head.count) }
        if tail.count > 0 { (out + head.count).copyMemory(from: tail.baseAddress!, byteCount: tail.count) }
        return UnsafeRawBufferPointer(start: out, count: n)
    }
}

/// A collection's document table and the table of its records' second pieces: whatever
/// reads documents needs both.
struct DocumentTables: Sendable {
    /// ID → record (or a record's head).
    let records: StorageTable
    /// ID → the second piece of a record in two pieces.
    let tails: StorageTable
    /// The collection's live IDs (`ids:`, the same keys as the live documents), when known:
    /// a walk over both cores cuts the ID range where this small table says
    /// (`PartitionedScan`).
    var liveIDs: StorageTable? = nil

    /// The whole record of document `id`, or nil when there is none (`buffer` as in
    /// `RecordAssembly.whole`).
    @inline(__always)
    func record(_ id: UnsafeRawBufferPointer, txn: Snapshot, buffer: RecordBuffer) throws -> UnsafeRawBufferPointer? {
        guard let stored = try txn.get(records, key: id) else { return nil }
        return try RecordAssembly.whole(stored, id: id, tails: tails, txn: txn, buffer: buffer)
    }

    /// `record` with the ID as a string.
    func record(_ id: String, txn: Snapshot, buffer: RecordBuffer) throws -> UnsafeRawBufferPointer? {
        var id = id
        return try id.withUTF8 { try record(UnsafeRawBufferPointer($0), txn: txn, buffer: buffer) }
    }

    /// The whole record of `stored`, the value of `id` in `records` (as `RecordAssembly.whole`).
    @inline(__always)
    func whole(_ stored: UnsafeRawBufferPointer, id: UnsafeRawBufferPointer, txn: Snapshot,
               buffer: RecordBuffer) throws -> UnsafeRawBufferPointer {
        try RecordAssembly.whole(stored, id: id, tails: tails, txn: txn, buffer: buffer)
    }
}

/// The second pieces of records read in ID order: a cursor on the tail table that moves
/// forward with the walk (a step per split record, where a lookup would descend the tree).
struct TailFollower {
    let cursor: BorrowedCursor
    private var positioned = false

    /// Follows `cursor`, a cursor on a tail table that the caller keeps open.
    init(_ cursor: BorrowedCursor) { self.cursor = cursor }

    /// The second piece of document `id`, or nil if there is none.
    mutating func tail(of id: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        if positioned {
            // The walk's next split record is usually the next tail.
            if try cursor.next() {
                let c = LMDB.compareKeys(cursor.key, id)
                if c == 0 { return cursor.value }
            }
        }
        positioned = try cursor.seekExact(id)
        return positioned ? cursor.value : nil
    }

    /// The whole record of `stored`, the value of `id` in the document table: `stored`
    /// itself, or both pieces assembled in `buffer`.
    @inline(__always)
    mutating func whole(_ stored: UnsafeRawBufferPointer, id: UnsafeRawBufferPointer,
                        buffer: RecordBuffer) throws -> UnsafeRawBufferPointer {
        guard DocumentRecord.isContinued(stored) else { return stored }
        guard let tail = try tail(of: id) else { throw RecordAssembly.missingTail(id) }
        return buffer.assemble(head: stored, tail: tail)
    }
}

extension DocumentTables {
    /// Calls `body` with each document's ID and whole record (`TailFollower`), in ID order,
    /// until it returns false. The record is valid until `body` returns.
    func forEach(_ txn: Snapshot, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        try forEach(txn, from: nil, to: nil, body)
    }

    /// `forEach` over the IDs `lower ..< upper` (nil bounds are open).
    func forEach(_ txn: Snapshot, from lower: [UInt8]?, to upper: [UInt8]?,
                 _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        let buffer = RecordBuffer()
        try txn.withCursor(records) { c in
            try txn.withCursor(tails) { tc in
                var follower = TailFollower(tc.borrowed)
                try c.forEach(from: lower, to: upper) { k, stored in try body(k, try follower.whole(stored, id: k, buffer: buffer)) }
            }
        }
    }
}

/// Whole records from their stored pieces.
enum RecordAssembly {
    /// The error for a record whose second piece is missing.
    static func missingTail(_ id: UnsafeRawBufferPointer) -> DatabaseError { missingTail(named: String(decoding: id, as: UTF8.self)) }

    /// `missingTail` with the ID as a string.
    static func missingTail(named id: String) -> DatabaseError {
        DatabaseError(.corrupt, "document '\(id)': its record continues in a second piece that is missing")
    }

    /// The whole record of document `id` whose document-table value is `stored`: `stored`
    /// itself when it is in one piece, else both pieces assembled in `buffer`.
    /// - Throws: `.corrupt` when the head says there is a tail and there is none.
    @inline(__always)
    static func whole(_ stored: UnsafeRawBufferPointer, id: UnsafeRawBufferPointer, tails: StorageTable,
                      txn: Snapshot, buffer: RecordBuffer) throws -> UnsafeRawBufferPointer {
        guard DocumentRecord.isContinued(stored) else { return stored }
        return try assemble(stored, id: id, tails: tails, txn: txn, buffer: buffer)
    }

    private static func assemble(_ head: UnsafeRawBufferPointer, id: UnsafeRawBufferPointer, tails: StorageTable,
                                 txn: Snapshot, buffer: RecordBuffer) throws -> UnsafeRawBufferPointer {
        guard let tail = try txn.get(tails, key: id) else { throw missingTail(id) }
        return buffer.assemble(head: head, tail: tail)
    }
}
