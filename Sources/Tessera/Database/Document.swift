/// A document read from a collection: an ID, a JSON object body and metadata. Immutable.
///
/// The body is decoded from the stored binary form on first access.
///
/// ```swift
/// if let doc = try hotels.document(id: "hotel1") {
///     print(doc.string(forKey: "name") ?? "?", doc.revisionID ?? "")
/// }
/// ```
public class Document: @unchecked Sendable, CustomStringConvertible {
    // @unchecked Sendable: an immutable `Document` only ever fills its lazily decoded body
    // once, under `lock`. `MutableDocument` is not meant to be shared between threads.

    /// The document ID, unique in its collection.
    public let id: String
    /// The collection's sequence number at the last save (0 if never saved).
    public internal(set) var sequence: UInt64
    /// The revision ID of the last save (nil if never saved). Changes on every save.
    public internal(set) var revisionID: String?
    /// True if the document is a tombstone (deleted).
    public internal(set) var isDeleted: Bool

    var storedBody: [UInt8]?
    var decodedBody: [String: Value]?
    private let lock = MutexLockBox()

    init(id: String, body: [String: Value]?, storedBody: [UInt8]?, sequence: UInt64, revisionID: String?, deleted: Bool) {
        self.id = id
        self.decodedBody = body
        self.storedBody = storedBody
        self.sequence = sequence
        self.revisionID = revisionID
        self.isDeleted = deleted
    }

    /// The body as a dictionary of values.
    public var properties: [String: Value] {
        if let b = decodedBody { return b }
        return lock.withLock {
            if let b = decodedBody { return b }
            var decoded: [String: Value] = [:]
            if let bytes = storedBody {
                decoded = bytes.withUnsafeBytes { BinaryValue.root($0)?.toValue().objectValue } ?? [:]
            }
            decodedBody = decoded
            storedBody = nil
            return decoded
        }
    }

    /// The body as a `Value.object`.
    public var body: Value { .object(properties) }

    /// The number of top-level properties.
    public var count: Int { properties.count }
    /// The top-level keys, sorted.
    public var keys: [String] { properties.keys.sorted() }
    /// True if the body has `key`.
    public func contains(key: String) -> Bool { properties[key] != nil }

    /// The value of `key` (`.missing` if absent).
    public subscript(key: String) -> Value { properties[key] ?? .missing }

    /// The value of `key`, nil if absent.
    public func value(forKey key: String) -> Value? { properties[key] }
    /// The string at `key`, or nil if absent or not a string.
    public func string(forKey key: String) -> String? { properties[key]?.stringValue }
    /// The integer at `key` (a double is truncated), or 0.
    public func int(forKey key: String) -> Int {
        switch properties[key] {
        case .int(let i)?: return Int(truncatingIfNeeded: i)
        case .double(let d)?: return d.isFinite ? Int(d) : 0
        case .bool(let b)?: return b ? 1 : 0
        default: return 0
        }
    }
    /// The 64-bit integer at `key`, or 0.
    public func int64(forKey key: String) -> Int64 { Int64(int(forKey: key)) }
    /// The number at `key` as a Double, or 0.
    public func double(forKey key: String) -> Double { properties[key]?.doubleValue ?? 0 }
    /// The boolean at `key`: false if absent; numbers are true when non-zero.
    public func bool(forKey key: String) -> Bool {
        switch properties[key] {
        case .bool(let b)?: return b
        case .int(let i)?: return i != 0
        case .double(let d)?: return d != 0
        default: return false
        }
    }
    /// The array at `key`, or nil.
    public func array(forKey key: String) -> [Value]? { properties[key]?.arrayValue }
    /// The object at `key`, or nil.
    public func dictionary(forKey key: String) -> [String: Value]? { properties[key]?.objectValue }

    /// The body as JSON text (keys sorted).
    public func toJSON() -> String { JSONWriter.string(body) }

    /// The body as plain Swift values (`String`, `Int`, `Double`, `Bool`, arrays, dictionaries, `JSONNull`).
    public func toDictionary() -> [String: Any] { (body.anyValue as? [String: Any]) ?? [:] }

    /// A mutable copy carrying the same ID and revision (for concurrency control).
    public func toMutable() -> MutableDocument {
        let m = MutableDocument(id: id, properties: properties)
        m.sequence = sequence
        m.revisionID = revisionID
        m.isDeleted = isDeleted
        return m
    }

    /// `Document(id, body)`.
    public var description: String { "Document(\(id), \(toJSON()))" }
}

