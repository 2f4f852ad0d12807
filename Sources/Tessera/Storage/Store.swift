import LMDB

/// Options of the store (the LMDB environment under a database directory).
struct StoreOptions {
    var initialMapSize: Int
    var maxSize: Int?
    var fileMode: UInt32
    var noSync: Bool
}

/// The key-value store under one database directory: opens the LMDB environment, and
/// creates the snapshots and write transactions that the layers above are handed.
///
/// Errors of the storage engine leave this type as `DatabaseError`s.
final class Store: Sendable {
    let env: Environment
    /// The database directory (for messages).
    let path: String

    /// Opens (creating) the environment in directory `path`.
    init(path: String, options: StoreOptions) throws {
        self.path = path
        var o = Environment.Options()
        o.initialMapSize = options.initialMapSize
        o.maxMapSize = options.maxSize
        o.fileMode = .init(options.fileMode)
        o.noSync = options.noSync
        do {
            env = try Environment(path: path, options: o)
        } catch LMDBError.invalid {
            throw DatabaseError(.notADatabase, "'\(path)' does not hold a Tessera database (not an LMDB file)")
        } catch LMDBError.versionMismatch {
            throw DatabaseError(.notADatabase, "'\(path)' holds an LMDB file of another LMDB version")
        } catch {
            throw DatabaseError.storage(error, "cannot open database '\(path)'")
        }
    }

    /// The most tables a database can hold.
    static var maxTables: Int { Environment.Options().maxTables }

    /// Closes the environment (every snapshot must have ended).
    func close() { env.close() }

    /// The current size of the memory map (the most the data file can hold before it grows).
    var currentMapSize: Int { env.currentMapSize }

    /// The ID of the last committed transaction (this process's or another's): a cheap way
    /// to learn that the database changed.
    var lastTransactionID: UInt64 { env.lastTransactionID }

    /// Bytes of the data file in use.
    var usedBytes: Int { env.usedBytes }

    /// Runs `body` in a new read snapshot.
    func read<R>(_ body: (Snapshot) throws -> R) throws -> R {
        do {
            return try env.read { try body(Snapshot($0)) }
        } catch let e as LMDBError {
            throw DatabaseError.storage(e, "read from '\(path)' failed")
        }
    }

    /// Begins a snapshot that outlives a closure (a lazy result set); end it with
    /// `endSnapshot(_:)` on the same thread.
    func beginSnapshot() throws -> Snapshot {
        do { return Snapshot(try env.beginRead()) } catch {
            throw DatabaseError.storage(error, "read from '\(path)' failed")
        }
    }

    /// Ends a snapshot begun by `beginSnapshot()`.
    func endSnapshot(_ snapshot: Snapshot) { env.endRead(snapshot.lmdb) }

    /// Runs `body` in the write transaction; returning commits, throwing rolls back. If the
    /// map fills up, `body` runs again from the start in a fresh transaction after the map grew.
    func write<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        do {
            return try env.write { txn in
                let w = WriteTransaction(txn)
                let r = try body(w)
                try w.flushPendingWork()
                return r
            }
        } catch let e as DatabaseError {
            throw e
        } catch let e as LMDBError {
            throw DatabaseError.storage(e, "write to '\(path)' failed")
        }
    }
}
