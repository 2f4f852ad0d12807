import Foundation
@testable import Tessera

// A small stand-in for the query engine, just enough to run the function and collation
// fixtures through the function registry before the real runner exists:
// `SELECT expr [AS a], … FROM coll [WHERE expr] [ORDER BY expr [ASC|DESC]]` with literals,
// property paths, function calls (aggregates included), `||`, comparisons, LIKE, IS
// [NOT] NULL/MISSING, AND/OR/NOT and COLLATE.

// MARK: - JSON

/// Reads JSON text into `Value`s (integers stay integers).
struct TestJSONReader {
    private let b: [UInt8]
    private var i = 0

    static func parse(_ text: String) throws -> Value {
        var r = TestJSONReader(b: Array(text.utf8))
        let v = try r.value()
        r.skip()
        guard r.i == r.b.count else { throw FixtureError("trailing JSON text") }
        return v
    }

    private init(b: [UInt8]) { self.b = b }

    private mutating func skip() { while i < b.count, [32, 9, 10, 13].contains(b[i]) { i += 1 } }

    private mutating func value() throws -> Value {
        skip()
        guard i < b.count else { throw FixtureError("unexpected end of JSON") }
        switch b[i] {
        case UInt8(ascii: "{"):
            i += 1
            var o: [String: Value] = [:]
            skip()
            if b[i] == UInt8(ascii: "}") { i += 1; return .object(o) }
            while true {
                skip()
                guard case .string(let k) = try value() else { throw FixtureError("object key") }
                skip()
                guard b[i] == UInt8(ascii: ":") else { throw FixtureError("expected :") }
                i += 1
                guard o[k] == nil else { throw FixtureError("duplicate key \(k)") }
                o[k] = try value()
                skip()
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                guard b[i] == UInt8(ascii: "}") else { throw FixtureError("expected }") }
                i += 1
                return .object(o)
            }
        case UInt8(ascii: "["):
            i += 1
            var a: [Value] = []
            skip()
            if b[i] == UInt8(ascii: "]") { i += 1; return .array(a) }
            while true {
                a.append(try value())
                skip()
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                guard b[i] == UInt8(ascii: "]") else { throw FixtureError("expected ]") }
                i += 1
                return .array(a)
            }
        case UInt8(ascii: "\""):
            i += 1
            var out: [UInt8] = []
            while b[i] != UInt8(ascii: "\"") {
                if b[i] == UInt8(ascii: "\\") {
                    i += 1
                    switch b[i] {
                    case UInt8(ascii: "n"): out.append(10)
                    case UInt8(ascii: "t"): out.append(9)
                    case UInt8(ascii: "r"): out.append(13)
                    case UInt8(ascii: "b"): out.append(8)
                    case UInt8(ascii: "f"): out.append(12)
                    case UInt8(ascii: "u"):
                        var code = UInt32(String(decoding: b[(i + 1)...(i + 4)], as: UTF8.self), radix: 16)!
                        i += 4
                        if (0xD800..<0xDC00).contains(code), b[i + 1] == UInt8(ascii: "\\"), b[i + 2] == UInt8(ascii: "u") {
                            let low = UInt32(String(decoding: b[(i + 3)...(i + 6)], as: UTF8.self), radix: 16)!
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                            i += 6
                        }
                        out.append(contentsOf: Array(String(Character(Unicode.Scalar(code)!)).utf8))
                    default: out.append(b[i])
                    }
                    i += 1
                } else {
                    out.append(b[i])
                    i += 1
                }
            }
            i += 1
            return .string(String(decoding: out, as: UTF8.self))
        case UInt8(ascii: "t"): i += 4; return .bool(true)
        case UInt8(ascii: "f"): i += 5; return .bool(false)
        case UInt8(ascii: "n"): i += 4; return .null
        default:
            let start = i
            while i < b.count, "+-0123456789.eE".utf8.contains(b[i]) { i += 1 }
            let text = String(decoding: b[start..<i], as: UTF8.self)
            if let n = Int64(text) { return .int(n) }
            guard let d = Double(text) else { throw FixtureError("bad number \(text)") }
            return .double(d)
        }
    }
}

struct FixtureError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

// MARK: - Expressions

