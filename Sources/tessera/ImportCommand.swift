// `tessera import`: JSON arrays and JSON Lines, in batches of one transaction each.

import Tessera

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum ImportCommand {
    static let spec = CommandSpec(
        name: "import", operands: "DB FILE...",
        summary: "Load documents from JSON Lines or JSON array files (\"-\" reads standard input).",
        options: [
            DocumentCommands.collectionOption,
            .value("--id-field", "NAME", "Top-level property holding the document ID, removed from the body (default: _id)"),
            .value("--batch", "N", "Documents per transaction (default: 10000 while IDs ascend, else 100000)"),
        ],
        minOperands: 1, maxOperands: nil,
        details: """
            A file whose first non-blank character is '[' is read as one JSON array of objects;
            any other file as JSON Lines (one object per line; blank lines are skipped).
            Documents without the ID property get a generated ID ('-' and 22 characters, in the
            order they were made, so they are appended); a string or integer ID is used as is.
            The database and the collection are created if needed.

            Each batch is one transaction: at the first malformed line the import stops, reports
            FILE:LINE:COLUMN, and nothing of that batch is written (earlier batches stay).
            Without --batch, batches hold 10,000 documents while the IDs come in ascending
            order (each batch is appended after the last) and 100,000 from the first ID out of
            order on (one transaction writes its documents in ID order, so large batches keep
            the file dense).
            On a terminal a progress bar shows documents/s and the time left; otherwise one
            summary line is printed on stderr.
            """,
        run: run)

    static func run(_ inv: Invocation) throws -> Int32 {
        let batchSize = try inv.int("--batch", min: 1)
        let idField = inv.value("--id-field") ?? "_id"
        if idField.isEmpty { throw CLIError.usage("--id-field needs a property name") }
        let files = inv.operands
        var total = 0
        for f in files where f != "-" {
            if let size = fileSize(f) { total += size; continue }
            // Not a regular file: a directory is refused; devices, pipes and process
            // substitutions (/dev/fd/63) are read as they come.
            if isDirectory(f) { throw CLIError.failure("'\(f)' is a directory, not a file") }
            guard access(f, R_OK) == 0 else { throw CLIError.failure("cannot open '\(f)': \(String(cString: strerror(errno)))") }
        }
        // A map large enough for the input from the start saves growing it (and redoing the
        // batch that hit the limit) again and again.
        let db = try inv.context.shellDatabase ?? openDatabase(inv.databasePath!, create: true, initialMapSize: max(16 << 20, total * 3))
        defer { inv.release(db) }
        let coll = try inv.collection(in: db, create: true)
        let progress = Progress(totalBytes: total, enabled: IO.err.isTerminal)
        var importer = Importer(database: db, collection: coll, idField: idField, batchSize: batchSize, progress: progress)
        do {
            for f in files { try importer.importFile(f) }
        } catch let e as ImportError {
            progress.clear()
            let before = importer.imported
            throw CLIError.failure("\(e)\nnothing from that batch was written; \(plural(before, "document")) imported before it")
        } catch {
            progress.clear()
            throw error
        }
        progress.clear()
        let elapsed = monotonicSeconds() - progress.start
        let rate = elapsed > 0 ? Int(Double(importer.imported) / elapsed) : 0
        IO.err.line("imported \(plural(importer.imported, "document")) from \(plural(files.count, "file")) into \(coll.fullName) in \(fixed(elapsed, 2)) s (\(grouped(rate)) docs/s)")
        return ExitCode.ok
    }
}

/// A malformed line or document: where, and what.
struct ImportError: Error, CustomStringConvertible {
    var file: String
    var line: Int?
    var column: Int?
    var element: Int?
    var message: String

    var description: String {
        var s = file
        if let line { s += ":\(line)" }
        if let column { s += ":\(column)" }
        if let element { s += ": element \(element)" }
        return s + ": " + message
    }
}

