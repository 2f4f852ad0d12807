// `tessera shell`: SQL++ statements ending with `;` and dot-commands, interactively or
// from a pipe.

import Tessera

enum ShellCommand {
    static let spec = CommandSpec(
        name: "shell", operands: "DB",
        summary: "Interactive shell: SQL++ statements ending with ';' and dot-commands (.help).",
        options: [.value("--format", "F", "Initial output format: table, json, jsonl or csv")],
        details: """
            Statements may span lines; each ends with ';' (outside quotes). Lines starting with
            '.' are dot-commands (see .help inside the shell). When standard input is not a
            terminal no prompts or banner are printed, so scripts can be piped in:

              printf "SELECT COUNT(*) AS n FROM _;\\n.indexes\\n" | tessera shell travel.db

            Creates the database if it does not exist. Exit code: 0, or 1 when input was piped
            and some statement failed.
            """,
        run: run)

    static func run(_ inv: Invocation) throws -> Int32 {
        if inv.context.shellDatabase != nil { throw CLIError.usage("already in a shell") }
        let format = try OutputFormat.parse(inv.value("--format"))
        let db = try openDatabase(inv.databasePath!, create: true)
        defer { try? db.close() }
        let session = ShellSession(database: db, interactive: IO.stdinIsTerminal)
        session.context.shellFormat = format
        return session.run()
    }
}

/// One shell session over an open database.
final class ShellSession {
    let database: Database
    let context: Context
    let interactive: Bool
    private(set) var history: [String] = []
    private var explain = false
    private var timer = false
    private var parameters: [String: Value] = [:]
    private var errors = 0

    init(database: Database, interactive: Bool) {
        self.database = database
        self.context = Context(shellDatabase: database)
        self.interactive = interactive
    }

    static let dotHelp = """
        SQL++ statements end with ';' and may span several lines.
        .help                       This text
        .quit | .exit               Leave the shell
        .collections                Collections and their document counts
        .indexes [COLLECTION]       Indexes and their definitions
        .schema [COLLECTION]        Property paths and types seen in (up to 1000) documents
        .explain on|off             Print the plan before each statement's rows
        .explain SQL++              Print the plan of one statement
        .explain analyze SQL++      Run one statement and print its plan with what each step read
        .timer on|off               Print the time of each statement
        .mode [table|json|jsonl|csv]  Show or set the output format
        .param                      List bound parameters
        .param set NAME VALUE       Bind $NAME (VALUE as JSON if valid, else a string)
        .param unset NAME | clear   Remove one or all parameters
        .history                    Statements and commands entered so far
        .ls [--collection C] [--limit N] [--bodies]
        .cat ID [--collection C]
        .put ID JSON                (add --collection C before ID to choose a collection)
        .rm ID [--collection C]
        .index create|list|drop …   As 'tessera index …' without DB
        .import FILE… [--collection C] [--id-field F] [--batch N]
        .stats | .check | .compact
        """

    /// Reads and runs input until EOF or `.quit`; returns the exit code.
    func run() -> Int32 {
        if interactive {
            IO.out.line("Tessera shell on \(database.path). Statements end with ';'. Type .help for commands.")
        }
        var buffer = ""
        while true {
            if interactive {
                IO.out.write(buffer.isEmpty ? "tessera> " : "     ...> ")
                IO.out.flush()
            }
            guard let line = readLine(strippingNewline: true) else { break }
            if buffer.trimmed.isEmpty {
                buffer = ""
                let t = line.trimmed
                if t.isEmpty { continue }
                if t.hasPrefix(".") {
                    history.append(t)
                    if !dotCommand(t) { return exitCode }
                    IO.out.flush()
                    IO.err.flush()
                    continue
                }
            }
            buffer += buffer.isEmpty ? line : "\n" + line
            while let (statement, rest) = ShellSession.splitStatement(buffer) {
                execute(statement)
                buffer = rest
            }
        }
        if !buffer.trimmed.isEmpty { execute(buffer) }
        if interactive { IO.out.line() }
        return exitCode
    }

