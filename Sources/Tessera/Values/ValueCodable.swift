#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Codable support for the value model: `ValueEncoder` / `ValueDecoder` turn `Encodable` /
// `Decodable` Swift types into `Value`s and back directly (no JSON text in between), and
// `Value` itself is `Codable` so it works with `JSONEncoder` / `JSONDecoder` and friends.
//
// Conventions (as in Couchbase Lite): `Date` is an ISO-8601 string in UTC with milliseconds
// (`2024-05-01T12:30:00.000Z`), `Data` a base64 string, `URL` its absolute string.

// MARK: - ValueEncoder

/// Encodes `Encodable` values as `Value`s.
///
/// ```swift
/// struct Hotel: Codable { var name: String; var stars: Int; var phone: String? }
/// let v = try ValueEncoder().encode(Hotel(name: "Ritz", stars: 5, phone: nil))
/// // {"name": "Ritz", "stars": 5, "phone": null}
/// ```
///
/// Integers become `.int` (a `UInt64`/`UInt` above `Int64.max` is an error), `Float` and
/// `Double` become `.double`, `Date` an ISO-8601 string, `Data` base64, `URL` its absolute
/// string, `Decimal` a number, and a `Value` is stored as is (a `.missing` member or element is
/// dropped, since MISSING is never stored).
public struct ValueEncoder: Sendable {
    /// How `nil` optionals in keyed containers (the usual `var x: T?` properties) are written.
    public enum NilEncodingStrategy: Sendable, Hashable {
        /// The key is present with `null` (the default).
        case null
        /// The key is left out, as `JSONEncoder` does (`x IS MISSING` then holds in queries).
        case omit
    }

    /// How `nil` optionals in keyed containers are written; `.null` by default.
    public var nilEncodingStrategy: NilEncodingStrategy = .null
    /// Contextual information handed to the encoded types (`Encoder.userInfo`).
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// Creates an encoder with the default options.
    public init() {}

    /// Encodes `value` as a `Value`.
    /// - Parameter value: any `Encodable` value.
    /// - Returns: the value; a type that encodes nothing gives an empty object.
    /// - Throws: `EncodingError.invalidValue` (with the coding path) for an unsigned integer
    ///   above `Int64.max`, or any error thrown by the type's `encode(to:)`.
    public func encode<T: Encodable>(_ value: T) throws -> Value {
        let options = _ValueEncoderOptions(nilStrategy: nilEncodingStrategy, userInfo: userInfo)
        return try _ValueEncoder.box(value, codingPath: [], options: options).build()
    }
}

struct _ValueEncoderOptions {
    var nilStrategy: ValueEncoder.NilEncodingStrategy
    var userInfo: [CodingUserInfoKey: any Sendable]
}

/// A node of the value under construction; containers hold nodes by reference so nested and
/// super encoders can fill them in after they were inserted.
final class _EncodedNode {
    enum Storage {
        case empty
        case value(Value)
        case object([String: _EncodedNode])
        case array([_EncodedNode])
    }

    var storage: Storage

    init(_ storage: Storage = .empty) { self.storage = storage }

    func becomeObject() {
        if case .object = storage { return }
        storage = .object([:])
    }

    func becomeArray() {
        if case .array = storage { return }
        storage = .array([])
    }

    func set(_ key: String, _ child: _EncodedNode) {
        guard case .object(var o) = storage else { preconditionFailure("not a keyed container") }
        storage = .empty // keep `o` uniquely referenced
        o[key] = child
        storage = .object(o)
    }

    func remove(_ key: String) {
        guard case .object(var o) = storage else { return }
        storage = .empty
        o[key] = nil
        storage = .object(o)
    }

    func append(_ child: _EncodedNode) {
        guard case .array(var a) = storage else { preconditionFailure("not an unkeyed container") }
        storage = .empty
        a.append(child)
        storage = .array(a)
    }

    var count: Int {
        switch storage {
        case .array(let a): a.count
        case .object(let o): o.count
        default: 0
        }
    }