/// Loads files into one collection.
struct Importer {
    let database: Database
    let collection: Collection
    let idField: String
    /// Documents per transaction as given (`--batch`), or nil for the default.
    let fixedBatch: Int?
    let progress: Progress
    /// Documents committed so far.
    private(set) var imported = 0
    /// IDs for documents that come without one: in the order they were made (`OrderedIDGenerator`).
    private var ids = OrderedIDGenerator()
    /// The last ID saved, and whether every ID so far came after the one before (bytewise).
    private var lastID: String?
    private var ascending = true

    /// Default batches while IDs ascend: each is appended after the last, and committing
    /// every 10,000 lets the next batch's parsing overlap the commit.
    static let ascendingBatch = 10_000
    /// Default batches once an ID came out of order: a transaction writes its documents in
    /// ID order (DeferredPuts), so a large one fills pages as densely as a sorted input, where
    /// small ones would land in the middle of each other.
    static let unorderedBatch = 100_000

    /// Documents the current batch may take (it grows when an ID comes out of order in it).
    var batchSize: Int { fixedBatch ?? (ascending ? Importer.ascendingBatch : Importer.unorderedBatch) }

    private mutating func note(_ id: String) {
        if ascending, let lastID, !lastID.utf8.lexicographicallyPrecedes(id.utf8) { ascending = false }
        lastID = id
    }

    init(database: Database, collection: Collection, idField: String, batchSize: Int?, progress: Progress) {
        self.database = database
        self.collection = collection
        self.idField = idField
        fixedBatch = batchSize
        self.progress = progress
    }

    mutating func importFile(_ path: String) throws {
        let name = path == "-" ? "<stdin>" : path
        if path != "-", let mapped = try MappedFile(path: path) {
            defer { mapped.unmap() }
            try importBytes(mapped.bytes, file: name)
            progress.finishFile(bytes: mapped.bytes.count)
        } else {
            try importStream(path, file: name)
        }
    }

    /// Bytes read from a pipe or standard input at a time.
    static let streamChunk = 8 << 20

    /// Standard input, a pipe or another file that cannot be mapped: JSON Lines are read a
    /// chunk at a time and imported as complete lines arrive, so memory stays bounded (a
    /// chunk, plus the longest line); a JSON array is read whole first.
    private mutating func importStream(_ path: String, file: String) throws {
        let fd = path == "-" ? 0 : open(path, O_RDONLY)
        guard fd >= 0 else { throw CLIError.failure("cannot open '\(path)': \(String(cString: strerror(errno)))") }
        defer { if fd != 0 { close(fd) } }
        var buffer: [UInt8] = []
        var eof = false
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: Importer.streamChunk, alignment: 1)
        defer { chunk.deallocate() }
        func fill() throws {
            var n: Int
            repeat { n = read(fd, chunk.baseAddress!, chunk.count) } while n < 0 && errno == EINTR
            if n < 0 { throw CLIError.failure("cannot read '\(path)': \(String(cString: strerror(errno)))") }
            if n == 0 { eof = true }
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
        }
        // The first non-blank byte decides the format.
        var first: UInt8?
        while first == nil && !eof {
            try fill()
            first = buffer.first { !(($0 == 0x20) || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }
        }
        if first == UInt8(ascii: "[") {
            while !eof { try fill() }
            try buffer.withUnsafeBytes { try importArray($0, file: file) }
            return
        }
        var linesBefore = 0
        var bytesBefore = 0
        while true {
            // Gather a chunk (a pipe gives 64 KB a read), then import its complete lines
            // (everything at the end of the input).
            while !eof && buffer.count < Importer.streamChunk { try fill() }
            let cut = eof ? buffer.count : (buffer.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0)
            if cut > 0 {
                let lines = try buffer.withUnsafeBytes {
                    try importLines(UnsafeRawBufferPointer(rebasing: $0[0..<cut]), file: file, lineOffset: linesBefore, byteOffset: bytesBefore)
                }
                linesBefore += lines
                bytesBefore += cut
                buffer.removeFirst(cut)
            }
            if eof { break }
            if cut == 0 { try fill() } // one line longer than a chunk: read on
        }
    }

    private mutating func importBytes(_ bytes: UnsafeRawBufferPointer, file: String) throws {
        var i = 0
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
        if i < bytes.count && bytes[i] == UInt8(ascii: "[") {
            try importArray(bytes, file: file)
        } else {
            try importLines(bytes, file: file)
        }
    }

