// Compaction: LMDB's compacting copy of the environment, swapped in for the data file while
// the environment stays open, and the page accounting that `tessera stats` shows.
//
// How the swap stays safe:
// - The copy (`mdb_env_copyfd2` with `MDB_CP_COMPACT`) is made from a read snapshot while
//   this process keeps reading and writing. It is swapped in only if no write committed since
//   that snapshot (otherwise it is made again; after three tries, with the gate held).
// - Other processes: LMDB holds a shared POSIX lock on byte 0 of the lock file in every
//   process that has the environment open. The swap converts this process's lock into an
//   exclusive one: if that fails, another process has the environment open and the
//   compaction is refused (`EnvironmentBusy`); if it succeeds, a process that starts opening
//   the environment meanwhile waits in `mdb_env_open` until the new file is in place.
// - Such a process then reads the lock file as the old file left it: its last transaction ID
//   `T` selects the meta page (`T & 1`) that readers use. LMDB's compacting copy writes its
//   snapshot as transaction 1 in meta page 1, so both meta pages of the copy are rewritten
//   before the swap to describe the same snapshot as transactions `T` and `T - 1`: whichever
//   page a process picks, with a fresh lock file or the old one, it finds the compacted tree.
// - This process: the swap runs with the gate held exclusively (no transaction of this
//   process open, pooled readers aborted). The old environment is closed, the new file
//   opened in its place, and every table handed out before (a `Table` is an LMDB DBI number)
//   is opened again under the same number.
// - Crashes: the copy goes to `data.mdb.compacting` beside the data file and is fsynced
//   before `rename(2)` replaces the data file atomically (then the directory is fsynced).
//   Killed before the rename, the old file is intact and the partial copy is removed by the
//   next compaction; killed after it, the new file is complete.

import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A compaction was refused: the environment is in use in a way that a swap of its file
/// would break.
package struct EnvironmentBusy: Error, Sendable, CustomStringConvertible {
    /// Why.
    package enum Reason: Sendable, Equatable {
        /// Another process has the environment open (its ID, as the lock file reports it).
        case otherProcess(pid: Int32)
        /// This process opened the environment more than once.
        case openTwiceInProcess
        /// The calling thread is inside a transaction of this environment.
        case ownTransaction
    }

    /// Why.
    package let reason: Reason

    /// A readable explanation.
    package var description: String {
        switch reason {
        case .otherProcess(let pid):
            return "another process (pid \(pid)) has the database open; close it there and try again"
        case .openTwiceInProcess:
            return "this process has the database open more than once; close the other handles and try again"
        case .ownTransaction:
            return "the calling thread has a transaction open on the database (a batch or an unfinished result set)"
        }
    }
}

/// What a compaction did.
package struct CompactionResult: Sendable {
    /// Size of the data file before, in bytes.
    package var bytesBefore: Int
    /// Size of the data file after, in bytes.
    package var bytesAfter: Int
    /// Compacting copies made: more than one when writes committed while copying.
    package var copies: Int
}

/// How the pages of the data file are used.
package struct SpaceUsage: Sendable {
    /// The page size in bytes.
    package var pageSize: Int
    /// Pages up to the last one in use (the part of the file that holds data).
    package var pages: Int
    /// Pages on LMDB's freelist (free for later writes) and the freelist's own pages.
    package var freePages: Int
    /// Size of the data file in bytes.
    package var fileBytes: Int
    /// Pages that hold data: meta pages, tables, indexes.
    package var livePages: Int { pages - freePages }
}

extension Environment {
    /// The data file.
    package var dataFilePath: String { options.noSubdirectory ? path : path + "/data.mdb" }

    /// The lock file.
    var lockFilePath: String { options.noSubdirectory ? path + "-lock" : path + "/lock.mdb" }

    /// Where the compacting copy is written before it replaces the data file.
    package var compactionTemporaryPath: String { dataFilePath + ".compacting" }

    // MARK: - Space

