// TEMPORARY: stand-ins for the binary format and JSON reader until the values branch lands.
import Foundation

public struct JSONError: Error, CustomStringConvertible, Sendable {
    public var message: String; public var offset: Int; public var line: Int; public var column: Int
    public var description: String { "\(message) at line \(line), column \(column)" }
}
public enum JSONReader {
    public static func parse(_ bytes: [UInt8], maxDepth: Int = 512) throws(JSONError) -> Value {
        do {
            let o = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
            return conv(o)
        } catch { throw JSONError(message: "\(error)", offset: 0, line: 1, column: 1) }
    }
    public static func parse(_ s: String, maxDepth: Int = 512) throws(JSONError) -> Value { try parse(Array(s.utf8), maxDepth: maxDepth) }
    static func conv(_ o: Any) -> Value {
        switch o {
        case is NSNull: return .null
        case let n as NSNumber:
            if String(cString: n.objCType) == "c" { return .bool(n.boolValue) }
            if let i = Int64(exactly: n) , !String(describing: n).contains(".") { return .int(i) }
            return .double(n.doubleValue)
        case let s as String: return .string(s)
        case let a as [Any]: return .array(a.map(conv))
        case let d as [String: Any]: return .object(d.mapValues(conv))
        default: return .null
        }
    }
}
public enum BinaryEncoder {
    public static func encode(_ value: Value) -> [UInt8] { Array(JSONWriter.string(value).utf8) }
}
public struct BinaryValue {
    let v: Value
    public static func root(_ bytes: UnsafeRawBufferPointer) -> BinaryValue? {
        (try? JSONReader.parse(Array(bytes))).map { BinaryValue(v: $0) }
    }
    public func toValue() -> Value { v }
    public func value(at path: [PathComponent]) -> Value {
        var cur = v
        for c in path { switch c { case .key(let k): cur = cur[k]; case .index(let i): cur = cur[i] } }
        return cur
    }
}
public enum SQLParser {
    public static func parseStatement(_ text: String) throws(QueryError) -> SelectStatement { throw QueryError(.syntax, "parser not merged yet") }
    public static func parseExpression(_ text: String) throws(QueryError) -> Expr { throw QueryError(.syntax, "parser not merged yet") }
    public static func parseExpressionList(_ text: String) throws(QueryError) -> [Expr] { throw QueryError(.syntax, "parser not merged yet") }
}
