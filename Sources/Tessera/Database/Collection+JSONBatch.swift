import Dispatch
import Synchronization

// Saving many JSON documents with both cores: the writer's thread saves one chunk of
// documents while a worker thread encodes the next (JSON to the binary format, the body's
// checks and revision digest, and full-text tokens for the collection's full-text indexes:
// the work of `save(id:json:)` that needs no transaction).

extension Collection {
    /// Saves many documents given as JSON objects, all in one batch, encoding each on a
    /// second thread while this one writes the ones before it.
    ///
    /// Each document is saved exactly as `save(id:json:)` would save it (replacing the body of
    /// a document that exists), in the sequence's order; a later element with the same ID
    /// replaces an earlier one. The sequence is read on the calling thread.
    ///
    /// ```swift
    /// try hotels.save(jsonDocuments: lines.map { (id: $0.id, json: $0.text) })
    /// ```
    ///
    /// Called outside a batch, it is one transaction: an error saves none of the documents.
    /// Inside `Database.inBatch { }` it joins that batch, which the error rolls back when it
    /// leaves the batch's closure; if that batch runs again (see `Database.inBatch`), so does
    /// this call, which then reads `documents` again: pass a collection there.
    ///
    /// - Returns: the number of documents saved.
    /// - Throws: the first bad document's error, as `save(id:json:)` throws it (`.invalidJSON`
    ///   with line and column, `.notAnObject`, `.reservedKey`, `.invalidDocumentID`), its
    ///   message also giving the document's position in the sequence (1 for the first).
    @discardableResult
    public func save<Documents: Sequence>(jsonDocuments documents: Documents) throws -> Int
    where Documents.Element == (id: String, json: String) {
        try save(jsonDocuments: documents, writerHelpsAbove: 1.3, maxChunkBytes: JSONBatchChunk.maxBytes)
    }

    /// `save(jsonDocuments:)`, whose writer prepares chunks itself while preparing one takes
    /// more than `writerHelpsAbove` times as long as writing one (0: whenever the next is not
    /// ready; `.infinity`: never; tests run both), in chunks closed early at `maxChunkBytes`;
    /// `growingTheMapFirst: false` leaves a collection's batch to outgrow the map, and
    /// `replayLimit` bounds what is kept of a single-pass sequence (tests).
    @discardableResult
    func save<Documents: Sequence>(jsonDocuments documents: Documents, writerHelpsAbove: Double, maxChunkBytes: Int,
                                   growingTheMapFirst: Bool = true, replayLimit: Int = JSONBatchChunk.replayLimit) throws -> Int
    where Documents.Element == (id: String, json: String) {
        var saved = 0
        var chunks = ReplayableChunks(documents, keptLimit: replayLimit)
        // A batch that outgrows the memory map runs again from the start: when the documents'
        // size is known beforehand (a collection), the map is grown for them first — twice
        // their JSON, for the binary records and the index entries. (A lazy collection makes
        // its elements twice: here, and when they are saved.)
        if growingTheMapFirst, database.currentWrite() == nil,
           let all = documents as? any Swift.Collection<(id: String, json: String)> {
            var bytes = 0
            for d in all { bytes &+= d.id.utf8.count &+ d.json.utf8.count }
            database.store.reserve(bytes: bytes &* 2)
        }
        try database.inBatch {
            // The engine may run this body again (a write that outgrew the memory map is rolled
            // back and run again once the map is larger): it must then save the same documents
            // from the first, and count them once.
            saved = 0
            try chunks.restart()
            let preparer = try fullTextPreparer()
            let fullText = preparer.isEmpty ? nil : preparer
            let chunk = chunks.next(firstPosition: 1, maxBytes: maxChunkBytes)
            guard chunk.isFull else {
                // Too few documents to be worth a second thread.
                chunk.prepare(fullText: fullText)
                saved += try write(chunk)
                return
            }
            // The worker prepares chunks in order, up to `lookahead` ahead of the one being
            // written. When that one is not ready yet and preparing has been taking longer than
            // writing (no indexes to maintain), the writer prepares a later chunk itself rather
            // than wait; each chunk is claimed by whichever thread comes first.
            let worker = WorkerThread(name: "tessera.json-encoder")
            var queued: [JSONBatchChunk] = []
            defer {
                // An error leaves no work running on the caller's behalf.
                for waiting in queued where !waiting.claim(byWorker: false) { waiting.done.wait() }
                worker.stop()
            }
            func enqueue(_ next: JSONBatchChunk) {
                queued.append(next)
                worker.submit {
                    guard next.claim(byWorker: true) else { return }
                    next.prepare(fullText: fullText)
                }
            }
            enqueue(chunk)
            var ended = !chunk.isFull
            // Moving averages of the time a chunk takes to prepare and to write.
            var preparing = 0.0, writing = 0.0
            while !queued.isEmpty {
                while !ended && queued.count < JSONBatchChunk.lookahead {
                    let last = queued[queued.count - 1]
                    let next = chunks.next(firstPosition: last.firstPosition + last.inputs.count, maxBytes: maxChunkBytes)
                    ended = !next.isFull
                    if !next.inputs.isEmpty { enqueue(next) }
                }
                let ready = queued.removeFirst()
                if ready.claim(byWorker: false) {
                    ready.prepare(fullText: fullText)
                } else if preparing >= writerHelpsAbove * writing {
                    while !ready.isPrepared, let later = queued.first(where: { $0.claim(byWorker: false) }) {
                        later.prepare(fullText: fullText)
                    }
                }
                ready.done.wait()
                let start = ContinuousClock.now
                saved += try write(ready)
                writing = 0.8 * writing + 0.2 * (ContinuousClock.now - start).seconds
                preparing = 0.8 * preparing + 0.2 * ready.preparingTime.seconds
                // Memory the worker allocated is freed on the worker: freed here, each body
                // would take the lock of the worker's malloc arena while the worker allocates.
                if ready.preparedByWorker { worker.submit { [ready] in withExtendedLifetime(ready) {} } }
            }
        }
        return saved
    }

