// Seeded fuzzing: 100,000 random and mutated query strings. No input may crash or hang the
// parser; every failure is a syntax QueryError whose location lies inside the text; every
// success prints and reparses to the same AST.

import Testing
@testable import Tessera

@Suite("Parser fuzz")
struct ParserFuzzTests {
    static let vocabulary: [String] = [
        "SELECT", "select", "DISTINCT", "ALL", "FROM", "WHERE", "GROUP", "BY", "HAVING", "ORDER", "LIMIT", "OFFSET",
        "JOIN", "INNER", "LEFT", "OUTER", "CROSS", "RIGHT", "FULL", "NATURAL", "ON", "USING", "UNNEST", "AS", "ASC", "DESC",
        "AND", "OR", "NOT", "IS", "NULL", "MISSING", "VALUED", "IN", "LIKE", "BETWEEN", "CASE", "WHEN", "THEN", "ELSE",
        "END", "ANY", "SOME", "EVERY", "SATISFIES", "COLLATE", "UNICODE", "UNICODE:fr", "NOCASE", "NODIAC", "TRUE", "FALSE",
        "meta", "match", "rank", "count", "lower", "VALUE", "UNION", "NEST", "EXISTS",
        "a", "b", "_", "hotels", "x.y", "`q`", "`a``b`", "`", "$p", "$", "1", "-1", "2.5", ".5", "1e3", "1e", "99999999999999999999",
        "'s'", "'it''s'", "\"d\"", "'", "\"", "(", ")", "[", "]", "{", "}", ",", ".", ":", ";", "*", "+", "-", "/", "%",
        "||", "|", "&", "<<", "=", "==", "!=", "<>", "<", "<=", ">", ">=", "!", "#", "é", "😀", "\n", "\t", "\r\n", " ",
    ]

    static func tokenSoup(_ rng: inout SplitMix64) -> String {
        var s = rng.chance(0.7) ? "SELECT " : ""
        for _ in 0..<rng.below(24) {
            s += rng.pick(vocabulary)
            if rng.chance(0.8) { s += " " }
        }
        return s
    }

    static func mutate(_ text: String, _ rng: inout SplitMix64) -> String {
        var chars = Array(text.unicodeScalars)
        for _ in 0..<(1 + rng.below(3)) {
            let n = chars.count
            switch rng.below(6) {
            case 0 where n > 0: // delete a range
                let i = rng.below(n), len = min(n - i, 1 + rng.below(6))
                chars.removeSubrange(i..<(i + len))
            case 1: // insert a token
                let i = rng.below(n + 1)
                chars.insert(contentsOf: (" " + rng.pick(vocabulary) + " ").unicodeScalars, at: i)
            case 2 where n > 0: // replace one scalar
                let i = rng.below(n)
                chars[i] = rng.pick(Array("()[]{}'\"`$.,;:*-+=<>!|&#é0 aZ\n".unicodeScalars))
            case 3 where n > 1: // duplicate a slice
                let i = rng.below(n), len = min(n - i, 1 + rng.below(12))
                chars.insert(contentsOf: chars[i..<(i + len)], at: rng.below(n + 1))
            case 4 where n > 0: // truncate
                chars.removeSubrange(rng.below(n)...)
            default: // swap two slices' positions
                if n > 4 {
                    let i = rng.below(n - 2), j = i + 1 + rng.below(n - i - 1)
                    chars.swapAt(i, j)
                }
            }
        }
        var s = String.UnicodeScalarView()
        s.append(contentsOf: chars)
        return String(s)
    }

    @Test func hundredThousandInputs() throws {
        var rng = SplitMix64(seed: 0xF022)
        let seeds = parserGoldens.map(\.0) + badQueries.map(\.text)
        var parsed = 0, rejected = 0, problems = 0
        for i in 0..<100_000 {
            let text = rng.chance(0.35) ? ParserFuzzTests.tokenSoup(&rng) : ParserFuzzTests.mutate(rng.pick(seeds), &rng)
            do {
                let s = try SQLParser.parseStatement(text)
                parsed += 1
                let printed = SQLPrinter.print(s)
                let back = try SQLParser.parseStatement(printed)
                if back != s {
                    problems += 1
                    if problems < 5 { Issue.record("#\(i) round trip differs: \(text) → \(printed)") }
                }
            } catch {
                rejected += 1
                let n = text.utf8.count
                guard error.kind == .syntax, let loc = error.location, loc.offset >= 0, loc.offset <= n,
                      loc.line >= 1, loc.column >= 1, !error.message.isEmpty, error.source == text else {
                    problems += 1
                    if problems < 5 { Issue.record("#\(i) bad error for \(text): \(error)") }
                    continue
                }
            }
        }
        #expect(problems == 0)
        // The mix exercises both paths.
        #expect(parsed > 1_000)
        #expect(rejected > 10_000)
    }

    @Test func randomExpressionBytes() {
        var rng = SplitMix64(seed: 7)
        let alphabet = Array("ab_1.5e-+*/%|=<>!()[]{}'\"`$,:; \nNOTANDORISNULLCOLLATE".unicodeScalars)
        for _ in 0..<20_000 {
            var s = String.UnicodeScalarView()
            for _ in 0..<rng.below(30) { s.append(rng.pick(alphabet)) }
            let text = String(s)
            do {
                let e = try SQLParser.parseExpression(text)
                #expect(try SQLParser.parseExpression(SQLPrinter.print(e)) == e, "\(text)")
            } catch {
                #expect(error.kind == .syntax)
                #expect(error.location != nil)
            }
        }
    }
}
