/// An array index (SPEC §9.3): one entry per reachable element of the array at `path` (nested
/// levels joined by `[]`) of every live document — the element itself, or the index
/// expressions evaluated on it — for UNNEST chains over the same path. Elements of one
/// document with the same key share one entry, whose value counts them (`IndexKey.occurrences`),
/// so that a covering scan yields as many UNNEST rows as the document's array has.
final class ArrayIndexKind: ElementIndexKind {
    static let type = IndexType.array
    /// Format 4 added the occurrence count (and exactness) to each entry.
    static func needsRebuild(fromFormat format: UInt32) -> Bool { format < 4 }
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
            guard let root = BinaryValue.root(body), let array = evaluation.lookup(levelPath, hint: 0, in: root),
                  array.kind == .array, array.isValid else { return }
            for e in array.elements {
                arena.appendComponent(binary: e)
                arena.finishKey(docID: docID)
            }
            return
        }
        let ctx = evaluation.context()
        for e in documentElements(index, body: body, context: ctx) {
            appendKey(of: e, index, docID: docID, context: ctx, into: &arena)
        }
    }

    func elements(_ index: IndexStore, docID: String, body: UnsafeRawBufferPointer, context ctx: ExecContext,
                  key: UnsafeRawBufferPointer) -> [Value] {
        var arena = KeyArena()
        var id = docID
        return id.withUTF8 { p in
            documentElements(index, body: body, context: ctx).filter { e in
                arena.removeAll()
                appendKey(of: e, index, docID: UnsafeRawBufferPointer(p), context: ctx, into: &arena)
                return arena.withKey(0) { $0.elementsEqual(key) }
            }
        }
    }

    func elementsAreWhole(_ index: IndexStore, in head: BinaryValue) -> Bool {
        // The outermost array decodes whole: every element and level below is in it. A
        // `where` may read anything: the whole record then.
        index.whereClause == nil && head.lookup(levels[0])?.decode() != nil
    }

    /// From a head whose outermost array is whole: `appendEntries` reads that array and
    /// nothing else (the expressions read the elements).
    func appendEntries(_ index: IndexStore, docID: UnsafeRawBufferPointer, head: UnsafeRawBufferPointer,
                       evaluation: inout KeyedEvaluation, into arena: inout KeyArena) -> Bool {
        guard let root = BinaryValue.root(head), elementsAreWhole(index, in: root) else { return false }
        appendEntries(index, docID: docID, body: head, evaluation: &evaluation, into: &arena)
        return true
    }

    /// The innermost elements of a document (none if it is outside the index).
    private func documentElements(_ index: IndexStore, body: UnsafeRawBufferPointer, context ctx: ExecContext) -> [Value] {
        guard index.bind(ctx, body: body), let root = ctx.slots[0].body else { return [] }
        var elements: [Value] = []
        collectElements(root.value(at: levels[0]), level: 1, into: &elements)
        return elements
    }

    /// Appends the key of element `e`: the element itself, or the index expressions on it.
    private func appendKey(of e: Value, _ index: IndexStore, docID: UnsafeRawBufferPointer, context ctx: ExecContext,
                           into arena: inout KeyArena) {
        if index.expressions.isEmpty {
            arena.appendComponent(e)
        } else {
            ctx.slots[0] = SourceSlot(state: .element, element: e)
            for v in index.evaluate(ctx) { arena.appendComponent(v) }
        }
        arena.finishKey(docID: docID)
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
        let covering = isArrayCovering(index, chain: chain)
        // A covering scan binds the element from the entry's key: an exact term on the
        // innermost alias holds for every entry in its range, so it leaves the filter (the
        // entries the range cannot classify re-check it on the elements read from the
        // document). Other array scans unnest the document again and keep the filter.
        let satisfied = covering ? used.filter { $0.exact && $0.term.referencedSources.isSubset(of: [innermost]) }.map(\.term) : []
        var scan = KeyRangeScanPlan(store: index, descending: false, covering: covering,
                                    describedPredicates: used.map(\.text).joined(separator: " AND "), satisfied: satisfied, expressions: exprs)
        scan.arraySources = chain
        scan.keys = IndexScanKeys(equalities: equalities, rangeConstraint: rangeConstraint, spread: KeyedPlanning.spreadColumns(used))
        let rows = try estimateEntries(index, equalities: equalities, range: rangeConstraint, spread: KeyedPlanning.spreadColumns(used)).rows
        return AccessCandidate(plan: scan, satisfied: satisfied, deliversOrder: false,
                               cost: AccessCost(equalityColumns: equalities.count, rangeColumns: rangeConstraint == nil ? 0 : 1,
                                                estimatedRows: Int(rows.rounded(.up)),
                                                estimatedCost: CostModel.indexScan(rows: rows, covering: false)))
    }

    /// True if the query reads nothing but `meta().id` of the collection source and, of the
    /// innermost UNNEST alias, the element itself (an index without expressions) or the
    /// index expressions' paths: the array index then yields the rows alone (its entries
    /// count the element's occurrences), and the outer UNNEST aliases of a nested path must
    /// not be read. The query's sources must be the collection and its UNNEST chain.
    func isArrayCovering(_ index: IndexStore, chain: [Int]) -> Bool {
        guard let innermost = chain.last, query.sources.count == chain.count + 1, source.index == 0,
              query.sources.allSatisfy({ $0.join == nil }) else { return false }
        var paths: Set<[PathComponent]> = []
        for e in index.expressions {
            guard case .sourcePath(0, let p) = e, !p.isEmpty else { return false }
            paths.insert(p)
        }
        return readsOnly { n in
            switch n {
            case .sourcePath(let s, let p) where s == innermost: return index.expressions.isEmpty || paths.contains(p)
            case .meta(let s, let k): return s == source.index && k == .id
            default: return false
            }
        }
    }
}