indirect enum MiniExpr {
    case literal(Value)
    case path([PathComponent])
    case array([MiniExpr])
    case object([(String, MiniExpr)])
    case call(String, [MiniExpr], star: Bool)
    case binary(String, MiniExpr, MiniExpr)
    case not(MiniExpr)
    case negate(MiniExpr)
    case like(MiniExpr, MiniExpr, negated: Bool)
    case isTest(MiniExpr, String, negated: Bool)
    case collate(MiniExpr, Collation)

    var containsAggregate: Bool {
        switch self {
        case .call(let n, let a, _): return FunctionRegistry.isAggregate(n) || a.contains { $0.containsAggregate }
        case .array(let a): return a.contains { $0.containsAggregate }
        case .object(let m): return m.contains { $0.1.containsAggregate }
        case .binary(_, let x, let y), .like(let x, let y, _): return x.containsAggregate || y.containsAggregate
        case .not(let x), .negate(let x), .isTest(let x, _, _), .collate(let x, _): return x.containsAggregate
        case .literal, .path: return false
        }
    }
}

struct MiniStatement {
    var columns: [(MiniExpr, String)]
    var from: String
    var whereClause: MiniExpr?
    var orderBy: (MiniExpr, Bool)?
}

// MARK: - Lexer and parser

struct MiniParser {
    enum Token: Equatable {
        case word(String), quoted(String), string(String), number(Value), punct(String)
    }

    private var tokens: [Token] = []
    private var p = 0

    init(_ text: String) throws {
        let s = Array(text.unicodeScalars)
        var i = 0
        while i < s.count {
            let c = s[i]
            if c == " " || c == "\t" || c == "\n" || c == "\r" { i += 1; continue }
            if c == "'" || c == "\"" {
                var out = ""
                i += 1
                while true {
                    guard i < s.count else { throw FixtureError("unterminated string") }
                    if s[i] == c {
                        if i + 1 < s.count, s[i + 1] == c { out.unicodeScalars.append(c); i += 2; continue }
                        i += 1
                        break
                    }
                    out.unicodeScalars.append(s[i]); i += 1
                }
                tokens.append(.string(out))
                continue
            }
            if c == "`" {
                var out = ""
                i += 1
                while s[i] != "`" { out.unicodeScalars.append(s[i]); i += 1 }
                i += 1
                tokens.append(.quoted(out))
                continue
            }
            if c.properties.isAlphabetic || c == "_" {
                var out = ""
                while i < s.count, s[i].properties.isAlphabetic || s[i].properties.numericType != nil || s[i] == "_" || s[i] == "$" {
                    out.unicodeScalars.append(s[i]); i += 1
                }
                tokens.append(.word(out))
                continue
            }
            if ("0"..."9").contains(c) || (c == "." && i + 1 < s.count && ("0"..."9").contains(s[i + 1])) {
                var out = ""
                while i < s.count, ("0"..."9").contains(s[i]) || s[i] == "." || s[i] == "e" || s[i] == "E"
                    || ((s[i] == "+" || s[i] == "-") && (s[i - 1] == "e" || s[i - 1] == "E")) {
                    out.unicodeScalars.append(s[i]); i += 1
                }
                if let n = Int64(out) { tokens.append(.number(.int(n))) } else { tokens.append(.number(.double(Double(out)!))) }
                continue
            }
            let two = i + 1 < s.count ? String(String.UnicodeScalarView([c, s[i + 1]])) : ""
            if ["||", "<=", ">=", "!=", "<>", "=="].contains(two) { tokens.append(.punct(two)); i += 2; continue }
            tokens.append(.punct(String(c))); i += 1
        }
    }

    private func peekWord(_ w: String) -> Bool {
        if p < tokens.count, case .word(let x) = tokens[p], x.uppercased() == w { return true }
        return false
    }
    private mutating func word(_ w: String) -> Bool {
        guard peekWord(w) else { return false }
        p += 1
        return true
    }
    private mutating func punct(_ x: String) -> Bool {
        guard p < tokens.count, tokens[p] == .punct(x) else { return false }
        p += 1
        return true
    }
    private mutating func expectPunct(_ x: String) throws {
        guard punct(x) else { throw FixtureError("expected \(x) at token \(p)") }
    }
    private mutating func identifier() throws -> String {
        guard p < tokens.count else { throw FixtureError("expected identifier") }
        switch tokens[p] {
        case .word(let w), .quoted(let w): p += 1; return w
        default: throw FixtureError("expected identifier at token \(p)")
        }
    }

