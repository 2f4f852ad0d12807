/// An array index (SPEC §9.3): one entry per reachable element of the array at `path` (nested
/// levels joined by `[]`) of every live document — the element itself, or the index
/// expressions evaluated on it — for UNNEST chains over the same path.
final class ArrayIndexKind: KeyedIndexKind {
    static let type = IndexType.array
    static let allowsWhere = false
    static let requiresExpressions = false
    /// The path of each nesting level.
    let levels: [[PathComponent]]
    /// The first level's path, compiled for lookups in place.
    let levelPath: CompiledPath

    init(definition: IndexDefinition, compiled: CompiledIndexDefinition) throws {
        levels = try ArrayIndexKind.arrayLevels(definition.path ?? "", index: definition.name)
        levelPath = CompiledPath(levels[0])
        if definition.expressions.contains(where: { $0.allSatisfy { $0 == " " } }) {
            throw DatabaseError(.invalidIndex, "index '\(definition.name)': an empty expression is not allowed (use no expressions for scalar arrays)")
        }
    }

    static let optionKeys: Set<String> = ["path"]

    static func options(fromJSON o: [String: Value]) throws -> [String: Value] {
        guard let path = o["path"]?.stringValue else { throw DatabaseError(.invalidIndex, "an array index needs 'path'") }
        return ["path": .string(path)]
    }

    static func summary(_ d: IndexDefinition) -> String {
        var s = "array " + (d.path ?? "?")
        if !d.expressions.isEmpty { s += " (" + d.expressions.joined(separator: ", ") + ")" }
        return s
    }

    func appendEntries(_ index: IndexStore, docID: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer,
                       evaluation: inout KeyedEvaluation, into arena: inout KeyArena) {
        if levels.count == 1 && index.expressions.isEmpty {
            // One level of scalars or values (`likes`): each element encoded in place. An
            // unreadable array is MISSING, as its decoding would be: no entries.
            guard let root = BinaryValue.root(body), let array = levelPath.lookup(in: root),
                  array.kind == .array, array.isValid else { return }
            for e in array.elements {
                arena.appendComponent(binary: e)
                arena.finishKey(docID: docID)
            }
            return
        }
        let ctx = evaluation.context()
        guard index.bind(ctx, body: body), let root = ctx.slots[0].body else { return }
        var elements: [Value] = []
        collectElements(root.value(at: levels[0]), level: 1, into: &elements)
        for e in elements {
            if index.expressions.isEmpty {
                arena.appendComponent(e)
            } else {
                ctx.slots[0] = SourceSlot(state: .element, element: e)
                for v in index.evaluate(ctx) { arena.appendComponent(v) }
            }
            arena.finishKey(docID: docID)
        }
    }

    /// The innermost elements reachable through the array levels (non-arrays contribute none).
    func collectElements(_ v: Value, level: Int, into out: inout [Value]) {
        guard case .array(let items) = v else { return }
        if level == levels.count {
            out.append(contentsOf: items)
            return
        }
        for item in items { collectElements(item.value(at: levels[level]), level: level + 1, into: &out) }
    }

    func accessPaths(_ index: IndexStore, for request: AccessRequest) throws -> [AccessCandidate] {
        // Not for the inner side of a LEFT JOIN: its unmatched rows must still appear.
        guard request.source.join != .leftOuter else { return [] }
        return try KeyedPlanning(request: request).considerArray(index, levels: levels).map { [$0] } ?? []
    }

    /// `contacts[].phones` → [[contacts], [phones]]; a trailing `[]` is optional.
    static func arrayLevels(_ path: String, index: String) throws -> [[PathComponent]] {
        var p = path.trimmingSpaces
        if p.hasSuffix("[]") { p.removeLast(2) }
        guard !p.isEmpty else {
            throw DatabaseError(.invalidIndex, "array index '\(index)': path '\(path)' is empty",
                                underlying: QueryError(.semantic, "invalid array index path '\(path)'"))
        }
        var levels: [[PathComponent]] = []
        for part in p.components(separatedBy: "[]") {
            var text = part
            if text.hasPrefix(".") { text.removeFirst() }
            let expr: Expr
            do { expr = try SQLParser.parseExpression(text) } catch {
                throw DatabaseError(.invalidIndex, "array index '\(index)': invalid path '\(path)': \(error)", underlying: error)
            }
            guard case .property(let comps, _) = expr, !comps.isEmpty else {
                throw DatabaseError(.invalidIndex, "array index '\(index)': path '\(path)' must be a property path",
                                    underlying: QueryError(.semantic, "array index path must be a property path"))
            }
            levels.append(comps)
        }
        return levels
    }
}

extension KeyedPlanning {
    func considerArray(_ index: IndexStore, levels: [[PathComponent]]) throws -> AccessCandidate? {
        var chain: [Int] = []
        var parent = source.index
        for level in levels {
            guard let u = query.sources.first(where: { s in
                if case .unnest(.sourcePath(let p, let path)) = s.kind, p == parent, path == level, s.index > parent { return true }
                return false
            }) else { return nil }
            chain.append(u.index)
            parent = u.index
        }
        guard let innermost = chain.last else { return nil }
        let exprs = index.expressions.isEmpty ? [BoundExpr.sourcePath(0, [])] : index.expressions
        let names: [String] = exprs.map { e in
            if case .sourcePath(_, let p) = e { return p.isEmpty ? query.sources[innermost].alias : SQLPathText.text(p) }
            return BoundExprPrinter(sources: [query.sources[innermost]]).print(e)
        }
        var byColumn: [Int: [ColumnTerm]] = [:]
        for t in terms where t.referencedSources == [innermost] || t.referencedSources.isSubset(of: Set(0..<source.index).union([innermost])) {
            if let m = match(term: t, expressions: exprs, slot: innermost, columnName: { names[$0] }) {
                byColumn[m.column, default: []].append(m)
            }
        }
        let (equalities, used, rangeConstraint) = KeyedPlanning.constrainPrefix(byColumn, columns: exprs.count)
        guard !used.isEmpty else { return nil }
        var scan = KeyRangeScanPlan(store: index, descending: false, covering: false,
                                    describedPredicates: used.map(\.text).joined(separator: " AND "), satisfied: [], expressions: exprs)
        scan.arraySources = chain
        scan.keys = IndexScanKeys(equalities: equalities, rangeConstraint: rangeConstraint, spread: KeyedPlanning.spreadColumns(used))
        let rows = try estimateEntries(index, equalities: equalities, range: rangeConstraint).rows
        return AccessCandidate(plan: scan, satisfied: [], deliversOrder: false,
                               cost: AccessCost(equalityColumns: equalities.count, rangeColumns: rangeConstraint == nil ? 0 : 1,
                                                estimatedRows: Int(rows.rounded(.up)),
                                                estimatedCost: CostModel.indexScan(rows: rows, covering: false)))
    }
}
