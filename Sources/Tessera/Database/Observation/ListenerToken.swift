/// A registered change listener; `remove()` stops it.
///
/// Returned by `Collection.addChangeListener`, `Collection.addDocumentChangeListener` and
/// `Query.addChangeListener`. The listener stays registered until `remove()` is called or
/// the database is closed (dropping the token does not remove it, as in Couchbase Lite).
///
/// ```swift
/// let token = hotels.addChangeListener { change in print(change.documentIDs) }
/// …
/// token.remove()
/// ```
public final class ListenerToken: Sendable {
    private let remover: ObservationLock<(@Sendable () -> Void)?>

    init(remover: @escaping @Sendable () -> Void) {
        self.remover = ObservationLock(remover)
    }

    /// Stops the listener. No callback starts after `remove()` returns (one already running
    /// finishes). Calling it again does nothing.
    public func remove() {
        let r = remover.withLock { r -> (@Sendable () -> Void)? in
            let f = r
            r = nil
            return f
        }
        r?()
    }
}

extension Collection {
    /// Removes a listener added to this collection (same as `token.remove()`).
    public func removeChangeListener(withToken token: ListenerToken) { token.remove() }
}

extension Query {
    /// Removes a listener added to this query (same as `token.remove()`).
    public func removeChangeListener(withToken token: ListenerToken) { token.remove() }
}
