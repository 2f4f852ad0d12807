import CSQLite

/// The SQLite side, set up the way Couchbase Lite (LiteCore 3.x) uses SQLite, with JSON text
/// bodies instead of Fleece:
///
/// - one table `docs (id TEXT PRIMARY KEY, body TEXT)` (an implicit rowid, as in LiteCore's `kv_` tables);
/// - LiteCore's pragmas: `auto_vacuum=incremental`, `journal_mode=WAL`, `synchronous=normal`,
///   a 10 MB page cache, 50 MB of mmap, a 5 MB WAL size limit, case-sensitive LIKE;
/// - value indexes as expression indexes on `json_extract(body, '$.path')`, a partial index
///   with `WHERE json_extract(body, '$.type') = 'hotel'`;
/// - the array index as LiteCore's "unnest" table (docid = the document's rowid, i, value)
///   with an index on `value`, kept up to date by triggers over `json_each`;
/// - full text as LiteCore's FTS4 table (docid = rowid, triggers, `rank(matchinfo(…))`), plus an
///   FTS5 table ranked by bm25 for comparison (queries only, built over existing data);
/// - prepared statements throughout and one transaction per bulk load or update batch.
///
/// Tokenizers: `unicode61` without diacritic removal (Tessera's full-text index is configured with
/// `language: ""`, no stemming, no stop words), so both engines match the same documents.
final class SQLiteSide {
    let path: String
    let db: SQLiteConnection
    private var statements: [String: SQLiteStatement] = [:]

    /// Removes any database at `path` and creates an empty one with the CBL configuration.
    init(path: String) throws {
        SQLiteSide.remove(path: path)
        self.path = path
        db = try SQLiteConnection(path: path)
        try db.exec("PRAGMA auto_vacuum=incremental; PRAGMA journal_mode=WAL;")
        try db.exec("""
            PRAGMA cache_size=-10240; PRAGMA mmap_size=52428800; PRAGMA synchronous=normal;
            PRAGMA journal_size_limit=5242880; PRAGMA case_sensitive_like=true;
            """)
        try db.registerRankFunction()
        try db.exec("CREATE TABLE docs (id TEXT PRIMARY KEY, body TEXT NOT NULL)")
    }

    /// Deletes the database file and its WAL and shared-memory files.
    static func remove(path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { _ = unlink(path + suffix) }
    }

    func statement(_ sql: String) throws -> SQLiteStatement {
        if let s = statements[sql] { return s }
        let s = try db.prepare(sql)
        statements[sql] = s
        return s
    }

    // MARK: - Indexes

    /// `city` and `price` value indexes.
    func createValueIndexes() throws {
        try db.exec("CREATE INDEX docs_city ON docs (json_extract(body, '$.city'))")
        try db.exec("CREATE INDEX docs_price ON docs (json_extract(body, '$.price'))")
    }

    /// The `city` value index alone (index-creation workload).
    func createCityIndex() throws { try db.exec("CREATE INDEX docs_city ON docs (json_extract(body, '$.city'))") }
    func dropCityIndex() throws { try db.exec("DROP INDEX docs_city") }

    /// `rating` for hotels only.
    func createPartialIndex() throws {
        try db.exec("""
            CREATE INDEX docs_hotel_rating ON docs (json_extract(body, '$.rating'))
            WHERE json_extract(body, '$.type') = 'hotel'
            """)
    }
    func dropPartialIndex() throws { try db.exec("DROP INDEX docs_hotel_rating") }

