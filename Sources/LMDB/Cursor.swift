import CLMDB
import CLMDBGuard
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A position in a table, moving in key order. Obtained from `Transaction.withCursor`.
///
/// After a successful move, `key` and `value` hold the current entry's bytes (valid until
/// the next move or write).
@usableFromInline package final class Cursor {
    // Hot per-row state: exclusivity is this class's own business (a cursor is used by one
    // thread at a time), so skip the runtime's dynamic access tracking.
    @exclusivity(unchecked) @usableFromInline var raw: OpaquePointer?
    @usableFromInline let txn: Transaction
    /// The transaction's `window` (read-only transactions), held here so that a move does not
    /// retain and release it through `txn` (the transaction keeps it alive as long as this
    /// cursor is usable).
    /// Unmanaged: a move reads it without retaining it (an `unowned(unsafe)` optional is still
    /// retained when unwrapped).
    @usableFromInline let window: Unmanaged<MapWindow>?
    @exclusivity(unchecked) @usableFromInline var k = MDB_val()
    @exclusivity(unchecked) @usableFromInline var v = MDB_val()
    /// The part of the map `prefetchPage` may read (the map's address and the file's known
    /// end when the cursor opened; nothing when they were not known), and the page size.
    @usableFromInline let mapLow: UInt
    @usableFromInline let mapHigh: UInt
    @usableFromInline let pageSize: UInt
    /// The leaf page `prefetchPage` saw last.
    @exclusivity(unchecked) @usableFromInline var prefetchedPage: UInt = 0
    /// Set on a cursor that walks two tables as one (`init(merging:_:)`); nil on every other,
    /// whose moves then cost one more comparison with nil.
    @exclusivity(unchecked) @usableFromInline var merged: MergedPosition?

    @usableFromInline
    init(raw: OpaquePointer, txn: Transaction) {
        self.raw = raw
        self.txn = txn
        self.window = txn.window.map { Unmanaged.passUnretained($0) }
        // A write transaction's clean pages are in the map too (its own copies are not).
        (mapLow, mapHigh, pageSize) = (txn.window ?? txn.pages)?.bounds ?? (0, 0, 4096)
    }

    /// A cursor over the union of two tables whose keys never coincide (an index's entries
    /// and its recent ones): it moves in key order over both, `key` and `value` those of the
    /// entry it is on, whichever table holds it. Closing it closes both.
    package init(merging a: Cursor, _ b: Cursor) {
        raw = nil
        txn = a.txn
        window = a.window
        (mapLow, mapHigh, pageSize) = (a.mapLow, a.mapHigh, a.pageSize)
        merged = MergedPosition(a, b)
    }

    /// Closes the cursor (idempotent).
    @usableFromInline
    func close() {
        if let m = merged {
            m.a.close()
            m.b.close()
            return
        }
        if let raw, txn.raw != nil || txn.readOnly { mdb_cursor_close(raw) }
        raw = nil
    }

    /// Closes a cursor obtained from `openCursor`.
    @usableFromInline package func closeCursor() { close() }

    /// The current key.
    @inlinable package var key: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size) }
    /// The current value.
    @inlinable package var value: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size) }

    /// Starts loading the current value's second and third cache lines, so that reading a
    /// field past the first line does not wait for a second miss after the first.
    @inlinable package func prefetchValue() {
        guard let p = v.mv_data else { return }
        if v.mv_size > 64 { tessera_prefetch(p + 64) }
        if v.mv_size > 128 { tessera_prefetch(p + 128) }
    }

    /// When the current entry is the first one a walk reads of its leaf page: starts loading
    /// the first lines of every entry of that page and of the page after it in the file
    /// (`tessera_prefetch_leaf`), so that the walk's waits for memory overlap instead of coming
    /// one per entry. A page outside the map (a write transaction's own copy) is not read.
    @inlinable @inline(__always) package func prefetchPage() {
        let p = UInt(bitPattern: v.mv_data) & ~(pageSize &- 1)
        if p == prefetchedPage { return }
        prefetchedPage = p
        if p >= mapLow && p &+ pageSize <= mapHigh { tessera_prefetch_leaf(UnsafePointer(bitPattern: p), UInt32(pageSize)) }
    }

    @inlinable
    func move(_ op: MDB_cursor_op) throws -> Bool {
        let rc = tessera_mdb_cursor_get(UnsafeMutableRawPointer(raw), &k, &v, op.rawValue)
        if rc == MDB_NOTFOUND { return false }
        try check(rc)
        if let window, !window._withUnsafeGuaranteedRef({ [k, v] w in w.contains(k) && w.contains(v) }) {
            let w = window.takeUnretainedValue()
            try w.check(k)
            try w.check(v)
        }
        return true
    }

    /// Moves to the first entry; false if the table is empty.
    @inlinable package func first() throws -> Bool {
        if merged != nil { return try mergedMove(.first, nil) }
        return try move(MDB_FIRST)
    }
    /// Moves to the last entry; false if the table is empty.
    @inlinable package func last() throws -> Bool {
        if merged != nil { return try mergedMove(.last, nil) }
        return try move(MDB_LAST)
    }
    /// Moves to the next entry; false at the end.
    @inlinable package func next() throws -> Bool {
        if merged != nil { return try mergedMove(.next, nil) }
        return try move(MDB_NEXT)
    }
    /// Moves to the previous entry; false at the start.
    @inlinable package func prev() throws -> Bool {
        if merged != nil { return try mergedMove(.prev, nil) }
        return try move(MDB_PREV)
    }

    /// Moves to the first entry whose key is ≥ `key`; false if there is none.
    @inlinable
    package func seek(_ key: UnsafeRawBufferPointer) throws -> Bool {
        if merged != nil { return try mergedMove(.seek, key) }
        k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        return try move(MDB_SET_RANGE)
    }

    /// Moves to the first entry whose key is ≥ `key`.
    @inlinable
    package func seek(_ key: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { try seek($0) }
    }

    /// Moves to the entry with exactly `key`; false if absent.
    @inlinable
    package func seekExact(_ key: UnsafeRawBufferPointer) throws -> Bool {
        if merged != nil { return try mergedMove(.seek, key) && compareKeys(self.key, key) == 0 }
        k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        return try move(MDB_SET_KEY)
    }

    /// Moves to the last entry whose key is ≤ `key`; false if there is none.
    @usableFromInline package func seekLast(atOrBefore key: [UInt8]) throws -> Bool {
        if try seek(key) {
            if compareKeys(self.key, key) == 0 { return true }
            return try prev()
        }
        return try last()
    }

    /// Deletes the current entry.
    @usableFromInline package func deleteCurrent() throws {
        if let m = merged {
            // The other cursor stays where it is: the next move in the same direction finds
            // the entry after the deleted one (LMDB's rule) and compares it with it.
            try (m.onB ? m.b : m.a).deleteCurrent()
            return
        }
        txn.noteChange(mdb_cursor_dbi(raw))
        let rc = tessera_mdb_cursor_del(UnsafeMutableRawPointer(raw), 0)
        try txn.checkWrite(rc)
    }

    /// Calls `body` for each entry with `lower <= key < upper` (nil bounds are open), in order.
    /// `body` returns false to stop.
    @inlinable @inline(__always)
    package func forEach(from lower: [UInt8]? = nil, to upper: [UInt8]? = nil,
                        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        var ok: Bool
        if let lower { ok = try seek(lower) } else { ok = try first() }
        while ok {
            if let upper, compareKeys(key, upper) >= 0 { return }
            prefetchPage()
            if try !body(key, value) { return }
            ok = try next()
        }
    }

    /// Calls `body` for each entry whose key starts with `prefix`.
    @inlinable
    package func forEach(prefix: [UInt8], _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        var ok = try seek(prefix)
        while ok {
            if !hasPrefix(key, prefix) { return }
            if try !body(key, value) { return }
            ok = try next()
        }
    }
}

