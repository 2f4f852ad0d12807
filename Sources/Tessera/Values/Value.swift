#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A JSON value plus MISSING, the value model of documents and queries.
///
/// Integers stay integers (`Int64`) unless they do not fit; `int` and `double` compare
/// numerically (`1 == 1.0`). `missing` is "no value" (an absent property) and is never
/// stored; `null` is JSON `null`.
///
/// Equality (`==`) is SQL++ structural equality with the binary collation, except that
/// `missing == missing` is true so that `Value` can key groups and DISTINCT sets.
public enum Value: Sendable {
    /// No value: an absent property, an index out of range.
    case missing
    /// JSON `null`.
    case null
    /// A boolean (a distinct type: `true` does not equal `1`).
    case bool(Bool)
    /// An integer that fits in 64 bits.
    case int(Int64)
    /// A floating-point number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([Value])
    /// An object (keys are unique and case-sensitive).
    case object([String: Value])
}

extension Value {
    /// The SQL++ type name (`TYPE()`): missing, null, boolean, number, string, array, object.
    public var typeName: String {
        switch self {
        case .missing: "missing"
        case .null: "null"
        case .bool: "boolean"
        case .int, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// True for `.missing`.
    @inlinable public var isMissing: Bool { if case .missing = self { true } else { false } }
    /// True for `.null`.
    @inlinable public var isNull: Bool { if case .null = self { true } else { false } }
    /// True for `.int` and `.double`.
    @inlinable public var isNumber: Bool {
        switch self { case .int, .double: true; default: false }
    }

    /// The number as a Double, or nil for non-numbers.
    @inlinable public var doubleValue: Double? {
        switch self {
        case .int(let i): Double(i)
        case .double(let d): d
        default: nil
        }
    }

    /// The integer, or an integral double that fits, or nil.
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d):
            if d.rounded(.towardZero) == d, d >= -9.223372036854775808e18, d < 9.223372036854775808e18 { return Int64(d) }
            return nil
        default: return nil
        }
    }

    /// The string payload, or nil.
    @inlinable public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    /// The boolean payload, or nil.
    @inlinable public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    /// The array payload, or nil.
    @inlinable public var arrayValue: [Value]? { if case .array(let a) = self { a } else { nil } }
    /// The object payload, or nil.
    @inlinable public var objectValue: [String: Value]? { if case .object(let o) = self { o } else { nil } }

    /// A number from a Double, kept as `.int` when it is integral and fits.
    public static func number(_ d: Double) -> Value {
        if d.rounded(.towardZero) == d, d >= -9.223372036854775808e18, d < 9.223372036854775808e18, !(d == 0 && d.sign == .minus) {
            return .int(Int64(d))
        }
        return .double(d)
    }

    /// Member lookup (`.key`): MISSING unless self is an object holding `key`.
    @inlinable public subscript(key: String) -> Value {
        if case .object(let o) = self, let v = o[key] { return v }
        return .missing
    }

    /// Element lookup (`[i]`, negative counts from the end): MISSING if out of range or not an array.
    @inlinable public subscript(index: Int) -> Value {
        guard case .array(let a) = self else { return .missing }
        let i = index < 0 ? a.count + index : index
        return i >= 0 && i < a.count ? a[i] : .missing
    }

    /// Converts to plain Swift values for `toDictionary()`-style APIs: nil for MISSING,
    /// `NSNull`-free: `Optional<Any>.none` is not used for NULL; NULL becomes `Value.null`'s
    /// stand-in `JSONNull()`.
    public var anyValue: Any? {
        switch self {
        case .missing: return nil
        case .null: return JSONNull()
        case .bool(let b): return b
        case .int(let i): return Int(i)
        case .double(let d): return d
        case .string(let s): return s
        case .array(let a): return a.map { $0.anyValue ?? JSONNull() }
        case .object(let o):
            var d = [String: Any](minimumCapacity: o.count)
            for (k, v) in o { if let x = v.anyValue { d[k] = x } }
            return d
        }
    }

    /// Builds a value from plain Swift values (String, Int, Double, Bool, arrays, dictionaries,
    /// `JSONNull`, nil → NULL). Returns nil for unsupported types.
    public init?(any: Any?) {
        guard let any else { self = .null; return }
        switch any {
        case let v as Value: self = v
        case is JSONNull: self = .null
        case let b as Bool: self = .bool(b)
        case let i as Int: self = .int(Int64(i))
        case let i as Int64: self = .int(i)
        case let i as Int32: self = .int(Int64(i))
        case let i as UInt32: self = .int(Int64(i))
        case let i as UInt64: self = i <= UInt64(Int64.max) ? .int(Int64(i)) : .double(Double(i))
        case let d as Double: self = .double(d)
        case let f as Float: self = .double(Double(f))
        case let s as String: self = .string(s)
        case let s as Substring: self = .string(String(s))
        case let a as [Any?]:
            var out: [Value] = []
            out.reserveCapacity(a.count)
            for e in a { guard let v = Value(any: e) else { return nil }; out.append(v) }
            self = .array(out)
        case let a as [Any]:
            var out: [Value] = []
            out.reserveCapacity(a.count)
            for e in a { guard let v = Value(any: e) else { return nil }; out.append(v) }
            self = .array(out)
        case let d as [String: Any?]:
            var out: [String: Value] = [:]
            for (k, e) in d { guard let v = Value(any: e) else { return nil }; out[k] = v }
            self = .object(out)
        case let d as [String: Any]:
            var out: [String: Value] = [:]
            for (k, e) in d { guard let v = Value(any: e) else { return nil }; out[k] = v }
            self = .object(out)
        default: return nil
        }
    }
}