    /// One document: take the ID out of the body and save.
    @inline(__always)
    private mutating func store(_ value: Value, file: String, line: Int?, element: Int?) throws {
        guard case .object(var body) = value else {
            throw ImportError(file: file, line: line, column: line == nil ? nil : 1, element: element,
                              message: "expected a JSON object, found \(value.typeName)")
        }
        let id: String
        switch body.removeValue(forKey: idField) {
        case nil: id = ids.next()
        case .string(let s)?: id = s
        case .int(let n)?: id = String(n)
        case let other?:
            throw ImportError(file: file, line: line, column: nil, element: element,
                              message: "'\(idField)' must be a string or an integer, not \(other.typeName)")
        }
        note(id)
        do {
            try collection.save(id: id, properties: body)
        } catch let e as DatabaseError {
            throw ImportError(file: file, line: line, column: nil, element: element, message: e.message)
        }
    }

    /// One parsed JSON Lines document: save it, or report what is wrong with its line.
    @inline(__always)
    private mutating func store(_ parsed: ParsedLine, file: String, lineOffset: Int) throws {
        let id: String
        let body: PreparedBody
        switch parsed.outcome {
        case .failure(let column, let message):
            throw ImportError(file: file, line: parsed.line + lineOffset, column: column, element: nil, message: message)
        case .document(let given, let prepared):
            id = given ?? ids.next()
            body = prepared
        }
        note(id)
        do {
            try collection.save(id: id, prepared: body)
        } catch let e as DatabaseError {
            throw ImportError(file: file, line: parsed.line + lineOffset, column: nil, element: nil, message: e.message)
        }
    }

    /// Imports JSON Lines; the lines are numbered from `lineOffset + 1` (a chunk of a stream)
    /// and progress counts `byteOffset` bytes before them. Returns the number of lines read.
    ///
    /// A second thread parses the lines into checked binary bodies (`LineParser`) while this
    /// one saves them, batch by batch.
    @discardableResult
    private mutating func importLines(_ bytes: UnsafeRawBufferPointer, file: String, lineOffset: Int = 0, byteOffset: Int = 0) throws -> Int {
        // The parser thread also tokenizes for the full-text indexes (none: nothing to do).
        // With a fixed batch size, each batch's full-text segment is also made there (the
        // batches are the parser's runs; see `FullTextRunPreparer`).
        let preparer = FullTextRunPreparer(try collection.fullTextPreparer(), runLength: fixedBatch)
        let parser = LineParser(JSONLinesReader(bytes), idField: idField, fullText: preparer.isEmpty ? nil : preparer)
        defer { parser.finish() }
        while let first = parser.next() {
            var inBatch = 0
            var taken = 0 // lines this batch has taken from the parser
            var end = first.end
            let order = (lastID, ascending)
            try Importer.commit(database, batchAt: "\(file):\(first.line + lineOffset)", committed: imported) {
                // The engine may run a batch body again (after growing the memory map): the
                // lines it took already are then parsed again here, from the batch's first,
                // and the IDs' order is followed again from where the batch began.
                var again = first.before
                inBatch = 0
                (lastID, ascending) = order
                while inBatch < batchSize {
                    let parsed: ParsedLine
                    if inBatch < taken {
                        guard let p = ParsedLine.parse(&again, idField: idField) else { break }
                        parsed = p
                    } else {
                        guard let p = inBatch == 0 ? first : parser.next() else { break }
                        parsed = p
                        taken += 1
                    }
                    try store(parsed, file: file, lineOffset: lineOffset)
                    end = parsed.end
                    inBatch += 1
                    if inBatch & 1023 == 0 { progress.update(fileBytes: byteOffset + end, documents: imported + inBatch) }
                }
            }
            imported += inBatch
            progress.update(fileBytes: byteOffset + end, documents: imported)
            if inBatch < batchSize { break } // the parser has no more lines
        }
        return parser.linesRead
    }

