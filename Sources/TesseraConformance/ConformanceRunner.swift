#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Tessera

/// The outcome of one fixture step (a "case").
public struct ConformanceCaseResult: Sendable {
    /// The fixture file.
    public var file: String
    /// The step's 1-based position in the fixture (0 for a fixture-level failure).
    public var step: Int
    /// The step's `name`, or a summary of its action.
    public var name: String
    /// True if the step behaved as the fixture says.
    public var passed: Bool
    /// Why it failed: a readable diff or error.
    public var message: String?
}

/// The outcome of a conformance run.
public struct ConformanceReport: Sendable {
    /// Every case, in run order.
    public var cases: [ConformanceCaseResult] = []
    /// Cases that passed.
    public var passed: Int { cases.filter(\.passed).count }
    /// Cases that failed.
    public var failed: Int { cases.count - passed }

    /// One line per failing case, then `N passed, N failed`.
    public var text: String {
        var lines: [String] = []
        for c in cases where !c.passed {
            let where_ = c.step > 0 ? "\(c.file) step \(c.step) (\(c.name))" : c.file
            lines.append("FAIL \(where_): \(c.message ?? "failed")")
        }
        lines.append("\(passed) passed, \(failed) failed")
        return lines.joined(separator: "\n")
    }

    /// A machine-readable report.
    public var json: String {
        let list: [Value] = cases.map { c in
            var o: [String: Value] = ["file": .string(c.file), "step": .int(Int64(c.step)), "name": .string(c.name), "passed": .bool(c.passed)]
            if let m = c.message { o["message"] = .string(m) }
            return .object(o)
        }
        return JSONWriter.string(.object(["passed": .int(Int64(passed)), "failed": .int(Int64(failed)), "cases": .array(list)]), pretty: true)
    }
}

/// Runs conformance fixtures (`../shared/conformance/FORMAT.md`, format 1), each on a
/// fresh temporary database. Shared by `tessera conformance` and test suites:
///
/// ```swift
/// let report = ConformanceRunner().run(paths: ["Fixtures"])
/// #expect(report.failed == 0, "\(report.text)")
/// ```
public struct ConformanceRunner: Sendable {
    /// Creates a runner.
    public init() {}

    /// Runs every `*.json` fixture under the given files or directories (sorted, recursive).
    public func run(paths: [String]) -> ConformanceReport {
        var report = ConformanceReport()
        for path in paths {
            let files = FixtureFiles.collect(path)
            if files.isEmpty {
                report.cases.append(ConformanceCaseResult(file: path, step: 0, name: "load", passed: false, message: "no fixture (*.json) found at '\(path)'"))
            }
            for f in files { report.cases += runFixture(at: f) }
        }
        return report
    }

    /// The fixture files (`*.json`) under a file or directory, sorted, recursively.
    public static func fixtureFiles(in path: String) -> [String] { FixtureFiles.collect(path) }

    /// Runs one fixture file and returns a result per step (or one failure for a bad fixture).
    public func runFixture(at path: String) -> [ConformanceCaseResult] {
        let fixture: Fixture
        do {
            fixture = try Fixture.load(path: path)
        } catch {
            return [ConformanceCaseResult(file: path, step: 0, name: "load", passed: false, message: "\(error)")]
        }
        let db: Database
        do { db = try Database.temporary() } catch {
            return [ConformanceCaseResult(file: path, step: 0, name: "setup", passed: false, message: "cannot create a database: \(error)")]
        }
        defer { try? db.close() }
        do {
            try fixture.setUp(db)
        } catch {
            return [ConformanceCaseResult(file: path, step: 0, name: "setup", passed: false, message: "setup failed: \(error)")]
        }
        var results: [ConformanceCaseResult] = []
        for (i, step) in fixture.steps.enumerated() {
            let failure = step.run(db)
            results.append(ConformanceCaseResult(file: path, step: i + 1, name: step.name, passed: failure == nil, message: failure))
        }
        return results
    }
}

/// An error in a fixture file itself.
struct FixtureError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// Finds and reads fixture files (POSIX; no Foundation).
enum FixtureFiles {
    /// The scope and collection name fixtures use when they give none.
    static let defaultName = "_default"

    static func fileExists(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0
    }

    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    static func collect(_ path: String) -> [String] {
        if isDirectory(path) {
            var out: [String] = []
            guard let dir = opendir(path) else { return [] }
            var names: [String] = []
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
                }
                if name.hasPrefix(".") { continue }
                names.append(name)
            }
            closedir(dir)
            for name in names.sorted() {
                let child = path + "/" + name
                if isDirectory(child) { out += collect(child) } else if name.hasSuffix(".json") { out.append(child) }
            }
            return out
        }
        return fileExists(path) ? [path] : []
    }

    /// The largest fixture or data file the runner reads.
    static let maxFileBytes = 1 << 30

    /// Reads a whole regular file of at most `maxFileBytes` (a device such as /dev/zero, a
    /// pipe or a directory is refused, so a bad `file` path cannot hang a run).
    static func read(_ path: String) throws -> [UInt8] {
        guard let f = fopen(path, "rb") else {
            throw FixtureError(message: "cannot read '\(path)': \(String(cString: strerror(errno)))")
        }
        defer { fclose(f) }
        var info = stat()
        guard fstat(fileno(f), &info) == 0 else {
            throw FixtureError(message: "cannot read '\(path)': \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw FixtureError(message: "cannot read '\(path)': not a regular file")
        }
        var out: [UInt8] = []
        out.reserveCapacity(min(Int(info.st_size), maxFileBytes))
        var buf = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = fread(&buf, 1, buf.count, f)
            if n <= 0 { break }
            guard out.count + n <= maxFileBytes else {
                throw FixtureError(message: "cannot read '\(path)': larger than \(maxFileBytes >> 20) MB")
            }
            out.append(contentsOf: buf[0..<n])
        }
        return out
    }
}
