// Prints a module's public API from its symbol graph, one sorted line per symbol:
// `<kind> <path>: <declaration>`, plus `conformance <type>: <protocol>` lines.
// Used by `.ci/public-api`; run as `swift .ci/public-api.swift <symbolgraph-dir> <module>`.
// Symbols without a doc comment are listed on stderr as `undocumented: <line>`.

import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write("usage: public-api.swift <symbolgraph-dir> <module>\n".data(using: .utf8)!)
    exit(2)
}
let directory = URL(fileURLWithPath: arguments[1])
let module = arguments[2]

let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
    .filter { $0 == "\(module).symbols.json" || ($0.hasPrefix("\(module)@") && $0.hasSuffix(".symbols.json")) }
    .sorted()
guard !files.isEmpty else {
    FileHandle.standardError.write("no symbol graph for \(module) in \(directory.path)\n".data(using: .utf8)!)
    exit(1)
}

var lines = Set<String>()
var undocumented: [String] = []
for file in files {
    let data = try Data(contentsOf: directory.appendingPathComponent(file))
    guard let graph = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { continue }
    let symbols = graph["symbols"] as? [[String: Any]] ?? []
    var paths: [String: String] = [:]
    for symbol in symbols {
        guard let id = (symbol["identifier"] as? [String: Any])?["precise"] as? String else { continue }
        paths[id] = (symbol["pathComponents"] as? [String] ?? []).joined(separator: ".")
    }
    for symbol in symbols {
        let kind = ((symbol["kind"] as? [String: Any])?["identifier"] as? String ?? "?")
            .replacingOccurrences(of: "swift.", with: "")
        let path = (symbol["pathComponents"] as? [String] ?? []).joined(separator: ".")
        let fragments = symbol["declarationFragments"] as? [[String: Any]] ?? []
        let declaration = fragments.map { $0["spelling"] as? String ?? "" }.joined()
            .split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        let line = "\(kind) \(path): \(declaration)"
        lines.insert(line)
        if symbol["docComment"] == nil { undocumented.append(line) }
    }
    for relation in graph["relationships"] as? [[String: Any]] ?? [] {
        guard relation["kind"] as? String == "conformsTo",
              let source = relation["source"] as? String, let path = paths[source],
              let target = relation["target"] as? String else { continue }
        let name = paths[target] ?? relation["targetFallback"] as? String ?? target
        if name == "Swift.SendableMetatype" { continue } // implied by Sendable; varies by toolchain
        lines.insert("conformance \(path): \(name)")
    }
}
print(lines.sorted().joined(separator: "\n"))
for line in undocumented.sorted() {
    FileHandle.standardError.write("undocumented: \(line)\n".data(using: .utf8)!)
}
