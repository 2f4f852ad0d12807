// The command table, `tessera help`, and dispatch.

import Tessera
import TesseraConformance

enum Commands {
    static let conformance = CommandSpec(
        name: "conformance", operands: "PATH...",
        summary: "Run conformance fixtures (files or directories of *.json) and report failures.",
        options: [.flag("--json", "Print a machine-readable report instead")],
        usesDatabase: false, minOperands: 1, maxOperands: nil,
        details: """
            Prints one line per failing case, then "N passed, N failed". Exit code 1 if any
            case failed. Each fixture runs on a fresh temporary database.
            """,
        run: { inv in
            let report = ConformanceRunner().run(paths: inv.operands)
            IO.out.line(inv.has("--json") ? report.json : report.text)
            return report.failed == 0 ? ExitCode.ok : ExitCode.failure
        })

    /// Every command, in the order `tessera help` lists them.
    static let all: [CommandSpec] = [
        DemoCommand.spec,
        ImportCommand.spec,
        QueryCommands.query,
        QueryCommands.explain,
        AdviseCommand.spec,
        IndexCommands.create,
        IndexCommands.list,
        IndexCommands.drop,
        DocumentCommands.ls,
        DocumentCommands.cat,
        DocumentCommands.put,
        DocumentCommands.rm,
        DocumentCommands.collections,
        MaintenanceCommands.check,
        MaintenanceCommands.stats,
        MaintenanceCommands.compact,
        MaintenanceCommands.optimize,
        ObservationCommands.changes,
        ObservationCommands.watch,
        ShellCommand.spec,
        conformance,
    ]

    static var overview: String {
        let width = max(all.map(\.name.count).max() ?? 0, "help [COMMAND]".count) + 2
        var lines = [
            "tessera — command-line tool for Tessera databases (what sqlite3 is to SQLite)",
            "",
            "Usage: tessera COMMAND [ARGUMENTS] [OPTIONS]",
            "",
            "Commands:",
        ]
        for c in all { lines.append("  " + c.name.padded(width) + c.summary) }
        lines.append("  " + "help [COMMAND]".padded(width) + "Show this overview, or a command's help")
        lines += [
            "",
            "DB is a database directory. --collection takes NAME or SCOPE.NAME (default: _default).",
            "Exit codes: 0 ok, 1 query or data error, 2 usage error.",
            "Run 'tessera COMMAND --help' for a command's options. Start with 'tessera demo'.",
        ]
        return lines.joined(separator: "\n")
    }

    /// Finds the command named by the first one or two words of `args`; returns it and
    /// the remaining words, or throws a usage error.
    static func lookup(_ args: [String]) throws -> (CommandSpec, [String]) {
        guard let first = args.first else { throw CLIError.usage("no command given") }
        if first == "index" {
            guard args.count > 1, !args[1].hasPrefix("-") else {
                throw CLIError.usage("'index' needs a subcommand: create, list or drop")
            }
            if let c = all.first(where: { $0.name == "index " + args[1] }) { return (c, Array(args.dropFirst(2))) }
            throw CLIError.usage("unknown index subcommand '\(args[1])' (create, list, drop)")
        }
        if let c = all.first(where: { $0.name == first }) { return (c, Array(args.dropFirst())) }
        throw CLIError.usage("unknown command '\(first)'")
    }

    /// Parses and runs one command line (words after `tessera`); returns the exit code.
    /// Errors are printed here as `tessera CMD: message`.
    static func run(_ args: [String], context: Context, prefix: String = "tessera") -> Int32 {
        if args.isEmpty {
            IO.err.line(overview)
            return ExitCode.usage
        }
        if args == ["help"] || args == ["--help"] || args == ["-h"] {
            IO.out.line(overview)
            return ExitCode.ok
        }
        if args == ["--version"] || args == ["version"] {
            IO.out.line("tessera (database format \(Database.formatVersion))")
            return ExitCode.ok
        }
        var words = args
        var helpOnly = false
        if words.first == "help" {
            words.removeFirst()
            helpOnly = true
        }
        if words == ["index"] && !helpOnly {
            IO.err.line(indexOverview)
            return ExitCode.usage
        }
        if words == ["index"] || words == ["index", "--help"] || words == ["index", "-h"] {
            IO.out.line(indexOverview)
            return ExitCode.ok
        }
        let spec: CommandSpec
        let rest: [String]
        do {
            (spec, rest) = try lookup(words)
        } catch {
            IO.err.line((prefix.isEmpty ? "" : prefix + ": ") + "\(error)")
            IO.err.line(prefix.isEmpty ? "Type .help for the list of commands." : "Run 'tessera help' for the list of commands.")
            return ExitCode.usage
        }
        if helpOnly {
            IO.out.line(spec.helpText)
            return ExitCode.ok
        }
        do {
            switch try parseArguments(rest, for: spec, context: context) {
            case .help:
                IO.out.line(spec.helpText)
                return ExitCode.ok
            case .run(let inv):
                let code = try spec.run(inv)
                IO.out.flush()
                return code
            }
        } catch {
            IO.out.flush()
            let (message, code) = describe(error)
            IO.err.line((prefix.isEmpty ? "" : prefix + " ") + "\(spec.name): \(message)")
            if code == ExitCode.usage {
                IO.err.line("Usage: \(spec.usageLine)")
                IO.err.line("Run 'tessera \(spec.name) --help' for details.")
            }
            IO.err.flush()
            return code
        }
    }

    static var indexOverview: String {
        var lines = ["Usage: tessera index (create | list | drop) …", ""]
        for c in [IndexCommands.create, IndexCommands.list, IndexCommands.drop] {
            lines.append("  " + c.usageLine)
            lines.append("      " + c.summary)
        }
        lines.append("")
        lines.append("Run 'tessera index create --help' for the index kinds and their options.")
        return lines.joined(separator: "\n")
    }
}