    mutating func statement() throws -> MiniStatement {
        guard word("SELECT") else { throw FixtureError("expected SELECT") }
        var cols: [(MiniExpr, String)] = []
        var unnamed = 0
        repeat {
            let e = try expression()
            var name: String
            if word("AS") {
                name = try identifier()
            } else if case .path(let comps) = e, case .key(let k)? = comps.last {
                name = k
            } else {
                unnamed += 1
                name = "$\(unnamed)"
            }
            cols.append((e, name))
        } while punct(",")
        guard word("FROM") else { throw FixtureError("expected FROM") }
        let from = try identifier()
        var st = MiniStatement(columns: cols, from: from)
        if word("WHERE") { st.whereClause = try expression() }
        if word("ORDER") {
            guard word("BY") else { throw FixtureError("expected BY") }
            let e = try expression()
            var desc = false
            if word("DESC") { desc = true } else { _ = word("ASC") }
            st.orderBy = (e, desc)
        }
        _ = punct(";")
        guard p == tokens.count else { throw FixtureError("unexpected text at token \(p): \(tokens[p])") }
        return st
    }

    mutating func expression() throws -> MiniExpr {
        var e = try orExpr()
        while word("COLLATE") {
            var kws: [CollationKeyword] = []
            if punct("(") {
                while !punct(")") { kws.append(try collationKeyword()) }
            } else {
                kws.append(try collationKeyword())
            }
            e = .collate(e, Collation(keywords: kws))
        }
        return e
    }

    private mutating func collationKeyword() throws -> CollationKeyword {
        let w = try identifier().uppercased()
        switch w {
        case "UNICODE":
            if punct(":") { return .unicode(locale: try identifier()) }
            return .unicode(locale: nil)
        case "NOUNICODE": return .noUnicode
        case "CASE": return .caseSensitive
        case "NOCASE": return .noCase
        case "DIAC": return .diac
        case "NODIAC": return .noDiac
        default: throw FixtureError("bad collation \(w)")
        }
    }

    private mutating func orExpr() throws -> MiniExpr {
        var e = try andExpr()
        while word("OR") { e = .binary("OR", e, try andExpr()) }
        return e
    }
    private mutating func andExpr() throws -> MiniExpr {
        var e = try notExpr()
        while word("AND") { e = .binary("AND", e, try notExpr()) }
        return e
    }
    private mutating func notExpr() throws -> MiniExpr {
        if word("NOT") { return .not(try notExpr()) }
        return try comparison()
    }
    private mutating func comparison() throws -> MiniExpr {
        let l = try relational()
        for op in ["=", "==", "!=", "<>"] where punct(op) {
            return .binary(op == "==" ? "=" : (op == "<>" ? "!=" : op), l, try relational())
        }
        if word("LIKE") { return .like(l, try relational(), negated: false) }
        if peekWord("NOT"), p + 1 < tokens.count, tokens[p + 1] == .word("LIKE") || tokens[p + 1] == .word("like") {
            p += 2
            return .like(l, try relational(), negated: true)
        }
        if word("IS") {
            let neg = word("NOT")
            let kind = try identifier().uppercased()
            return .isTest(l, kind, negated: neg)
        }
        return l
    }
    private mutating func relational() throws -> MiniExpr {
        let l = try concat()
        for op in ["<=", ">=", "<", ">"] where punct(op) { return .binary(op, l, try concat()) }
        return l
    }
    private mutating func concat() throws -> MiniExpr {
        var e = try unary()
        while punct("||") { e = .binary("||", e, try unary()) }
        return e
    }
    private mutating func unary() throws -> MiniExpr {
        if punct("-") { return .negate(try unary()) }
        return try primary()
    }
    private mutating func primary() throws -> MiniExpr {
        guard p < tokens.count else { throw FixtureError("unexpected end") }
        let t = tokens[p]
        switch t {
        case .number(let v): p += 1; return .literal(v)
        case .string(let s): p += 1; return .literal(.string(s))
        case .punct("("):
            p += 1
            let e = try expression()
            try expectPunct(")")
            return e
        case .punct("["):
            p += 1
            var items: [MiniExpr] = []
            if !punct("]") {
                repeat { items.append(try expression()) } while punct(",")
                try expectPunct("]")
            }
            return .array(items)
        case .punct("{"):
            p += 1
            var members: [(String, MiniExpr)] = []
            if !punct("}") {
                repeat {
                    guard case .string(let k) = tokens[p] else { throw FixtureError("object key") }
                    p += 1
                    try expectPunct(":")
                    members.append((k, try expression()))
                } while punct(",")
                try expectPunct("}")
            }
            return .object(members)
        case .word(let w):
            switch w.uppercased() {
            case "TRUE": p += 1; return .literal(true)
            case "FALSE": p += 1; return .literal(false)
            case "NULL": p += 1; return .literal(.null)
            case "MISSING": p += 1; return .literal(.missing)
            default: break
            }
            if p + 1 < tokens.count, tokens[p + 1] == .punct("(") {
                p += 2
                if punct("*") { try expectPunct(")"); return .call(w.uppercased(), [], star: true) }
                var args: [MiniExpr] = []
                if !punct(")") {
                    repeat { args.append(try expression()) } while punct(",")
                    try expectPunct(")")
                }
                return .call(w.uppercased(), args, star: false)
            }
            return .path(try path())
        case .quoted:
            return .path(try path())
        default:
            throw FixtureError("unexpected token \(t)")
        }
    }
    private mutating func path() throws -> [PathComponent] {
        var comps: [PathComponent] = [.key(try identifier())]
        while true {
            if punct(".") { comps.append(.key(try identifier())); continue }
            if punct("[") {
                var neg = false
                if punct("-") { neg = true }
                guard case .number(.int(let n)) = tokens[p] else { throw FixtureError("index") }
                p += 1
                try expectPunct("]")
                comps.append(.index(Int(neg ? -n : n)))
                continue
            }
            return comps
        }
    }
}

