import Synchronization

/// One token of a text: its term (folded, stemmed) and its position.
struct FullTextToken: Sendable, Hashable, CustomStringConvertible {
    /// The indexed form: case-folded, accent-stripped if configured, stemmed.
    var term: String
    /// The 0-based ordinal of the token in its column's token stream, counted **before**
    /// stop-word removal, so that phrase and `NEAR` distances match the text.
    var position: Int

    /// Creates a token.
    init(term: String, position: Int) {
        self.term = term
        self.position = position
    }

    /// `term@position`.
    var description: String { "\(term)@\(position)" }
}

/// The full-text tokenizer of SPEC §10.1, shared by indexing and querying.
///
/// Pipeline, per column:
/// 1. Text of a value: strings as is, numbers in decimal, booleans `true`/`false`, arrays and
///    objects all nested scalars (object members in code-point order of their keys) joined by
///    spaces, MISSING/NULL nothing.
/// 2. Tokens: maximal runs of L*, N*, Co code points, with combining marks (M*) that follow
///    such a code point; everything else separates (`don't` → `don`, `t`; `3.2` → `3`, `2`).
/// 3. Full Unicode case folding; with `ignoreAccents`, canonical decomposition and removal of
///    nonspacing/enclosing marks (`Résumé` → `resume`). Otherwise tokens are NFC-normalised,
///    so precomposed and decomposed accents are the same token.
/// 4. Stop words (English and French only), compared after steps 2–3.
/// 5. Snowball stemming (`running` → `run`); terms are cut to `FullTextSearch.maxTermLength`
///    UTF-8 bytes.
///
/// **Positions** count the kept tokens only (SPEC §10.1 step 6): a stop word is dropped
/// before positions are assigned, so in `"the quick fox"` `quick` is at 0 and `fox` at 1, and
/// the phrase `"view nights"` matches `view of the nights`. Each column starts at 0.
///
/// ```swift
/// let t = FullTextTokenizer(language: "en")
/// t.tokens(in: "The Runners' café")   // [runner@0, café@1]
/// ```
///
/// A tokenizer is `Sendable` and cheap to copy; concurrent calls are safe. Each call leases a
/// private workspace (a Snowball stemmer, which is not thread-safe, plus caches) from a
/// lock-protected pool, so keep one tokenizer per index rather than creating one per call.
///
/// - Complexity: O(n) in the UTF-8 length of the text. Stemming and stop-word checks run once
///   per distinct word per workspace (the workspace caches them), not once per token.
package struct FullTextTokenizer: Sendable {
    /// The resolved language (stemmer and stop words).
    let language: FullTextLanguage
    /// True if diacritics are stripped (`café` ≡ `cafe`).
    let ignoreAccents: Bool
    let pool: TokenizerWorkspacePool

    /// Creates a tokenizer.
    ///
    /// - Parameters:
    ///   - language: ISO-639 code or English name (see `FullTextLanguage`); `nil` means English,
    ///     `""` means no stemming and no stop words.
    ///   - ignoreAccents: Strip diacritics when true.
    package init(language: String? = "en", ignoreAccents: Bool = false) {
        self.init(language: FullTextLanguage(language), ignoreAccents: ignoreAccents)
    }

    /// Creates a tokenizer for a resolved language.
    init(language: FullTextLanguage, ignoreAccents: Bool = false) {
        self.language = language
        self.ignoreAccents = ignoreAccents
        self.pool = TokenizerWorkspacePool(TokenizerSettings(
            stemmerAlgorithm: language.stemmerAlgorithm, ignoreAccents: ignoreAccents, stopWords: language.stopWords))
    }

    // MARK: - Tokens

    /// The tokens of a text, positions from 0.
    func tokens(in text: String) -> [FullTextToken] {
        pool.withWorkspace { ws in
            ws.beginTokenizing()
            ws.scan(text)
            return ws.collectTokens()
        }
    }

    /// The tokens of a value's text (SPEC §10.1 rule 1), positions from 0.
    func tokens(in value: Value) -> [FullTextToken] {
        pool.withWorkspace { ws in
            ws.beginTokenizing()
            ws.scanValue(value)
            return ws.collectTokens()
        }
    }

    /// The terms of a text, in order (stop words removed): `"Running dogs"` → `["run", "dog"]`.
    func terms(in text: String) -> [String] {
        tokens(in: text).map(\.term)
    }

    /// The text of a value for full-text indexing (SPEC §10.1 rule 1): strings as is, numbers
    /// in decimal, booleans `true`/`false`, arrays and objects all nested scalars joined by
    /// spaces (object members ordered by key), MISSING, NULL and non-finite numbers nothing.
    static func text(of value: Value) -> String {
        var parts: [String] = []
        forEachText(of: value) { parts.append(String(decoding: $0, as: UTF8.self)) }
        return parts.joined(separator: " ")
    }

    /// Calls `body` with the UTF-8 text of every nested scalar of `value`, in order.
    static func forEachText(of value: Value, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        switch value {
        case .missing, .null:
            return
        case .bool(let b):
            var s = b ? "true" : "false"
            s.withUTF8(body)
        case .int(let i):
            var s = String(i)
            s.withUTF8(body)
        case .double(let d):
            guard d.isFinite else { return }
            // SPEC §5.5: a Double's text has `.0` when integral (`2.0` gives the tokens 2, 0).
            var s = numberText(d)
            s.withUTF8(body)
        case .string(var s):
            s.withUTF8(body)
        case .array(let a):
            for e in a { forEachText(of: e, body) }
        case .object(let o):
            for k in o.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                forEachText(of: o[k]!, body)
            }
        }
    }

    // MARK: - Index entries

    /// The postings of one document: for every term, the positions of each column.
    ///
    /// `columns[i]` is the value of the index's i-th expression for the document. Entries come
    /// in order of the term's first occurrence. This is the convenient form; indexing uses
    /// `forEachIndexEntry(for:_:)`, which hands out the encoded bytes without allocating.
    func indexEntries(for columns: [Value]) -> FullTextDocumentTerms {
        var entries: [FullTextTermEntry] = []
        let count = forEachIndexEntry(for: columns) { term, value in
            let decoded = (try? FullTextPostingsCodec.decodePositions(value)) ?? []
            entries.append(FullTextTermEntry(term: String(decoding: term, as: UTF8.self), columns: decoded))
        }
        return FullTextDocumentTerms(entries: entries, tokenCount: count)
    }

    /// Tokenizes a document's columns and calls `body` once per distinct term with the term's
    /// UTF-8 bytes and its encoded positions (`FullTextPostingsCodec` format: for each column
    /// holding the term, column number, count and delta-encoded positions).
    ///
    /// The buffers are valid only during the call to `body`. The engine stores them in a
    /// posting entry with the term's frequency and the returned token count (the document's
    /// BM25 length); see `FullTextPostingsCodec.appendEntryBody`.
    ///
    /// ```swift
    /// var entries: [String: [UInt8]] = [:]
    /// let tokenCount = tokenizer.forEachIndexEntry(for: [title, body]) { term, positions in
    ///     entries[String(decoding: term, as: UTF8.self)] = Array(positions)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - columns: The document's value for each index expression, in column order.
    ///   - body: Called once per term, in order of first occurrence.
    /// - Returns: The number of indexed tokens (stop words excluded) over all columns — the
    ///   document length used by BM25.
    @discardableResult
    func forEachIndexEntry(
        for columns: [Value],
        _ body: (_ term: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) throws -> Void
    ) rethrows -> Int {
        try forEachInternedEntry(for: columns) { _, _, _, term, value, _ in try body(term, value) }
    }

    /// Like `forEachIndexEntry(for:_:)`, for bulk indexing: also hands out the term's ID in
    /// the workspace's term cache (stable while `cacheKey` — workspace and cache generation —
    /// stays the same, so callers can map IDs to their own term slots without hashing bytes)
    /// and the document's token count up front.
    @discardableResult
    func forEachInternedEntry(
        for columns: [Value],
        _ body: InternedEntryBody
    ) rethrows -> Int {
        try internedEntries(columns: columns.count, { ws, c in ws.scanValue(columns[c]) }, body)
    }

    /// `forEachInternedEntry(for:_:)` over columns read in place from a binary document (nil:
    /// MISSING): strings are scanned from the document's bytes, with no `String` made (bytes
    /// that are not valid UTF-8, possible only in a damaged file, are repaired as `String`
    /// does); other values are converted to `Value` first.
    @discardableResult
    func forEachInternedEntry(
        forBinary columns: [BinaryValue?],
        _ body: InternedEntryBody
    ) rethrows -> Int {
        try internedEntries(columns: columns.count, { ws, c in
            guard let v = columns[c] else { return }
            let scanned: Bool? = v.withUTF8 { raw in
                guard isValidUTF8(raw) else { return false }
                ws.scan(bytes: raw.assumingMemoryBound(to: UInt8.self))
                return true
            }
            if scanned != true { ws.scanValue(v.toValue()) }
        }, body)
    }

    /// Scans a document's columns (`scanColumn` for each of `columns`), groups the tokens by
    /// term and calls `body` once per distinct term.
    @inline(__always)
    private func internedEntries(
        columns: Int,
        _ scanColumn: (TokenizerWorkspace, Int) -> Void,
        _ body: InternedEntryBody
    ) rethrows -> Int {
        try pool.withWorkspace { ws in
            ws.beginTokenizing()
            for c in 0..<columns {
                ws.column = Int32(c)
                ws.position = 0
                scanColumn(ws, c)
            }
            ws.groupTokens()
            let key = TermCacheKey(workspace: ws.serial, generation: ws.generation)
            let tokenCount = ws.tokens.count
            var start = 0
            for k in 0..<ws.groupOrder.count {
                let end = Int(ws.valueEnds.base[k])
                let value = UnsafeBufferPointer(start: ws.valueBytes.base + start, count: end - start)
                let id = ws.groupOrder.base[k]
                try body(key, tokenCount, id, ws.termUTF8(id), value, Int(ws.valueFrequencies.base[k]))
                start = end
            }
            return tokenCount
        }
    }

    // MARK: - Query words

    /// One word of a query, through steps 2–3 (`normalized`) and 4–5 (`term`).
    struct QueryWord {
        /// Folded and accent-stripped (if configured), cut to the maximum term length.
        var normalized: String
        /// The indexed term, or nil for a stop word.
        var term: String?
        /// The stem of `normalized`, ignoring stop words (for prefixes).
        var stem: String
        /// Position relative to the start of the analysed text.
        var position: Int
    }

    /// Analyses query text: the same pipeline as indexing, keeping what prefixes need.
    func queryWords(in text: String, startingAt start: Int) -> (words: [QueryWord], next: Int) {
        pool.withWorkspace { ws in
            let raw = ws.normalizedWords(text, startingAt: UInt32(start))
            let next = Int(ws.position)
            let words = raw.map { w -> QueryWord in
                QueryWord(
                    normalized: FullTextUnicode.truncated(w.word, toUTF8Length: FullTextSearch.maxTermLength),
                    term: ws.analyze(w.word),
                    stem: FullTextUnicode.truncated(ws.stem(w.word), toUTF8Length: FullTextSearch.maxTermLength),
                    position: Int(w.position))
            }
            return (words, next)
        }
    }
}

