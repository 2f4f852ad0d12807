import Foundation
import Testing
@testable import Tessera

@Suite("Full-text: tokenizer")
struct TokenizerTests {
    let plain = FullTextTokenizer(language: "")

    func terms(_ text: String, _ t: FullTextTokenizer? = nil) -> [String] { (t ?? plain).terms(in: text) }

    @Test func separators() {
        #expect(terms("don't") == ["don", "t"])
        #expect(terms("3.2") == ["3", "2"])
        #expect(terms("foo_bar-baz/qux") == ["foo", "bar", "baz", "qux"])
        #expect(terms("a+b=c; (d) [e] {f} \"g\" #h @i") == ["a", "b", "c", "d", "e", "f", "g", "h", "i"])
        #expect(terms("I❤️NY 😀ok") == ["i", "ny", "ok"])
        #expect(terms("  \t\n ") == [])
        #expect(terms("") == [])
        #expect(terms("tab\tnew\nline\u{00A0}nbsp\u{3000}ideo") == ["tab", "new", "line", "nbsp", "ideo"])
    }

    @Test func positionsCountEveryToken() {
        let t = plain.tokens(in: "one, two... three")
        #expect(t == [FullTextToken(term: "one", position: 0), FullTextToken(term: "two", position: 1),
                      FullTextToken(term: "three", position: 2)])
    }

    /// SPEC §10.1 step 6: stop words are dropped before positions are assigned.
    @Test func stopWordsTakeNoPosition() {
        let en = FullTextTokenizer(language: "en")
        #expect(en.tokens(in: "The quick brown fox") == [
            FullTextToken(term: "quick", position: 0), FullTextToken(term: "brown", position: 1),
            FullTextToken(term: "fox", position: 2),
        ])
        #expect(en.tokens(in: "great view of the nights") == [
            FullTextToken(term: "great", position: 0), FullTextToken(term: "view", position: 1),
            FullTextToken(term: "night", position: 2),
        ])
        // Stop words match after case folding; contractions split into plain tokens.
        #expect(en.terms(in: "THEY wouldn't") == ["wouldn", "t"])
        #expect(en.terms(in: "cannot ought very") == [])
    }

    @Test func frenchStopWordsAndAccents() {
        let fr = FullTextTokenizer(language: "fr")
        #expect(fr.tokens(in: "Le chat est sur la table") == [
            FullTextToken(term: "chat", position: 0), FullTextToken(term: "tabl", position: 1),
        ])
        // "été" is a stop word; with accents significant "ete" is not.
        #expect(fr.terms(in: "été ete") == ["ete"])
        // With ignoreAccents the list is compared after stripping too: "Été" and "ete" both go.
        let frNoAccents = FullTextTokenizer(language: "fr", ignoreAccents: true)
        #expect(frNoAccents.terms(in: "Été ete à côté de l'école") == ["cot", "ecol"])
    }

    @Test func caseFoldingIsFullUnicode() {
        #expect(terms("HELLO World") == ["hello", "world"])
        #expect(terms("Straße STRASSE ẞ") == ["strasse", "strasse", "ss"])
        #expect(terms("ΣΊΣΥΦΟΣ σίσυφος") == ["σίσυφοσ", "σίσυφοσ"])
        #expect(terms("ПРИВЕТ привет") == ["привет", "привет"])
        #expect(terms("ＡＢＣ") == ["ａｂｃ"])
        #expect(terms("ﬁnd") == ["find"])
        #expect(terms("İ") == ["i\u{307}"])
        // Cherokee folds to its upper case; both cases meet.
        #expect(terms("ꭰ") == terms("Ꭰ"))
    }

    @Test func accentsSignificantByDefault() {
        #expect(terms("café") == ["café"])
        #expect(terms("café") != terms("cafe"))
        // Decomposed input is the same token as precomposed (NFC).
        #expect(terms("cafe\u{301}") == ["café"])
        #expect(terms("CAFÉ") == ["café"])
    }

    @Test func ignoreAccentsStripsDiacritics() {
        let t = FullTextTokenizer(language: "", ignoreAccents: true)
        #expect(t.terms(in: "café résumé Ångström naïve") == ["cafe", "resume", "angstrom", "naive"])
        #expect(t.terms(in: "cafe\u{301} RE\u{301}SUME\u{301}") == ["cafe", "resume"])
        #expect(t.terms(in: "ǖ Việt") == ["u", "viet"])
        // No decomposition → kept; Hangul stays composed.
        #expect(t.terms(in: "ø ł æ 한국어") == ["ø", "ł", "æ", "한국어"])
    }

    @Test func marksOnlyExtendTokens() {
        // A mark after a separator separates; after a letter it belongs to the token.
        #expect(terms(" \u{301}abc") == ["abc"])
        #expect(terms("a\u{301}\u{308}b") == terms("a\u{301}\u{308}b"))
        #expect(terms("a\u{301}b").count == 1)
        // Devanagari: vowel signs (Mc/Mn) stay in the word.
        #expect(terms("हिन्दी भाषा") == ["हिन्दी", "भाषा"])
    }

    @Test func numbersPrivateUseAndUnsegmentedScripts() {
        #expect(terms("٣٤ ½ Ⅻ") == ["٣٤", "½", "ⅻ"])
        #expect(terms("\u{E000}x") == ["\u{E000}x"])
        #expect(terms("東京タワー です") == ["東京タワー", "です"])
    }

    @Test func stemming() {
        let en = FullTextTokenizer(language: "en")
        #expect(en.terms(in: "Running RUNS runner's") == ["run", "run", "runner", "s"])
        let de = FullTextTokenizer(language: "german")
        #expect(de.terms(in: "Die Häuser laufen") == ["die", "haus", "lauf"])
        let ru = FullTextTokenizer(language: "ru")
        #expect(ru.terms(in: "Книги книгой") == ["книг", "книг"])
        let es = FullTextTokenizer(language: "es")
        #expect(es.terms(in: "Gatos corriendo") == ["gat", "corr"])
    }

    @Test func longTokensAreCut() {
        let long = String(repeating: "é", count: 400)
        let term = plain.terms(in: long)[0]
        #expect(term.utf8.count == FullTextSearch.maxTermLength)
        #expect(term == String(repeating: "é", count: FullTextSearch.maxTermLength / 2))
        #expect(plain.terms(in: String(repeating: "x", count: 100_000) + " y") == [String(repeating: "x", count: 200), "y"])
    }

    @Test func textOfValues() {
        #expect(FullTextTokenizer.text(of: "a b") == "a b")
        #expect(FullTextTokenizer.text(of: 42) == "42")
        #expect(FullTextTokenizer.text(of: -7) == "-7")
        #expect(FullTextTokenizer.text(of: 2.5) == "2.5")
        #expect(FullTextTokenizer.text(of: 3.0) == "3.0")   // SPEC §5.5: a Double prints with .0
        #expect(FullTextTokenizer.text(of: true) == "true")
        #expect(FullTextTokenizer.text(of: false) == "false")
        #expect(FullTextTokenizer.text(of: nil) == "")
        #expect(FullTextTokenizer.text(of: .missing) == "")
        let v: Value = [1, "x", nil, ["b": "second", "a": ["first", false]], [[2.5]]]
        #expect(FullTextTokenizer.text(of: v) == "1 x first false second 2.5")
    }

    @Test func tokensOfValuesContinuePositions() {
        let t = plain.tokens(in: ["alpha beta", 12, true, nil, ["k": "gamma"]] as Value)
        #expect(t.map(\.term) == ["alpha", "beta", "12", "true", "gamma"])
        #expect(t.map(\.position) == [0, 1, 2, 3, 4])
        #expect(plain.tokens(in: Value.null).isEmpty)
        #expect(plain.tokens(in: 3.25 as Value).map(\.term) == ["3", "25"])
    }

    @Test func indexEntriesGroupByTermAndColumn() {
        let en = FullTextTokenizer(language: "en")
        let doc = en.indexEntries(for: ["Running and running", .missing, "the runner runs"])
        #expect(doc.tokenCount == 4)  // "and", "the" are stop words
        #expect(doc.entries == [
            FullTextTermEntry(term: "run", columns: [
                FullTextColumnPositions(column: 0, positions: [0, 1]),
                FullTextColumnPositions(column: 2, positions: [1]),
            ]),
            FullTextTermEntry(term: "runner", columns: [FullTextColumnPositions(column: 2, positions: [0])]),
        ])
        #expect(en.indexEntries(for: []).entries.isEmpty)
        #expect(en.indexEntries(for: ["the of and"]).tokenCount == 0)
    }

    @Test func fastIndexPathAgreesWithTokens() {
        // forEachIndexEntry (cached fast path) must give the same terms and positions as
        // tokens(in:) for every column.
        let t = FullTextTokenizer(language: "fr", ignoreAccents: true)
        let cols: [Value] = ["Été à Paris, l'été dernier", "CAFÉ cafe\u{301} Café", "les étés"]
        let doc = t.indexEntries(for: cols)
        for (c, v) in cols.enumerated() {
            for tok in t.tokens(in: v) {
                let e = doc.entries.first { $0.term == tok.term }
                #expect(e?.columns.first { $0.column == c }?.positions.contains(UInt32(tok.position)) == true, "\(tok)")
            }
        }
        #expect(doc.tokenCount == cols.map { t.tokens(in: $0).count }.reduce(0, +))
    }

    @Test func cachedAndUncachedResultsAgree() {
        // The same words seen many times (cache hits) and once (misses) give the same terms.
        let t = FullTextTokenizer(language: "en", ignoreAccents: true)
        let text = "Naïve café runners RUNNING the Über straße"
        let first = t.terms(in: text)
        for _ in 0..<50 { #expect(t.terms(in: text) == first) }
        #expect(first == ["naiv", "cafe", "runner", "run", "uber", "strass"])
    }
}