    /// Saves a prepared chunk's documents, then throws its failure, if it has one.
    private func write(_ chunk: JSONBatchChunk) throws -> Int {
        for (index, body) in chunk.prepared.enumerated() {
            try save(id: chunk.inputs[index].id, prepared: body)
        }
        if let failure = chunk.failure { throw failure }
        return chunk.prepared.count
    }
}

/// The documents of one `Collection.save(jsonDocuments:)`, read chunk by chunk so that a
/// batch body run again reads the same chunks from the first: a collection is read again from
/// its start; any other sequence may be single-pass, so the chunks read from it are kept (their
/// strings, by reference) until the call returns — up to `JSONBatchChunk.replayLimit` bytes of
/// JSON. Past that,
/// a run again cannot read the same documents and fails with an error that says so (nothing is
/// saved) rather than save only the documents it can still read.
struct ReplayableChunks<Documents: Sequence> where Documents.Element == (id: String, json: String) {
    private let documents: Documents
    private let multiPass: Bool
    private var iterator: Documents.Iterator
    /// A single-pass sequence's chunks read so far (inputs, and whether the chunk was full).
    private var read: [([(id: String, json: String)], Bool)] = []
    /// JSON bytes of `read`, and whether it still holds every chunk read.
    private var keptBytes = 0
    private var keptAll = true
    /// Chunks handed out since the last `restart`.
    private var handedOut = 0

    /// JSON bytes of a single-pass sequence kept for a run again.
    private let keptLimit: Int

    init(_ documents: Documents, keptLimit: Int = JSONBatchChunk.replayLimit) {
        self.documents = documents
        self.keptLimit = keptLimit
        multiPass = documents is any Swift.Collection
        iterator = documents.makeIterator()
    }

    /// Starts again from the first document (the first run of a body, and every run after).
    ///
    /// - Throws: `.limitReached` when a single-pass sequence must be read again beyond what
    ///   was kept of it.
    mutating func restart() throws {
        if handedOut > 0 && !multiPass && !keptAll {
            throw DatabaseError(.limitReached, "the batch outgrew the database's memory map and must run again, but its "
                + "documents came from a sequence that can be read only once and were more than \(keptLimit >> 20) MB "
                + "of JSON: nothing was saved; pass a collection (an array), or save fewer documents per call, or open the "
                + "database with a larger DatabaseConfiguration.initialMapSize")
        }
        if multiPass && handedOut > 0 { iterator = documents.makeIterator() }
        handedOut = 0
    }

    /// The next chunk (see `JSONBatchChunk.fill`).
    mutating func next(firstPosition: Int, maxBytes: Int) -> JSONBatchChunk {
        defer { handedOut += 1 }
        if !multiPass && handedOut < read.count {
            let (inputs, isFull) = read[handedOut]
            return JSONBatchChunk(firstPosition: firstPosition, inputs: inputs, isFull: isFull)
        }
        let chunk = JSONBatchChunk.fill(from: &iterator, firstPosition: firstPosition, maxBytes: maxBytes)
        if !multiPass && keptAll {
            for d in chunk.inputs { keptBytes &+= d.json.utf8.count }
            if keptBytes <= keptLimit {
                read.append((chunk.inputs, chunk.isFull))
            } else {
                keptAll = false
                read = []
            }
        }
        return chunk
    }
}