    /// The `likes` array index: an unnest table filled from existing documents, an index on the
    /// element value, and triggers that keep it in step with inserts, deletes and updates.
    func createArrayIndex() throws {
        try db.exec("""
            CREATE TABLE docs_unnest_likes (docid INTEGER NOT NULL REFERENCES docs(rowid), i INTEGER NOT NULL,
                                            value NOT NULL, CONSTRAINT pk PRIMARY KEY (docid, i));
            INSERT INTO docs_unnest_likes (docid, i, value)
                SELECT d.rowid, e.key, e.value FROM docs AS d, json_each(d.body, '$.likes') AS e;
            CREATE INDEX docs_likes ON docs_unnest_likes (value);
            CREATE TRIGGER docs_unnest_likes_ins AFTER INSERT ON docs BEGIN
                INSERT INTO docs_unnest_likes (docid, i, value)
                    SELECT new.rowid, e.key, e.value FROM json_each(new.body, '$.likes') AS e; END;
            CREATE TRIGGER docs_unnest_likes_del BEFORE DELETE ON docs BEGIN
                DELETE FROM docs_unnest_likes WHERE docid = old.rowid; END;
            CREATE TRIGGER docs_unnest_likes_preupdate BEFORE UPDATE OF body ON docs BEGIN
                DELETE FROM docs_unnest_likes WHERE docid = old.rowid; END;
            CREATE TRIGGER docs_unnest_likes_postupdate AFTER UPDATE OF body ON docs BEGIN
                INSERT INTO docs_unnest_likes (docid, i, value)
                    SELECT new.rowid, e.key, e.value FROM json_each(new.body, '$.likes') AS e; END;
            """)
    }
    func dropArrayIndex() throws {
        try db.exec("""
            DROP TRIGGER docs_unnest_likes_ins; DROP TRIGGER docs_unnest_likes_del;
            DROP TRIGGER docs_unnest_likes_preupdate; DROP TRIGGER docs_unnest_likes_postupdate;
            DROP TABLE docs_unnest_likes;
            """)
    }

    /// The FTS4 full-text index on `description`, as LiteCore builds it (docid = rowid, triggers).
    func createFTS4Index() throws {
        try db.exec("""
            CREATE VIRTUAL TABLE docs_fts4_desc USING fts4(description, tokenize=unicode61 "remove_diacritics=0");
            INSERT INTO docs_fts4_desc (docid, description)
                SELECT rowid, json_extract(body, '$.description') FROM docs;
            CREATE TRIGGER docs_fts4_ins AFTER INSERT ON docs BEGIN
                INSERT INTO docs_fts4_desc (docid, description) VALUES (new.rowid, json_extract(new.body, '$.description')); END;
            CREATE TRIGGER docs_fts4_del AFTER DELETE ON docs BEGIN
                DELETE FROM docs_fts4_desc WHERE docid = old.rowid; END;
            CREATE TRIGGER docs_fts4_preupdate BEFORE UPDATE OF body ON docs BEGIN
                DELETE FROM docs_fts4_desc WHERE docid = old.rowid; END;
            CREATE TRIGGER docs_fts4_postupdate AFTER UPDATE OF body ON docs BEGIN
                INSERT INTO docs_fts4_desc (docid, description) VALUES (new.rowid, json_extract(new.body, '$.description')); END;
            """)
    }
    func dropFTS4Index() throws {
        try db.exec("""
            DROP TRIGGER docs_fts4_ins; DROP TRIGGER docs_fts4_del;
            DROP TRIGGER docs_fts4_preupdate; DROP TRIGGER docs_fts4_postupdate;
            DROP TABLE docs_fts4_desc;
            """)
    }

    /// A contentless FTS5 table on `description` over existing documents (no triggers: it serves
    /// the FTS5 query workloads only and is dropped before updates).
    func createFTS5Index() throws {
        try db.exec("""
            CREATE VIRTUAL TABLE docs_fts5_desc USING fts5(description, content='', tokenize='unicode61 remove_diacritics 0');
            INSERT INTO docs_fts5_desc (rowid, description) SELECT rowid, json_extract(body, '$.description') FROM docs;
            """)
    }
    func dropFTS5Index() throws {
        statements = statements.filter { !$0.key.contains("docs_fts5_desc") }
        try db.exec("DROP TABLE docs_fts5_desc")
    }

    /// Every index of the "all indexes" configuration (FTS4, as Couchbase Lite).
    func createAllIndexes() throws {
        try createValueIndexes()
        try createPartialIndex()
        try createArrayIndex()
        try createFTS4Index()
    }

    // MARK: - Writes

    /// Inserts documents in one transaction with one prepared statement.
    func load(_ docs: [BenchDocument]) throws -> Int {
        let insert = try statement("INSERT INTO docs (id, body) VALUES (?1, ?2)")
        try db.exec("BEGIN")
        do {
            for d in docs {
                try insert.withBoundText(1, d.id) {
                    try insert.withBoundText(2, d.json) { try insert.run() }
                }
            }
            try db.exec("COMMIT")
        } catch {
            try? db.exec("ROLLBACK")
            throw error
        }
        return docs.count
    }

