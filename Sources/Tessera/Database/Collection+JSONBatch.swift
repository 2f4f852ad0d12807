import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
    /// replaces an earlier one. The sequence is read on the calling thread. (A collection is
    /// read as the overload for collections reads it.)
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

    /// Saves many documents given as JSON objects, all in one batch: `save(jsonDocuments:)`
    /// for a collection of them (an array, a lazy map over one), read on the calling thread
    /// once before the batch and then again by index as its documents are saved.
    ///
    /// The first pass grows the database for the documents and, called outside a batch, lets
    /// them be written in the order of their IDs (appended page after page while the next
    /// ones are encoded). What is stored is what saving them in the collection's order stores:
    /// each document takes the sequence number of its place in `documents`, and a later
    /// element with the same ID replaces an earlier one.
    ///
    /// ```swift
    /// try hotels.save(jsonDocuments: rows.lazy.map { (id: $0.key, json: $0.text) })
    /// ```
    ///
    /// - Returns: the number of documents saved.
    /// - Throws: the first bad document's error in the collection's order, as
    ///   `save(jsonDocuments:)` for any sequence throws it.
    @inlinable @discardableResult
    public func save<Documents: Swift.Collection>(jsonDocuments documents: Documents) throws -> Int
    where Documents.Element == (id: String, json: String) {
        // Inlined into the caller: the pass over the collection, and the reads by index later,
        // run specialized for its type.
        try save(surveyed: JSONDocumentSurvey(documents))
    }

    /// `save(jsonDocuments:)` of a collection read once already, with the usual settings.
    @usableFromInline
    func save(surveyed survey: JSONDocumentSurvey) throws -> Int {
        try save(jsonDocuments: survey, writerHelpsAbove: 1.3, maxChunkBytes: JSONBatchChunk.maxBytes)
    }

    /// `save(jsonDocuments:)`, whose writer prepares chunks itself while preparing one takes
    /// more than `writerHelpsAbove` times as long as writing one (0: whenever the next is not
    /// ready; `.infinity`: never; tests run both), in chunks closed early at `maxChunkBytes`;
    /// `growingTheMapFirst: false` leaves a collection's batch to outgrow the map,
    /// `inIDOrder: false` writes a collection in its own order, and `replayLimit` bounds what
    /// is kept of a single-pass sequence (tests).
    @discardableResult
    func save<Documents: Sequence>(jsonDocuments documents: Documents, writerHelpsAbove: Double, maxChunkBytes: Int,
                                   growingTheMapFirst: Bool = true, inIDOrder: Bool = true,
                                   replayLimit: Int = JSONBatchChunk.replayLimit) throws -> Int
    where Documents.Element == (id: String, json: String) {
        if let all = documents as? any Swift.Collection<(id: String, json: String)> {
            return try save(jsonDocuments: JSONDocumentSurvey(all), writerHelpsAbove: writerHelpsAbove,
                            maxChunkBytes: maxChunkBytes, growingTheMapFirst: growingTheMapFirst, inIDOrder: inIDOrder)
        }
        var chunks = ReplayableChunks(documents, keptLimit: replayLimit)
        return try save(chunks: &chunks, writerHelpsAbove: writerHelpsAbove, maxChunkBytes: maxChunkBytes)
    }

    /// `save(jsonDocuments:)` of a collection read once already (`JSONDocumentSurvey`).
    func save(jsonDocuments survey: JSONDocumentSurvey, writerHelpsAbove: Double, maxChunkBytes: Int,
              growingTheMapFirst: Bool = true, inIDOrder: Bool = true) throws -> Int {
        var chunks = SurveyedChunks(survey)
        // Saved in a transaction of its own, the collection may be reordered, and the batch
        // that outgrows the memory map runs again from the start: the map is grown for the
        // documents first — twice their JSON, for the binary records and the index entries.
        if database.currentWrite() == nil {
            if growingTheMapFirst { database.store.reserve(bytes: survey.bytes &* 2) }
            if inIDOrder { chunks.order = JSONDocumentOrder(survey) }
        }
        return try save(chunks: &chunks, writerHelpsAbove: writerHelpsAbove, maxChunkBytes: maxChunkBytes)
    }

    /// Saves the documents of `chunks` in one batch.
    private func save<Chunks: JSONChunkSource>(chunks: inout Chunks, writerHelpsAbove: Double, maxChunkBytes: Int) throws -> Int {
        var saved = 0
        try database.inBatch {
            // The engine may run this body again (a write that outgrew the memory map is rolled
            // back and run again once the map is larger): it must then save the same documents
            // from the first, and count them once.
            saved = 0
            try chunks.restart()
            // In ID order each document takes the sequence its place in the caller's order
            // gives it, as if saved in that order; their entries in the sequence table are
            // appended in that order once every document is written.
            var sequences: SequencesByPosition?
            if let order = chunks.order {
                sequences = try database.write { ctx in
                    SequencesByPosition(base: try ctx.reserveSequences(key, count: order.count), count: order.count)
                }
            }
            func write(_ chunk: JSONBatchChunk) throws -> Int {
                do {
                    return try self.write(chunk, sequences: &sequences)
                } catch where sequences != nil && chunk.failurePosition != nil {
                    // The error of the first bad document in the caller's order, as saving in
                    // that order would have thrown it.
                    throw chunks.order!.firstFailure(before: chunk.failurePosition!, savedAt: sequences!) ?? error
                }
            }
            func writeSequenceEntries() throws {
                guard let sequences, let order = chunks.order else { return }
                try database.write { ctx in try sequences.writeEntries(ctx.txn, ctx.store(key).bySequence, ids: order.survey) }
            }
            let preparer = try fullTextPreparer()
            let fullText = preparer.isEmpty ? nil : preparer
            let chunk = chunks.next(maxBytes: maxChunkBytes)
            guard chunk.isFull else {
                // Too few documents to be worth a second thread.
                chunk.prepare(fullText: fullText)
                saved += try write(chunk)
                try writeSequenceEntries()
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
                    let next = chunks.next(maxBytes: maxChunkBytes)
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
            try writeSequenceEntries()
        }
        return saved
    }

    /// Saves a prepared chunk's documents, then throws its failure, if it has one. With
    /// `sequences`, each under the sequence of its position, which it marks saved.
    private func write(_ chunk: JSONBatchChunk, sequences: inout SequencesByPosition?) throws -> Int {
        if sequences != nil {
            for (index, body) in chunk.prepared.enumerated() {
                let position = chunk.position(index)
                try write(id: chunk.inputs[index].id, prepared: body, reserved: sequences!.reserved(position))
                sequences!.saved(position, id: chunk.inputs[index].id)
            }
        } else {
            for (index, body) in chunk.prepared.enumerated() {
                try save(id: chunk.inputs[index].id, prepared: body)
            }
        }
        if let failure = chunk.failure { throw failure }
        return chunk.prepared.count
    }
}

