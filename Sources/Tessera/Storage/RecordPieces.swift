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
// binary format is bounds-checked, so a read that would cross the end fails instead). An
// index back-fill likewise reads a head alone when the values it indexes are whole in it
// (`WalkedRecord`, `KeyedIndexKind.appendEntries(head:)`): it then neither touches the `tail:`
// table's pages nor copies the record.
// The revision digest and the body format do not change: a split record assembles to the
// bytes it would have had in one piece.
//
// Records are also cut where a leaf page ends. An appended record that does not fit the
// rest of the last leaf page made LMDB start a new page and leave that rest empty: records of
// 1–2 KB, two or three to a page, left a sixth of tessera-bench's document pages empty. An
// append (a new document after every stored ID, or the held records of a batch written out
// in ID order) now cuts such a record to fill the rest, when the head keeps at least
// `RecordSplitting.leastPackedHead` bytes, and stores the rest as its tail
// (`Transaction.appendRecords`, which learns the room left on the page from LMDB's cursor:
// `tessera_mdb_append_records` in guard.c). Held records are therefore held whole and cut
// as they are written out (`RecordTablePacking`); records put among existing keys (updates)
// are cut only when they do not fit a leaf node, as before. Readers cannot tell the
// difference: a head may have any length. Databases of format 7 need nothing rewritten (none
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

    /// How appended records are cut (`Transaction.appendRecords`): as `headSize` says, or where
    /// the leaf page they are appended to ends.
    let packing: RecordPacking

    /// The shortest head a record is cut to where a page ends: the root object's table and its
    /// small members (the encoder writes them first) are then in the head, so most queries still
    /// read the head alone. tessera-bench's documents (1.5 KB on average, two or three to a leaf
    /// page) left 17 % of the document table's pages empty when each record that did not fit the
    /// rest of a page started the next; cut at the page's end when the head keeps 768 bytes, the
    /// table is 11 % smaller and 30 % of the records are in two pieces instead of 20 %.
    static let leastPackedHead = 768

    /// `recordLimit`: a smaller limit on a record's head, for tests (nil: what fits a leaf node).
    init(pageSize: Int, recordLimit: Int?) {
        // mdb.c: me_nodemax = (((psize - PAGEHDRSZ) / MDB_MINKEYS) & -2) - sizeof(indx_t).
        largestNode = (((pageSize - 16) / 2) & ~1) - 2
        // With a test's small limit, records are cut at pages' ends too (heads of half the limit).
        let least = recordLimit.map { max(DocumentRecord.headerSize + 1, $0 / 2) } ?? Self.leastPackedHead
        packing = RecordPacking(largestNode: largestNode, recordLimit: recordLimit, smallestHead: DocumentRecord.headerSize + 1,
                                leastPackedHead: least, pageSize: pageSize, continuedFlag: DocumentRecord.continuedFlag)
    }

    /// The size of the head of a record of `size` bytes stored under a key of `keyCount`
    /// bytes, or nil when the record stays in one piece.
    ///
    /// A record appended after the table's last key may be cut shorter, where the leaf page
    /// ends (`packing`; both cuts are computed in one place, `tessera_record_head` in C).
    func headSize(recordSize size: Int, keyCount: Int) -> Int? {
        // The longest head that fits: most fields are then read from the head alone
        // (`ExecContext.completeBody`), and the tail is a leaf entry up to twice the limit
        // (beyond, it is on overflow pages: the tail's node has the same key, so the same
        // limit). Packs as well as halves (tessera-bench's documents: 189 vs 192 MB).
        let head = packing.headSize(recordSize: size, keyCount: keyCount)
        return head < size ? head : nil
    }
}

/// A document table's tail table and where its records are cut, for the puts it holds back
/// (`DeferredPuts.records`): they hold records whole and cut them as they write them out.
struct RecordTablePacking {
    let tails: StorageTable
    let splitting: RecordSplitting

    /// Puts `record` under `key` in the document table `table` at its place among the keys (not
    /// appended): in two pieces when it does not fit a leaf node, the second to `putTail`. A head
    /// whose tail is stored already (an appended record taken back into the held puts) is put
    /// as it is.
    func put(key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer, in table: StorageTable, txn: Transaction,
             putTail: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        guard !DocumentRecord.isContinued(record),
              let head = splitting.headSize(recordSize: record.count, keyCount: key.count) else {
            try txn.put(table, key: key, value: record)
            return
        }
        try txn.putReserved(table, key: key, size: head) { out in
            out.copyMemory(from: UnsafeRawBufferPointer(rebasing: record[..<head]))
            out[0] |= DocumentRecord.continuedFlag
        }
        try putTail(key, UnsafeRawBufferPointer(rebasing: record[head...]))
    }
}

