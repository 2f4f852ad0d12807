// Seeded random generators for parser/printer tests: a SplitMix64 RNG and a generator of
// ASTs in the parser's normal form (the trees the parser can produce).

@testable import Tessera

/// Random ASTs that the printer can spell (parser normal form).
struct RandomAST {
    var rng: SplitMix64

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    static let names = [
        "a", "b", "name", "x1", "_id", "a$b", "_", "city", "select", "FROM", "some", "All", "value", "Match",
        "first.name", "x y", "back`tick", "é", "", "123", "null", "UNNEST", "meta", "nocase", "unicode",
        "full", "union", "désolé", "tab\there", "line\nbreak", "'quote'", "\"dq\"", "$p", "[0]", "😀",
    ]
    static let paramNames = ["p", "limit", "SELECT", "_x", "a1", "Offset", "some"]
    static let functions = ["LOWER", "UPPER", "ABS", "F", "ARRAY_CONTAINS", "COUNT", "IFMISSING", "PI", "MY_FUNC1", "SOME", "EXISTS", "CONCAT"]
    static let locales = ["fr", "fr_CA", "de", "in", "fr-CA", "", "x y", "en$1"]

    mutating func name() -> String { rng.pick(RandomAST.names) }

    mutating func string() -> String {
        let pieces = ["a", "'", "''", "\"", "`", "\\", "\\n", "\n", " ", "é", "😀", "%", "_", "\u{0}", "x", "SELECT"]
        var s = ""
        for _ in 0..<rng.below(6) { s += rng.pick(pieces) }
        return s
    }

    mutating func value() -> Value {
        switch rng.below(10) {
        case 0: return .null
        case 1: return .missing
        case 2: return .bool(rng.chance(0.5))
        case 3: return .int(Int64(bitPattern: rng.next()))
        case 4: return .int(Int64(rng.below(2001)) - 1000)
        case 5: return .int(rng.pick([Int64.min, Int64.max, 0, -1]))
        case 6:
            let d = Double(bitPattern: rng.next())
            return .double(d.isFinite ? d : 1.5)
        case 7: return .double(rng.pick([0.25, -10.25, 1e300, -1e-300, 1625e-2, 0.1, 1e16, -0.0, .infinity]))
        default: return .string(string())
        }
    }

    mutating func path(first: Bool) -> [PathComponent] {
        var comps: [PathComponent] = first ? [.key(name())] : [.key(name())]
        for _ in 0..<rng.below(3) {
            comps.append(rng.chance(0.6) ? .key(name()) : .index(rng.below(21) - 10))
        }
        return comps
    }

    mutating func indexReference() -> IndexReference {
        IndexReference(alias: rng.chance(0.4) ? name() : nil, name: name())
    }

    mutating func collations() -> [CollationKeyword] {
        let all: [CollationKeyword] = [.noUnicode, .caseSensitive, .noCase, .diac, .noDiac, .unicode(locale: nil)]
        var out: [CollationKeyword] = []
        for _ in 0..<(1 + rng.below(3)) {
            out.append(rng.chance(0.2) ? .unicode(locale: rng.pick(RandomAST.locales)) : rng.pick(all))
        }
        return out
    }

    /// A primary that can follow IN as a bare array operand.
    mutating func bareOperand(_ depth: Int) -> Expr {
        switch rng.below(6) {
        case 0: return .parameter(rng.pick(RandomAST.paramNames), .none)
        case 1: return .property(path(first: true), .none)
        case 2: return .call(rng.pick(RandomAST.functions), [expr(depth - 1)], .none)
        case 3: return .meta(alias: rng.chance(0.5) ? name() : nil, key: MetaKey.allCases.randomElement(using: &rng), .none)
        case 4: return .member(.call("F", [], .none), path(first: false))
        default: return .object([ObjectMember(key: string(), value: expr(depth - 1))])
        }
    }

