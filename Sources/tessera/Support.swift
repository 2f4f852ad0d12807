// Shared plumbing of the `tessera` command-line tool: errors and exit codes, buffered
// output, terminal detection, clocks and number formatting.

import Tessera

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - Errors and exit codes

/// Exit codes of the tool: 0 ok, 1 query or data error, 2 usage error.
enum ExitCode {
    static let ok: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 2
}

/// An error the tool reports itself (engine errors are reported as they are).
enum CLIError: Error, CustomStringConvertible {
    /// Bad command line: exit code 2, followed by the command's usage line.
    case usage(String)
    /// A data or query problem: exit code 1.
    case failure(String)

    var description: String {
        switch self {
        case .usage(let m), .failure(let m): m
        }
    }
}

/// The text and exit code for any error thrown by a command.
func describe(_ error: any Error) -> (message: String, code: Int32) {
    switch error {
    case let e as CLIError:
        if case .usage = e { return (e.description, ExitCode.usage) }
        return (e.description, ExitCode.failure)
    case let e as QueryError: return (e.description, ExitCode.failure)
    case let e as DatabaseError:
        // An index error carries the QueryError (with its caret) in its message already.
        return (e.message, ExitCode.failure)
    case let e as JSONError: return ("invalid JSON: \(e)", ExitCode.failure)
    default: return ("\(error)", ExitCode.failure)
    }
}

// MARK: - Output

/// A buffered writer over a file descriptor (stdout or stderr), bytes only.
final class Output {
    let fd: Int32
    private var buffer: [UInt8] = []
    /// True if the descriptor is a terminal.
    let isTerminal: Bool

    init(fd: Int32) {
        self.fd = fd
        self.isTerminal = isatty(fd) == 1
        buffer.reserveCapacity(1 << 16)
    }

