#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch

// A collection's documents walked on both cores, for work that reads every document and
// writes none while it reads (an index back-fill, which writes only its index's tables).
//
// A write transaction's handle belongs to one thread, so the second thread reads a snapshot
// of its own: a read transaction begun during the write transaction starts from the same
// commit (LMDB admits one writer at a time), so it sees a table exactly as the writer does
// as long as the writer has not changed that table (`WriteTransaction.hasChanged`). When it
// has (documents saved earlier in the same batch), the writer walks every piece itself; a
// small table is walked in one piece.
//
// The ID range is cut into pieces of about the same size: from the top of the document
// table's committed B-tree (`WriteTransaction.cutKeys`: the first keys of every n-th subtree
// of a level with enough of them, a few branch pages read), or, when the tree cannot be read
// so (a one-page table, a page that does not look right), at every n-th key of the
// collection's table of live IDs (keys only: a walk of it reads about 2 % of the pages the
// documents take). The two threads take pieces in order, one at a time, each piece into a
// part of its own, and the parts are consumed in ID order by the caller's thread. The worker
// starts before the cuts are found and walks each piece as soon as the cut after it is known.
// Uneven pieces (many tombstones in one) would cost parallelism, never correctness: a piece
// is a key range, and together the ranges cover every key once.

/// Walks a document table on two threads (see the comment at the top of this file).
enum PartitionedScan {
    /// Below this many documents one thread walks the table.
    static let minimumDocuments = 8_192
    /// Pieces the ID range is cut into, at least (more for large tables: about 2,048
    /// documents per piece, up to 1,024 pieces).
    static let pieceCount = 64
    /// Pieces walked but not yet consumed, at most (bounds the memory parts hold).
    static let window = 8
    /// Whether the process may run on more than one core.
    static var hasSecondCore: Bool { ProcessInfo.processInfo.activeProcessorCount > 1 }

    /// Calls `visit` with each document-table entry (`WalkedRecord`: the ID, the record as
    /// stored, the whole record on demand), piece by piece, and hands each piece's part to
    /// `consume` in ID order: the parts, concatenated, are what one walk of the table in ID
    /// order would have produced. Each part is made by `makePart` with the
    /// snapshot its thread reads (`txn` or a read snapshot of the same commit); `visit` runs on
    /// either thread, for different parts at once, and must touch nothing but its part.
    /// `consume` runs on the calling thread, between walks of its own.
    ///
    /// Puts of the tables held back by `txn` are written out first. The second thread is
    /// `worker` when given (left running: the caller stops it), else one of its own.
    /// `minimumDocuments` and `pieces` (at most that many) are for tests. The first error
    /// thrown on either thread is thrown once both have stopped; nothing is consumed after it.
    static func run<Part>(_ docs: DocumentTables, txn: WriteTransaction,
                          minimumDocuments: Int = minimumDocuments, pieces: Int? = nil, worker: WorkerThread? = nil,
                          makePart: @escaping (Snapshot) -> Part,
                          visit: @escaping (inout Part, WalkedRecord) throws -> Void,
                          consume: (Part) throws -> Void) throws {
        try txn.writeOutHeld(docs.records)
        try txn.writeOutHeld(docs.tails)
        guard let liveIDs = docs.liveIDs, try txn.count(docs.records) >= minimumDocuments else {
            var part = makePart(txn)
            try docs.forEachStored(txn) { r in try visit(&part, r); return true }
            try consume(part)
            return
        }
        let live = try txn.count(liveIDs)
        let pieces = pieces ?? min(max(pieceCount, live / 2_048), 1_024)
        // Walks the IDs lower ..< upper into a part.
        let walk = { (lower: [UInt8]?, upper: [UInt8]?, snapshot: Snapshot) throws -> Part in
            var part = makePart(snapshot)
            try docs.forEachStored(snapshot, from: lower, to: upper) { r in try visit(&part, r); return true }
            return part
        }
        // The writer reads alone a table it has changed (and on one core, or when no reader
        // slot is free).
        guard hasSecondCore, !txn.hasChanged(docs.records), !txn.hasChanged(docs.tails),
              let reader = try? txn.beginReadSnapshot() else {
            var lower: [UInt8]? = nil
            for cut in try splitKeys(liveIDs, count: live, pieces: pieces, txn: txn) + [nil] {
                try consume(try walk(lower, cut, txn))
                lower = cut
            }
            return
        }
        defer { txn.endReadSnapshot(reader) }
        let shared = ScanPieces<Part>(window: window)
        let finished = DispatchSemaphore(value: 0)
        let work = UncheckedSendable(value: { shared.walkAsWorker { try walk($0, $1, reader) } })
        let thread = worker ?? WorkerThread(name: "tessera-scan")
        thread.submit {
            work.value()
            finished.signal()
        }
        if worker == nil { thread.stop() }
        defer { finished.wait() }
        do {
            if let cuts = txn.cutKeys(docs.records, pieces: pieces), !cuts.isEmpty {
                for cut in cuts { shared.cut(at: cut) }
            } else {
                try forEachCut(liveIDs, count: live, pieces: pieces, txn: txn) { shared.cut(at: $0) }
            }
            shared.finishCutting()
            while let part = try shared.nextInOrder(walking: { try walk($0, $1, txn) }) { try consume(part) }
        } catch {
            shared.fail(error)
            throw error
        }
    }

