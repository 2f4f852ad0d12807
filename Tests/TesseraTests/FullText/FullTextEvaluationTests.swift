import Testing
@testable import Tessera

@Suite("Full-text: evaluation and ranking")
struct FullTextEvaluationTests {
    let en = FullTextTokenizer(language: "en")
    let columns = ["title", "body"]
    let reader: InMemoryPostingsReader

    init() {
        let docs: [(String, String, String)] = [
            ("d1", "Couchbase Lite", "Couchbase is a NoSQL database for mobile applications"),
            ("d2", "SQLite", "SQLite is a small library: an embedded SQL database engine"),
            ("d3", "Linux", "Linux applications and the linux kernel"),
            ("d4", "Mobile sync", "Couchbase Lite runs on Linux, iOS and Android"),
            ("d5", "Databases", "The database of linux applications"),
            ("d6", "Running", "She runs every morning; running is her passion"),
            ("d7", "Physics", "Theory of happiness"),
        ]
        reader = InMemoryPostingsReader()
        for (id, title, body) in docs {
            reader.add(document: docKey(id), columns: [.string(title), .string(body)], tokenizer: en)
        }
    }

    func match(_ q: String, ranking: Bool = true) throws -> FullTextMatches<[UInt8]> {
        try CompiledFullTextQuery(q, tokenizer: en, columns: columns).evaluate(in: reader, ranking: ranking)
    }

    @Test(arguments: [
        ("couchbase database", ["d1"]),
        ("couchbase AND database", ["d1"]),
        ("couchbase OR sqlite", ["d1", "d2", "d4"]),
        ("linux", ["d3", "d4", "d5"]),
        ("Linux", ["d3", "d4", "d5"]),
        ("-linux", ["d3", "d4", "d5"]),
        ("linux NOT couchbase", ["d3", "d5"]),
        ("linux NOT couchbase OR sqlite", ["d2", "d3", "d5"]),
        ("linux NOT (couchbase OR kernel)", ["d5"]),
        ("\"linux applications\"", ["d3", "d5"]),
        ("\"applications linux\"", ["d3"]),   // "and the" take no position
        ("\"database linux\"", ["d5"]),       // nor does "of"
        ("\"database of linux\"", ["d5"]),
        ("(\"mobile applications\" OR \"small library\") AND database", ["d1", "d2"]),
        ("appl*", ["d1", "d3", "d5"]),
        ("APPL*", ["d1", "d3", "d5"]),
        ("\"linux appl*\"", ["d3", "d5"]),
        ("lin*", ["d3", "d4", "d5"]),
        ("li*", ["d1", "d2", "d3", "d4", "d5"]),
        ("the*", ["d7"]),
        ("happy*", ["d7"]),
        ("couchbase NEAR/3 linux", ["d4"]),
        ("couchbase NEAR/2 linux", ["d4"]),
        ("couchbase NEAR/1 linux", []),
        ("linux NEAR couchbase", ["d4"]),
        ("linux NEAR/0 kernel", ["d3"]),
        ("kernel NEAR/0 linux", ["d3"]),
        ("\"linux applications\" NEAR/3 kernel", ["d3"]),
        ("\"linux applications\" NEAR/1 kernel", ["d3"]),
        ("\"linux applications\" NEAR/0 kernel", []),
        ("couchbase NEAR/1 lite NEAR/3 linux", ["d4"]),
        ("couchbase NEAR/1 lite NEAR/1 linux", ["d4"]),
        ("couchbase NEAR/1 lite NEAR/0 linux", []),
        ("title:linux", ["d3"]),
        ("body:linux", ["d3", "d4", "d5"]),
        ("title: couchbase database", ["d1"]),
        ("title:(linux OR sqlite)", ["d2", "d3"]),
        ("title:couchbase NEAR lite", ["d1"]),
        ("title:lite", ["d1"]),
        ("running", ["d4", "d6"]),
        ("runs", ["d4", "d6"]),
        ("she", []),
        ("the of", []),
        ("nothing", []),
        ("linux OR nothing", ["d3", "d4", "d5"]),
    ])
    func matches(query: String, expected: [String]) throws {
        #expect(names(try match(query)) == expected)
    }

