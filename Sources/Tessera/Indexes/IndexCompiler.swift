/// An index definition parsed and bound to its collection (slot 0).
struct CompiledIndexDefinition: Sendable {
    var expressions: [BoundExpr]
    var whereClause: BoundExpr?
    var variableCount: Int
}

/// Parses and checks index definitions (SPEC §9).
enum IndexCompiler {
    /// Parses and binds a definition; throws `DatabaseError(.invalidIndex)` wrapping the
    /// `QueryError` (kind `.syntax` with the position inside the expression) when it is invalid.
    /// The parts common to every kind: name, expressions, `where`; the kind says whether it
    /// takes a `where` and needs expressions, and checks the rest itself.
    static func compile(_ def: IndexDefinition, collection: CollectionKey, kind: any IndexKind.Type) throws -> CompiledIndexDefinition {
        let name = def.name
        guard !name.isEmpty, !name.contains("\"") else {
            throw DatabaseError(.invalidIndex, "invalid index name '\(name)': it must be non-empty and contain no '\"'")
        }
        var exprs: [Expr] = []
        for text in def.expressions {
            do { exprs += try SQLParser.parseExpressionList(text) } catch {
                throw DatabaseError(.invalidIndex, "index '\(name)': invalid expression '\(text)': \(error)", underlying: error)
            }
        }
        var whereExpr: Expr? = nil
        if let w = def.whereClause {
            if !kind.allowsWhere {
                throw DatabaseError(.invalidIndex, "index '\(name)': an index of type \(def.type) takes no 'where'")
            }
            do { whereExpr = try SQLParser.parseExpression(w) } catch {
                throw DatabaseError(.invalidIndex, "index '\(name)': invalid where '\(w)': \(error)", underlying: error)
            }
        }
        if kind.requiresExpressions && exprs.isEmpty {
            throw DatabaseError(.invalidIndex, "index '\(name)' needs at least one expression")
        }
        for e in exprs + (whereExpr.map { [$0] } ?? []) {
            if let bad = forbidden(e) {
                throw DatabaseError(.invalidIndex, "index '\(name)': \(bad) is not allowed in an index definition",
                                    underlying: QueryError(.semantic, "\(bad) is not allowed in an index definition"))
            }
        }
        let bound: ([BoundExpr], BoundExpr?, Int)
        do {
            bound = try Analyzer.bindIndex(collection: collection, expressions: exprs, where: whereExpr)
        } catch {
            throw DatabaseError(.invalidIndex, "index '\(name)': \(error)", underlying: error as? QueryError)
        }
        return CompiledIndexDefinition(expressions: bound.0, whereClause: bound.1, variableCount: bound.2)
    }

    /// Parameters, aggregates, MATCH and RANK cannot be indexed.
    static func forbidden(_ e: Expr) -> String? {
        var found: String?
        func visit(_ e: Expr) {
            if found != nil { return }
            switch e {
            case .parameter(let n, _): found = "parameter $\(n)"
            case .match: found = "MATCH()"
            case .rank: found = "RANK()"
            case .call(let name, let args, _):
                if FunctionRegistry.lookup(name)?.isAggregate == true { found = "aggregate \(name)()" }
                args.forEach(visit)
            case .member(let b, _), .unary(_, let b), .test(let b, _, _), .collate(let b, _): visit(b)
            case .array(let a): a.forEach(visit)
            case .object(let m): m.forEach { visit($0.value) }
            case .binary(_, let a, let b), .like(let a, let b, _), .inArray(let a, let b, _): visit(a); visit(b)
            case .between(let a, let b, let c, _): visit(a); visit(b); visit(c)
            case .inList(let a, let l, _): visit(a); l.forEach(visit)
            case .caseWhen(let o, let w, let el):
                o.map(visit); w.forEach { visit($0.when); visit($0.then) }; el.map(visit)
            case .quantified(_, _, let a, let p): visit(a); visit(p)
            case .literal, .property, .meta: break
            }
        }
        visit(e)
        return found
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and newlines.
    var trimmingSpaces: String {
        let ws: Set<Character> = [" ", "\t", "\n", "\r"]
        var s = Substring(self)
        while let f = s.first, ws.contains(f) { s.removeFirst() }
        while let l = s.last, ws.contains(l) { s.removeLast() }
        return String(s)
    }

    /// Splits on every occurrence of `separator` (non-empty).
    func components(separatedBy separator: String) -> [String] {
        var parts: [String] = []
        var rest = Substring(self)
        while let r = rest.range(of: separator) {
            parts.append(String(rest[..<r.lowerBound]))
            rest = rest[r.upperBound...]
        }
        parts.append(String(rest))
        return parts
    }
}

extension Substring {
    func range(of needle: String) -> Range<Substring.Index>? {
        guard !needle.isEmpty else { return nil }
        var i = startIndex
        while i < endIndex {
            if self[i...].hasPrefix(needle) { return i..<(index(i, offsetBy: needle.count)) }
            i = index(after: i)
        }
        return nil
    }
}
