// SPEC §6.6: regular expressions (case-sensitive). An invalid pattern gives NULL.

/// The regular-expression functions, evaluated with a query's interruption and limits.
enum RegexFunction: String, CaseIterable {
    case contains = "REGEXP_CONTAINS", like = "REGEXP_LIKE", position = "REGEXP_POSITION", replace = "REGEXP_REPLACE"

    /// Compiles a call: a constant pattern is compiled once here; matches check the query's
    /// interruption, and a failure (too slow, too long, interrupted) stops the query with an
    /// error instead of giving NULL.
    static func compile(_ name: String, _ args: [BoundExpr], _ fs: [Evaluator]) -> Evaluator? {
        guard let function = RegexFunction(rawValue: name), args.count >= 2 else { return nil }
        var constant: PrecompiledRegex?
        if case .literal(.string(let p)) = args[1] { constant = PrecompiledRegex(pattern: p) }
        return { ctx in
            let values = fs.map { $0(ctx) }
            do {
                return try function.evaluate(values, constant: constant, interrupt: ctx.interrupt)
            } catch {
                ctx.raise(error)
                return .null
            }
        }
    }

    /// The function's value; throws `QueryError` (too long, too slow) or the interruption's
    /// `DatabaseError`.
    func evaluate(_ args: [Value], constant: PrecompiledRegex? = nil, interrupt: QueryInterrupt? = nil) throws -> Value {
        if let u = propagateUnknown(args) { return u }
        guard case .string(let text) = args[0], case .string(let pattern) = args[1] else { return .null }
        guard pattern.utf16.count <= RegexLimits.maxPatternLength else {
            throw QueryError(.runtime, "regular expression too long: \(pattern.utf16.count) characters (at most \(RegexLimits.maxPatternLength)) in \(rawValue)")
        }
        let body = { (regex: CompiledRegex?) throws -> Value in
            guard let regex else { return .null }
            do {
                return try self.run(regex, text, args, interrupt)
            } catch let failure as RegexFailure {
                throw RegexFunction.error(failure, pattern: pattern, textLength: text.utf16.count, interrupt: interrupt)
            }
        }
        if let constant, constant.pattern.utf8.elementsEqual(pattern.utf8) { return try constant.with(body) }
        return try body(RegexCache.regex(pattern))
    }

    /// The error for a match that did not finish.
    static func error(_ failure: RegexFailure, pattern: String, textLength: Int, interrupt: QueryInterrupt?) -> any Error {
        let shown = pattern.count > 60 ? String(pattern.prefix(60)) + "…" : pattern
        switch failure {
        case .interrupted:
            if let interrupt { return interrupt.error(interrupt.reason) }
            return DatabaseError(.interrupted, "query interrupted")
        case .tooSlow:
            return QueryError(.runtime, "regular expression too slow: '\(shown)' on a text of \(textLength) characters gave up after \(RegexLimits.stepsPerMatch) match steps or \(RegexLimits.wallMilliseconds) ms (nested repetitions such as (a+)+ or (.*a){8} backtrack exponentially)")
        case .stackOverflow:
            return QueryError(.runtime, "regular expression too complex: '\(shown)' on a text of \(textLength) characters outgrew its backtracking stack")
        case .failed:
            return QueryError(.runtime, "regular expression failed: '\(shown)'")
        }
    }

    private func run(_ regex: CompiledRegex, _ text: String, _ args: [Value], _ interrupt: QueryInterrupt?) throws -> Value {
        switch self {
        case .contains:
            return .bool(try regex.withText(Array(text.utf16), interrupt: interrupt) { try $0.first() != nil })
        case .like:
            return .bool(try regex.withText(Array(text.utf16), interrupt: interrupt) { try $0.matchesWhole() })
        case .position:
            let units = Array(text.utf16)
            guard let m = try regex.withText(units, interrupt: interrupt, { try $0.first() }) else { return .int(-1) }
            return .int(Int64(BuiltinFunctions.codePointCount(units, upTo: m.range.lowerBound)))
        case .replace:
            guard case .string(let replacement) = args[2] else { return .null }
            var limit = -1
            if args.count > 3 {
                guard args[3].isNumber, let n = truncatedInteger(args[3]) else { return .null }
                limit = n < 0 ? -1 : Int(clamping: n)
            }
            if limit == 0 { return .string(text) }
            let units = Array(text.utf16)
            let template = Array(replacement.utf16)
            return try regex.withText(units, interrupt: interrupt) { matcher in
                var out: [UInt16] = []
                out.reserveCapacity(units.count)
                var last = 0
                var done = 0
                var match = try matcher.first()
                while let m = match, limit < 0 || done < limit {
                    out.append(contentsOf: units[last..<m.range.lowerBound])
                    BuiltinFunctions.expandReplacement(template, match: m, subject: units, matcher: matcher, into: &out)
                    last = m.range.upperBound
                    done += 1
                    match = try matcher.next()
                }
                if done == 0 { return .string(text) }
                out.append(contentsOf: units[last...])
                return .string(String(decoding: out, as: UTF16.self))
            }
        }
    }
}

// SPEC §6.6 through the function registry (no query around it: no interruption; a failure
// gives NULL).
extension BuiltinFunctions {
    /// `REGEXP_CONTAINS(s, re)`: TRUE if some substring of s matches.
    static func regexpContains(_ s: Value, _ re: Value) -> Value { (try? RegexFunction.contains.evaluate([s, re])) ?? .null }

    /// `REGEXP_LIKE(s, re)`: TRUE if the whole of s matches [T].
    static func regexpLike(_ s: Value, _ re: Value) -> Value { (try? RegexFunction.like.evaluate([s, re])) ?? .null }

    /// `REGEXP_POSITION(s, re)`: the 0-based code-point offset of the first match, -1 if none.
    static func regexpPosition(_ s: Value, _ re: Value) -> Value { (try? RegexFunction.position.evaluate([s, re])) ?? .null }

    /// `REGEXP_REPLACE(s, re, repl [, n])`: replaces the first n matches (all when n is absent
    /// or negative). In `repl`, `$&` is the match, `$1`…`$99` a group, `$<name>` a named
    /// group, `` $` `` / `$'` the text before / after the match, and `$$` a dollar sign.
    static func regexpReplace(_ args: [Value]) -> Value { (try? RegexFunction.replace.evaluate(args)) ?? .null }

    /// Appends the ECMAScript-style expansion of a replacement template for one match.
    static func expandReplacement(_ t: [UInt16], match m: CompiledRegex.Match, subject: [UInt16],
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
