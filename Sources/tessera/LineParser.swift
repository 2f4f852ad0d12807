// `tessera import`'s second thread: JSON Lines are parsed into checked binary bodies ahead of
// the writer, which then only saves them. Parsing is about half of an import's CPU time and
// needs no transaction, so on two cores it runs while the writer puts documents and while
// it waits for a commit's fsync.

import Dispatch
import Tessera

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One non-blank line of the input as the parser left it: a document ready to save, or what
/// is wrong with it (which stops the import there).
///
/// `@unchecked Sendable`: `before` points into the caller's bytes, which outlive the parser
/// (`Importer.importLines` ends the parser before it returns).
struct ParsedLine: @unchecked Sendable {
    /// The reader's state before this line: parsing starts again from here when a batch is
    /// run a second time.
    var before: JSONLinesReader
    /// The byte offset just after this line (for progress).
    var end: Int
    /// The line's 1-based number in the parsed bytes.
    var line: Int
    var outcome: Outcome

    enum Outcome {
        /// A document: its ID (nil: none given, the importer generates one) and its checked body.
        case document(id: String?, body: PreparedBody)
        /// Malformed JSON, a root that is not an object, an ID of another type, a reserved
        /// key: the message, with the column where the JSON reader knows it.
        case failure(column: Int?, message: String)
    }

    /// Parses the next non-blank line of `reader`; nil at the end of its bytes.
    static func parse(_ reader: inout JSONLinesReader, idField: String, fullText: FullTextRunPreparer? = nil) -> ParsedLine? {
        let before = reader
        let next: (line: Int, document: ImportedDocument)?
        do throws(JSONError) {
            next = try reader.nextDocument(takingID: idField)
        } catch {
            return ParsedLine(before: before, end: reader.offset, line: error.line, outcome: .failure(column: error.column, message: error.message))
        }
        guard let (line, document) = next else { return nil }
        var parsed = ParsedLine(before: before, end: reader.offset, line: line, outcome: .failure(column: nil, message: ""))
        if let type = document.nonObjectRoot {
            parsed.outcome = .failure(column: 1, message: "expected a JSON object, found \(type)")
            return parsed
        }
        let knownID: String?
        switch document.id {
        case .absent: knownID = nil
        case .string(let s): knownID = s
        case .int(let n): knownID = String(n)
        case .invalid(let type):
            parsed.outcome = .failure(column: nil, message: "'\(idField)' must be a string or an integer, not \(type)")
            return parsed
        }
        do {
            var body = try PreparedBody(id: knownID, encodedBody: document.body)
            fullText?.prepare(&body)
            parsed.outcome = .document(id: knownID, body: body)
        } catch let e as DatabaseError {
            parsed.outcome = .failure(column: nil, message: e.message)
        } catch {
            parsed.outcome = .failure(column: nil, message: "\(error)")
        }
        return parsed
    }
}

/// Parses JSON Lines on a thread of its own into a bounded queue of `ParsedLine`s, in
/// chunks (one lock round trip per chunk, not per line). The consumer takes lines in order
/// with `next()`; the parser stops at the end of the bytes, at the first line that fails
/// (after handing it out) or when `finish()` is called.
///
/// Memory stays bounded: at most `capacity` chunks of `chunkSize` parsed documents wait.
final class LineParser: @unchecked Sendable {
    // Shared state, guarded by `lock` (@unchecked Sendable: every access below holds it).
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var ready: [[ParsedLine]] = []
    /// Chunks the writer is done with, released on the parser's thread: their bodies were
    /// allocated there, and freeing them on the writer's thread takes the lock of the
    /// parser's malloc arena while the parser allocates (the writer then waits on it).
    private var spent: [[ParsedLine]] = []
    private var parsedAll = false
    private var stopRequested = false
    private var exited = false
    private var finalLine = 0

    // The consumer's own state (one thread).
    private var current: [ParsedLine] = []
    private var position = 0

    private let chunkSize: Int
    private let capacity: Int

    /// Starts parsing `reader`'s bytes, which must stay valid until `finish()` returns.
    ///
    /// With `fullText`, each body also gets its full-text entries (`FullTextRunPreparer`, which
    /// the parser's thread alone then uses), so
    /// that the writer does not tokenize.
    init(_ reader: JSONLinesReader, idField: String, fullText: FullTextRunPreparer? = nil, chunkSize: Int = 256, capacity: Int = 48) {
        self.chunkSize = chunkSize
        self.capacity = capacity
        pthread_mutex_init(lock, nil)
        pthread_cond_init(changed, nil)
        let start = UnsafeSendable(reader)
        let preparer = UnsafeSendable(fullText)
        DispatchQueue.global(qos: .userInitiated).async { [self] in run(start.value, idField: idField, fullText: preparer.value) }
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(lock)
        changed.deallocate()
        lock.deallocate()
    }

    /// The number of lines read when the parser reached the end of the bytes (after `next()`
    /// returned nil).
    var linesRead: Int {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return finalLine
    }

    /// The next parsed line, or nil when the bytes are used up (or the parser stopped after a
    /// failure it already handed out).
    func next() -> ParsedLine? {
        if position < current.count {
            position += 1
            return current[position - 1]
        }
        pthread_mutex_lock(lock)
        while ready.isEmpty && !parsedAll { pthread_cond_wait(changed, lock) }
        if ready.isEmpty {
            pthread_mutex_unlock(lock)
            current = []
            position = 0
            return nil
        }
        if !current.isEmpty { spent.append(current) }
        current = ready.removeFirst()
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(lock)
        position = 1
        return current[0]
    }

    /// Stops the parser and waits until its thread no longer reads the bytes.
    func finish() {
        pthread_mutex_lock(lock)
        stopRequested = true
        pthread_cond_broadcast(changed)
        while !exited { pthread_cond_wait(changed, lock) }
        ready = []
        pthread_mutex_unlock(lock)
    }

    private func run(_ start: JSONLinesReader, idField: String, fullText: FullTextRunPreparer?) {
        var reader = start
        var atEnd = false
        while !atEnd {
            var chunk: [ParsedLine] = []
            chunk.reserveCapacity(chunkSize)
            while chunk.count < chunkSize {
                guard let parsed = ParsedLine.parse(&reader, idField: idField, fullText: fullText) else { atEnd = true; break }
                chunk.append(parsed)
                if case .failure = parsed.outcome { atEnd = true; break }
            }
            pthread_mutex_lock(lock)
            while ready.count >= capacity && !stopRequested { pthread_cond_wait(changed, lock) }
            if stopRequested {
                pthread_mutex_unlock(lock)
                break
            }
            if !chunk.isEmpty { ready.append(chunk) }
            if atEnd {
                parsedAll = true
                finalLine = reader.line
            }
            let release = spent
            spent = []
            pthread_cond_broadcast(changed)
            pthread_mutex_unlock(lock)
            withExtendedLifetime(release) {}
        }
        pthread_mutex_lock(lock)
        parsedAll = true
        exited = true
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(lock)
    }
}

/// Carries a value that is not `Sendable` to the parser's thread, which is its only user.
private struct UnsafeSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
