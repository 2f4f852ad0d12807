/// The byte layout of a full-text index in LMDB (DESIGN "Storage").
///
/// **Postings table** — one entry per (term, document):
///
///     key   = term (UTF-8) ‖ 0x00 ‖ docKey
///     value = for each column holding the term, ascending:
///             varint(column) varint(count) varint(p₀) varint(p₁ − p₀) … varint(pₙ − pₙ₋₁)
///
/// Terms never contain U+0000 (it is a separator), so `term ‖ 0x00` is the exact-term range,
/// and 0x00 sorting first keeps all keys of one term contiguous and before any longer term.
/// With LMDB's default byte order, an exact-term lookup is a cursor range over the keys
/// starting with `termKeyPrefix(term)`; a prefix query (`lin*`) is a range over keys starting
/// with the prefix's UTF-8 bytes, each key split at its first 0x00 into term and docKey.
/// Varints are unsigned LEB128.
///
/// **Document stats table** — `docKey` → `varint(tokenCount)`, the document's indexed token
/// count (BM25 length). Corpus totals (`documentCount`, `totalTokens`) fit one small entry
/// (`encodeCorpusStatistics`) kept wherever the engine keeps per-index metadata; updating it
/// on every save keeps `averageDocumentLength` exact.
public enum FullTextPostingsCodec {
    /// The separator between term and doc key.
    public static let separator: UInt8 = 0

    // MARK: - Keys

