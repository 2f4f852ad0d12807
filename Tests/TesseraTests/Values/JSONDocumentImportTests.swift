import Testing
@testable import Tessera

/// `BinaryEncoder.encodeJSONDocument(_:takingID:)`: JSON text to a binary body without its
/// ID member, in one pass (the path of `tessera import`).
@Suite("Values: JSON documents with their ID taken out")
struct JSONDocumentImportTests {
    func encode(_ json: String, id: String = "_id") throws -> ImportedDocument {
        var text = json
        return try text.withUTF8 { try BinaryEncoder.encodeJSONDocument(UnsafeRawBufferPointer($0), takingID: id) }
    }

    func body(_ d: ImportedDocument) -> Value? {
        d.body.withUnsafeBytes { BinaryValue.root($0)?.toValue() }
    }

    /// Random objects (seeded), some with an ID member: the body is the object without it.
    @Test func randomObjectsLoseOnlyTheirTopLevelID() throws {
        var gen = ValuesRandomGenerator(rng: ValuesTestRNG(seed: 19))
        for i in 0..<3000 {
            guard case .object(var object) = gen.value() else { continue }
            var expectedID = ImportedID.absent
            switch i % 4 {
            case 0: object["_id"] = .string("doc-\(i)"); expectedID = .string("doc-\(i)")
            case 1: object["_id"] = .int(Int64(i) - 1500); expectedID = .int(Int64(i) - 1500)
            case 2: object["nested"] = .object(["_id": "inner"]) // only the top level counts
            default: break
            }
            let json = JSONWriter.string(.object(object))
            let d = try encode(json)
            #expect(d.id == expectedID, "doc \(i)")
            #expect(d.nonObjectRoot == nil)
            // What the Value path (`JSONReader`, then removing the member) gives.
            guard case .object(var withoutID) = try JSONReader.parse(json) else { Issue.record("doc \(i)"); continue }
            withoutID["_id"] = nil
            let decoded = try #require(body(d), "doc \(i): no root")
            let same = valuesIdentical(decoded, .object(withoutID))
            #expect(same, "doc \(i) differs from the Value path")
            if !same { break }
            #expect(d.body.withUnsafeBytes { BinaryValue.root($0)?.isValid } == true, "doc \(i)")
        }
    }

    @Test func idTypesRootsAndDuplicates() throws {
        #expect(try encode(#"{"a": 1, "_id": "x", "b": [1, {"_id": 2}]}"#).id == .string("x"))
        #expect(try body(encode(#"{"a": 1, "_id": "x", "b": [1, {"_id": 2}]}"#)) == ["a": 1, "b": [1, ["_id": 2]]])
        #expect(try encode(#"{"_id": 7}"#).id == .int(7))
        #expect(try body(encode(#"{"_id": 7}"#)) == [:])
        #expect(try encode(#"{"_id": "first", "_id": "last"}"#).id == .string("last"))
        #expect(try encode(#"{"key": "k1", "_id": "stays"}"#, id: "key").id == .string("k1"))
        #expect(try body(encode(#"{"key": "k1", "_id": "stays"}"#, id: "key")) == ["_id": "stays"])
        for (json, type) in [(#"{"_id": 1.5}"#, "number"), (#"{"_id": null}"#, "null"), (#"{"_id": true}"#, "boolean"),
                             (#"{"_id": [1, [2]], "a": 1}"#, "array"), (#"{"_id": {"x": {}}, "a": 1}"#, "object")] {
            let d = try encode(json)
            #expect(d.id == .invalid(type), "\(json)")
            #expect(d.nonObjectRoot == nil)
        }
        // The rest of the document is intact after a skipped container.
        #expect(try body(encode(#"{"_id": {"x": [1, {"y": 2}]}, "a": [3]}"#)) == ["a": [3]])
        #expect(try encode("[1, 2]").nonObjectRoot == "array")
        #expect(try encode(#""text""#).nonObjectRoot == "string")
        #expect(try encode("12").nonObjectRoot == "number")
        #expect(throws: JSONError.self) { try encode(#"{"_id": "x",}"#) }
    }

    @Test func linesReaderNumbersLinesAndLocatesErrors() throws {
        let text = "{\"_id\": \"a\", \"v\": 1}\n\n  \n{\"_id\": 2}\r\n{\"v\": 3,}\n"
        var bytes = Array(text.utf8)
        try bytes.withUnsafeMutableBytes { raw in
            var lines = JSONLinesReader(UnsafeRawBufferPointer(raw))
            let first = try #require(try lines.nextDocument(takingID: "_id"))
            #expect(first.line == 1 && first.document.id == .string("a"))
            let second = try #require(try lines.nextDocument(takingID: "_id"))
            #expect(second.line == 4 && second.document.id == .int(2))
            do {
                _ = try lines.nextDocument(takingID: "_id")
                Issue.record("a broken line was accepted")
            } catch let e as JSONError {
                #expect(e.line == 5)
            }
            #expect(try lines.nextDocument(takingID: "_id") == nil)
        }
    }
}
