// QueryBuilder collations: `Collation.ascii()` and `Collation.unicode()` with CBL's spelling,
// as factories on the engine's `Collation` value type.

/// A collation usable in `ExpressionProtocol.collate(_:)`.
public protocol CollationProtocol: Sendable {}

extension Collation {
    /// An ASCII collation: `COLLATE (NOUNICODE CASE)`, or `(NOUNICODE NOCASE)` with
    /// `ignoreCase(true)`.
    public static func ascii() -> ASCIICollation { ASCIICollation() }

    /// A Unicode (UCA) collation: `COLLATE (UNICODE[:locale] CASE|NOCASE DIAC|NODIAC)`.
    /// Without `locale(_:)` the root collation is used.
    public static func unicode() -> UnicodeCollation { UnicodeCollation() }
}

extension Collation: CollationProtocol {
    /// The keywords that rebuild this collation.
    var collationKeywords: [CollationKeyword] {
        if unicode {
            return [.unicode(locale: locale), ignoreCase ? .noCase : .caseSensitive, ignoreAccents ? .noDiac : .diac]
        }
        return [.noUnicode, ignoreCase ? .noCase : .caseSensitive]
    }
}

/// `Collation.ascii()`: code-point order, optionally ignoring ASCII case.
public struct ASCIICollation: CollationProtocol, Hashable {
    /// Ignore ASCII case.
    public private(set) var ignoresCase = false

    /// Sets whether case is ignored.
    public func ignoreCase(_ ignoreCase: Bool) -> ASCIICollation {
        var c = self
        c.ignoresCase = ignoreCase
        return c
    }

    /// `[NOUNICODE, CASE|NOCASE]`.
    var collationKeywords: [CollationKeyword] { [.noUnicode, ignoresCase ? .noCase : .caseSensitive] }
}

/// `Collation.unicode()`: the Unicode Collation Algorithm, optionally ignoring case and/or
/// accents, for a locale.
public struct UnicodeCollation: CollationProtocol, Hashable {
    /// Ignore case.
    public private(set) var ignoresCase = false
    /// Ignore accents.
    public private(set) var ignoresAccents = false
    /// The locale (`fr`, `fr_CA`); nil for the root collation.
    public private(set) var localeName: String?

    /// Sets whether case is ignored.
    public func ignoreCase(_ ignoreCase: Bool) -> UnicodeCollation {
        var c = self
        c.ignoresCase = ignoreCase
        return c
    }

    /// Sets whether accents are ignored.
    public func ignoreAccents(_ ignoreAccents: Bool) -> UnicodeCollation {
        var c = self
        c.ignoresAccents = ignoreAccents
        return c
    }

    /// Sets the locale.
    public func locale(_ locale: String?) -> UnicodeCollation {
        var c = self
        c.localeName = locale
        return c
    }

    /// `[UNICODE[:locale], CASE|NOCASE, DIAC|NODIAC]`.
    var collationKeywords: [CollationKeyword] {
        [.unicode(locale: localeName), ignoresCase ? .noCase : .caseSensitive, ignoresAccents ? .noDiac : .diac]
    }
}
