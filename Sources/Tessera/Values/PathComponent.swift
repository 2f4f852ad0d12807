/// One step of a property path: `.name` or `[index]`.
package enum PathComponent: Sendable, Hashable {
    /// A member name (case-sensitive).
    case key(String)
    /// An array index; negative counts from the end.
    case index(Int)
}

/// One collation keyword of a COLLATE clause.
enum CollationKeyword: Sendable, Hashable {
    /// `UNICODE` or `UNICODE:locale`.
    case unicode(locale: String?)
    /// `NOUNICODE`.
    case noUnicode
    /// `CASE` (case-sensitive).
    case caseSensitive
    /// `NOCASE`.
    case noCase
    /// `DIAC` (accent-sensitive).
    case diac
    /// `NODIAC`.
    case noDiac
}