/// Documents of `Collection.save(jsonDocuments:)` handed to the worker thread together, and
/// what it made of them. The worker writes `prepared` and `failure` before it signals `done`;
/// the writer reads them only after waiting for it.
final class JSONBatchChunk: @unchecked Sendable {
    /// Documents per chunk.
    static let maxDocuments = 256
    /// JSON bytes after which a chunk is closed early (large documents).
    static let maxBytes = 4 << 20
    /// Chunks queued for preparing, the one being written included (at most this many
    /// chunks' bodies are held at once: 12 MB of JSON and its encoding, for large documents).
    static let lookahead = 3
    /// JSON bytes of a single-pass sequence kept for a batch run again (`ReplayableChunks`).
    static let replayLimit = 256 << 20

    /// Position of `inputs[0]` in the caller's sequence, counted from 1 (for error messages).
    let firstPosition: Int
    let inputs: [(id: String, json: String)]
    /// True if the chunk was closed by its limits, not by the end of the sequence.
    let isFull: Bool
    /// The bodies of `inputs`, in order, up to the first that failed.
    private(set) var prepared: [PreparedBody] = []
    /// The first failing document's error.
    private(set) var failure: (any Error)?
    /// Signalled once `prepared` and `failure` are final.
    let done = DispatchSemaphore(value: 0)
    /// 0: open; 1: claimed by a thread that will prepare it; 2: prepared.
    private let state = Atomic<Int>(0)
    /// How long `prepare` took.
    private(set) var preparingTime = Duration.zero
    /// True if the worker thread prepared the chunk (its memory is the worker's).
    private(set) var preparedByWorker = false

    fileprivate init(firstPosition: Int, inputs: [(id: String, json: String)], isFull: Bool) {
        self.firstPosition = firstPosition
        self.inputs = inputs
        self.isFull = isFull
    }

    /// The next documents of `input`.
    static func fill<I: IteratorProtocol>(from input: inout I, firstPosition: Int, maxBytes: Int) -> JSONBatchChunk
    where I.Element == (id: String, json: String) {
        var inputs: [(id: String, json: String)] = []
        inputs.reserveCapacity(maxDocuments)
        var bytes = 0
        while inputs.count < maxDocuments && bytes < maxBytes, let next = input.next() {
            bytes += next.json.utf8.count
            inputs.append(next)
        }
        return JSONBatchChunk(firstPosition: firstPosition, inputs: inputs,
                              isFull: inputs.count == maxDocuments || bytes >= maxBytes)
    }

    /// Takes the chunk for the calling thread to prepare; false if another thread has.
    func claim(byWorker: Bool) -> Bool {
        guard state.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged else { return false }
        preparedByWorker = byWorker
        return true
    }

    /// True once `prepare` has finished (without waiting for it).
    var isPrepared: Bool { state.load(ordering: .acquiring) == 2 }

    /// Encodes, checks and hashes each document (and tokenizes it for `fullText`'s indexes),
    /// stopping at the first that fails; then signals `done`. Called once, by the thread that
    /// claimed the chunk.
    func prepare(fullText: FullTextPreparer?) {
        let start = ContinuousClock.now
        defer {
            preparingTime = ContinuousClock.now - start
            state.store(2, ordering: .releasing)
            done.signal()
        }
        prepared.reserveCapacity(inputs.count)
        for (offset, document) in inputs.enumerated() {
            do {
                var body = try Collection.prepare(id: document.id, json: document.json)
                fullText?.prepare(&body)
                prepared.append(body)
            } catch var error as DatabaseError {
                error.message += " (document \(firstPosition + offset) of the sequence)"
                failure = error
                return
            } catch {
                failure = error
                return
            }
        }
    }
}

extension Collection {
    /// The work of `save(id:json:)` before the transaction: the ID's rules, JSON to the binary
    /// format, the body's rules and its first revision's digest.
    ///
    /// - Throws: `.invalidDocumentID`, `.invalidJSON` (line and column), `.notAnObject`, `.reservedKey`.
    static func prepare(id: String, json: String) throws -> PreparedBody {
        try DocumentValidation.validateID(id)
        var text = json
        let body: [UInt8]
        do {
            body = try text.withUTF8 { try BinaryEncoder.encodeJSON(UnsafeRawBufferPointer($0)) }
        } catch {
            throw DatabaseError(.invalidJSON, "document '\(id)': \(error)", underlying: error as? JSONError)
        }
        return try PreparedBody(id: id, encodedBody: body)
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) * 1e-18
    }
}