/// A sequence reserved for a save (`WriteContext.reserveSequences`), and the last sequence
/// before those reserved with it.
struct ReservedSequence {
    let sequence: UInt64
    let base: UInt64
}

/// The sequences reserved for a `save(jsonDocuments:)` written in ID order: the document at
/// position p of the caller's order (from 1) takes `base + p`, as saving in that order gives
/// it. Their entries in the sequence table are appended at the end, in order
/// (`writeEntries`): written one by one as the documents are, they would come in ID order,
/// each at another place in the table.
struct SequencesByPosition {
    let base: UInt64
    /// Per position (from 0): 0 not saved yet, 1 saved, 2 saved and replaced by a later
    /// document with the same ID (its sequence has no entry).
    private(set) var state: [UInt8]
    /// The position (from 1) and ID of the document saved last.
    private var last: (position: Int, id: String)?

    init(base: UInt64, count: Int) {
        self.base = base
        state = Array(repeating: 0, count: count)
    }

    func reserved(_ position: Int) -> ReservedSequence { ReservedSequence(sequence: base &+ UInt64(position), base: base) }

    /// True once the document at `position` (from 1) is saved.
    func isSaved(_ position: Int) -> Bool { state[position - 1] != 0 }

    /// Notes the document at `position` saved. Documents with the same ID are saved one after
    /// the other, in the caller's order (the order is a stable sort): the one before is replaced.
    mutating func saved(_ position: Int, id: String) {
        if let last, last.id == id { state[last.position - 1] = 2 }
        state[position - 1] = 1
        last = (position, id)
    }

