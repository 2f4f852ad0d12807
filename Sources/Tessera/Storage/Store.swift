import LMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Options of the store (the LMDB environment under a database directory).
struct StoreOptions {
    var initialMapSize: Int
    var maxSize: Int?
    var fileMode: UInt32
    var noSync: Bool
    /// Open read-only even if the files are writable.
    var readOnly = false
    /// `DatabaseConfiguration.largestInlineRecord`.
    var largestInlineRecord: Int? = nil
}

/// The key-value store under one database directory: opens the LMDB environment, and
/// creates the snapshots and write transactions that the layers above are handed.
///
/// Errors of the storage engine leave this type as `DatabaseError`s.
final class Store: Sendable {
    let env: Environment
    /// The database directory (for messages).
    let path: String

    /// Why the store is read-only ("opened read-only", "no write permission on …"), or nil
    /// when it can write.
    let readOnlyReason: String?

    /// Which document records are stored in two pieces (`RecordPieces.swift`).
    let splitting: RecordSplitting

    /// Opens (creating) the environment in directory `path`. When the files cannot be opened
    /// for writing (permission denied, read-only file system), it opens read-only instead;
    /// when even the lock file cannot be written, without the lock file (LMDB's `MDB_NOLOCK`:
    /// readers are then not registered, which is safe only while no other process writes).
    init(path: String, options: StoreOptions) throws {
        self.path = path
        try DataFileCheck.validate(directory: path)
        var o = Environment.Options()
        o.initialMapSize = options.initialMapSize
        o.maxMapSize = options.maxSize
        o.fileMode = .init(options.fileMode)
        o.noSync = options.noSync
        var reason: String? = options.readOnly ? "opened read-only" : nil
        var attempt = 0
        var opened: Environment?
        while opened == nil {
            o.readOnly = reason != nil
            do {
                opened = try Environment(path: path, options: o)
            } catch LMDBError.invalid {
                throw DatabaseError(.notADatabase, "'\(path)' does not hold a Tessera database (data.mdb is not an LMDB file)")
            } catch LMDBError.versionMismatch {
                throw DatabaseError(.notADatabase, "'\(path)' holds an LMDB file of another LMDB version")
            } catch let e as LMDBError where Store.isPermissionError(e) && attempt < 2 && !o.noLock {
                attempt += 1
                if reason == nil {
                    reason = "its files cannot be written: \(e.message)"
                } else {
                    // Read-only, but the lock file cannot be opened for writing either.
                    o.noLock = true
                }
            } catch let e as LMDBError where e.code == ENOENT && o.readOnly {
                throw DatabaseError(.notFound, "no database at '\(path)' (\(reason ?? "read-only"): nothing is created)")
            } catch {
                throw DatabaseError.storage(error, "cannot open database '\(path)'")
            }
        }
        env = opened!
        readOnlyReason = reason
        splitting = RecordSplitting(pageSize: env.pageSize, recordLimit: options.largestInlineRecord)
    }

    private static func isPermissionError(_ e: LMDBError) -> Bool {
        e.code == EACCES || e.code == EPERM || e.code == EROFS
    }

    /// True when no write transaction can begin.
    var isReadOnly: Bool { readOnlyReason != nil }

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
            return try env.read { try body(Self.snapshot(of: $0)) }
        } catch let e as LMDBError {
            throw DatabaseError.storage(e, "read from '\(path)' failed")
        }
    }

    /// Runs `body` in a read snapshot of its own that may open existing tables
    /// (`Snapshot.table(named:)`): opening a database and loading a catalogue another process
    /// changed, without LMDB's write lock (so never waiting for another process's writer).
    func readOpeningTables<R>(_ body: (Snapshot) throws -> R) throws -> R {
        do {
            return try env.readOpeningTables { try body(Snapshot($0)) }
        } catch let e as LMDBError {
            throw DatabaseError.storage(e, "read from '\(path)' failed")
        }
    }

    /// Begins a snapshot that outlives a closure (a lazy result set); end it with
    /// `endSnapshot(_:)` on the same thread.
    func beginSnapshot() throws -> Snapshot {
        do { return Self.snapshot(of: try env.beginRead()) } catch {
            throw DatabaseError.storage(error, "read from '\(path)' failed")
        }
    }

    /// The snapshot wrapper of a read transaction: made once per LMDB handle and attached to
    /// it, so a reused (pooled) transaction brings its wrapper back and an execution
    /// allocates neither.
    @inline(__always)
    static func snapshot(of txn: Transaction) -> Snapshot {
        if let s = txn.attached { return unsafeDowncast(s, to: Snapshot.self) }
        let s = Snapshot(txn)
        txn.attached = s
        return s
    }

    /// Ends a snapshot begun by `beginSnapshot()`.
    func endSnapshot(_ snapshot: Snapshot) { env.endRead(snapshot.lmdb) }

    /// Grows the memory map ahead of a write expected to add about `bytes` (see
    /// `Environment.reserve(bytes:)`).
    func reserve(bytes: Int) { env.reserve(bytes: bytes) }

    /// Runs `body` in the write transaction; returning commits, throwing rolls back. If the
    /// map fills up, `body` runs again from the start in a fresh transaction after the map grew.
    func write<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        if let readOnlyReason {
            throw DatabaseError(.readOnly, "cannot write to '\(path)': the database is read-only (\(readOnlyReason))")
        }
        do {
            return try env.write { txn in
                let w = WriteTransaction(txn, spillDirectory: path, store: self)
                let r = try body(w)
                try w.flushPendingWork()
                try w.writeOutDeferredPuts()
                return r
            }
        } catch let e as DatabaseError {
            throw e
        } catch let e as LMDBError {
            throw writeFailure(e)
        }
    }

    /// The error for a failed write: `.diskFull` when the device is full. LMDB reports a
    /// short write (what a full disk causes) as EIO, so EIO counts as full when the file
    /// system has less than 16 MB left.
    private func writeFailure(_ e: LMDBError) -> DatabaseError {
        var full = e.code == ENOSPC || e.code == EDQUOT
        if e.code == EIO {
            var fs = statvfs()
            if statvfs(path, &fs) == 0 { full = Int(fs.f_bavail) * Int(fs.f_frsize) < 16 << 20 }
        }
        if full {
            return DatabaseError(.diskFull, "disk full: the transaction was not written to '\(path)' (\(e.message))", underlying: e)
        }
        return DatabaseError.storage(e, "write to '\(path)' failed")
    }
}
