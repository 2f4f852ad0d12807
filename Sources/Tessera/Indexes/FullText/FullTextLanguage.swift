import CStemmer

/// The language of a full-text index: which Snowball stemmer and which stop words apply.
///
/// A language is named by an ISO-639 code (`"en"`, `"eng"`, `"fr"`, `"fra"`, `"fre"`) or an
/// English name (`"english"`, `"French"`), case-insensitively; a region suffix is ignored
/// (`"en-US"`, `"pt_BR"`). Every algorithm of the installed libstemmer can be named (the 15
/// languages of SPEC §10.1 and the others `sb_stemmer_list()` reports, such as `"greek"` or
/// `"ca"`). `""` or an unknown name means neither stemming nor stop words; `nil` means
/// English, the conformance default of SPEC §9.4. Stop words exist for English and French only.
///
/// ```swift
/// FullTextLanguage("de").stemmerAlgorithm        // "german"
/// FullTextLanguage("Français").stemmerAlgorithm  // nil (not an English name)
/// FullTextLanguage(nil).hasStopWords             // true (English)
/// ```
struct FullTextLanguage: Sendable, Hashable, CustomStringConvertible {
    /// The name as given (`nil` became `"en"`).
    let name: String
    /// The canonical libstemmer algorithm name (`"english"`, `"german"`…), or nil for no stemming.
    let stemmerAlgorithm: String?

    /// Resolves a language name.
    ///
    /// - Parameter name: An ISO-639 code or English name; `nil` means `"en"`; `""` or an
    ///   unknown name means no stemming and no stop words.
    init(_ name: String?) {
        let given = name ?? "en"
        self.name = given
        self.stemmerAlgorithm = FullTextLanguage.resolveAlgorithm(given)
    }

    /// No stemming and no stop words (`language: ""`).
    static let none = FullTextLanguage("")

    /// English: Snowball `english` stemmer and the English stop words.
    static let english = FullTextLanguage("en")

    /// The stop words that apply (English or French list, else empty).
    var stopWords: [String] { FullTextStopWords.list(forAlgorithm: stemmerAlgorithm) }

    /// True for English and French, the languages with a stop-word list.
    var hasStopWords: Bool { stemmerAlgorithm == "english" || stemmerAlgorithm == "french" }

    /// `name (algorithm)`, or `name (no stemming)`.
    var description: String { "\(name) (\(stemmerAlgorithm ?? "no stemming"))" }

    /// The canonical names of the stemming algorithms the installed libstemmer offers,
    /// as reported by `sb_stemmer_list()` (for example `["arabic", "armenian", …, "yiddish"]`).
    static let availableAlgorithms: [String] = {
        var names: [String] = []
        guard var p = sb_stemmer_list() else { return names }
        // The list is a NULL-terminated array of C strings owned by the library (never freed).
        while let cString = p.pointee {
            names.append(String(cString: cString))
            p += 1
        }
        return names
    }()

    /// ISO-639-1, ISO-639-2 (T and B) and ISO-639-3 codes of the Snowball languages, plus a few
    /// common alternative names. Canonical English names resolve by themselves.
    static let aliases: [String: String] = [
        "ar": "arabic", "ara": "arabic",
        "hy": "armenian", "hye": "armenian", "arm": "armenian",
        "eu": "basque", "eus": "basque", "baq": "basque",
        "ca": "catalan", "cat": "catalan",
        "da": "danish", "dan": "danish",
        "nl": "dutch", "nld": "dutch", "dut": "dutch", "flemish": "dutch",
        "en": "english", "eng": "english",
        "fi": "finnish", "fin": "finnish",
        "fr": "french", "fra": "french", "fre": "french",
        "de": "german", "deu": "german", "ger": "german",
        "el": "greek", "ell": "greek", "gre": "greek",
        "hi": "hindi", "hin": "hindi",
        "hu": "hungarian", "hun": "hungarian",
        "id": "indonesian", "ind": "indonesian",
        "ga": "irish", "gle": "irish",
        "it": "italian", "ita": "italian",
        "lt": "lithuanian", "lit": "lithuanian",
        "ne": "nepali", "nep": "nepali",
        "no": "norwegian", "nor": "norwegian", "nb": "norwegian", "nob": "norwegian",
        "nn": "norwegian", "nno": "norwegian", "bokmal": "norwegian", "bokmål": "norwegian",
        "nynorsk": "norwegian",
        "pt": "portuguese", "por": "portuguese",
        "ro": "romanian", "ron": "romanian", "rum": "romanian", "moldavian": "romanian",
        "ru": "russian", "rus": "russian",
        "sr": "serbian", "srp": "serbian",
        "es": "spanish", "spa": "spanish", "castilian": "spanish",
        "sv": "swedish", "swe": "swedish",
        "ta": "tamil", "tam": "tamil",
        "tr": "turkish", "tur": "turkish",
        "yi": "yiddish", "yid": "yiddish",
    ]

    /// The stemming languages of SPEC §10.1 (Couchbase Lite's set). Other names resolve to no
    /// stemming and no stop words, as SPEC requires.
    static let specLanguages: Set<String> = [
        "danish", "dutch", "english", "finnish", "french", "german", "hungarian", "italian",
        "norwegian", "portuguese", "romanian", "russian", "spanish", "swedish", "turkish",
    ]

    /// The prefix that selects any other Snowball algorithm explicitly: `snowball:greek`,
    /// `snowball:indonesian` (a Tessera extension; see `availableAlgorithms`).
    static let snowballPrefix = "snowball:"

    /// Maps a user-supplied language name to a libstemmer algorithm name, or nil.
    ///
    /// ISO codes and English names of the 15 SPEC languages resolve as such; every other
    /// algorithm libstemmer offers is reachable only as `snowball:<algorithm or code>`, so
    /// that `language: "el"` keeps SPEC's meaning (no stemming) while Greek stemming stays
    /// available to those who ask for it by that name.
    static func resolveAlgorithm(_ raw: String) -> String? {
        var key = raw.trimmingASCIIWhitespace().lowercased()
        var explicit = false
        if key.hasPrefix(snowballPrefix) {
            key.removeFirst(snowballPrefix.count)
            explicit = true
        }
        if let cut = key.firstIndex(where: { $0 == "-" || $0 == "_" }) { key = String(key[..<cut]) }
        guard !key.isEmpty else { return nil }
        let available = availableAlgorithms
        var algorithm: String?
        if available.contains(key) { algorithm = key } else if let alias = aliases[key], available.contains(alias) { algorithm = alias }
        guard let algorithm else { return nil }
        return explicit || specLanguages.contains(algorithm) ? algorithm : nil
    }
}

extension String {
    /// The string without leading and trailing ASCII spaces, tabs and line breaks.
    func trimmingASCIIWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = lastIndex(where: { !isSpace($0) })!
        return String(self[first...last])
    }
}
