import LMDB

/// How the pages of a database file are used (`tessera stats`).
package struct StorageSpace: Sendable {
    /// The page size in bytes.
    package var pageSize: Int
    /// Pages that hold data (documents, indexes, the catalogue, LMDB's meta pages).
    package var livePages: Int
    /// Pages on LMDB's freelist, free for later writes (compaction gives them back to the disk).
    package var freePages: Int
    /// Size of the data file in bytes.
    package var fileBytes: Int
}

/// What a compaction did.
package struct CompactionSummary: Sendable {
    /// Size of the data file before, in bytes.
    package var bytesBefore: Int
    /// Size of the data file after, in bytes.
    package var bytesAfter: Int
    /// Compacting copies made (more than one when writes committed while copying).
    package var copies: Int
}

extension Store {
    /// Live and free pages of the data file.
    func space() throws -> StorageSpace {
        do {
            let u = try env.spaceUsage()
            return StorageSpace(pageSize: u.pageSize, livePages: u.livePages, freePages: u.freePages, fileBytes: u.fileBytes)
        } catch {
            throw DatabaseError.storage(error, "cannot read the page counts of '\(path)'")
        }
    }

    /// Replaces the data file by a compacted copy, with the database open (see
    /// `Environment.compact()` for how it stays safe for this and other processes).
    func compact() throws -> CompactionSummary {
        do {
            let r = try env.compact()
            return CompactionSummary(bytesBefore: r.bytesBefore, bytesAfter: r.bytesAfter, copies: r.copies)
        } catch let e as EnvironmentBusy {
            throw DatabaseError(.busy, "cannot compact '\(path)': \(e)")
        } catch LMDBError.unusable {
            throw DatabaseError(.storage, "cannot compact '\(path)': the database must be reopened (its file was replaced by a compacted copy that could not be opened again)")
        } catch {
            throw DatabaseError.storage(error, "cannot compact '\(path)' (the data file is unchanged)")
        }
    }
}
