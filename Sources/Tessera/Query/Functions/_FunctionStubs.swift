// TEMPORARY: minimal function registry until the functions branch lands.
struct FunctionContext {
    var collation: Collation
}
struct FunctionDefinition: Sendable {
    let name: String
    let minArgs: Int
    let maxArgs: Int
    let isAggregate: Bool
    let sqlOnly: Bool
    let evaluate: @Sendable (_ args: [Value], _ ctx: FunctionContext) -> Value
}
enum FunctionRegistry {
    static let table: [String: FunctionDefinition] = {
        var t: [String: FunctionDefinition] = [:]
        for a in ["COUNT", "SUM", "AVG", "MIN", "MAX", "ARRAY_AGG"] {
            t[a] = FunctionDefinition(name: a, minArgs: a == "COUNT" ? 0 : 1, maxArgs: 1, isAggregate: true, sqlOnly: false) { _, _ in .null }
        }
        t["LOWER"] = FunctionDefinition(name: "LOWER", minArgs: 1, maxArgs: 1, isAggregate: false, sqlOnly: false) { a, _ in
            if case .string(let s) = a[0] { return .string(s.lowercased()) }
            return a[0].isMissing ? .missing : .null
        }
        t["CONCAT"] = FunctionDefinition(name: "CONCAT", minArgs: 2, maxArgs: 127, isAggregate: false, sqlOnly: false) { a, _ in
            var r = a[0]
            for x in a.dropFirst() { r = concatenate(r, x) }
            return r
        }
        return t
    }()
    static func lookup(_ name: String) -> FunctionDefinition? { table[name.uppercased()] }
}
struct AggregateState {
    let function: String
    var count = 0
    var sum: Double = 0
    var isum: Int64 = 0
    var allInt = true
    var best: Value = .missing
    var items: [Value] = []
    init(function: String, countStar: Bool) { self.function = function }
    mutating func add(_ v: Value) {
        switch function {
        case "COUNT": if !v.isMissing { count += 1 }
        case "SUM", "AVG":
            switch v { case .int(let i): isum &+= i; sum += Double(i); count += 1
            case .double(let d): allInt = false; sum += d; count += 1
            default: break }
        case "MIN", "MAX":
            if v.isMissing || v.isNull { return }
            if best.isMissing { best = v; return }
            let c = Value.compare(v, best)
            if (function == "MIN" && c < 0) || (function == "MAX" && c > 0) { best = v }
        case "ARRAY_AGG": if !v.isMissing { items.append(v) }
        default: break
        }
    }
    func result() -> Value {
        switch function {
        case "COUNT": return .int(Int64(count))
        case "SUM": return count == 0 ? .null : (allInt ? .int(isum) : .double(sum))
        case "AVG": return count == 0 ? .null : .number(sum / Double(count))
        case "MIN", "MAX": return best.isMissing ? .null : best
        case "ARRAY_AGG": return .array(items)
        default: return .null
        }
    }
}
func concatenate(_ a: Value, _ b: Value) -> Value {
    if a.isMissing || b.isMissing { return .missing }
    func text(_ v: Value) -> String { if case .string(let s) = v { return s }; return JSONWriter.string(v) }
    return .string(text(a) + text(b))
}
func likeMatch(_ s: String, pattern: String, collation: Collation) -> Bool {
    let str = Array(s.unicodeScalars), pat = Array(pattern.unicodeScalars)
    func m(_ i: Int, _ j: Int) -> Bool {
        if j == pat.count { return i == str.count }
        let p = pat[j]
        if p == "%" { var k = i; while k <= str.count { if m(k, j + 1) { return true }; k += 1 }; return false }
        if i == str.count { return false }
        if p == "_" { return m(i + 1, j + 1) }
        if p == "\\" && j + 1 < pat.count { return str[i] == pat[j + 1] && m(i + 1, j + 2) }
        return str[i] == p && m(i + 1, j + 1)
    }
    return m(0, 0)
}
