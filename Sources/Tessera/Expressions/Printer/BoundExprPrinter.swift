/// Prints bound expressions back as SQL++-like text (aliases restored) for EXPLAIN.
struct BoundExprPrinter {
    let sources: [SourceInfo]

    func path(_ comps: [PathComponent]) -> String {
        var out = ""
        for c in comps {
            switch c {
            case .key(let k): out += "." + k
            case .index(let i): out += "[\(i)]"
            }
        }
        return out
    }

    func print(_ e: BoundExpr) -> String {
        switch e {
        case .literal(let v): return v.isMissing ? "MISSING" : (v.stringValue.map { "'" + $0.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''") + "'" } ?? v.description)
        case .parameter(let n): return "$" + n
        case .sourcePath(let s, let p):
            let base = sources.count > 1 || p.isEmpty ? sources[s].alias : ""
            let text = base + path(p)
            return text.hasPrefix(".") ? String(text.dropFirst()) : text
        case .variablePath(let v, let p): return "v\(v)" + path(p)
        case .meta(let s, let k): return "meta(\(sources[s].alias))" + (k.map { "." + $0.rawValue } ?? "")
        case .member(let b, let p): return "(" + print(b) + ")" + path(p)
        case .array(let a): return "[" + a.map(print).joined(separator: ", ") + "]"
        case .object(let m): return "{" + m.map { "'\($0.key)': " + print($0.value) }.joined(separator: ", ") + "}"
        case .unary(let op, let a): return op == .not ? "NOT (" + print(a) + ")" : op.rawValue + print(a)
        case .binary(let op, let a, let b): return "(" + print(a) + " " + op.rawValue + " " + print(b) + ")"
        case .like(let a, let b, let n): return print(a) + (n ? " NOT LIKE " : " LIKE ") + print(b)
        case .between(let a, let b, let c, let n): return print(a) + (n ? " NOT BETWEEN " : " BETWEEN ") + print(b) + " AND " + print(c)
        case .inList(let a, let l, let n): return print(a) + (n ? " NOT IN (" : " IN (") + l.map(print).joined(separator: ", ") + ")"
        case .inArray(let a, let b, let n): return print(a) + (n ? " NOT IN " : " IN ") + print(b)
        case .test(let a, let k, let n): return print(a) + " IS " + (n ? "NOT " : "") + k.rawValue
        case .call(let name, let args): return name + "(" + args.map(print).joined(separator: ", ") + ")"
        case .aggregate(let i): return "aggregate#\(i)"
        case .caseWhen: return "CASE … END"
        case .quantified(let q, _, let a, _): return q.rawValue + " … IN " + print(a) + " SATISFIES … END"
        case .collate(let a, _): return print(a) + " COLLATE …"
        case .match(_, let idx, let q): return "MATCH(\(idx), " + print(q) + ")"
        case .rank(_, let idx): return "RANK(\(idx))"
        }
    }
}
