import Dispatch

import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - Overview
//
// One `ObservationCenter` per `Database` finds out what changed and tells the observers
// (collection and document listeners, live queries, change streams). It never runs inside a
// write transaction:
//
// - A commit of this process calls `didCommit` from `WriteContext.committed()`, after the
//   LMDB commit and outside the writer lock. With no observers that is one atomic load; with
//   observers it queues purged document IDs (purges leave no trace in the change feed) and
//   schedules a *drain* on the center's serial queue, unless one is already scheduled: a
//   burst of commits coalesces into one drain.
// - Commits of other processes are noticed by a timer that, only while observers exist,
//   compares LMDB's last transaction ID (`mdb_env_info`, a read of the memory map, no
//   transaction) with the one the last drain saw, every `pollInterval`.
// - A drain reads, in one snapshot, the sequence and live-count counters of each observed
//   collection; where the sequence moved it reads the change feed (by-sequence table) from
//   the last sequence it saw. Collection and document listeners get the document IDs; live
//   queries that read a changed collection re-run, and report only if their rows changed.
// - Callbacks run on the listener's dispatch queue (a private serial queue by default), so a
//   slow listener delays no writer and no other listener, and a listener may write to the
//   database. Streams are yielded to from the center's queue.

/// Finds changes after each commit (this process's or another's) and notifies observers.
final class ObservationCenter: Sendable {
    /// How often, while observers exist, the center checks for commits of other processes.
    static let pollInterval = DispatchTimeInterval.milliseconds(20)

    /// Where a collection's observers have read its change feed up to.
    struct FeedCursor {
        var sequence: UInt64
        var liveCount: UInt64
        var observers: Int
    }

    /// A collection or document listener.
    final class CollectionObserver: Sendable {
        let key: CollectionKey
        let documentID: String?
        let deliver: @Sendable ([String]) -> Void
        /// Called when the database closes (ends a stream).
        let finish: (@Sendable () -> Void)?
        let removed = Atomic<Bool>(false)

        init(key: CollectionKey, documentID: String?, deliver: @escaping @Sendable ([String]) -> Void,
             finish: (@Sendable () -> Void)?) {
            self.key = key
            self.documentID = documentID
            self.deliver = deliver
            self.finish = finish
        }
    }

    struct State {
        weak var database: Database?
        var nextID: UInt64 = 1
        var collectionObservers: [UInt64: CollectionObserver] = [:]
        var liveQueries: [UInt64: LiveQuery] = [:]
        var cursors: [CollectionKey: FeedCursor] = [:]
        var pendingPurges: [CollectionKey: [String]] = [:]
        var drainScheduled = false
        /// When the last drain started, and how long it took (monotonic nanoseconds).
        var lastDrainStart: UInt64 = 0
        var lastDrainDuration: UInt64 = 0
        var timer: DispatchSourceTimer?
        var lastTransactionID: UInt64 = 0
        var closed = false
    }

    /// Observers registered (all kinds): the commit path reads only this.
    private let observers = Atomic<Int>(0)
    private let state = ObservationLock(State())
    /// Held while the center reads the database (drains, polls, initial query runs); `close()`
    /// takes it to wait for them and sets it, so none starts once the environment closes.
    private let busy = ObservationLock(false)
    /// Live-query runs so far (initial runs included): for tests and benchmarks.
    let queryRuns = Atomic<Int>(0)
    /// Drains so far that found changes: for tests and benchmarks.
    let drains = Atomic<Int>(0)
    /// Drains, polls and live-query runs, one at a time.
    let queue = DispatchQueue(label: "tessera.observation", qos: .userInitiated)

    /// Waits until no drain is scheduled or running (tests and benchmarks: "caught up").
    func waitUntilIdle() {
        while true {
            queue.sync {}
            if !state.withLock({ $0.drainScheduled }) { return }
            usleep(100)
        }
    }

