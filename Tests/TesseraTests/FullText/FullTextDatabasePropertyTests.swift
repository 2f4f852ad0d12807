import Testing
@testable import Tessera

/// Seeded random documents in a real database with full-text indexes, queried through SQL++
/// `match()` with random single terms, column terms and prefixes. The expected documents are
/// computed here, independently of the engine's tokenizer, from SPEC §10.1:
/// - rule 1: strings as is, integers and doubles as decimal text, booleans as `true`/`false`,
///   arrays and objects as all their nested scalars, MISSING and NULL as nothing;
/// - rule 2: tokens are maximal runs of L*, N*, Co code points, plus combining marks that follow
///   such a code point; everything else separates;
/// - rule 3: case folding (the vocabulary avoids letters whose lower-casing and case folding
///   differ, such as ß or final sigma);
/// - rules 4 and 5 only for the English index: the SPEC §14 stop-word list, written out here,
///   and the engine's `Stemmer` applied to both sides (the only engine part the model uses).
///
/// Saves, edits, deletes, re-saves and purges run between rounds of queries, and the integrity
/// check must report nothing at the end.
@Suite("Full-text in the database (property)")
struct FullTextDatabasePropertyTests {
    /// The SPEC §14 English stop words.
    static let englishStopWords: Set<String> = Set("""
        i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself \
        it its itself they them their theirs themselves what which who whom this that these those am is are was were be \
        been being have has had having do does did doing would should could ought a an the and but if or because as \
        until while of at by for with about against between into through during before after above below to from up \
        down in out on off over under again further then once here there when where why how all any both each few more \
        most other some such no nor not only own same so than too very cannot
        """.split(separator: " ").map(String.init))

