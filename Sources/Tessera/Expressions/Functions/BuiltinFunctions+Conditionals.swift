// SPEC §6.3: conditional functions (they look at MISSING and NULL themselves).

extension BuiltinFunctions {
    /// `IFMISSING(a, b, …)`: the first non-MISSING argument; NULL when all are MISSING [T].
    static func ifMissing(_ args: [Value]) -> Value {
        args.first { !$0.isMissing } ?? .null
    }

    /// `IFNULL(a, b, …)`: the first argument that is not NULL (a MISSING one is returned);
    /// NULL when all are NULL.
    static func ifNull(_ args: [Value]) -> Value {
        args.first { !$0.isNull } ?? .null
    }

    /// `IFMISSINGORNULL(a, b, …)`: the first argument neither MISSING nor NULL, else NULL.
    static func ifMissingOrNull(_ args: [Value]) -> Value {
        args.first { !$0.isNull && !$0.isMissing } ?? .null
    }

    /// `MISSINGIF(a, b)`: MISSING if either is MISSING, NULL if either is NULL, MISSING if
    /// a = b, else a.
    static func missingIf(_ a: Value, _ b: Value) -> Value {
        if let u = propagateUnknown(a, b) { return u }
        return a == b ? .missing : a
    }

    /// `NULLIF(a, b)`: MISSING if either is MISSING, NULL if either is NULL or a = b, else a.
    static func nullIf(_ a: Value, _ b: Value) -> Value {
        if let u = propagateUnknown(a, b) { return u }
        return a == b ? .null : a
    }

    /// `GREATEST(…)` / `LEAST(…)`: the largest/smallest argument in SPEC §5.4 order; MISSING
    /// if any argument is MISSING [LC].
    static func greatestOrLeast(_ args: [Value], greatest: Bool) -> Value {
        guard var best = args.first else { return .null }
        for a in args {
            if a.isMissing { return .missing }
            let c = Value.compare(a, best)
            if greatest ? c > 0 : c < 0 { best = a }
        }
        return best
    }
}