    /// True while any observer is registered.
    var isObserving: Bool { observers.load(ordering: .relaxed) > 0 }

    // MARK: - Commits

    /// Called after a commit of this process: queues purged IDs and schedules a drain.
    func didCommit(purged: [(CollectionKey, String)]) {
        let delay = state.withLock { s -> UInt64? in
            guard !s.closed, !s.cursors.isEmpty || !s.liveQueries.isEmpty else { return nil }
            for (key, id) in purged where s.cursors[key] != nil { s.pendingPurges[key, default: []].append(id) }
            if s.drainScheduled { return nil }
            s.drainScheduled = true
            // A commit long after the last drain is drained at once. During a burst, drains
            // start at most every `minDrainInterval`, and at least as long after the previous
            // one ended as it ran: the commits in between coalesce, and observers (live queries
            // re-running) take at most about half of a core from the writers.
            let next = s.lastDrainStart &+ max(Self.minDrainInterval, 2 &* s.lastDrainDuration)
            let now = DispatchTime.now().uptimeNanoseconds
            return next > now ? next - now : 0
        }
        guard let delay else { return }
        if delay == 0 {
            queue.async { self.drain() }
        } else {
            queue.asyncAfter(deadline: .now() + .nanoseconds(Int(delay))) { self.drain() }
        }
    }

    /// The shortest time between the starts of two drains triggered by commits (nanoseconds).
    static let minDrainInterval: UInt64 = 2_000_000

    // MARK: - Registration

    /// Registers a collection (documentID nil) or document listener; `deliver` gets the
    /// changed IDs (only `documentID` for a document listener) on the center's queue.
    func addCollectionObserver(database: Database, key: CollectionKey, documentID: String?,
                               finish: (@Sendable () -> Void)? = nil,
                               deliver: @escaping @Sendable ([String]) -> Void) -> ListenerToken {
        let observer = CollectionObserver(key: key, documentID: documentID, deliver: deliver, finish: finish)
        let start = startCursors(database: database, keys: [key])
        let id = state.withLock { s -> UInt64? in
            guard !s.closed else { return nil }
            let id = s.nextID
            s.nextID += 1
            retainCursors(&s, keys: [key], start: start)
            s.collectionObservers[id] = observer
            observerAdded(&s, database: database)
            return id
        }
        guard let id else {
            finish?()
            return ListenerToken {}
        }
        return ListenerToken { [weak self] in self?.removeCollectionObserver(id) }
    }

    private func removeCollectionObserver(_ id: UInt64) {
        let timer = state.withLock { s -> DispatchSourceTimer? in
            guard let o = s.collectionObservers.removeValue(forKey: id) else { return nil }
            o.removed.store(true, ordering: .releasing)
            releaseCursors(&s, keys: [o.key])
            return observerRemoved(&s)
        }
        timer?.cancel()
    }

    /// Registers a live query and runs it once on the center's queue.
    func addLiveQuery(database: Database, _ lq: LiveQuery) -> ListenerToken {
        let start = startCursors(database: database, keys: lq.sources)
        let id = state.withLock { s -> UInt64? in
            guard !s.closed else { return nil }
            let id = s.nextID
            s.nextID += 1
            retainCursors(&s, keys: lq.sources, start: start)
            s.liveQueries[id] = lq
            observerAdded(&s, database: database)
            return id
        }
        guard let id else {
            lq.fail(DatabaseError(.notOpen, "database '\(database.name)' is closed"))
            return ListenerToken {}
        }
        queue.async {
            self.busy.withLock { closed in
                guard !closed, !database.isClosed else { return }
                self.queryRuns.add(1, ordering: .relaxed)
                lq.refresh()
            }
        }
        return ListenerToken { [weak self] in self?.removeLiveQuery(id) }
    }