    @Test func ranksOrderByRelevance() throws {
        let m = try match("linux")
        // d3 has linux three times; d5 once in a short document; d4 once in a longer one.
        let r3 = try #require(m.rank(of: docKey("d3")))
        let r4 = try #require(m.rank(of: docKey("d4")))
        let r5 = try #require(m.rank(of: docKey("d5")))
        #expect(r3 > r5 && r5 > r4)
        #expect(m.ranks.values.allSatisfy { $0 > 0 })
    }

    @Test func rarerTermsWeighMore() throws {
        // "sqlite" (one document) outweighs "database" (three documents).
        let m = try match("sqlite OR database")
        let top = m.ranks.max { $0.value < $1.value }!.key
        #expect(top == docKey("d2"))
        #expect(names(m) == ["d1", "d2", "d5"])
    }

    @Test func excludedTermsDoNotScore() throws {
        let plain = try match("linux")
        let negated = try match("linux NOT couchbase")
        for d in ["d3", "d5"] {
            #expect(plain.rank(of: docKey(d)) == negated.rank(of: docKey(d)))
        }
    }

    @Test func withoutRankingEveryRankIsZero() throws {
        let m = try match("linux OR couchbase", ranking: false)
        #expect(names(m) == ["d1", "d3", "d4", "d5"])
        #expect(m.ranks.values.allSatisfy { $0 == 0 })
    }

