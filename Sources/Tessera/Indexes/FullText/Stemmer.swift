import CStemmer

/// A Snowball stemmer (libstemmer), for one language.
///
/// Stems one lower-case word at a time: `Stemmer(language: "en")!.stem("running")` → `"run"`.
/// Input and output are UTF-8. The word should already be case-folded, as Snowball algorithms
/// expect lower case.
///
/// A `Stemmer` wraps one `sb_stemmer`, whose output buffer is reused by every call, so it is
/// **not** thread-safe and deliberately not `Sendable`: use one per thread or task.
/// `FullTextTokenizer` keeps a lock-protected pool of them and is safe to share.
final class Stemmer {
    /// The canonical libstemmer algorithm name (`"english"`, `"french"`…).
    let algorithm: String
    /// The C stemmer; owned by this object and freed in `deinit`.
    private let handle: OpaquePointer

    /// Creates a stemmer for a language name (ISO-639 code or English name, see
    /// `FullTextLanguage`). Returns nil for `""`, unknown languages, or if libstemmer fails.
    convenience init?(language: String) {
        guard let algorithm = FullTextLanguage(language).stemmerAlgorithm else { return nil }
        self.init(algorithm: algorithm)
    }

    /// Creates a stemmer for a canonical libstemmer algorithm name (one of
    /// `FullTextLanguage.availableAlgorithms`). Returns nil if libstemmer does not know it.
    init?(algorithm: String) {
        // sb_stemmer_new takes the lower-case algorithm name; a NULL encoding means UTF-8.
        // It returns NULL for an unknown algorithm (or when out of memory).
        guard let h = sb_stemmer_new(algorithm, nil) else { return nil }
        self.algorithm = algorithm
        self.handle = h
    }

    deinit {
        sb_stemmer_delete(handle)
    }

    /// The stem of a lower-case word: `"continuation"` → `"continu"` in French.
    ///
    /// Returns the word unchanged if libstemmer fails (it only fails when out of memory).
    func stem(_ word: String) -> String {
        var w = word
        return w.withUTF8 { buf in
            var out = ""
            stem(buf) { out = String(decoding: $0, as: UTF8.self) }
            return out
        }
    }

    /// Stems UTF-8 bytes and hands the result to `body`. The buffer passed to `body` belongs
    /// to libstemmer and is valid only during the call.
    func stem(_ word: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        guard let base = word.baseAddress, word.count > 0 else { body(word); return }
        // The result is owned by the stemmer and stays valid until its next call or deletion;
        // its length comes from sb_stemmer_length. NULL means out of memory.
        guard let r = sb_stemmer_stem(handle, base, Int32(clamping: word.count)) else { body(word); return }
        let n = Int(sb_stemmer_length(handle))
        body(UnsafeBufferPointer(start: r, count: n))
    }
}

@available(*, unavailable, message: "a Stemmer reuses one C buffer; give each thread its own")
extension Stemmer: Sendable {}
