import Testing
@testable import Tessera
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Adversarial tests of the block-based full-text storage and its query paths: every result is
/// compared with an independent model computed here (tokens, positions, phrases, prefixes,
/// NEAR chains and columns re-implemented from SPEC §10), in a real database.
///
/// The model tokenizer only needs to handle the generated text: words of ASCII letters, digits
/// and `ü`, separated by spaces and punctuation. The English model drops the SPEC §14 stop
/// words before positions are assigned (SPEC §10.1 step 6) and stems with the engine's
/// `Stemmer`, the only engine part the model uses.
@Suite("Full-text: adversarial")
struct FullTextAdversarialTests {
    typealias RNG = SeededRandom

    // MARK: - Model

    /// A leaf of a model query: an exact (folded, stemmed) term or a byte prefix.
    enum Leaf: Equatable {
        case term(String)
        case prefix(String)

        func matches(_ t: String?) -> Bool {
            guard let t else { return false }
            switch self {
            case .term(let x): return t == x
            case .prefix(let p): return t.utf8.starts(with: p.utf8)
            }
        }
    }

    /// A term, prefix or phrase as typed, with its model parts.
    struct Unit {
        var words: [String]
        var column: String?
        var parts: [(leaf: Leaf, offset: Int)]
        var span: Int { parts.last?.offset ?? 0 }

        /// Builds the parts from typed words: `*` makes a prefix; English drops stop words
        /// (they take no position) and stems the others.
        init(_ words: [String], column: String? = nil, stemmer: Stemmer? = nil) {
            self.words = words
            self.column = column
            var raw: [(Leaf, Int)] = []
            for w in words {
                if w.hasSuffix("*") {
                    raw.append((.prefix(String(w.dropLast()).lowercased()), raw.count))
                } else {
                    let t = w.lowercased()
                    if let stemmer {
                        if FullTextDatabasePropertyTests.englishStopWords.contains(t) { continue }
                        raw.append((.term(stemmer.stem(t)), raw.count))
                    } else {
                        raw.append((.term(t), raw.count))
                    }
                }
            }
            let first = raw.first?.1 ?? 0
            parts = raw.map { ($0.0, $0.1 - first) }
        }

        var text: String {
            let body = words.count == 1 ? words[0] : "\"" + words.joined(separator: " ") + "\""
            return column.map { "\($0):" + body } ?? body
        }
    }

    /// A model query: renders to SPEC §10.3 text and evaluates on a model document.
    indirect enum Q {
        case unit(Unit)
        case and([Q])
        case or([Q])
        case not(Q, Q)
        case near([Unit], Int)

        var text: String {
            switch self {
            case .unit(let u): return u.text
            case .and(let xs): return "(" + xs.map(\.text).joined(separator: " ") + ")"
            case .or(let xs): return "(" + xs.map(\.text).joined(separator: " OR ") + ")"
            case .not(let a, let b): return "(" + a.text + " NOT " + b.text + ")"
            case .near(let us, let d):
                return "(" + us.map(\.text).joined(separator: d == 10 ? " NEAR " : " NEAR/\(d) ") + ")"
            }
        }
    }

    /// One occurrence of a unit: column and first/last position.
    struct Inst { var column: Int; var start: Int; var end: Int }

    /// A model document: per column, the term at each position (stop words take none).
    struct Doc {
        var columns: [[String?]]
    }

    static func tokens(_ text: String) -> [String] {
        text.split(whereSeparator: { !($0.isLetter || $0.isNumber) }).map { $0.lowercased() }
    }

    static func doc(_ columnTexts: [String], columnNames: [String], stemmer: Stemmer?) -> Doc {
        Doc(columns: columnTexts.map { text in
            let kept: [String] = tokens(text).compactMap { t in
                guard let stemmer else { return t }
                return FullTextDatabasePropertyTests.englishStopWords.contains(t) ? nil : stemmer.stem(t)
            }
            return kept.map { Optional($0) }
        })
    }

    static func instances(_ u: Unit, _ d: Doc, columnNames: [String]) -> [Inst] {
        guard !u.parts.isEmpty else { return [] }
        var out: [Inst] = []
        let wanted = u.column.flatMap { c in columnNames.firstIndex { $0.lowercased() == c.lowercased() } }
        for (c, toks) in d.columns.enumerated() where wanted == nil || wanted == c {
            guard toks.count > u.span else { continue }
            for s in 0..<(toks.count - u.span) where u.parts.allSatisfy({ $0.leaf.matches(toks[s + $0.offset]) }) {
                out.append(Inst(column: c, start: s, end: s + u.span))
            }
        }
        return out
    }

    static func eval(_ q: Q, _ d: Doc, columnNames: [String]) -> Bool {
        switch q {
        case .unit(let u): return !instances(u, d, columnNames: columnNames).isEmpty
        case .and(let xs): return xs.allSatisfy { eval($0, d, columnNames: columnNames) }
        case .or(let xs): return xs.contains { eval($0, d, columnNames: columnNames) }
        case .not(let a, let b): return eval(a, d, columnNames: columnNames) && !eval(b, d, columnNames: columnNames)
        case .near(let us, let dist):
            let inst = us.map { instances($0, d, columnNames: columnNames) }
            func near(_ x: Inst, _ y: Inst) -> Bool {
                guard x.column == y.column else { return false }
                if y.end < x.start { return x.start - y.end - 1 <= dist }
                if x.end < y.start { return y.start - x.end - 1 <= dist }
                return false
            }
            func chain(_ k: Int, _ prev: Inst) -> Bool {
                if k == inst.count { return true }
                return inst[k].contains { near($0, prev) && chain(k + 1, $0) }
            }
            return inst[0].contains { chain(1, $0) }
        }
    }

    static func expected(_ q: Q, _ docs: [String: Doc], columnNames: [String]) -> [String] {
        docs.filter { eval(q, $0.value, columnNames: columnNames) }.keys.sorted()
    }

    static func run(_ db: Database, _ index: String, _ q: String) throws -> [String] {
        let query = try db.createQuery("SELECT meta().id AS id FROM docs WHERE match(\(index), $q)")
        query.parameters = Parameters(["q": .string(q)])
        return try query.execute().allResults().compactMap { $0.string(forKey: "id") }.sorted()
    }

