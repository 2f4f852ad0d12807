import CLMDB
import CLMDBGuard

/// Keys of one table to look up together (`Transaction.get(_:from:)`), and then their values.
///
/// In a read-only transaction the keys walk down the table's B-tree side by side
/// (`tessera_mdb_get_many`): the pages of all of them are requested before any is read, so
/// the waits for memory of a row of lookups overlap instead of adding up — a lookup's pages
/// are rarely in the CPU's caches. Anything that walk does not find is asked of LMDB
/// (`mdb_get`), which decides. In a write transaction each key is an ordinary `get`.
///
/// The key bytes are not copied: they must stay valid until the values have been read.
package final class GetBatch {
    /// The most keys a batch holds.
    package static let maxCount = Int(TESSERA_LMDB_GET_MANY_MAX)

    @usableFromInline let keys: UnsafeMutablePointer<MDB_val>
    @usableFromInline let values: UnsafeMutablePointer<MDB_val>
    /// Per key: 1 found (`values` holds it), 0 absent.
    @usableFromInline let found: UnsafeMutablePointer<UInt8>
    /// Keys in the batch.
    @exclusivity(unchecked) package private(set) var count = 0

    package init() {
        keys = .allocate(capacity: Self.maxCount)
        values = .allocate(capacity: Self.maxCount)
        found = .allocate(capacity: Self.maxCount)
        found.initialize(repeating: 0, count: Self.maxCount)
    }

    deinit {
        keys.deallocate()
        values.deallocate()
        found.deallocate()
    }

    /// True when the batch holds `maxCount` keys.
    @inlinable package var isFull: Bool { count >= Self.maxCount }

    /// Empties the batch.
    @inlinable package func removeAll() { count = 0 }

    /// Adds a key (not copied). Ignored when the batch is full.
    @inlinable
    package func append(key: UnsafeRawBufferPointer) {
        guard count < Self.maxCount else { return }
        keys[count] = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        found[count] = 0
        count &+= 1
    }

    /// Key `i`.
    @inlinable
    package func key(at i: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: keys[i].mv_data, count: keys[i].mv_size)
    }

    /// The value of key `i` after the lookup, nil if absent. Valid as long as a value `get`
    /// returns from the same transaction.
    @inlinable
    package func value(at i: Int) -> UnsafeRawBufferPointer? {
        found[i] == 1 ? UnsafeRawBufferPointer(start: values[i].mv_data, count: values[i].mv_size) : nil
    }

    /// Sets the value of key `i` (a lookup made another way).
    @inlinable
    package func setValue(_ value: UnsafeRawBufferPointer?, at i: Int) {
        if let value {
            values[i] = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
            found[i] = 1
        } else {
            found[i] = 0
        }
    }
}

extension Transaction {
    /// Looks up every key of `batch` in `table` (`GetBatch`): afterwards `batch.value(at:)`
    /// gives each key's value, or nil.
    package func get(_ batch: GetBatch, from table: Table) throws {
        let n = batch.count
        if n == 0 { return }
        if n > 1, let tree = try tree(of: table) {
            var t = tree
            try check(tessera_mdb_get_many(&t, n, batch.keys, batch.values, batch.found))
        }
        for i in 0..<n where batch.found[i] != 1 {
            batch.setValue(try get(table, key: batch.key(at: i)), at: i)
        }
    }

    /// Where `table`'s B-tree lies in this read-only transaction (nil: walk no keys together —
    /// a write transaction, an empty table, or the map's address not known yet). Read once per
    /// table per snapshot: a read transaction renewed on a later commit, or a map moved by a
    /// resize, reads it again.
    func tree(of table: Table) throws -> tessera_lmdb_tree? {
        guard readOnly, let window else { return nil }
        let base = window.base.load(ordering: .relaxed)
        let end = window.end.load(ordering: .relaxed)
        if base == 0 || end <= base { return nil }
        let snapshot = mdb_txn_id(handle)
        for i in trees.indices where trees[i].dbi == table.dbi {
            if trees[i].snapshot == snapshot && trees[i].base == base && trees[i].end == end { return trees[i].tree }
            trees.remove(at: i)
            break
        }
        let tree = try readTree(of: table, base: base, end: end, pageSize: window.pageSize)
        trees.append((table.dbi, snapshot, base, end, tree))
        return tree
    }

    /// `table`'s record in the table of tables as this transaction reads it
    /// (`tessera_lmdb_tree_of`); nil for no such table, an empty one or one with flags.
    @usableFromInline
    func readTree(of table: Table, base: UInt, end: UInt, pageSize: UInt32) throws(LMDBError) -> tessera_lmdb_tree? {
        var t = tessera_lmdb_tree()
        var name = table.name
        let rc = name.withUTF8 { tessera_lmdb_tree_of(UnsafeMutableRawPointer(handle), $0.baseAddress, $0.count, base, end, pageSize, &t) }
        switch rc {
        case 0: return t
        case MDB_NOTFOUND, MDB_INCOMPATIBLE: return nil
        default: try check(rc); return nil
        }
    }
}
