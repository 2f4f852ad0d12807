// A parsed conformance fixture (format 1). Unknown keys are errors, so typos never pass.

import Tessera

struct Fixture {
    struct CollectionSpec {
        var scope: String
        var name: String
        var docs: [(id: String, body: [String: Value])]
    }

    var path: String
    var collections: [CollectionSpec]
    var indexes: [IndexSpec]
    var steps: [Step]

    static let topKeys: Set<String> = ["format", "description", "collections", "indexes", "steps"]

    static func load(path: String) throws -> Fixture {
        let bytes = try FixtureFiles.read(path)
        let root: Value
        do { root = try JSONReader.parse(bytes) } catch {
            throw FixtureError(message: "\(path): invalid JSON: \(error)")
        }
        guard case .object(let top) = root else { throw FixtureError(message: "\(path): a fixture must be a JSON object") }
        for k in top.keys where !topKeys.contains(k) {
            throw FixtureError(message: "\(path): unknown top-level key '\(k)'")
        }
        guard case .int(1)? = top["format"] else {
            throw FixtureError(message: "\(path): 'format' must be 1 (got \(top["format"].map { $0.description } ?? "nothing"))")
        }
        guard case .array(let stepValues)? = top["steps"] else { throw FixtureError(message: "\(path): 'steps' (an array) is required") }
        if let d = top["description"], d.stringValue == nil { throw FixtureError(message: "\(path): 'description' must be a string") }

        var collections: [CollectionSpec] = []
        if let cs = top["collections"] {
            guard case .array(let list) = cs else { throw FixtureError(message: "\(path): 'collections' must be an array") }
            for (i, c) in list.enumerated() {
                collections.append(try CollectionSpec.parse(c, fixture: path, position: i + 1))
            }
        }
        var indexes: [IndexSpec] = []
        if let ix = top["indexes"] {
            guard case .array(let list) = ix else { throw FixtureError(message: "\(path): 'indexes' must be an array") }
            for (i, v) in list.enumerated() { indexes.append(try IndexSpec.parse(v, context: "\(path): indexes[\(i)]")) }
        }
        var steps: [Step] = []
        for (i, s) in stepValues.enumerated() {
            steps.append(try Step.parse(s, context: "\(path): steps[\(i)]"))
        }
        return Fixture(path: path, collections: collections, indexes: indexes, steps: steps)
    }

    func setUp(_ db: Database) throws {
        for c in collections {
            let coll: Collection
            if c.scope == FixtureFiles.defaultName && (c.name == FixtureFiles.defaultName || c.name == "_") {
                coll = try db.defaultCollection()
            } else {
                coll = try db.createCollection(name: c.name, scope: c.scope)
            }
            try db.inBatch {
                for d in c.docs { try coll.save(id: d.id, properties: d.body) }
            }
        }
        for ix in indexes { try ix.create(in: db) }
    }
}

extension Fixture.CollectionSpec {
    static let keys: Set<String> = ["name", "scope", "docs", "file"]

    static func parse(_ v: Value, fixture: String, position: Int) throws -> Fixture.CollectionSpec {
        let ctx = "\(fixture): collections[\(position - 1)]"
        guard case .object(let o) = v else { throw FixtureError(message: "\(ctx) must be an object") }
        for k in o.keys where !keys.contains(k) { throw FixtureError(message: "\(ctx): unknown key '\(k)'") }
        guard let name = o["name"]?.stringValue else { throw FixtureError(message: "\(ctx): 'name' (a string) is required") }
        let scope = o["scope"]?.stringValue ?? FixtureFiles.defaultName
        var rawDocs: [(Value, String)] = []
        switch (o["docs"], o["file"]) {
        case (.array(let list)?, nil):
            rawDocs = list.enumerated().map { ($0.element, "\(ctx).docs[\($0.offset)]") }
        case (nil, .string(let file)?):
            let dir = fixture.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            let full = file.hasPrefix("/") ? file : (dir.isEmpty ? file : dir + "/" + file)
            rawDocs = try loadDocuments(full)
        case (nil, nil), (.some, .some):
            throw FixtureError(message: "\(ctx): exactly one of 'docs' and 'file' is required")
        default:
            throw FixtureError(message: "\(ctx): 'docs' must be an array and 'file' a string")
        }
        var docs: [(id: String, body: [String: Value])] = []
        for (d, where_) in rawDocs {
            guard case .object(var body) = d else { throw FixtureError(message: "\(where_): a document must be a JSON object") }
            guard case .string(let id)? = body["_id"] else { throw FixtureError(message: "\(where_): document has no string '_id'") }
            body["_id"] = nil
            docs.append((id, body))
        }
        return Fixture.CollectionSpec(scope: scope, name: name, docs: docs)
    }

