#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A document as both engines receive it: an ID and JSON text.
struct BenchDocument: Sendable {
    let id: String
    let json: String
}

/// What one run of a workload produced, compared between engines.
struct Outcome: Equatable, Sendable {
    /// Rows returned (or documents written / found).
    var rows: Int
    /// A workload-specific checksum (sum of prices, …), 0 when not used.
    var checksum: Int = 0
}

/// The target of a workload: the ratio SQLite/Tessera must reach.
struct Target: Sendable {
    /// Smallest acceptable ratio.
    var minRatio: Double
    /// How the issue states it, e.g. "≥ 5" or "≤ 1.2× SQLite".
    var label: String
}

/// The results of one workload: times per repetition on each engine (or sizes).
struct Measurement: Sendable {
    /// Stable key for JSON output, e.g. `query.range`.
    var key: String
    /// Human title.
    var title: String
    /// Operations per repetition (documents loaded, queries run, …).
    var ops: Int
    /// Show time per operation (queries) rather than per repetition (loads).
    var perOp: Bool
    var target: Target?
    /// Seconds per repetition.
    var tessera: [Double] = []
    var sqlite: [Double] = []
    var tesseraOutcome: Outcome?
    var sqliteOutcome: Outcome?
    /// Sizes in bytes (size rows only).
    var tesseraBytes: Int?
    var sqliteBytes: Int?

    init(key: String, title: String, ops: Int, perOp: Bool, target: Target?) {
        self.key = key
        self.title = title
        self.ops = ops
        self.perOp = perOp
        self.target = target
    }

    var isSize: Bool { tesseraBytes != nil || sqliteBytes != nil }

    var tesseraMedian: Double? { median(tessera) }
    var sqliteMedian: Double? { median(sqlite) }

    /// SQLite/Tessera (time or size): higher is better for Tessera.
    var ratio: Double? {
        if isSize {
            guard let t = tesseraBytes, let s = sqliteBytes, t > 0 else { return nil }
            return Double(s) / Double(t)
        }
        guard let t = tesseraMedian, let s = sqliteMedian, t > 0 else { return nil }
        return s / t
    }

    /// Whether the target is met (nil without a target or a ratio).
    var met: Bool? {
        guard let target, let ratio else { return nil }
        return ratio >= target.minRatio
    }
}

/// The median of `xs` (nil if empty).
func median(_ xs: [Double]) -> Double? {
    guard !xs.isEmpty else { return nil }
    let s = xs.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

/// Monotonic time in seconds.
func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// Writes `s` to standard error, unbuffered.
func writeError(_ s: String) { writeAll(2, s) }

/// Writes `s` to standard output, unbuffered.
func writeOutput(_ s: String) { writeAll(1, s) }

private func writeAll(_ fd: Int32, _ s: String) {
    var s = s
    s.withUTF8 { buf in
        var off = 0
        while off < buf.count {
            let n = write(fd, buf.baseAddress! + off, buf.count - off)
            if n <= 0 { if errno == EINTR { continue } else { return } }
            off += n
        }
    }
}
