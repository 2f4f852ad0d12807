// One step of a fixture: a query with its expectations, or a mutation.

import Tessera

struct Step {
    enum Action {
        case query(QueryStep)
        case save(collection: String, id: String, body: [String: Value])
        case delete(collection: String, id: String)
        case purge(collection: String, id: String)
        case createIndex(IndexSpec)
        case deleteIndex(collection: String, name: String)
    }

    struct QueryStep {
        var sql: String
        var params: [String: Value]
        var expect: [Value]?
        var expectCount: Int?
        var ordered: Bool?
        var uses: [String]?
        var error: String?
        var errorContains: String?
    }

    var name: String
    var action: Action
    /// For mutation steps: the error kind the step must fail with.
    var expectedError: String?

    static let queryKeys: Set<String> = ["name", "query", "params", "expect", "ordered", "expectCount", "uses", "error", "errorContains"]
    static let actionKeys: Set<String> = ["query", "save", "delete", "purge", "createIndex", "deleteIndex"]

    static func parse(_ v: Value, context: String) throws -> Step {
        guard case .object(let o) = v else { throw FixtureError(message: "\(context) must be an object") }
        let actions = o.keys.filter { actionKeys.contains($0) }
        guard actions.count == 1, let action = actions.first else {
            throw FixtureError(message: "\(context): a step needs exactly one of \(actionKeys.sorted().joined(separator: ", "))")
        }
        let name = o["name"]?.stringValue
        if action == "query" {
            for k in o.keys where !queryKeys.contains(k) { throw FixtureError(message: "\(context): unknown key '\(k)' in a query step") }
            guard let sql = o["query"]?.stringValue else { throw FixtureError(message: "\(context): 'query' must be a string") }
            var q = QueryStep(sql: sql, params: [:])
            if let p = o["params"] {
                guard case .object(let params) = p else { throw FixtureError(message: "\(context): 'params' must be an object") }
                q.params = params
            }
            if let e = o["expect"] {
                guard case .array(let rows) = e else { throw FixtureError(message: "\(context): 'expect' must be an array of rows") }
                q.expect = rows
            }
            if let c = o["expectCount"] {
                guard let n = c.intValue else { throw FixtureError(message: "\(context): 'expectCount' must be an integer") }
                q.expectCount = Int(n)
            }
            if let ord = o["ordered"] {
                guard let b = ord.boolValue else { throw FixtureError(message: "\(context): 'ordered' must be a boolean") }
                q.ordered = b
            }
            if let u = o["uses"] {
                guard case .array(let names) = u, names.allSatisfy({ $0.stringValue != nil }) else {
                    throw FixtureError(message: "\(context): 'uses' must be an array of index names")
                }
                q.uses = names.compactMap(\.stringValue)
            }
            q.error = o["error"]?.stringValue
            q.errorContains = o["errorContains"]?.stringValue
            let outcomes = [q.expect != nil, q.expectCount != nil, q.error != nil].filter { $0 }.count
            if outcomes > 1 { throw FixtureError(message: "\(context): give only one of 'expect', 'expectCount' and 'error'") }
            return Step(name: name ?? sql, action: .query(q), expectedError: nil)
        }
        for k in o.keys where k != action && k != "name" && k != "error" {
            throw FixtureError(message: "\(context): unknown key '\(k)' in a \(action) step")
        }
        let expectedError = o["error"]?.stringValue
        let body = o[action]!
        let ctx = "\(context).\(action)"
        func str(_ key: String) throws -> String {
            guard let s = body[key].stringValue else { throw FixtureError(message: "\(ctx): '\(key)' (a string) is required") }
            return s
        }
        func onlyKeys(_ allowed: Set<String>) throws {
            guard case .object(let b) = body else { throw FixtureError(message: "\(ctx) must be an object") }
            for k in b.keys where !allowed.contains(k) { throw FixtureError(message: "\(ctx): unknown key '\(k)'") }
        }
        let a: Action
        switch action {
        case "save":
            try onlyKeys(["collection", "doc"])
            guard case .object(var doc) = body["doc"] else { throw FixtureError(message: "\(ctx): 'doc' (an object) is required") }
            guard case .string(let id)? = doc["_id"] else { throw FixtureError(message: "\(ctx): 'doc' has no string '_id'") }
            doc["_id"] = nil
            a = .save(collection: try str("collection"), id: id, body: doc)
        case "delete":
            try onlyKeys(["collection", "id"])
            a = .delete(collection: try str("collection"), id: try str("id"))
        case "purge":
            try onlyKeys(["collection", "id"])
            a = .purge(collection: try str("collection"), id: try str("id"))
        case "createIndex":
            a = .createIndex(try IndexSpec.parse(body, context: ctx))
        default:
            try onlyKeys(["collection", "name"])
            a = .deleteIndex(collection: try str("collection"), name: try str("name"))
        }
        return Step(name: name ?? action, action: a, expectedError: expectedError)
    }

