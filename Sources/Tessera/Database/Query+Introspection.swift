// What a compiled query asks for: its parameter names, and whether it orders its rows.

extension Query {
    /// The names of the query's `$parameters`, sorted, without the `$`
    /// (`SELECT * FROM c WHERE a = $x AND b > $lo` gives `["lo", "x"]`).
    ///
    /// A `Parameters` value may bind only these names: binding another is a
    /// `QueryError` of kind `.semantic` when the query runs.
    public var parameterNames: [String] {
        get throws { try analyze(catalogSnapshot()).parameterNames.sorted() }
    }

    /// True if the statement has an ORDER BY clause (its rows come in a defined order).
    package var hasOrderBy: Bool { !statement.orderBy.isEmpty }
}
