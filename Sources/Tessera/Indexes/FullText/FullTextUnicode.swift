import Foundation

/// Unicode helpers of the tokenizer. Foundation is used only for canonical (de)composition,
/// which runs once per distinct non-ASCII scalar or once per distinct word holding combining
/// marks — never per token.
enum FullTextUnicode {
    /// SPEC §10.1 rule 2: L*, N*, Co are token characters, M* are marks, the rest separates.
    static func scalarClass(_ s: Unicode.Scalar) -> ScalarClass {
        switch s.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .decimalNumber, .letterNumber, .otherNumber, .privateUse:
            return .token
        case .nonspacingMark, .spacingMark, .enclosingMark:
            return .mark
        default:
            return .separator
        }
    }

    /// True for the marks removed by `ignoreAccents`: nonspacing (Mn) and enclosing (Me).
    /// Spacing marks (Mc, such as Devanagari vowel signs) are letters' shapes, not accents,
    /// and are kept.
    static func isAccentMark(_ s: Unicode.Scalar) -> Bool {
        switch s.properties.generalCategory {
        case .nonspacingMark, .enclosingMark: true
        default: false
        }
    }

    /// True if a word holding `s` may change under NFC: combining marks and conjoining jamo.
    static func needsComposition(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x1100...0x11FF, 0xA960...0xA97F, 0xD7B0...0xD7FF: return true
        default: return scalarClass(s) == .mark
        }
    }

    /// Full case folding of one scalar, then (optionally) accent stripping.
    ///
    /// Swift exposes full lower/upper-case mappings but not the CaseFolding table; folding is
    /// `lower(upper(x))` applied until every scalar is stable under folding (ß → ss,
    /// ς → σ, ẞ → ß → ss, ﬁ → fi, İ → i̇). Scripts whose fold target is the upper case
    /// (Cherokee) fall back to the upper-case mapping, so both cases meet.
    ///
    /// Accent stripping decomposes each folded scalar canonically (NFD) and drops Mn/Me marks
    /// (é → e, ǖ → u); a scalar that loses nothing is kept as it was (Hangul syllables stay
    /// composed). Letters without a decomposition keep their shape (ø, ł, æ).
    static func fold(_ s: Unicode.Scalar, stripAccents: Bool) -> [Unicode.Scalar] {
        var out = caseFold(s)
        if stripAccents {
            var stripped: [Unicode.Scalar] = []
            for x in out {
                if x.isASCII { stripped.append(x); continue }
                let decomposed = Array(String(x).decomposedStringWithCanonicalMapping.unicodeScalars)
                let kept = decomposed.filter { !isAccentMark($0) }
                if kept.count == decomposed.count {
                    stripped.append(x)
                } else if !kept.isEmpty {
                    var k = String.UnicodeScalarView()
                    k.append(contentsOf: kept)
                    stripped.append(contentsOf: String(k).precomposedStringWithCanonicalMapping.unicodeScalars)
                }
            }
            out = stripped
        }
        return out
    }

    /// Full case folding of one scalar (see `fold`).
    static func caseFold(_ s: Unicode.Scalar) -> [Unicode.Scalar] {
        let stable: (Unicode.Scalar) -> Bool = { !$0.properties.changesWhenCaseFolded }
        if stable(s) { return [s] }
        var cur = [s]
        for _ in 0..<3 {
            if cur.allSatisfy(stable) { return cur }
            cur = cur.flatMap { x -> [Unicode.Scalar] in
                if stable(x) { return [x] }
                return x.properties.uppercaseMapping.unicodeScalars.flatMap { $0.properties.lowercaseMapping.unicodeScalars }
            }
        }
        return cur.flatMap { x -> [Unicode.Scalar] in
            if stable(x) { return [x] }
            let upper = Array(x.properties.uppercaseMapping.unicodeScalars)
            if upper.allSatisfy(stable) { return upper }
            let lower = Array(x.properties.lowercaseMapping.unicodeScalars)
            if lower.allSatisfy(stable) { return lower }
            return [x]
        }
    }

    /// The canonical composition (NFC) of a word.
    @inline(never)
    static func nfc(_ s: String) -> String {
        s.precomposedStringWithCanonicalMapping
    }

    /// The longest prefix of `s` of at most `limit` UTF-8 bytes ending on a scalar boundary.
    static func truncated(_ s: String, toUTF8Length limit: Int) -> String {
        if s.utf8.count <= limit { return s }
        var out = String.UnicodeScalarView()
        var n = 0
        for u in s.unicodeScalars {
            let len = UTF8.width(u)
            if n + len > limit { break }
            out.append(u)
            n += len
        }
        return String(out)
    }

    /// A fast 64-bit hash of a short byte string (word-at-a-time multiply–xorshift).
    @inline(__always)
    static func hash(_ p: UnsafePointer<UInt8>, _ n: Int) -> UInt64 {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(truncatingIfNeeded: n)
        let raw = UnsafeRawPointer(p)
        var i = 0
        while i &+ 8 <= n {
            let w = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            h = (h ^ w) &* 0xFF51_AFD7_ED55_8CCD
            h ^= h >> 32
            i &+= 8
        }
        if i < n {
            var w: UInt64 = 0
            var shift: UInt64 = 0
            while i < n {
                w |= UInt64(p[i]) << shift
                shift &+= 8
                i &+= 1
            }
            h = (h ^ w) &* 0xC4CE_B9FE_1A85_EC53
        }
        h ^= h >> 29
        h = h &* 0xBF58_476D_1CE4_E5B9
        h ^= h >> 32
        return h
    }

    /// Byte equality of two buffers of length `n`.
    @inline(__always)
    static func bytesEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        var i = 0
        let ra = UnsafeRawPointer(a)
        let rb = UnsafeRawPointer(b)
        while i &+ 8 <= n {
            if ra.loadUnaligned(fromByteOffset: i, as: UInt64.self) != rb.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
                return false
            }
            i &+= 8
        }
        while i < n {
            if a[i] != b[i] { return false }
            i &+= 1
        }
        return true
    }
}