    /// Words the documents are made of (lower case; queries vary the case). Includes stop
    /// words, lower-case operator words, accented, Cyrillic, Greek, CJK and numeric tokens, and
    /// English words with shared stems.
    static let vocabulary: [String] = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "kilo", "lima",
        "café", "cafe", "naïve", "résumé", "über", "élan", "мир", "дом", "кошка", "кошки", "αλφα", "βητα",
        "x1", "42", "7", "2024", "日本", "or", "not", "and", "near", "the", "a", "running", "runs", "run",
        "runner", "connection", "connected", "happiness", "happy", "studies", "library", "libraries",
    ]

    /// What separates words in generated text: spaces, punctuation, symbols, a lone combining
    /// mark after a space (not attached to a letter, so a separator).
    static let separators: [String] = [" ", " ", " ", ", ", "-", "'", "_", ". ", "!", "\n", " / ", "\t", " \u{301} ", "+", "…"]

    typealias RNG = SeededRandom

    // MARK: - Independent model of SPEC §10.1

    /// Rule 2: is this scalar part of a token (L*, N*, Co)? Is it a combining mark (M*)?
    static func isTokenScalar(_ s: Unicode.Scalar) -> Bool {
        switch s.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber, .privateUse:
            return true
        default:
            return false
        }
    }

    static func isMark(_ s: Unicode.Scalar) -> Bool {
        switch s.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }

    /// Rules 2 and 3: the case-folded tokens of a text.
    static func tokens(_ text: String) -> [String] {
        var out: [String] = []
        var current = String.UnicodeScalarView()
        for s in text.unicodeScalars {
            if isTokenScalar(s) || (isMark(s) && !current.isEmpty) {
                current.append(s)
            } else if !current.isEmpty {
                out.append(String(current).lowercased())
                current = String.UnicodeScalarView()
            }
        }
        if !current.isEmpty { out.append(String(current).lowercased()) }
        return out
    }

    /// Rule 1: the texts of a value's scalars (their order does not matter for single terms).
    static func texts(_ v: Value) -> [String] {
        switch v {
        case .missing, .null: return []
        case .bool(let b): return [b ? "true" : "false"]
        case .int(let i): return [String(i)]
        case .double(let d):
            // Generated doubles are k + 0.25 or k + 0.5 (k ≥ 0): exact, with a short decimal form.
            let whole = d.rounded(.down)
            let frac = d - whole
            return ["\(Int(whole))." + (frac == 0.25 ? "25" : "5")]
        case .string(let s): return [s]
        case .array(let a): return a.flatMap(texts)
        case .object(let o): return o.values.flatMap(texts)
        }
    }

    /// The folded tokens of a property value.
    static func terms(_ v: Value?) -> Set<String> {
        Set((v.map(texts) ?? []).flatMap(tokens))
    }

    /// English stems of a property value: stop words removed, then stemmed.
    static func englishTerms(_ v: Value?, _ stemmer: Stemmer) -> Set<String> {
        Set(terms(v).filter { !englishStopWords.contains($0) }.map { stemmer.stem($0) })
    }

    // MARK: - Random data

    static func word(_ r: inout RNG) -> String {
        let w = r.pick(vocabulary)
        switch r.int(6) {
        case 0: return w.uppercased()
        case 1: return w.prefix(1).uppercased() + w.dropFirst()
        default: return w
        }
    }

    static func sentence(_ r: inout RNG, maxWords: Int) -> String {
        var s = r.chance(20) ? r.pick(separators) : ""
        let n = r.int(maxWords + 1)
        for i in 0..<n {
            if i > 0 { s += r.pick(separators) }
            s += word(&r)
        }
        if r.chance(20) { s += r.pick(separators) }
        return s
    }

    static func number(_ r: inout RNG) -> Value {
        switch r.int(3) {
        case 0: return .int(Int64(r.int(3000)))
        case 1: return .int(-Int64(r.int(100)))
        default: return .double(Double(r.int(100)) + (r.chance(50) ? 0.25 : 0.5))
        }
    }

    static func scalar(_ r: inout RNG) -> Value {
        switch r.int(8) {
        case 0: return number(&r)
        case 1: return .bool(r.chance(50))
        case 2: return .null
        default: return .string(sentence(&r, maxWords: 3))
        }
    }

    static func body(_ r: inout RNG) -> Value? {
        switch r.int(20) {
        case 0: return nil
        case 1: return .null
        case 2: return number(&r)
        case 3: return .bool(r.chance(50))
        case 4, 5:
            var a: [Value] = (0..<r.int(4)).map { _ in scalar(&r) }
            if r.chance(40) { a.append(.array((0..<r.int(3)).map { _ in scalar(&r) })) }
            return .array(a)
        case 6:
            var o: [String: Value] = [:]
            for k in ["p", "q", "r"] where r.chance(70) { o[k] = scalar(&r) }
            if r.chance(50) { o["nested"] = .object(["deep": scalar(&r), "list": .array([scalar(&r), scalar(&r)])]) }
            return .object(o)
        default:
            return .string(sentence(&r, maxWords: 12))
        }
    }

    static func document(_ r: inout RNG) -> [String: Value] {
        var d: [String: Value] = [:]
        if let b = body(&r) { d["body"] = b }
        if r.chance(70) { d["title"] = .string(sentence(&r, maxWords: 4)) }
        switch r.int(4) {
        case 0, 1: d["kind"] = "a"
        case 2: d["kind"] = "b"
        default: break
        }
        return d
    }

    // MARK: - Queries and expectations

    enum Probe {
        /// A term on the raw index (language "", columns title and body), optionally one column.
        case raw(String, column: String?)
        /// A prefix on the raw index.
        case prefix(String)
        /// A term on the partial raw index (body only, where kind = 'a').
        case partial(String)
        /// A term on the English index (body only).
        case english(String)

        var index: String {
            switch self {
            case .raw, .prefix: "ftRaw"
            case .partial: "ftPart"
            case .english: "ftEn"
            }
        }

        var searchString: String {
            switch self {
            case .raw(let w, let c): c.map { "\($0):\(w)" } ?? w
            case .prefix(let p): p + "*"
            case .partial(let w), .english(let w): w
            }
        }
    }

    /// A query word: a vocabulary word in a random case that is not an upper-case operator, a
    /// token of a boolean or number, or a word that occurs nowhere.
    static func queryWord(_ r: inout RNG) -> String {
        if r.chance(5) { return "zzzz" }
        // Tokens that only non-string values produce: booleans and the parts of doubles.
        if r.chance(10) { return r.pick(["true", "false", "TRUE", "25", "5", "0"]) }
        let w = word(&r)
        return ["AND", "OR", "NOT", "NEAR"].contains(w) ? w.lowercased() : w
    }

    static func probe(_ r: inout RNG) -> Probe {
        switch r.int(10) {
        case 0, 1, 2: return .raw(queryWord(&r), column: nil)
        case 3: return .raw(queryWord(&r), column: r.chance(50) ? "title" : "body")
        case 4:
            let w = Array(r.pick(vocabulary))
            return .prefix(String(w.prefix(1 + r.int(max(1, w.count - 1)))))
        case 5: return .partial(queryWord(&r))
        default: return .english(queryWord(&r))
        }
    }

    static func expected(_ p: Probe, docs: [String: [String: Value]], stemmer: Stemmer) -> [String] {
        var ids: [String] = []
        switch p {
        case .raw(let w, let column):
            let t = w.lowercased()
            for (id, d) in docs {
                let cols = column.map { [$0] } ?? ["title", "body"]
                if cols.contains(where: { terms(d[$0]).contains(t) }) { ids.append(id) }
            }
        case .prefix(let pre):
            let p = pre.lowercased()
            for (id, d) in docs where terms(d["title"]).union(terms(d["body"])).contains(where: { $0.hasPrefix(p) }) {
                ids.append(id)
            }
        case .partial(let w):
            let t = w.lowercased()
            for (id, d) in docs where d["kind"] == "a" && terms(d["body"]).contains(t) { ids.append(id) }
        case .english(let w):
            let t = w.lowercased()
            // A query of only a stop word matches nothing.
            if englishStopWords.contains(t) { return [] }
            let s = stemmer.stem(t)
            for (id, d) in docs where englishTerms(d["body"], stemmer).contains(s) { ids.append(id) }
        }
        return ids.sorted()
    }

    static func run(_ p: Probe, in db: Database) throws -> [String] {
        let q = try db.createQuery("SELECT meta().id AS id FROM docs WHERE match(\(p.index), $q)")
        q.parameters = Parameters(["q": .string(p.searchString)])
        return try q.execute().allResults().compactMap { $0.string(forKey: "id") }.sorted()
    }

    // MARK: - The test

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func matchesAgreeWithTheModel(seed: UInt64) throws {
        var r = RNG(seed: seed &* 0x5DEE_CE66D)
        let db = try Database.temporary()
        defer { try? db.close() }
        let coll = try db.createCollection(name: "docs")
        let stemmer = try #require(Stemmer(language: "en"))
        var model: [String: [String: Value]] = [:]
        var deleted: Set<String> = []

        // Documents first: the indexes back-fill them.
        for _ in 0..<60 {
            let id = "d\(r.int(90))"
            let d = FullTextDatabasePropertyTests.document(&r)
            try coll.save(id: id, properties: d)
            model[id] = d
        }
        try coll.createIndex(withName: "ftRaw", config: FullTextIndexConfiguration(["title", "body"], language: ""))
        try coll.createIndex(withName: "ftPart", config: FullTextIndexConfiguration(["body"], where: "kind = 'a'", language: ""))
        try coll.createIndex(withName: "ftEn", config: FullTextIndexConfiguration(["body"], language: "en"))

        func mutate(_ n: Int) throws {
            for _ in 0..<n {
                let roll = r.int(20)
                if roll < 12 || model.isEmpty {
                    // New document, edit of a live one, or re-save of a deleted one.
                    let id = roll < 2 && !deleted.isEmpty ? r.pick(deleted.sorted()) : "d\(r.int(90))"
                    let d = FullTextDatabasePropertyTests.document(&r)
                    try coll.save(id: id, properties: d)
                    model[id] = d
                    deleted.remove(id)
                } else if roll < 16 {
                    let id = r.pick(model.keys.sorted())
                    try coll.delete(id: id)
                    model[id] = nil
                    deleted.insert(id)
                } else if roll < 18 {
                    let id = r.pick(model.keys.sorted() + deleted.sorted())
                    try coll.purge(id: id)
                    model[id] = nil
                    deleted.remove(id)
                } else {
                    // Several saves in one transaction.
                    try db.inBatch {
                        for _ in 0..<3 {
                            let id = "d\(r.int(90))"
                            let d = FullTextDatabasePropertyTests.document(&r)
                            try coll.save(id: id, properties: d)
                            model[id] = d
                            deleted.remove(id)
                        }
                    }
                }
            }
        }

        var nonEmpty = 0
        var probes = 0
        func check(_ n: Int, round: Int) throws {
            for i in 0..<n {
                let p = FullTextDatabasePropertyTests.probe(&r)
                let want = FullTextDatabasePropertyTests.expected(p, docs: model, stemmer: stemmer)
                let got = try FullTextDatabasePropertyTests.run(p, in: db)
                probes += 1
                if !want.isEmpty { nonEmpty += 1 }
                #expect(got == want, "seed \(seed) round \(round) probe \(i): match(\(p.index), '\(p.searchString)')\nexpected \(want)\ngot      \(got)")
                if got != want { return }
            }
        }

        try check(80, round: 0)
        for round in 1...4 {
            try mutate(40)
            try check(80, round: round)
        }

        // The plan goes through the named full-text index.
        let plan = try db.createQuery("SELECT meta().id FROM docs WHERE match(ftEn, 'alpha')").explainPlan()
        #expect(plan.indexesUsed == ["ftEn"], "\(plan.text)")

        let report = try db.performMaintenance(.integrityCheck)
        #expect(report.isOK, "\(report)")
        // The probes are meaningful only if many of them find something.
        #expect(nonEmpty > probes / 3, "only \(nonEmpty) of \(probes) probes expected any document")
    }

    /// The model's tokenizer agrees with SPEC §10.1's own examples, so the property test
    /// does not merely mirror the engine.
    @Test func modelFollowsSpecExamples() {
        #expect(FullTextDatabasePropertyTests.tokens("don't") == ["don", "t"])
        #expect(FullTextDatabasePropertyTests.tokens("3.2") == ["3", "2"])
        #expect(FullTextDatabasePropertyTests.tokens("Café-RÉSUMÉ_x1") == ["café", "résumé", "x1"])
        #expect(FullTextDatabasePropertyTests.tokens("a \u{301}b") == ["a", "b"])
        #expect(FullTextDatabasePropertyTests.texts(.array([.bool(true), .int(-5), .double(2.25), .null])) == ["true", "-5", "2.25"])
        #expect(FullTextDatabasePropertyTests.englishStopWords.count == 124)
    }
}
