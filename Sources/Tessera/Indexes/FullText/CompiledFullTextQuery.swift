/// A full-text query bound to one index: every word has been through the index's tokenizer
/// (SPEC §10.1 steps 2–5) and column names are resolved to column numbers.
///
/// Compilation rules:
/// - A word that yields several tokens (`don't`, `foo-bar`) is a phrase of them.
/// - Stop words vanish but keep their position, so `"kind of magic"` matches `kind` then
///   `magic` two positions later.
/// - A word or phrase made only of stop words constrains nothing: it is dropped from AND, OR,
///   NOT (right side) and NEAR; a query left with nothing matches no documents.
/// - A prefix (`happ*`) is folded but neither stop-word filtered nor stemmed, and also looks up
///   its stem (`happy*` also finds `happi…`, the stem of "happiness").
/// - `column:` resolves against the index's expression names, exactly and then
///   case-insensitively; an unknown name is a `.semantic` `QueryError`. Nested, different
///   columns (`a:(b:x)`) match nothing.
package struct CompiledFullTextQuery: Sendable {
    /// A term or prefix to look up in the postings.
    enum Leaf: Hashable, Sendable {
        /// Exactly this term.
        case term(String)
        /// Any term starting with one of these (non-overlapping) prefixes.
        case prefix([String])
    }

    /// A leaf lookup, limited to one column or not.
    struct LeafKey: Hashable, Sendable {
        var leaf: Leaf
        var column: Int?
    }

    /// A term, prefix or phrase: leaves at relative positions (offsets ascending, first 0).
    struct Unit: Sendable {
        var parts: [(leaf: Int, offset: Int)]
        var column: Int?
        var span: Int { parts[parts.count - 1].offset }
    }

    /// The compiled tree.
    indirect enum Node: Sendable {
        /// No constraint (a word made of stop words).
        case empty
        /// Matches nothing (contradictory columns).
        case never
        case unit(Int)
        case near([Int], distances: [Int])
        case and([Node])
        case or([Node])
        case not(Node, Node)
    }

    /// The most words (terms, prefixes and phrase words, stop words not counted) a query may
    /// search for (README "Limits").
    static let maxWords = 256

    /// The parsed query this was compiled from.
    let query: FullTextQuery
    /// The index's column (expression) names.
    let columnNames: [String]
    let root: Node
    let units: [Unit]
    let leaves: [LeafKey]

    /// True when nothing is left to search for (only stop words): matches no documents.
    var isEmpty: Bool {
        if case .empty = root { return true }
        if case .never = root { return true }
        return false
    }

    /// Parses and compiles a query string for an index.
    ///
    /// - Parameters:
    ///   - text: The query (SPEC §10.3 syntax).
    ///   - tokenizer: The index's tokenizer (language, `ignoreAccents`).
    ///   - columns: The index's expression names, in column order (for `column:` filters).
    /// - Throws: `QueryError` (`.syntax` from parsing, `.semantic` for an unknown column).
    init(_ text: String, tokenizer: FullTextTokenizer, columns: [String]) throws {
        try self.init(FullTextQuery.parse(text), tokenizer: tokenizer, columns: columns)
    }

    /// Compiles a parsed query for an index.
    ///
    /// - Throws: `QueryError(.semantic)` for a `column:` that names no column of the index.
    package init(_ query: FullTextQuery, tokenizer: FullTextTokenizer, columns: [String]) throws {
        var compiler = FullTextQueryCompiler(query: query, tokenizer: tokenizer, columns: columns)
        let root = try compiler.compile(query.root, column: nil)
        // Each word of each phrase is looked up and, for phrases, matched position by
        // position in every candidate document: bound the work.
        let words = compiler.units.reduce(0) { $0 + $1.parts.count }
        guard words <= CompiledFullTextQuery.maxWords else {
            throw QueryError(.semantic, "full-text query too long: \(words) words (at most \(CompiledFullTextQuery.maxWords), phrases included)")
        }
        self.query = query
        self.columnNames = columns
        self.root = root
        self.units = compiler.units
        self.leaves = compiler.leaves
    }

    /// The compiled tree as an S-expression, for tests and EXPLAIN: terms as `run`, prefixes
    /// as `lin*` (alternatives joined by `|`), phrases as `"a _ b"` (`_` = a skipped position),
    /// columns as `#1:term`.
    var debugDescription: String { describe(root) }

    func describe(_ n: Node) -> String {
        switch n {
        case .empty: return "EMPTY"
        case .never: return "NEVER"
        case .unit(let u): return describeUnit(u)
        case .near(let us, let ds):
            var s = "NEAR(" + describeUnit(us[0])
            for (d, u) in zip(ds, us.dropFirst()) { s += " /\(d) " + describeUnit(u) }
            return s + ")"
        case .and(let xs): return "AND(" + xs.map(describe).joined(separator: ", ") + ")"
        case .or(let xs): return "OR(" + xs.map(describe).joined(separator: ", ") + ")"
        case .not(let a, let b): return "NOT(\(describe(a)), \(describe(b)))"
        }
    }

    func describeUnit(_ u: Int) -> String {
        let unit = units[u]
        var words: [String] = []
        var expected = 0
        for part in unit.parts {
            while expected < part.offset {
                words.append("_")
                expected += 1
            }
            switch leaves[part.leaf].leaf {
            case .term(let t): words.append(t)
            case .prefix(let ps): words.append(ps.joined(separator: "|") + "*")
            }
            expected = part.offset + 1
        }
        let body = words.count == 1 ? words[0] : "\"" + words.joined(separator: " ") + "\""
        return unit.column.map { "#\($0):" + body } ?? body
    }
}

