import Dispatch

// A large transaction's full-text tokenizing on a second core. Tokenizing is about a third
// of a bulk load into a collection with a full-text index and needs nothing from the write
// transaction, so once a transaction has queued `FullTextPendingChanges.backgroundAfter`
// documents, each further new text is handed to a worker in chunks: the writer saves the next
// chunk's documents while the worker tokenizes the last one, then queues its entries in
// document-number order, exactly as if it had tokenized them itself.

/// Documents waiting to be tokenized off the writer's thread, and the chunk being tokenized.
/// Used by one write transaction's thread; the worker only reads its own chunk's copies.
final class FullTextBackgroundTokenizer {
    /// One document to index: its number, ID bytes and a copy of its binary body.
    struct Job: Sendable {
        var number: UInt32
        var id: [UInt8]
        var body: [UInt8]
    }

    /// Results of a chunk, written by the worker before it signals `done`.
    private final class Chunk: @unchecked Sendable {
        let jobs: [Job]
        var results: [PreparedFullText] = []
        let done = DispatchSemaphore(value: 0)
        init(_ jobs: [Job]) { self.jobs = jobs }
    }

    /// Documents per chunk handed to the worker.
    static let chunkSize = 256
    /// Body bytes after which a chunk is handed over early (large documents): at most two
    /// chunks' copies are held, about 32 MB plus the largest body.
    static let chunkBytes = 16 << 20

    private let kind: FullTextIndexKind
    private let paths: [CompiledPath]
    private var filling: [Job] = []
    private var fillingBytes = 0
    private var running: Chunk?

    init(kind: FullTextIndexKind, paths: [CompiledPath]) {
        self.kind = kind
        self.paths = paths
        filling.reserveCapacity(Self.chunkSize)
    }

    /// True if no document is waiting or being tokenized.
    var isEmpty: Bool { filling.isEmpty && running == nil }

    /// Queues a document; when a chunk is full, the previous chunk's entries are applied (in
    /// order) and the full one goes to the worker.
    func submit(_ job: Job, apply: (Job, PreparedFullText) throws -> Void) throws {
        filling.append(job)
        fillingBytes += job.body.count
        guard filling.count >= Self.chunkSize || fillingBytes >= Self.chunkBytes else { return }
        try finishRunning(apply)
        let chunk = Chunk(filling)
        filling = []
        fillingBytes = 0
        filling.reserveCapacity(Self.chunkSize)
        running = chunk
        let kind = kind, paths = paths
        if worker == nil { worker = WorkerThread(name: "tessera.fulltext-tokenizer") }
        worker!.submit {
            chunk.results = chunk.jobs.map { job in
                job.body.withUnsafeBytes { raw in
                    guard let root = BinaryValue.root(raw) else {
                        return PreparedFullText(definition: kind.definition, cacheKey: nil, tokenCount: 0, entries: [], bytes: [])
                    }
                    return PreparedFullText(tokenizing: root, paths: paths, kind: kind)
                }
            }
            chunk.done.signal()
        }
        if let spent = retired {
            retired = nil
            worker!.submit { withExtendedLifetime(spent) {} }
        }
    }

    /// Applies every queued document's entries, in order: the worker's chunk when it is done,
    /// then the ones still waiting (tokenized here).
    func drain(_ apply: (Job, PreparedFullText) throws -> Void) throws {
        try finishRunning(apply)
        let waiting = filling
        filling = []
        fillingBytes = 0
        for job in waiting {
            let prepared = job.body.withUnsafeBytes { raw in
                BinaryValue.root(raw).map { PreparedFullText(tokenizing: $0, paths: paths, kind: kind) }
            }
            try apply(job, prepared ?? PreparedFullText(definition: kind.definition, cacheKey: nil, tokenCount: 0, entries: [], bytes: []))
        }
    }

    /// Waits for the worker's chunk and applies it.
    private func finishRunning(_ apply: (Job, PreparedFullText) throws -> Void) throws {
        guard let chunk = running else { return }
        chunk.done.wait()
        running = nil
        for (job, prepared) in zip(chunk.jobs, chunk.results) { try apply(job, prepared) }
        retired = chunk.results
        chunk.results = []
    }

    /// The entries of the last chunk applied, to be released on the worker after the next
    /// chunk is queued there: they were allocated on the worker, and freeing them on the
    /// writer's thread takes the lock of the worker's malloc arena while the worker allocates.
    /// (The chunk's documents, copied on the writer's thread, are released there.)
    private var retired: [PreparedFullText]?

    deinit {
        // A transaction that ends early (an error) still waits for its worker, so that
        // nothing runs on behalf of a closed transaction; then the worker's thread ends.
        running?.done.wait()
        worker?.stop()
    }

    /// The worker's own thread (`WorkerThread`), started with the first chunk.
    private var worker: WorkerThread?
}
