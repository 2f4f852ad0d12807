#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What Tessera checks of `data.mdb` before LMDB maps it. LMDB trusts its file: it maps it
/// and follows page numbers, so a file shorter than its meta page says is read past its end
/// (SIGBUS), and a zero-length file is taken for a new, empty database. The checks read the
/// file with `pread` (never through the map):
///
/// - a zero-length `data.mdb` is damage, not a new database;
/// - both meta pages (LMDB's file header: pages 0 and 1, layout `MDB_meta` of LMDB 0.9) must
///   be valid — magic 0xBEEFC0DE, data version 1, their own page number, a page size LMDB can
///   use, root pages within the file;
/// - the file holds every page the newest meta page uses: (last page + 1) × page size bytes,
///   or the pages past its end are free (pages a transaction allocated and freed again are
///   never written);
/// - LMDB's free-page lists are sound (LMDB copies them into memory trusting their lengths).
///
/// A file whose header is damaged but whose pages look like LMDB's (each page starts with
/// its own number) is reported as damaged, not as "not a database".
enum DataFileCheck {
    /// LMDB's `MDB_MAGIC`.
    static let magic: UInt32 = 0xBEEF_C0DE
    /// LMDB's `MDB_DATA_VERSION` (0.9).
    static let dataVersion: UInt32 = 1
    /// `PAGEHDRSZ`: page number (8), pad (2), flags (2), lower/upper (2 + 2).
    static let pageHeaderSize = 16
    /// `P_META`.
    static let metaPageFlag: UInt16 = 0x08
    /// `P_INVALID`: the root of an empty tree.
    static let invalidPage = UInt64.max

    /// One meta page as read from the file (offsets of `MDB_meta` on a 64-bit build, after
    /// the page header: magic 0, version 4, address 8, map size 16, the free and main trees'
    /// `MDB_db` records 24 and 72 (48 bytes each: pad — the page size in the free tree's —,
    /// flags, depth, branch/leaf/overflow page counts, entries, root), last page 120,
    /// transaction ID 128).
    struct MetaPage {
        var index: Int
        var pageNumber: UInt64
        var flags: UInt16
        var magic: UInt32
        var version: UInt32
        var pageSize: Int
        var freeRoot: UInt64
        var mainRoot: UInt64
        var lastPage: UInt64
        var txnID: UInt64

        static let size = 136

