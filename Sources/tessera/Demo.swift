// `tessera demo`: builds a sample database, creates the four kinds of index and runs
// example queries, printing for each the SQL++, the rows, the plan and the time.

import Tessera

enum DemoCommand {
    static let spec = CommandSpec(
        name: "demo", operands: "",
        summary: "Build a sample travel database and run example queries with their plans.",
        options: [.value("--keep", "DIR", "Keep the database in DIR (a new directory) instead of a temporary one")],
        usesDatabase: false,
        details: """
            Generates hotels, landmarks and airports (collection 'travel') and people profiles
            (collection 'profiles'), creates a value index, a partial value index, array indexes
            and a partial full-text index, then runs a dozen queries: equality, range with
            ORDER BY and LIMIT, partial-index use, UNNEST over array indexes, GROUP BY with
            aggregates, JOIN, full-text MATCH with RANK, parameters. For each it prints the
            SQL++, a few rows, the EXPLAIN lines and the execution time.

            With --keep DIR, explore further: tessera shell DIR
            """,
        run: run)

    struct Example {
        let title: String
        let sql: String
        var parameters: [String: Value] = [:]
        var note: String = ""
    }

    static func examples(firstHotelName: String) -> [Example] {
        [
            Example(title: "Equality on a value index (TypeNameIndex on type, name)",
                    sql: "SELECT META().id, name, city, price FROM travel WHERE type = 'hotel' AND name = '\(firstHotelName)' ORDER BY META().id"),
            Example(title: "Covering index: every value comes from TypeNameIndex, in index order",
                    sql: "SELECT name FROM travel WHERE type = 'airport' ORDER BY name LIMIT 5"),
            Example(title: "Range + ORDER BY + LIMIT on the index key (no sort needed)",
                    sql: "SELECT name, city FROM travel WHERE type = 'landmark' AND name BETWEEN 'C' AND 'H' ORDER BY name LIMIT 5"),
            Example(title: "Partial index: HotelCityIndex (city) WHERE type = 'hotel' applies",
                    sql: "SELECT name, price, rating FROM travel WHERE type = 'hotel' AND city = 'Ann Arbor' ORDER BY price"),
            Example(title: "Partial index does NOT apply: the WHERE clause does not imply type = 'hotel'",
                    sql: "SELECT type, COUNT(*) AS n FROM travel WHERE city = 'Ann Arbor' GROUP BY type ORDER BY type"),
            Example(title: "Parameters ($city, $maxPrice) with a top-k sort",
                    sql: "SELECT name, price, rating FROM travel WHERE type = 'hotel' AND city = $city AND price <= $maxPrice ORDER BY rating DESC, name LIMIT 5",
                    parameters: ["city": "Seattle", "maxPrice": 250]),
            Example(title: "GROUP BY with aggregates",
                    sql: "SELECT state, COUNT(*) AS hotels, ROUND(AVG(price), 1) AS avg_price, MIN(price) AS min_price, MAX(rating) AS best FROM travel WHERE type = 'hotel' GROUP BY state ORDER BY hotels DESC, state LIMIT 5"),
            Example(title: "JOIN: hotels in Texas with the airport of their city",
                    sql: "SELECT h.name AS hotel, h.city, a.faa FROM travel AS h JOIN travel AS a ON a.city = h.city AND a.type = 'airport' WHERE h.type = 'hotel' AND h.state = 'Texas' ORDER BY h.city, h.name LIMIT 5"),
            Example(title: "UNNEST a scalar array with an array index (likesIndex on likes)",
                    sql: "SELECT p.name, interest FROM profiles AS p UNNEST p.likes AS interest WHERE interest = 'chess' ORDER BY p.name LIMIT 5"),
            Example(title: "Nested UNNEST with an array index (nestedArray on contacts[].phones, type)",
                    sql: "SELECT p.name, c.type AS contact, ph.number FROM profiles AS p UNNEST p.contacts AS c UNNEST c.phones AS ph WHERE ph.type = 'mobile' ORDER BY p.name, ph.number LIMIT 5"),
            Example(title: "UNNEST with GROUP BY: most common interests",
                    sql: "SELECT interest, COUNT(*) AS people FROM profiles UNNEST likes AS interest GROUP BY interest ORDER BY people DESC, interest LIMIT 5"),
            Example(title: "Full-text MATCH with RANK, best first (partial index: hotels only)",
                    sql: "SELECT name, city, RANK(HotelDescIndex) AS score FROM travel WHERE MATCH(HotelDescIndex, 'pool AND breakfast') ORDER BY RANK(HotelDescIndex) DESC, name LIMIT 5"),
            Example(title: "Full-text phrase and prefix from a parameter, with another condition",
                    sql: "SELECT name, city FROM travel WHERE MATCH(HotelDescIndex, $q) AND state = 'California' ORDER BY name LIMIT 5",
                    parameters: ["q": "\"rooftop bar\" OR sauna*"]),
        ]
    }

