import CLMDB
import CLMDBGuard

/// An error reported by LMDB: the C return code and LMDB's own message.
///
/// Match specific codes with pattern matching:
///
/// ```swift
/// do { try env.write { ... } } catch LMDBError.readersFull { ... }
/// ```
@usableFromInline package struct LMDBError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The LMDB (or errno) return code.
    @usableFromInline package let code: Int32

    /// Creates an error for an LMDB return code.
    @usableFromInline package init(code: Int32) { self.code = code }

    /// LMDB's description of the code (`mdb_strerror`), or what the fault guard caught.
    @usableFromInline package var message: String {
        switch code {
        case TESSERA_LMDB_FAULT: "LMDB failed on a damaged page: " + String(cString: tessera_lmdb_last_fault_message())
        case LMDBError.outsideFile.code: "a value read lies outside the data file (a damaged page)"
        case TESSERA_LMDB_DAMAGED_PAGE: "a page the write would change is damaged (the write was not made)"
        case LMDBError.closed.code: "the database is closed"
        default: String(cString: mdb_strerror(code))
        }
    }

    /// A readable description: the message and the code.
    @usableFromInline package var description: String { "LMDB error \(code): \(message)" }

    /// Key/data pair already exists.
    @usableFromInline package static let keyExists = LMDBError(code: MDB_KEYEXIST)
    /// Key/data pair not found.
    @usableFromInline package static let notFound = LMDBError(code: MDB_NOTFOUND)
    /// The environment map is full. Never surfaced by `Environment.write`, which grows the map.
    @usableFromInline package static let mapFull = LMDBError(code: MDB_MAP_FULL)
    /// The environment's map was resized by another process.
    @usableFromInline package static let mapResized = LMDBError(code: MDB_MAP_RESIZED)
    /// Too many named databases.
    @usableFromInline package static let dbsFull = LMDBError(code: MDB_DBS_FULL)
    /// Too many readers.
    @usableFromInline package static let readersFull = LMDBError(code: MDB_READERS_FULL)
    /// The transaction has too many dirty pages.
    @usableFromInline package static let txnFull = LMDBError(code: MDB_TXN_FULL)
    /// Key or data too large (keys are limited to 511 bytes by default).
    @usableFromInline package static let badValueSize = LMDBError(code: MDB_BAD_VALSIZE)
    /// The file is not an LMDB file.
    @usableFromInline package static let invalid = LMDBError(code: MDB_INVALID)
    /// Environment version mismatch.
    @usableFromInline package static let versionMismatch = LMDBError(code: MDB_VERSION_MISMATCH)
    /// The database is corrupted.
    @usableFromInline package static let corrupted = LMDBError(code: MDB_CORRUPTED)
    /// A page was not found (LMDB's "database corrupted" case of a page number beyond the file).
    @usableFromInline package static let pageNotFound = LMDBError(code: MDB_PAGE_NOTFOUND)

    /// True for the codes LMDB returns when it finds damaged data: `MDB_CORRUPTED`,
    /// `MDB_PAGE_NOTFOUND`, `MDB_PANIC`, `MDB_PAGE_FULL` and `MDB_INCOMPATIBLE` (a table's
    /// flags that do not match), and `MDB_BAD_TXN` (the transaction failed after such an error).
    @usableFromInline package var meansDamage: Bool {
        [MDB_CORRUPTED, MDB_PAGE_NOTFOUND, MDB_PANIC, MDB_PAGE_FULL, MDB_INCOMPATIBLE, MDB_BAD_TXN,
         TESSERA_LMDB_FAULT, TESSERA_LMDB_DAMAGED_PAGE, LMDBError.outsideFile.code].contains(code)
    }

    /// LMDB faulted (SIGSEGV, SIGBUS) or failed an assertion on a damaged page; the guarded
    /// call returned instead (CLMDBGuard).
    @usableFromInline package static let fault = LMDBError(code: TESSERA_LMDB_FAULT)
    /// A key or value LMDB returned lies outside the data file (`MapWindow`).
    @usableFromInline package static let outsideFile = LMDBError(code: -30601)

    /// No space left on the device (errno ENOSPC).
    @usableFromInline package static let noSpace = LMDBError(code: 28)
    /// The environment cannot be used any more: a compaction replaced the data file but could
    /// not reopen it (errno EBADF). The data is safe on disk; reopen the database.
    @usableFromInline package static let unusable = LMDBError(code: 9)

    /// The environment was closed (`Environment.close()`): no transaction can begin.
    @usableFromInline package static let closed = LMDBError(code: -30603)

    /// Lets `catch LMDBError.mapFull` match any thrown error with that code.
    @usableFromInline package static func ~= (pattern: LMDBError, value: any Error) -> Bool {
        (value as? LMDBError)?.code == pattern.code
    }
}

/// Turns an LMDB return code into a thrown `LMDBError`; every call into LMDB goes through it.
@inlinable
@inline(__always)
package func check(_ rc: Int32) throws(LMDBError) {
    if rc != 0 { throw makeError(rc) }
}

@inline(never)
@usableFromInline package func makeError(_ rc: Int32) -> LMDBError { LMDBError(code: rc) }