    private func removeLiveQuery(_ id: UInt64) {
        let timer = state.withLock { s -> DispatchSourceTimer? in
            guard let lq = s.liveQueries.removeValue(forKey: id) else { return nil }
            lq.removed.store(true, ordering: .releasing)
            releaseCursors(&s, keys: lq.sources)
            return observerRemoved(&s)
        }
        timer?.cancel()
    }

    /// The current counters of collections not observed yet (read outside the lock).
    private func startCursors(database: Database, keys: Set<CollectionKey>) -> [CollectionKey: FeedCursor] {
        let missing = state.withLock { s in keys.filter { s.cursors[$0] == nil } }
        if missing.isEmpty { return [:] }
        var out: [CollectionKey: FeedCursor] = [:]
        _ = try? database.read { txn in
            for key in missing {
                out[key] = FeedCursor(sequence: try ChangeFeed.lastSequence(txn: txn, meta: database.metaTable, key: key),
                                      liveCount: try ChangeFeed.liveCount(txn: txn, meta: database.metaTable, key: key),
                                      observers: 0)
            }
        }
        return out
    }

    private func retainCursors(_ s: inout State, keys: Set<CollectionKey>, start: [CollectionKey: FeedCursor]) {
        for key in keys {
            if s.cursors[key] == nil { s.cursors[key] = start[key] ?? FeedCursor(sequence: 0, liveCount: 0, observers: 0) }
            s.cursors[key]!.observers += 1
        }
    }

    private func releaseCursors(_ s: inout State, keys: Set<CollectionKey>) {
        for key in keys {
            guard var c = s.cursors[key] else { continue }
            c.observers -= 1
            if c.observers <= 0 {
                s.cursors[key] = nil
                s.pendingPurges[key] = nil
            } else {
                s.cursors[key] = c
            }
        }
    }