    /// Live and free pages of the data file: walks LMDB's freelist (table 0) in a snapshot.
    package func spaceUsage() throws -> SpaceUsage {
        try read { txn in
            var info = MDB_envinfo()
            var envStat = MDB_stat()
            mdb_env_info(env, &info)
            mdb_env_stat(env, &envStat)
            var freeStat = MDB_stat()
            try check(mdb_stat(txn.handle, 0, &freeStat))
            // Each freelist entry: a transaction ID → a list of page numbers, whose first
            // word is the count (LMDB's IDL).
            var listed = 0
            try txn.withCursor(Table(dbi: 0, name: "")) { c in
                try c.forEach { _, v in
                    if v.count >= MemoryLayout<Int>.size { listed += v.loadUnaligned(as: Int.self) }
                    return true
                }
            }
            let own = freeStat.ms_branch_pages + freeStat.ms_leaf_pages + freeStat.ms_overflow_pages
            var st = stat()
            let fileBytes = fstat(environmentFileDescriptor(), &st) == 0 ? Int(st.st_size) : 0
            return SpaceUsage(pageSize: Int(envStat.ms_psize), pages: info.me_last_pgno + 1,
                              freePages: listed + own, fileBytes: fileBytes)
        }
    }

    private func environmentFileDescriptor() -> Int32 {
        var fd: mdb_filehandle_t = -1
        return mdb_env_get_fd(env, &fd) == 0 ? fd : -1
    }

    // MARK: - Compaction

    /// Replaces the data file by a compacted copy of it (free pages left out, pages renumbered
    /// in tree order) while the environment stays open. Readers of this process go on during
    /// the copy; transactions wait only while the file is swapped.
    ///
    /// - Throws: `EnvironmentBusy` when another process (or another environment of this
    ///   process) has the file open, or the calling thread is inside a transaction; an
    ///   `LMDBError` when the copy fails (`MDB_INCOMPATIBLE` when LMDB finds leaked pages).
    ///   The data file is untouched in every case.
    package func compact() throws -> CompactionResult {
        let thread = currentThreadID()
        if gate.holds(thread) { throw EnvironmentBusy(reason: .ownTransaction) }
        compactionLock.lock()
        defer { compactionLock.unlock() }
        if isClosed { throw LMDBError.closed }
        if gate.withMutex({ unusable }) { throw LMDBError.unusable }
        let before = fileSize(dataFilePath)
        let temp = compactionTemporaryPath
        defer { unlink(temp) } // a no-op once it was renamed
        try refuseOtherOpeners()
        var copies = 0
        while true {
            var copiedAt: UInt64 = 0
            let underGate = copies >= 3
            if !underGate {
                try gate.enter(thread)
                defer { leaveGate(thread) }
                copiedAt = try makeCompactCopy(at: temp)
                copies += 1
            }
            let swapped = try gate.exclusively { () throws -> Bool in
                if underGate {
                    copiedAt = try makeCompactCopy(at: temp)
                    copies += 1
                }
                try lockFileExclusively()
                var info = MDB_envinfo()
                try check(mdb_env_info(env, &info))
                guard UInt64(info.me_last_txnid) == copiedAt else {
                    // A write committed after the snapshot: copy again.
                    setLockFileLock(F_RDLCK)
                    return false
                }
                try swapIn(temp)
                return true
            }
            if swapped { break }
        }
        return CompactionResult(bytesBefore: before, bytesAfter: fileSize(dataFilePath), copies: copies)
    }

    /// Throws if another process or another environment of this process has the file open.
    private func refuseOtherOpeners() throws {
        if OpenEnvironments.count(lockFile: lockFilePath) > 1 { throw EnvironmentBusy(reason: .openTwiceInProcess) }
        if lockFileProbe < 0 {
            let fd = open(lockFilePath, O_RDWR | O_CLOEXEC)
            guard fd >= 0 else { throw LMDBError(code: errno) }
            lockFileProbe = fd
        }
        var lock = lockRange(F_WRLCK)
        // F_GETLK reports a lock of another process that would conflict (never this one's).
        if fcntl(lockFileProbe, F_GETLK, &lock) == 0, Int32(lock.l_type) != F_UNLCK {
            throw EnvironmentBusy(reason: .otherProcess(pid: Int32(lock.l_pid)))
        }
    }