    /// `term ‖ 0x00 ‖ docKey`.
    public static func postingsKey(term: UnsafeBufferPointer<UInt8>, docKey: [UInt8]) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(term.count + 1 + docKey.count)
        key.append(contentsOf: term)
        key.append(separator)
        key.append(contentsOf: docKey)
        return key
    }

    /// `term ‖ 0x00 ‖ docKey`.
    public static func postingsKey(term: String, docKey: [UInt8]) -> [UInt8] {
        var t = term
        return t.withUTF8 { postingsKey(term: $0, docKey: docKey) }
    }

    /// `term ‖ 0x00`: every postings key of exactly this term starts with these bytes.
    public static func termKeyPrefix(_ term: String) -> [UInt8] {
        Array(term.utf8) + [separator]
    }

    /// The UTF-8 bytes of a prefix: every postings key of a term starting with `prefix`
    /// starts with these bytes (and only those keys).
    public static func prefixScanKey(_ prefix: String) -> [UInt8] {
        Array(prefix.utf8)
    }

    /// Splits a postings key into its term and doc key, or nil if it has no separator.
    public static func splitPostingsKey(_ key: some Swift.Collection<UInt8>) -> (term: String, docKey: [UInt8])? {
        guard let sep = key.firstIndex(of: separator) else { return nil }
        let term = String(decoding: key[key.startIndex..<sep], as: UTF8.self)
        return (term, Array(key[key.index(after: sep)...]))
    }

    // MARK: - Postings values

    /// Encodes the positions of one term in one document (columns ascending, positions
    /// ascending within a column).
    public static func encodePositions(_ columns: [FullTextColumnPositions]) -> [UInt8] {
        var out: [UInt8] = []
        for c in columns.sorted(by: { $0.column < $1.column }) where !c.positions.isEmpty {
            appendVarint(UInt64(c.column), to: &out)
            appendVarint(UInt64(c.positions.count), to: &out)
            var previous: UInt32 = 0
            for p in c.positions {
                appendVarint(UInt64(p &- previous), to: &out)
                previous = p
            }
        }
        return out
    }

    /// Decodes a postings value.
    ///
    /// - Throws: `FullTextIndexCorruption` if the bytes are not a valid encoding.
    public static func decodePositions(_ bytes: some Swift.Collection<UInt8>) throws -> [FullTextColumnPositions] {
        var out: [FullTextColumnPositions] = []
        var it = bytes.makeIterator()
        while let column = try readVarint(&it, allowEnd: true) {
            guard let count = try readVarint(&it, allowEnd: false), count <= UInt64(bytes.count) else {
                throw FullTextIndexCorruption("bad position count")
            }
            var positions: [UInt32] = []
            positions.reserveCapacity(Int(count))
            var p: UInt64 = 0
            for _ in 0..<count {
                p += try readVarint(&it, allowEnd: false)!
                guard p <= UInt64(UInt32.max) else { throw FullTextIndexCorruption("position out of range") }
                positions.append(UInt32(p))
            }
            guard column <= UInt64(Int32.max) else { throw FullTextIndexCorruption("column out of range") }
            out.append(FullTextColumnPositions(column: Int(column), positions: positions))
        }
        return out
    }

    // MARK: - Document stats

    /// The doc-stats value of a document: `varint(tokenCount)`.
    public static func encodeDocumentLength(_ tokenCount: Int) -> [UInt8] {
        var out: [UInt8] = []
        appendVarint(UInt64(max(0, tokenCount)), to: &out)
        return out
    }

    /// Decodes a doc-stats value.
    public static func decodeDocumentLength(_ bytes: some Swift.Collection<UInt8>) throws -> Int {
        var it = bytes.makeIterator()
        guard let n = try readVarint(&it, allowEnd: false), n <= UInt64(Int.max) else {
            throw FullTextIndexCorruption("bad document length")
        }
        return Int(n)
    }

    /// The corpus totals of an index: `varint(documentCount) varint(totalTokens)`.
    public static func encodeCorpusStatistics(_ stats: FullTextCorpusStatistics) -> [UInt8] {
        var out: [UInt8] = []
        appendVarint(UInt64(max(0, stats.documentCount)), to: &out)
        appendVarint(UInt64(max(0, stats.totalTokens)), to: &out)
        return out
    }

    /// Decodes corpus totals.
    public static func decodeCorpusStatistics(_ bytes: some Swift.Collection<UInt8>) throws -> FullTextCorpusStatistics {
        var it = bytes.makeIterator()
        guard let d = try readVarint(&it, allowEnd: false), let t = try readVarint(&it, allowEnd: false),
            d <= UInt64(Int.max), t <= UInt64(Int.max)
        else { throw FullTextIndexCorruption("bad corpus statistics") }
        return FullTextCorpusStatistics(documentCount: Int(d), totalTokens: Int(t))
    }

    // MARK: - Varints

    /// Appends an unsigned LEB128 varint.
    @inline(__always)
    public static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    @inline(__always)
    static func appendVarint(_ value: UInt64, to out: inout UnsafeGrowableBuffer<UInt8>) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    /// Reads an unsigned LEB128 varint; nil at a clean end when `allowEnd`.
    static func readVarint<I: IteratorProtocol<UInt8>>(_ it: inout I, allowEnd: Bool) throws -> UInt64? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        var first = true
        while true {
            guard let b = it.next() else {
                if first && allowEnd { return nil }
                throw FullTextIndexCorruption("truncated varint")
            }
            first = false
            guard shift < 64 else { throw FullTextIndexCorruption("varint too long") }
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return result }
            shift += 7
        }
    }
}

/// Corpus totals for BM25.
public struct FullTextCorpusStatistics: Sendable, Hashable {
    /// Indexed documents.
    public var documentCount: Int
    /// Indexed tokens over all documents (stop words excluded).
    public var totalTokens: Int

    /// Creates statistics.
    public init(documentCount: Int, totalTokens: Int) {
        self.documentCount = documentCount
        self.totalTokens = totalTokens
    }

    /// Mean tokens per document (0 for an empty index).
    public var averageDocumentLength: Double {
        documentCount > 0 ? Double(totalTokens) / Double(documentCount) : 0
    }
}

/// Bytes in a full-text index that are not a valid encoding.
public struct FullTextIndexCorruption: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public var message: String

    /// Creates the error.
    public init(_ message: String) { self.message = message }

    /// `corrupt full-text index: message`.
    public var description: String { "corrupt full-text index: \(message)" }
}
