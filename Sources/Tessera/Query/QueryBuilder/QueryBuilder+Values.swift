// Conversions behind the QueryBuilder factories: property strings to paths, Swift values to
// literal ASTs, dates to ISO-8601 strings.

import Foundation

/// Splits a QueryBuilder property string into path components: `.` separates keys, `[n]`
/// indexes, `\` makes the next character literal.
func parsePropertyPath(_ path: String) -> [PathComponent] {
    var components: [PathComponent] = []
    var key = ""
    var pendingKey = false  // a key has started (possibly empty after a dot)
    var chars = Array(path)
    var i = 0
    func flush() {
        if pendingKey || !key.isEmpty { components.append(.key(key)) }
        key = ""
        pendingKey = false
    }
    while i < chars.count {
        let c = chars[i]
        if c == "\\", i + 1 < chars.count {
            key.append(chars[i + 1])
            pendingKey = true
            i += 2
        } else if c == "." {
            flush()
            pendingKey = true
            i += 1
        } else if c == "[", let close = chars[(i + 1)...].firstIndex(of: "]"),
                  let n = Int(String(chars[(i + 1)..<close])) {
            flush()
            components.append(.index(n))
            i = close + 1
        } else {
            key.append(c)
            pendingKey = true
            i += 1
        }
    }
    flush()
    chars.removeAll()
    return components
}

/// The AST of a Swift value given to `Expression.value` and friends.
func builderExpr(_ value: Any?) -> Expr {
    guard let value else { return .literal(.null) }
    switch value {
    case let e as ExpressionProtocol: return e.expr
    case let e as Expr: return e
    case let v as Value: return valueExpr(v)
    case let d as Date: return .literal(.string(iso8601(d)))
    case let b as Bool: return .literal(.bool(b))
    case let s as String: return .literal(.string(s))
    case let s as Substring: return .literal(.string(String(s)))
    case let i as Int: return .literal(.int(Int64(i)))
    case let i as Int64: return .literal(.int(i))
    case let i as Int32: return .literal(.int(Int64(i)))
    case let i as Int16: return .literal(.int(Int64(i)))
    case let i as Int8: return .literal(.int(Int64(i)))
    case let i as UInt: return .literal(i <= UInt(Int64.max) ? .int(Int64(i)) : .double(Double(i)))
    case let i as UInt64: return .literal(i <= UInt64(Int64.max) ? .int(Int64(i)) : .double(Double(i)))
    case let i as UInt32: return .literal(.int(Int64(i)))
    case let i as UInt16: return .literal(.int(Int64(i)))
    case let i as UInt8: return .literal(.int(Int64(i)))
    case let d as Double: return .literal(.double(d))
    case let f as Float: return .literal(.double(Double(f)))
    case is JSONNull: return .literal(.null)
    case let a as [Any?]: return .array(a.map(builderExpr))
    case let a as [Any]: return .array(a.map { builderExpr($0) })
    case let d as [String: Any?]:
        return .object(d.keys.sorted().map { ObjectMember(key: $0, value: builderExpr(d[$0]!)) })
    case let d as [String: Any]:
        return .object(d.keys.sorted().map { ObjectMember(key: $0, value: builderExpr(d[$0]!)) })
    default:
        preconditionFailure("Expression.value: unsupported type \(type(of: value))")
    }
}

/// A `Value` as the AST the parser builds for its literal: arrays and objects become
/// array/object literal nodes.
func valueExpr(_ v: Value) -> Expr {
    switch v {
    case .array(let a): return .array(a.map(valueExpr))
    case .object(let o): return .object(o.keys.sorted().map { ObjectMember(key: $0, value: valueExpr(o[$0]!)) })
    default: return .literal(v)
    }
}

/// `yyyy-MM-ddTHH:mm:ss.SSSZ` in UTC (Couchbase Lite's date format).
func iso8601(_ date: Date) -> String {
    let totalMillis = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    var days = totalMillis / 86_400_000
    var ms = totalMillis % 86_400_000
    if ms < 0 { ms += 86_400_000; days -= 1 }
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let day = doy - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
    func pad(_ n: Int64, _ width: Int) -> String {
        let s = String(n)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }
    return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(ms / 3_600_000, 2)):\(pad(ms / 60_000 % 60, 2))"
        + ":\(pad(ms / 1000 % 60, 2)).\(pad(ms % 1000, 3))Z"
}
