@testable import Tessera

/// Document keys as readable strings.
func docKey(_ s: String) -> [UInt8] { Array(s.utf8) }

/// Sorted readable names of matching documents.
func names(_ m: FullTextMatches<[UInt8]>) -> [String] {
    m.documents.map { String(decoding: $0, as: UTF8.self) }.sorted()
}

/// The seeded random source of the full-text tests.
struct SeededRandom {
    var base: SplitMix64
    init(seed: UInt64) { base = SplitMix64(seed: seed) }
    /// A number in 0..<n.
    mutating func int(_ n: Int) -> Int { Int(base.next() % UInt64(n)) }
    /// A random element.
    mutating func pick<T>(_ a: [T]) -> T { a[int(a.count)] }
    /// True with the given probability in percent.
    mutating func chance(_ percent: Int) -> Bool { int(100) < percent }
}

/// A temporary database with an empty collection `docs`; the caller closes the database.
func temporaryDocsDatabase() throws -> (Database, Collection) {
    let db = try Database.temporary()
    do {
        return (db, try db.createCollection(name: "docs"))
    } catch {
        try? db.close()
        throw error
    }
}