    /// Keys that cut `table` (of `count` keys) into `pieces` runs of about the same number of
    /// keys: every (count / pieces)-th key, ascending (`forEachCut`).
    static func splitKeys(_ table: StorageTable, count: Int, pieces: Int, txn: Snapshot) throws -> [[UInt8]] {
        var keys: [[UInt8]] = []
        try forEachCut(table, count: count, pieces: pieces, txn: txn) { keys.append($0) }
        return keys
    }

    /// Calls `body` with each key that cuts `table` (of `count` keys) into `pieces` runs of
    /// about the same number of keys — every (count / pieces)-th key, ascending — as the walk
    /// meets it. A walk of a small table (the live IDs: keys only, about 2 % of the documents'
    /// pages).
    static func forEachCut(_ table: StorageTable, count: Int, pieces: Int, txn: Snapshot,
                           _ body: ([UInt8]) -> Void) throws {
        let step = count / max(pieces, 1)
        guard step > 0, pieces > 1 else { return }
        var i = 0, cuts = 0
        try txn.withCursor(table) { c in
            try c.forEach { k, _ in
                if i > 0 && i % step == 0 {
                    body(Array(k))
                    cuts += 1
                    if cuts == pieces - 1 { return false }
                }
                i += 1
                return true
            }
        }
    }
}

/// The pieces of a `PartitionedScan` and what the two threads know of them: each piece's ID
/// range as the cuts are found, the next piece to take, each walked piece's part until it is
/// consumed, how many are consumed, and the first error. A thread takes a piece once the cut
/// after it is found (or the last is), and only within `window` pieces of the next to consume.
private final class ScanPieces<Part>: @unchecked Sendable {
    // @unchecked Sendable: every field is read and written under `condition`'s lock.
    private let condition = ThreadCondition()
    private var ranges: [(lower: [UInt8]?, upper: [UInt8]?)] = []
    private var allCut = false
    private var parts: [Part?] = []
    private var walked: [Bool] = []
    private var nextToTake = 0
    private var consumed = 0
    private var failure: (any Error)?
    private let window: Int

    init(window: Int) {
        self.window = window
    }

    /// Adds the piece that ends before `key` (the next cut).
    func cut(at key: [UInt8]) {
        condition.lock()
        ranges.append((lower: ranges.last?.upper, upper: key))
        parts.append(nil)
        walked.append(false)
        condition.broadcast()
        condition.unlock()
    }

    /// Adds the last piece (from the last cut to the end): every piece is known.
    func finishCutting() {
        condition.lock()
        ranges.append((lower: ranges.last?.upper, upper: nil))
        parts.append(nil)
        walked.append(false)
        allCut = true
        condition.broadcast()
        condition.unlock()
    }

    /// Records the first error; both threads stop taking pieces.
    func fail(_ error: any Error) {
        condition.lock()
        if failure == nil { failure = error }
        condition.broadcast()
        condition.unlock()
    }

    /// Stores piece `i`'s part.
    private func finish(_ i: Int, _ part: Part) {
        condition.lock()
        parts[i] = part
        walked[i] = true
        condition.broadcast()
        condition.unlock()
    }

    /// Whether the next piece can be taken now (called under the lock).
    private var canTake: Bool { nextToTake < ranges.count && nextToTake < consumed + window }

    /// The worker's loop: takes pieces in order as they are cut and while the window allows,
    /// until none is left.
    func walkAsWorker(_ walk: ([UInt8]?, [UInt8]?) throws -> Part) {
        while true {
            condition.lock()
            while failure == nil && !(allCut && nextToTake >= ranges.count) && !canTake { condition.wait() }
            if failure != nil || !canTake {
                condition.unlock()
                return
            }
            let i = nextToTake
            let range = ranges[i]
            nextToTake += 1
            condition.unlock()
            do { finish(i, try walk(range.lower, range.upper)) } catch {
                fail(error)
                return
            }
        }
    }

    /// The caller's loop step: the next part in order once it is walked (nil after the last),
    /// walking pieces itself while it would otherwise wait. Throws the worker's error.
    func nextInOrder(walking walk: ([UInt8]?, [UInt8]?) throws -> Part) throws -> Part? {
        condition.lock()
        while true {
            if let failure {
                condition.unlock()
                throw failure
            }
            if allCut && consumed == ranges.count {
                condition.unlock()
                return nil
            }
            if consumed < ranges.count && walked[consumed] {
                let part = parts[consumed].take()
                consumed += 1
                condition.broadcast()
                condition.unlock()
                return part
            }
            if canTake {
                let i = nextToTake
                let range = ranges[i]
                nextToTake += 1
                condition.unlock()
                let part = try walk(range.lower, range.upper)
                condition.lock()
                parts[i] = part
                walked[i] = true
                continue
            }
            condition.wait()
        }
    }
}

/// A value handed to another thread that the sender no longer touches until that thread is
/// done with it (the scan waits for its worker before returning).
private struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
}
