import Testing
@testable import Tessera

/// The rows of `sql` on `db`, each as JSON.
func resultRows(_ db: Database, _ sql: String) throws -> [String] {
    try db.createQuery(sql).execute().allResults().map { $0.toJSON() }
}

/// Expects every query to return the same rows on `indexed` as on `plain` (the same data
/// without indexes): in the same order when the query has an ORDER BY, else as multisets.
func expectSameRows(_ indexed: Database, _ plain: Database, _ queries: [String],
                    sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
    for sql in queries {
        let x = try resultRows(indexed, sql), y = try resultRows(plain, sql)
        if sql.contains("ORDER BY") {
            #expect(x == y, "\(sql)", sourceLocation: sourceLocation)
        } else {
            #expect(x.sorted() == y.sorted(), "\(sql)", sourceLocation: sourceLocation)
        }
    }
}