/// The stand-in for JSON `null` in `toDictionary()` / `toArray()` results.
public struct JSONNull: Sendable, Hashable, CustomStringConvertible {
    /// Creates the null marker.
    public init() {}
    /// `"null"`.
    public var description: String { "null" }
}

// MARK: - Literals

extension Value: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    /// A string literal.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer literal.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// A floating-point literal.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A boolean literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An array literal.
    public init(arrayLiteral elements: Value...) { self = .array(elements) }
    /// A dictionary literal.
    public init(dictionaryLiteral elements: (String, Value)...) {
        var o: [String: Value] = [:]
        for (k, v) in elements { o[k] = v }
        self = .object(o)
    }
    /// `nil` is JSON `null`.
    public init(nilLiteral: ()) { self = .null }
}

// MARK: - Equality and hashing

extension Value: Hashable {
    /// Structural equality: numbers by value, strings by code point, arrays element-wise,
    /// objects by keys and values; `missing == missing`.
    public static func == (a: Value, b: Value) -> Bool {
        switch (a, b) {
        case (.missing, .missing), (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.double(let x), .double(let y)): return x == y
        case (.int(let x), .double(let y)): return numericEqual(x, y)
        case (.double(let x), .int(let y)): return numericEqual(y, x)
        case (.string(let x), .string(let y)): return stringsEqualBinary(x, y)
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)): return x == y
        default: return false
        }
    }

    /// Hashes consistently with `==` (an integral double hashes as the integer).
    public func hash(into h: inout Hasher) {
        switch self {
        case .missing: h.combine(0 as UInt8)
        case .null: h.combine(1 as UInt8)
        case .bool(let b): h.combine(2 as UInt8); h.combine(b)
        case .int(let i): h.combine(3 as UInt8); h.combine(i)
        case .double(let d):
            h.combine(3 as UInt8)
            if let i = Value.double(d).intValue, Double(i) == d { h.combine(i) } else { h.combine(d) }
        case .string(let s): h.combine(4 as UInt8); s.utf8.forEach { h.combine($0) }
        case .array(let a): h.combine(5 as UInt8); h.combine(a.count); for e in a { e.hash(into: &h) }
        case .object(let o):
            h.combine(6 as UInt8); h.combine(o.count)
            // Order-independent combination of the members.
            var acc = 0
            for (k, v) in o {
                var sub = Hasher()
                k.utf8.forEach { sub.combine($0) }
                v.hash(into: &sub)
                acc = acc &+ sub.finalize()
            }
            h.combine(acc)
        }
    }
}

/// Exact comparison of an Int64 with a Double (no rounding of large integers).
@inlinable
func numericEqual(_ i: Int64, _ d: Double) -> Bool {
    guard d.isFinite, d.rounded(.towardZero) == d else { return false }
    guard d >= -9.223372036854775808e18, d < 9.223372036854775808e18 else { return false }
    return Int64(d) == i
}

/// Binary (code point) string equality. Swift's `==` on String uses canonical equivalence,
/// which SQL++'s binary collation does not: compare the UTF-8 bytes.
/// (`utf8.elementsEqual` walks the views a byte at a time, hundreds of instructions for a short
/// string; this compares lengths, then the contiguous bytes.)
@inlinable
func stringsEqualBinary(_ a: String, _ b: String) -> Bool {
    guard a.utf8.count == b.utf8.count else { return false }
    var a = a, b = b
    return a.withUTF8 { pa in
        b.withUTF8 { pb in
            pa.count == 0 || memcmp(pa.baseAddress!, pb.baseAddress!, pa.count) == 0
        }
    }
}

extension Value: CustomStringConvertible {
    /// The value as JSON text (`MISSING` for missing).
    public var description: String {
        if case .missing = self { return "MISSING" }
        return JSONWriter.string(self)
    }
}
