

/// Builds the row source of each plan level from its access path.
enum RowSourceFactory {
    /// - Parameter rowsWanted: LIMIT + OFFSET when known: a rank-ordered full-text scan
    ///   selects that many best matches first instead of ordering all of them.
    static func make(_ sp: SourcePlan, parameters: [String: Value], rowsWanted: Int? = nil) throws -> RowSource {
        let slot = sp.source.index
        switch sp.access {
        case .fullScan:
            guard let store = sp.store else { throw DatabaseError(.notFound, "collection of '\(sp.source.alias)' is gone") }
            return CollectionScan(slot: slot, tables: store.documents, includeDeleted: sp.source.includeDeleted)
        case .unnest(let path):
            return UnnestScan(slot: slot, array: ExpressionCompiler.compile(path))
        case .boundByIndex:
            return BoundRowScan(slot: slot)
        case .index(let plan):
            guard let store = sp.store else { throw DatabaseError(.notFound, "collection of '\(sp.source.alias)' is gone") }
            return try plan.makeRowSource(slot: slot, docs: store.documents, includeDeleted: sp.source.includeDeleted,
                                          parameters: parameters, rowsWanted: rowsWanted)
        }
    }
}