    /// Converts this process's shared lock on the lock file into an exclusive one: fails if
    /// another process has the environment open; makes new openers wait.
    private func lockFileExclusively() throws {
        if setLockFileLock(F_WRLCK) { return }
        var lock = lockRange(F_WRLCK)
        let pid = fcntl(lockFileProbe, F_GETLK, &lock) == 0 && Int32(lock.l_type) != F_UNLCK ? Int32(lock.l_pid) : 0
        throw EnvironmentBusy(reason: .otherProcess(pid: pid))
    }

    @discardableResult
    private func setLockFileLock(_ type: Int32) -> Bool {
        var lock = lockRange(type)
        return fcntl(lockFileProbe, F_SETLK, &lock) == 0
    }

    /// Byte 0 of the lock file: the byte LMDB locks shared in every process that has the
    /// environment open (and exclusively while the first one sets the lock file up).
    private func lockRange(_ type: Int32) -> flock {
        var lock = flock()
        lock.l_type = .init(type)
        lock.l_whence = .init(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 1
        return lock
    }

    /// Writes a compacted copy of the current snapshot to `temp` (replacing any leftover),
    /// rewrites its meta pages and fsyncs it. Returns the transaction ID it holds.
    package func makeCompactCopy(at temp: String) throws -> UInt64 {
        unlink(temp)
        let fd = open(temp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, options.fileMode)
        guard fd >= 0 else { throw LMDBError(code: errno) }
        defer { _ = closeFile(fd) }
        // The copy is labelled with the snapshot of a read transaction begun first and held
        // while it is made: the copy's own snapshot is that one or newer, and newer means the
        // check before the swap sees a later transaction than the label and copies again.
        // Never with the meta pages (`mdb_env_info`): another process's commit writes its meta
        // page before it publishes its transaction ID in the lock file, where snapshots start
        // from, so in between the meta page names a transaction the copy would not hold.
        let (txnid, tables) = try withReadSnapshot { txn in
            try copyCompacted(to: fd)
            var main = MDB_stat()
            try check(mdb_stat(txn, 1, &main))
            return main.ms_entries
        }
        var stat = MDB_stat()
        try check(mdb_env_stat(env, &stat))
        try MetaPages.rewrite(fd: fd, pageSize: Int(stat.ms_psize), txnid: txnid)
        guard fsync(fd) == 0 else { throw LMDBError(code: errno) }
        try verifyCopy(at: temp, txnid: txnid, tables: tables)
        return txnid
    }

    /// Runs `body` while a read transaction is open; returns that transaction's ID — every
    /// snapshot begun during `body` is at least as recent — and what `body` returned.
    private func withReadSnapshot<R>(_ body: (OpaquePointer) throws -> R) throws -> (UInt64, R) {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn))
        defer { mdb_txn_abort(txn) }
        return (UInt64(mdb_txn_id(txn)), try body(txn!))
    }

    /// LMDB's compacting copy of the environment (a snapshot of its own) into `fd`.
    private func copyCompacted(to fd: Int32) throws {
        try check(mdb_env_copyfd2(env, fd, UInt32(MDB_CP_COMPACT)))
    }

    /// Opens the copy on its own (read-only, no lock file) and checks that it holds
    /// transaction `txnid` with the `tables` named tables of that snapshot.
    private func verifyCopy(at temp: String, txnid: UInt64, tables: Int) throws {
        var raw: OpaquePointer?
        try check(mdb_env_create(&raw))
        defer { mdb_env_close(raw) }
        try check(mdb_env_set_maxdbs(raw, MDB_dbi(options.maxTables)))
        try check(mdb_env_set_mapsize(raw, mapSize))
        try check(mdb_env_open(raw, temp, UInt32(MDB_NOSUBDIR | MDB_RDONLY | MDB_NOLOCK), options.fileMode))
        var info = MDB_envinfo()
        try check(mdb_env_info(raw, &info))
        guard UInt64(info.me_last_txnid) == txnid else { throw LMDBError.corrupted }
        var copy = MDB_stat()
        var txn: OpaquePointer?
        try check(mdb_txn_begin(raw, nil, UInt32(MDB_RDONLY), &txn))
        defer { mdb_txn_abort(txn) }
        try check(mdb_stat(txn, 1, &copy))
        if copy.ms_entries == tables { return }
        // A copy newer than its label (a commit came between the labelling snapshot and the
        // copy's own) may hold other tables: the check before the swap sees that commit and
        // copies again. Only a copy of the labelled snapshot itself is damaged if it differs.
        var now = MDB_envinfo()
        try check(mdb_env_info(env, &now))
        guard UInt64(now.me_last_txnid) != txnid else { throw LMDBError.corrupted }
    }

    /// Puts the copy in place of the data file and reopens the environment on it. Runs with
    /// the gate held exclusively and the lock file locked exclusively.
    private func swapIn(_ temp: String) throws {
        let slots: [MDB_dbi: String]
        do {
            slots = try tableSlots()
            guard rename(temp, dataFilePath) == 0 else { throw LMDBError(code: errno) }
        } catch {
            setLockFileLock(F_RDLCK)
            throw error
        }
        syncDirectory(of: dataFilePath)
        drainPool()
        // Closing drops this process's locks on the lock file: openers that waited go on,
        // on the new file.
        mdb_env_close(env)
        do {
            env = try openReplacement()
        } catch {
            unusable = true
            throw error
        }
        do {
            try attachWindow()
            try reopenTables(slots)
        } catch {
            mdb_env_close(env)
            unusable = true
            throw error
        }
        var dead: Int32 = 0
        mdb_reader_check(env, &dead)
    }

    /// The table open under each DBI number (every named table of the file is opened, which
    /// takes a free number for those not open yet: nothing refers to those numbers).
    private func tableSlots() throws -> [MDB_dbi: String] {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn))
        defer { mdb_txn_abort(txn) }
        var main = MDB_dbi()
        try check(mdb_dbi_open(txn, nil, 0, &main))
        var names: [String] = []
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, main, &cursor))
        defer { mdb_cursor_close(cursor) }
        var k = MDB_val()
        var v = MDB_val()
        var op = MDB_FIRST
        while mdb_cursor_get(cursor, &k, &v, op) == 0 {
            names.append(String(decoding: UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size), as: UTF8.self))
            op = MDB_NEXT
        }
        var slots: [MDB_dbi: String] = [:]
        for name in names {
            var dbi = MDB_dbi()
            // MDB_INCOMPATIBLE: a key of the main table that is not a table (never written by us).
            if mdb_dbi_open(txn, name, 0, &dbi) == 0 { slots[dbi] = name }
        }
        return slots
    }

    /// A new environment on the (new) data file, with this one's options and map size.
    private func openReplacement() throws -> OpaquePointer {
        var raw: OpaquePointer?
        try check(mdb_env_create(&raw))
        guard let raw else { throw LMDBError.invalid }
        do {
            let size = try Environment.openEnvironment(raw, path: path, options: options, mapSize: mapSize)
            // `currentMapSize` reads it under the gate's mutex, from threads holding nothing.
            gate.withMutex { mapSize = size }
            return raw
        } catch {
            mdb_env_close(raw)
            throw error
        }
    }

    /// Opens every table under the DBI number it had, in one write transaction: LMDB gives a
    /// fresh environment's tables consecutive numbers in the order they are opened, so a
    /// number that was free before is taken by a placeholder table, deleted again afterwards.
    private func reopenTables(_ slots: [MDB_dbi: String]) throws {
        guard let last = slots.keys.max() else { return }
        var placeholders: [MDB_dbi] = []
        try rawWrite { txn in
            for slot in 2...max(2, last) {
                var dbi = MDB_dbi()
                if let name = slots[slot] {
                    try check(mdb_dbi_open(txn, name, 0, &dbi))
                } else {
                    try check(mdb_dbi_open(txn, "\u{1}compaction placeholder \(slot)", UInt32(MDB_CREATE), &dbi))
                    placeholders.append(dbi)
                }
                guard dbi == slot else { throw LMDBError.corrupted }
            }
        }
        if placeholders.isEmpty { return }
        try rawWrite { txn in
            for dbi in placeholders { try check(mdb_drop(txn, dbi, 1)) }
        }
    }

    /// A write transaction on `env` outside the gate's bookkeeping (the gate is held exclusively).
    private func rawWrite(_ body: (OpaquePointer) throws -> Void) throws {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn))
        do {
            try body(txn!)
            try check(mdb_txn_commit(txn))
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
    }
}

