import LMDB

/// An error from the database API: what went wrong, and which document, collection or index.
public struct DatabaseError: Error, Sendable, CustomStringConvertible {
    /// The class of error.
    public enum Code: String, Sendable, Hashable {
        /// A document ID is empty, too long or not valid UTF-8.
        case invalidDocumentID
        /// A scope, collection or index name breaks the naming rules.
        case invalidName
        /// A document body is not valid JSON.
        case invalidJSON
        /// A document body is not a JSON object.
        case notAnObject
        /// A document body uses a reserved top-level key (`_id`, `_rev`, `_deleted`, `_attachments`, `_removed`).
        case reservedKey
        /// A value cannot be stored (for example a Swift type with no JSON form).
        case invalidValue
        /// The collection, scope, document or index does not exist.
        case notFound
        /// The collection already exists.
        case alreadyExists
        /// The document changed since it was read (concurrency control).
        case conflict
        /// The path is not a Tessera database.
        case notADatabase
        /// The database was written by a newer version of Tessera.
        case unsupportedVersion
        /// The database (or collection) was closed or deleted.
        case notOpen
        /// An index definition is invalid.
        case invalidIndex
        /// Nesting is deeper than the documented limit.
        case tooDeep
        /// A documented limit of the database was reached: too many collections and indexes
        /// (LMDB tables, see `Database.createCollection(name:scope:)`).
        case limitReached
        /// The storage layer failed (I/O error, map limit reached).
        case storage
        /// The disk (or the user's quota) is full: the transaction was not written; everything
        /// committed before it is intact.
        case diskFull
        /// Data in the file is damaged (a truncated or overwritten file, a damaged page or record).
        case corrupt
        /// The database is read-only (`DatabaseConfiguration.readOnly`, or its files cannot be
        /// written), and the operation would write.
        case readOnly
        /// The database is in use in a way that prevents the operation: another process has it
        /// open during a compaction, or the calling thread is inside a batch.
        case busy
        /// A query was stopped before it finished: `ResultSet.interrupt()`, `Query.interrupt()`,
        /// `Database.interrupt()`, a cancelled `Task`, or `DatabaseConfiguration.queryTimeout`.
        case interrupted
    }

    /// The class of error.
    public var code: Code
    /// A readable explanation naming the document, collection or index concerned.
    public var message: String
    /// The underlying error (JSON, LMDB, query), when there is one.
    public var underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// `code: message`.
    public var description: String { "\(code.rawValue): \(message)" }

}

extension DatabaseError.Code {
    /// Pattern-matches an error on its code: `catch DatabaseError.Code.conflict`.
    public static func ~= (code: DatabaseError.Code, error: any Error) -> Bool {
        (error as? DatabaseError)?.code == code
    }
}

extension DatabaseError {
    @inline(never)
    static func storage(_ error: any Error, _ context: String) -> DatabaseError {
        if let e = error as? DatabaseError { return e }
        if let e = error as? LMDBError {
            if e == .closed { return DatabaseError(.notOpen, "\(context): the database was closed", underlying: e) }
            if e.meansDamage {
                return DatabaseError(.corrupt, "\(context): the database file is damaged (\(e.message))", underlying: e)
            }
            return DatabaseError(.storage, "\(context): \(e.message)", underlying: e)
        }
        return DatabaseError(.storage, "\(context): \(error)")
    }
}
