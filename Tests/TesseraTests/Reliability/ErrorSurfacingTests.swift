import Foundation
import LMDB
@testable import Tessera
import Testing

/// Issue 15, part 4: a read error is thrown where it happens, never taken for "no more rows"
/// or "0 documents", and damaged full-text bytes surface as `DatabaseError.corrupt`.
@Suite("Reliability: errors are never silent")
struct ErrorSurfacingTests {
    /// A database at `dir` with collection `docs`, `count` documents whose `text` holds
    /// "hello", and full-text indexes `ft` and `ft2` on `text`; closed on return.
    func makeTextDatabase(_ dir: ScratchDirectory, count: Int) throws {
        let db = try Database(path: dir.path)
        let c = try db.createCollection(name: "docs")
        try db.inBatch {
            for i in 0..<count {
                try c.save(id: String(format: "d%03d", i), properties: ["text": .string("hello number \(i)"), "n": .int(Int64(i))])
            }
        }
        try c.createIndex(withName: "ft", config: FullTextIndexConfiguration(["text"]))
        try c.createIndex(withName: "ft2", config: FullTextIndexConfiguration(["text"]))
        try db.close()
    }

    /// Opens the closed database at `dir` with the LMDB wrapper and changes table `name`.
    func damage(_ dir: ScratchDirectory, table name: String, _ body: (Transaction, Table) throws -> Void) throws {
        let env = try Environment(path: dir.path)
        defer { env.close() }
        let table = try #require(try env.openTable(name, create: false))
        try env.write { txn in try body(txn, table) }
    }

