// Full-text tokens made before a document's write transaction. Tokenizing is most of what a
// full-text index costs a save, and it needs no transaction: `tessera import` tokenizes each
// body on its parser thread (`FullTextPreparer`), next to the JSON encoding, and the save
// then only queues the entries (`FullTextIndexKind.updateUnchecked`). Entries are used only
// by an index whose definition is the one they were made for; any other save tokenizes.

/// One full-text index's entries for one document body, made by `FullTextPreparer`: what
/// `FullTextTokenizer.forEachInternedEntry` hands out, copied out of the tokenizer's workspace.
package struct PreparedFullText: Sendable {
    /// The index the entries were made for; an index with another definition ignores them.
    let definition: IndexDefinition
    /// The term cache the term IDs belong to (nil: the document has no terms).
    let cacheKey: TermCacheKey?
    /// The document's indexed token count (its BM25 length).
    let tokenCount: Int
    /// Per distinct term, in the tokenizer's order: its term ID, frequency, and where its
    /// UTF-8 bytes and encoded positions end in `bytes` (each starts where the previous ends).
    let entries: [Entry]
    let bytes: [UInt8]
    /// The run these entries were grouped into before the transaction (`FullTextRunPreparer`),
    /// and their document's place in it.
    var run: FullTextRun? = nil
    var ordinal: Int32 = 0

    struct Entry: Sendable {
        var termID: Int32
        var frequency: Int32
        var termEnd: Int32
        var valueEnd: Int32
    }

    /// Tokenizes the columns at `paths` of the binary document `root` with `kind`'s tokenizer.
    init(tokenizing root: BinaryValue, paths: [CompiledPath], kind: FullTextIndexKind) {
        let columns = paths.map { $0.lookup(in: root) }
        var key: TermCacheKey? = nil
        var entries: [Entry] = []
        var bytes: [UInt8] = []
        let tokenCount = kind.tokenizer.forEachInternedEntry(forBinary: columns) { k, _, id, term, value, frequency in
            key = k
            bytes.append(contentsOf: term)
            let termEnd = Int32(bytes.count)
            bytes.append(contentsOf: value)
            entries.append(Entry(termID: id, frequency: Int32(frequency), termEnd: termEnd, valueEnd: Int32(bytes.count)))
        }
        self.init(definition: kind.definition, cacheKey: key, tokenCount: tokenCount, entries: entries, bytes: bytes)
    }

    init(definition: IndexDefinition, cacheKey: TermCacheKey?, tokenCount: Int, entries: [Entry], bytes: [UInt8]) {
        self.definition = definition
        self.cacheKey = cacheKey
        self.tokenCount = tokenCount
        self.entries = entries
        self.bytes = bytes
    }

    /// Calls `body` with each entry, as `forEachInternedEntry` would have.
    func forEach(_ body: InternedEntryBody) rethrows {
        guard let key = cacheKey else { return }
        try bytes.withUnsafeBufferPointer { all in
            var start = 0
            for e in entries {
                let term = UnsafeBufferPointer(rebasing: all[start..<Int(e.termEnd)])
                let value = UnsafeBufferPointer(rebasing: all[Int(e.termEnd)..<Int(e.valueEnd)])
                try body(key, tokenCount, e.termID, term, value, Int(e.frequency))
                start = Int(e.valueEnd)
            }
        }
    }
}

/// Tokenizes document bodies for a collection's full-text indexes ahead of their saves, on
/// any thread (each call takes a tokenizer workspace of its own).
///
/// Covers the full-text indexes whose expressions are plain property paths and that have no
/// `where` (their text is read in place from the body); a save into any other index, or into
/// an index created or changed since, tokenizes as usual.
package final class FullTextPreparer: Sendable {
    private let indexes: [(kind: FullTextIndexKind, paths: [CompiledPath])]

    init(store: CollectionStore) {
        indexes = store.indexes.compactMap { index in
            guard let kind = index.kind as? FullTextIndexKind, let paths = index.plainPaths, index.whereClause == nil else { return nil }
            return (kind, paths)
        }
    }

    /// True if no index of the collection can use prepared entries.
    package var isEmpty: Bool { indexes.isEmpty }

    /// The entries of a binary document `body` for each covered index.
    func entries(forBody body: UnsafeRawBufferPointer) -> [PreparedFullText] {
        guard !indexes.isEmpty, let root = BinaryValue.root(body) else { return [] }
        return indexes.map { PreparedFullText(tokenizing: root, paths: $0.paths, kind: $0.kind) }
    }
}

/// The full-text entries of many documents (a piece of a back-fill, `PartitionedScan`), made
/// on one thread and read on another: all in a few buffers, not an array or two per document,
/// so that the reader frees a handful of blocks the maker allocated (freeing another thread's
/// many small blocks contends for its malloc arena, and stalled the maker).
struct TokenizedDocuments {
    private struct Item {
        var idEnd: Int
        var entriesEnd: Int
        var tokenCount: Int
        var cacheKey: TermCacheKey?
    }

    private struct Entry {
        var termID: Int32
        var frequency: Int32
        var termEnd: Int
        var valueEnd: Int
    }

    private var documents: [Item] = []
    private var entries: [Entry] = []
    /// Each document's ID, then its entries' terms and encoded positions, back to back.
    private var bytes: [UInt8] = []

    init() {}

    /// Tokenizes a document's `columns` with `tokenizer` and keeps its entries under `id`.
    mutating func add(id: UnsafeRawBufferPointer, columns: [BinaryValue?], tokenizer: FullTextTokenizer) {
        bytes.append(contentsOf: id)
        let idEnd = bytes.count
        var key: TermCacheKey? = nil
        let tokenCount = tokenizer.forEachInternedEntry(forBinary: columns) { k, _, termID, term, value, frequency in
            key = k
            bytes.append(contentsOf: term)
            let termEnd = bytes.count
            bytes.append(contentsOf: value)
            entries.append(Entry(termID: termID, frequency: Int32(frequency), termEnd: termEnd, valueEnd: bytes.count))
        }
        documents.append(Item(idEnd: idEnd, entriesEnd: entries.count, tokenCount: tokenCount, cacheKey: key))
    }

    /// For each document in order: `document` with its ID and token count, which returns the
    /// number it is given; then `entry` with that number and each of its entries, as
    /// `FullTextTokenizer.forEachInternedEntry` hands them out.
    func forEachDocument(_ document: (UnsafeBufferPointer<UInt8>, Int) throws -> UInt32,
                         entry: (UInt32, TermCacheKey, Int, Int32, UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>, Int) throws -> Void) rethrows {
        try bytes.withUnsafeBufferPointer { all in
            var at = 0
            var e = 0
            for d in documents {
                let number = try document(UnsafeBufferPointer(rebasing: all[at..<d.idEnd]), d.tokenCount)
                at = d.idEnd
                while e < d.entriesEnd {
                    let x = entries[e]
                    if let key = d.cacheKey {
                        try entry(number, key, d.tokenCount, x.termID, UnsafeBufferPointer(rebasing: all[at..<x.termEnd]),
                                  UnsafeBufferPointer(rebasing: all[x.termEnd..<x.valueEnd]), Int(x.frequency))
                    }
                    at = x.valueEnd
                    e += 1
                }
            }
        }
    }
}