    /// Appends the entries of the saved documents' sequences (sequence → ID) to `table`.
    func writeEntries(_ txn: WriteTransaction, _ table: StorageTable, ids: JSONDocumentSurvey) throws {
        var batch = StorageAppendBatch(capacity: 4_096)
        try ids.idBytes.withUnsafeBytes { bytes in
            for p in state.indices where state[p] == 1 {
                let start = p == 0 ? 0 : ids.ends[p - 1]
                var key = (base &+ UInt64(p) &+ 1).bigEndian
                withUnsafeBytes(of: &key) { k in
                    batch.add(copyingKey: k, value: UnsafeRawBufferPointer(rebasing: bytes[start..<ids.ends[p]]))
                }
                if batch.isFull { try txn.append(&batch, to: table) }
            }
            try txn.append(&batch, to: table)
        }
    }
}

/// A collection of documents for `save(jsonDocuments:)`, read once: the bytes of their JSON
/// and IDs, each ID's bytes, and a way to read each document again by its position.
/// Made by code inlined into the caller (`@inlinable`), so that the pass and the reads run
/// specialized for the collection's type.
@usableFromInline
struct JSONDocumentSurvey {
    /// Bytes of every ID and JSON text.
    @usableFromInline var bytes = 0
    /// Every ID's bytes, one after the other; `ends[p]` is where the p-th ends.
    @usableFromInline var idBytes: [UInt8] = []
    @usableFromInline var ends: [Int] = []
    /// False when an ID is below the one before it.
    @usableFromInline var ascending = true
    /// The document at a position (from 0).
    @usableFromInline let document: (Int) -> (id: String, json: String)

    var count: Int { ends.count }

    @inlinable
    init<C: Swift.Collection>(_ documents: C) where C.Element == (id: String, json: String) {
        var indices: [C.Index] = []
        indices.reserveCapacity(documents.underestimatedCount)
        ends.reserveCapacity(documents.underestimatedCount)
        for i in documents.indices {
            let d = documents[i]
            indices.append(i)
            bytes &+= d.json.utf8.count
            let start = idBytes.count
            idBytes.append(contentsOf: d.id.utf8)
            bytes &+= idBytes.count &- start
            ends.append(idBytes.count)
            if ascending, ends.count > 1 { ascending = Self.idAscends(idBytes, ends) }
        }
        document = { documents[indices[$0]] }
    }

    /// True if the last ID of `ids` is not below the one before it.
    @usableFromInline
    static func idAscends(_ ids: [UInt8], _ ends: [Int]) -> Bool {
        let count = ends.count
        let previous = count > 2 ? ends[count - 3] : 0, start = ends[count - 2]
        let m = start - previous, n = ids.count - start
        let c = ids.withUnsafeBytes { b in min(m, n) == 0 ? 0 : memcmp(b.baseAddress! + previous, b.baseAddress! + start, min(m, n)) }
        return c < 0 || (c == 0 && m <= n)
    }
}

/// A collection of documents to save in the order of their IDs (`save(jsonDocuments:)`).
///
/// LMDB fills a table's pages in order only when its keys come in order (`MDB_APPEND`); a
/// batch of unordered IDs is otherwise held back whole and sorted at the commit
/// (`DeferredPuts`): every body is copied once more, and the write-out of all of them — the
/// tenth of a second for 100,000 documents, most of it LMDB's new pages — runs on its own
/// after the last document is encoded, while the second core waits. Saving the documents in
/// ID order appends each chunk as soon as it is encoded, while the next is being encoded.
/// A batch in ID order stores what the caller's order stores: each document takes the
/// sequence of its position, a later duplicate ID still replaces the earlier one (the sort is
/// stable), and a bad document is reported as the first in the caller's order
/// (`firstFailure`). Only a transaction of the call's own (all or nothing) is reordered.
struct JSONDocumentOrder {
    /// Positions (from 0) of the caller's order, in ID order: bytewise, the shorter of two IDs
    /// with the same start first, equal IDs in the caller's order.
    let positions: [Int]
    /// The documents.
    let survey: JSONDocumentSurvey

    var count: Int { positions.count }

    /// The document at a position (from 0).
    func document(_ position: Int) -> (id: String, json: String) { survey.document(position) }

