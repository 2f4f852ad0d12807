import Dispatch

// The vacuum's terms in batches rewritten on two threads (`FullTextPendingChanges.vacuum`).
//
// A vacuum rewrites every term with an entry of a retired document number: at half the live
// documents retired that is nearly every term, the whole postings table decoded, filtered and
// encoded again — work that needs no LMDB call once the blocks are copied out. So the writer
// copies a batch of whole terms' blocks (`VacuumBatch`), the writer and a helper thread each
// rewrite half of it into memory (`VacuumOutput`, through a `BlockWriter` that collects its
// blocks instead of putting them), and the writer then deletes the changed terms' old blocks and
// puts the new ones. LMDB is only ever called on the writer's thread, never while the helper
// reads the batch (the batch is a copy).

/// A batch of whole terms' blocks copied out of a postings table.
final class VacuumBatch: @unchecked Sendable {
    // @unchecked Sendable: immutable once made; read by the writer and one helper at a time.
    /// Every term's bytes and every block's key and value, one after the other.
    let bytes: [UInt8]
    /// Each block: its key and value in `bytes`, and its first document number.
    let blocks: [(key: Range<Int>, value: Range<Int>, first: UInt32)]
    /// Each term: its bytes and its blocks (in `blocks`), in key order.
    let terms: [(term: Range<Int>, blocks: Range<Int>)]

    /// The terms of `table` after the key `after` (from the first without one), until their
    /// blocks pass `maxBytes`.
    init(_ txn: WriteTransaction, _ table: StorageTable, after: [UInt8]?, maxBytes: Int) throws {
        var bytes: [UInt8] = []
        var blocks: [(key: Range<Int>, value: Range<Int>, first: UInt32)] = []
        var terms: [(term: Range<Int>, blocks: Range<Int>)] = []
        try txn.withCursor(table) { c in
            var ok: Bool
            if let after {
                ok = try c.seek(after)
                if ok && compareStoredKeys(c.key, after) == 0 { ok = try c.next() }
            } else {
                ok = try c.first()
            }
            while ok && bytes.count < maxBytes {
                guard let (termRaw, _) = FullTextPostingsCodec.splitBlockKey(c.key) else {
                    throw FullTextIndexCorruption("unreadable postings key")
                }
                let termStart = bytes.count
                bytes.append(contentsOf: termRaw)
                let term = termStart..<bytes.count
                let firstBlock = blocks.count
                while ok, let (t, first) = FullTextPostingsCodec.splitBlockKey(c.key),
                      t.count == term.count, bytes.withUnsafeBytes({ t.elementsEqual($0[term]) }) {
                    let keyStart = bytes.count
                    bytes.append(contentsOf: c.key)
                    let valueStart = bytes.count
                    bytes.append(contentsOf: c.value)
                    blocks.append((keyStart..<valueStart, valueStart..<bytes.count, first))
                    ok = try c.next()
                }
                terms.append((term, firstBlock..<blocks.count))
            }
        }
        self.bytes = bytes
        self.blocks = blocks
        self.terms = terms
    }

    /// Where to cut the terms in two halves of about the same bytes.
    func half() -> Int {
        guard let last = terms.last else { return 0 }
        let middle = blocks[last.blocks.upperBound - 1].value.upperBound / 2
        return terms.firstIndex { blocks[$0.blocks.lowerBound].key.lowerBound >= middle } ?? terms.count
    }

    /// A term's bytes.
    func termBytes(_ term: Range<Int>) -> [UInt8] { Array(bytes[term]) }

    /// Rewrites the terms `range` that have an entry of a retired number into `output`.
    func rewrite(_ range: Range<Int>, retired: RetiredNumbers, into output: VacuumOutput) throws {
        try bytes.withUnsafeBytes { b in
            var kept: [(UInt32, UnsafeRawBufferPointer)] = []
            for t in range {
                kept.removeAll(keepingCapacity: true)
                var stale = false
                for block in terms[t].blocks {
                    let (_, value, first) = blocks[block]
                    var it = PostingBlockIterator(value: UnsafeRawBufferPointer(rebasing: b[value]), firstDocument: first)
                    while let e = try it.next() {
                        if retired.contains(e.document) { stale = true; continue }
                        kept.append((e.document, e.body))
                    }
                }
                guard stale else { continue }
                let start = output.blocks.count
                if !kept.isEmpty { try output.writer.write(term: termBytes(terms[t].term), entries: kept) }
                output.changed.append((t, start..<output.blocks.count))
            }
        }
    }
}

/// The blocks a `VacuumBatch.rewrite` made, put by the writer afterwards (`apply`).
final class VacuumOutput: @unchecked Sendable {
    // @unchecked Sendable: filled by one thread, read by the writer after it has finished.
    /// Every new block's key and value, one after the other.
    private(set) var bytes: [UInt8] = []
    private(set) var blocks: [(key: Range<Int>, value: Range<Int>)] = []
    /// The terms rewritten (positions in the batch) and their new blocks.
    var changed: [(term: Int, blocks: Range<Int>)] = []
    /// Made on the thread that rewrites (it only collects).
    lazy var writer = BlockWriter(collectingInto: self)
    /// The rewrite's error.
    var error: (any Error)?

    deinit { writer.deallocate() }

    /// Keeps a block `BlockWriter` made.
    func add(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        let k = bytes.count
        bytes.append(contentsOf: key)
        let v = bytes.count
        bytes.append(contentsOf: value)
        blocks.append((k..<v, v..<bytes.count))
    }

    /// Replaces the changed terms' blocks of `batch` in `table` with the new ones.
    func apply(_ batch: VacuumBatch, _ txn: WriteTransaction, _ table: StorageTable) throws {
        try batch.bytes.withUnsafeBytes { old in
            try bytes.withUnsafeBytes { new in
                for (term, made) in changed {
                    for block in batch.terms[term].blocks {
                        _ = try txn.delete(table, key: UnsafeRawBufferPointer(rebasing: old[batch.blocks[block].key]))
                    }
                    for block in made {
                        let (key, value) = blocks[block]
                        try txn.put(table, key: UnsafeRawBufferPointer(rebasing: new[key]), value: UnsafeRawBufferPointer(rebasing: new[value]))
                    }
                }
            }
        }
    }
}