/// Builds a `CompiledFullTextQuery`.
struct FullTextQueryCompiler {
    let query: FullTextQuery
    let tokenizer: FullTextTokenizer
    let columns: [String]
    var units: [CompiledFullTextQuery.Unit] = []
    var leaves: [CompiledFullTextQuery.LeafKey] = []
    var leafIndex: [CompiledFullTextQuery.LeafKey: Int] = [:]

    init(query: FullTextQuery, tokenizer: FullTextTokenizer, columns: [String]) {
        self.query = query
        self.tokenizer = tokenizer
        self.columns = columns
    }

    typealias Node = CompiledFullTextQuery.Node

    mutating func compile(_ node: FullTextQuery.Node, column: Int?) throws -> Node {
        switch node {
        case .word(let w, _):
            return unit(from: [w], column: column)
        case .phrase(let p, _):
            let words = p.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
            return unit(from: words.map(String.init), column: column)
        case .and(let xs):
            return Self.and(try xs.map { try compile($0, column: column) })
        case .or(let xs):
            return Self.or(try xs.map { try compile($0, column: column) })
        case .not(let a, let b):
            let l = try compile(a, column: column)
            let r = try compile(b, column: column)
            switch (l, r) {
            case (.empty, _): return .empty
            case (.never, _): return .never
            case (_, .empty), (_, .never): return l
            default: return .not(l, r)
            }
        case .near(let xs, let ds):
            var kept: [Int] = []
            var distances: [Int] = []
            // The distance from the last kept operand to the next one; a stop-word-only
            // operand is skipped and the chain closes over it with the wider distance.
            var pending: Int? = nil
            for (i, x) in xs.enumerated() {
                if i > 0 { pending = max(pending ?? ds[i - 1], ds[i - 1]) }
                switch try compile(x, column: column) {
                case .never:
                    return .never
                case .unit(let u):
                    if !kept.isEmpty, let d = pending { distances.append(d) }
                    kept.append(u)
                    pending = nil
                default:
                    continue
                }
            }
            if kept.isEmpty { return .empty }
            if kept.count == 1 { return .unit(kept[0]) }
            return .near(kept, distances: distances)
        case .column(let name, let inner, let location):
            guard let c = resolveColumn(name) else {
                let list = columns.isEmpty ? "none" : columns.joined(separator: ", ")
                throw QueryError(.semantic, "unknown full-text column '\(name)' (columns: \(list))",
                                 at: location, token: name + ":", source: query.source)
            }
            if let column, column != c { return .never }
            return try compile(inner, column: c)
        }
    }

