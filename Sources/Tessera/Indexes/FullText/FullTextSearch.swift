// MARK: - Overview
//
// The storage-independent core of full-text search (SPEC §9.4, §10, §14).
//
// Indexing side
//   FullTextLanguage      resolves `language` (ISO-639 code or English name) to a Snowball
//                         algorithm and, for English and French only, a stop-word list.
//   Stemmer               a thin wrapper over one `sb_stemmer` (not thread-safe by itself).
//   FullTextTokenizer     the §10.1 pipeline: tokens → case folding → optional accent
//                         stripping → stop words → stemming, with positions. Sendable; it
//                         leases one private workspace (stemmer + caches) per call from a
//                         lock-protected pool, so any number of threads may use it at once.
//   FullTextPostingsCodec the LMDB layout: per-term blocks `term ‖ 0x00 ‖ BE32(first document
//                         number)` → entries (number delta, frequency, length, positions); the
//                         stats table numbers documents and keeps the BM25 corpus totals.
//
// Query side
//   FullTextQuery         the §10.3 syntax tree: `parse(_:)` and `safePattern(fromUserText:)`.
//   CompiledFullTextQuery a parsed query bound to one index (its tokenizer and column names);
//                         `evaluate(in:)` runs it over any `PostingsReader` and scores the
//                         matches with BM25.
//   PostingsReader        what evaluation needs from storage (each term's postings in
//                         document-number order); `InMemoryPostingsReader` is the in-memory
//                         reference implementation, `StoredPostingsReader` the engine's.

/// Constants and shared definitions of Tessera's full-text search.
///
/// Full-text search indexes the text of one or more expressions (columns) of each document,
/// and answers `MATCH(index, 'query')` with the documents that match and a BM25 `RANK`.
///
/// ```swift
/// let tokenizer = FullTextTokenizer(language: "en")
/// let reader = InMemoryPostingsReader()
/// reader.add(document: Array("doc1".utf8), columns: ["Running with the wolves"], tokenizer: tokenizer)
/// let query = try FullTextQuery.parse("run* NOT sheep").compile(tokenizer: tokenizer, columns: ["body"])
/// let matches = try query.evaluate(in: reader)      // doc1, with its rank
/// ```
enum FullTextSearch {
    /// BM25 term-frequency saturation (`k1`).
    static let bm25K1: Double = 1.2
    /// BM25 document-length normalisation (`b`).
    static let bm25B: Double = 0.75
    /// The distance of `NEAR` without `/n`: at most this many tokens between the operands.
    static let defaultNearDistance = 10
    /// The longest term, in UTF-8 bytes, that is indexed or searched. Longer tokens are cut at
    /// a Unicode scalar boundary, identically when indexing and when querying, so that a
    /// block key (`term ‖ 0x00 ‖ BE32(number)`) stays well under LMDB's 511-byte key limit.
    static let maxTermLength = 200
}
