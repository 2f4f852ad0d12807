

// MARK: - Change feed
//
// Every save and delete gives the document a new sequence number (per collection, strictly
// increasing, never reused) and moves its entry in the collection's by-sequence table
// (`seq:<scope>.<collection>`: big-endian sequence → document ID). The table therefore holds
// one entry per stored document, at its latest sequence: reading it from `since + 1` is the
// change feed, with no scan of the documents. A purge removes the entry, so purged documents
// are absent.

/// One entry of a collection's change feed: a document and its latest revision.
public struct ChangeFeedEntry: Sendable, Hashable, CustomStringConvertible {
    /// The document ID.
    public let documentID: String
    /// The sequence of the document's latest revision.
    public let sequence: UInt64
    /// The revision ID of the document's latest revision.
    public let revisionID: String
    /// True if the latest revision is a deletion (a tombstone).
    public let isDeleted: Bool

    /// Creates an entry.
    public init(documentID: String, sequence: UInt64, revisionID: String, isDeleted: Bool) {
        self.documentID = documentID
        self.sequence = sequence
        self.revisionID = revisionID
        self.isDeleted = isDeleted
    }

    /// `sequence documentID revisionID [deleted]`.
    public var description: String { "\(sequence) \(documentID) \(revisionID)" + (isDeleted ? " deleted" : "") }
}

extension Collection {
    /// The sequence of the collection's last save or delete (0 if there was none, or if the
    /// database is closed, like `count`).
    ///
    /// Sequences are per collection, strictly increasing and never reused; a purge does not
    /// take one. Pass it to `changes(since:limit:)` later to read what changed after now.
    public var lastSequence: UInt64 {
        (try? database.read { txn in try ChangeFeed.lastSequence(txn: txn, meta: database.metaTable, key: key) }) ?? 0
    }

    /// The documents changed after sequence `since`: every document whose latest revision has
    /// a larger sequence, in sequence order, deletions included, purged documents absent.
    ///
    /// A document saved several times appears once, at its latest sequence. To follow a
    /// collection, remember the last entry's `sequence` and pass it next time:
    ///
    /// ```swift
    /// var since: UInt64 = 0
    /// for entry in try hotels.changes(since: since) {
    ///     print(entry.documentID, entry.isDeleted ? "deleted" : entry.revisionID)
    ///     since = entry.sequence
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - since: a sequence (0: from the start).
    ///   - limit: at most this many entries (nil: all).
    /// - Returns: the entries, read from one snapshot.
    /// - Throws: `DatabaseError` `.notOpen`, `.notFound` (collection deleted), `.storage`.
    /// - Complexity: O(log n + k) for k entries returned: served from the by-sequence table.
    public func changes(since: UInt64, limit: Int? = nil) throws -> [ChangeFeedEntry] {
        let store = try currentStore()
        return try database.read { txn in try ChangeFeed.read(txn: txn, store: store, since: since, limit: limit) }
    }
}

/// Reads the by-sequence table and the sequence counter.
enum ChangeFeed {
    /// The collection's sequence counter (meta key `seq:<scope>.<collection>`).
    static func lastSequence(txn: Snapshot, meta: StorageTable, key: CollectionKey) throws -> UInt64 {
        try WriteContext.readCounter(txn: txn, meta: meta, name: "seq:" + key.fullName)
    }

    /// The live-document counter (meta key `count:<scope>.<collection>`); a purge of a live
    /// document changes it without taking a sequence.
    static func liveCount(txn: Snapshot, meta: StorageTable, key: CollectionKey) throws -> UInt64 {
        try WriteContext.readCounter(txn: txn, meta: meta, name: "count:" + key.fullName)
    }

    /// The entries with a sequence greater than `since`, in order, at most `limit`.
    static func read(txn: Snapshot, store: CollectionStore, since: UInt64, limit: Int?) throws -> [ChangeFeedEntry] {
        var out: [ChangeFeedEntry] = []
        if let limit, limit <= 0 { return out }
        guard since < UInt64.max else { return out }
        try txn.withCursor(store.bySequence) { cursor in
            try cursor.forEach(from: sequenceKey(since + 1)) { k, v in
                guard k.count == 8 else { return true }
                let seq = UInt64(bigEndian: k.loadUnaligned(as: UInt64.self))
                let id = String(decoding: v, as: UTF8.self)
                // The record is the authority for revision and deletion; an entry whose record
                // moved on (never, inside one snapshot) or vanished is skipped.
                guard let raw = try txn.get(store.docs, key: UnsafeRawBufferPointer(v)), let h = DocumentRecord.header(raw),
                      h.sequence == seq else { return true }
                out.append(ChangeFeedEntry(documentID: id, sequence: seq, revisionID: h.revisionID, isDeleted: h.deleted))
                return limit.map { out.count < $0 } ?? true
            }
        }
        return out
    }

    /// The IDs of the documents changed after `since` (no record lookups).
    static func documentIDs(txn: Snapshot, store: CollectionStore, since: UInt64) throws -> [String] {
        var out: [String] = []
        guard since < UInt64.max else { return out }
        try txn.withCursor(store.bySequence) { cursor in
            try cursor.forEach(from: sequenceKey(since + 1)) { _, v in
                out.append(String(decoding: v, as: UTF8.self))
                return true
            }
        }
        return out
    }
}