    func resolveColumn(_ name: String) -> Int? {
        if let i = columns.firstIndex(of: name) { return i }
        let lower = name.lowercased()
        let matches = columns.indices.filter { columns[$0].lowercased() == lower }
        return matches.count == 1 ? matches[0] : nil
    }

    /// A term, prefix or phrase from whitespace-separated raw words.
    mutating func unit(from rawWords: [String], column: Int?) -> Node {
        var parts: [(leaf: CompiledFullTextQuery.Leaf, position: Int)] = []
        var position = 0
        for raw in rawWords {
            var text = Substring(raw)
            let isPrefix = text.hasSuffix("*")
            while text.hasSuffix("*") { text = text.dropLast() }
            let (words, _) = tokenizer.queryWords(in: String(text), startingAt: 0)
            // SPEC §10.1 step 6: positions count kept tokens only, as in documents: a stop
            // word takes none (a prefix is never a stop word).
            for (k, w) in words.enumerated() {
                if isPrefix && k == words.count - 1 {
                    parts.append((.prefix(Self.prefixAlternatives([w.normalized, w.stem])), position))
                    position += 1
                } else if let term = w.term {
                    parts.append((.term(term), position))
                    position += 1
                }
            }
        }
        guard let first = parts.first?.position else { return .empty }
        var unit = CompiledFullTextQuery.Unit(parts: [], column: column)
        for p in parts {
            unit.parts.append((leaf: leafID(CompiledFullTextQuery.LeafKey(leaf: p.leaf, column: column)),
                               offset: p.position - first))
        }
        units.append(unit)
        return .unit(units.count - 1)
    }

    /// Distinct, non-empty prefixes, none covered by a shorter one.
    static func prefixAlternatives(_ candidates: [String]) -> [String] {
        let sorted = Set(candidates.filter { !$0.isEmpty }).sorted {
            $0.utf8.count != $1.utf8.count ? $0.utf8.count < $1.utf8.count : $0.utf8.lexicographicallyPrecedes($1.utf8)
        }
        var out: [String] = []
        for c in sorted where !out.contains(where: { c.utf8.starts(with: $0.utf8) }) { out.append(c) }
        return out.isEmpty ? [""] : out
    }

    mutating func leafID(_ key: CompiledFullTextQuery.LeafKey) -> Int {
        if let i = leafIndex[key] { return i }
        leaves.append(key)
        leafIndex[key] = leaves.count - 1
        return leaves.count - 1
    }

    static func and(_ xs: [Node]) -> Node {
        var out: [Node] = []
        for x in xs {
            switch x {
            case .empty: continue
            case .never: return .never
            case .and(let ys): out.append(contentsOf: ys)
            default: out.append(x)
            }
        }
        if out.isEmpty { return .empty }
        return out.count == 1 ? out[0] : .and(out)
    }

    static func or(_ xs: [Node]) -> Node {
        var out: [Node] = []
        var sawNever = false
        for x in xs {
            switch x {
            case .empty: continue
            case .never: sawNever = true
            case .or(let ys): out.append(contentsOf: ys)
            default: out.append(x)
            }
        }
        if out.isEmpty { return sawNever ? .never : .empty }
        return out.count == 1 ? out[0] : .or(out)
    }
}

extension FullTextQuery {
    /// Compiles this query for an index (see `CompiledFullTextQuery`).
    ///
    /// - Throws: `QueryError(.semantic)` for an unknown `column:`.
    func compile(tokenizer: FullTextTokenizer, columns: [String]) throws -> CompiledFullTextQuery {
        try CompiledFullTextQuery(self, tokenizer: tokenizer, columns: columns)
    }
}
