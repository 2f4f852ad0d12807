import Synchronization

/// A document read from a collection: an ID, a JSON object body and metadata. Immutable.
///
/// The body is decoded from the stored binary form on first access. A document may be
/// shared between threads and tasks: its fields live behind a lock (`state`).
///
/// ```swift
/// if let doc = try hotels.document(id: "hotel1") {
///     print(doc.string(forKey: "name") ?? "?", doc.revisionID ?? "")
/// }
/// ```
public class Document: @unchecked Sendable, CustomStringConvertible {
    // @unchecked Sendable (a class that is not final cannot be checked): `id` is immutable and
    // every other field is read and written only inside `state`'s Mutex.

    /// The document ID, unique in its collection.
    public let id: String

    /// The mutable fields: the body (stored bytes until first decoded) and the metadata.
    struct State {
        var storedBody: [UInt8]?
        var decodedBody: [String: Value]?
        var sequence: UInt64
        var revision: Revision
        var isDeleted: Bool

        /// The revision ID as text, formatted on first use (a point read does not pay for it).
        var revisionID: String? {
            mutating get {
                switch revision {
                case .none: return nil
                case .text(let s): return s
                case .stored(let generation, let digest):
                    let s = DocumentRecord.revisionID(generation: generation, digest: digest)
                    revision = .text(s)
                    return s
                }
            }
            set { revision = newValue.map(Revision.text) ?? .none }
        }

        /// The body, decoded from the stored bytes (once) if need be.
        mutating func body() -> [String: Value] {
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

    /// A revision as stored (generation and digest) or as text.
    enum Revision {
        case none
        case stored(generation: UInt32, digest: UInt64)
        case text(String)
    }

    let state: Mutex<State>

    init(id: String, body: [String: Value]?, storedBody: [UInt8]?, sequence: UInt64, revisionID: String?, deleted: Bool) {
        self.id = id
        state = Mutex(State(storedBody: storedBody, decodedBody: body, sequence: sequence,
                            revision: revisionID.map(Revision.text) ?? .none, isDeleted: deleted))
    }

    /// A document read from its stored record: the revision ID is formatted only if asked for.
    init(id: String, storedBody: [UInt8], header: DocumentRecord) {
        self.id = id
        state = Mutex(State(storedBody: storedBody, decodedBody: nil, sequence: header.sequence,
                            revision: .stored(generation: header.generation, digest: header.digest),
                            isDeleted: header.deleted))
    }

    /// The collection's sequence number at the last save (0 if never saved).
    public internal(set) var sequence: UInt64 {
        get { state.withLock { $0.sequence } }
        set { state.withLock { $0.sequence = newValue } }
    }
    /// The revision ID of the last save (nil if never saved). Changes on every save.
    public internal(set) var revisionID: String? {
        get { state.withLock { $0.revisionID } }
        set { state.withLock { $0.revisionID = newValue } }
    }
    /// True if the document is a tombstone (deleted).
    public internal(set) var isDeleted: Bool {
        get { state.withLock { $0.isDeleted } }
        set { state.withLock { $0.isDeleted = newValue } }
    }

    /// The body as a dictionary of values.
    public var properties: [String: Value] {
        state.withLock { $0.body() }
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
        let copy = state.withLock { s in (s.body(), s.sequence, s.revisionID, s.isDeleted) }
        let m = MutableDocument(id: id, properties: copy.0)
        m.state.withLock { s in
            s.sequence = copy.1
            s.revisionID = copy.2
            s.isDeleted = copy.3
        }
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
///
/// A subclass cannot take back `Document`'s `Sendable`, so a mutable document is made safe
/// to share instead: each read and each change is atomic (under the document's lock), but a
/// series of changes is not. Give each task its own `MutableDocument` for a multi-key edit.
public final class MutableDocument: Document, @unchecked Sendable {
    // @unchecked Sendable: restated from `Document`; every field is behind `state`'s Mutex.
    /// A new empty document; when `id` is nil an ID is generated: `-` and 22 characters,
    /// unique, and ordered by the time it was made.
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
            state.withLock { s in
                _ = s.body()
                if case .missing = newValue { s.decodedBody![key] = nil } else { s.decodedBody![key] = newValue }
            }
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
    public func setData(_ properties: [String: Value]) {
        state.withLock { s in
            s.decodedBody = properties
            s.storedBody = nil
        }
    }

    /// Replaces the whole body with JSON text (an object).
    public func setJSON(_ json: String) throws {
        let replacement = try MutableDocument(id: id, json: json)
        setData(replacement.properties)
    }

    /// A new document ID, after every one this process made before (`OrderedIDGenerator`).
    static func generateID() -> String {
        OrderedIDGenerator.shared.withLock { $0.next() }
    }
}