    @Test func bm25MatchesTheFormula() throws {
        // One column, hand-computed BM25 for "cat" over three documents.
        let t = FullTextTokenizer(language: "")
        let r = InMemoryPostingsReader()
        r.add(document: docKey("a"), columns: ["cat cat dog"], tokenizer: t)
        r.add(document: docKey("b"), columns: ["cat"], tokenizer: t)
        r.add(document: docKey("c"), columns: ["dog dog dog dog dog"], tokenizer: t)
        let m = try CompiledFullTextQuery("cat", tokenizer: t, columns: ["x"]).evaluate(in: r)
        let n = 3.0, df = 2.0, avgdl = 9.0 / 3.0, k1 = 1.2, b = 0.75
        let idf = log(1 + (n - df + 0.5) / (df + 0.5))
        func bm25(_ f: Double, _ len: Double) -> Double { idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len / avgdl)) }
        #expect(abs(m.rank(of: docKey("a"))! - bm25(2, 3)) < 1e-12)
        #expect(abs(m.rank(of: docKey("b"))! - bm25(1, 1)) < 1e-12)
        #expect(m.rank(of: docKey("c")) == nil)
    }

    @Test func conjunctionsRankAsTheSumOfTheirWords() throws {
        // Random documents over a small vocabulary; every AND of 1–3 words (some repeated,
        // some phrases) must match what the unranked set algebra finds, ranked by the BM25 sum
        // computed here from the postings.
        let t = FullTextTokenizer(language: "")
        let r = InMemoryPostingsReader()
        var rng = SplitMix64(seed: 77)
        let words = ["ash", "elm", "fir", "oak", "yew", "box", "bay"]
        var totalTokens = 0
        for d in 0..<300 {
            let n = 1 + Int(rng.next() % 12)
            totalTokens += n
            let text = (0..<n).map { _ in words[Int(rng.next() % UInt64(min(words.count, 1 + Int(rng.next() % 7))))] }.joined(separator: " ")
            r.add(document: docKey("d\(d)"), columns: [.string(text)], tokenizer: t)
        }
        let avgdl = Double(totalTokens) / 300, k1 = 1.2, b = 0.75
        var numbers: [[UInt8]: UInt32] = [:]
        for n in 0..<UInt32(300) {
            let key = try #require(try r.documentKey(forNumber: n))
            numbers[key] = n
        }
        var lists: [String: PostingList] = [:]
        for w in words { lists[w] = try r.postings(forTerm: w, positions: false) }
        for _ in 0..<200 {
            let q = (0..<(1 + Int(rng.next() % 3))).map { _ in words[Int(rng.next() % UInt64(words.count))] }
            let compiled = try CompiledFullTextQuery(q.joined(separator: " "), tokenizer: t, columns: ["c"])
            let ranked = try compiled.evaluate(in: r, ranking: true)
            let unranked = try compiled.evaluate(in: r, ranking: false)
            #expect(Set(ranked.documents) == Set(unranked.documents), "\(q)")
            for (doc, rank) in ranked.ranks {
                // Like FTS5's bm25: each word of the query counts, a repeated word each time.
                var want = 0.0
                for w in q {
                    let list = try #require(lists[w])
                    let df = Double(list.count)
                    let idf = log(1 + (300 - df + 0.5) / (df + 0.5))
                    let number = try #require(numbers[doc])
                    let i = try #require(list.index(of: number))
                    let f = Double(list.frequencies[i]), len = Double(list.lengths[i])
                    want += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len / avgdl))
                }
                #expect(abs(rank - want) < 1e-9, "\(q) \(String(decoding: doc, as: UTF8.self))")
            }
        }
    }

    @Test func accentsApplyToQueries() throws {
        // No stemmer here: the French one conflates "café" and "cafe" by itself.
        let sensitive = FullTextTokenizer(language: "")
        let insensitive = FullTextTokenizer(language: "", ignoreAccents: true)
        for (t, cafe) in [(sensitive, ["d"]), (insensitive, ["d", "e"])] {
            let r = InMemoryPostingsReader()
            r.add(document: docKey("d"), columns: ["Un café crème"], tokenizer: t)
            r.add(document: docKey("e"), columns: ["Le cafe noir"], tokenizer: t)
            let q = { (s: String) in names(try CompiledFullTextQuery(s, tokenizer: t, columns: ["c"]).evaluate(in: r)) }
            #expect(try q("CAFÉ") == cafe)
            #expect(try q("cafe\u{301}") == cafe)
            #expect(try q("caf*") == ["d", "e"])
        }
    }

    @Test func stemmingAppliesToQueries() throws {
        let fr = FullTextTokenizer(language: "fr")
        let r = InMemoryPostingsReader()
        r.add(document: docKey("d"), columns: ["Les chevaux mangeaient de la crème"], tokenizer: fr)
        let q = { (s: String) in names(try CompiledFullTextQuery(s, tokenizer: fr, columns: ["c"]).evaluate(in: r)) }
        #expect(try q("cheval") == ["d"])
        #expect(try q("crèmes") == ["d"])
        #expect(try q("\"cheval manger\"") == ["d"])
        #expect(try q("les") == [])
    }

    @Test func removingAndReplacingDocuments() throws {
        let r = InMemoryPostingsReader()
        r.add(document: docKey("x"), columns: ["alpha beta"], tokenizer: en)
        r.add(document: docKey("y"), columns: ["alpha"], tokenizer: en)
        let q = try CompiledFullTextQuery("alpha", tokenizer: en, columns: ["c"])
        #expect(names(try q.evaluate(in: r)) == ["x", "y"])
        r.add(document: docKey("x"), columns: ["gamma"], tokenizer: en)
        #expect(names(try q.evaluate(in: r)) == ["y"])
        r.remove(document: docKey("y"))
        #expect(try q.evaluate(in: r).isEmpty)
        #expect(r.documentCount == 1)
        #expect(try r.corpusStatistics() == FullTextCorpusStatistics(documentCount: 1, totalTokens: 1))
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A two-word phrase counts its occurrences while reading the second word's positions
/// (`PhraseMatcher.countPair`): the same count as decoding both words and matching them.
@Suite("Full-text: two-word phrase counting")
struct PhrasePairCountTests {
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func countPairIsDecodeAndCount(seed: UInt64) throws {
        var r = SplitMix64(seed: seed)
        func positions() -> [UInt8] {
            // Columns ascending, some skipped; positions ascending within each.
            var column = -1
            let columns = (0..<(1 + r.int(3))).map { _ in
                column += 1 + r.int(2)
                return FullTextColumnPositions(column: column, positions: Array(Set((0..<r.int(12)).map { _ in UInt32(r.int(30)) })).sorted())
            }
            return FullTextPostingsCodec.encodePositions(columns)
        }
        for offset in [1, 2, 3] {
            for _ in 0..<300 {
                let a = positions(), b = r.int(8) == 0 ? a : positions()
                let pair = PhraseMatcher(offsets: [0, offset]), full = PhraseMatcher(offsets: [0, offset])
                let got = try a.withUnsafeBytes { pa in try b.withUnsafeBytes { pb in try pair.countPair(pa, pb) } }
                try a.withUnsafeBytes { try full.decode(part: 0, $0) }
                try b.withUnsafeBytes { try full.decode(part: 1, $0) }
                #expect(got == full.count(), "offset \(offset): \(a) / \(b)")
            }
        }
    }
}
