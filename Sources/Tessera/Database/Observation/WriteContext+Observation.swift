// The commit-path hooks of observation: a purge is noted (only while observers exist, since it
// leaves no entry in the change feed), and `committed()` tells the observation center.

extension WriteContext {
    /// Notes a purged document for listeners; free when nobody observes.
    @inline(__always)
    func notePurge(_ key: CollectionKey, _ id: String) {
        if database.observation.isObserving { purgedForObservers.append((key, id)) }
    }

    /// Called from `committed()`, after the LMDB commit: schedules the notification of
    /// observers (never runs a listener on this thread).
    @inline(__always)
    func notifyObservers() {
        if database.observation.isObserving { database.observation.didCommit(purged: purgedForObservers) }
    }
}
