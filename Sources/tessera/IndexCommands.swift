// `tessera index create | list | drop`.

import Tessera

enum IndexCommands {
    static let create = CommandSpec(
        name: "index create", operands: "DB NAME",
        summary: "Create an index (value, array or full-text) and build it over the existing documents.",
        options: [
            DocumentCommands.collectionOption,
            .value("--value", "\"e1, e2\"", "A value index over these SQL++ expressions"),
            .value("--array", "PATH", "An array index over the elements at PATH (nested levels: contacts[].phones)"),
            .value("--expressions", "\"e1, e2\"", "With --array: expressions of each element (omit for scalar arrays)"),
            .value("--fulltext", "\"e1, e2\"", "A full-text index over these text expressions"),
            .value("--language", "L", "With --fulltext: stemming/stop-word language (ISO code or name; \"\" for none; default en)"),
            .flag("--ignore-accents", "With --fulltext: fold accents (café matches cafe)"),
            .value("--where", "\"cond\"", "Partial index: only documents for which cond is TRUE (value and full-text)"),
        ],
        minOperands: 1, maxOperands: 1,
        details: """
            Exactly one of --value, --array, --fulltext. An index with the same name and
            definition already present is left alone; a different definition replaces it.

            Examples:
              tessera index create travel.db TypeNameIndex --value "type, name"
              tessera index create travel.db HotelCityIndex --value city --where "type = 'hotel'"
              tessera index create travel.db nestedArray --collection profiles --array "contacts[].phones" --expressions type
              tessera index create travel.db HotelDescIndex --fulltext description --where "type = 'hotel'"
            """,
        run: runCreate)

    static let list = CommandSpec(
        name: "index list", operands: "DB",
        summary: "List indexes with their definitions (all collections unless --collection).",
        options: [DocumentCommands.collectionOption],
        run: runList)

    static let drop = CommandSpec(
        name: "index drop", operands: "DB NAME",
        summary: "Delete an index.",
        options: [DocumentCommands.collectionOption],
        minOperands: 1, maxOperands: 1,
        run: runDrop)

    /// The expressions of a list; when a part is empty the whole text is passed on, so the
    /// engine's syntax error points into the text as written.
    static func expressionList(_ text: String) -> [String] {
        let parts = splitExpressions(text)
        return parts.contains(where: \.isEmpty) ? [text] : parts
    }

    /// The configuration described by the options.
    static func configuration(_ inv: Invocation) throws -> any IndexConfiguration {
        let kinds = ["--value", "--array", "--fulltext"].filter { inv.value($0) != nil }
        guard kinds.count == 1 else {
            throw CLIError.usage(kinds.isEmpty ? "say which kind of index: --value, --array or --fulltext"
                                               : "give only one of \(kinds.joined(separator: ", "))")
        }
        let whereClause = inv.value("--where")
        if inv.value("--expressions") != nil && kinds[0] != "--array" {
            throw CLIError.usage("--expressions goes with --array (for --value/--fulltext list the expressions there)")
        }
        if (inv.value("--language") != nil || inv.has("--ignore-accents")) && kinds[0] != "--fulltext" {
            throw CLIError.usage("--language and --ignore-accents go with --fulltext")
        }
        switch kinds[0] {
        case "--value":
            return ValueIndexConfiguration(expressionList(inv.value("--value")!), where: whereClause)
        case "--array":
            if whereClause != nil { throw CLIError.usage("an array index takes no --where") }
            return ArrayIndexConfiguration(path: inv.value("--array")!, expressions: inv.value("--expressions").map(expressionList))
        default:
            return FullTextIndexConfiguration(expressionList(inv.value("--fulltext")!), where: whereClause,
                                              ignoreAccents: inv.has("--ignore-accents"), language: inv.value("--language"))
        }
    }

    static func runCreate(_ inv: Invocation) throws -> Int32 {
        let name = inv.operands[0]
        let config = try configuration(inv)
        let db = try inv.database(create: false)
        defer { inv.release(db) }
        let coll = try inv.collection(in: db, create: false)
        let t0 = monotonicSeconds()
        try coll.createIndex(withName: name, config: config)
        if IO.err.isTerminal {
            IO.err.line("created index \(name) on \(coll.fullName) (\(plural(try coll.count, "document"))) in \(formatMillis(monotonicSeconds() - t0))")
        }
        return ExitCode.ok
    }

    /// One line describing a definition: `value (type, name) WHERE type = 'hotel'`.
    static func describe(_ d: IndexDefinition) -> String {
        var s = d.summary
        if let w = d.whereClause { s += " WHERE " + w }
        return s
    }

    static func runList(_ inv: Invocation) throws -> Int32 {
        let db = try inv.readingDatabase()
        defer { inv.release(db) }
        let colls = inv.value("--collection") != nil ? [try inv.collection(in: db, create: false)] : try allCollections(db)
        var rows: [(String, String, String)] = []
        for c in colls {
            for name in try c.indexes() {
                guard let idx = try c.index(withName: name) else { continue }
                rows.append((c.fullName, name, describe(idx.definition)))
            }
        }
        let w0 = rows.map(\.0.count).max() ?? 0
        let w1 = rows.map(\.1.count).max() ?? 0
        for r in rows { IO.out.line(r.0.padded(w0) + "  " + r.1.padded(w1) + "  " + r.2) }
        return ExitCode.ok
    }

    static func runDrop(_ inv: Invocation) throws -> Int32 {
        let name = inv.operands[0]
        let db = try inv.database(create: false)
        defer { inv.release(db) }
        let coll = try inv.collection(in: db, create: false)
        guard try coll.index(withName: name) != nil else {
            let known = try coll.indexes()
            throw CLIError.failure("no index '\(name)' on \(coll.fullName)" + (known.isEmpty ? " (it has none)" : " (indexes: \(known.joined(separator: ", ")))"))
        }
        try coll.deleteIndex(forName: name)
        return ExitCode.ok
    }
}
