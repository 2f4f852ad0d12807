import Dispatch

extension Query {
    // MARK: - Live query (Couchbase Lite names)

    /// Makes this a live query: runs it once right away and calls `listener` with its rows,
    /// then re-runs it after each commit that touched a collection it reads, and calls
    /// `listener` again only when the rows changed. Runs on a private serial queue.
    ///
    /// A burst of commits coalesces into one re-run. Commits of other processes on the same
    /// database directory are noticed within about 20 ms. The query runs on a background
    /// queue, never inside a writer's transaction; the listener may read and write the database.
    ///
    /// ```swift
    /// let query = try db.createQuery("SELECT meta().id, name FROM hotels WHERE city = 'Paris' ORDER BY name")
    /// let token = query.addChangeListener { change in
    ///     guard let rows = change.results else { return print(change.error!) }
    ///     for row in rows { print(row.string(forKey: "name")!) }
    /// }
    /// defer { token.remove() }
    /// ```
    ///
    /// - Parameter listener: called with the rows, or with the error the query threw.
    /// - Returns: a token whose `remove()` stops the live query.
    @discardableResult
    public func addChangeListener(listener: @escaping @Sendable (QueryChange) -> Void) -> ListenerToken {
        addChangeListener(withQueue: nil, listener: listener)
    }

    /// Makes this a live query whose `listener` runs on `queue` (see `addChangeListener(listener:)`).
    ///
    /// - Parameters:
    ///   - queue: where the listener runs (nil: a private serial queue).
    ///   - listener: called with the rows, or with the error the query threw.
    /// - Returns: a token whose `remove()` stops the live query.
    @discardableResult
    public func addChangeListener(withQueue queue: DispatchQueue?,
                                  listener: @escaping @Sendable (QueryChange) -> Void) -> ListenerToken {
        let target = queue ?? DispatchQueue(label: "tessera.listener.query")
        let box = RemovedFlag()
        let columns = (try? columnNames) ?? []
        let live = LiveQuery(query: self) { [self] output in
                let change: QueryChange
                switch output {
                case .rows(let rows, _, _):
                    change = QueryChange(query: self, results: ResultSet(database: database, columnNames: columns, rows: rows), error: nil)
                case .failure(let error):
                    change = QueryChange(query: self, results: nil, error: error)
                case .finished:
                    return
                }
                target.async { if !box.isRemoved { listener(change) } }
        }
        let token = database.observation.addLiveQuery(database: database, live)
        return ListenerToken {
            box.set()
            token.remove()
        }
    }

    // MARK: - Live query stream (Swift concurrency)

    /// The live query as an `AsyncThrowingStream`: the rows now, then the rows after each
    /// commit that changed them, each with a diff against the previous rows.
    ///
    /// Rows are matched by document ID when the query has a `meta().id` column, else by
    /// position (see `ResultDiff`). The first update's diff inserts every row. Ending the loop
    /// or cancelling its task stops the live query; the stream throws if the query fails, and
    /// ends when the database closes. Updates are buffered: a slow consumer misses none.
    ///
    /// ```swift
    /// let query = try db.createQuery("SELECT meta().id, name FROM hotels ORDER BY name")
    /// for try await update in query.changes() {
    ///     print(update.results.count, "rows;", update.diff.inserted.count, "new")
    /// }
    /// ```
    public func changes() -> AsyncThrowingStream<LiveQueryUpdate, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: LiveQueryUpdate.self, throwing: (any Error).self)
        let live = LiveQuery(query: self) { output in
            switch output {
            case .rows(let rows, let previous, let keyColumn):
                let diff = ResultDiff.compute(from: previous ?? [], to: rows, keyColumn: keyColumn)
                continuation.yield(LiveQueryUpdate(results: rows, diff: diff))
            case .failure(let error):
                continuation.finish(throwing: error)
            case .finished:
                continuation.finish()
            }
        }
        let token = database.observation.addLiveQuery(database: database, live)
        continuation.onTermination = { _ in token.remove() }
        return stream
    }
}