/// LMDB's meta pages (pages 0 and 1 of the data file), as far as a compaction rewrites them:
/// a page header (page number, flags: 16 bytes), then the meta record — magic, format
/// version, address, map size, the free and main table records (48 bytes each), the last
/// page number and the transaction ID. LMDB's on-disk format 1 (`MDB_DATA_VERSION`).
enum MetaPages {
    static let magic: UInt32 = 0xBEEF_C0DE
    static let dataVersion: UInt32 = 1
    static let headerSize = 16
    static let txnidOffset = headerSize + 4 + 4 + 8 + 8 + 2 * 48 + 8

    /// Makes both meta pages of a fresh compacting copy describe its snapshot, as
    /// transaction `txnid` in page `txnid & 1` and `txnid - 1` in the other.
    static func rewrite(fd: Int32, pageSize: Int, txnid: UInt64) throws {
        guard txnid >= 1, pageSize >= txnidOffset + 8 else { throw LMDBError.invalid }
        var page = [UInt8](repeating: 0, count: pageSize)
        let n = page.withUnsafeMutableBytes { pread(fd, $0.baseAddress, pageSize, off_t(pageSize)) }
        guard n == pageSize else { throw LMDBError(code: n < 0 ? errno : EIO) }
        // The copy writes its snapshot in meta page 1 as transaction 1 (lmdb mdb_env_copyfd1).
        guard read(page, 0, UInt64.self) == 1, read(page, headerSize, UInt32.self) == magic,
              read(page, headerSize + 4, UInt32.self) == dataVersion, read(page, txnidOffset, UInt64.self) == 1
        else { throw LMDBError.versionMismatch }
        for index in 0..<2 {
            write(&page, 0, UInt64(index))
            write(&page, txnidOffset, UInt64(index) == txnid & 1 ? txnid : txnid - 1)
            let w = page.withUnsafeBytes { pwrite(fd, $0.baseAddress, pageSize, off_t(index * pageSize)) }
            guard w == pageSize else { throw LMDBError(code: w < 0 ? errno : EIO) }
        }
    }

