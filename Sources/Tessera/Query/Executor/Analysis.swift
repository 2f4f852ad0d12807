// EXPLAIN ANALYZE (issue 20): the query runs with each plan level's row source wrapped in a
// counter, and the executor counts the rows that pass each level's filter. Documents and
// index entries are counted by the scans themselves through `ExecContext.readCounters` and
// charged to the level whose `reset`/`next` was running.

/// The figures of one plan level, summed over its loops.
struct LevelFigures {
    /// Times the level was started (1, or once per row of the levels before it).
    var loops = 0
    /// Rows its access path produced.
    var rows = 0
    /// Rows that passed its ON condition and filter.
    var passed = 0
    var documents = 0
    var entries = 0
    /// Time spent reading its rows, in nanoseconds.
    var nanoseconds: Int64 = 0
}

/// The figures of one analysed execution.
final class QueryAnalysis {
    var levels: [LevelFigures]
    let counters = ReadCounters()
    /// Rows the query returned.
    var resultRows = 0
    /// Time of the whole execution, in nanoseconds.
    var nanoseconds: Int64 = 0

    init(levels: Int = 0) {
        self.levels = Array(repeating: LevelFigures(), count: levels)
    }

    /// Wraps the row source of plan level `level`.
    func wrap(_ source: RowSource, level: Int) -> RowSource {
        AnalyzedRowSource(inner: source, level: level, analysis: self)
    }

    static func nanoseconds(since start: ContinuousClock.Instant) -> Int64 {
        let d = ContinuousClock.now - start
        return d.components.seconds * 1_000_000_000 + d.components.attoseconds / 1_000_000_000
    }
}

/// A row source that counts the loops, rows, reads and time of the one it wraps.
final class AnalyzedRowSource: RowSource {
    private let inner: RowSource
    private let level: Int
    private let analysis: QueryAnalysis

    init(inner: RowSource, level: Int, analysis: QueryAnalysis) {
        self.inner = inner
        self.level = level
        self.analysis = analysis
        super.init(slot: inner.slot)
    }

    /// Runs `body`, charging its time and reads to this level.
    private func measured<R>(_ body: () throws -> R) rethrows -> R {
        let c = analysis.counters
        let (documents, entries) = (c.documents, c.entries)
        let start = ContinuousClock.now
        defer {
            analysis.levels[level].nanoseconds += QueryAnalysis.nanoseconds(since: start)
            analysis.levels[level].documents += c.documents - documents
            analysis.levels[level].entries += c.entries - entries
        }
        return try body()
    }

    override func reset(_ ctx: ExecContext) throws {
        analysis.levels[level].loops += 1
        try measured { try inner.reset(ctx) }
    }

    override func next(_ ctx: ExecContext) throws -> Bool {
        let found = try measured { try inner.next(ctx) }
        if found { analysis.levels[level].rows += 1 }
        return found
    }

    override func countRows(_ ctx: ExecContext) throws -> Int {
        let n = try measured { try inner.countRows(ctx) }
        analysis.levels[level].rows += n
        return n
    }

    override func groupCounts(_ ctx: ExecContext, columns: Int, ids: Bool = true, into groups: inout CountedGroups) throws -> Bool {
        guard try measured({ try inner.groupCounts(ctx, columns: columns, ids: ids, into: &groups) }) else { return false }
        analysis.levels[level].rows += groups.rows
        return true
    }

    override func close() { inner.close() }
}