extension WriteTransaction {
    /// Stores the record `header ‖ body` of document `key` in `tables`, in one piece or two,
    /// and removes or replaces the tail of the record it replaces (`oldContinued`):
    ///
    /// - while the document table holds its puts back: whole (the write-out cuts it);
    /// - appended after the table's last key (`flags` has `.append`): cut at the largest leaf
    ///   node, or where the leaf page it goes to ends (`RecordSplitting.packing`);
    /// - elsewhere: in two pieces when it does not fit a leaf node (`headSize`).
    func putRecord(_ tables: DocumentTables, key: UnsafeRawBufferPointer, header: DocumentRecord,
                   body: UnsafeRawBufferPointer, flags: StoragePutFlags, oldContinued: Bool,
                   splitting: RecordSplitting) throws {
        let size = DocumentRecord.headerSize + body.count
        if held(tables.records) != nil {
            if oldContinued { try delete(tables.tails, key: key) }
            try putReserved(tables.records, key: key, size: size) { out in
                header.writeHeader(into: out)
                UnsafeMutableRawBufferPointer(rebasing: out[DocumentRecord.headerSize...]).copyMemory(from: body)
            }
            return
        }
        if flags.contains(.append) {
            let head = try withUnsafeTemporaryAllocation(byteCount: DocumentRecord.headerSize, alignment: 8) { h in
                header.writeHeader(into: h)
                return try lmdb.appendRecord(tables.records, key: key, prefix: UnsafeRawBufferPointer(h), value: body,
                                             packing: splitting.packing)
            }
            if let head {
                if head < size {
                    try put(tables.tails, key: key, value: UnsafeRawBufferPointer(rebasing: body[(head - DocumentRecord.headerSize)...]),
                            flags: .append)
                } else if oldContinued {
                    try delete(tables.tails, key: key)
                }
                return
            }
            // Not after the table's last key: put at its place, below.
        }
        let head = splitting.headSize(recordSize: size, keyCount: key.count)
        // The old record's tail goes (or is replaced) before anything else is put.
        if oldContinued && head == nil { try delete(tables.tails, key: key) }
        let headBody = (head ?? size) - DocumentRecord.headerSize
        try putReserved(tables.records, key: key, size: head ?? size) { out in
            header.writeHeader(into: out)
            if head != nil { out[0] |= DocumentRecord.continuedFlag }
            UnsafeMutableRawBufferPointer(rebasing: out[DocumentRecord.headerSize...])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: body[..<headBody]))
        }
        if head != nil {
            try put(tables.tails, key: key, value: UnsafeRawBufferPointer(rebasing: body[headBody...]))
        }
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
        try forEachStored(txn, from: lower, to: upper) { r in try body(r.id, try r.whole()) }
    }

    /// Calls `body` with each entry of the document table as stored, in ID order, until it
    /// returns false: a walk that reads a record's second piece only when `body` asks for the
    /// whole record (`WalkedRecord.whole()`).
    func forEachStored(_ txn: Snapshot, from lower: [UInt8]? = nil, to upper: [UInt8]? = nil,
                       _ body: (WalkedRecord) throws -> Bool) throws {
        let buffer = RecordBuffer()
        try txn.withCursor(records) { c in
            try txn.withCursor(tails) { tc in
                var follower = TailFollower(tc.borrowed)
                try withUnsafeMutablePointer(to: &follower) { f in
                    try c.forEach(from: lower, to: upper) { k, stored in
                        try body(WalkedRecord(id: k, stored: stored, follower: f, buffer: buffer))
                    }
                }
            }
        }
    }
}

/// A document-table entry met by a walk (`DocumentTables.forEachStored`): the document's ID,
/// its record as stored (whole, or the head of a record in two pieces) and, on demand, the
/// whole record. Valid only during the call it is passed to.
///
/// A reader that needs only values whole in a head (`BinaryValue.isWholeScalar`: the head is
/// a prefix of the record and every read is bounds-checked) reads the head alone: an index
/// back-fill then touches neither the pages of the `tail:` table nor copies the record.
struct WalkedRecord {
    /// The document ID (the entry's key).
    let id: UnsafeRawBufferPointer
    /// The entry's value: a whole record, or a head with `DocumentRecord.continuedFlag` set.
    let stored: UnsafeRawBufferPointer
    fileprivate let follower: UnsafeMutablePointer<TailFollower>
    fileprivate let buffer: RecordBuffer

    /// True when `stored` is the head of a record in two pieces.
    @inline(__always)
    var isContinued: Bool { DocumentRecord.isContinued(stored) }

    /// The whole record: `stored` itself, or both pieces assembled in the walk's buffer (valid
    /// until the next entry).
    /// - Throws: `.corrupt` when the second piece is missing.
    @inline(__always)
    func whole() throws -> UnsafeRawBufferPointer {
        try follower.pointee.whole(stored, id: id, buffer: buffer)
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