/// A document whose body can be changed and saved with `Collection.save(document:)`.
///
/// ```swift
/// let doc = MutableDocument(id: "hotel1")
/// doc["name"] = "Lakeside Inn"
/// doc.setInt(120, forKey: "price")
/// try hotels.save(document: doc)
/// ```
public final class MutableDocument: Document, @unchecked Sendable {
    /// A new empty document; a random ID is generated when `id` is nil.
    public init(id: String? = nil) {
        super.init(id: id ?? MutableDocument.generateID(), body: [:], storedBody: nil, sequence: 0, revisionID: nil, deleted: false)
    }

    /// A new document with the given body.
    public init(id: String? = nil, properties: [String: Value]) {
        super.init(id: id ?? MutableDocument.generateID(), body: properties, storedBody: nil, sequence: 0, revisionID: nil, deleted: false)
    }

    /// A new document from plain Swift values (`String`, `Int`, `Double`, `Bool`, arrays,
    /// dictionaries, `JSONNull`/nil for null).
    ///
    /// - Throws: `.invalidValue` for a value with no JSON form.
    public convenience init(id: String? = nil, data: [String: Any]) throws {
        guard case .object(let o)? = Value(any: data) else {
            throw DatabaseError(.invalidValue, "document '\(id ?? "?")' holds a value with no JSON form")
        }
        self.init(id: id, properties: o)
    }

    /// A new document from JSON text, which must be an object.
    ///
    /// - Throws: `.invalidJSON` with line and column, or `.notAnObject`.
    public convenience init(id: String? = nil, json: String) throws {
        let value: Value
        do { value = try JSONReader.parse(Array(json.utf8)) } catch {
            throw DatabaseError(.invalidJSON, "document '\(id ?? "?")': \(error)", underlying: error)
        }
        guard case .object(let o) = value else {
            throw DatabaseError(.notAnObject, "document '\(id ?? "?")': the body must be a JSON object, not \(value.typeName)")
        }
        self.init(id: id, properties: o)
    }

    /// Reads or sets the value of `key`; setting `.missing` removes the key.
    public override subscript(key: String) -> Value {
        get { properties[key] ?? .missing }
        set {
            var p = properties
            if case .missing = newValue { p[key] = nil } else { p[key] = newValue }
            decodedBody = p
        }
    }

    /// Sets a value (`.missing` removes the key).
    public func setValue(_ value: Value, forKey key: String) { self[key] = value }
    /// Sets a string.
    public func setString(_ value: String?, forKey key: String) { self[key] = value.map(Value.string) ?? .null }
    /// Sets an integer.
    public func setInt(_ value: Int, forKey key: String) { self[key] = .int(Int64(value)) }
    /// Sets a 64-bit integer.
    public func setInt64(_ value: Int64, forKey key: String) { self[key] = .int(value) }
    /// Sets a double.
    public func setDouble(_ value: Double, forKey key: String) { self[key] = .double(value) }
    /// Sets a boolean.
    public func setBoolean(_ value: Bool, forKey key: String) { self[key] = .bool(value) }
    /// Sets an array.
    public func setArray(_ value: [Value], forKey key: String) { self[key] = .array(value) }
    /// Sets an object.
    public func setDictionary(_ value: [String: Value], forKey key: String) { self[key] = .object(value) }
    /// Removes `key`.
    public func removeValue(forKey key: String) { self[key] = .missing }
    /// Replaces the whole body.
    public func setData(_ properties: [String: Value]) { decodedBody = properties }

    /// Replaces the whole body with JSON text (an object).
    public func setJSON(_ json: String) throws {
        let replacement = try MutableDocument(id: id, json: json)
        decodedBody = replacement.properties
    }

    static func generateID() -> String {
        var g = SystemRandomNumberGenerator()
        let hex = Array("0123456789abcdef".utf8)
        var out = [UInt8](repeating: 0, count: 22)
        out[0] = UInt8(ascii: "-")
        for i in 1..<22 { out[i] = hex[Int(g.next() & 15)] }
        return String(decoding: out, as: UTF8.self)
    }
}

/// A tiny lock used by `Document`'s lazy decode.
final class MutexLockBox: @unchecked Sendable {
    // @unchecked Sendable: Synchronization's Mutex wrapped for use from a class stored property.
    private let m = Mutex<Void>(())
    func withLock<R>(_ body: () -> R) -> R { m.withLock { _ in body() } }
}

import Synchronization