    /// Counts a new observer; the first one starts the timer that watches other processes.
    private func observerAdded(_ s: inout State, database: Database) {
        if s.database == nil { s.database = database }
        observers.add(1, ordering: .relaxed)
        guard s.timer == nil else { return }
        // 0: the first tick drains once, catching a commit of another process that was in
        // flight while the cursors were read.
        s.lastTransactionID = 0
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + Self.pollInterval, repeating: Self.pollInterval, leeway: .milliseconds(5))
        timer.setEventHandler { [weak self] in self?.poll() }
        timer.resume()
        s.timer = timer
    }

    /// Counts a removed observer; returns the timer to cancel when it was the last one.
    private func observerRemoved(_ s: inout State) -> DispatchSourceTimer? {
        observers.subtract(1, ordering: .relaxed)
        guard s.collectionObservers.isEmpty && s.liveQueries.isEmpty else { return nil }
        let t = s.timer
        s.timer = nil
        return t
    }

    // MARK: - Closing

    /// Removes every observer and waits for a running drain; called by `Database.close()`
    /// before the environment closes.
    func close() {
        let (timer, queries, listeners) = state.withLock { s -> (DispatchSourceTimer?, [LiveQuery], [CollectionObserver]) in
            s.closed = true
            let listeners = Array(s.collectionObservers.values)
            for o in listeners { o.removed.store(true, ordering: .releasing) }
            let queries = Array(s.liveQueries.values)
            for lq in queries { lq.removed.store(true, ordering: .releasing) }
            s.collectionObservers = [:]
            s.liveQueries = [:]
            s.cursors = [:]
            s.pendingPurges = [:]
            observers.store(0, ordering: .relaxed)
            let t = s.timer
            s.timer = nil
            return (t, queries, listeners)
        }
        timer?.cancel()
        busy.withLock { $0 = true }
        // Streams end when their database closes.
        for lq in queries { lq.finish() }
        for o in listeners { o.finish?() }
    }

    // MARK: - Finding changes

    /// Timer tick: drains if another process (or this one) committed since the last drain.
    private func poll() {
        let (db, seen) = state.withLock { ($0.database, $0.lastTransactionID) }
        guard let db else { return }
        let moved = busy.withLock { closed -> Bool in
            guard !closed, !db.isClosed else { return false }
            return db.store.lastTransactionID != seen
        }
        if moved { drain() }
    }

    /// Reads what changed since the last drain and notifies the observers concerned.
    private func drain() {
        let (database, cursors) = state.withLock { s -> (Database?, [CollectionKey: FeedCursor]) in
            s.drainScheduled = false
            s.lastDrainStart = DispatchTime.now().uptimeNanoseconds
            return (s.database, s.cursors)
        }
        guard let db = database else { return }
        let started = DispatchTime.now().uptimeNanoseconds
        defer {
            let ended = DispatchTime.now().uptimeNanoseconds
            state.withLock { $0.lastDrainDuration = ended &- started }
        }
        busy.withLock { closed in
            guard !closed, !db.isClosed else { return }
            // The snapshot's ID, not `env.lastTransactionID`: a writer updates the meta page
            // (what mdb_env_info reads) before new read transactions can see its commit
            // (lmdb.h: the reader table's txnid moves after the meta page is synced), so the
            // poll keeps draining until a snapshot includes the newest commit.
            var transactionID: UInt64 = 0
            var changedIDs: [CollectionKey: [String]] = [:]
            var changedKeys = Set<CollectionKey>()
            var fresh: [CollectionKey: (UInt64, UInt64)] = [:]
            do {
                try db.read { txn in
                    transactionID = txn.transactionID
                    let stores = db.catalog.withLock { $0.collections }
                    for (key, cursor) in cursors {
                        let seq = try ChangeFeed.lastSequence(txn: txn, meta: db.metaTable, key: key)
                        let count = try ChangeFeed.liveCount(txn: txn, meta: db.metaTable, key: key)
                        if seq == cursor.sequence && count == cursor.liveCount { continue }
                        changedKeys.insert(key)
                        fresh[key] = (seq, count)
                        if seq > cursor.sequence, let store = stores[key] {
                            changedIDs[key] = try ChangeFeed.documentIDs(txn: txn, store: store, since: cursor.sequence)
                        }
                    }
                }
            } catch {
                return  // closed, or a storage error: the next commit or tick tries again
            }
            let (purges, collectionObservers, liveQueries) = state.withLock { s in
                s.lastTransactionID = transactionID
                for (key, (seq, count)) in fresh where s.cursors[key] != nil {
                    s.cursors[key]!.sequence = max(s.cursors[key]!.sequence, seq)
                    s.cursors[key]!.liveCount = count
                }
                let p = s.pendingPurges
                s.pendingPurges = [:]
                return (p, Array(s.collectionObservers.values), Array(s.liveQueries.values))
            }
            for (key, ids) in purges where !ids.isEmpty {
                changedKeys.insert(key)
                var list = changedIDs[key] ?? []
                var seen = Set(list)
                for id in ids where seen.insert(id).inserted { list.append(id) }
                changedIDs[key] = list
            }
            if changedKeys.isEmpty { return }
            drains.add(1, ordering: .relaxed)
            notify(collectionObservers, changedIDs)
            for lq in liveQueries where !lq.removed.load(ordering: .acquiring) && !lq.sources.isDisjoint(with: changedKeys) {
                queryRuns.add(1, ordering: .relaxed)
                lq.refresh()
            }
        }
    }

    private func notify(_ observers: [CollectionObserver], _ changedIDs: [CollectionKey: [String]]) {
        var idSets: [CollectionKey: Set<String>] = [:]
        for o in observers {
            guard let ids = changedIDs[o.key], !ids.isEmpty, !o.removed.load(ordering: .acquiring) else { continue }
            if let doc = o.documentID {
                if idSets[o.key] == nil { idSets[o.key] = Set(ids) }
                if idSets[o.key]!.contains(doc) { o.deliver([doc]) }
            } else {
                o.deliver(ids)
            }
        }
    }
}