    mutating func expr(_ depth: Int) -> Expr {
        if depth <= 0 || rng.chance(0.25) {
            switch rng.below(4) {
            case 0: return .literal(value())
            case 1: return .parameter(rng.pick(RandomAST.paramNames), .none)
            case 2: return .meta(alias: rng.chance(0.5) ? name() : nil, key: rng.chance(0.7) ? MetaKey.allCases.randomElement(using: &rng) : nil, .none)
            default: return .property(path(first: true), .none)
            }
        }
        let d = depth - 1
        switch rng.below(22) {
        case 0: return .member(expr(d), path(first: false))
        case 1: return .array((0..<rng.below(3)).map { _ in expr(d) })
        case 2: return .object((0..<rng.below(3)).map { _ in ObjectMember(key: string(), value: expr(d)) })
        case 3: return .unary(rng.pick([.not, .negate, .plus]), expr(d))
        case 4, 5, 6:
            let ops: [BinaryOperator] = [.or, .and, .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual,
                                         .add, .subtract, .multiply, .divide, .modulo, .concat, .is, .isNot]
            return .binary(rng.pick(ops), expr(d), expr(d))
        case 7: return .like(expr(d), expr(d), negated: rng.chance(0.5))
        case 8: return .between(expr(d), expr(d), expr(d), negated: rng.chance(0.5))
        case 9: return .inList(expr(d), (0..<rng.below(3)).map { _ in expr(d) }, negated: rng.chance(0.5))
        case 10: return .inArray(expr(d), bareOperand(d), negated: rng.chance(0.5))
        case 11: return .test(expr(d), rng.pick([.null, .missing, .valued]), negated: rng.chance(0.5))
        case 12: return .call(rng.pick(RandomAST.functions), (0..<rng.below(4)).map { _ in expr(d) }, .none)
        case 13:
            let clauses = (0..<(1 + rng.below(2))).map { _ in WhenClause(when: expr(d), then: expr(d)) }
            return .caseWhen(operand: rng.chance(0.5) ? expr(d) : nil, clauses, else: rng.chance(0.5) ? expr(d) : nil)
        case 14:
            return .quantified(rng.pick([.any, .every, .anyAndEvery]), variable: name(), in: expr(d), satisfies: expr(d))
        case 15: return .collate(expr(d), collations())
        case 16: return .match(indexReference(), expr(d))
        case 17: return .rank(indexReference())
        case 18: return .literal(value())
        case 19: return .member(.meta(alias: nil, key: nil, .none), path(first: false))
        default: return .property(path(first: true), .none)
        }
    }

    mutating func source() -> DataSourceReference {
        DataSourceReference(scope: rng.chance(0.3) ? name() : nil, collection: name(), alias: rng.chance(0.5) ? name() : nil)
    }

    mutating func statement(depth: Int = 4) -> SelectStatement {
        var s = SelectStatement(from: source())
        s.distinct = rng.chance(0.2)
        for _ in 0..<(1 + rng.below(3)) {
            if rng.chance(0.15) {
                s.columns.append(.star(source: rng.chance(0.5) ? name() : nil, alias: rng.chance(0.3) ? name() : nil))
            } else {
                s.columns.append(.expression(expr(depth), alias: rng.chance(0.4) ? name() : nil))
            }
        }
        for _ in 0..<rng.below(3) {
            if rng.chance(0.6) {
                s.joins.append(.join(rng.pick([.inner, .leftOuter, .cross]), source(), on: rng.chance(0.8) ? expr(depth) : nil))
            } else {
                s.joins.append(.unnest(expr(depth), alias: rng.chance(0.6) ? name() : nil, .none))
            }
        }
        if rng.chance(0.6) { s.whereClause = expr(depth) }
        if rng.chance(0.3) {
            s.groupBy = (0..<(1 + rng.below(2))).map { _ in expr(depth) }
            if rng.chance(0.5) { s.having = expr(depth) }
        }
        if rng.chance(0.4) {
            s.orderBy = (0..<(1 + rng.below(2))).map { _ in OrderingTerm(expression: expr(depth), descending: rng.chance(0.5)) }
        }
        if rng.chance(0.3) { s.limit = expr(1) }
        if rng.chance(0.3) { s.offset = expr(1) }
        return s
    }
}