    /// Runs the query and compares with the model; returns whether the model expected any.
    @discardableResult
    static func check(_ db: Database, _ index: String, _ q: Q, _ docs: [String: Doc], columnNames: [String],
                      _ context: String) throws -> Bool {
        let want = expected(q, docs, columnNames: columnNames)
        let got = try run(db, index, q.text)
        #expect(got == want, "\(context): match(\(index), '\(q.text)')\nmissing \(Set(want).subtracting(got).sorted().prefix(10))\nextra \(Set(got).subtracting(want).sorted().prefix(10))\n(\(want.count) expected, \(got.count) found)")
        return !want.isEmpty
    }

    static func checkIntegrity(_ db: Database, _ context: String) throws {
        let report = try db.performMaintenance(.integrityCheck)
        #expect(report.isOK, "\(context): \(report)")
    }

    /// Random query over units from `unit`, up to `depth` levels of AND/OR/NOT.
    static func query(_ r: inout RNG, depth: Int, unit: (inout RNG) -> Unit) -> Q {
        if depth == 0 || r.chance(45) { return .unit(unit(&r)) }
        switch r.int(3) {
        case 0: return .and((0..<(2 + r.int(2))).map { _ in query(&r, depth: depth - 1, unit: unit) })
        case 1: return .or((0..<(2 + r.int(2))).map { _ in query(&r, depth: depth - 1, unit: unit) })
        default: return .not(query(&r, depth: depth - 1, unit: unit), query(&r, depth: depth - 1, unit: unit))
        }
    }

    // MARK: - 1. Prefixes over many blocks

    /// Terms that are prefixes of one another (`r`, `ru`, `run`, `rune`, `runes`, `runner`), a
    /// non-ASCII neighbour (`rü`, whose first byte after `r` sorts after every ASCII letter),
    /// and two-byte-longer siblings; prefixes alone, in phrases (first, middle, last part), in
    /// AND/OR/NOT, over 2,500 documents so each frequent term spans many blocks.
    static let prefixVocabulary = ["r", "ru", "run", "rune", "runes", "runner", "running", "rung", "runa", "rü", "rüb",
                                   "ab", "abc", "abcd", "abd", "abz", "b", "ba", "bab", "z", "zz", "zzz", "1", "10", "100", "101"]
    static let prefixQueries = ["r*", "ru*", "run*", "rune*", "runn*", "rü*", "rüb*", "ab*", "abc*", "abcd*", "abcde*",
                                "a*", "b*", "ba*", "z*", "zz*", "zzz*", "zzzz*", "1*", "10*", "100*", "q*"]

