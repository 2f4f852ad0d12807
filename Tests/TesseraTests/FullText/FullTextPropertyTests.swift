import Foundation
import Testing
@testable import Tessera

/// Random documents and queries checked against an independent, straightforward
/// implementation of SPEC §10.1 (no caches, no byte-level fast paths, Foundation for Unicode).
@Suite("Full-text: seeded property tests")
struct FullTextPropertyTests {
    struct Config: CustomStringConvertible, Sendable {
        var language: String
        var ignoreAccents: Bool
        var vocabulary: [String]
        var description: String { "\(language.isEmpty ? "none" : language)\(ignoreAccents ? "+ignoreAccents" : "")" }
    }

    static let latin = [
        "Running", "runs", "RUNNER", "ran", "café", "Cafe", "CAFÉ", "naïve", "the", "The", "and", "of", "a",
        "database", "Databases", "happiness", "happy", "linux", "Linux", "kernel", "résumé", "resume", "Über",
        "Zürich", "3", "42", "x1", "don't", "e-mail", "Ørsted", "straw", "strawberries", "cat", "cats", "Äpfel",
        "niño", "le", "été", "côté", "école", "Häuser", "laufen", "crème", "chevaux", "ÉCOLE", "Été",
    ]
    static let cyrillic = ["книги", "Книгой", "КНИГА", "бегать", "бегущий", "и", "в", "Москва", "москве", "ёлка", "елка"]

    static let configs: [Config] = [
        Config(language: "en", ignoreAccents: false, vocabulary: latin),
        Config(language: "en", ignoreAccents: true, vocabulary: latin),
        Config(language: "fr", ignoreAccents: true, vocabulary: latin),
        Config(language: "fr", ignoreAccents: false, vocabulary: latin),
        Config(language: "", ignoreAccents: false, vocabulary: latin),
        Config(language: "de", ignoreAccents: true, vocabulary: latin),
        Config(language: "ru", ignoreAccents: false, vocabulary: cyrillic + ["linux", "Café"]),
    ]

    // MARK: - Reference pipeline

    struct Reference {
        let stemmer: Stemmer?
        let ignoreAccents: Bool
        let stopWords: Set<String>

        init(_ config: Config) {
            stemmer = Stemmer(language: config.language)
            ignoreAccents = config.ignoreAccents
            let lang = FullTextLanguage(config.language)
            var stops = Set<String>()
            let plain = (stemmer: nil as Stemmer?, ignoreAccents: config.ignoreAccents)
            for w in lang.stopWords { stops.insert(Reference.normalize(w, ignoreAccents: plain.ignoreAccents)) }
            stopWords = stops
        }

        static func isTokenScalar(_ s: Unicode.Scalar) -> Bool {
            switch s.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                .decimalNumber, .letterNumber, .otherNumber, .privateUse: true
            default: false
            }
        }

        static func isMark(_ s: Unicode.Scalar) -> Bool {
            switch s.properties.generalCategory {
            case .nonspacingMark, .spacingMark, .enclosingMark: true
            default: false
            }
        }

        static func normalize(_ word: String, ignoreAccents: Bool) -> String {
            let lower = word.lowercased()
            guard ignoreAccents else { return lower.precomposedStringWithCanonicalMapping }
            var kept = String.UnicodeScalarView()
            for s in lower.decomposedStringWithCanonicalMapping.unicodeScalars {
                let c = s.properties.generalCategory
                if c != .nonspacingMark && c != .enclosingMark { kept.append(s) }
            }
            return String(kept).precomposedStringWithCanonicalMapping
        }