/// The postings of one document, as produced by `FullTextTokenizer.indexEntries(for:)`.
struct FullTextDocumentTerms: Sendable, Hashable {
    /// One entry per distinct term, in order of first occurrence.
    var entries: [FullTextTermEntry]
    /// Indexed tokens over all columns (stop words excluded): the BM25 document length.
    var tokenCount: Int

    /// Creates document terms.
    init(entries: [FullTextTermEntry], tokenCount: Int) {
        self.entries = entries
        self.tokenCount = tokenCount
    }
}

/// One term of a document and where it occurs.
struct FullTextTermEntry: Sendable, Hashable {
    /// The term.
    var term: String
    /// The columns holding the term, ascending, each with its positions.
    var columns: [FullTextColumnPositions]

    /// Creates an entry.
    init(term: String, columns: [FullTextColumnPositions]) {
        self.term = term
        self.columns = columns
    }
}

/// The positions of a term in one column of one document.
struct FullTextColumnPositions: Sendable, Hashable {
    /// The column (index of the full-text index's expression), from 0.
    var column: Int
    /// Token positions, ascending.
    var positions: [UInt32]

    /// Creates column positions.
    init(column: Int, positions: [UInt32]) {
        self.column = column
        self.positions = positions
    }
}

// MARK: - Workspace pool

