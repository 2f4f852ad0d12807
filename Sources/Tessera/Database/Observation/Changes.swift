// The values delivered to change listeners and change streams.

/// What changed in a collection: delivered by `Collection.addChangeListener` and
/// `Collection.changes()`.
///
/// One commit (a save, a delete, a purge, or a whole `inBatch { }`) gives one change, or
/// fewer when commits arrive faster than listeners are notified: a burst coalesces into one
/// change listing each document once.
public struct CollectionChange: Sendable {
    /// The collection that changed.
    public let collection: Collection
    /// The IDs of the documents saved, deleted or purged, each once, in sequence order
    /// (purges last).
    public let documentIDs: [String]

    /// The database of the collection.
    public var database: Database { collection.database }
}

/// A change of one document: delivered by `Collection.addDocumentChangeListener(id:listener:)`
/// and `Collection.documentChanges(id:)`.
public struct DocumentChange: Sendable {
    /// The collection of the document.
    public let collection: Collection
    /// The ID of the document saved, deleted or purged.
    public let documentID: String

    /// The database of the collection.
    public var database: Database { collection.database }
}

/// A new result of a live query: delivered by `Query.addChangeListener`.
///
/// The first change carries the query's rows when the listener was added; later ones arrive
/// only when the rows differ from the previous ones.
public struct QueryChange: @unchecked Sendable {
    // @unchecked Sendable: `results` is a result set over rows already read (no snapshot),
    // made for this change alone and handed to one callback; `error` is the error the query
    // threw (DatabaseError and QueryError are Sendable).

    /// The live query.
    public let query: Query
    /// The new rows (nil if the query failed).
    public let results: ResultSet?
    /// The error the query threw, if it failed.
    public let error: (any Error)?
}

/// A new result of `Query.changes()`: the rows, and how they differ from the previous ones.
public struct LiveQueryUpdate: Sendable {
    /// The query's rows now.
    public let results: [Result]
    /// The difference from the previous update's rows (the first update inserts every row).
    public let diff: ResultDiff
}

/// How a query's rows changed between two updates of a live query.
///
/// Rows are matched by document ID when the query selects one (a `meta().id` column, e.g.
/// `SELECT meta().id, name FROM hotels`), so a row whose document moved in the order is an
/// update, not a removal and an insertion. Without such a column (or when two rows share a
/// document ID, as after a JOIN or UNNEST) rows are matched by position.
///
/// ```swift
/// for try await update in query.changes() {
///     tableView.deleteRows(update.diff.removed.map(\.index))
///     tableView.insertRows(update.diff.inserted.map(\.index))
///     tableView.reloadRows(update.diff.updated.map(\.index))
/// }
/// ```
public struct ResultDiff: Sendable {
    /// How rows are matched.
    public enum Key: Hashable, Sendable, CustomStringConvertible {
        /// By the document ID in a `meta().id` column.
        case documentID(String)
        /// By position.
        case position(Int)

        /// The ID or `#position`.
        public var description: String {
            switch self {
            case .documentID(let id): return id
            case .position(let i): return "#\(i)"
            }
        }
    }

    /// One inserted, removed or updated row.
    public struct RowChange: Sendable {
        /// The row's key: its document ID, or its position.
        public let key: Key
        /// The position of the row: in the new rows for insertions and updates, in the
        /// previous rows for removals.
        public let index: Int
        /// The row: the new one for insertions and updates, the previous one for removals.
        public let result: Result

        /// The document ID, when rows are matched by document ID.
        public var documentID: String? {
            if case .documentID(let id) = key { return id }
            return nil
        }
    }

    /// Rows that are new, in new-row order.
    public let inserted: [RowChange]
    /// Rows that are gone, in previous-row order.
    public let removed: [RowChange]
    /// Rows present before and after whose values changed, in new-row order.
    public let updated: [RowChange]
    /// True when rows are matched by document ID, false when by position.
    public let isKeyedByDocumentID: Bool

    /// True if nothing was inserted, removed or updated.
    public var isEmpty: Bool { inserted.isEmpty && removed.isEmpty && updated.isEmpty }
}