    /// Every key of `table`, copied.
    func keys(_ txn: Transaction, _ table: Table) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        try txn.withCursor(table) { c in
            try c.forEach { k, _ in
                out.append(Array(k))
                return true
            }
        }
        return out
    }

    /// Expects `body` to throw `.corrupt` naming index `ft2`.
    func expectCorrupt(_ what: String, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("\(what): no error")
        } catch let e as DatabaseError {
            #expect(e.code == .corrupt, "\(what): \(e)")
            #expect(e.message.contains("'ft2'"), "\(what): \(e.message)")
        } catch {
            Issue.record("\(what): \(type(of: error)) instead of DatabaseError.corrupt: \(error)")
        }
    }

    // MARK: - ResultSet

    /// Removes the document-number → ID entries of the upper half of the documents, so a
    /// MATCH query reads half its rows and then meets the damage.
    func dropUpperHalfOfDocumentNumbers(_ dir: ScratchDirectory) throws {
        try damage(dir, table: "idx:_default.docs:ft:stats") { txn, stats in
            let numbers = try keys(txn, stats).filter { $0.first == 0x02 }.sorted { $0.lexicographicallyPrecedes($1) }
            #expect(numbers.count == 40)
            for k in numbers.suffix(20) { _ = try txn.delete(stats, key: k) }
        }
    }

    static let matchSQL = "SELECT meta().id AS id FROM docs WHERE MATCH(ft, 'hello')"

    @Test func aReadErrorInTheMiddleOfTheRowsIsThrownNotTakenForTheEnd() throws {
        let dir = ScratchDirectory("midread")
        defer { dir.remove() }
        try makeTextDatabase(dir, count: 40)
        try dropUpperHalfOfDocumentNumbers(dir)
        let db = try Database(path: dir.path)
        defer { try? db.close() }
        let q = try db.createQuery(Self.matchSQL)

        let rows = try q.execute()
        var read = 0
        do {
            while try rows.next() != nil { read += 1 }
            Issue.record("the rows ended after \(read) without an error")
        } catch let e as DatabaseError {
            #expect(e.code == .corrupt)
            #expect(e.message.contains("'ft'"), "\(e.message)")
        }
        #expect(read == 20)
        // The cursor stays failed: the next call throws again instead of saying "done".
        #expect(throws: DatabaseError.self) { try rows.next() }

        var seen = 0
        #expect(throws: DatabaseError.self) { try q.execute().forEach { _ in seen += 1 } }
        #expect(seen == 20)
        #expect(throws: DatabaseError.self) { try q.execute().allResults() }
    }

    @Test func anAsyncLoopOverTheRowsThrowsTheReadError() async throws {
        let dir = ScratchDirectory("midread-async")
        defer { dir.remove() }
        try makeTextDatabase(dir, count: 40)
        try dropUpperHalfOfDocumentNumbers(dir)
        let db = try Database(path: dir.path)
        defer { try? db.close() }
        var read = 0
        do {
            for try await row in try db.createQuery(Self.matchSQL).execute() {
                #expect(row.string(forKey: "id") != nil)
                read += 1
            }
            Issue.record("the async loop ended after \(read) rows without an error")
        } catch let e as DatabaseError {
            #expect(e.code == .corrupt)
        }
        #expect(read == 20)
    }

    @Test func anAsyncLoopReadsEveryRow() async throws {
        let dir = ScratchDirectory("async-rows")
        defer { dir.remove() }
        try makeTextDatabase(dir, count: 40)
        let db = try Database(path: dir.path)
        defer { try? db.close() }
        var ids: [String] = []
        for try await row in try db.createQuery("SELECT meta().id AS id FROM docs ORDER BY n").execute() {
            ids.append(row.string(forKey: "id") ?? "?")
        }
        #expect(ids == (0..<40).map { String(format: "d%03d", $0) })
    }

    // MARK: - count

    @Test func countThrowsInsteadOfSayingZero() throws {
        let db = try Database.temporary()
        let c = try db.createCollection(name: "docs")
        try c.save(id: "a", properties: ["x": 1])
        #expect(try c.count == 1)
        try db.close()
        #expect(throws: DatabaseError.self) { try c.count }
    }

    // MARK: - Damaged full-text postings

    @Test func damagedFullTextPostingsAreCorruptErrorsNamingTheIndex() throws {
        let dir = ScratchDirectory("ftcorrupt")
        defer { dir.remove() }
        try makeTextDatabase(dir, count: 10)
        // Every postings block of `ft2` becomes a truncated varint (`ft` stays intact).
        try damage(dir, table: "idx:_default.docs:ft2") { txn, postings in
            for k in try keys(txn, postings) { _ = try txn.put(postings, key: k, value: [0xFF, 0xFF]) }
        }
        let db = try Database(path: dir.path)
        defer { try? db.close() }
        let c = try db.collection(name: "docs")!

        expectCorrupt("MATCH driving the scan") {
            _ = try db.createQuery("SELECT meta().id FROM docs WHERE MATCH(ft2, 'hello')").execute().allResults()
        }
        expectCorrupt("ordered by RANK") {
            _ = try db.createQuery("SELECT meta().id FROM docs WHERE MATCH(ft2, 'hello') ORDER BY RANK(ft2) DESC LIMIT 3").execute().allResults()
        }
        // `ft` drives (EXPLAIN: SEARCH docs USING FULL-TEXT INDEX ft); `ft2` filters.
        expectCorrupt("MATCH filtering, not driving") {
            _ = try db.createQuery("SELECT meta().id FROM docs WHERE MATCH(ft, 'hello') AND MATCH(ft2, 'hello')").execute().allResults()
        }
        // A small save writes its postings as a segment (format 7) without reading the
        // blocks; merging the segments into the blocks meets the damage.
        try c.save(id: "d999", properties: ["text": "hello again"])
        expectCorrupt("merging a segment into damaged blocks") { try db.performMaintenance(.optimize) }
        // Deleting retires the document's number without reading its blocks (format 5): it
        // does not meet the damage, and the check below still reports it.
        try c.delete(id: "d001")
        // The integrity check reports the damage or stops with the same typed error.
        do {
            let report = try db.performMaintenance(.integrityCheck)
            #expect(!report.isOK)
        } catch let e as DatabaseError {
            #expect(e.code == .corrupt && e.message.contains("'ft2'"), "\(e)")
        }
    }
}
