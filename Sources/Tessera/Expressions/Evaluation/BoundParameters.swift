/// The parameter values of one execution: the bindings given (a NULL binding dropped, so
/// that it reads as MISSING [LC]), already checked against the query's parameter names.
///
/// Evaluators look values up by name once per evaluation. A query has a few parameters, and
/// comparing a name with a handful of short names costs less than hashing it, so the
/// bindings stay a list; only a long list gets a dictionary of positions. Building this from
/// `Parameters` copies nothing (both share one array).
struct BoundParameters: Sendable, ExpressibleByDictionaryLiteral {
    /// Each name once.
    private(set) var bindings: [(name: String, value: Value)]
    /// Positions in `bindings` by name, for more than `linearLimit` bindings.
    private var positions: [String: Int]?

    /// Above this many bindings a lookup hashes instead of comparing names.
    static let linearLimit = 12

    /// `bindings` must name each parameter once.
    init(_ bindings: [(name: String, value: Value)] = []) {
        self.bindings = bindings
        if bindings.count > Self.linearLimit {
            var p: [String: Int] = [:]
            p.reserveCapacity(bindings.count)
            for (i, b) in bindings.enumerated() { p[b.name] = i }
            positions = p
        }
    }

    init(dictionaryLiteral elements: (String, Value)...) {
        self.init(elements.map { (name: $0.0, value: $0.1) })
    }

    init(_ values: [String: Value]) {
        self.init(values.map { (name: $0.key, value: $0.value) })
    }

    /// Binds `name` to `value`, replacing an earlier binding of the name (`Parameters`'
    /// setters; the list keeps the order names were first bound).
    mutating func bind(_ value: Value, _ name: String) {
        if let positions {
            if let i = positions[name] { bindings[i].value = value; return }
        } else if let i = bindings.firstIndex(where: { $0.name == name }) {
            bindings[i].value = value
            return
        }
        if bindings.isEmpty { bindings.reserveCapacity(4) }
        bindings.append((name, value))
        if positions != nil {
            positions![name] = bindings.count - 1
        } else if bindings.count > Self.linearLimit {
            var p: [String: Int] = [:]
            for (i, b) in bindings.enumerated() { p[b.name] = i }
            positions = p
        }
    }

    /// The value bound to `name`, nil when none is.
    @inline(__always)
    subscript(name: String) -> Value? {
        if let positions { return positions[name].map { bindings[$0].value } }
        for b in bindings where b.name == name { return b.value }
        return nil
    }

    var isEmpty: Bool { bindings.isEmpty }

    /// The bindings as a dictionary (for planning, which runs once per plan, not per execution).
    var dictionary: [String: Value] {
        var d: [String: Value] = [:]
        d.reserveCapacity(bindings.count)
        for b in bindings { d[b.name] = b.value }
        return d
    }
}