// MARK: - Two tables walked as one

/// Where a merged cursor (`Cursor.init(merging:_:)`) stands in each of its two tables. The
/// tables never hold the same key, so the union has one order and each entry is in exactly one
/// of them: moving forward, each cursor stands on its first entry not yet passed and the merged
/// entry is the smaller of the two; moving backward, the larger of the two last ones. Turning
/// round repositions only the cursor the merged entry is not on.
@usableFromInline package final class MergedPosition {
    @usableFromInline let a: Cursor
    @usableFromInline let b: Cursor
    /// Whether each cursor stands on an entry (false once it ran off its table's end).
    var aOK = false
    var bOK = false
    /// The merged entry is `b`'s (else `a`'s, when there is one).
    @usableFromInline var onB = false
    /// The direction of the last move: the cursor not on the merged entry is past it that way.
    var forward = true

    init(_ a: Cursor, _ b: Cursor) {
        self.a = a
        self.b = b
    }
}

@usableFromInline enum MergedMove { case first, last, next, prev, seek }

extension Cursor {
    /// One move of a merged cursor (`key` for `.seek`).
    @usableFromInline @inline(never)
    func mergedMove(_ op: MergedMove, _ key: UnsafeRawBufferPointer?) throws -> Bool {
        let m = merged!
        switch op {
        case .first:
            (m.aOK, m.bOK, m.forward) = (try m.a.first(), try m.b.first(), true)
        case .last:
            (m.aOK, m.bOK, m.forward) = (try m.a.last(), try m.b.last(), false)
        case .seek:
            (m.aOK, m.bOK, m.forward) = (try m.a.seek(key!), try m.b.seek(key!), true)
        case .next, .prev:
            let forward = op == .next
            guard m.onB ? m.bOK : m.aOK else { return false }
            if m.forward != forward {
                // Turning round: the other cursor is past the merged entry the old way; put it
                // on its first entry past it the new way (it never holds the merged key).
                let here = (m.onB ? m.b : m.a).key
                let other = m.onB ? m.a : m.b
                let ok: Bool
                if forward {
                    ok = try other.seek(here)
                } else {
                    ok = try other.seek(here) ? try other.prev() : try other.last()
                }
                if m.onB { m.aOK = ok } else { m.bOK = ok }
                m.forward = forward
            }
            if m.onB { m.bOK = forward ? try m.b.next() : try m.b.prev() }
            else { m.aOK = forward ? try m.a.next() : try m.a.prev() }
        }
        // The merged entry: the nearer of the two in the direction of travel.
        if m.aOK && m.bOK {
            let c = compareKeys(m.a.key, m.b.key)
            m.onB = m.forward ? c > 0 : c < 0
        } else if m.aOK || m.bOK {
            m.onB = m.bOK
        } else {
            return false
        }
        let from = m.onB ? m.b : m.a
        (k, v) = (from.k, from.v)
        return true
    }
}

/// Asks the processor to start loading the cache line holding `p` (a hint: never faults,
/// whatever the address). For loops that read memory in an order the hardware cannot guess.
@inlinable @inline(__always)
package func prefetchMemory(_ p: UnsafeRawPointer) { tessera_prefetch(p) }

/// memcmp order of two byte strings, shorter first on a common prefix (LMDB's default order).
@inlinable
package func compareKeys(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Int {
    b.withUnsafeBytes { compareKeys(a, $0) }
}

/// memcmp order of two byte strings, shorter first on a common prefix (LMDB's default order).
@inlinable
package func compareKeys(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let n = min(a.count, b.count)
    if n > 0 {
        let c = memcmp(a.baseAddress!, b.baseAddress!, n)
        if c != 0 { return Int(c) }
    }
    return a.count - b.count
}

/// True if `key` starts with `prefix`.
@inlinable
package func hasPrefix(_ key: UnsafeRawBufferPointer, _ prefix: [UInt8]) -> Bool {
    if key.count < prefix.count { return false }
    return prefix.withUnsafeBytes { p in
        p.count == 0 || memcmp(key.baseAddress!, p.baseAddress!, p.count) == 0
    }
}