    /// Replaces bodies in one transaction (triggers update the unnest and FTS tables).
    func update(_ docs: [BenchDocument]) throws -> Int {
        let upd = try statement("UPDATE docs SET body = ?2 WHERE id = ?1")
        var changed = 0
        try db.exec("BEGIN")
        do {
            for d in docs {
                try upd.withBoundText(1, d.id) {
                    try upd.withBoundText(2, d.json) { try upd.run() }
                }
                changed += Int(sqlite3_changes(db.handle))
            }
            try db.exec("COMMIT")
        } catch {
            try? db.exec("ROLLBACK")
            throw error
        }
        return changed
    }

    // MARK: - Reads

    /// Fetches each document body by ID; returns how many were found.
    func pointGets(_ ids: [String]) throws -> Int {
        let st = try statement("SELECT body FROM docs WHERE id = ?1")
        var found = 0
        for id in ids {
            try st.withBoundText(1, id) {
                if try st.step() {
                    let body = st.bytes(0)
                    if !body.isEmpty { found += 1 }
                }
                st.reset()
            }
        }
        return found
    }

    /// Rows and a checksum (sum of prices) of `city = ?` for each city.
    func equality(_ cities: [String]) throws -> (rows: Int, checksum: Int) {
        let st = try statement("""
            SELECT id, json_extract(body, '$.name'), json_extract(body, '$.price') FROM docs
            WHERE json_extract(body, '$.city') = ?1
            """)
        return try rowsIDNamePrice(st, cities.map { c in { st.bind(1, c) } })
    }

    /// `price BETWEEN a AND b ORDER BY price LIMIT 20` for each range.
    func range(_ ranges: [(Int, Int)]) throws -> (rows: Int, checksum: Int) {
        let st = try statement("""
            SELECT id, json_extract(body, '$.name'), json_extract(body, '$.price') FROM docs
            WHERE json_extract(body, '$.price') BETWEEN ?1 AND ?2 ORDER BY json_extract(body, '$.price') LIMIT 20
            """)
        return try rowsIDNamePrice(st, ranges.map { r in { st.bind(1, r.0); st.bind(2, r.1) } })
    }

    private func rowsIDNamePrice(_ st: SQLiteStatement, _ binders: [() -> Void]) throws -> (rows: Int, checksum: Int) {
        var rows = 0
        var checksum = 0
        for bind in binders {
            bind()
            while try st.step() {
                let id = st.text(0)
                let name = st.text(1)
                let price = Int(st.int(2))
                if !id.isEmpty && !name.isEmpty { rows += 1 }
                checksum &+= price
            }
            st.reset()
        }
        return (rows, checksum)
    }

    /// Parents of each tag through the unnest table and its value index.
    func unnest(_ tags: [String]) throws -> Int {
        let st = try statement("""
            SELECT d.id FROM docs_unnest_likes AS u JOIN docs AS d ON d.rowid = u.docid WHERE u.value = ?1
            """)
        return try countIDs(st, tags)
    }

    /// Top 10 by FTS4 rank (Couchbase Lite's query shape and ranking function).
    func fts4(_ queries: [String]) throws -> Int {
        let st = try statement("""
            SELECT d.id FROM docs_fts4_desc JOIN docs AS d ON d.rowid = docs_fts4_desc.docid
            WHERE docs_fts4_desc MATCH ?1 ORDER BY rank(matchinfo(docs_fts4_desc)) DESC LIMIT 10
            """)
        return try countIDs(st, queries)
    }

    /// Top 10 by FTS5 bm25.
    func fts5(_ queries: [String]) throws -> Int {
        let st = try statement("""
            SELECT d.id FROM docs_fts5_desc JOIN docs AS d ON d.rowid = docs_fts5_desc.rowid
            WHERE docs_fts5_desc MATCH ?1 ORDER BY rank LIMIT 10
            """)
        return try countIDs(st, queries)
    }

