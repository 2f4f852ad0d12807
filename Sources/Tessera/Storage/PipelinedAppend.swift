// Sorted entries appended by the writer while a helper thread prepares the next batch.
//
// A back-fill's append loop does two things per entry: it finds the entry's key (keys in
// sorted order are scattered over the arena that holds them), notes it for the planner
// statistics and adds it to a batch; and it has LMDB write the batch. Only the second needs
// the write transaction, whose handle belongs to the writer's thread, so the first runs on a
// helper thread one batch ahead: two batches are used in turn, one filled while the other is
// written.

/// Fills append batches on a helper thread, one batch ahead of the writer that appends them
/// (see the comment at the top of this file).
enum PipelinedAppend {
    /// Entries per batch: LMDB's work for a batch dwarfs handing it over.
    static let batchSize = 4_096

    /// Appends the entries `0..<count` to `table` in batches, in key order: `fill(range,
    /// &batch)` adds the entries `range` to an empty batch. With a `worker`, every `fill` runs
    /// there, one batch ahead of the appends (made on the calling thread); the caller must not
    /// touch what `fill` uses until this returns. Without one, `fill` and the appends take
    /// turns on the calling thread. The first error of an append stops the filling and is
    /// thrown once the worker has stopped.
    static func run(count: Int, txn: WriteTransaction, table: StorageTable, worker: WorkerThread?,
                    fill: @escaping (Range<Int>, inout StorageAppendBatch) -> Void) throws {
        let size = batchSize, batches = (count + size - 1) / size
        guard let worker, batches > 1 else {
            var batch = StorageAppendBatch(capacity: size)
            for b in 0..<batches {
                fill(b * size ..< Swift.min(count, (b + 1) * size), &batch)
                try txn.append(&batch, to: table)
            }
            return
        }
        let slots = Slots()
        let work = UncheckedFill(fill: fill)
        worker.submit {
            for b in 0..<batches {
                guard let batch = slots.empty(b & 1) else { break }
                work.fill(b * size ..< Swift.min(count, (b + 1) * size), &batch.pointee)
                slots.filled(b & 1)
            }
            slots.finish()
        }
        defer { slots.waitUntilFinished() }
        do {
            for b in 0..<batches {
                guard let batch = slots.full(b & 1) else { break }
                try txn.append(&batch.pointee, to: table)
                slots.written(b & 1)
            }
        } catch {
            slots.stop()
            throw error
        }
    }

    /// The two batches and which of them are filled, under one lock: the helper fills slot
    /// `b & 1` only while it is empty, the writer appends it only once it is filled.
    private final class Slots: @unchecked Sendable {
        // @unchecked Sendable: `isFilled`, `stopped` and `finished` are read and written under
        // `condition`'s lock; a batch is touched by one thread at a time, as they say.
        private let condition = ThreadCondition()
        private let batches = UnsafeMutablePointer<StorageAppendBatch>.allocate(capacity: 2)
        private var isFilled = [false, false]
        private var stopped = false
        private var finished = false

        init() {
            batches.initialize(to: StorageAppendBatch(capacity: PipelinedAppend.batchSize))
            (batches + 1).initialize(to: StorageAppendBatch(capacity: PipelinedAppend.batchSize))
        }

        deinit {
            batches.deinitialize(count: 2)
            batches.deallocate()
        }

        /// The helper's: slot `i` once it is empty (nil once the writer has stopped).
        func empty(_ i: Int) -> UnsafeMutablePointer<StorageAppendBatch>? {
            condition.lock()
            defer { condition.unlock() }
            while isFilled[i] && !stopped { condition.wait() }
            return stopped ? nil : batches + i
        }

        /// The helper's: slot `i` is filled.
        func filled(_ i: Int) {
            condition.lock()
            isFilled[i] = true
            condition.broadcast()
            condition.unlock()
        }

        /// The helper's: it fills no more.
        func finish() {
            condition.lock()
            finished = true
            condition.broadcast()
            condition.unlock()
        }

        /// The writer's: slot `i` once it is filled (nil if the helper finished without).
        func full(_ i: Int) -> UnsafeMutablePointer<StorageAppendBatch>? {
            condition.lock()
            defer { condition.unlock() }
            while !isFilled[i] && !finished { condition.wait() }
            return isFilled[i] ? batches + i : nil
        }

        /// The writer's: slot `i` is written (and so empty).
        func written(_ i: Int) {
            condition.lock()
            isFilled[i] = false
            condition.broadcast()
            condition.unlock()
        }

        /// The writer's, after an error: the helper fills no more.
        func stop() {
            condition.lock()
            stopped = true
            condition.broadcast()
            condition.unlock()
        }

        /// Returns once the helper has finished.
        func waitUntilFinished() {
            condition.lock()
            while !finished { condition.wait() }
            condition.unlock()
        }
    }

    /// The caller's `fill`, handed to the helper thread: the caller touches nothing it uses
    /// until `run` returns, and `run` returns only after the helper has finished.
    private struct UncheckedFill: @unchecked Sendable {
        let fill: (Range<Int>, inout StorageAppendBatch) -> Void
    }
}