    /// The order of `survey`'s documents; nil when their IDs ascend already or they are one
    /// chunk or fewer.
    init?(_ survey: JSONDocumentSurvey) {
        guard !survey.ascending, survey.count > JSONBatchChunk.maxDocuments else { return nil }
        positions = Self.sortedPositions(survey.idBytes, survey.ends)
        self.survey = survey
    }

    /// Positions sorted by the IDs `bytes[ends[p - 1] ..< ends[p]]` (`keyOrder`: stable).
    static func sortedPositions(_ bytes: [UInt8], _ ends: [Int]) -> [Int] {
        bytes.withUnsafeBytes { b in
            keyOrder(count: ends.count) { p in
                let start = p == 0 ? 0 : ends[p - 1]
                return UnsafeRawBufferPointer(rebasing: b[start..<ends[p]])
            }
        }
    }

    /// The error of the first document before `position` (from 1) in the caller's order that
    /// fails to prepare, among those not saved yet; nil if none does.
    func firstFailure(before position: Int, savedAt sequences: SequencesByPosition) -> (any Error)? {
        for p in 1..<max(1, position) where !sequences.isSaved(p) {
            let d = document(p - 1)
            do {
                _ = try Collection.prepare(id: d.id, json: d.json)
            } catch {
                return JSONBatchChunk.located(error, position: p)
            }
        }
        return nil
    }
}

/// Where `save(jsonDocuments:)` takes its chunks from.
protocol JSONChunkSource {
    /// Starts again from the first document (the first run of a batch's body, and every run after).
    mutating func restart() throws
    /// The next chunk; `isFull` false when it is the last.
    mutating func next(maxBytes: Int) -> JSONBatchChunk
    /// The order the documents are saved in, when it is not the caller's.
    var order: JSONDocumentOrder? { get }
}

/// The chunks of a collection read once (`JSONDocumentSurvey`): in its own order, or in
/// `order`.
struct SurveyedChunks: JSONChunkSource {
    let survey: JSONDocumentSurvey
    var order: JSONDocumentOrder?
    /// Documents handed out since the last `restart`.
    private var handedOut = 0

    init(_ survey: JSONDocumentSurvey) { self.survey = survey }

    mutating func restart() { handedOut = 0 }

    mutating func next(maxBytes: Int) -> JSONBatchChunk {
        var inputs: [(id: String, json: String)] = []
        inputs.reserveCapacity(JSONBatchChunk.maxDocuments)
        var positions: [Int]?
        if order != nil { positions = []; positions!.reserveCapacity(JSONBatchChunk.maxDocuments) }
        let first = handedOut
        var bytes = 0
        while inputs.count < JSONBatchChunk.maxDocuments && bytes < maxBytes && handedOut < survey.count {
            let p = order?.positions[handedOut] ?? handedOut
            let d = survey.document(p)
            bytes += d.json.utf8.count
            inputs.append(d)
            positions?.append(p + 1)
            handedOut += 1
        }
        return JSONBatchChunk(firstPosition: first + 1, inputs: inputs, isFull: handedOut < survey.count, positions: positions)
    }
}

/// The documents of a `Collection.save(jsonDocuments:)` of a sequence that is not a collection,
/// read chunk by chunk so that a batch body run again reads the same chunks from the first:
/// such a sequence may be single-pass, so the chunks read from it are kept (their strings, by
/// reference) until the call returns — up to `JSONBatchChunk.replayLimit` bytes of JSON. Past
/// that, a run again cannot read the same documents and fails with an error that says so
/// (nothing is saved) rather than save only the documents it can still read. (A collection
/// is read again by index: `SurveyedChunks`.)
struct ReplayableChunks<Documents: Sequence>: JSONChunkSource where Documents.Element == (id: String, json: String) {
    private var iterator: Documents.Iterator
    /// The chunks read so far (inputs, and whether the chunk was full).
    private var read: [([(id: String, json: String)], Bool)] = []
    /// JSON bytes of `read`, and whether it still holds every chunk read.
    private var keptBytes = 0
    private var keptAll = true
    /// Chunks handed out since the last `restart`, and their documents.
    private var handedOut = 0
    private var documentsHandedOut = 0
    /// A sequence is saved in its own order.
    var order: JSONDocumentOrder? { nil }