/// The workspaces of one tokenizer configuration.
final class TokenizerWorkspacePool: Sendable {
    /// Workspaces kept for reuse; more may exist while many threads tokenize at once.
    static let maxParked = 16
    let settings: TokenizerSettings
    /// Idle workspaces. A workspace taken out is used by one call only, then put back.
    private let free = Mutex<[TokenizerWorkspace]>([])

    init(_ settings: TokenizerSettings) {
        self.settings = settings
    }

    /// Runs `body` with a workspace nobody else is using.
    func withWorkspace<R>(_ body: (TokenizerWorkspace) throws -> R) rethrows -> R {
        let ws = free.withLock { $0.popLast() } ?? TokenizerWorkspace(settings)
        defer {
            free.withLock { parked in
                if parked.count < TokenizerWorkspacePool.maxParked { parked.append(ws) }
            }
        }
        return try body(ws)
    }
}

/// What `FullTextTokenizer.forEachInternedEntry` calls once per distinct term of a document:
/// the term cache it used, the document's token count, the term's ID in that cache, its UTF-8
/// bytes, its encoded positions and its frequency (the number of those positions).
typealias InternedEntryBody = (_ cacheKey: TermCacheKey, _ tokenCount: Int, _ termID: Int32, _ term: UnsafeBufferPointer<UInt8>,
                               _ value: UnsafeBufferPointer<UInt8>, _ frequency: Int) throws -> Void

