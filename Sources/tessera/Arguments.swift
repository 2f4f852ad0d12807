// Command-line parsing: every command declares its operands and options in a
// `CommandSpec`; one parser turns argv into an `Invocation` and reports mistakes as
// usage errors (exit code 2).

import Tessera

/// One `--option` of a command.
struct OptionSpec: Sendable {
    /// `--name`.
    let name: String
    /// The placeholder of its value (`N`, `C`), or nil for a flag.
    let value: String?
    /// One line of help.
    let help: String
    /// May be given more than once (all values are kept).
    var repeatable = false

    static func flag(_ name: String, _ help: String) -> OptionSpec { OptionSpec(name: name, value: nil, help: help) }
    static func value(_ name: String, _ placeholder: String, _ help: String, repeatable: Bool = false) -> OptionSpec {
        OptionSpec(name: name, value: placeholder, help: help, repeatable: repeatable)
    }
}

/// A command of the tool: its syntax, help and implementation.
struct CommandSpec: Sendable {
    /// The command words (`query`, `index create`).
    let name: String
    /// The operands as shown in the usage line, DB included (`DB "SQL++"`).
    let operands: String
    /// One line for `tessera help`.
    let summary: String
    /// Options.
    var options: [OptionSpec] = []
    /// The first operand is a database directory (implicit inside `tessera shell`).
    var usesDatabase = true
    /// Operands besides DB: at least this many…
    var minOperands = 0
    /// …and at most this many (nil: no limit).
    var maxOperands: Int? = 0
    /// More help text: behaviour, output, examples.
    var details = ""
    /// Runs the command; returns the exit code.
    let run: @Sendable (Invocation) throws -> Int32

    /// `tessera NAME OPERANDS [options]`.
    var usageLine: String {
        "tessera \(name)" + (operands.isEmpty ? "" : " " + operands) + (options.isEmpty ? "" : " [options]")
    }

    /// The full help text of `tessera NAME --help`.
    var helpText: String {
        var lines = ["Usage: \(usageLine)", "", summary]
        if !details.isEmpty { lines += ["", details] }
        if !options.isEmpty {
            lines += ["", "Options:"]
            let shown = options.map { o in o.name + (o.value.map { " " + $0 } ?? "") }
            let width = min(30, (shown.map(\.count).max() ?? 0) + 2)
            for (o, s) in zip(options, shown) {
                let text = o.help + (o.repeatable ? " (repeatable)" : "")
                if s.count + 2 > width {
                    lines.append("  " + s)
                    lines.append("  " + String(repeating: " ", count: width) + text)
                } else {
                    lines.append("  " + s.padded(width) + text)
                }
            }
            lines.append("  " + "--help".padded(width) + "Show this help")
        }
        return lines.joined(separator: "\n")
    }
}

/// Per-process state shared by commands: inside `tessera shell` the open database.
final class Context {
    /// The database of the shell session (commands then take no DB operand).
    var shellDatabase: Database?
    /// The output format chosen with `.mode` in the shell (nil: by terminal).
    var shellFormat: OutputFormat?

    init(shellDatabase: Database? = nil) { self.shellDatabase = shellDatabase }
}

/// A parsed command line for one command.
struct Invocation {
    /// The command.
    let spec: CommandSpec
    /// The DB operand (nil inside the shell).
    var databasePath: String?
    /// The operands after DB.
    var operands: [String] = []
    /// Option values by option name (`--collection`), in order given.
    var values: [String: [String]] = [:]
    /// Flags given.
    var flags: Set<String> = []
    /// Shared state.
    let context: Context

    /// The last value of an option.
    func value(_ name: String) -> String? { values[name]?.last }
    /// Every value of a repeatable option.
    func all(_ name: String) -> [String] { values[name] ?? [] }
    /// True if a flag was given.
    func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// An integer option, checked against `min`.
    func int(_ name: String, min lower: Int) throws -> Int? {
        guard let text = value(name) else { return nil }
        guard let n = Int(text), n >= lower else {
            throw CLIError.usage("\(name) expects an integer ≥ \(lower), not '\(text)'")
        }
        return n
    }

    /// The database: the shell's, or the DB operand opened (created only if `create`).
    func database(create: Bool) throws -> Database {
        if let db = context.shellDatabase { return db }
        return try openDatabase(databasePath!, create: create)
    }

    /// The database for a command that only reads: the shell's, or the DB operand opened
    /// read-only (see `openDatabase`).
    func readingDatabase() throws -> Database {
        if let db = context.shellDatabase { return db }
        return try openDatabase(databasePath!, create: false, readOnly: true)
    }

    /// Closes `db` unless it belongs to the shell.
    func release(_ db: Database) {
        if context.shellDatabase == nil { try? db.close() }
    }

    /// The collection named by `--collection`.
    func collection(in db: Database, create: Bool) throws -> Collection {
        try resolveCollection(db, value("--collection"), create: create)
    }
}

/// The result of parsing: run the command, or show its help.
enum Parsed {
    case run(Invocation)
    case help
}

/// Parses `args` (the words after the command name) for `spec`.
///
/// `--name value` and `--name=value` both work; `--` ends the options; `-h`/`--help`
/// asks for help; a lone `-` and negative numbers are operands.
func parseArguments(_ args: [String], for spec: CommandSpec, context: Context) throws -> Parsed {
    var inv = Invocation(spec: spec, context: context)
    var operands: [String] = []
    var i = 0
    var optionsEnded = false
    while i < args.count {
        let a = args[i]
        i += 1
        if optionsEnded || a == "-" || !a.hasPrefix("-") || isNumber(a) {
            operands.append(a)
            continue
        }
        if a == "--" { optionsEnded = true; continue }
        if a == "-h" || a == "--help" { return .help }
        var name = a
        var inline: String? = nil
        if let eq = a.firstIndex(of: "=") {
            name = String(a[..<eq])
            inline = String(a[a.index(after: eq)...])
        }
        guard let opt = spec.options.first(where: { $0.name == name }) else {
            let known = spec.options.map(\.name)
            let hint = known.isEmpty ? " (it takes no options)" : " (options: \(known.joined(separator: ", ")))"
            throw CLIError.usage("unknown option '\(name)'" + hint
                + "; an operand that begins with \"-\" (a document ID) goes after \"--\"")
        }
        if opt.value == nil {
            if inline != nil { throw CLIError.usage("option \(name) takes no value") }
            inv.flags.insert(name)
            continue
        }
        let v: String
        if let inline {
            v = inline
        } else {
            guard i < args.count else { throw CLIError.usage("option \(name) needs a value (\(name) \(opt.value!))") }
            v = args[i]
            i += 1
        }
        inv.values[name, default: []].append(v)
    }
    if spec.usesDatabase && context.shellDatabase == nil {
        guard !operands.isEmpty else { throw CLIError.usage("missing the database directory (DB)") }
        inv.databasePath = operands.removeFirst()
    }
    if operands.count < spec.minOperands {
        throw CLIError.usage("missing operand: expected \(spec.operands)")
    }
    if let max = spec.maxOperands, operands.count > max {
        throw CLIError.usage("unexpected operand '\(operands[max])': expected \(spec.operands)")
    }
    inv.operands = operands
    return .run(inv)
}

private func isNumber(_ s: String) -> Bool {
    s.count > 1 && s.hasPrefix("-") && s.dropFirst().allSatisfy { $0.isNumber || $0 == "." }
}