    static func run(_ inv: Invocation) throws -> Int32 {
        let out = IO.out
        let db: Database
        if let dir = inv.value("--keep") {
            if Database.exists(path: dir) || fileSize(dir) != nil || (isDirectory(dir) && !isEmptyDirectory(dir)) {
                throw CLIError.failure("'\(dir)' already exists; --keep needs a new (or empty) directory")
            }
            db = try Database(path: dir)
        } else {
            db = try Database.temporary()
        }
        defer { try? db.close() }

        // MARK: Data
        let t0 = monotonicSeconds()
        let travel = try db.createCollection(name: "travel")
        let profiles = try db.createCollection(name: "profiles")
        let travelDocs = DemoData.travel()
        let profileDocs = DemoData.profiles()
        try db.inBatch {
            for (id, body) in travelDocs { try travel.save(id: id, properties: body) }
            for (id, body) in profileDocs { try profiles.save(id: id, properties: body) }
        }
        out.line("Tessera demo — database \(inv.value("--keep") ?? "(temporary)")")
        out.line("Loaded \(plural(travelDocs.count, "document")) into 'travel' (\(DemoData.hotelCount) hotels, \(DemoData.landmarkCount) landmarks, \(DemoData.cities.count) airports) and \(plural(profileDocs.count, "document")) into 'profiles' in \(formatMillis(monotonicSeconds() - t0)).")
        out.line()

        // MARK: Indexes
        let indexes: [(Collection, String, any IndexConfiguration, String)] = [
            (travel, "TypeNameIndex", ValueIndexConfiguration(["type", "name"]), "value index on type, name"),
            (travel, "HotelCityIndex", ValueIndexConfiguration(["city"], where: "type = 'hotel'"), "partial value index on city WHERE type = 'hotel'"),
            (profiles, "nestedArray", ArrayIndexConfiguration(path: "contacts[].phones", expressions: ["type"]), "array index on contacts[].phones, expression type"),
            (profiles, "likesIndex", ArrayIndexConfiguration(path: "likes"), "array index on the scalar array likes"),
            (travel, "HotelDescIndex", FullTextIndexConfiguration(["description"], where: "type = 'hotel'"), "partial full-text index on description WHERE type = 'hotel'"),
        ]
        var failures: [String] = []
        out.line("Indexes:")
        for (coll, name, config, text) in indexes {
            let t = monotonicSeconds()
            do {
                try coll.createIndex(withName: name, config: config)
                out.line("  \(coll.name).\(name): \(text) (\(formatMillis(monotonicSeconds() - t)))")
            } catch {
                out.line("  \(coll.name).\(name): FAILED: \(describe(error).message)")
                failures.append("index \(name)")
            }
        }
        out.flush()

        // MARK: Queries
        let firstHotel = travelDocs.first { $0.1["type"] == "hotel" }?.1["name"]?.stringValue ?? "Grand Hotel"
        for (i, ex) in examples(firstHotelName: firstHotel).enumerated() {
            out.line()
            let heading = "── \(i + 1). \(ex.title) "
            out.line(heading + String(repeating: "─", count: max(3, 78 - heading.count)))
            out.line(ex.sql)
            if !ex.parameters.isEmpty {
                out.line("parameters: " + ex.parameters.keys.sorted().map { "$\($0) = \(JSONWriter.string(ex.parameters[$0]!))" }.joined(separator: ", "))
            }
            out.line()
            do {
                let q = try db.createQuery(ex.sql)
                if !ex.parameters.isEmpty { q.parameters = Parameters(ex.parameters) }
                let start = monotonicSeconds()
                let rows = try q.execute().allResults()
                let elapsed = monotonicSeconds() - start
                var writer = RowWriter(format: .table, columns: try q.columnNames, out: out)
                writer.maxCellWidth = 40
                writer.maxTableRows = 8
                writer.begin()
                for r in rows { writer.row(r) }
                writer.end()
                out.line("plan:")
                for line in try q.explain().split(separator: "\n") { out.line("  " + line) }
                out.line("time: \(formatMillis(elapsed))")
            } catch {
                out.line("ERROR: " + describe(error).message)
                failures.append("query \(i + 1)")
            }
            out.flush()
        }
        out.line()
        if let dir = inv.value("--keep") {
            out.line("The database is kept in \(dir). Try: tessera shell \(dir)")
        } else {
            out.line("The temporary database is removed. Keep one with: tessera demo --keep DIR")
        }
        out.flush()
        if !failures.isEmpty {
            IO.err.line("tessera demo: \(failures.count) step(s) failed: \(failures.joined(separator: ", ")) (errors shown above)")
        }
        return ExitCode.ok
    }

    static func isEmptyDirectory(_ path: String) -> Bool {
        guard let dir = opendir(path) else { return false }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { return false }
        }
        return true
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