    private static func read<T: FixedWidthInteger>(_ page: [UInt8], _ offset: Int, _: T.Type) -> T {
        page.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
    }

    private static func write<T: FixedWidthInteger>(_ page: inout [UInt8], _ offset: Int, _ value: T) {
        page.withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self) }
    }
}

/// How many environments of this process are open on each lock file (by device and inode):
/// a compaction must not swap the file under another environment of the same process, which
/// the lock file's POSIX locks cannot tell apart.
enum OpenEnvironments {
    private static let lock = MutexLock()
    nonisolated(unsafe) private static var counts: [FileID: Int] = [:]

    struct FileID: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    static func id(_ path: String) -> FileID? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return FileID(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }

    static func add(lockFile: String) {
        guard let id = id(lockFile) else { return }
        lock.lock()
        counts[id, default: 0] += 1
        lock.unlock()
    }

    static func remove(lockFile: String) {
        guard let id = id(lockFile) else { return }
        lock.lock()
        if let n = counts[id], n > 1 { counts[id] = n - 1 } else { counts[id] = nil }
        lock.unlock()
    }

    static func count(lockFile: String) -> Int {
        guard let id = id(lockFile) else { return 0 }
        lock.lock()
        defer { lock.unlock() }
        return counts[id] ?? 0
    }
}

/// The size of a file in bytes (0 if it cannot be read).
func fileSize(_ path: String) -> Int {
    var st = stat()
    return stat(path, &st) == 0 ? Int(st.st_size) : 0
}

/// fsyncs the directory holding `path`, so that a rename in it is durable.
func syncDirectory(of path: String) {
    let dir = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
    let fd = open(dir.isEmpty ? "/" : dir, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return }
    _ = fsync(fd)
    _ = closeFile(fd)
}

/// `close(2)` (the name `close` is taken by `Environment.close()` inside its extensions).
func closeFile(_ fd: Int32) -> Int32 {
    #if canImport(Glibc)
    Glibc.close(fd)
    #else
    Darwin.close(fd)
    #endif
}