    /// The finished value; MISSING members and elements are dropped.
    func build() -> Value {
        switch storage {
        case .empty: return .object([:])
        case .value(let v): return v
        case .array(let a):
            var out: [Value] = []
            out.reserveCapacity(a.count)
            for n in a {
                let v = n.build()
                if !v.isMissing { out.append(v) }
            }
            return .array(out)
        case .object(let o):
            var out: [String: Value] = [:]
            out.reserveCapacity(o.count)
            for (k, n) in o {
                let v = n.build()
                if !v.isMissing { out[k] = v }
            }
            return .object(out)
        }
    }
}

final class _ValueEncoder: Encoder, SingleValueEncodingContainer {
    let node: _EncodedNode
    let codingPath: [any CodingKey]
    let options: _ValueEncoderOptions
    var userInfo: [CodingUserInfoKey: Any] { options.userInfo }

    init(node: _EncodedNode, codingPath: [any CodingKey], options: _ValueEncoderOptions) {
        self.node = node
        self.codingPath = codingPath
        self.options = options
    }

    /// Encodes one value into a new node, handling the types with a fixed representation.
    static func box<T: Encodable>(_ value: T, codingPath: [any CodingKey], options: _ValueEncoderOptions) throws -> _EncodedNode {
        if let v = value as? Value { return _EncodedNode(.value(v)) }
        if let d = value as? Date {
            guard let text = ISO8601Text.format(d) else {
                // The value is the raw interval: describing such a Date can trap in Foundation.
                throw EncodingError.invalidValue(d.timeIntervalSince1970, .init(
                    codingPath: codingPath, debugDescription: "Date out of range for ISO-8601 text"))
            }
            return _EncodedNode(.value(.string(text)))
        }
        if let d = value as? Data { return _EncodedNode(.value(.string(d.base64EncodedString()))) }
        if let u = value as? URL { return _EncodedNode(.value(.string(u.absoluteString))) }
        if let d = value as? Decimal { return _EncodedNode(.value(decimalValue(d))) }
        let encoder = _ValueEncoder(node: _EncodedNode(), codingPath: codingPath, options: options)
        try value.encode(to: encoder)
        return encoder.node
    }

    static func decimalValue(_ d: Decimal) -> Value {
        if d.isNaN { return .double(.nan) }
        let text = d.description
        if let i = Int64(text) { return .int(i) }
        return .double(Double(text) ?? .nan)
    }

    static func integer<I: BinaryInteger>(_ i: I, codingPath: [any CodingKey]) throws -> Value {
        guard let v = Int64(exactly: i) else {
            throw EncodingError.invalidValue(i, .init(
                codingPath: codingPath,
                debugDescription: "\(I.self) \(i) does not fit in a 64-bit signed integer"))
        }
        return .int(v)
    }

    // MARK: Encoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.becomeObject()
        return KeyedEncodingContainer(_KeyedEncoding<Key>(node: node, codingPath: codingPath, options: options))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.becomeArray()
        return _UnkeyedEncoding(node: node, codingPath: codingPath, options: options)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: SingleValueEncodingContainer

    func set(_ v: Value) { node.storage = .value(v) }

    func encodeNil() throws { set(.null) }
    func encode(_ value: Bool) throws { set(.bool(value)) }
    func encode(_ value: String) throws { set(.string(value)) }
    func encode(_ value: Double) throws { set(.double(value)) }
    func encode(_ value: Float) throws { set(.double(Double(value))) }
    func encode(_ value: Int) throws { set(.int(Int64(value))) }
    func encode(_ value: Int8) throws { set(.int(Int64(value))) }
    func encode(_ value: Int16) throws { set(.int(Int64(value))) }
    func encode(_ value: Int32) throws { set(.int(Int64(value))) }
    func encode(_ value: Int64) throws { set(.int(value)) }
    func encode(_ value: UInt) throws { set(try Self.integer(value, codingPath: codingPath)) }
    func encode(_ value: UInt8) throws { set(.int(Int64(value))) }
    func encode(_ value: UInt16) throws { set(.int(Int64(value))) }
    func encode(_ value: UInt32) throws { set(.int(Int64(value))) }
    func encode(_ value: UInt64) throws { set(try Self.integer(value, codingPath: codingPath)) }
    func encode<T: Encodable>(_ value: T) throws {
        node.storage = try Self.box(value, codingPath: codingPath, options: options).storage
    }
}

