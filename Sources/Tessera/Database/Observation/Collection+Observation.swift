import Dispatch
import Synchronization

extension Collection {
    // MARK: - Change listeners (Couchbase Lite names)

    /// Calls `listener` after each commit that saved, deleted or purged documents of this
    /// collection, on a private serial queue.
    ///
    /// Changes made by other processes on the same database directory are reported too,
    /// within about 20 ms (purges by other processes excepted: they leave no trace in the
    /// change feed). The listener runs after the commit, never inside the writer's
    /// transaction; it may read and write the database.
    ///
    /// ```swift
    /// let token = hotels.addChangeListener { change in
    ///     print("changed:", change.documentIDs)
    /// }
    /// defer { token.remove() }
    /// ```
    ///
    /// - Parameter listener: called with the IDs of the changed documents.
    /// - Returns: a token whose `remove()` stops the listener.
    @discardableResult
    public func addChangeListener(listener: @escaping @Sendable (CollectionChange) -> Void) -> ListenerToken {
        addChangeListener(withQueue: nil, listener: listener)
    }

    /// Calls `listener` on `queue` after each commit that changed documents of this collection
    /// (see `addChangeListener(listener:)`).
    ///
    /// - Parameters:
    ///   - queue: where the listener runs (nil: a private serial queue). Callbacks are
    ///     submitted in commit order; on a concurrent queue they may overlap.
    ///   - listener: called with the IDs of the changed documents.
    /// - Returns: a token whose `remove()` stops the listener.
    @discardableResult
    public func addChangeListener(withQueue queue: DispatchQueue?,
                                  listener: @escaping @Sendable (CollectionChange) -> Void) -> ListenerToken {
        let target = queue ?? DispatchQueue(label: "tessera.listener." + fullName)
        let box = RemovedFlag()
        let token = database.observation.addCollectionObserver(database: database, key: key, documentID: nil) { [self] ids in
            let change = CollectionChange(collection: self, documentIDs: ids)
            target.async { if !box.isRemoved { listener(change) } }
        }
        return ListenerToken {
            box.set()
            token.remove()
        }
    }

    /// Calls `listener` after each commit that saved, deleted or purged the document `id`,
    /// on a private serial queue (see `addChangeListener(listener:)`).
    ///
    /// - Parameters:
    ///   - id: the document ID (the document need not exist yet).
    ///   - listener: called with the document's ID.
    /// - Returns: a token whose `remove()` stops the listener.
    @discardableResult
    public func addDocumentChangeListener(id: String, listener: @escaping @Sendable (DocumentChange) -> Void) -> ListenerToken {
        addDocumentChangeListener(id: id, withQueue: nil, listener: listener)
    }

    /// Calls `listener` on `queue` after each commit that changed the document `id`.
    ///
    /// - Parameters:
    ///   - id: the document ID (the document need not exist yet).
    ///   - queue: where the listener runs (nil: a private serial queue).
    ///   - listener: called with the document's ID.
    /// - Returns: a token whose `remove()` stops the listener.
    @discardableResult
    public func addDocumentChangeListener(id: String, withQueue queue: DispatchQueue?,
                                          listener: @escaping @Sendable (DocumentChange) -> Void) -> ListenerToken {
        let target = queue ?? DispatchQueue(label: "tessera.listener." + fullName + "." + id)
        let box = RemovedFlag()
        let token = database.observation.addCollectionObserver(database: database, key: key, documentID: id) { [self] _ in
            let change = DocumentChange(collection: self, documentID: id)
            target.async { if !box.isRemoved { listener(change) } }
        }
        return ListenerToken {
            box.set()
            token.remove()
        }
    }

    /// Couchbase Lite's spelling of `addDocumentChangeListener(id:withQueue:listener:)`.
    @discardableResult
    public func addDocumentChangeListener(id: String, queue: DispatchQueue?,
                                          listener: @escaping @Sendable (DocumentChange) -> Void) -> ListenerToken {
        addDocumentChangeListener(id: id, withQueue: queue, listener: listener)
    }

    // MARK: - Change streams (Swift concurrency)

    /// The changes of this collection as an `AsyncStream`: one element per commit (or burst
    /// of commits) that changed documents, from now on.
    ///
    /// Ending the loop, or cancelling the task that runs it, stops the observation.
    ///
    /// ```swift
    /// for await change in hotels.changes() {
    ///     print(change.documentIDs)
    /// }
    /// ```
    public func changes() -> AsyncStream<CollectionChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: CollectionChange.self)
        let token = database.observation.addCollectionObserver(database: database, key: key, documentID: nil,
                                                                  finish: { continuation.finish() }) { [self] ids in
            continuation.yield(CollectionChange(collection: self, documentIDs: ids))
        }
        continuation.onTermination = { _ in token.remove() }
        return stream
    }

    /// The changes of the document `id` as an `AsyncStream` (see `changes()`).
    public func documentChanges(id: String) -> AsyncStream<DocumentChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: DocumentChange.self)
        let token = database.observation.addCollectionObserver(database: database, key: key, documentID: id,
                                                                  finish: { continuation.finish() }) { [self] _ in
            continuation.yield(DocumentChange(collection: self, documentID: id))
        }
        continuation.onTermination = { _ in token.remove() }
        return stream
    }
}

/// Set when a listener is removed, so that callbacks already queued do not run.
final class RemovedFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isRemoved: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}
