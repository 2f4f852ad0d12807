// `tessera ls`, `cat`, `put`, `rm` and `collections`.

import Tessera

enum DocumentCommands {
    static let collectionOption = OptionSpec.value("--collection", "C", "Collection: NAME or SCOPE.NAME (default: _default)")

    static let ls = CommandSpec(
        name: "ls", operands: "DB",
        summary: "List document IDs of a collection, in ID order.",
        options: [
            collectionOption,
            .value("--limit", "N", "Show at most N documents"),
            .flag("--bodies", "Print each document as a JSON line with its ID in \"_id\" (re-importable with 'tessera import')"),
        ],
        run: runLs)

    static let cat = CommandSpec(
        name: "cat", operands: "DB ID",
        summary: "Print a document's JSON body.",
        options: [collectionOption, .flag("--meta", "Print {\"id\", \"sequence\", \"revisionID\", \"body\"} instead of the body")],
        minOperands: 1, maxOperands: 1,
        details: """
            The body is indented on a terminal and compact when piped.
            \(idAfterDashes("cat DB"))
            """,
        run: runCat)

    static let put = CommandSpec(
        name: "put", operands: "DB ID JSON",
        summary: "Create or replace a document (JSON may be \"-\" to read standard input).",
        options: [collectionOption],
        minOperands: 2, maxOperands: 2,
        details: """
            Creates the database and the collection if they do not exist. The body must be a JSON object.
            \(idAfterDashes("put DB", "'{}'"))
            """,
        run: runPut)

    static let rm = CommandSpec(
        name: "rm", operands: "DB ID",
        summary: "Delete a document.",
        options: [collectionOption],
        minOperands: 1, maxOperands: 1,
        details: idAfterDashes("rm DB"),
        run: runRm)

    static let collections = CommandSpec(
        name: "collections", operands: "DB",
        summary: "List the collections (SCOPE.NAME), one per line.",
        options: [.flag("--counts", "Also print the number of documents of each")],
        run: runCollections)

    /// The help line about IDs that begin with "-" (base64 IDs, generated IDs).
    static func idAfterDashes(_ command: String, _ rest: String = "") -> String {
        "An ID that begins with \"-\" goes after \"--\", which ends the options: tessera \(command) -- -Xa9…" + (rest.isEmpty ? "" : " " + rest)
    }

    static func runLs(_ inv: Invocation) throws -> Int32 {
        let limit = try inv.int("--limit", min: 0)
        let db = try inv.readingDatabase()
        defer { inv.release(db) }
        let coll = try inv.collection(in: db, create: false)
        var n = 0
        if limit == 0 { return ExitCode.ok }
        let bodies = inv.has("--bodies")
        try coll.forEachDocument { doc in
            if bodies {
                var o = doc.properties
                o["_id"] = .string(doc.id)
                IO.out.append { JSONWriter.write(.object(o), into: &$0) }
                IO.out.write("\n")
            } else {
                IO.out.line(doc.id)
            }
            n += 1
            return limit.map { n < $0 } ?? true
        }
        IO.out.flush()
        return ExitCode.ok
    }

    static func runCat(_ inv: Invocation) throws -> Int32 {
        let id = inv.operands[0]
        let db = try inv.readingDatabase()
        defer { inv.release(db) }
        let coll = try inv.collection(in: db, create: false)
        guard let doc = try coll.document(id: id) else {
            throw CLIError.failure("no document '\(id)' in collection \(coll.fullName)")
        }
        var value = doc.body
        if inv.has("--meta") {
            value = .object(["id": .string(doc.id), "sequence": .int(Int64(doc.sequence)),
                             "revisionID": doc.revisionID.map(Value.string) ?? .null, "body": doc.body])
        }
        IO.out.line(JSONWriter.string(value, pretty: IO.out.isTerminal))
        return ExitCode.ok
    }

    static func runPut(_ inv: Invocation) throws -> Int32 {
        let id = inv.operands[0]
        var json = inv.operands[1]
        if json == "-" { json = try readTextFile("-") }
        let db = try inv.database(create: true)
        defer { inv.release(db) }
        let coll = try inv.collection(in: db, create: true)
        try coll.save(id: id, json: json)
        return ExitCode.ok
    }

    static func runRm(_ inv: Invocation) throws -> Int32 {
        let id = inv.operands[0]
        let db = try inv.database(create: false)
        defer { inv.release(db) }
        let coll = try inv.collection(in: db, create: false)
        guard try coll.document(id: id) != nil else {
            throw CLIError.failure("no document '\(id)' in collection \(coll.fullName)")
        }
        try coll.delete(id: id)
        return ExitCode.ok
    }

    static func runCollections(_ inv: Invocation) throws -> Int32 {
        let db = try inv.readingDatabase()
        defer { inv.release(db) }
        let colls = try allCollections(db)
        let width = colls.map(\.fullName.count).max() ?? 0
        for c in colls {
            if inv.has("--counts") {
                IO.out.line(c.fullName.padded(width) + "  " + String(try c.count))
            } else {
                IO.out.line(c.fullName)
            }
        }
        return ExitCode.ok
    }
}
