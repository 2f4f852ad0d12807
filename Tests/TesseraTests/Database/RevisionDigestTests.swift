import Testing
@testable import Tessera

/// The revision digest (`DocumentRecord.digest`): deterministic, and changed by any change
/// of the body or the generation.
@Suite("Revision digest")
struct RevisionDigestTests {
    func digest(_ bytes: [UInt8], generation: UInt32 = 1) -> UInt64 {
        bytes.withUnsafeBytes { DocumentRecord.digest(generation: generation, body: $0) }
    }

    @Test func everyByteAndTheGenerationCount() {
        var rng = SplitMix64(seed: 19)
        var seen = Set<UInt64>()
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000] {
            for _ in 0..<20 {
                let body = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                let d = digest(body)
                #expect(d == digest(body), "not deterministic")
                #expect(seen.insert(d).inserted || length == 0, "two bodies share a digest")
                #expect(digest(body, generation: 2) != d)
                for i in 0..<length {
                    var changed = body
                    changed[i] ^= UInt8(1 << rng.int(8))
                    #expect(digest(changed) != d, "a change of byte \(i) of \(length) left the digest")
                }
                // A trailing zero byte is not the same body.
                #expect(digest(body + [0]) != d)
            }
        }
        // 100,000 random 24-byte bodies: no two share a digest.
        var many = Set<UInt64>()
        for _ in 0..<100_000 {
            let body = (0..<3).flatMap { _ in withUnsafeBytes(of: rng.next()) { Array($0) } }
            many.insert(digest(body))
        }
        #expect(many.count == 100_000)
    }
}

/// `PreparedBody` (bodies checked and hashed on `tessera import`'s parser thread): its digest
/// stands in for the write's own only for a document's first revision.
@Suite("Prepared bodies")
struct PreparedBodyTests {
    @Test func aPreparedBodyGivesTheRevisionsAnOrdinarySaveGives() throws {
        let plain = try Database.temporary()
        let prepared = try Database.temporary()
        defer { try? plain.close(); try? prepared.close() }
        let a = try plain.defaultCollection()
        let b = try prepared.defaultCollection()
        var rng = SplitMix64(seed: 7)
        for round in 0..<3 {
            for i in 0..<40 {
                let json = #"{"n": \#(rng.int(1000)), "round": \#(round), "s": "\#(String(repeating: "é", count: rng.int(30)))"}"#
                var text = json
                let body = try text.withUTF8 { try BinaryEncoder.encodeJSON(UnsafeRawBufferPointer($0)) }
                try a.save(id: "d\(i)", json: json)
                // Rounds 1 and 2 save generations 2 and 3: the prepared digest (generation 1)
                // must not be used for them.
                try b.save(id: "d\(i)", prepared: PreparedBody(id: "d\(i)", encodedBody: body))
                let ra = try #require(try a.record(id: "d\(i)"))
                let rb = try #require(try b.record(id: "d\(i)"))
                #expect(ra.revisionID == rb.revisionID, "round \(round), d\(i)")
                #expect(rb.revisionID.hasPrefix("\(round + 1)-"))
            }
        }
        // A deleted document saved again is a new generation too.
        try a.delete(id: "d0")
        try b.delete(id: "d0")
        var text = #"{"back": true}"#
        let body = try text.withUTF8 { try BinaryEncoder.encodeJSON(UnsafeRawBufferPointer($0)) }
        try a.save(id: "d0", json: #"{"back": true}"#)
        try b.save(id: "d0", prepared: PreparedBody(id: "d0", encodedBody: body))
        #expect(try a.record(id: "d0")?.revisionID == b.record(id: "d0")?.revisionID)
    }

    @Test func badBodiesAreRefusedBeforeTheWrite() throws {
        func body(_ json: String) throws -> [UInt8] {
            var text = json
            return try text.withUTF8 { try BinaryEncoder.encodeJSON(UnsafeRawBufferPointer($0)) }
        }
        do {
            _ = try PreparedBody(id: "x", encodedBody: body(#"{"_rev": "1-a"}"#))
            Issue.record("a reserved key was accepted")
        } catch let e as DatabaseError {
            #expect(e.code == .reservedKey && e.message == "document 'x': top-level key '_rev' is reserved")
        }
        do {
            _ = try PreparedBody(id: nil, encodedBody: body("[1]"))
            Issue.record("an array body was accepted")
        } catch let e as DatabaseError {
            #expect(e.code == .notAnObject && e.message.hasPrefix("the document: the body must be a JSON object"))
        }
        #expect(throws: DatabaseError.self) { try PreparedBody(id: nil, encodedBody: [0xF1, 0xFF]) }
    }
}