    private var exitCode: Int32 { !interactive && errors > 0 ? ExitCode.failure : ExitCode.ok }

    /// The text before the first `;` outside quotes and backticks, and the rest.
    static func splitStatement(_ text: String) -> (String, String)? {
        var quote: Character? = nil
        var i = text.startIndex
        while i < text.endIndex {
            let c = text[i]
            if let q = quote {
                if c == q { quote = nil }
            } else if c == "'" || c == "\"" || c == "`" {
                quote = c
            } else if c == ";" {
                return (String(text[..<i]), String(text[text.index(after: i)...]))
            }
            i = text.index(after: i)
        }
        return nil
    }

    private func execute(_ statement: String) {
        let sql = statement.trimmed
        if sql.isEmpty { return }
        history.append(sql + ";")
        do {
            let query = try database.createQuery(sql)
            query.parameters = try boundParameters(for: query)
            try QueryCommands.execute(query, format: context.shellFormat ?? .automatic, explain: explain, time: timer, repeatCount: nil)
        } catch {
            fail(describe(error).message)
        }
        IO.out.flush()
        IO.err.flush()
    }

    /// The session's parameters that the query uses (binding others would be an error).
    private func boundParameters(for query: Query) throws -> Parameters? {
        let used = Set(try query.parameterNames)
        let bound = parameters.filter { used.contains($0.key) }
        return bound.isEmpty ? nil : Parameters(bound)
    }

    private func fail(_ message: String) {
        IO.out.flush()
        IO.err.line("error: " + message)
        IO.err.flush()
        errors += 1
    }

    /// Runs a dot-command; returns false to leave the shell.
    private func dotCommand(_ line: String) -> Bool {
        let words = ShellSession.words(line)
        guard let head = words.first else { return true }
        let args = Array(words.dropFirst())
        switch head {
        case ".quit", ".exit", ".q":
            return false
        case ".help":
            IO.out.line(ShellSession.dotHelp)
        case ".collections", ".tables":
            delegate(["collections", "--counts"])
        case ".indexes":
            delegate(["index", "list"] + (args.first.map { ["--collection", $0] } ?? []))
        case ".schema":
            schema(args.first)
        case ".explain":
            let rest = ShellSession.rest(of: line, after: 1)
            switch rest.lowercased() {
            case "on": explain = true
            case "off": explain = false
            case "": IO.out.line("explain is \(explain ? "on" : "off")")
            default:
                var sql = rest
                if sql.hasSuffix(";") { sql.removeLast() }
                let analyze = args.first?.lowercased() == "analyze" && args.count > 1
                if analyze { sql = ShellSession.rest(of: line, after: 2) }
                if sql.hasSuffix(";") { sql.removeLast() }
                do {
                    let q = try database.createQuery(sql)
                    q.parameters = try boundParameters(for: q)
                    IO.out.line(try q.explain(analyze: analyze))
                } catch { fail(describe(error).message) }
            }
        case ".timer":
            switch args.first?.lowercased() {
            case "on": timer = true
            case "off": timer = false
            default: IO.out.line("timer is \(timer ? "on" : "off")")
            }
        case ".mode":
            if let m = args.first {
                do { context.shellFormat = try OutputFormat.parse(m) } catch { fail(describe(error).message) }
            } else {
                IO.out.line((context.shellFormat ?? .automatic).rawValue)
            }
        case ".param", ".params", ".parameter":
            param(args)
        case ".history":
            for (i, h) in history.enumerated() { IO.out.line(String(i + 1).leftPadded(4) + "  " + h) }
        case ".put":
            // The JSON is the raw rest of the line: `.put [--collection C] ID {"a": 1}`.
            var skip = 1
            var prefix: [String] = []
            if args.first == "--collection", args.count > 1 { prefix = ["--collection", args[1]]; skip += 2 }
            guard args.count > skip - 1 else { fail("usage: .put [--collection C] ID JSON"); break }
            let id = args[skip - 1]
            let json = ShellSession.rest(of: line, after: skip + 1)
            delegate(["put"] + prefix + ["--", id, json])
        case ".ls", ".cat", ".rm", ".index", ".import", ".stats", ".check", ".compact":
            delegate([String(head.dropFirst())] + args)
        default:
            fail("unknown command '\(head)' (try .help)")
        }
        return true
    }

