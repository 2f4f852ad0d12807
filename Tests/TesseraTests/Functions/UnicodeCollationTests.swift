import Testing
@testable import Tessera

/// COLLATE UNICODE (SPEC §5.7) over the system ICU: case/accent-insensitive equality and
/// ordering in English, French and German, and Turkish dotless i under `UNICODE:tr`.
@Suite("Unicode collation")
struct UnicodeCollationTests {
    static let unicode = Collation(unicode: true)
    static let noCase = Collation(unicode: true, ignoreCase: true)
    static let noDiac = Collation(unicode: true, ignoreAccents: true)
    static let noCaseNoDiac = Collation(unicode: true, ignoreCase: true, ignoreAccents: true)

    func cmp(_ a: String, _ b: String, _ c: Collation) -> Int { c.compare(a, b) }

    @Test func rootOrderIsAlphabeticNotCodePoint() {
        // Code point order puts every capital before every small letter; the UCA does not.
        #expect(compareBinary("B", "a") < 0)
        #expect(cmp("a", "B", Self.unicode) < 0)
        #expect(cmp("B", "a", Self.unicode) > 0)
        // Lower case sorts first at the tertiary level.
        #expect(cmp("a", "A", Self.unicode) < 0)
        #expect(cmp("côte", "cote", Self.unicode) > 0)
        #expect(cmp("résumé", "resume", Self.unicode) > 0)
        #expect(cmp("résumé", "resumes", Self.unicode) < 0)
    }

    @Test func caseAndAccentSensitivityLevels() {
        // Plain UNICODE: case and accents matter.
        #expect(cmp("Apple", "apple", Self.unicode) != 0)
        #expect(cmp("café", "cafe", Self.unicode) != 0)
        // NOCASE: case ignored, accents still matter.
        #expect(cmp("Apple", "apple", Self.noCase) == 0)
        #expect(cmp("CAFÉ", "café", Self.noCase) == 0)
        #expect(cmp("café", "cafe", Self.noCase) != 0)
        // NODIAC: accents ignored, case still matters.
        #expect(cmp("café", "cafe", Self.noDiac) == 0)
        #expect(cmp("Café", "cafe", Self.noDiac) != 0)
        // Both.
        #expect(cmp("CAFÉ", "cafe", Self.noCaseNoDiac) == 0)
        #expect(cmp("Ångström", "angstrom", Self.noCaseNoDiac) == 0)
    }

    @Test func canonicalEquivalentsAreEqual() {
        let precomposed = "\u{E9}", decomposed = "e\u{301}"
        #expect(!precomposed.utf8.elementsEqual(decomposed.utf8))
        #expect(cmp(precomposed, decomposed, Self.unicode) == 0)
    }

    @Test func french() {
        let fr = Collation(unicode: true, locale: "fr")
        let frNoDiac = Collation(unicode: true, ignoreCase: true, ignoreAccents: true, locale: "fr")
        #expect(cmp("élève", "eleve", frNoDiac) == 0)
        #expect(cmp("Élève", "élève", Collation(unicode: true, ignoreCase: true, locale: "fr")) == 0)
        #expect(cmp("éa", "eb", fr) < 0)
        // Canadian French sorts accents from the end of the word (backwards secondary level).
        let frCA = Collation(unicode: true, locale: "fr_CA")
        #expect(cmp("cote", "côte", frCA) < 0)
        #expect(cmp("côte", "coté", frCA) < 0)
        #expect(cmp("côte", "coté", Self.unicode) > 0)
    }

    @Test func german() {
        let de = Collation(unicode: true, locale: "de")
        #expect(cmp("Äpfel", "Apfel", de) > 0)
        #expect(cmp("Äpfel", "Birne", de) < 0) // Ä sorts with A, not after Z
        #expect(cmp("Müller", "Mueller", de) > 0)
        #expect(cmp("Müller", "Mzz", de) < 0)
        #expect(cmp("Strasse", "Straße", de) != 0)
        #expect(cmp("Öl", "ol", Collation(unicode: true, ignoreCase: true, ignoreAccents: true, locale: "de")) == 0)
        // Swedish, by contrast, sorts Ö after Z.
        #expect(cmp("Öl", "Zebra", Collation(unicode: true, locale: "sv")) > 0)
        #expect(cmp("Öl", "Zebra", de) < 0)
    }

    @Test func turkishDotlessI() {
        let trNoCase = Collation(unicode: true, ignoreCase: true, locale: "tr")
        let rootNoCase = Self.noCase
        // In Turkish, I is the capital of ı and İ the capital of i.
        #expect(cmp("I", "ı", trNoCase) == 0)
        #expect(cmp("İ", "i", trNoCase) == 0)
        #expect(cmp("I", "i", trNoCase) != 0)
        #expect(cmp("ISPARTA", "ısparta", trNoCase) == 0)
        #expect(cmp("İSTANBUL", "istanbul", trNoCase) == 0)
        // The root collation treats I/i as the case pair and ı as a different letter.
        #expect(cmp("I", "i", rootNoCase) == 0)
        #expect(cmp("I", "ı", rootNoCase) != 0)
        // Turkish orders ı before i.
        let tr = Collation(unicode: true, locale: "tr")
        #expect(cmp("ıa", "ia", tr) < 0)
        #expect(cmp("ia", "ja", tr) < 0)
    }

    @Test func collationAwareContains() {
        #expect(UnicodeCollator.contains("Crème Brûlée", "brulee", collation: Self.noCaseNoDiac))
        #expect(!UnicodeCollator.contains("Crème Brûlée", "brulee", collation: Self.noCase))
        #expect(UnicodeCollator.contains("Crème Brûlée", "BRÛLÉE", collation: Self.noCase))
        #expect(UnicodeCollator.contains("abc", "", collation: Self.unicode))
        #expect(!UnicodeCollator.contains("", "a", collation: Self.unicode))
        #expect(UnicodeCollator.contains("ISTANBUL", "ist", collation: Collation(unicode: true, ignoreCase: true, locale: "en")))
        #expect(!UnicodeCollator.contains("ISPARTA", "isp", collation: Collation(unicode: true, ignoreCase: true, locale: "tr")))
        #expect(UnicodeCollator.contains("ISPARTA", "ısp", collation: Collation(unicode: true, ignoreCase: true, locale: "tr")))
    }

    @Test func valueOrderUsesCollation() {
        var words: [Value] = ["zebra", "Äpfel", "apple", "Birne", "éclair"]
        words.sort { Value.compare($0, $1, collation: Collation(unicode: true, ignoreCase: true, locale: "de")) < 0 }
        #expect(words == ["Äpfel", "apple", "Birne", "éclair", "zebra"] || words == ["apple", "Äpfel", "Birne", "éclair", "zebra"])
    }

    @Test func manyThreadsShareNoCollator() async {
        // Each task compares on whatever thread it runs on; per-thread collators must agree.
        let c = Self.noCaseNoDiac
        await withTaskGroup(of: Bool.self) { group in
            for i in 0..<16 {
                group.addTask {
                    var ok = true
                    for j in 0..<200 {
                        ok = ok && c.compare("Résumé\(i)\(j)", "resume\(i)\(j)") == 0
                        ok = ok && c.compare("a\(i)", "B\(j)") < 0
                    }
                    return ok
                }
            }
            for await ok in group { #expect(ok) }
        }
    }
}