    @Test(arguments: [21, 22] as [UInt64])
    func prefixesOverManyBlocks(seed: UInt64) throws {
        var r = RNG(seed: seed)
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        try coll.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: ""))
        var docs: [String: Doc] = [:]
        let cols = ["body"]
        var n = 0
        for _ in 0..<10 {
            try db.inBatch {
                for _ in 0..<250 {
                    let words = (0..<(3 + r.int(10))).map { _ in
                        let w = Self.prefixVocabulary[min(r.int(Self.prefixVocabulary.count), r.int(Self.prefixVocabulary.count))]
                        return r.chance(15) ? w.uppercased() : w
                    }
                    let text = words.joined(separator: r.pick([" ", ", ", "-", " . "]))
                    let id = "p\(n)"
                    n += 1
                    try coll.save(id: id, properties: ["body": .string(text)])
                    docs[id] = Self.doc([text], columnNames: cols, stemmer: nil)
                }
            }
        }
        let idx = try #require(try coll.currentStore().indexes.first { $0.definition.name == "ft" })
        // Every prefix alone, and every exact term: first with nine batches waiting in
        // segments, then with everything merged into the blocks.
        for p in Self.prefixQueries { try Self.check(db, "ft", .unit(Unit([p])), docs, columnNames: cols, "prefix over segments") }
        try db.performMaintenance(.optimize)
        let blocks = try db.read { try $0.count(idx.table) }
        #expect(blocks > 60, "lists span many blocks (\(blocks))")
        for p in Self.prefixQueries { try Self.check(db, "ft", .unit(Unit([p])), docs, columnNames: cols, "prefix") }
        for w in Self.prefixVocabulary { try Self.check(db, "ft", .unit(Unit([w])), docs, columnNames: cols, "term") }

        func unit(_ r: inout RNG) -> Unit {
            func word(_ r: inout RNG) -> String { r.chance(50) ? r.pick(Self.prefixQueries) : r.pick(Self.prefixVocabulary) }
            let k = r.chance(50) ? 1 : 2 + r.int(3)
            return Unit((0..<k).map { _ in word(&r) })
        }
        var nonEmpty = 0
        for i in 0..<120 {
            if try Self.check(db, "ft", Self.query(&r, depth: 2, unit: unit), docs, columnNames: cols, "seed \(seed) query \(i)") {
                nonEmpty += 1
            }
        }
        #expect(nonEmpty > 40)

        // Edit, delete, then check the prefixes again (blocks rewritten in the middle of lists).
        for k in 0..<300 {
            let id = "p\(r.int(n))"
            if k % 3 == 0 {
                if docs[id] != nil { try coll.delete(id: id) }
                docs[id] = nil
            } else {
                let text = (0..<(1 + r.int(6))).map { _ in r.pick(Self.prefixVocabulary) }.joined(separator: " ")
                try coll.save(id: id, properties: ["body": .string(text)])
                docs[id] = Self.doc([text], columnNames: cols, stemmer: nil)
            }
        }
        for p in Self.prefixQueries { try Self.check(db, "ft", .unit(Unit([p])), docs, columnNames: cols, "prefix after edits") }
        for i in 0..<40 {
            try Self.check(db, "ft", Self.query(&r, depth: 1, unit: unit), docs, columnNames: cols, "after edits query \(i)")
        }
        try Self.checkIntegrity(db, "prefixes")
    }

    // MARK: - 2. Several columns

    /// Three columns (a string, a string, an array of strings joined as one text); `column:`
    /// filters on terms, phrases, prefixes and groups; phrases and NEAR never cross columns
    /// (title's last word followed by body's first word is not a phrase).
    @Test(arguments: [31, 32] as [UInt64])
    func columnsDoNotMix(seed: UInt64) throws {
        var r = RNG(seed: seed)
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        let cols = ["title", "body", "tags"]
        let vocab = ["oak", "pine", "fir", "elm", "ash", "yew", "oaken", "pin"]
        try coll.createIndex(withName: "ft", config: FullTextIndexConfiguration(cols, language: ""))
        var docs: [String: Doc] = [:]
        func sentence(_ r: inout RNG, _ max: Int) -> String {
            (0..<r.int(max + 1)).map { _ in r.pick(vocab) }.joined(separator: " ")
        }
        func save(_ id: String, _ r: inout RNG) throws {
            let title = sentence(&r, 3)
            let body = sentence(&r, 8)
            let tags = (0..<r.int(4)).map { _ in sentence(&r, 2) }
            var props: [String: Value] = ["title": .string(title), "body": .string(body)]
            if r.chance(80) { props["tags"] = .array(tags.map { .string($0) }) }
            try coll.save(id: id, properties: props)
            let tagText = props["tags"] == nil ? "" : tags.joined(separator: " ")
            docs[id] = Self.doc([title, body, tagText], columnNames: cols, stemmer: nil)
        }
        try db.inBatch { for i in 0..<1_200 { try save("c\(i)", &r) } }
        for i in 0..<200 { try save("c\(r.int(1_400 + i))", &r) }

        func unit(_ r: inout RNG) -> Unit {
            let k = r.chance(40) ? 1 : 2 + r.int(2)
            let words = (0..<k).map { _ in r.chance(15) ? r.pick(["oa*", "pi*", "e*", "oak*"]) : r.pick(vocab) }
            let column: String? = r.chance(50) ? r.pick(cols + ["TITLE", "Body"]) : nil
            return Unit(words, column: column)
        }
        var nonEmpty = 0
        for i in 0..<150 {
            let q: Q
            if r.chance(25) {
                q = .near([unit(&r), unit(&r)], r.pick([0, 1, 2, 10]))
            } else {
                q = Self.query(&r, depth: 2, unit: unit)
            }
            if try Self.check(db, "ft", q, docs, columnNames: cols, "seed \(seed) query \(i)") { nonEmpty += 1 }
        }
        #expect(nonEmpty > 50)

        // A grouped column filter applies to everything inside it.
        let grouped = try Self.run(db, "ft", "title:(oak OR \"pine fir\")")
        let want = Self.expected(.or([.unit(Unit(["oak"], column: "title")), .unit(Unit(["pine", "fir"], column: "title"))]),
                                 docs, columnNames: cols)
        #expect(grouped == want, "grouped column filter")

        // Hand-made: a phrase spanning the end of one column and the start of the next.
        try coll.save(id: "cross", properties: ["title": "zeta", "body": "omega psi", "tags": ["chi", "phi"]])
        #expect(try Self.run(db, "ft", "\"zeta omega\"") == [])
        #expect(try Self.run(db, "ft", "\"psi chi\"") == [])
        #expect(try Self.run(db, "ft", "zeta NEAR/0 omega") == [])
        #expect(try Self.run(db, "ft", "zeta omega") == ["cross"])
        // Array elements are one text joined by spaces (SPEC §10.1 rule 1).
        #expect(try Self.run(db, "ft", "tags:\"chi phi\"") == ["cross"])
        #expect(try Self.run(db, "ft", "body:zeta") == [])
        try Self.checkIntegrity(db, "columns")
    }

    // MARK: - 3. NEAR, long phrases, stop-word gaps

    /// English index over documents of 10–40 words with stop words and stemmable words:
    /// 3- and 4-word phrases (the general path, not the two-word fast path), phrases with stop
    /// words inside (a gap that any token fills), `NEAR` and `NEAR/n` chains of terms and
    /// phrases.
    @Test(arguments: [41, 42] as [UInt64])
    func nearAndLongPhrases(seed: UInt64) throws {
        var r = RNG(seed: seed)
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        let stemmer = try #require(Stemmer(language: "en"))
        let content = ["run", "runs", "running", "runner", "river", "rivers", "stone", "stones", "happy", "happiness", "kind", "magic", "light"]
        let stops = ["the", "of", "a", "and", "to", "in"]
        try coll.createIndex(withName: "ftEn", config: FullTextIndexConfiguration(["body"], language: "en"))
        let cols = ["body"]
        var docs: [String: Doc] = [:]
        try db.inBatch {
            for i in 0..<2_000 {
                let words = (0..<(10 + r.int(31))).map { _ in r.chance(30) ? r.pick(stops) : r.pick(content) }
                let text = words.joined(separator: " ")
                try coll.save(id: "n\(i)", properties: ["body": .string(text)])
                docs["n\(i)"] = Self.doc([text], columnNames: cols, stemmer: stemmer)
            }
        }
        func unit(_ r: inout RNG) -> Unit {
            let k = r.chance(40) ? 1 : r.pick([2, 3, 3, 4])
            var words = (0..<k).map { _ in r.pick(content) }
            // A stop word inside the phrase: a gap of one position.
            if k >= 2 && r.chance(40) { words[1 + r.int(k - 1)] = r.pick(stops) }
            return Unit(words, stemmer: stemmer)
        }
        var nonEmpty = 0
        var nearNonEmpty = 0
        for i in 0..<160 {
            let q: Q
            switch r.int(4) {
            case 0, 1:
                let n = r.chance(70) ? 2 : 3
                q = .near((0..<n).map { _ in unit(&r) }, r.pick([0, 1, 3, 10]))
            case 2:
                q = .unit(unit(&r))
            default:
                q = Self.query(&r, depth: 2, unit: unit)
            }
            let found = try Self.check(db, "ftEn", q, docs, columnNames: cols, "seed \(seed) query \(i)")
            if found { nonEmpty += 1 }
            if found, case .near = q { nearNonEmpty += 1 }
        }
        #expect(nonEmpty > 40)
        #expect(nearNonEmpty > 10)

        // Hand-made: a stop word in a phrase takes no position, so "kind of magic" is "kind
        // magic"; a leading or trailing stop word constrains nothing.
        try coll.save(id: "gap1", properties: ["body": "kind zzz magic"])
        try coll.save(id: "gap2", properties: ["body": "kind magic"])
        #expect(try Self.run(db, "ftEn", "\"kind of zzz\"") == ["gap1"])
        #expect(try !Self.run(db, "ftEn", "\"kind of magic\"").contains("gap1"))
        #expect(try Self.run(db, "ftEn", "\"kind of magic\"").contains("gap2"))
        #expect(try Self.run(db, "ftEn", "\"the zzz of\"") == ["gap1"])
        #expect(try Self.run(db, "ftEn", "zzz NEAR/0 kind") == ["gap1"])
        try Self.checkIntegrity(db, "near")
    }

    // MARK: - 4. Partial index: documents in and out

    /// A partial index (`where kind = 'a'`): documents flip in and out across single saves and
    /// batches (several flips of one document in one batch), are deleted, purged and re-saved;
    /// matches equal the model of the documents inside, and the integrity check is clean.
    @Test(arguments: [51, 52] as [UInt64])
    func partialIndexMembership(seed: UInt64) throws {
        var r = RNG(seed: seed)
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        let vocab = ["sun", "moon", "star", "comet", "nova", "sunny"]
        let cols = ["body"]
        var all: [String: (kind: String, doc: Doc)] = [:]
        func inside() -> [String: Doc] { all.filter { $0.value.kind == "a" }.mapValues(\.doc) }
        func save(_ id: String, _ r: inout RNG) throws {
            let text = (0..<(1 + r.int(8))).map { _ in r.pick(vocab) }.joined(separator: " ")
            let kind = r.chance(50) ? "a" : "b"
            try coll.save(id: id, properties: ["body": .string(text), "kind": .string(kind)])
            all[id] = (kind, Self.doc([text], columnNames: cols, stemmer: nil))
        }
        for i in 0..<300 { try save("m\(i)", &r) }
        try coll.createIndex(withName: "ftP", config: FullTextIndexConfiguration(["body"], where: "kind = 'a'", language: ""))
        try coll.createIndex(withName: "ftAll", config: FullTextIndexConfiguration(["body"], language: ""))

        func verify(_ context: String) throws {
            let docsIn = inside()
            let docsAll = all.mapValues(\.doc)
            for w in vocab {
                try Self.check(db, "ftP", .unit(Unit([w])), docsIn, columnNames: cols, context)
                try Self.check(db, "ftAll", .unit(Unit([w])), docsAll, columnNames: cols, context)
            }
            try Self.check(db, "ftP", .unit(Unit(["sun", "moon"])), docsIn, columnNames: cols, context)
            try Self.check(db, "ftP", .unit(Unit(["su*"])), docsIn, columnNames: cols, context)
            try Self.check(db, "ftP", .not(.unit(Unit(["star"])), .unit(Unit(["nova"]))), docsIn, columnNames: cols, context)
            try Self.checkIntegrity(db, context)
        }
        try verify("initial")
        for round in 1...4 {
            for _ in 0..<80 {
                let id = "m\(r.int(340))"
                switch r.int(10) {
                case 0..<5:
                    try save(id, &r)
                case 5:
                    if all[id] != nil { try coll.delete(id: id); all[id] = nil }
                case 6:
                    try? coll.purge(id: id)
                    all[id] = nil
                default:
                    // The same document in and out several times in one batch, plus others.
                    try db.inBatch {
                        for k in 0..<(2 + r.int(5)) { try save(k % 2 == 0 ? id : "m\(r.int(340))", &r) }
                        if r.chance(50) {
                            let docsIn = inside()
                            try Self.check(db, "ftP", .unit(Unit(["sun"])), docsIn, columnNames: cols, "round \(round) inside batch")
                            try save(id, &r)
                        }
                        if r.chance(30), all[id] != nil {
                            try coll.delete(id: id)
                            all[id] = nil
                        }
                    }
                }
            }
            try verify("seed \(seed) round \(round)")
        }
    }

    // MARK: - 5. Extreme documents

    /// One term with thousands of positions (an entry larger than a block), a document of more
    /// than 65,536 tokens (positions past 16 bits), terms of up to 200 bytes differing only in
    /// their last byte, documents with no tokens, empty strings, numbers, booleans, arrays and
    /// objects as text.
    @Test func extremeDocuments() throws {
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        try coll.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: ""))
        var docs: [String: Doc] = [:]
        let cols = ["body"]
        func save(_ id: String, _ body: Value, text: String) throws {
            try coll.save(id: id, properties: ["body": body])
            docs[id] = Self.doc([text], columnNames: cols, stemmer: nil)
        }
        // Thousands of positions of one term, then a marker.
        let big = Array(repeating: "big", count: 5_000).joined(separator: " ") + " tail end"
        try save("big", .string(big), text: big)
        // Past 65,536 positions.
        let huge = Array(repeating: "w", count: 70_000).joined(separator: " ") + " zeta omega w"
        try save("huge", .string(huge), text: huge)
        // Long terms, equal but for the last byte.
        let long = String(repeating: "l", count: 199)
        for (i, c) in ["a", "b", "c"].enumerated() {
            try save("long\(i)", .string("x \(long + c) y"), text: "x \(long + c) y")
        }
        try save("long199", .string(long), text: long)
        // No tokens, empty, numbers, booleans, nested values.
        try save("punct", .string("!!! --- ... ,,, ''' ___"), text: "")
        try save("empty", .string(""), text: "")
        try save("int", .int(-1234), text: "1234")
        try save("double", .double(3.25), text: "3 25")
        try save("bool", .bool(true), text: "true")
        try save("array", .array(["big deal", .int(7), .array([.bool(false), "tail"])]), text: "big deal 7 false tail")
        try save("object", .object(["k": "tail", "n": .object(["d": .int(1234)])]), text: "tail 1234")
        try save("null", .null, text: "")
        // Many ordinary documents so the lists of "big" and "tail" have several blocks.
        for i in 0..<800 {
            let t = i % 3 == 0 ? "big tail \(i)" : "other \(i)"
            try save("o\(i)", .string(t), text: t)
        }

        let queries: [[String]] = [
            ["big"], ["tail"], ["end"], ["big", "big"], ["big", "tail"], ["tail", "end"], ["big", "big", "big", "tail"],
            ["w"], ["zeta"], ["zeta", "omega"], ["omega", "w"], ["w", "zeta"], ["w", "w", "zeta", "omega", "w"],
            [long + "a"], [long + "b"], [long + "d"], [long], [long + "*"], [String(long.prefix(150)) + "*"],
            ["x", long + "c", "y"], ["1234"], ["3"], ["25"], ["true"], ["false"], ["7"], ["deal", "7"], ["7", "false"],
            ["big*"], ["t*"], ["o*"], ["b*", "d*"],
        ]
        for q in queries { try Self.check(db, "ft", .unit(Unit(q)), docs, columnNames: cols, "extreme") }
        try Self.check(db, "ft", .near([Unit(["tail"]), Unit(["big"])], 0), docs, columnNames: cols, "extreme near")
        try Self.check(db, "ft", .near([Unit(["omega"]), Unit(["w"])], 0), docs, columnNames: cols, "extreme near")
        try Self.check(db, "ft", .near([Unit(["zeta"]), Unit(["big"])], 10), docs, columnNames: cols, "extreme near")
        try Self.check(db, "ft", .and([.unit(Unit(["big"])), .unit(Unit(["tail"])), .unit(Unit(["end"]))]), docs, columnNames: cols, "extreme and")

        // Ranking still works with huge frequencies: "big" ranks the 5,000-position document first.
        let top = try db.createQuery("SELECT meta().id AS id FROM docs WHERE match(ft, 'big') ORDER BY rank(ft) DESC LIMIT 1")
            .execute().allResults().compactMap { $0.string(forKey: "id") }
        #expect(top == ["big"])

        // Rewrite the big documents (their entries shrink), then delete them.
        try save("big", .string("small"), text: "small")
        try save("huge", .string("w zeta"), text: "w zeta")
        for q in queries.prefix(13) { try Self.check(db, "ft", .unit(Unit(q)), docs, columnNames: cols, "after rewrite") }
        try Self.checkIntegrity(db, "extreme after rewrite")
        try coll.delete(id: "big")
        docs["big"] = nil
        try coll.purge(id: "long1")
        docs["long1"] = nil
        for q in queries { try Self.check(db, "ft", .unit(Unit(q)), docs, columnNames: cols, "after delete") }
        try Self.checkIntegrity(db, "extreme")
    }

    // MARK: - 6. ORDER BY rank DESC with LIMIT / OFFSET

    static func ranks(_ db: Database, _ sql: String, _ params: [String: Value]) throws -> [(String, Double)] {
        let q = try db.createQuery(sql)
        q.parameters = Parameters(params)
        return try q.execute().allResults().map { (($0.string(forKey: "id") ?? "?"), $0.double(forKey: "r")) }
    }

    /// The bounded top-K against a full sort of every match's `rank()`: LIMIT 0, LIMIT beyond
    /// the matches, OFFSET at and beyond the match count, a residual filter that rejects most
    /// rows, LIMIT/OFFSET as parameters, OR and phrase queries.
    @Test func rankedLimitsAgreeWithAFullSort() throws {
        var r = RNG(seed: 61)
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        let vocab = ["amber", "birch", "cedar", "dune", "ember", "fjord"]
        try coll.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: ""))
        try db.inBatch {
            for i in 0..<1_500 {
                let text = (0..<(1 + r.int(15))).map { _ in vocab[min(r.int(6), r.int(6))] }.joined(separator: " ")
                try coll.save(id: "k\(i)", properties: ["body": .string(text), "n": .int(Int64(i))])
            }
        }
        let queries = ["amber", "fjord", "amber cedar", "\"amber birch\"", "\"birch amber cedar\"", "dune OR fjord",
                       "(amber NOT birch)", "ce*", "ember NEAR/2 fjord", "zzz"]
        let filters = ["", " AND n % 17 = 3", " AND meta().id LIKE '%99'", " AND n < 0"]
        for q in queries {
            for f in filters {
                let all = try Self.ranks(db, "SELECT meta().id AS id, rank(ft) AS r FROM docs WHERE match(ft, $q)\(f)", ["q": .string(q)])
                let byID = Dictionary(all, uniquingKeysWith: { a, _ in a })
                let sorted = all.map(\.1).sorted(by: >)
                let m = all.count
                let shapes: [(Int, Int)] = [(0, 0), (1, 0), (5, 0), (7, 3), (m + 10, 0), (10, m), (10, m + 5), (3, max(0, m - 1)), (m, 1)]
                for (limit, offset) in shapes {
                    for parameterised in [false, true] {
                        let sql = "SELECT meta().id AS id, rank(ft) AS r FROM docs WHERE match(ft, $q)\(f) ORDER BY rank(ft) DESC "
                            + (parameterised ? "LIMIT $l OFFSET $o" : "LIMIT \(limit) OFFSET \(offset)")
                        let params: [String: Value] = parameterised ? ["q": .string(q), "l": .int(Int64(limit)), "o": .int(Int64(offset))] : ["q": .string(q)]
                        let got = try Self.ranks(db, sql, params)
                        let want = Array(sorted.dropFirst(offset).prefix(limit))
                        let context = "'\(q)'\(f) LIMIT \(limit) OFFSET \(offset)\(parameterised ? " (parameters)" : "")"
                        #expect(got.map(\.1) == want, "\(context): ranks \(got.map(\.1).prefix(8)) want \(want.prefix(8))")
                        #expect(got.allSatisfy { byID[$0.0] == $0.1 }, "\(context): a returned row's rank differs from its unbounded rank")
                        #expect(Set(got.map(\.0)).count == got.count, "\(context): duplicate rows")
                    }
                }
                // LIMIT without OFFSET and ASC order (not the top-K path) for contrast.
                let noOffset = try Self.ranks(db, "SELECT meta().id AS id, rank(ft) AS r FROM docs WHERE match(ft, $q)\(f) ORDER BY rank(ft) DESC LIMIT 4", ["q": .string(q)])
                #expect(noOffset.map(\.1) == Array(sorted.prefix(4)), "'\(q)'\(f) LIMIT 4")
                let asc = try Self.ranks(db, "SELECT meta().id AS id, rank(ft) AS r FROM docs WHERE match(ft, $q)\(f) ORDER BY rank(ft) LIMIT 4", ["q": .string(q)])
                #expect(asc.map(\.1) == Array(sorted.reversed().prefix(4)), "'\(q)'\(f) ASC LIMIT 4")
            }
        }
    }

    // MARK: - 7. Reads inside a batch

    /// Inside one batch: saves, edits, deletes and purges interleaved with queries (terms,
    /// phrases, prefixes, ranked top-K) that must see the batch so far; after commit the same;
    /// a batch that throws leaves the index as before it.
    @Test(arguments: [71, 72] as [UInt64])
    func readsInsideBatches(seed: UInt64) throws {
        var r = RNG(seed: seed)
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        let vocab = ["grape", "grapes", "pear", "plum", "peach", "fig", "lime"]
        try coll.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: ""))
        let cols = ["body"]
        var docs: [String: Doc] = [:]
        func save(_ id: String, _ r: inout RNG) throws {
            let text = (0..<(1 + r.int(10))).map { _ in r.pick(vocab) }.joined(separator: " ")
            try coll.save(id: id, properties: ["body": .string(text)])
            docs[id] = Self.doc([text], columnNames: cols, stemmer: nil)
        }
        for i in 0..<600 { try save("b\(i)", &r) }
        func unit(_ r: inout RNG) -> Unit {
            let k = r.chance(50) ? 1 : 2 + r.int(2)
            return Unit((0..<k).map { _ in r.chance(15) ? r.pick(["gr*", "p*", "pea*"]) : r.pick(vocab) })
        }
        func probe(_ r: inout RNG, _ context: String) throws {
            for _ in 0..<4 {
                try Self.check(db, "ft", Self.query(&r, depth: 1, unit: unit), docs, columnNames: cols, context)
            }
            // The ranked top-K sees the batch too.
            let top = try Self.ranks(db, "SELECT meta().id AS id, rank(ft) AS r FROM docs WHERE match(ft, 'plum') ORDER BY rank(ft) DESC LIMIT 5", [:])
            let plum = Self.expected(.unit(Unit(["plum"])), docs, columnNames: cols)
            #expect(top.count == min(5, plum.count), "\(context): top-K size")
            #expect(top.allSatisfy { plum.contains($0.0) }, "\(context): top-K rows match")
        }
        for round in 0..<6 {
            try db.inBatch {
                for step in 0..<30 {
                    let id = "b\(r.int(700))"
                    switch r.int(6) {
                    case 0, 1, 2: try save(id, &r)
                    case 3: if docs[id] != nil { try coll.delete(id: id); docs[id] = nil }
                    case 4: try? coll.purge(id: id); docs[id] = nil
                    default:
                        // Save then delete then save again the same document.
                        try save(id, &r)
                        try coll.delete(id: id)
                        docs[id] = nil
                        if r.chance(50) { try save(id, &r) }
                    }
                    if step % 7 == 6 { try probe(&r, "seed \(seed) round \(round) step \(step) in batch") }
                }
            }
            try probe(&r, "seed \(seed) round \(round) after commit")
            try Self.checkIntegrity(db, "round \(round)")
        }

        // A batch that throws after saves and a read leaves nothing behind.
        struct Abort: Error {}
        let before = docs
        var during = docs
        do {
            try db.inBatch {
                during = before
                for i in 0..<20 {
                    let id = "b\(i)"
                    let text = "lime lime quince"
                    try coll.save(id: id, properties: ["body": .string(text)])
                    during[id] = Self.doc([text], columnNames: cols, stemmer: nil)
                }
                if during["b100"] != nil {
                    try coll.delete(id: "b100")
                    during["b100"] = nil
                }
                try Self.check(db, "ft", .unit(Unit(["quince"])), during, columnNames: cols, "aborted batch, inside")
                try Self.check(db, "ft", .unit(Unit(["lime"])), during, columnNames: cols, "aborted batch, inside")
                throw Abort()
            }
        } catch is Abort {}
        docs = before
        try Self.check(db, "ft", .unit(Unit(["quince"])), docs, columnNames: cols, "after aborted batch")
        for w in vocab { try Self.check(db, "ft", .unit(Unit([w])), docs, columnNames: cols, "after aborted batch") }
        try Self.checkIntegrity(db, "after aborted batch")
    }

    // MARK: - 8. BM25 against a model

    /// `rank()` of every match equals BM25 as documented on `CompiledFullTextQuery.evaluate`,
    /// computed here from the model documents: N documents in the index, average length over
    /// them, per unit (term, prefix, phrase, column-limited) its document frequency and its
    /// occurrences in the document; summed over the units outside NOT's right side. One-pass
    /// AND ranking and the general path are both covered; statistics are checked after edits,
    /// deletes and inside a batch.
    @Test(arguments: [81, 82] as [UInt64])
    func ranksFollowBM25(seed: UInt64) throws {
        var r = RNG(seed: seed)
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        let cols = ["title", "body"]
        let vocab = ["oak", "pine", "fir", "elm", "ash", "yew", "oaken"]
        try coll.createIndex(withName: "ft", config: FullTextIndexConfiguration(cols, language: ""))
        var docs: [String: Doc] = [:]
        func save(_ id: String, _ r: inout RNG) throws {
            let title = (0..<(1 + r.int(3))).map { _ in vocab[min(r.int(7), r.int(7))] }.joined(separator: " ")
            let body = (0..<r.int(12)).map { _ in vocab[min(r.int(7), r.int(7))] }.joined(separator: " ")
            try coll.save(id: id, properties: ["title": .string(title), "body": .string(body)])
            docs[id] = Self.doc([title, body], columnNames: cols, stemmer: nil)
        }
        try db.inBatch { for i in 0..<1_000 { try save("r\(i)", &r) } }

        func positiveUnits(_ q: Q) -> [Unit] {
            switch q {
            case .unit(let u): return [u]
            case .and(let xs), .or(let xs): return xs.flatMap(positiveUnits)
            case .not(let a, _): return positiveUnits(a)
            case .near(let us, _): return us
            }
        }
        func modelRanks(_ q: Q) -> [String: Double] {
            let n = Double(docs.count)
            let totalTokens = docs.values.reduce(0) { $0 + $1.columns.reduce(0) { $0 + $1.count } }
            let avgdl = Double(totalTokens) / n
            let units = positiveUnits(q)
            let freqs = units.map { u in docs.mapValues { Self.instances(u, $0, columnNames: cols).count } }
            let dfs = freqs.map { Double($0.values.filter { $0 > 0 }.count) }
            var out: [String: Double] = [:]
            for (id, d) in docs where Self.eval(q, d, columnNames: cols) {
                let len = Double(d.columns.reduce(0) { $0 + $1.count })
                var rank = 0.0
                for k in units.indices {
                    let f = Double(freqs[k][id]!)
                    if f == 0 { continue }
                    let idf = log(1 + (n - dfs[k] + 0.5) / (dfs[k] + 0.5))
                    rank += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * len / avgdl))
                }
                out[id] = rank
            }
            return out
        }
        func unit(_ r: inout RNG) -> Unit {
            let k = r.chance(60) ? 1 : 2 + r.int(2)
            let words = (0..<k).map { _ in r.chance(15) ? r.pick(["oa*", "e*", "f*"]) : r.pick(vocab) }
            return Unit(words, column: r.chance(30) ? r.pick(cols) : nil)
        }
        func verify(_ context: String, _ r: inout RNG) throws {
            for i in 0..<25 {
                let q = i < 10 ? Q.and((0..<(1 + r.int(3))).map { _ in .unit(unit(&r)) }) : Self.query(&r, depth: 2, unit: unit)
                let want = modelRanks(q)
                let got = Dictionary(try Self.ranks(db, "SELECT meta().id AS id, rank(ft) AS r FROM docs WHERE match(ft, $q)",
                                                    ["q": .string(q.text)]), uniquingKeysWith: { a, _ in a })
                #expect(Set(got.keys) == Set(want.keys), "\(context): match(ft, '\(q.text)') documents")
                let bad = want.filter { id, w in got[id].map { abs($0 - w) > 1e-9 * max(1, abs(w)) } ?? false }
                #expect(bad.isEmpty, "\(context): match(ft, '\(q.text)') ranks differ for \(bad.count) documents, e.g. \(bad.first.map { "\($0.key): want \($0.value) got \(got[$0.key]!)" } ?? "")")
            }
        }
        try verify("seed \(seed) initial", &r)
        for _ in 0..<150 {
            let id = "r\(r.int(1_100))"
            if r.chance(30) {
                if docs[id] != nil { try coll.delete(id: id); docs[id] = nil }
            } else {
                try save(id, &r)
            }
        }
        try verify("seed \(seed) after edits", &r)
        try db.inBatch {
            for _ in 0..<50 { try save("r\(r.int(1_200))", &r) }
            try verify("seed \(seed) inside a batch", &r)
        }
    }

    // MARK: - 9. Re-executed queries, joins

    /// A query object executed again after writes sees them (nothing cached across
    /// executions), and an open result set keeps its snapshot.
    @Test func reexecutedQueriesSeeNewWrites() throws {
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        try coll.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: ""))
        try coll.save(id: "a", properties: ["body": "amber"])
        let q = try db.createQuery("SELECT meta().id AS id FROM docs WHERE match(ft, $q) ORDER BY rank(ft) DESC LIMIT 10")
        q.parameters = Parameters(["q": "amber"])
        #expect(try q.execute().allResults().compactMap { $0.string(forKey: "id") } == ["a"])
        try coll.save(id: "b", properties: ["body": "amber amber"])
        try coll.save(id: "a", properties: ["body": "birch"])
        #expect(try q.execute().allResults().compactMap { $0.string(forKey: "id") } == ["b"])
        let rs1 = try q.execute()
        try coll.save(id: "c", properties: ["body": "amber"])
        let rs2 = try q.execute()
        #expect(try rs1.allResults().compactMap { $0.string(forKey: "id") } == ["b"])
        #expect(try rs2.allResults().compactMap { $0.string(forKey: "id") }.sorted() == ["b", "c"])
    }

    /// MATCH on the inner side of a join, with the search text taken from the outer row: the
    /// scan re-evaluates per outer row.
    @Test func matchTextFromTheOuterRowOfAJoin() throws {
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        let words = try db.createCollection(name: "words")
        try coll.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: ""))
        try coll.save(id: "a", properties: ["body": "amber birch"])
        try coll.save(id: "b", properties: ["body": "birch cedar"])
        try words.save(id: "w1", properties: ["w": "birch"])
        try words.save(id: "w2", properties: ["w": "cedar"])
        try words.save(id: "w3", properties: ["w": "zzz"])
        try words.save(id: "w4", properties: ["w": "birch"])
        let q = try db.createQuery("SELECT meta(w).id AS w, meta(d).id AS d FROM words AS w JOIN docs AS d ON true WHERE match(d.ft, w.w) ORDER BY meta(w).id, meta(d).id")
        let got = try q.execute().allResults().map { "\($0.string(forKey: "w") ?? "?")-\($0.string(forKey: "d") ?? "?")" }
        #expect(got == ["w1-a", "w1-b", "w2-b", "w4-a", "w4-b"])
    }

    // MARK: - 10. Tiny corpora that empty and refill

    /// A handful of document IDs and three words: batches save, re-save, delete and purge the
    /// same documents so the postings table is often empty at a flush (the append path) while
    /// the queue holds streams, records and removals of one document; reads inside the batch
    /// force flushes between them.
    @Test(arguments: [101, 102, 103] as [UInt64])
    func emptyingAndRefilling(seed: UInt64) throws {
        var r = RNG(seed: seed)
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        try coll.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: ""))
        let vocab = ["a", "b", "ab"]
        let cols = ["body"]
        var docs: [String: Doc] = [:]
        func verify(_ context: String) throws {
            for w in vocab + ["a*", "b*"] { try Self.check(db, "ft", .unit(Unit([w])), docs, columnNames: cols, context) }
            try Self.check(db, "ft", .unit(Unit(["a", "b"])), docs, columnNames: cols, context)
            try Self.check(db, "ft", .unit(Unit(["a", "a"])), docs, columnNames: cols, context)
        }
        for round in 0..<60 {
            try db.inBatch {
                for step in 0..<(1 + r.int(8)) {
                    let id = "e\(r.int(4))"
                    switch r.int(10) {
                    case 0..<5:
                        let text = (0..<r.int(5)).map { _ in r.pick(vocab) }.joined(separator: " ")
                        try coll.save(id: id, properties: ["body": .string(text)])
                        docs[id] = Self.doc([text], columnNames: cols, stemmer: nil)
                    case 5, 6:
                        if docs[id] != nil { try coll.delete(id: id); docs[id] = nil }
                    case 7:
                        try? coll.purge(id: id)
                        docs[id] = nil
                    default:
                        try verify("seed \(seed) round \(round) step \(step) inside")
                    }
                }
            }
            try verify("seed \(seed) round \(round)")
            if round % 10 == 9 { try Self.checkIntegrity(db, "seed \(seed) round \(round)") }
        }
    }

    // MARK: - 11. ignoreAccents

    /// An `ignoreAccents` index: accented and plain spellings are one term, in documents and
    /// queries, for terms, prefixes (`ré*` finds `resume`) and phrases.
    @Test func ignoreAccentsFoldsBothSides() throws {
        var r = RNG(seed: 111)
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        try coll.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], ignoreAccents: true, language: ""))
        try coll.createIndex(withName: "ftExact", config: FullTextIndexConfiguration(["body"], ignoreAccents: false, language: ""))
        let vocab = ["café", "cafe", "CAFÉ", "résumé", "resume", "naïve", "naive", "über", "uber", "re"]
        func strip(_ s: String) -> String {
            String(s.map { c -> Character in
                switch c {
                case "é", "É": return "e"
                case "ï": return "i"
                case "ü": return "u"
                default: return c
                }
            })
        }
        var folded: [String: Doc] = [:]
        var exact: [String: Doc] = [:]
        for i in 0..<600 {
            let text = (0..<(1 + r.int(6))).map { _ in r.pick(vocab) }.joined(separator: " ")
            try coll.save(id: "i\(i)", properties: ["body": .string(text)])
            folded["i\(i)"] = Self.doc([strip(text.lowercased())], columnNames: ["body"], stemmer: nil)
            exact["i\(i)"] = Self.doc([text], columnNames: ["body"], stemmer: nil)
        }
        let queries: [[String]] = [["café"], ["cafe"], ["CAFE"], ["résumé"], ["resume"], ["ré*"], ["re*"], ["caf*"], ["naï*"],
                                   ["café", "résumé"], ["cafe", "resume"], ["über", "naive"], ["ü*"], ["u*"]]
        for q in queries {
            let f = Unit(q.map { strip($0.lowercased()) })
            let want = Self.expected(.unit(f), folded, columnNames: ["body"])
            let got = try Self.run(db, "ft", Unit(q).text)
            #expect(got == want, "ignoreAccents '\(Unit(q).text)': \(want.count) expected, \(got.count) found")
            try Self.check(db, "ftExact", .unit(Unit(q)), exact, columnNames: ["body"], "accents significant")
        }
        try Self.checkIntegrity(db, "ignoreAccents")
    }

    // MARK: - 12. Changes before a term's first block

    /// A term held only by high-numbered documents (several blocks) is added to low-numbered
    /// documents one by one in descending order, singly and in batches, so every change lands
    /// before the term's first block; then removed from the first documents of each block and
    /// from every other document. Matches, a two-word phrase and the integrity check follow the
    /// model throughout.
    @Test func changesBeforeTheFirstBlock() throws {
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        try coll.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: ""))
        let cols = ["body"]
        var docs: [String: Doc] = [:]
        func save(_ i: Int, _ text: String) throws {
            try coll.save(id: "f\(i)", properties: ["body": .string(text)])
            docs["f\(i)"] = Self.doc([text], columnNames: cols, stemmer: nil)
        }
        try db.inBatch {
            for i in 0..<2_000 { try save(i, i >= 1_500 ? "rare common \(i % 7)" : "common \(i % 7)") }
        }
        func verify(_ context: String) throws {
            for q in [["rare"], ["rare", "common"], ["common", "rare"], ["ra*"], ["common"]] {
                try Self.check(db, "ft", .unit(Unit(q)), docs, columnNames: cols, context)
            }
        }
        try verify("initial")
        var i = 1_499
        while i >= 0 {
            if i % 3 == 0 {
                let low = max(0, i - 40)
                try db.inBatch { for k in stride(from: i, through: low, by: -1) { try save(k, "common rare \(k % 5)") } }
                i = low - 1
            } else {
                try save(i, "common rare \(i % 5)")
                i -= 1
            }
            if i % 250 < 41 { try verify("added down to \(i)") }
        }
        try verify("all added")
        try Self.checkIntegrity(db, "all added")
        // Remove it again: every 37th document, then all in one batch but the last.
        for k in stride(from: 0, to: 2_000, by: 37) { try save(k, "common") }
        try verify("holes")
        try Self.checkIntegrity(db, "holes")
        try db.inBatch { for k in 0..<1_999 { try save(k, "common") } }
        try verify("one left")
        #expect(try Self.run(db, "ft", "rare") == ["f1999"])
        try Self.checkIntegrity(db, "one left")
    }

    // MARK: - Huge limits (crashed before: limit + offset overflowed, Int64(1e19) trapped)

    /// LIMIT near Int64.max with an OFFSET, in the full-text top-K and the ordinary top-K.
    @Test func hugeLimitWithOffset() throws {
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        try coll.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: ""))
        try coll.save(id: "a", properties: ["body": "amber"])
        try coll.save(id: "b", properties: ["body": "amber birch"])
        let ranked = try db.createQuery("SELECT meta().id AS id FROM docs WHERE match(ft, 'amber') ORDER BY rank(ft) DESC LIMIT 9223372036854775807 OFFSET 1")
        #expect(try ranked.execute().allResults().count == 1)
        let sorted = try db.createQuery("SELECT meta().id AS id FROM docs ORDER BY meta().id LIMIT $l OFFSET $o")
        sorted.parameters = Parameters(["l": .int(Int64.max), "o": .int(Int64.max)])
        #expect(try sorted.execute().allResults().isEmpty)
        sorted.parameters = Parameters(["l": .int(Int64.max), "o": .int(1)])
        #expect(try sorted.execute().allResults().compactMap { $0.string(forKey: "id") } == ["b"])
    }

    /// A double LIMIT parameter beyond Int64's range means no practical limit; a literal one is
    /// rejected by the analyzer.
    @Test func hugeDoubleLimit() throws {
        let (db, coll) = try temporaryDocsDatabase()
        defer { try? db.close() }
        try coll.createIndex(withName: "ft", config: FullTextIndexConfiguration(["body"], language: ""))
        try coll.save(id: "a", properties: ["body": "amber"])
        try coll.save(id: "b", properties: ["body": "birch"])
        let q = try db.createQuery("SELECT meta().id AS id FROM docs WHERE match(ft, 'amber') ORDER BY rank(ft) DESC LIMIT $l")
        q.parameters = Parameters(["l": .double(1e19)])
        #expect(try q.execute().allResults().count == 1)
        q.parameters = Parameters(["l": .double(1e300)])
        #expect(try q.execute().allResults().count == 1)
        // Written in the query, such a LIMIT is a typed error, not a crash.
        #expect(throws: QueryError.self) { try db.createQuery("SELECT meta().id AS id FROM docs ORDER BY meta().id LIMIT 1e19").execute() }
    }
}