        init(index: Int, bytes b: [UInt8]) {
            func u16(_ o: Int) -> UInt16 { UInt16(b[o]) | UInt16(b[o + 1]) << 8 }
            func u32(_ o: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(b[o + $1]) << (8 * $1) } }
            func u64(_ o: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(b[o + $1]) << (8 * $1) } }
            let m = DataFileCheck.pageHeaderSize
            self.index = index
            pageNumber = u64(0)
            flags = u16(10)
            magic = u32(m)
            version = u32(m + 4)
            pageSize = Int(u32(m + 24))
            freeRoot = u64(m + 24 + 40)
            mainRoot = u64(m + 72 + 40)
            lastPage = u64(m + 120)
            txnID = u64(m + 128)
        }

        var hasMagic: Bool { magic == DataFileCheck.magic }

        /// What is wrong with this meta page, or nil.
        var problem: String? {
            if !hasMagic { return "its magic number is \(hex(magic)), not \(hex(DataFileCheck.magic))" }
            if version != DataFileCheck.dataVersion { return "its LMDB data version is \(version), not \(DataFileCheck.dataVersion)" }
            if flags & DataFileCheck.metaPageFlag == 0 { return "it is not marked as a meta page (flags \(hex(UInt32(flags))))" }
            if pageNumber != UInt64(index) { return "it carries page number \(pageNumber)" }
            if pageSize < 512 || pageSize > 65_536 || pageSize & (pageSize - 1) != 0 { return "its page size \(pageSize) is impossible" }
            if lastPage < 1 || lastPage > UInt64(Int.max / pageSize) { return "its last page \(lastPage) is impossible" }
            for (name, root) in [("free-page", freeRoot), ("main", mainRoot)] where root != DataFileCheck.invalidPage && (root < 2 || root > lastPage) {
                return "the root of its \(name) tree (page \(root)) is outside pages 2…\(lastPage)"
            }
            return nil
        }
    }

    /// Checks `<directory>/data.mdb` before it is opened; a missing file is a new database.
    ///
    /// - Throws: `DatabaseError.corrupt` saying what is wrong (a zero-length file, a damaged
    ///   header, a truncated file with the expected and actual sizes); `.notADatabase` for a
    ///   file that is not LMDB's at all.
    static func validate(directory: String) throws {
        let path = directory + "/data.mdb"
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            // Missing: a new database. Unreadable: LMDB reports it (permission denied).
            return
        }
        defer { close(fd) }
        // A writer in another process may be updating a meta page while it is read (a torn
        // read): a problem is reported only if it is still there when read again.
        var problem: DatabaseError?
        for attempt in 0..<3 {
            problem = try examine(fd: fd, path: path)
            if problem == nil { return }
            if attempt < 2 { usleep(20_000) }
        }
        if let problem { throw problem }
    }

    /// The problem with the open file `fd`, or nil.
    private static func examine(fd: Int32, path: String) throws -> DatabaseError? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw DatabaseError(.notADatabase, "'\(path)' is not a regular file")
        }
        let size = Int(st.st_size)
        if size == 0 {
            return DatabaseError(.corrupt, "'\(path)' is empty (0 bytes): the database file was truncated or never written. "
                + "It is not opened as a new database; restore it from a copy, or delete the directory to start again")
        }
        guard let first = readMeta(fd: fd, index: 0, offset: 0) else {
            // Shorter than a meta page: LMDB's magic where page 0 has it means a cut file.
            var head = [UInt8](repeating: 0, count: pageHeaderSize + 4)
            if head.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, $0.count, 0) }) == head.count,
               MetaPage(index: 0, bytes: head + [UInt8](repeating: 0, count: MetaPage.size - 4)).hasMagic {
                return DatabaseError(.corrupt, "'\(path)' is truncated: it is \(size) bytes, shorter than LMDB's header (two pages)")
            }
            return damagedOrForeign(fd: fd, size: size, path: path, what: "the file is \(size) bytes, shorter than LMDB's header")
        }
        // LMDB finds page 1 at page 0's page size; when page 0 is damaged, look for it at the
        // usual sizes.
        var second: MetaPage?
        if first.problem == nil {
            second = readMeta(fd: fd, index: 1, offset: first.pageSize)
        } else {
            for candidate in [4096, 8192, 16_384, 32_768, 65_536, 2048, 1024, 512] {
                if let m = readMeta(fd: fd, index: 1, offset: candidate), m.problem == nil, m.pageSize == candidate { second = m; break }
            }
        }
        if !first.hasMagic && second?.hasMagic != true {
            return damagedOrForeign(fd: fd, size: size, path: path, what: "neither meta page has LMDB's magic number")
        }
        for m in [first, second] {
            guard let m else {
                return DatabaseError(.corrupt, "'\(path)' is damaged: meta page 1 (LMDB's file header) cannot be read: the file is \(size) bytes")
            }
            if let p = m.problem {
                return DatabaseError(.corrupt, "'\(path)' is damaged: meta page \(m.index) (LMDB's file header) is not valid: \(p)")
            }
        }
        let newest = [first, second!].max { $0.txnID < $1.txnID }!
        // Stat again: a writer only ever makes the file longer, and the meta page is written
        // after the pages it names.
        var now = stat()
        let actual = fstat(fd, &now) == 0 ? Int(now.st_size) : size
        let (product, overflow) = Int(newest.lastPage + 1).multipliedReportingOverflow(by: newest.pageSize)
        // Pages allocated and freed again by the same transaction ("loose" pages) are never
        // written: the file may end before the last page when every page past its end is free.
        if overflow || (product > actual && !tailIsFree(fd: fd, meta: newest, fileSize: actual)) {
            let expected = overflow ? "more than \(Int.max)" : "\(product)"
            return DatabaseError(.corrupt, "'\(path)' is truncated: its last transaction (\(newest.txnID)) uses pages 0…\(newest.lastPage) "
                + "of \(newest.pageSize) bytes, so the file should be at least \(expected) bytes, but it is \(actual) bytes")
        }
        if let problem = walkFreeList(fd: fd, meta: newest, fileSize: actual, visit: { _ in true }) {
            return DatabaseError(.corrupt, "'\(path)' is damaged: LMDB's list of free pages is not valid (\(problem))")
        }
        return nil
    }

    /// True if every page from the end of the file to `meta.lastPage` is in LMDB's free-page
    /// list (a walk of its free tree; any page of it outside the file: false).
    private static func tailIsFree(fd: Int32, meta: MetaPage, fileSize: Int) -> Bool {
        let firstMissing = UInt64(fileSize / meta.pageSize)
        guard meta.lastPage >= firstMissing, meta.lastPage - firstMissing < 1 << 24 else { return false }
        var missing = Set(firstMissing...meta.lastPage)
        let problem = walkFreeList(fd: fd, meta: meta, fileSize: fileSize) { missing.remove($0); return !missing.isEmpty }
        return problem == nil && missing.isEmpty
    }

    /// Walks LMDB's free-page tree (the free tree of `meta`, read with `pread`), calling
    /// `visit` with each free page number until it returns false. Returns what is wrong with
    /// the tree, or nil. LMDB merges these lists into memory it allocated when a write needs
    /// pages, trusting their lengths: a damaged list would make it write past that memory.
    private static func walkFreeList(fd: Int32, meta: MetaPage, fileSize: Int, visit: (UInt64) -> Bool) -> String? {
        let psize = meta.pageSize
        let filePages = UInt64(fileSize / psize)
        guard meta.freeRoot != invalidPage else { return nil }
        var stack = [meta.freeRoot]
        var visited = 0
        var page = [UInt8](repeating: 0, count: psize)
        func u16(_ o: Int) -> Int { Int(page[o]) | Int(page[o + 1]) << 8 }
        func u64(_ bytes: [UInt8], _ o: Int) -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[o + $1]) << (8 * $1) } }
        func read(_ pgno: UInt64, into buffer: inout [UInt8], count: Int) -> Bool {
            guard pgno >= 2, pgno < filePages, pgno <= meta.lastPage else { return false }
            return buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(Int(pgno) * psize)) } == count
        }
        while let pgno = stack.popLast() {
            visited += 1
            if visited > Int(filePages) { return "its free-page tree has a cycle" }
            guard read(pgno, into: &page, count: psize) else { return "its free-page tree names page \(pgno), outside the file" }
            let flags = u16(10), lower = u16(12), upper = u16(14)
            guard u64(page, 0) == pgno else { return "free-page tree page \(pgno) carries number \(u64(page, 0))" }
            guard flags & 0x03 != 0, flags & 0x0C == 0, lower >= pageHeaderSize, lower <= upper, upper <= psize else {
                return "free-page tree page \(pgno) has a damaged header"
            }
            for i in 0..<(lower - pageHeaderSize) / 2 {
                let node = u16(pageHeaderSize + 2 * i)
                guard node >= upper, node + 8 <= psize else { return "free-page tree page \(pgno) has a damaged node" }
                let lo = UInt64(u16(node)), hi = UInt64(u16(node + 2)), nodeFlags = UInt64(u16(node + 4))
                let keySize = u16(node + 6)
                if flags & 0x01 != 0 {  // branch: the child's page number in lo, hi, flags
                    guard node + 8 + keySize <= psize else { return "free-page tree page \(pgno) has a damaged node" }
                    stack.append(lo | hi << 16 | nodeFlags << 32)
                    continue
                }
                // A leaf: key = a transaction ID (8 bytes), data = a list of page numbers.
                let dataSize = Int(lo | hi << 16)
                let dataOffset = node + 8 + keySize
                guard keySize == 8, nodeFlags & ~0x01 == 0, dataSize >= 8, dataSize % 8 == 0 else {
                    return "free-page tree page \(pgno) has a damaged entry"
                }
                var ids: [UInt8]
                if nodeFlags & 0x01 != 0 {  // F_BIGDATA: the list is on overflow pages
                    guard dataOffset + 8 <= psize else { return "free-page tree page \(pgno) has a damaged entry" }
                    let overflow = u64(page, dataOffset)
                    let pages = (dataSize + pageHeaderSize + psize - 1) / psize
                    guard overflow + UInt64(pages) - 1 <= meta.lastPage else { return "a free-page list names overflow page \(overflow), past the last page" }
                    var head = [UInt8](repeating: 0, count: pageHeaderSize + dataSize)
                    guard read(overflow, into: &head, count: head.count) else { return "a free-page list on page \(overflow) is outside the file" }
                    guard u64(head, 0) == overflow, Int(head[10]) & 0x04 != 0 else { return "free-page list page \(overflow) is damaged" }
                    ids = Array(head[pageHeaderSize...])
                } else {
                    guard dataOffset + dataSize <= psize else { return "free-page tree page \(pgno) has a damaged entry" }
                    ids = Array(page[dataOffset..<dataOffset + dataSize])
                }
                // An IDL: the count, then the page numbers in descending order.
                let count = u64(ids, 0)
                guard count == UInt64(dataSize / 8 - 1) else { return "a free-page list says \(count) pages but holds \(dataSize / 8 - 1)" }
                var previous = UInt64.max
                for k in stride(from: 8, to: ids.count, by: 8) {
                    let id = u64(ids, k)
                    guard id >= 2, id <= meta.lastPage, id < previous else { return "a free-page list holds page \(id) out of order or out of range" }
                    previous = id
                    if !visit(id) { return nil }
                }
            }
        }
        return nil
    }

    /// A file without a valid header: damaged if its pages look like LMDB's (pages 1… each
    /// start with their own page number), else not a database.
    private static func damagedOrForeign(fd: Int32, size: Int, path: String, what: String) -> DatabaseError {
        for pageSize in [4096, 8192, 16_384, 32_768, 65_536] {
            let pages = min(size / pageSize, 64)
            guard pages >= 2 else { continue }
            var matches = 0
            for k in 1..<pages {
                var number: UInt64 = 0
                let n = withUnsafeMutableBytes(of: &number) { pread(fd, $0.baseAddress, 8, off_t(k * pageSize)) }
                if n == 8 && UInt64(littleEndian: number) == UInt64(k) { matches += 1 }
            }
            if matches >= 1 {
                return DatabaseError(.corrupt, "'\(path)' is damaged: its header (LMDB's meta pages) is not valid (\(what)), "
                    + "although its pages are LMDB's. Restore it from a copy; do not delete it if it holds data you need")
            }
        }
        return DatabaseError(.notADatabase, "'\(path)' is not a Tessera database: \(what) (if it was a database, its header is damaged)")
    }

    private static func readMeta(fd: Int32, index: Int, offset: Int) -> MetaPage? {
        var bytes = [UInt8](repeating: 0, count: pageHeaderSize + MetaPage.size)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
        guard n == bytes.count else { return nil }
        return MetaPage(index: index, bytes: bytes)
    }
}

private func hex(_ v: UInt32) -> String { "0x" + String(v, radix: 16, uppercase: true) }
