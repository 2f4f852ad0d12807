// SPEC §6.6: regular expressions (case-sensitive). An invalid pattern gives NULL.

extension BuiltinFunctions {
    /// The subject and compiled pattern, or the result to return instead.
    private static func regexArguments(_ s: Value, _ re: Value) -> Swift.Result<(String, CompiledRegex), ValueResult> {
        if let u = propagateUnknown(s, re) { return .failure(ValueResult(u)) }
        guard case .string(let text) = s, case .string(let pattern) = re,
              let compiled = RegexCache.regex(pattern)
        else { return .failure(ValueResult(.null)) }
        return .success((text, compiled))
    }

    /// `REGEXP_CONTAINS(s, re)`: TRUE if some substring of s matches.
    static func regexpContains(_ s: Value, _ re: Value) -> Value {
        switch regexArguments(s, re) {
        case .failure(let r): return r.value
        case .success(let (text, regex)):
            return .bool(regex.withText(Array(text.utf16)) { $0.first() != nil })
        }
    }

    /// `REGEXP_LIKE(s, re)`: TRUE if the whole of s matches [T].
    static func regexpLike(_ s: Value, _ re: Value) -> Value {
        switch regexArguments(s, re) {
        case .failure(let r): return r.value
        case .success(let (text, regex)):
            return .bool(regex.withText(Array(text.utf16)) { $0.matchesWhole() })
        }
    }

    /// `REGEXP_POSITION(s, re)`: the 0-based code-point offset of the first match, -1 if none.
    static func regexpPosition(_ s: Value, _ re: Value) -> Value {
        switch regexArguments(s, re) {
        case .failure(let r): return r.value
        case .success(let (text, regex)):
            let units = Array(text.utf16)
            guard let m = regex.withText(units, { $0.first() }) else { return .int(-1) }
            return .int(Int64(codePointCount(units, upTo: m.range.lowerBound)))
        }
    }

    /// `REGEXP_REPLACE(s, re, repl [, n])`: replaces the first n matches (all when n is absent
    /// or negative). In `repl`, `$&` is the match, `$1`…`$99` a group, `$<name>` a named
    /// group, `` $` `` / `$'` the text before / after the match, and `$$` a dollar sign.
    static func regexpReplace(_ args: [Value]) -> Value {
        if let u = propagateUnknown(args) { return u }
        guard case .string(let replacement) = args[2] else { return .null }
        var limit = -1
        if args.count > 3 {
            guard args[3].isNumber, let n = truncatedInteger(args[3]) else { return .null }
            limit = n < 0 ? -1 : Int(clamping: n)
        }
        switch regexArguments(args[0], args[1]) {
        case .failure(let r): return r.value
        case .success(let (text, regex)):
            if limit == 0 { return .string(text) }
            let units = Array(text.utf16)
            let template = Array(replacement.utf16)
            return regex.withText(units) { matcher in
                var out: [UInt16] = []
                out.reserveCapacity(units.count)
                var last = 0
                var done = 0
                var match = matcher.first()
                while let m = match, limit < 0 || done < limit {
                    out.append(contentsOf: units[last..<m.range.lowerBound])
                    expandReplacement(template, match: m, subject: units, matcher: matcher, into: &out)
                    last = m.range.upperBound
                    done += 1
                    match = matcher.next()
                }
                if done == 0 { return .string(text) }
                out.append(contentsOf: units[last...])
                return .string(String(decoding: out, as: UTF16.self))
            }
        }
    }

    /// Appends the ECMAScript-style expansion of a replacement template for one match.
    private static func expandReplacement(_ t: [UInt16], match m: CompiledRegex.Match, subject: [UInt16],
                                          matcher: CompiledRegex.Matcher, into out: inout [UInt16]) {
        let dollar = UInt16(UInt8(ascii: "$"))
        func isDigit(_ c: UInt16) -> Bool { c >= 48 && c <= 57 }
        var i = 0
        while i < t.count {
            let c = t[i]
            guard c == dollar, i + 1 < t.count else { out.append(c); i += 1; continue }
            let n = t[i + 1]
            switch n {
            case dollar:
                out.append(dollar); i += 2
            case UInt16(UInt8(ascii: "&")):
                out.append(contentsOf: subject[m.range]); i += 2
            case UInt16(UInt8(ascii: "`")):
                out.append(contentsOf: subject[..<m.range.lowerBound]); i += 2
            case UInt16(UInt8(ascii: "'")):
                out.append(contentsOf: subject[m.range.upperBound...]); i += 2
            case UInt16(UInt8(ascii: "<")):
                if let close = t[(i + 2)...].firstIndex(of: UInt16(UInt8(ascii: ">"))),
                   let g = matcher.groupNumber(named: String(decoding: t[(i + 2)..<close], as: UTF16.self)) {
                    if let r = m.groups[g - 1] { out.append(contentsOf: subject[r]) }
                    i = close + 1
                } else {
                    out.append(c); i += 1
                }
            default:
                guard isDigit(n) else { out.append(c); i += 1; continue }
                let one = Int(n - 48)
                // Prefer a two-digit group number when that group exists.
                if i + 2 < t.count, isDigit(t[i + 2]) {
                    let two = one * 10 + Int(t[i + 2] - 48)
                    if two >= 1, two <= m.groups.count {
                        if let r = m.groups[two - 1] { out.append(contentsOf: subject[r]) }
                        i += 3
                        continue
                    }
                }
                if one >= 1, one <= m.groups.count {
                    if let r = m.groups[one - 1] { out.append(contentsOf: subject[r]) }
                    i += 2
                } else {
                    out.append(c); i += 1
                }
            }
        }
    }

    /// The number of code points in the first `offset` UTF-16 units.
    static func codePointCount(_ units: [UInt16], upTo offset: Int) -> Int {
        var n = 0
        for i in 0..<offset where !(0xDC00...0xDFFF).contains(units[i]) { n += 1 }
        return n
    }
}