    /// Appends text.
    func write(_ s: String) {
        buffer.append(contentsOf: s.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Appends text and a newline.
    func line(_ s: String = "") {
        buffer.append(contentsOf: s.utf8)
        buffer.append(10)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Appends raw bytes.
    func bytes(_ b: [UInt8]) {
        buffer.append(contentsOf: b)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Appends bytes produced in place.
    func append(_ body: (inout [UInt8]) -> Void) {
        body(&buffer)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Writes everything buffered.
    func flush() {
        var offset = 0
        while offset < buffer.count {
            let n = buffer.withUnsafeBytes { raw in
                rawWrite(fd, raw.baseAddress! + offset, raw.count - offset)
            }
            if n < 0 {
                if errno == EINTR { continue }
                break  // EPIPE and the like: nothing more can be written
            }
            offset += n
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// `write(2)` (a free function, so `Output.write` does not shadow it).
private func rawWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int {
    write(fd, p, n)
}

/// Standard output and standard error of the process.
enum IO {
    nonisolated(unsafe) static let out = Output(fd: 1)
    nonisolated(unsafe) static let err = Output(fd: 2)
    static var stdinIsTerminal: Bool { isatty(0) == 1 }
}

// MARK: - Clock

/// Seconds on a monotonic clock.
func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

// MARK: - Number formatting

/// `d` with exactly `decimals` digits after the point (no Foundation).
func fixed(_ d: Double, _ decimals: Int) -> String {
    guard d.isFinite else { return d.description }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let negative = d < 0
    let scaled = (abs(d) * scale).rounded()
    guard scaled < 9e18 else { return d.description }
    let n = Int64(scaled)
    var whole = String(n / Int64(scale))
    if negative && n != 0 { whole = "-" + whole }
    if decimals == 0 { return whole }
    var frac = String(n % Int64(scale))
    while frac.count < decimals { frac = "0" + frac }
    return whole + "." + frac
}

/// An integer with thousands separators: `1,234,567`.
func grouped(_ n: Int) -> String {
    let s = String(abs(n))
    var out = ""
    for (i, c) in s.enumerated() {
        if i > 0 && (s.count - i) % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return n < 0 ? "-" + out : out
}

/// Milliseconds for display: 3 significant-ish decimals below 10 ms, fewer above.
func formatMillis(_ seconds: Double) -> String {
    let ms = seconds * 1000
    if ms < 10 { return fixed(ms, 3) + " ms" }
    if ms < 1000 { return fixed(ms, 1) + " ms" }
    return fixed(ms / 1000, 2) + " s"
}

/// A byte count for display: `4.2 MiB`.
func formatBytes(_ n: Int) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
    var v = Double(n)
    var u = 0
    while v >= 1024 && u < units.count - 1 { v /= 1024; u += 1 }
    return u == 0 ? "\(n) bytes" : fixed(v, 1) + " " + units[u]
}

/// `n thing` or `n things`.
func plural(_ n: Int, _ word: String, _ pluralWord: String? = nil) -> String {
    "\(grouped(n)) " + (n == 1 ? word : (pluralWord ?? word + "s"))
}

// MARK: - Files

/// Reads a whole file (or standard input for `-`).
func readWholeFile(_ path: String) throws -> [UInt8] {
    let fd = path == "-" ? 0 : open(path, O_RDONLY)
    guard fd >= 0 else {
        throw CLIError.failure("cannot open '\(path)': \(String(cString: strerror(errno)))")
    }
    defer { if fd != 0 { close(fd) } }
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            throw CLIError.failure("cannot read '\(path)': \(String(cString: strerror(errno)))")
        }
        if n == 0 { break }
        out.append(contentsOf: chunk[0..<n])
    }
    return out
}

/// Text read from a file or standard input: valid UTF-8, or an error naming the first bad
/// byte (never U+FFFD in its place).
func readTextFile(_ path: String) throws -> String {
    let bytes = try readWholeFile(path)
    guard let text = String(validating: bytes, as: UTF8.self) else {
        let name = path == "-" ? "standard input" : "'\(path)'"
        throw CLIError.failure("\(name) is not valid UTF-8 (byte \((invalidUTF8Offset(bytes) ?? 0) + 1))")
    }
    return text
}

/// The offset of the first byte that is not part of a valid UTF-8 sequence, or nil.
func invalidUTF8Offset(_ bytes: some Swift.Collection<UInt8>) -> Int? {
    var decoder = UTF8()
    var it = bytes.makeIterator()
    var consumed = 0
    var offset = 0
    while true {
        switch decoder.decode(&it) {
        case .scalarValue(let s):
            offset += UTF8.width(s)
            consumed = offset
        case .emptyInput: return nil
        case .error: return consumed
        }
    }
}

/// Size in bytes of a regular file, or nil.
func fileSize(_ path: String) -> Int? {
    var st = stat()
    guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
    return Int(st.st_size)
}

/// True if `path` names a directory.
func isDirectory(_ path: String) -> Bool {
    var st = stat()
    return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
}

// MARK: - Databases and collections

/// Opens the database at `path`. Unless `create` is set, a missing database is an error
/// (so a typo does not silently create an empty database).
///
/// With `readOnly` (commands that only read) it is opened read-only, so that it works on
/// read-only copies and never changes anything — unless its format must be upgraded first,
/// which needs a write.
func openDatabase(_ path: String, create: Bool, initialMapSize: Int? = nil, readOnly: Bool = false) throws -> Database {
    if !create && !Database.exists(path: path) {
        if isDirectory(path) || fileSize(path) != nil {
            throw CLIError.failure("'\(path)' is not a Tessera database (no data.mdb inside)")
        }
        throw CLIError.failure("no database at '\(path)' (create one with 'tessera import', 'tessera put' or 'tessera demo --keep')")
    }
    var config = DatabaseConfiguration()
    if let initialMapSize { config.initialMapSize = initialMapSize }
    if readOnly {
        config.readOnly = true
        do { return try Database(path: path, configuration: config) } catch let e as DatabaseError where e.code == .readOnly {
            config.readOnly = false  // an older format: the upgrade needs a write
        }
    }
    return try Database(path: path, configuration: config)
}

/// Splits `name` or `scope.name` (nil: the default collection).
func collectionName(_ spec: String?) -> (scope: String?, name: String) {
    guard let spec, !spec.isEmpty else { return (nil, "_default") }
    if let dot = spec.firstIndex(of: ".") {
        let scope = String(spec[..<dot])
        return (scope == "_" ? "_default" : scope, String(spec[spec.index(after: dot)...]))
    }
    return (nil, spec == "_" ? "_default" : spec)
}

/// The collection named by `--collection` (`name` or `scope.name`; default `_default`).
/// Creates it when `create` is set, else a missing collection is an error.
func resolveCollection(_ db: Database, _ spec: String?, create: Bool) throws -> Collection {
    let (scope, name) = collectionName(spec)
    if name == "_default" && (scope == nil || scope == "_default") { return try db.defaultCollection() }
    if let c = try db.collection(name: name, scope: scope) { return c }
    if create { return try db.createCollection(name: name, scope: scope) }
    let known = try allCollections(db).map(\.fullName).joined(separator: ", ")
    throw CLIError.failure("no collection '\(spec ?? name)' in '\(db.path)' (collections: \(known))")
}

/// Every collection of every scope, `_default._default` first.
func allCollections(_ db: Database) throws -> [Collection] {
    var out: [Collection] = []
    for scope in try db.scopes() { out += try scope.collections() }
    return out
}

// MARK: - Small text helpers

extension String {
    /// The string without leading and trailing spaces, tabs and newlines.
    var trimmed: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" || f == "\n" || f == "\r" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\n" || l == "\r" { s.removeLast() }
        return String(s)
    }

    /// Left-justified to `width` characters.
    func padded(_ width: Int) -> String {
        let n = count
        return n >= width ? self : self + String(repeating: " ", count: width - n)
    }

    /// Right-justified to `width` characters.
    func leftPadded(_ width: Int) -> String {
        let n = count
        return n >= width ? self : String(repeating: " ", count: width - n) + self
    }
}

/// Splits a list of SQL++ expressions at top-level commas (outside quotes, backticks,
/// parentheses, brackets and braces): `"type, lower(name)"` → `["type", "lower(name)"]`.
func splitExpressions(_ text: String) -> [String] {
    var parts: [String] = []
    var current = ""
    var depth = 0
    var quote: Character? = nil
    for c in text {
        if let q = quote {
            current.append(c)
            if c == q { quote = nil }  // a doubled quote re-enters the string on the next char
            continue
        }
        switch c {
        case "'", "\"", "`": quote = c; current.append(c)
        case "(", "[", "{": depth += 1; current.append(c)
        case ")", "]", "}": depth -= 1; current.append(c)
        case "," where depth == 0:
            parts.append(current.trimmed)
            current = ""
        default: current.append(c)
        }
    }
    let last = current.trimmed
    if !last.isEmpty || !parts.isEmpty { parts.append(last) }
    return parts
}