// MARK: - Evaluation

struct MiniEvaluator {
    /// Zone for dates: fixtures only use explicit offsets, so UTC makes results deterministic.
    var timeZone: QueryTimeZone = .utc

    func run(_ sql: String, collections: [String: [Value]]) throws -> [[String: Value]] {
        var parser = try MiniParser(sql)
        let st = try parser.statement()
        guard var docs = collections[st.from] else { throw FixtureError("no collection \(st.from)") }
        let ctx = FunctionContext(collation: .binary, timeZone: timeZone)
        if let w = st.whereClause {
            docs = docs.filter { Semantics.truth(eval(w, $0, ctx)).value == .bool(true) }
        }
        if let (key, desc) = st.orderBy {
            let keyed = docs.map { ($0, eval(key, $0, ctx)) }
            let coll = orderCollation(key)
            docs = keyed.sorted { a, b in
                let c = Value.compare(a.1, b.1, collation: coll)
                return desc ? c > 0 : c < 0
            }.map { $0.0 }
        }
        if st.columns.contains(where: { $0.0.containsAggregate }) {
            var row: [String: Value] = [:]
            for (e, name) in st.columns {
                let v = aggregate(e, docs, ctx)
                if !v.isMissing { row[name] = v }
            }
            return [row]
        }
        return docs.map { doc in
            var row: [String: Value] = [:]
            for (e, name) in st.columns {
                let v = eval(e, doc, ctx)
                if !v.isMissing { row[name] = v }
            }
            return row
        }
    }

    private func orderCollation(_ e: MiniExpr) -> Collation {
        if case .collate(_, let c) = e { return c }
        return .binary
    }

    /// Evaluates an expression whose aggregates run over `docs`.
    private func aggregate(_ e: MiniExpr, _ docs: [Value], _ ctx: FunctionContext) -> Value {
        switch e {
        case .call(let name, let args, let star) where FunctionRegistry.isAggregate(name):
            var s = AggregateState(function: name, countStar: star || args.isEmpty, collation: ctx.collation)
            for d in docs { s.add(args.isEmpty ? .null : eval(args[0], d, ctx)) }
            return s.result()
        case .call(let name, let args, _):
            let vals = args.map { aggregate($0, docs, ctx) }
            return FunctionRegistry.lookup(name)!.evaluate(vals, ctx)
        default:
            return eval(e, docs.first ?? [:], ctx)
        }
    }

