import Synchronization

/// One live query registration: the query, the collections it reads, and its last rows.
///
/// Runs only on the observation center's serial queue (`refresh`), so `previous` needs no lock.
final class LiveQuery: @unchecked Sendable {
    // @unchecked Sendable: `previous` and `failed` are read and written only on the
    // observation center's serial queue; the other properties are immutable or atomic.

    /// What a run produced, handed to the registration's output.
    enum Output {
        /// New rows (they differ from `previous`, which is nil the first time).
        case rows(new: [Result], previous: [Result]?, keyColumn: Int?)
        case failure(any Error)
        /// The database closed: no more output.
        case finished
    }

    let query: Query
    /// The collections the query reads: a commit that touches one re-runs it.
    let sources: Set<CollectionKey>
    /// The index of a `meta().id` column (diffs are keyed by document ID), if any.
    let keyColumn: Int?
    let removed = Atomic<Bool>(false)
    private let output: @Sendable (Output) -> Void
    private var previous: [Result]?

    init(query: Query, output: @escaping @Sendable (Output) -> Void) {
        self.query = query
        self.output = output
        var sources = Set<CollectionKey>()
        var keyColumn: Int?
        if let analyzed = try? query.analyze(query.catalogSnapshot()) {
            for s in analyzed.sources { if let k = s.collectionKey { sources.insert(k) } }
            keyColumn = analyzed.columns.firstIndex { c in
                if case .expression(.meta(_, .id)) = c.kind { return true }
                return false
            }
        }
        self.sources = sources
        self.keyColumn = keyColumn
    }

    /// Runs the query; reports the rows if they differ from the last ones.
    func refresh() {
        if removed.load(ordering: .acquiring) { return }
        let rows: [Result]
        do {
            rows = try query.execute().allResults()
        } catch {
            // The database closing under a running query ends the live query; it is no error.
            output(query.database.isClosed ? .finished : .failure(error))
            return
        }
        if let previous, sameRows(previous, rows) { return }
        let before = previous
        previous = rows
        output(.rows(new: rows, previous: before, keyColumn: keyColumn))
    }

    /// Reports an error without running.
    func fail(_ error: any Error) { output(.failure(error)) }

    /// Reports the end (the database closed).
    func finish() { output(.finished) }
}
