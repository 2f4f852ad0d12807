/// How strings compare: binary (code point, the default), ASCII case-insensitive, or the
/// Unicode Collation Algorithm for a locale, optionally ignoring case and/or accents.
///
/// Built from a COLLATE clause (SPEC §5.7) or QueryBuilder's `Collation.unicode()` /
/// `Collation.ascii()`.
public struct Collation: Sendable, Hashable {
    /// Use the Unicode Collation Algorithm (else code-point order).
    public var unicode: Bool
    /// Ignore case (ASCII only unless `unicode`).
    public var ignoreCase: Bool
    /// Ignore accents (only with `unicode`).
    public var ignoreAccents: Bool
    /// The UCA locale (`fr_CA`); nil means the root collation.
    public var locale: String?

    /// Creates a collation.
    public init(unicode: Bool = false, ignoreCase: Bool = false, ignoreAccents: Bool = false, locale: String? = nil) {
        self.unicode = unicode
        self.ignoreCase = ignoreCase
        self.ignoreAccents = ignoreAccents
        self.locale = locale
    }

    /// Code-point order, case and accent sensitive: the default.
    public static let binary = Collation()

    /// True for the default binary collation.
    @inlinable public var isBinary: Bool { !unicode && !ignoreCase }

    /// Builds the collation of a COLLATE keyword list (later keywords override earlier ones).
    init(keywords: [CollationKeyword]) {
        self.init()
        for k in keywords {
            switch k {
            case .unicode(let loc): unicode = true; if let loc { locale = loc }
            case .noUnicode: unicode = false
            case .caseSensitive: ignoreCase = false
            case .noCase: ignoreCase = true
            case .diac: ignoreAccents = false
            case .noDiac: ignoreAccents = true
            }
        }
        // NODIAC without UNICODE does nothing [LC].
        if !unicode { ignoreAccents = false }
    }

    /// Three-way comparison of two strings under this collation (<0, 0, >0).
    public func compare(_ a: String, _ b: String) -> Int {
        if unicode { return UnicodeCollator.compare(a, b, collation: self) }
        if ignoreCase { return compareASCIINoCase(a, b) }
        return compareBinary(a, b)
    }

    /// Equality under this collation.
    @inlinable
    public func equal(_ a: String, _ b: String) -> Bool {
        if isBinary { return stringsEqualBinary(a, b) }
        return compare(a, b) == 0
    }
}

/// Code-point order of two strings (UTF-8 byte order is code-point order).
@inlinable
func compareBinary(_ a: String, _ b: String) -> Int {
    var a = a, b = b
    return a.withUTF8 { pa in
        b.withUTF8 { pb in
            let n = min(pa.count, pb.count)
            var i = 0
            while i < n {
                let x = pa[i], y = pb[i]
                if x != y { return Int(x) - Int(y) }
                i &+= 1
            }
            return pa.count - pb.count
        }
    }
}

/// Code-point order after folding ASCII letters to lower case.
func compareASCIINoCase(_ a: String, _ b: String) -> Int {
    var ia = a.utf8.makeIterator(), ib = b.utf8.makeIterator()
    while true {
        let x = ia.next(), y = ib.next()
        switch (x, y) {
        case (nil, nil): return 0
        case (nil, _): return -1
        case (_, nil): return 1
        case (var p?, var q?):
            if p >= 65 && p <= 90 { p += 32 }
            if q >= 65 && q <= 90 { q += 32 }
            if p != q { return Int(p) - Int(q) }
        }
    }
}