    /// JSON bytes kept for a run again.
    private let keptLimit: Int

    init(_ documents: Documents, keptLimit: Int = JSONBatchChunk.replayLimit) {
        self.keptLimit = keptLimit
        iterator = documents.makeIterator()
    }

    /// Starts again from the first document (the first run of a body, and every run after).
    ///
    /// - Throws: `.limitReached` when the sequence must be read again beyond what was kept of it.
    mutating func restart() throws {
        if handedOut > 0 && !keptAll {
            throw DatabaseError(.limitReached, "the batch outgrew the database's memory map and must run again, but its "
                + "documents came from a sequence that can be read only once and were more than \(keptLimit >> 20) MB "
                + "of JSON: nothing was saved; pass a collection (an array), or save fewer documents per call, or open the "
                + "database with a larger DatabaseConfiguration.initialMapSize")
        }
        handedOut = 0
        documentsHandedOut = 0
    }

    /// The next chunk (see `JSONBatchChunk.fill`).
    mutating func next(maxBytes: Int) -> JSONBatchChunk {
        let chunk: JSONBatchChunk
        if handedOut < read.count {
            let (inputs, isFull) = read[handedOut]
            chunk = JSONBatchChunk(firstPosition: documentsHandedOut + 1, inputs: inputs, isFull: isFull)
        } else {
            chunk = JSONBatchChunk.fill(from: &iterator, firstPosition: documentsHandedOut + 1, maxBytes: maxBytes)
            if keptAll {
                for d in chunk.inputs { keptBytes &+= d.json.utf8.count }
                if keptBytes <= keptLimit {
                    read.append((chunk.inputs, chunk.isFull))
                } else {
                    keptAll = false
                    read = []
                }
            }
        }
        handedOut += 1
        documentsHandedOut += chunk.inputs.count
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
    /// The positions (from 1) of `inputs` when they are not `firstPosition` and the ones after
    /// it (a batch written in ID order).
    let positions: [Int]?
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

    fileprivate init(firstPosition: Int, inputs: [(id: String, json: String)], isFull: Bool, positions: [Int]? = nil) {
        self.firstPosition = firstPosition
        self.inputs = inputs
        self.isFull = isFull
        self.positions = positions
    }

    /// The position (from 1) in the caller's sequence of `inputs[offset]`.
    func position(_ offset: Int) -> Int { positions?[offset] ?? firstPosition + offset }

    /// The position of the document that failed, if one did (valid once `done`).
    var failurePosition: Int? { failure == nil ? nil : position(prepared.count) }

    /// `error`, its message naming the document's position in the caller's sequence.
    static func located(_ error: any Error, position: Int) -> any Error {
        guard var e = error as? DatabaseError else { return error }
        e.message += " (document \(position) of the sequence)"
        return e
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
        var encoder = BinaryEncoder.Reusable()
        for offset in inputs.indices {
            do {
                var body = try Collection.prepare(id: inputs[offset].id, json: inputs[offset].json, encoder: &encoder)
                fullText?.prepare(&body)
                prepared.append(body)
            } catch {
                failure = Self.located(error, position: position(offset))
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
        try prepare(id: id, json: json) { json throws(JSONError) in try BinaryEncoder.encodeJSON(json) }
    }

    /// `prepare(id:json:)` with an encoder kept from one document to the next (a chunk's).
    static func prepare(id: String, json: String, encoder: inout BinaryEncoder.Reusable) throws -> PreparedBody {
        try prepare(id: id, json: json) { json throws(JSONError) in try encoder.encodeJSON(json) }
    }

    @inline(__always)
    private static func prepare(id: String, json: String,
                                encode: (UnsafeRawBufferPointer) throws(JSONError) -> [UInt8]) throws -> PreparedBody {
        try DocumentValidation.validateID(id)
        let body: [UInt8]
        do {
            // A native string's bytes in place; a bridged one is copied first.
            if let encoded = try json.utf8.withContiguousStorageIfAvailable({ try encode(UnsafeRawBufferPointer($0)) }) {
                body = encoded
            } else {
                var text = json
                body = try text.withUTF8 { try encode(UnsafeRawBufferPointer($0)) }
            }
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
