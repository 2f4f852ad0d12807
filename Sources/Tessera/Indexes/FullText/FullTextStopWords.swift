/// The stop-word lists of SPEC §14: English and French only.
///
/// Tokens equal to a stop word (after case folding, and after accent stripping when the index
/// ignores accents) are not indexed and are dropped from queries, but they still take a
/// position, so phrase and `NEAR` distances stay faithful to the text.
enum FullTextStopWords {
    /// The English list (124 words), for `en` / `english`.
    static let english: [String] = [
        "i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours",
        "yourself", "yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself",
        "it", "its", "itself", "they", "them", "their", "theirs", "themselves", "what", "which",
        "who", "whom", "this", "that", "these", "those", "am", "is", "are", "was", "were", "be",
        "been", "being", "have", "has", "had", "having", "do", "does", "did", "doing", "would",
        "should", "could", "ought", "a", "an", "the", "and", "but", "if", "or", "because", "as",
        "until", "while", "of", "at", "by", "for", "with", "about", "against", "between", "into",
        "through", "during", "before", "after", "above", "below", "to", "from", "up", "down", "in",
        "out", "on", "off", "over", "under", "again", "further", "then", "once", "here", "there",
        "when", "where", "why", "how", "all", "any", "both", "each", "few", "more", "most",
        "other", "some", "such", "no", "nor", "not", "only", "own", "same", "so", "than", "too",
        "very", "cannot"
    ]

    /// The French list (164 words), for `fr` / `french`.
    static let french: [String] = [
        "au", "aux", "avec", "ce", "ces", "dans", "de", "des", "du", "elle", "en", "et", "eux",
        "il", "je", "la", "le", "leur", "lui", "ma", "mais", "me", "même", "mes", "moi", "mon",
        "ne", "nos", "notre", "nous", "on", "ou", "par", "pas", "pour", "qu", "que", "qui", "sa",
        "se", "ses", "son", "sur", "ta", "te", "tes", "toi", "ton", "tu", "un", "une", "vos",
        "votre", "vous", "c", "d", "j", "l", "à", "m", "n", "s", "t", "y", "été", "étée", "étées",
        "étés", "étant", "suis", "es", "est", "sommes", "êtes", "sont", "serai", "seras", "sera",
        "serons", "serez", "seront", "serais", "serait", "serions", "seriez", "seraient", "étais",
        "était", "étions", "étiez", "étaient", "fus", "fut", "fûmes", "fûtes", "furent", "sois",
        "soit", "soyons", "soyez", "soient", "fusse", "fusses", "fût", "fussions", "fussiez",
        "fussent", "ayant", "eu", "eue", "eues", "eus", "ai", "as", "avons", "avez", "ont",
        "aurai", "auras", "aura", "aurons", "aurez", "auront", "aurais", "aurait", "aurions",
        "auriez", "auraient", "avais", "avait", "avions", "aviez", "avaient", "eut", "eûmes",
        "eûtes", "eurent", "aie", "aies", "ait", "ayons", "ayez", "aient", "eusse", "eusses",
        "eût", "eussions", "eussiez", "eussent", "ceci", "cela", "celà", "cet", "cette", "ici",
        "ils", "les", "leurs", "quel", "quels", "quelle", "quelles", "sans", "soi"
    ]

    /// The list for a Snowball algorithm name: English for `english`, French for `french`,
    /// none for every other language.
    static func list(forAlgorithm algorithm: String?) -> [String] {
        switch algorithm {
        case "english": english
        case "french": french
        default: []
        }
    }
}
