/// A full scan of a collection's documents in ID order (tombstones skipped unless asked for).
final class CollectionScan: RowSource {
    let tables: DocumentTables
    let includeDeleted: Bool
    @exclusivity(unchecked) private var cursor: KeyCursor?
    /// `cursor`, moved per row without retaining it.
    @exclusivity(unchecked) private var moving: BorrowedCursor?
    @exclusivity(unchecked) private var started = false

    init(slot: Int, tables: DocumentTables, includeDeleted: Bool) {
        self.tables = tables
        self.includeDeleted = includeDeleted
        super.init(slot: slot)
    }

    override func reset(_ ctx: ExecContext) throws {
        if cursor == nil {
            let c = try ctx.txn.cursor(tables.records)
            cursor = c
            moving = c.borrowed
        }
        started = false
    }

    override func next(_ ctx: ExecContext) throws -> Bool {
        guard let cursor = moving else { return false }
        while true {
            try ctx.checkInterrupt()
            let ok = started ? try cursor.next() : try cursor.first()
            started = true
            guard ok else { return false }
            cursor.prefetchPage()
            cursor.prefetchValue()
            if DocumentFetch.bind(ctx, slot: slot, id: cursor.key, record: cursor.value, tables: tables,
                                  includeDeleted: includeDeleted) { return true }
        }
    }

    override func close() {
        moving = nil
        cursor?.close()
        cursor = nil
    }
}

/// The elements of an array, for UNNEST: one row per element; non-arrays give none.
final class UnnestScan: RowSource {
    let array: Evaluator
    @exclusivity(unchecked) private var elements: [Value] = []
    @exclusivity(unchecked) private var position = 0

    init(slot: Int, array: @escaping Evaluator) {
        self.array = array
        super.init(slot: slot)
    }

    override func reset(_ ctx: ExecContext) throws {
        if case .array(let a) = array(ctx) { elements = a } else { elements = [] }
        position = 0
    }

    override func next(_ ctx: ExecContext) throws -> Bool {
        guard position < elements.count else { return false }
        SourceSlot.bindElement(ctx.slots + slot, elements[position])
        position += 1
        return true
    }
}

/// An UNNEST level whose rows an earlier level's covering array-index scan binds (its slot
/// included): one row for each row of that scan, with nothing to read.
final class BoundRowScan: RowSource {
    @exclusivity(unchecked) private var done = false

    override func reset(_ ctx: ExecContext) throws { done = false }

    override func next(_ ctx: ExecContext) throws -> Bool {
        if done { return false }
        done = true
        return true
    }
}