struct _KeyedEncoding<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: _EncodedNode
    let codingPath: [any CodingKey]
    let options: _ValueEncoderOptions

    private func put(_ v: Value, _ key: Key) { node.set(key.stringValue, _EncodedNode(.value(v))) }
    private func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

    mutating func encodeNil(forKey key: Key) throws { put(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { put(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { put(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { put(.double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { put(.double(Double(value)), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { put(.int(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws {
        put(try _ValueEncoder.integer(value, codingPath: path(key)), key)
    }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        put(try _ValueEncoder.integer(value, codingPath: path(key)), key)
    }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        node.set(key.stringValue, try _ValueEncoder.box(value, codingPath: path(key), options: options))
    }

    // `var x: T?` properties go through encodeIfPresent: nil follows the strategy.
    private mutating func absent(_ key: Key) {
        switch options.nilStrategy {
        case .null: put(.null, key)
        case .omit: break
        }
    }
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { absent(key) }
    }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { absent(key) }
    }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { absent(key) }
    }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { absent(key) }
    }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { absent(key) }
    }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { absent(key) }
    }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { absent(key) }
    }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { absent(key) }
    }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { absent(key) }
    }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { absent(key) }
    }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { absent(key) }
    }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { absent(key) }
    }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { absent(key) }
    }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { absent(key) }
    }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { absent(key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        let child = _EncodedNode(.object([:]))
        node.set(key.stringValue, child)
        return KeyedEncodingContainer(_KeyedEncoding<NestedKey>(node: child, codingPath: path(key), options: options))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = _EncodedNode(.array([]))
        node.set(key.stringValue, child)
        return _UnkeyedEncoding(node: child, codingPath: path(key), options: options)
    }

    mutating func superEncoder() -> any Encoder {
        let key = _ValueCodingKey.super
        let child = _EncodedNode()
        node.set(key.stringValue, child)
        return _ValueEncoder(node: child, codingPath: codingPath + [key], options: options)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let child = _EncodedNode()
        node.set(key.stringValue, child)
        return _ValueEncoder(node: child, codingPath: path(key), options: options)
    }
}

struct _UnkeyedEncoding: UnkeyedEncodingContainer {
    let node: _EncodedNode
    let codingPath: [any CodingKey]
    let options: _ValueEncoderOptions
    var count: Int { node.count }

    private func put(_ v: Value) { node.append(_EncodedNode(.value(v))) }
    private var nextPath: [any CodingKey] { codingPath + [_ValueCodingKey(index: count)] }