        /// (term or nil for a stop word, position) for every token.
        func tokens(_ text: String) -> [(term: String?, position: Int)] {
            var words: [String] = []
            var current = String.UnicodeScalarView()
            for s in text.unicodeScalars {
                if Reference.isTokenScalar(s) || (Reference.isMark(s) && !current.isEmpty) {
                    current.append(s)
                } else if !current.isEmpty {
                    words.append(String(current))
                    current = String.UnicodeScalarView()
                }
            }
            if !current.isEmpty { words.append(String(current)) }
            return words.enumerated().map { i, w in
                let n = Reference.normalize(w, ignoreAccents: ignoreAccents)
                if stopWords.contains(n) { return (nil, i) }
                return (stemmer.map { $0.stem(n) } ?? n, i)
            }
        }
    }

    static func randomDocument(_ vocabulary: [String], _ rng: inout SplitMix64) -> String {
        let separators = [" ", ", ", "-", ". ", "'", "_", "  ", "\n", "/", " 😀 ", "; ", " (", ") "]
        var text = ""
        for i in 0..<Int.random(in: 1...25, using: &rng) {
            if i > 0 { text += separators.randomElement(using: &rng)! }
            var w = vocabulary.randomElement(using: &rng)!
            if Int.random(in: 0..<8, using: &rng) == 0 { w = w.decomposedStringWithCanonicalMapping }
            if Int.random(in: 0..<10, using: &rng) == 0 { w = w.uppercased() }
            text += w
        }
        return text
    }

    // MARK: - Properties

    @Test(arguments: configs)
    func singleTermQueriesFindExactlyTheDocumentsHoldingTheTerm(config: Config) throws {
        var rng = SplitMix64(seed: 0x5EED_F00D ^ UInt64(config.description.utf8.count))
        let tokenizer = FullTextTokenizer(language: config.language, ignoreAccents: config.ignoreAccents)
        let reference = Reference(config)
        let reader = InMemoryPostingsReader()
        var docTerms: [String: Set<String>] = [:]
        for d in 0..<150 {
            let text = Self.randomDocument(config.vocabulary, &rng)
            let id = "doc\(d)"
            reader.add(document: docKey(id), columns: [.string(text)], tokenizer: tokenizer)
            docTerms[id] = Set(reference.tokens(text).compactMap(\.term))
        }
        let singleTokenWords = config.vocabulary.filter { reference.tokens($0).count == 1 }
        var nonEmpty = 0
        for _ in 0..<120 {
            var word = singleTokenWords.randomElement(using: &rng)!
            if Bool.random(using: &rng), !["AND", "OR", "NOT", "NEAR"].contains(word.uppercased()) {
                word = word.uppercased()
            }
            let queryTerm = reference.tokens(word)[0].term
            let expected = queryTerm.map { t in docTerms.filter { $0.value.contains(t) }.map(\.key).sorted() } ?? []
            let compiled = try CompiledFullTextQuery(word, tokenizer: tokenizer, columns: ["text"])
            let got = names(try compiled.evaluate(in: reader))
            #expect(got == expected, "\(config): query \(word) → \(compiled.debugDescription)")
            if !expected.isEmpty { nonEmpty += 1 }
        }
        #expect(nonEmpty > 30, "the test should mostly ask for present terms")
    }

    @Test(arguments: configs)
    func phraseQueriesFindConsecutiveTerms(config: Config) throws {
        var rng = SplitMix64(seed: 0xFACE ^ UInt64(config.description.utf8.count))
        let tokenizer = FullTextTokenizer(language: config.language, ignoreAccents: config.ignoreAccents)
        let reference = Reference(config)
        let reader = InMemoryPostingsReader()
        var docTokens: [String: [(term: String?, position: Int)]] = [:]
        for d in 0..<120 {
            let text = Self.randomDocument(config.vocabulary, &rng)
            reader.add(document: docKey("doc\(d)"), columns: [.string(text)], tokenizer: tokenizer)
            docTokens["doc\(d)"] = reference.tokens(text)
        }
        let words = config.vocabulary.filter {
            let t = reference.tokens($0)
            return t.count == 1 && t[0].term != nil
        }
        for _ in 0..<80 {
            let a = words.randomElement(using: &rng)!
            let b = words.randomElement(using: &rng)!
            let ta = reference.tokens(a)[0].term!
            let tb = reference.tokens(b)[0].term!
            let expected = docTokens.filter { _, toks in
                // SPEC §10.1 step 6: stop words take no position, so the phrase is two
                // consecutive kept terms.
                let kept = toks.compactMap(\.term)
                return zip(kept, kept.dropFirst()).contains { $0 == ta && $1 == tb }
            }.map(\.key).sorted()
            let got = names(try CompiledFullTextQuery("\"\(a) \(b)\"", tokenizer: tokenizer, columns: ["text"]).evaluate(in: reader))
            #expect(got == expected, "\(config): \"\(a) \(b)\"")
        }
    }

    @Test func booleanOperatorsAreSetAlgebra() throws {
        var rng = SplitMix64(seed: 99)
        let config = Self.configs[0]
        let tokenizer = FullTextTokenizer(language: "en")
        let reader = InMemoryPostingsReader()
        for d in 0..<100 {
            reader.add(document: docKey("doc\(d)"), columns: [.string(Self.randomDocument(config.vocabulary, &rng))],
                       tokenizer: tokenizer)
        }
        let words = ["cat", "linux", "kernel", "happy", "database", "runs", "café", "straw"]
        func docs(_ q: String) throws -> Set<String> {
            Set(names(try CompiledFullTextQuery(q, tokenizer: tokenizer, columns: ["t"]).evaluate(in: reader)))
        }
        for _ in 0..<60 {
            let a = words.randomElement(using: &rng)!
            let b = words.randomElement(using: &rng)!
            let da = try docs(a)
            let db = try docs(b)
            #expect(try docs("\(a) \(b)") == da.intersection(db))
            #expect(try docs("\(a) AND \(b)") == da.intersection(db))
            #expect(try docs("\(a) OR \(b)") == da.union(db))
            #expect(try docs("\(a) NOT \(b)") == da.subtracting(db))
            #expect(try docs("\(a) NEAR/1000 \(b)").isSubset(of: da.intersection(db)))
        }
    }
}