    /// Runs the step; nil if it behaved as expected, else a readable explanation.
    func run(_ db: Database) -> String? {
        switch action {
        case .query(let q): return runQuery(q, db)
        default:
            do {
                switch action {
                case .save(let c, let id, let body): try resolveCollection(c, db).save(id: id, properties: body)
                case .delete(let c, let id): try resolveCollection(c, db).delete(id: id)
                case .purge(let c, let id): try resolveCollection(c, db).purge(id: id)
                case .createIndex(let spec): try spec.create(in: db)
                case .deleteIndex(let c, let name): try resolveCollection(c, db).deleteIndex(forName: name)
                case .query: break
                }
            } catch {
                if let expectedError {
                    return Step.errorKinds(error).contains(expectedError) ? nil
                        : "expected a '\(expectedError)' error, got: \(error)"
                }
                return "failed: \(error)"
            }
            if let expectedError { return "expected a '\(expectedError)' error, but the step succeeded" }
            return nil
        }
    }

    /// The fixture error kinds an error answers to.
    static func errorKinds(_ error: any Error) -> [String] {
        if let q = error as? QueryError { return [q.kind.rawValue] }
        if let d = error as? DatabaseError {
            var kinds = [d.code.rawValue]
            if let q = d.underlying as? QueryError { kinds.append(q.kind.rawValue) }
            return kinds
        }
        return []
    }

    private func runQuery(_ q: QueryStep, _ db: Database) -> String? {
        let rows: [Result]
        let plan: ExplainPlan
        var hasOrderBy = false
        do {
            let query = try db.createQuery(q.sql)
            hasOrderBy = query.hasOrderBy
            var params = Parameters()
            for (k, v) in q.params { params = params.setValue(v, forName: k) }
            query.parameters = params
            plan = try query.explainPlan()
            rows = try query.execute().allResults()
        } catch {
            if let kind = q.error {
                let kinds = Step.errorKinds(error)
                guard kinds.contains(kind) else { return "expected a '\(kind)' error, got: \(error)" }
                if let sub = q.errorContains, !"\(error)".contains(sub) {
                    return "the error does not contain '\(sub)': \(error)"
                }
                return nil
            }
            return "query failed: \(error)"
        }
        if let kind = q.error {
            return "expected a '\(kind)' error, but the query returned \(rows.count) row(s)"
        }
        if let uses = q.uses {
            let used = Set(plan.indexesUsed)
            if uses.isEmpty && !used.isEmpty {
                return "expected a plan without indexes, got one using \(used.sorted().joined(separator: ", ")):\n\(indent(plan.text))"
            }
            let missing = uses.filter { !used.contains($0) }
            if !missing.isEmpty {
                return "expected the plan to use \(missing.joined(separator: ", ")); plan:\n\(indent(plan.text))"
            }
        }
        let actual = rows.map(\.object)
        if let n = q.expectCount, n != actual.count {
            return "expected \(n) row(s), got \(actual.count)"
        }
        if let expect = q.expect {
            let ordered = q.ordered ?? hasOrderBy
            return Step.compare(expected: expect, actual: actual, ordered: ordered)
        }
        return nil
    }

    static func compare(expected: [Value], actual: [Value], ordered: Bool) -> String? {
        if ordered {
            if expected.count == actual.count && zip(expected, actual).allSatisfy({ $0 == $1 }) { return nil }
            var msg = "rows differ (ordered): expected \(expected.count), got \(actual.count)"
            for i in 0..<max(expected.count, actual.count) {
                let e = i < expected.count ? expected[i].description : "(none)"
                let a = i < actual.count ? actual[i].description : "(none)"
                if e != a || (i < expected.count && i < actual.count && expected[i] != actual[i]) {
                    msg += "\n    row \(i + 1): expected \(e)\n           got      \(a)"
                }
                if msg.count > 2000 { msg += "\n    …"; break }
            }
            return msg
        }
        var remaining = actual
        var missing: [Value] = []
        for e in expected {
            if let i = remaining.firstIndex(where: { $0 == e }) { remaining.remove(at: i) } else { missing.append(e) }
        }
        if missing.isEmpty && remaining.isEmpty { return nil }
        var msg = "rows differ (unordered): expected \(expected.count), got \(actual.count)"
        for m in missing.prefix(10) { msg += "\n    missing    \(m)" }
        for u in remaining.prefix(10) { msg += "\n    unexpected \(u)" }
        return msg
    }
}

private func indent(_ s: String) -> String {
    s.split(separator: "\n").map { "      " + $0 }.joined(separator: "\n")
}