    /// All matches of a full-text query (validation, untimed).
    func ftsCount(_ query: String, fts5: Bool) throws -> Int {
        let table = fts5 ? "docs_fts5_desc" : "docs_fts4_desc"
        let st = try statement("SELECT count(*) FROM \(table) WHERE \(table) MATCH ?1")
        st.bind(1, query)
        defer { st.reset() }
        return try st.step() ? Int(st.int(0)) : 0
    }

    /// The top-10 IDs of a full-text query (for the overlap report).
    func ftsTop(_ query: String, fts5: Bool) throws -> [String] {
        let sql = fts5
            ? "SELECT d.id FROM docs_fts5_desc JOIN docs AS d ON d.rowid = docs_fts5_desc.rowid WHERE docs_fts5_desc MATCH ?1 ORDER BY rank LIMIT 10"
            : "SELECT d.id FROM docs_fts4_desc JOIN docs AS d ON d.rowid = docs_fts4_desc.docid WHERE docs_fts4_desc MATCH ?1 ORDER BY rank(matchinfo(docs_fts4_desc)) DESC LIMIT 10"
        let st = try statement(sql)
        st.bind(1, query)
        defer { st.reset() }
        var out: [String] = []
        while try st.step() { out.append(st.text(0)) }
        return out
    }

    /// `country = ? AND rating >= ?` with no usable index (a full scan).
    func scan(_ filters: [(String, Double)]) throws -> (rows: Int, checksum: Int) {
        let st = try statement("""
            SELECT id, json_extract(body, '$.name') FROM docs
            WHERE json_extract(body, '$.country') = ?1 AND json_extract(body, '$.rating') >= ?2
            """)
        var rows = 0
        var checksum = 0
        for (country, rating) in filters {
            st.bind(1, country)
            st.bind(2, rating)
            while try st.step() {
                let id = st.text(0)
                let name = st.text(1)
                if !name.isEmpty { rows += 1 }
                checksum &+= id.utf8.count
            }
            st.reset()
        }
        return (rows, checksum)
    }

    private func countIDs(_ st: SQLiteStatement, _ params: [String]) throws -> Int {
        var rows = 0
        for p in params {
            try st.withBoundText(1, p) {
                while try st.step() {
                    let id = st.text(0)
                    if !id.isEmpty { rows += 1 }
                }
                st.reset()
            }
        }
        return rows
    }

    // MARK: - Size

    /// The main database file's size in bytes after a full checkpoint (page_count × page_size).
    func sizeBytes() throws -> Int {
        try db.exec("PRAGMA wal_checkpoint(TRUNCATE)")
        return Int(try db.scalarInt("PRAGMA page_count") * db.scalarInt("PRAGMA page_size"))
    }

    /// `EXPLAIN QUERY PLAN` lines for `sql`.
    func explain(_ sql: String) throws -> [String] {
        try db.rows("EXPLAIN QUERY PLAN " + sql).map { $0.last ?? "" }
    }

    /// SQL texts of the query workloads (for `--explain`).
    static let querySQL: [(String, String)] = [
        ("equality", "SELECT id, json_extract(body, '$.name'), json_extract(body, '$.price') FROM docs WHERE json_extract(body, '$.city') = 'x'"),
        ("range", "SELECT id, json_extract(body, '$.name'), json_extract(body, '$.price') FROM docs WHERE json_extract(body, '$.price') BETWEEN 100 AND 150 ORDER BY json_extract(body, '$.price') LIMIT 20"),
        ("unnest", "SELECT d.id FROM docs_unnest_likes AS u JOIN docs AS d ON d.rowid = u.docid WHERE u.value = 'x'"),
        ("fts4", "SELECT d.id FROM docs_fts4_desc JOIN docs AS d ON d.rowid = docs_fts4_desc.docid WHERE docs_fts4_desc MATCH 'x' ORDER BY rank(matchinfo(docs_fts4_desc)) DESC LIMIT 10"),
        ("fts5", "SELECT d.id FROM docs_fts5_desc JOIN docs AS d ON d.rowid = docs_fts5_desc.rowid WHERE docs_fts5_desc MATCH 'x' ORDER BY rank LIMIT 10"),
        ("scan", "SELECT id, json_extract(body, '$.name') FROM docs WHERE json_extract(body, '$.country') = 'x' AND json_extract(body, '$.rating') >= 4.5"),
    ]
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