    mutating func encodeNil() throws { put(.null) }
    mutating func encode(_ value: Bool) throws { put(.bool(value)) }
    mutating func encode(_ value: String) throws { put(.string(value)) }
    mutating func encode(_ value: Double) throws { put(.double(value)) }
    mutating func encode(_ value: Float) throws { put(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { put(.int(value)) }
    mutating func encode(_ value: UInt) throws { put(try _ValueEncoder.integer(value, codingPath: nextPath)) }
    mutating func encode(_ value: UInt8) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { put(try _ValueEncoder.integer(value, codingPath: nextPath)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        node.append(try _ValueEncoder.box(value, codingPath: nextPath, options: options))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let path = nextPath
        let child = _EncodedNode(.object([:]))
        node.append(child)
        return KeyedEncodingContainer(_KeyedEncoding<NestedKey>(node: child, codingPath: path, options: options))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = nextPath
        let child = _EncodedNode(.array([]))
        node.append(child)
        return _UnkeyedEncoding(node: child, codingPath: path, options: options)
    }

    mutating func superEncoder() -> any Encoder {
        let path = nextPath
        let child = _EncodedNode()
        node.append(child)
        return _ValueEncoder(node: child, codingPath: path, options: options)
    }
}

// MARK: - ValueDecoder

/// Decodes `Decodable` values from `Value`s.
///
/// ```swift
/// let hotel = try ValueDecoder().decode(Hotel.self, from: ["name": "Ritz", "stars": 5])
/// // phone is nil: a missing key or `null` decodes as nil for an Optional
/// ```
///
/// Integers are range-checked (`300` into `Int8` is an error; `3.0` into `Int` gives 3, `3.5`
/// is an error), `Date` reads ISO-8601 strings (with or without fraction and offset, or a
/// bare date), `Data` base64, `URL` a string; a `Value` property receives the value as is
/// (`.missing` when its key is absent). Errors are `DecodingError`s whose `codingPath` names
/// the offending member, e.g. `rooms[2].price`.
public struct ValueDecoder: Sendable {
    /// Contextual information handed to the decoded types (`Decoder.userInfo`).
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// Creates a decoder.
    public init() {}

    /// Decodes a value of type `type` from `value`.
    /// - Parameters:
    ///   - type: the type to decode.
    ///   - value: the source value.
    /// - Returns: the decoded value.
    /// - Throws: `DecodingError` (`typeMismatch`, `keyNotFound`, `valueNotFound`,
    ///   `dataCorrupted`) with the coding path, or any error thrown by `init(from:)`.
    public func decode<T: Decodable>(_ type: T.Type, from value: Value) throws -> T {
        try _ValueDecoder(value: value, codingPath: [], userInfo: userInfo).unbox(type)
    }
}

/// Renders a coding path the way a SQL++ property path reads: `rooms[2].price`.
func _describeCodingPath(_ path: [any CodingKey]) -> String {
    var out = ""
    for key in path {
        if let i = key.intValue, key.stringValue == "Index \(i)" {
            out += "[\(i)]"
        } else {
            if !out.isEmpty { out += "." }
            out += key.stringValue
        }
    }
    return out.isEmpty ? "(top level)" : out
}

final class _ValueDecoder: Decoder, SingleValueDecodingContainer {
    let value: Value
    let codingPath: [any CodingKey]
    let options: [CodingUserInfoKey: any Sendable]
    var userInfo: [CodingUserInfoKey: Any] { options }

    init(value: Value, codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: any Sendable]) {
        self.value = value
        self.codingPath = codingPath
        self.options = userInfo
    }

    // MARK: Errors

    @inline(never)
    static func mismatch(_ type: Any.Type, _ value: Value, _ path: [any CodingKey]) -> DecodingError {
        if value.isNull || value.isMissing {
            return .valueNotFound(type, .init(
                codingPath: path,
                debugDescription: "Expected \(type) at \(_describeCodingPath(path)) but found \(value.isNull ? "null" : "no value")"))
        }
        return .typeMismatch(type, .init(
            codingPath: path,
            debugDescription: "Expected \(type) at \(_describeCodingPath(path)) but found a \(value.typeName): \(value)"))
    }

    @inline(never)
    static func corrupted(_ message: String, _ path: [any CodingKey]) -> DecodingError {
        .dataCorrupted(.init(codingPath: path, debugDescription: "\(message) at \(_describeCodingPath(path))"))
    }

    // MARK: Scalars

    static func bool(_ v: Value, _ path: [any CodingKey]) throws -> Bool {
        guard case .bool(let b) = v else { throw mismatch(Bool.self, v, path) }
        return b
    }

    static func string(_ v: Value, _ path: [any CodingKey]) throws -> String {
        guard case .string(let s) = v else { throw mismatch(String.self, v, path) }
        return s
    }

    static func double(_ v: Value, _ path: [any CodingKey]) throws -> Double {
        switch v {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: throw mismatch(Double.self, v, path)
        }
    }

    static func float(_ v: Value, _ path: [any CodingKey]) throws -> Float {
        let d = try double(v, path)
        let f = Float(d)
        if d.isFinite && !f.isFinite { throw corrupted("Number \(d) does not fit in Float", path) }
        return f
    }

    static func integer<I: FixedWidthInteger>(_ type: I.Type, _ v: Value, _ path: [any CodingKey]) throws -> I {
        switch v {
        case .int(let i):
            guard let r = I(exactly: i) else { throw corrupted("Number \(i) does not fit in \(I.self)", path) }
            return r
        case .double(let d):
            guard let r = I(exactly: d) else {
                throw corrupted("Number \(d) is not an integer that fits in \(I.self)", path)
            }
            return r
        default:
            throw mismatch(I.self, v, path)
        }
    }

    /// Decodes one value, handling the types with a fixed representation.
    static func unbox<T: Decodable>(_ type: T.Type, from v: Value, path: [any CodingKey],
                                    userInfo: [CodingUserInfoKey: any Sendable]) throws -> T
    {
        if type == Value.self { return v as! T }
        if type == Date.self {
            let s = try string(v, path)
            guard let d = ISO8601Text.parse(s) else { throw corrupted("\"\(s)\" is not an ISO-8601 date", path) }
            return d as! T
        }
        if type == Data.self {
            let s = try string(v, path)
            guard let d = Data(base64Encoded: s) else { throw corrupted("String is not valid base64", path) }
            return d as! T
        }
        if type == URL.self {
            let s = try string(v, path)
            guard let u = URL(string: s) else { throw corrupted("\"\(s)\" is not a valid URL", path) }
            return u as! T
        }
        if type == Decimal.self {
            switch v {
            case .int(let i): return Decimal(i) as! T
            case .double(let d): return Decimal(d) as! T
            default: throw mismatch(Decimal.self, v, path)
            }
        }
        return try T(from: _ValueDecoder(value: v, codingPath: path, userInfo: userInfo))
    }

    func unbox<T: Decodable>(_ type: T.Type) throws -> T {
        try Self.unbox(type, from: value, path: codingPath, userInfo: options)
    }

    // MARK: Decoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let o) = value else { throw Self.mismatch([String: Value].self, value, codingPath) }
        return KeyedDecodingContainer(_KeyedDecoding<Key>(object: o, codingPath: codingPath, userInfo: options))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let a) = value else { throw Self.mismatch([Value].self, value, codingPath) }
        return _UnkeyedDecoding(array: a, codingPath: codingPath, userInfo: options)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: SingleValueDecodingContainer

    func decodeNil() -> Bool { value.isNull || value.isMissing }
    func decode(_ type: Bool.Type) throws -> Bool { try Self.bool(value, codingPath) }
    func decode(_ type: String.Type) throws -> String { try Self.string(value, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try Self.double(value, codingPath) }
    func decode(_ type: Float.Type) throws -> Float { try Self.float(value, codingPath) }
    func decode(_ type: Int.Type) throws -> Int { try Self.integer(type, value, codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try Self.integer(type, value, codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try Self.integer(type, value, codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try Self.integer(type, value, codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try Self.integer(type, value, codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try Self.integer(type, value, codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try Self.integer(type, value, codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try Self.integer(type, value, codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try Self.integer(type, value, codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try Self.integer(type, value, codingPath) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unbox(type) }
}

struct _KeyedDecoding<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: [String: Value]
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: any Sendable]

    var allKeys: [Key] {
        object.compactMap { k, v in v.isMissing ? nil : Key(stringValue: k) }
    }

    func contains(_ key: Key) -> Bool {
        if let v = object[key.stringValue] { return !v.isMissing }
        return false
    }

    private func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

    /// The member for `key`, or `keyNotFound`.
    private func member(_ key: Key) throws -> Value {
        guard let v = object[key.stringValue], !v.isMissing else {
            throw DecodingError.keyNotFound(key, .init(
                codingPath: codingPath,
                debugDescription: "No value for key \"\(key.stringValue)\" at \(_describeCodingPath(path(key)))"))
        }
        return v
    }

    func decodeNil(forKey key: Key) throws -> Bool { try member(key).isNull }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try _ValueDecoder.bool(member(key), path(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try _ValueDecoder.string(member(key), path(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try _ValueDecoder.double(member(key), path(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try _ValueDecoder.float(member(key), path(key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try _ValueDecoder.integer(type, member(key), path(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try _ValueDecoder.integer(type, member(key), path(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try _ValueDecoder.integer(type, member(key), path(key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try _ValueDecoder.integer(type, member(key), path(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try _ValueDecoder.integer(type, member(key), path(key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try _ValueDecoder.integer(type, member(key), path(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try _ValueDecoder.integer(type, member(key), path(key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try _ValueDecoder.integer(type, member(key), path(key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try _ValueDecoder.integer(type, member(key), path(key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try _ValueDecoder.integer(type, member(key), path(key)) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        // A `Value` member receives MISSING for an absent key.
        if type == Value.self && !contains(key) { return Value.missing as! T }
        return try _ValueDecoder.unbox(type, from: member(key), path: path(key), userInfo: userInfo)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try _ValueDecoder(value: member(key), codingPath: path(key), userInfo: userInfo).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try _ValueDecoder(value: member(key), codingPath: path(key), userInfo: userInfo).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        let key = _ValueCodingKey.super
        return _ValueDecoder(value: object[key.stringValue] ?? .null, codingPath: codingPath + [key], userInfo: userInfo)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        _ValueDecoder(value: object[key.stringValue] ?? .null, codingPath: path(key), userInfo: userInfo)
    }
}

struct _UnkeyedDecoding: UnkeyedDecodingContainer {
    let array: [Value]
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: any Sendable]
    private(set) var currentIndex = 0

    init(array: [Value], codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: any Sendable]) {
        self.array = array
        self.codingPath = codingPath
        self.userInfo = userInfo
    }

    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex >= array.count }
    private var path: [any CodingKey] { codingPath + [_ValueCodingKey(index: currentIndex)] }

    /// The next element (without advancing), or `valueNotFound` at the end.
    private func peek(_ type: Any.Type) throws -> Value {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(
                codingPath: path,
                debugDescription: "Unkeyed container is at end (\(array.count) elements) at \(_describeCodingPath(codingPath))"))
        }
        return array[currentIndex]
    }

    private mutating func next<T>(_ type: T.Type, _ body: (Value, [any CodingKey]) throws -> T) throws -> T {
        let v = try peek(type)
        let r = try body(v, path)
        currentIndex += 1
        return r
    }

    mutating func decodeNil() throws -> Bool {
        let v = try peek(Value.self)
        if v.isNull || v.isMissing { currentIndex += 1; return true }
        return false
    }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type, _ValueDecoder.bool) }
    mutating func decode(_ type: String.Type) throws -> String { try next(type, _ValueDecoder.string) }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type, _ValueDecoder.double) }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type, _ValueDecoder.float) }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { try _ValueDecoder.integer(type, $0, $1) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { try _ValueDecoder.integer(type, $0, $1) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { try _ValueDecoder.integer(type, $0, $1) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { try _ValueDecoder.integer(type, $0, $1) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { try _ValueDecoder.integer(type, $0, $1) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { try _ValueDecoder.integer(type, $0, $1) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { try _ValueDecoder.integer(type, $0, $1) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { try _ValueDecoder.integer(type, $0, $1) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { try _ValueDecoder.integer(type, $0, $1) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { try _ValueDecoder.integer(type, $0, $1) } }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let info = userInfo
        return try next(type) { try _ValueDecoder.unbox(type, from: $0, path: $1, userInfo: info) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let info = userInfo
        return try next(KeyedDecodingContainer<NestedKey>.self) {
            try _ValueDecoder(value: $0, codingPath: $1, userInfo: info).container(keyedBy: type)
        }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let info = userInfo
        return try next((any UnkeyedDecodingContainer).self) {
            try _ValueDecoder(value: $0, codingPath: $1, userInfo: info).unkeyedContainer()
        }
    }

    mutating func superDecoder() throws -> any Decoder {
        let info = userInfo
        return try next((any Decoder).self) { _ValueDecoder(value: $0, codingPath: $1, userInfo: info) }
    }
}

/// Coding keys made up by the encoder and decoder: array positions and `super`.
struct _ValueCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = "\(intValue)"
        self.intValue = intValue
    }

    /// The key of an array element, named like Foundation's (`Index 3`).
    init(index: Int) {
        self.stringValue = "Index \(index)"
        self.intValue = index
    }

    static let `super` = _ValueCodingKey(stringValue: "super")
}

// MARK: - Value: Codable

extension Value: Codable {
    /// Encodes the value with any `Encoder` (for example `JSONEncoder`).
    ///
    /// Numbers keep their representation (`Int64` or `Double`); MISSING members and elements
    /// are left out, and a top-level MISSING encodes as `nil` (JSON `null`).
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .missing, .null:
            var c = encoder.singleValueContainer()
            try c.encodeNil()
        case .bool(let b):
            var c = encoder.singleValueContainer()
            try c.encode(b)
        case .int(let i):
            var c = encoder.singleValueContainer()
            try c.encode(i)
        case .double(let d):
            var c = encoder.singleValueContainer()
            try c.encode(d)
        case .string(let s):
            var c = encoder.singleValueContainer()
            try c.encode(s)
        case .array(let a):
            var c = encoder.unkeyedContainer()
            for e in a where !e.isMissing { try c.encode(e) }
        case .object(let o):
            var c = encoder.container(keyedBy: _ValueCodingKey.self)
            for (k, v) in o where !v.isMissing { try c.encode(v, forKey: _ValueCodingKey(stringValue: k)) }
        }
    }

    /// Decodes any JSON-like value with any `Decoder` (for example `JSONDecoder`).
    ///
    /// Integers that fit `Int64` become `.int`, other numbers `.double`. (`JSONEncoder` writes
    /// an integral `Double` such as `4.6e18` as plain digits, so a large integral double that
    /// went through it comes back as the integer its text names.)
    /// - Throws: `DecodingError.dataCorrupted` if the decoder offers none of the JSON shapes.
    public init(from decoder: any Decoder) throws {
        if let d = decoder as? _ValueDecoder { self = d.value; return }
        if let c = try? decoder.singleValueContainer() {
            if c.decodeNil() { self = .null; return }
            if let b = try? c.decode(Bool.self) { self = .bool(b); return }
            if let i = try? c.decode(Int64.self) { self = .int(i); return }
            if let d = try? c.decode(Double.self) { self = .double(d); return }
            if let s = try? c.decode(String.self) { self = .string(s); return }
        }
        if var c = try? decoder.unkeyedContainer() {
            var a: [Value] = []
            if let n = c.count { a.reserveCapacity(n) }
            while !c.isAtEnd { a.append(try c.decode(Value.self)) }
            self = .array(a)
            return
        }
        if let c = try? decoder.container(keyedBy: _ValueCodingKey.self) {
            var o: [String: Value] = [:]
            for k in c.allKeys { o[k.stringValue] = try c.decode(Value.self, forKey: k) }
            self = .object(o)
            return
        }
        throw DecodingError.dataCorrupted(.init(
            codingPath: decoder.codingPath, debugDescription: "Not a JSON value (null, boolean, number, string, array or object)"))
    }
}

// MARK: - ISO-8601 dates

/// ISO-8601 text for dates without `DateFormatter`: writes `yyyy-MM-ddTHH:mm:ss.SSSZ` in UTC;
/// reads what `ISO8601Fields` reads (a date, optionally followed by `T` or a space and a time
/// with optional seconds, fraction and zone `Z`, `±hh:mm`, `±hhmm`, `±hh`; none means UTC).
enum ISO8601Text {
    /// The text of `date`, or nil when it is not finite or absurdly far from 1970.
    static func format(_ date: Date) -> String? {
        let t = date.timeIntervalSince1970 * 1000
        guard t.isFinite, abs(t) < 3e16 else { return nil }  // about ±950,000 years
        let ms = Int64(t.rounded())
        var days = ms / 86_400_000
        var rem = ms % 86_400_000
        if rem < 0 { rem += 86_400_000; days -= 1 }
        let (y, m, d) = civilFromDays(days)
        let msOfSecond = Int(rem % 1000)
        let secs = Int(rem / 1000)
        var out = ""
        if y < 0 { out += "-" } else if y > 9999 { out += "+" }
        out += pad(Int(y.magnitude), 4) + "-" + pad(m, 2) + "-" + pad(d, 2)
        out += "T" + pad(secs / 3600, 2) + ":" + pad(secs / 60 % 60, 2) + ":" + pad(secs % 60, 2)
        out += "." + pad(msOfSecond, 3) + "Z"
        return out
    }

    private static func pad(_ n: Int, _ width: Int) -> String {
        let s = String(n)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    /// The instant of an ISO-8601 text (`ISO8601Fields`); no zone means UTC.
    static func parse(_ text: String) -> Date? {
        guard let f = ISO8601Fields.parse(text) else { return nil }
        var seconds = Double(daysFromCivil(f.year, f.month, f.day)) * 86_400
        seconds += Double(f.hour * 3600 + f.minute * 60 + f.second)
        seconds -= Double((f.offsetMinutes ?? 0) * 60)
        return Date(timeIntervalSince1970: seconds + Double(f.nanosecond) / 1_000_000_000)
    }
}