    /// Runs one batch. When the write itself fails (disk full, I/O error), says how many
    /// documents were committed before and where the batch that was not began.
    static func commit(_ database: Database, batchAt start: String, committed: Int, _ body: () throws -> Void) throws {
        do { try database.inBatch(body) } catch let e as DatabaseError where e.code == .diskFull || e.code == .storage {
            let what = e.code == .diskFull ? "disk full" : e.message
            let detail = e.code == .diskFull ? " (\((e.underlying as? any CustomStringConvertible)?.description ?? "no space left"))" : ""
            throw CLIError.failure("\(what); \(plural(committed, "document")) committed, the batch starting at \(start) was not" + detail)
        }
    }

    private mutating func importArray(_ bytes: UnsafeRawBufferPointer, file: String) throws {
        let value: Value
        do { value = try JSONReader.parse(bytes) } catch {
            throw ImportError(file: file, line: error.line, column: error.column, element: nil, message: error.message)
        }
        guard case .array(let items) = value else {
            throw ImportError(file: file, line: nil, column: nil, element: nil, message: "expected a JSON array of objects")
        }
        var next = 0
        while next < items.count {
            var end = next
            let order = (lastID, ascending)
            try Importer.commit(database, batchAt: "\(file): element \(next + 1)", committed: imported) {
                end = next
                (lastID, ascending) = order
                while end < items.count && end - next < batchSize {
                    try store(items[end], file: file, line: nil, element: end + 1)
                    end += 1
                }
            }
            imported += end - next
            next = end
            progress.update(fileBytes: Int(Double(bytes.count) * Double(next) / Double(max(1, items.count))), documents: imported)
        }
    }
}

/// A read-only memory map of a regular file.
struct MappedFile {
    let bytes: UnsafeRawBufferPointer

    /// Maps `path`; nil when it is not a regular file (pipes are read instead).
    init?(path: String) throws {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw CLIError.failure("cannot open '\(path)': \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        let size = Int(st.st_size)
        if size == 0 {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        guard let p = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), p != MAP_FAILED else {
            throw CLIError.failure("cannot map '\(path)': \(String(cString: strerror(errno)))")
        }
        madvise(p, size, MADV_SEQUENTIAL)
        bytes = UnsafeRawBufferPointer(start: p, count: size)
    }

    func unmap() {
        if let p = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: p), bytes.count) }
    }
}

/// The progress bar of `import` on a terminal (stderr): bar, percentage, documents,
/// documents/s and time left, redrawn at most ten times a second.
final class Progress {
    let enabled: Bool
    let totalBytes: Int
    let start = monotonicSeconds()
    private var finishedBytes = 0
    private var lastDraw = 0.0
    private var drawn = false

    init(totalBytes: Int, enabled: Bool) {
        self.totalBytes = totalBytes
        self.enabled = enabled
    }

    /// A whole file is done.
    func finishFile(bytes: Int) { finishedBytes += bytes }

    /// Progress within the current file.
    func update(fileBytes: Int, documents: Int) {
        guard enabled else { return }
        let now = monotonicSeconds()
        guard now - lastDraw >= 0.1 else { return }
        lastDraw = now
        let elapsed = now - start
        let done = finishedBytes + fileBytes
        let fraction = totalBytes > 0 ? min(1, Double(done) / Double(totalBytes)) : 0
        let width = 24
        let filled = Int(fraction * Double(width))
        var line = "\r[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] "
        line += totalBytes > 0 ? fixed(fraction * 100, 0).leftPadded(3) + "%  " : ""
        line += grouped(documents) + " docs  "
        if elapsed > 0 { line += grouped(Int(Double(documents) / elapsed)) + " docs/s" }
        if totalBytes > 0, fraction > 0, fraction < 1 {
            let left = Int(elapsed / fraction * (1 - fraction))
            line += "  ETA \(left / 60):" + String(left % 60).leftPadded(2).replacingSpaces()
        }
        IO.err.write(line + "\u{1B}[K")
        IO.err.flush()
        drawn = true
    }

    /// Erases the bar.
    func clear() {
        guard enabled, drawn else { return }
        IO.err.write("\r\u{1B}[K")
        IO.err.flush()
        drawn = false
    }
}

private extension String {
    func replacingSpaces() -> String { String(map { $0 == " " ? "0" : $0 }) }
}