    /// A JSON array of objects, or JSON Lines (one object per line).
    static func loadDocuments(_ path: String) throws -> [(Value, String)] {
        let bytes = try FixtureFiles.read(path)
        let firstNonSpace = bytes.first { $0 != 32 && $0 != 9 && $0 != 10 && $0 != 13 }
        if firstNonSpace == UInt8(ascii: "[") {
            do {
                guard case .array(let list) = try JSONReader.parse(bytes) else { return [] }
                return list.enumerated().map { ($0.element, "\(path) element \($0.offset + 1)") }
            } catch {
                throw FixtureError(message: "\(path): invalid JSON: \(error)")
            }
        }
        var out: [(Value, String)] = []
        var lineNo = 0
        for line in bytes.split(separator: 10, omittingEmptySubsequences: false) {
            lineNo += 1
            if line.allSatisfy({ $0 == 32 || $0 == 9 || $0 == 13 }) { continue }
            do {
                out.append((try JSONReader.parse(Array(line)), "\(path):\(lineNo)"))
            } catch {
                throw FixtureError(message: "\(path): line \(lineNo): invalid JSON: \(error)")
            }
        }
        return out
    }
}

/// An index entry of a fixture (also the `createIndex` step).
struct IndexSpec {
    var collection: String
    var definition: IndexDefinition

    static var keys: Set<String> { Set(["collection", "name", "type", "expressions", "where"]).union(IndexDefinition.optionKeys) }

    static func parse(_ v: Value, context: String) throws -> IndexSpec {
        guard case .object(let o) = v else { throw FixtureError(message: "\(context) must be an object") }
        for k in o.keys where !keys.contains(k) { throw FixtureError(message: "\(context): unknown key '\(k)'") }
        guard let coll = o["collection"]?.stringValue else { throw FixtureError(message: "\(context): 'collection' is required") }
        guard let name = o["name"]?.stringValue else { throw FixtureError(message: "\(context): 'name' is required") }
        guard let t = o["type"]?.stringValue, IndexDefinition.registeredTypes.contains(IndexType(rawValue: t)) else {
            throw FixtureError(message: "\(context): 'type' must be one of \(IndexDefinition.registeredTypes.map(\.rawValue).joined(separator: ", "))")
        }
        let type = IndexType(rawValue: t)
        var exprs: [String] = []
        switch o["expressions"] {
        case nil, .null?: exprs = []
        case .array(let a)?:
            for e in a {
                guard let s = e.stringValue else { throw FixtureError(message: "\(context): 'expressions' must hold strings") }
                exprs.append(s)
            }
        default: throw FixtureError(message: "\(context): 'expressions' must be an array of strings")
        }
        let options: [String: Value]
        do { options = try IndexDefinition.options(for: type, fromJSON: o) } catch let e as DatabaseError {
            throw FixtureError(message: "\(context): \(e.message)")
        }
        let def = IndexDefinition(name: name, type: type, expressions: exprs, whereClause: o["where"]?.stringValue, options: options)
        return IndexSpec(collection: coll, definition: def)
    }

    func create(in db: Database) throws {
        let c = try resolveCollection(collection, db)
        try c.createIndex(definition)
    }
}

/// `coll` or `scope.coll`, as fixtures name collections.
func resolveCollection(_ name: String, _ db: Database) throws -> Collection {
    let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
    let (scope, coll) = parts.count == 2 ? (parts[0], parts[1]) : (FixtureFiles.defaultName, parts[0])
    let s = scope == "_" ? FixtureFiles.defaultName : scope
    if s == FixtureFiles.defaultName && (coll == "_" || coll == FixtureFiles.defaultName) { return try db.defaultCollection() }
    guard let c = try db.collection(name: coll, scope: s) else {
        throw FixtureError(message: "no collection '\(name)'")
    }
    return c
}