    /// Runs a `tessera` command against the shell's database.
    private func delegate(_ args: [String]) {
        let code = Commands.run(args, context: context, prefix: "")
        if code != ExitCode.ok { errors += 1 }
    }

    private func param(_ args: [String]) {
        switch args.first {
        case nil, "list":
            for k in parameters.keys.sorted() { IO.out.line("$\(k) = \(JSONWriter.string(parameters[k]!))") }
        case "clear":
            parameters.removeAll()
        case "unset":
            guard args.count == 2 else { fail("usage: .param unset NAME"); return }
            parameters[args[1].hasPrefix("$") ? String(args[1].dropFirst()) : args[1]] = nil
        case "set":
            guard args.count >= 3 else { fail("usage: .param set NAME VALUE"); return }
            do {
                let (name, value) = try QueryCommands.parseParam(args[1] + "=" + args[2...].joined(separator: " "))
                parameters[name] = value
            } catch { fail(describe(error).message) }
        default:
            fail("usage: .param [list | set NAME VALUE | unset NAME | clear]")
        }
    }

    /// Property paths with the types seen, from up to 1000 documents.
    private func schema(_ collection: String?) {
        do {
            let coll = try resolveCollection(database, collection, create: false)
            var seen: [String: [String: Int]] = [:]
            var n = 0
            try coll.forEachDocument { doc in
                for (k, v) in doc.properties { ShellSession.collect(v, path: k, depth: 0, into: &seen) }
                n += 1
                return n < 1000
            }
            IO.out.line("\(coll.fullName): \(plural(n, "document")) sampled")
            let width = seen.keys.map(\.count).max() ?? 0
            for path in seen.keys.sorted() {
                let types = seen[path]!.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }
                IO.out.line("  " + path.padded(width) + "  " + types.joined(separator: ", "))
            }
        } catch { fail(describe(error).message) }
    }

    private static func collect(_ v: Value, path: String, depth: Int, into seen: inout [String: [String: Int]]) {
        seen[path, default: [:]][v.typeName, default: 0] += 1
        guard depth < 4 else { return }
        switch v {
        case .object(let o):
            for (k, x) in o { collect(x, path: path + "." + k, depth: depth + 1, into: &seen) }
        case .array(let a):
            for x in a { collect(x, path: path + "[]", depth: depth + 1, into: &seen) }
        default: break
        }
    }

    /// Shell-like words: spaces separate, '…' and "…" group (quotes removed).
    static func words(_ line: String) -> [String] {
        var out: [String] = []
        var current = ""
        var inWord = false
        var quote: Character? = nil
        for c in line {
            if let q = quote {
                if c == q { quote = nil } else { current.append(c) }
            } else if c == "'" || c == "\"" {
                quote = c
                inWord = true
            } else if c == " " || c == "\t" {
                if inWord { out.append(current); current = ""; inWord = false }
            } else {
                current.append(c)
                inWord = true
            }
        }
        if inWord { out.append(current) }
        return out
    }

    /// The raw text of `line` after its first `count` space-separated words.
    static func rest(of line: String, after count: Int) -> String {
        var s = Substring(line.trimmed)
        for _ in 0..<count {
            while let f = s.first, f != " " && f != "\t" { s.removeFirst() }
            while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        }
        return String(s).trimmed
    }
}
