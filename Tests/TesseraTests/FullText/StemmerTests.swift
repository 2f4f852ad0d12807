import Testing
@testable import Tessera

@Suite("Full-text: stemmer and languages")
struct StemmerTests {
    /// Expected stems are libstemmer 2.2 (Snowball) outputs.
    @Test(arguments: [
        ("en", "running", "run"), ("en", "runs", "run"), ("en", "happiness", "happi"), ("en", "happy", "happi"),
        ("en", "connection", "connect"), ("en", "universities", "univers"),
        ("fr", "continuation", "continu"), ("fr", "continuer", "continu"), ("fr", "chevaux", "cheval"),
        ("fr", "nationalité", "national"), ("fr", "mangeaient", "mang"),
        ("de", "häuser", "haus"), ("de", "laufen", "lauf"), ("de", "katzen", "katz"),
        ("de", "aufeinanderfolgenden", "aufeinanderfolg"),
        ("es", "corriendo", "corr"), ("es", "gatos", "gat"), ("es", "nacionalidad", "nacional"),
        ("es", "bibliotecas", "bibliotec"),
        ("ru", "книги", "книг"), ("ru", "книгой", "книг"), ("ru", "бегать", "бега"),
        ("it", "gatti", "gatt"), ("it", "nazionalità", "nazional"),
        ("nl", "katten", "kat"), ("nl", "fietsen", "fiets"),
        ("sv", "katterna", "katt"), ("da", "katte", "kat"), ("no", "katter", "katt"),
        ("fi", "taloissa", "talo"), ("pt", "gatos", "gat"), ("hu", "házak", "ház"),
        ("ro", "pisicile", "pisic"), ("tr", "kitaplar", "kitap"), ("tr", "evlerden", "ev"),
        ("snowball:el", "γάτες", "γατ"),
    ])
    func knownStems(language: String, word: String, stem: String) throws {
        let stemmer = try #require(Stemmer(language: language))
        #expect(stemmer.stem(word) == stem)
    }

    @Test func fifteenLanguagesResolveByCodeAndName() {
        let table: [(String, String)] = [
            ("da", "danish"), ("nl", "dutch"), ("en", "english"), ("fi", "finnish"), ("fr", "french"),
            ("de", "german"), ("hu", "hungarian"), ("it", "italian"), ("no", "norwegian"),
            ("pt", "portuguese"), ("ro", "romanian"), ("ru", "russian"), ("es", "spanish"),
            ("sv", "swedish"), ("tr", "turkish"),
        ]
        for (code, name) in table {
            #expect(FullTextLanguage(code).stemmerAlgorithm == name, "\(code)")
            #expect(FullTextLanguage(name).stemmerAlgorithm == name, "\(name)")
            #expect(FullTextLanguage(name.uppercased()).stemmerAlgorithm == name, "\(name) upper-case")
            #expect(FullTextLanguage.availableAlgorithms.contains(name))
        }
    }

    @Test func otherCodesAndForms() {
        #expect(FullTextLanguage("eng").stemmerAlgorithm == "english")
        #expect(FullTextLanguage("fre").stemmerAlgorithm == "french")
        #expect(FullTextLanguage("fra").stemmerAlgorithm == "french")
        #expect(FullTextLanguage("ger").stemmerAlgorithm == "german")
        #expect(FullTextLanguage("deu").stemmerAlgorithm == "german")
        #expect(FullTextLanguage("en-US").stemmerAlgorithm == "english")
        #expect(FullTextLanguage("pt_BR").stemmerAlgorithm == "portuguese")
        #expect(FullTextLanguage(" Spanish ").stemmerAlgorithm == "spanish")
        #expect(FullTextLanguage("nb").stemmerAlgorithm == "norwegian")
        // Languages outside SPEC §10.1's fifteen: no stemming unless asked for as snowball:<name>.
        #expect(FullTextLanguage("el").stemmerAlgorithm == nil)
        #expect(FullTextLanguage("snowball:el").stemmerAlgorithm == "greek")
        #expect(FullTextLanguage("snowball:catalan").stemmerAlgorithm == "catalan")
        #expect(FullTextLanguage("snowball:porter").stemmerAlgorithm == "porter")
    }

    @Test func everyLibstemmerAlgorithmIsReachable() throws {
        let all = FullTextLanguage.availableAlgorithms
        #expect(all.count >= 15)
        for name in all {
            #expect(FullTextLanguage("snowball:" + name).stemmerAlgorithm == name)
            let s = try #require(Stemmer(algorithm: name), "\(name)")
            #expect(!s.stem("test").isEmpty)
        }
    }

    @Test func noLanguageMeansNoStemmingNoStopWords() {
        for name in ["", "klingon", "xx", "-"] {
            let l = FullTextLanguage(name)
            #expect(l.stemmerAlgorithm == nil, "\(name)")
            #expect(l.stopWords.isEmpty)
            #expect(Stemmer(language: name) == nil)
        }
        let t = FullTextTokenizer(language: "")
        #expect(t.terms(in: "The running dogs") == ["the", "running", "dogs"])
    }

    @Test func nilLanguageIsEnglish() {
        #expect(FullTextLanguage(nil).stemmerAlgorithm == "english")
        #expect(FullTextTokenizer(language: nil).terms(in: "the running dogs") == ["run", "dog"])
    }

    @Test func stopWordsOnlyForEnglishAndFrench() {
        #expect(FullTextStopWords.english.count == 124)
        #expect(FullTextStopWords.french.count == 164)
        #expect(FullTextLanguage("en").stopWords == FullTextStopWords.english)
        #expect(FullTextLanguage("french").stopWords == FullTextStopWords.french)
        for code in ["de", "es", "ru", "it", "nl", "sv", "tr", "el"] {
            #expect(FullTextLanguage(code).stopWords.isEmpty, "\(code)")
        }
        // German keeps "die", English drops "the", French drops "le".
        #expect(FullTextTokenizer(language: "de").terms(in: "die Häuser") == ["die", "haus"])
        #expect(FullTextTokenizer(language: "en").terms(in: "the houses") == ["hous"])
        #expect(FullTextTokenizer(language: "fr").terms(in: "le chat") == ["chat"])
    }

    @Test func tokenizerIsSafeToShareAcrossThreads() async {
        let t = FullTextTokenizer(language: "en")
        let text = "Running runners ran quickly through the universities of happiness"
        let expected = t.tokens(in: text)
        await withTaskGroup(of: Bool.self) { group in
            for i in 0..<16 {
                group.addTask {
                    var ok = true
                    for j in 0..<300 {
                        // Mix in distinct words so caches grow while other tasks read theirs.
                        _ = t.tokens(in: "word\(i)x\(j) running")
                        ok = ok && t.tokens(in: text) == expected
                    }
                    return ok
                }
            }
            for await ok in group { #expect(ok) }
        }
    }
}
