import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The layering of Sources/Tessera (ARCHITECTURE.md): each folder may use what the folders
/// below it declare, never what a folder above it declares; only Storage/ imports LMDB.
@Suite("Architecture")
struct ArchitectureTests {
    /// Lowest first.
    static let layers = ["Values", "Storage", "Expressions", "Indexes", "Query", "Database"]

    /// Sources/Tessera, found from this file's path.
    static var sourceRoot: String {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        parts.removeLast(3) // Tests/TesseraTests/ArchitectureTests.swift
        return parts.joined(separator: "/") + "/Sources/Tessera"
    }

    static func swiftFiles(under dir: String) -> [String] {
        var out: [String] = []
        guard let d = opendir(dir) else { return [] }
        defer { closedir(d) }
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name == "." || name == ".." { continue }
            let path = dir + "/" + name
            var st = stat()
            guard stat(path, &st) == 0 else { continue }
            if (st.st_mode & S_IFMT) == S_IFDIR { out += swiftFiles(under: path) } else if name.hasSuffix(".swift") { out.append(path) }
        }
        return out.sorted()
    }

    static func read(_ path: String) -> String {
        guard let f = fopen(path, "r") else { return "" }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buf, 1, buf.count, f)
            if n <= 0 { break }
            bytes += buf[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The code of a file without comments and string literals (rough, but enough for names).
    static func code(_ text: String) -> String {
        var out = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var l = Substring(line)
            if let r = l.range(of: "//") { l = l[..<r.lowerBound] }
            var inString = false
            var cleaned = ""
            var previous: Character = " "
            for c in l {
                if c == "\"" && previous != "\\" { inString.toggle(); previous = c; continue }
                if !inString { cleaned.append(c) }
                previous = c
            }
            out += cleaned + "\n"
        }
        return out
    }

    static func identifiers(_ code: String) -> Set<String> {
        var out = Set<String>()
        var current = ""
        for c in code {
            if c.isLetter || c.isNumber || c == "_" { current.append(c) } else {
                if let f = current.first, f.isUppercase, current.count > 1 { out.insert(current) }
                current = ""
            }
        }
        return out
    }

    /// Top-level type names (nested types such as `ResultDiff.Key` are reached through their
    /// parent, whose name is what counts).
    static func declaredTypes(_ code: String) -> Set<String> {
        var out = Set<String>()
        for line in code.split(separator: "\n") where !(line.first?.isWhitespace ?? true) {
            let words = line.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") }).map(String.init)
            for (i, w) in words.enumerated() where i + 1 < words.count {
                if ["class", "struct", "enum", "protocol", "typealias", "actor"].contains(w) { out.insert(words[i + 1]); break }
            }
        }
        return out
    }

    /// Names of the standard library that Tessera types must not shadow in this check.
    static let standardNames: Set<String> = ["Result", "Collection", "DecodingError", "Element", "Failure", "Iterator", "AsyncIterator", "Index", "SubSequence"]

    @Test("only Storage/ imports LMDB")
    func onlyStorageImportsLMDB() {
        let root = Self.sourceRoot
        let files = Self.swiftFiles(under: root)
        #expect(files.count > 50, "found no sources under \(root)")
        for f in files where Self.read(f).split(separator: "\n").contains(where: { $0.trimmingCharacters() == "import LMDB" }) {
            #expect(f.hasPrefix(root + "/Storage/"), "\(f) imports LMDB: only Storage/ may")
        }
    }

    @Test("the engine uses FoundationEssentials, never all of Foundation (where FoundationEssentials exists)")
    func noFoundation() {
        // Foundation brings its own libraries and ICU copy into every process that links
        // Tessera; threads and locks are POSIX (`Support/WorkerThread.swift`).
        let files = Self.swiftFiles(under: Self.sourceRoot)
        for f in files {
            let lines = Self.read(f).split(separator: "\n").map { $0.trimmingCharacters() }
            for (i, line) in lines.enumerated() where line == "import Foundation" {
                #expect(i >= 3 && lines[i - 1] == "#else" && lines[i - 3] == "#if canImport(FoundationEssentials)",
                        "\(f):\(i + 1) imports Foundation outside `#if canImport(FoundationEssentials) … #else`")
            }
        }
    }

    @Test("no folder uses a type declared in a folder above it")
    func layersPointDown() {
        let root = Self.sourceRoot
        var declared: [String: Set<String>] = [:]
        var files: [String: [String]] = [:]
        for layer in Self.layers {
            files[layer] = Self.swiftFiles(under: root + "/" + layer)
            #expect(!(files[layer] ?? []).isEmpty, "no sources in \(layer)/")
            declared[layer] = (files[layer] ?? []).reduce(into: Set<String>()) { $0.formUnion(Self.declaredTypes(Self.code(Self.read($1)))) }
        }
        for (i, layer) in Self.layers.enumerated() {
            var above = Set<String>()
            for higher in Self.layers[(i + 1)...] { above.formUnion(declared[higher] ?? []) }
            above.subtract(declared[layer] ?? [])
            above.subtract(Self.standardNames)
            for f in files[layer] ?? [] {
                let used = Self.identifiers(Self.code(Self.read(f))).intersection(above)
                #expect(used.isEmpty, "\(f) (layer \(layer)) uses \(used.sorted()) from a layer above")
            }
        }
    }
}

private extension Substring {
    func trimmingCharacters() -> Substring {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\r" { s.removeLast() }
        return s
    }
}
