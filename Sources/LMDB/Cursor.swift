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

    @usableFromInline
    init(raw: OpaquePointer, txn: Transaction) {
        self.raw = raw
        self.txn = txn
        self.window = txn.window.map { Unmanaged.passUnretained($0) }
        // A write transaction's clean pages are in the map too (its own copies are not).
        (mapLow, mapHigh, pageSize) = (txn.window ?? txn.pages)?.bounds ?? (0, 0, 4096)
    }

    /// Closes the cursor (idempotent).
    @usableFromInline
    func close() {
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
    @inlinable package func first() throws -> Bool { try move(MDB_FIRST) }
    /// Moves to the last entry; false if the table is empty.
    @inlinable package func last() throws -> Bool { try move(MDB_LAST) }
    /// Moves to the next entry; false at the end.
    @inlinable package func next() throws -> Bool { try move(MDB_NEXT) }
    /// Moves to the previous entry; false at the start.
    @inlinable package func prev() throws -> Bool { try move(MDB_PREV) }

    /// Moves to the first entry whose key is ≥ `key`; false if there is none.
    @inlinable
    package func seek(_ key: UnsafeRawBufferPointer) throws -> Bool {
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
