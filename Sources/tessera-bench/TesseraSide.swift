import Tessera

/// The Tessera side, through the public API only: one collection `docs`, the same indexes as the
/// SQLite side (value `city` and `price`, partial `rating` for hotels, array `likes`, full text on
/// `description` with `language: ""`, i.e. no stemming and no stop words, like SQLite's unicode61),
/// `save(jsonDocuments:)` (one batch, JSON encoded on a second core) for bulk loads and updates,
/// and reused `Query` objects with parameters.
final class TesseraSide {
    let path: String
    let db: Database
    let docs: Collection
    private var queries: [String: Query] = [:]

    /// Removes any database at `path` and creates an empty one (default configuration unless
    /// `mapSize` or `noSync` say otherwise).
    init(path: String, mapSize: Int? = nil, noSync: Bool = false) throws {
        try Database.delete(path: path)
        self.path = path
        var config = DatabaseConfiguration()
        if let mapSize { config.initialMapSize = mapSize }
        config.noSync = noSync
        db = try Database(path: path, configuration: config)
        docs = try db.createCollection(name: "docs")
    }

    /// Closes and deletes the database.
    func destroy() throws {
        queries = [:]
        try db.delete()
    }

    func query(_ sql: String) throws -> Query {
        if let q = queries[sql] { return q }
        let q = try db.createQuery(sql)
        queries[sql] = q
        return q
    }

    // MARK: - Indexes

    static let cityIndex = ("CityIndex", ValueIndexConfiguration(["city"]))
    static let priceIndex = ("PriceIndex", ValueIndexConfiguration(["price"]))
    static let partialIndex = ("HotelRatingIndex", ValueIndexConfiguration(["rating"], where: "type = 'hotel'"))
    static let arrayIndex = ("LikesIndex", ArrayIndexConfiguration(path: "likes"))
    static let fullTextIndex = ("DescIndex", FullTextIndexConfiguration(["description"], ignoreAccents: false, language: ""))

    func create(_ index: (String, any IndexConfiguration)) throws {
        try docs.createIndex(withName: index.0, config: index.1)
    }

    func delete(_ index: (String, any IndexConfiguration)) throws {
        queries = [:]
        try docs.deleteIndex(forName: index.0)
    }

    /// Every index of the "all indexes" configuration.
    func createAllIndexes() throws {
        for i: (String, any IndexConfiguration) in [Self.cityIndex, Self.priceIndex, Self.partialIndex, Self.arrayIndex, Self.fullTextIndex] {
            try create(i)
        }
    }

    // MARK: - Writes

    /// Saves every document (JSON text) in one batch.
    func load(_ list: [BenchDocument]) throws -> Int {
        try docs.save(jsonDocuments: list.lazy.map { (id: $0.id, json: $0.json) })
    }

    /// Replaces bodies in one batch.
    func update(_ list: [BenchDocument]) throws -> Int {
        try load(list)
    }

    // MARK: - Reads

    /// Fetches each document by ID; returns how many were found.
    func pointGets(_ ids: [String]) throws -> Int {
        var found = 0
        for id in ids where try docs.document(id: id) != nil { found += 1 }
        return found
    }

    static let equalitySQL = "SELECT meta(c).id, c.name, c.price FROM docs AS c WHERE c.city = $city"
    static let rangeSQL = "SELECT meta(c).id, c.name, c.price FROM docs AS c WHERE c.price BETWEEN $lo AND $hi ORDER BY c.price LIMIT 20"
    static let unnestSQL = "SELECT meta(c).id FROM docs AS c UNNEST c.likes AS l WHERE l = $tag"
    static let ftsSQL = "SELECT meta(c).id FROM docs AS c WHERE match(DescIndex, $q) ORDER BY rank(DescIndex) DESC LIMIT 10"
    static let ftsCountSQL = "SELECT count(*) FROM docs AS c WHERE match(DescIndex, $q)"
    static let scanSQL = "SELECT meta(c).id, c.name FROM docs AS c WHERE c.country = $country AND c.rating >= $rating"

    /// Rows and a checksum (sum of prices) of `city = $city` for each city.
    func equality(_ cities: [String]) throws -> (rows: Int, checksum: Int) {
        let q = try query(Self.equalitySQL)
        var rows = 0
        var checksum = 0
        for c in cities {
            q.parameters = Parameters().setString(c, forName: "city")
            let rs = try q.execute()
            while let r = try rs.next() {
                if r.string(at: 0) != nil && r.string(at: 1) != nil { rows += 1 }
                checksum &+= r.int(at: 2)
            }
        }
        return (rows, checksum)
    }

    /// `price BETWEEN $lo AND $hi ORDER BY price LIMIT 20` for each range.
    func range(_ ranges: [(Int, Int)]) throws -> (rows: Int, checksum: Int) {
        let q = try query(Self.rangeSQL)
        var rows = 0
        var checksum = 0
        for (lo, hi) in ranges {
            q.parameters = Parameters().setInt(lo, forName: "lo").setInt(hi, forName: "hi")
            let rs = try q.execute()
            while let r = try rs.next() {
                if r.string(at: 0) != nil && r.string(at: 1) != nil { rows += 1 }
                checksum &+= r.int(at: 2)
            }
        }
        return (rows, checksum)
    }

    /// Parents of each tag through the array index.
    func unnest(_ tags: [String]) throws -> Int {
        try countIDs(Self.unnestSQL, name: "tag", tags)
    }

    /// Top 10 by rank for each full-text query.
    func fullText(_ queries: [String]) throws -> Int {
        try countIDs(Self.ftsSQL, name: "q", queries)
    }

    /// All matches of a full-text query (validation, untimed).
    func ftsCount(_ text: String) throws -> Int {
        let q = try query(Self.ftsCountSQL)
        q.parameters = Parameters().setString(text, forName: "q")
        return try q.execute().next()?.int(at: 0) ?? 0
    }

    /// The top-10 IDs of a full-text query (for the overlap report).
    func ftsTop(_ text: String) throws -> [String] {
        let q = try query(Self.ftsSQL)
        q.parameters = Parameters().setString(text, forName: "q")
        return try q.execute().allResults().compactMap { $0.string(at: 0) }
    }

    /// `country = $country AND rating >= $rating` with no usable index (a full scan).
    func scan(_ filters: [(String, Double)]) throws -> (rows: Int, checksum: Int) {
        let q = try query(Self.scanSQL)
        var rows = 0
        var checksum = 0
        for (country, rating) in filters {
            q.parameters = Parameters().setString(country, forName: "country").setDouble(rating, forName: "rating")
            let rs = try q.execute()
            while let r = try rs.next() {
                if r.string(at: 1) != nil { rows += 1 }
                checksum &+= r.string(at: 0)?.utf8.count ?? 0
            }
        }
        return (rows, checksum)
    }

    private func countIDs(_ sql: String, name: String, _ params: [String]) throws -> Int {
        let q = try query(sql)
        var rows = 0
        for p in params {
            q.parameters = Parameters().setString(p, forName: name)
            let rs = try q.execute()
            while let r = try rs.next() {
                if r.string(at: 0) != nil { rows += 1 }
            }
        }
        return rows
    }

    /// Bytes of the data file in use.
    var sizeBytes: Int { db.fileSize }

    /// EXPLAIN text of `sql`.
    func explain(_ sql: String) throws -> String { try query(sql).explain() }
}
