// Row comparison and the diff between two results of a live query.

extension Result {
    /// True if both rows have the same columns and values. Whole documents are compared by
    /// their encoded bytes (the encoding of a body is deterministic), without decoding.
    func sameRow(as other: Result) -> Bool {
        guard cells.count == other.cells.count, keys == other.keys else { return false }
        for i in cells.indices {
            switch (cells[i], other.cells[i]) {
            case (.encoded(let a, let ao), .encoded(let b, let bo)):
                if ao == bo && a == b { continue }
                if cells[i].value != other.cells[i].value { return false }
            default:
                if cells[i].value != other.cells[i].value { return false }
            }
        }
        return true
    }
}

/// Two row lists are equal when they have the same rows in the same order.
func sameRows(_ a: [Result], _ b: [Result]) -> Bool {
    guard a.count == b.count else { return false }
    for i in a.indices where !a[i].sameRow(as: b[i]) { return false }
    return true
}

extension ResultDiff {
    /// The diff from `old` to `new`. `keyColumn` is the index of a `meta().id` column, if the
    /// query has one: rows are then matched by its value, unless some row lacks a string
    /// there or two rows share one (then by position).
    ///
    /// - Complexity: O(n + m) hashing, with n and m the row counts.
    static func compute(from old: [Result], to new: [Result], keyColumn: Int?) -> ResultDiff {
        if let keyColumn, let oldKeys = documentIDs(old, keyColumn), let newKeys = documentIDs(new, keyColumn) {
            var oldIndex: [String: Int] = [:]
            oldIndex.reserveCapacity(old.count)
            for (i, k) in oldKeys.enumerated() { oldIndex[k] = i }
            var inserted: [RowChange] = []
            var updated: [RowChange] = []
            var kept = Set<String>()
            kept.reserveCapacity(new.count)
            for (i, k) in newKeys.enumerated() {
                if let j = oldIndex[k] {
                    kept.insert(k)
                    if !old[j].sameRow(as: new[i]) { updated.append(RowChange(key: .documentID(k), index: i, result: new[i])) }
                } else {
                    inserted.append(RowChange(key: .documentID(k), index: i, result: new[i]))
                }
            }
            var removed: [RowChange] = []
            for (j, k) in oldKeys.enumerated() where !kept.contains(k) {
                removed.append(RowChange(key: .documentID(k), index: j, result: old[j]))
            }
            return ResultDiff(inserted: inserted, removed: removed, updated: updated, isKeyedByDocumentID: true)
        }
        var inserted: [RowChange] = []
        var removed: [RowChange] = []
        var updated: [RowChange] = []
        for i in 0..<max(old.count, new.count) {
            if i >= old.count {
                inserted.append(RowChange(key: .position(i), index: i, result: new[i]))
            } else if i >= new.count {
                removed.append(RowChange(key: .position(i), index: i, result: old[i]))
            } else if !old[i].sameRow(as: new[i]) {
                updated.append(RowChange(key: .position(i), index: i, result: new[i]))
            }
        }
        return ResultDiff(inserted: inserted, removed: removed, updated: updated, isKeyedByDocumentID: false)
    }

    /// The document ID of each row, or nil if one lacks it or two rows share one.
    private static func documentIDs(_ rows: [Result], _ column: Int) -> [String]? {
        var ids: [String] = []
        ids.reserveCapacity(rows.count)
        var seen = Set<String>()
        seen.reserveCapacity(rows.count)
        for r in rows {
            guard column < r.cells.count, case .string(let id) = r.cells[column].value, seen.insert(id).inserted else { return nil }
            ids.append(id)
        }
        return ids
    }
}
