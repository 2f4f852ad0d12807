extension Collection {
    /// Creates an index, or does nothing if an identical one exists under `name`.
    ///
    /// The index is built over every live document before this returns, and is kept up to
    /// date by every later save, delete and purge, in the same transaction. A different
    /// definition under the same name replaces (rebuilds) the old index.
    ///
    /// - Throws: `DatabaseError(.invalidIndex)` for an invalid name, expression, `where` or
    ///   array path (its `underlying` is the `QueryError` with the position); nothing is created.
    public func createIndex(withName name: String, config: any IndexConfiguration) throws {
        try createIndex(config.definition(name: name))
    }

    /// Creates an index from a stored definition (see `createIndex(withName:config:)`).
    package func createIndex(_ definition: IndexDefinition) throws {
        // Validate before touching storage: errors leave nothing behind.
        try IndexStore.validate(definition, collection: key)
        try database.write { ctx in
            let store = try ctx.store(key)
            var defs = ctx.catalog.indexDefinitions[key] ?? []
            var indexes = store.indexes
            if let i = defs.firstIndex(where: { $0.name == definition.name }) {
                if defs[i] == definition { return }
                try indexes[i].drop(txn: ctx.txn)
                defs.remove(at: i)
                indexes.remove(at: i)
            }
            let index = try IndexStore.open(definition, collection: key, txn: ctx.txn)
            try index.backfill(txn: ctx.txn, docs: store.documents, meta: database.metaTable)
            defs.append(definition)
            indexes.append(index)
            ctx.replaceStore(store.with(indexes: indexes), definitions: defs)
        }
    }

    /// Deletes the index `name`; no-op if there is none.
    public func deleteIndex(forName name: String) throws {
        try database.write { ctx in
            let store = try ctx.store(key)
            var defs = ctx.catalog.indexDefinitions[key] ?? []
            var indexes = store.indexes
            guard let i = defs.firstIndex(where: { $0.name == name }) else { return }
            try indexes[i].drop(txn: ctx.txn)
            try IndexStatistics.remove(indexes[i], txn: ctx.txn, meta: database.metaTable)
            defs.remove(at: i)
            indexes.remove(at: i)
            ctx.replaceStore(store.with(indexes: indexes), definitions: defs)
        }
    }

    /// The names of this collection's indexes, ascending.
    public func indexes() throws -> [String] {
        _ = try database.refreshCatalogIfStale()
        return try currentStore().indexes.map(\.definition.name).sorted()
    }

    /// The index `name`, or nil.
    public func index(withName name: String) throws -> QueryIndex? {
        _ = try database.refreshCatalogIfStale()
        guard let s = try currentStore().indexes.first(where: { $0.definition.name == name }) else { return nil }
        return QueryIndex(name: name, collection: self, definition: s.definition)
    }
}

/// An index as reported by `Collection.index(withName:)`.
public struct QueryIndex: Sendable {
    /// The index name.
    public let name: String
    /// The collection it belongs to.
    public let collection: Collection
    /// Its definition.
    public let definition: IndexDefinition
}
