import Foundation
import Testing

/// What a run of the `tessera` executable produced.
struct CLIRun {
    var code: Int32
    var out: String
    var err: String

    /// Non-empty lines of standard output.
    var lines: [String] { out.split(separator: "\n").map(String.init) }
}

/// Runs the built `tessera` executable as a child process.
enum CLI {
    /// The executable beside the test bundle (`swift test` builds every product first).
    static let executable: String? = {
        var candidates: [String] = []
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            var dir = (exe as NSString).deletingLastPathComponent
            // On macOS the runner sits inside the .xctest bundle: climb out of it.
            while dir.contains(".xctest") { dir = (dir as NSString).deletingLastPathComponent }
            candidates.append(dir + "/tessera")
        }
        let bundle = Bundle.main.bundleURL.deletingLastPathComponent().path
        candidates.append(bundle + "/tessera")
        candidates.append(FileManager.default.currentDirectoryPath + "/.build/debug/tessera")
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Runs `tessera args…` with `stdin` as its input (empty when nil) in `directory`; with a
    /// `launcher` (program and arguments), runs that instead.
    static func run(_ args: [String], stdin: String? = nil, in directory: String? = nil, launcher: [String]? = nil) throws -> CLIRun {
        guard let executable else {
            Issue.record("the tessera executable was not found beside the test bundle (looked for .build/debug/tessera); build it with 'swift build'")
            throw CancellationError()
        }
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-cli-\(UUID().uuidString)")
        let outURL = tmp.appendingPathExtension("out")
        let errURL = tmp.appendingPathExtension("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: launcher?.first ?? executable)
        process.arguments = launcher.map { Array($0.dropFirst()) } ?? args
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let outHandle = try FileHandle(forWritingTo: outURL)
        let errHandle = try FileHandle(forWritingTo: errURL)
        process.standardOutput = outHandle
        process.standardError = errHandle
        let input = Pipe()
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        try outHandle.close()
        try errHandle.close()
        let out = String(decoding: try Data(contentsOf: outURL), as: UTF8.self)
        let err = String(decoding: try Data(contentsOf: errURL), as: UTF8.self)
        return CLIRun(code: process.terminationStatus, out: out, err: err)
    }
}

/// A fresh temporary directory, removed when the test ends.
final class TempDir: Sendable {
    let path: String

    init() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-cli-test-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// `path/name`.
    func file(_ name: String) -> String { path + "/" + name }

    /// Writes `text` to `path/name` and returns the full path.
    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        try Data(text.utf8).write(to: URL(fileURLWithPath: file(name)))
        return file(name)
    }
}

/// Parses JSON text with Foundation (independent of the engine's reader).
func jsonObject(_ text: String) throws -> Any {
    try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
}
