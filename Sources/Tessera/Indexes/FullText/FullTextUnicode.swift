import CICU

/// Unicode helpers of the tokenizer. ICU (case folding, canonical decomposition and
/// composition) runs once per distinct non-ASCII scalar, or once per distinct word holding
/// combining marks — never per token.
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

    /// Full case folding of one scalar (Unicode CaseFolding, status C+F: ß → ss, ς → σ,
    /// ﬁ → fi, İ → i̇, Cherokee small letters → capitals), then (optionally) accent stripping.
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
                let decomposed = Array(nfd(String(x)).unicodeScalars)
                let kept = decomposed.filter { !isAccentMark($0) }
                if kept.count == decomposed.count {
                    stripped.append(x)
                } else if !kept.isEmpty {
                    var k = String.UnicodeScalarView()
                    k.append(contentsOf: kept)
                    stripped.append(contentsOf: nfc(String(k)).unicodeScalars)
                }
            }
            out = stripped
        }
        return out
    }

    /// Full case folding of one scalar, by ICU's `u_strFoldCase` (default mappings).
    static func caseFold(_ s: Unicode.Scalar) -> [Unicode.Scalar] {
        if !s.properties.changesWhenCaseFolded { return [s] }
        let folded = icu(String(s)) { src, n, dest, cap in tessera_fold_case(dest, cap, src, n) }
        return Array((folded ?? s.properties.lowercaseMapping).unicodeScalars)
    }

    /// The canonical composition (NFC) of a word.
    @inline(never)
    static func nfc(_ s: String) -> String {
        icu(s) { src, n, dest, cap in tessera_normalize(0, dest, cap, src, n) } ?? s
    }

    /// The canonical decomposition (NFD) of a string.
    @inline(never)
    static func nfd(_ s: String) -> String {
        icu(s) { src, n, dest, cap in tessera_normalize(1, dest, cap, src, n) } ?? s
    }

    /// Runs an ICU string transform over UTF-16, growing the output buffer as needed;
    /// nil if ICU reports an error.
    static func icu(
        _ s: String,
        _ transform: (UnsafePointer<UInt16>?, Int32, UnsafeMutablePointer<UInt16>?, Int32) -> Int32
    ) -> String? {
        let source = Array(s.utf16)
        var capacity = source.count * 3 + 8
        while true {
            var dest = [UInt16](repeating: 0, count: capacity)
            let n = source.withUnsafeBufferPointer { sp in
                dest.withUnsafeMutableBufferPointer { dp in
                    transform(sp.baseAddress, Int32(sp.count), dp.baseAddress, Int32(dp.count))
                }
            }
            if n < 0 { return nil }
            if Int(n) > capacity {
                capacity = Int(n) + 1
                continue
            }
            return String(decoding: dest[0..<Int(n)], as: UTF16.self)
        }
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

    /// A fast 64-bit hash of a short byte string (`hashBytes`).
    @inline(__always)
    static func hash(_ p: UnsafePointer<UInt8>, _ n: Int) -> UInt64 {
        hashBytes(UnsafeRawPointer(p), n)
    }

    /// Byte equality of two buffers of length `n` (`bytesEqual`).
    @inline(__always)
    static func bytesEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        Tessera.bytesEqual(UnsafeRawPointer(a), UnsafeRawPointer(b), n)
    }
}
