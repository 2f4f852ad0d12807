import Testing
import Tessera

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
                #expect(decoded == [FullTextColumnPositions(column: 0, positions: [0, 2]),
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
        #expect(throws: FullTextIndexCorruption.self) { try FullTextPostingsCodec.decodeDocumentLength([]) }
    }

    @Test func statsRoundTrip() throws {
        for n in [0, 1, 127, 128, 1 << 20, Int(Int32.max)] {
            #expect(try FullTextPostingsCodec.decodeDocumentLength(FullTextPostingsCodec.encodeDocumentLength(n)) == n)
        }
        let s = FullTextCorpusStatistics(documentCount: 100_000, totalTokens: 8_000_000)
        #expect(try FullTextPostingsCodec.decodeCorpusStatistics(FullTextPostingsCodec.encodeCorpusStatistics(s)) == s)
        #expect(s.averageDocumentLength == 80)
        #expect(FullTextCorpusStatistics(documentCount: 0, totalTokens: 0).averageDocumentLength == 0)
    }

    @Test func keysSortByTermThenDocument() throws {
        let keys = [("runner", "a"), ("run", "b"), ("ru", "z"), ("run", "a"), ("rum", "q"), ("s", "")]
            .map { FullTextPostingsCodec.postingsKey(term: $0.0, docKey: docKey($0.1)) }
            .sorted { $0.lexicographicallyPrecedes($1) }
        let decoded = keys.map { FullTextPostingsCodec.splitPostingsKey($0)! }
        #expect(decoded.map(\.term) == ["ru", "rum", "run", "run", "runner", "s"])
        #expect(decoded.map { String(decoding: $0.docKey, as: UTF8.self) } == ["z", "q", "a", "b", "a", ""])
        // Exact term range: keys starting with term ‖ 0x00; prefix range: keys starting with the prefix.
        let exact = FullTextPostingsCodec.termKeyPrefix("run")
        #expect(keys.filter { $0.starts(with: exact) }.count == 2)
        let prefix = FullTextPostingsCodec.prefixScanKey("run")
        #expect(keys.filter { $0.starts(with: prefix) }.count == 3)
        #expect(FullTextPostingsCodec.splitPostingsKey([1, 2, 3]) == nil)
        // A document key may itself contain 0x00: only the first separator splits.
        let k = FullTextPostingsCodec.postingsKey(term: "t", docKey: [0, 7])
        #expect(FullTextPostingsCodec.splitPostingsKey(k)!.docKey == [0, 7])
    }

    @Test func inMemoryReaderScansLikeLMDB() throws {
        let t = FullTextTokenizer(language: "")
        let r = InMemoryPostingsReader()
        r.add(document: docKey("1"), columns: ["run runner", "ru"], tokenizer: t)
        r.add(document: docKey("2"), columns: ["rum", "run"], tokenizer: t)
        #expect(r.postingsCount == 5)
        let exact = try r.postings(forTerm: "run", column: nil)
        #expect(Set(exact.map { String(decoding: $0.doc, as: UTF8.self) + "/\($0.column)" }) == ["1/0", "2/1"])
        #expect(try r.postings(forTerm: "run", column: 1).count == 1)
        #expect(try r.postings(forPrefix: "run", column: nil).count == 3)
        #expect(try r.postings(forPrefix: "ru", column: 1).count == 2)
        #expect(try r.documentLength(docKey("1")) == 3)
        #expect(try r.documentLength(docKey("nope")) == 0)
    }
}
