/// Builds the row source of each plan level from its access path.
enum RowSourceFactory {
    static func make(_ sp: SourcePlan, parameters: [String: Value]) throws -> RowSource {
        let slot = sp.source.index
        switch sp.access {
        case .fullScan:
            guard let store = sp.store else { throw DatabaseError(.notFound, "collection of '\(sp.source.alias)' is gone") }
            return CollectionScan(slot: slot, table: store.docs, includeDeleted: sp.source.includeDeleted)
        case .unnest(let path):
            return UnnestScan(slot: slot, array: ExpressionCompiler.compile(path))
        case .indexScan(let scan):
            guard let store = sp.store else { throw DatabaseError(.notFound, "collection of '\(sp.source.alias)' is gone") }
            return IndexScan(slot: slot, plan: scan, docs: store.docs,
                             includeDeleted: sp.source.includeDeleted)
        case .fullText(let ft):
            guard let store = sp.store else { throw DatabaseError(.notFound, "collection of '\(sp.source.alias)' is gone") }
            return try FullTextScan(slot: slot, plan: ft, docs: store.docs, parameters: parameters)
        }
    }
}

/// Placeholder until full-text scans land.
final class FullTextScan: RowSource {
    init(slot: Int, plan: FullTextPlan, docs: LMDB.Table, parameters: [String: Value]) throws { super.init(slot: slot) }
}

import LMDB
