// JSON text straight to a binary document body with its ID member taken out (`tessera
// import`): one pass, no `Value` tree, no hashing of keys.

/// The ID member found at the top level of an imported JSON object.
package enum ImportedID: Sendable, Equatable {
    /// There is no member of that name.
    case absent
    /// A string ID.
    case string(String)
    /// An integer ID (used as its decimal text).
    case int(Int64)
    /// A value of another type (its type name: "number", "boolean", "null", "array", "object").
    case invalid(String)
}

/// One JSON object encoded as a binary body without its ID member.
package struct ImportedDocument {
    /// The binary document (header and root).
    package var body: [UInt8]
    /// The ID member's value.
    package var id: ImportedID
    /// The JSON type of the root when it is not an object (nil for an object).
    package var nonObjectRoot: String?
}

/// Feeds a `BinaryBuilder` every event of a JSON document except the root object's member
/// `idKey`, whose value it keeps (the last one if the key repeats, as JSON objects here do).
struct IDTakingSink: JSONSink {
    var inner: BinaryBuilder
    let idKey: [UInt8]
    var depth = 0
    /// The next value is the ID member's.
    var capturing = false
    /// Open containers inside an ID member's value (not forwarded).
    var skipping = 0
    var id = ImportedID.absent
    var rootType: String?

    init(idKey: String, capacity: Int) {
        inner = BinaryBuilder(capacity: capacity)
        self.idKey = Array(idKey.utf8)
    }

    /// Records the root's type (on the document's first event).
    @inline(__always)
    private mutating func root(_ type: String) {
        if depth == 0 && rootType == nil { rootType = type }
    }

    /// True when the value is the ID member's (kept, not forwarded).
    @inline(__always)
    private mutating func take(_ value: @autoclosure () -> ImportedID) -> Bool {
        if skipping > 0 { return true }
        guard capturing else { return false }
        capturing = false
        id = value()
        return true
    }

    mutating func null() { root("null"); if !take(.invalid("null")) { inner.null() } }
    mutating func bool(_ b: Bool) { root("boolean"); if !take(.invalid("boolean")) { inner.bool(b) } }
    mutating func int(_ i: Int64) { root("number"); if !take(.int(i)) { inner.int(i) } }
    mutating func double(_ d: Double, mantissa: Int64, exponent: Int) {
        root("number")
        if !take(.invalid("number")) { inner.double(d, mantissa: mantissa, exponent: exponent) }
    }
    mutating func string(_ utf8: UnsafeRawBufferPointer) {
        root("string")
        if !take(.string(String(decoding: utf8, as: UTF8.self))) { inner.string(utf8) }
    }

    mutating func beginArray() {
        root("array")
        if skipping > 0 || capturing { capturing = false; if skipping == 0 { id = .invalid("array") }; skipping += 1; return }
        inner.beginArray()
        depth += 1
    }

    mutating func endArray() {
        if skipping > 0 { skipping -= 1; return }
        inner.endArray()
        depth -= 1
    }

    mutating func beginObject() {
        root("object")
        if skipping > 0 || capturing { capturing = false; if skipping == 0 { id = .invalid("object") }; skipping += 1; return }
        inner.beginObject()
        depth += 1
    }

    mutating func key(_ utf8: UnsafeRawBufferPointer) {
        if skipping > 0 { return }
        // Keys at depth 1 are the root object's (an array root has no keys at that depth).
        if depth == 1 && utf8.elementsEqual(idKey) {
            capturing = true
            return
        }
        inner.key(utf8)
    }

    mutating func endObject() {
        if skipping > 0 { skipping -= 1; return }
        inner.endObject()
        depth -= 1
    }
}

extension BinaryEncoder {
    /// Encodes one JSON document into a binary body, taking the root object's member
    /// `idField` out of it. A root that is not an object is encoded as it is (see
    /// `nonObjectRoot`).
    ///
    /// - Throws: `JSONError` with the position of the first error.
    package static func encodeJSONDocument(_ json: UnsafeRawBufferPointer, takingID idField: String,
                                           maxDepth: Int = JSONReader.defaultMaxDepth) throws(JSONError) -> ImportedDocument {
        var scanner = JSONScanner(json, maxDepth: maxDepth, sink: IDTakingSink(idKey: idField, capacity: json.count + 16))
        scanner.sink.inner.buffer.append(BinaryFormat.header)
        do {
            try scanner.parseDocument()
        } catch {
            scanner.sink.inner.deallocate()
            var e = error
            e.locate(in: json)
            throw e
        }
        var body: [UInt8] = []
        scanner.sink.inner.buffer.copy(into: &body)
        scanner.sink.inner.deallocate()
        let type = scanner.sink.rootType
        return ImportedDocument(body: body, id: scanner.sink.id, nonObjectRoot: type == "object" ? nil : type)
    }
}

extension JSONLinesReader {
    /// The next line's document, encoded with `BinaryEncoder.encodeJSONDocument`, with its
    /// 1-based line number, or nil at the end of the text.
    ///
    /// - Throws: a `JSONError` whose line, column and offset refer to the whole input.
    package mutating func nextDocument(takingID idField: String) throws(JSONError) -> (line: Int, document: ImportedDocument)? {
        guard let (line, start, text) = nextLine() else { return nil }
        do {
            return (line, try BinaryEncoder.encodeJSONDocument(text, takingID: idField, maxDepth: maxDepth))
        } catch {
            var e = error
            e.offset += start
            e.line = line
            throw e
        }
    }
}
