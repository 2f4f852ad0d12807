import Testing
@testable import Tessera

@Suite("Full-text: postings layout")
struct FullTextPostingsCodecTests {
    @Test func positionsRoundTrip() throws {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<300 {
            var cols: [FullTextColumnPositions] = []
            var column = 0
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                column += Int.random(in: 0...300, using: &rng) + (cols.isEmpty ? 0 : 1)
                var p = UInt32(0)
                var ps: [UInt32] = []
                for _ in 0..<Int.random(in: 1...20, using: &rng) {
                    p += UInt32.random(in: (ps.isEmpty ? 0 : 1)...100_000, using: &rng)
                    ps.append(p)
                }
                cols.append(FullTextColumnPositions(column: column, positions: ps))
            }
            let bytes = FullTextPostingsCodec.encodePositions(cols)
            #expect(try FullTextPostingsCodec.decodePositions(bytes) == cols)
        }
    }

    @Test func encodingIsCompact() {
        // column 0, 3 positions 1, 5, 200 → deltas 1, 4, 195 (two bytes).
        #expect(FullTextPostingsCodec.encodePositions([FullTextColumnPositions(column: 0, positions: [1, 5, 200])])
                == [0, 3, 1, 4, 0xC3, 0x01])
    }

    @Test func tokenizerValuesUseTheCodecFormat() throws {
        let t = FullTextTokenizer(language: "en")
        var seen = 0
        try t.forEachIndexEntry(for: ["runs and running", "ran, running"]) { term, value in
            let decoded = try FullTextPostingsCodec.decodePositions(value)
            #expect(FullTextPostingsCodec.encodePositions(decoded) == Array(value))
            if String(decoding: term, as: UTF8.self) == "run" {
                #expect(decoded == [FullTextColumnPositions(column: 0, positions: [0, 1]),
                                    FullTextColumnPositions(column: 1, positions: [1])])
            }
            seen += 1
        }
        #expect(seen == 2)
    }

    @Test func corruptValuesThrow() {
        #expect(throws: FullTextIndexCorruption.self) { try FullTextPostingsCodec.decodePositions([0x80]) }
        #expect(throws: FullTextIndexCorruption.self) { try FullTextPostingsCodec.decodePositions([0]) }
        #expect(throws: FullTextIndexCorruption.self) { try FullTextPostingsCodec.decodePositions([0, 9, 1]) }
        #expect(throws: FullTextIndexCorruption.self) { try [UInt8]([0, 0x80]).withUnsafeBytes { try FullTextPostingsCodec.positionCount($0) } }
    }

    @Test func positionCountSumsColumns() throws {
        let cols = [FullTextColumnPositions(column: 0, positions: [1, 5, 200]), FullTextColumnPositions(column: 3, positions: [7])]
        #expect(try FullTextPostingsCodec.encodePositions(cols).withUnsafeBytes { try FullTextPostingsCodec.positionCount($0) } == 4)
        #expect(FullTextCorpusStatistics(documentCount: 100_000, totalTokens: 8_000_000).averageDocumentLength == 80)
        #expect(FullTextCorpusStatistics(documentCount: 0, totalTokens: 0).averageDocumentLength == 0)
    }

    @Test func blockKeysSortByTermThenDocument() throws {
        let keys = [("runner", 1), ("run", 300), ("ru", 9), ("run", 2), ("rum", 0), ("s", UInt32.max)]
            .map { FullTextPostingsCodec.blockKey(term: $0.0, firstDocument: UInt32($0.1)) }
            .sorted { $0.lexicographicallyPrecedes($1) }
        let decoded = keys.map { k in k.withUnsafeBytes { raw in
            FullTextPostingsCodec.splitBlockKey(raw).map { (String(decoding: $0.term, as: UTF8.self), $0.firstDocument) }! } }
        #expect(decoded.map(\.0) == ["ru", "rum", "run", "run", "runner", "s"])
        // Big-endian numbers: blocks of one term come in document order.
        #expect(decoded.map(\.1) == [9, 0, 2, 300, 1, UInt32.max])
        // Exact term range: keys starting with term ‖ 0x00; prefix range: keys starting with the prefix.
        let exact = FullTextPostingsCodec.termKeyPrefix("run")
        #expect(keys.filter { $0.starts(with: exact) }.count == 2)
        let prefix = FullTextPostingsCodec.prefixScanKey("run")
        #expect(keys.filter { $0.starts(with: prefix) }.count == 3)
        #expect([UInt8]([1, 2, 3]).withUnsafeBytes { FullTextPostingsCodec.splitBlockKey($0) } == nil)
        #expect([UInt8]([0x61, 1, 0, 0, 0, 1]).withUnsafeBytes { FullTextPostingsCodec.splitBlockKey($0) } == nil)
    }

    @Test func inMemoryReaderListsByDocumentNumber() throws {
        let t = FullTextTokenizer(language: "")
        let r = InMemoryPostingsReader()
        r.add(document: docKey("1"), columns: ["run runner run", "ru"], tokenizer: t)
        r.add(document: docKey("2"), columns: ["rum", "run"], tokenizer: t)
        #expect(r.postingsCount == 5)
        let exact = try r.postings(forTerm: "run", positions: true)
        #expect(exact.documents == [0, 1])
        #expect(exact.frequencies == [2, 1])
        #expect(exact.lengths == [4, 2])
        #expect(try exact.positions(at: 0) == [FullTextColumnPositions(column: 0, positions: [0, 2])])
        #expect(try exact.positions(at: 1) == [FullTextColumnPositions(column: 1, positions: [0])])
        #expect(try r.postings(forTerm: "run", positions: false).hasPositions == false)
        #expect(try r.postings(forPrefix: "run", positions: false).map(\.count) == [2, 1])
        #expect(try r.postings(forPrefix: "ru", positions: false).count == 4)
        #expect(try r.documentKey(forNumber: 1) == docKey("2"))
        #expect(try r.documentKey(forNumber: 7) == nil)
        // Re-adding keeps the number; removing frees nothing for reuse.
        r.add(document: docKey("1"), columns: ["walk"], tokenizer: t)
        #expect(try r.postings(forTerm: "walk", positions: false).documents == [0])
        r.remove(document: docKey("1"))
        #expect(try r.corpusStatistics() == FullTextCorpusStatistics(documentCount: 1, totalTokens: 2))
    }
}