/// Identifies the term IDs of one workspace's term cache between two resets.
struct TermCacheKey: Equatable {
    var workspace: Int
    var generation: Int
}

// MARK: - Workspace: values, tokens, grouping

extension TokenizerWorkspace {
    /// Tokenizes the text of a value (SPEC §10.1 rule 1), continuing the current position.
    func scanValue(_ value: Value) {
        switch value {
        case .string(var s):
            s.withUTF8 { scan(bytes: $0) }
        case .missing, .null:
            return
        default:
            FullTextTokenizer.forEachText(of: value) { scan(bytes: $0) }
        }
    }

    /// The recorded tokens as public values.
    func collectTokens() -> [FullTextToken] {
        var out: [FullTextToken] = []
        out.reserveCapacity(tokens.count)
        for i in 0..<tokens.count {
            let t = tokens.base[i]
            out.append(FullTextToken(term: terms[Int(t.term)], position: Int(t.position)))
        }
        return out
    }

    /// Groups the recorded tokens by term and encodes each term's postings value into
    /// `valueBytes` (ends in `valueEnds`), in order of first occurrence (`groupOrder`).
    func groupTokens() {
        let termCount = terms.count
        if groupHead.count < termCount {
            if groupHead.capacity < termCount {
                groupHead.grow(to: termCount)
                groupTail.grow(to: termCount)
            }
            (groupHead.base + groupHead.count).initialize(repeating: -1, count: termCount - groupHead.count)
            groupHead.count = termCount
            groupTail.count = termCount
        }
        let n = tokens.count
        if groupNext.capacity < n { groupNext.grow(to: n) }
        groupNext.count = n
        groupOrder.count = 0
        let toks = tokens.base
        let head = groupHead.base
        let tail = groupTail.base
        let next = groupNext.base
        for i in 0..<n {
            let t = Int(toks[i].term)
            if head[t] < 0 {
                head[t] = Int32(i)
                groupOrder.append(Int32(t))
            } else {
                next[Int(tail[t])] = Int32(i)
            }
            tail[t] = Int32(i)
            next[i] = -1
        }
        valueBytes.count = 0
        valueEnds.count = 0
        valueFrequencies.count = 0
        for k in 0..<groupOrder.count {
            let t = Int(groupOrder.base[k])
            var i = Int(head[t])
            var frequency: Int32 = 0
            while i >= 0 {
                let column = toks[i].column
                var count: UInt64 = 0
                var j = i
                while j >= 0 && toks[j].column == column {
                    count &+= 1
                    j = Int(next[j])
                }
                frequency &+= Int32(truncatingIfNeeded: count)
                FullTextPostingsCodec.appendVarint(UInt64(column), to: &valueBytes)
                FullTextPostingsCodec.appendVarint(count, to: &valueBytes)
                var previous: UInt32 = 0
                j = i
                while j >= 0 && toks[j].column == column {
                    let p = toks[j].position
                    FullTextPostingsCodec.appendVarint(UInt64(p &- previous), to: &valueBytes)
                    previous = p
                    j = Int(next[j])
                }
                i = j
            }
            valueEnds.append(Int32(valueBytes.count))
            valueFrequencies.append(frequency)
            head[t] = -1
        }
    }
}