    func eval(_ e: MiniExpr, _ doc: Value, _ ctx: FunctionContext) -> Value {
        switch e {
        case .literal(let v): return v
        case .path(let comps):
            var v = doc
            for c in comps {
                switch c {
                case .key(let k): v = v[k]
                case .index(let i): v = v[i]
                }
            }
            return v
        case .array(let items): return .array(items.map { eval($0, doc, ctx) }.filter { !$0.isMissing })
        case .object(let members):
            var o: [String: Value] = [:]
            for (k, x) in members {
                let v = eval(x, doc, ctx)
                if !v.isMissing { o[k] = v }
            }
            return .object(o)
        case .call(let name, let args, _):
            guard let f = FunctionRegistry.lookup(name) else { return .missing }
            return f.evaluate(args.map { eval($0, doc, ctx) }, ctx)
        case .collate(let x, let c):
            var inner = ctx
            inner.collation = c
            return eval(x, doc, inner)
        case .negate(let x):
            switch eval(x, doc, ctx) {
            case .int(let i): return .int(-i)
            case .double(let d): return .double(-d)
            case .missing: return .missing
            default: return .null
            }
        case .not(let x):
            let t = Semantics.truth(eval(x, doc, ctx)).value
            if case .bool(let b) = t { return .bool(!b) }
            return t
        case .like(let x, let pat, let negated):
            let r = likeMatch(eval(x, doc, ctx), pattern: eval(pat, doc, ctx), collation: ctx.collation)
            if negated, case .bool(let b) = r { return .bool(!b) }
            return r
        case .isTest(let x, let kind, let negated):
            let v = eval(x, doc, ctx)
            var r: Value
            switch kind {
            case "NULL": r = v.isMissing ? .missing : .bool(v.isNull)
            case "MISSING": r = .bool(v.isMissing)
            default: r = .bool(!v.isMissing && !v.isNull)
            }
            if negated, case .bool(let b) = r { r = .bool(!b) }
            return r
        case .binary(let op, let x, let y):
            let a = eval(x, doc, ctx), b = eval(y, doc, ctx)
            switch op {
            case "||": return concatenate(a, b)
            case "AND", "OR":
                let ta = Semantics.truth(a).value, tb = Semantics.truth(b).value
                if op == "AND" {
                    if ta == .bool(false) || tb == .bool(false) { return .bool(false) }
                    if ta.isMissing || tb.isMissing { return .missing }
                    return .bool(true)
                }
                if ta == .bool(true) || tb == .bool(true) { return .bool(true) }
                if ta.isMissing || tb.isMissing { return .missing }
                return .bool(false)
            default:
                if a.isMissing || b.isMissing { return .missing }
                if op == "=" { return .bool(Value.equal(a, b, collation: ctx.collation)) }
                if op == "!=" { return .bool(!Value.equal(a, b, collation: ctx.collation)) }
                if a.isNull || b.isNull { return .null }
                let c = Value.compare(a, b, collation: ctx.collation)
                switch op {
                case "<": return .bool(c < 0)
                case "<=": return .bool(c <= 0)
                case ">": return .bool(c > 0)
                default: return .bool(c >= 0)
                }
            }
        }
    }
}

// MARK: - Fixture files

/// One query step of a fixture.
struct FixtureCase: CustomStringConvertible {
    var file: String
    var name: String
    var query: String
    var expect: [Value]
    var ordered: Bool
    var description: String { "\(file): \(name)" }
}

enum FixtureFiles {
    /// The package root (three levels above this file's folder).
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    static func jsonFiles(in folder: String) -> [URL] {
        let dir = packageRoot.appendingPathComponent("Fixtures").appendingPathComponent(folder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().map { dir.appendingPathComponent($0) }
    }

    /// Loads a fixture: its collections (`_id` kept in the doc, harmless here) and its steps.
    static func load(_ url: URL) throws -> (collections: [String: [Value]], cases: [FixtureCase], raw: Value) {
        let text = try String(contentsOf: url, encoding: .utf8)
        let root = try TestJSONReader.parse(text)
        var collections: [String: [Value]] = [:]
        for c in root["collections"].arrayValue ?? [] {
            collections[c["name"].stringValue!] = c["docs"].arrayValue ?? []
        }
        var cases: [FixtureCase] = []
        for (i, s) in (root["steps"].arrayValue ?? []).enumerated() {
            guard let q = s["query"].stringValue, let exp = s["expect"].arrayValue else { continue }
            let ordered = s["ordered"].boolValue ?? q.uppercased().contains("ORDER BY")
            cases.append(FixtureCase(file: url.lastPathComponent, name: s["name"].stringValue ?? "step \(i)",
                                     query: q, expect: exp, ordered: ordered))
        }
        return (collections, cases, root)
    }
}
