import Tessera
import CSQLite

/// A value bound to a query parameter, the same on both engines.
enum BenchArgument: Sendable {
    case text(String)
    case int(Int)
}

/// One of the everyday query shapes of issue #16, written for each engine: Tessera's SQL++ with
/// named parameters, SQLite's SQL (Couchbase Lite's schema: `json_extract` over the body, the
/// expression indexes, the primary key `id`) with `?1`, `?2`, … in the same order.
struct QueryShape: Sendable {
    var key: String
    var title: String
    var tessera: String
    var sqlite: String
    /// Tessera's parameter names, in the order of SQLite's `?N`.
    var names: [String]
    /// One argument list per execution.
    var executions: [[BenchArgument]]
}

/// Rows and a checksum over every column of every row (integers summed, text by its UTF-8
/// length, doubles rounded), so that both engines must return the same values, in any order.
struct ShapeTally {
    var rows = 0
    var checksum = 0

    mutating func add(_ value: Value?) {
        switch value {
        case .int(let i)?: checksum &+= Int(truncatingIfNeeded: i)
        case .double(let d)?: checksum &+= d.isFinite ? Int(d.rounded()) : 0
        case .string(let s)?: checksum &+= s.utf8.count
        default: break
        }
    }

    var outcome: Outcome { Outcome(rows: rows, checksum: checksum) }
}

extension QueryShape {
    /// The shapes measured, with arguments drawn from the benchmark's seeded parameters.
    static func all(_ p: QueryParameters, quick: Bool) -> [QueryShape] {
        let scale = quick ? 1 : 4
        let ids = p.pointIDs
        let pick = { (k: Int) in ids[k % ids.count] }
        let nameCol = "c.name"
        let sqlName = "json_extract(body, '$.name')"
        return [
            QueryShape(key: "shape.pk.get", title: "meta().id = $id",
                       tessera: "SELECT meta(c).id, \(nameCol) FROM docs AS c WHERE meta(c).id = $id",
                       sqlite: "SELECT id, \(sqlName) FROM docs WHERE id = ?1",
                       names: ["id"], executions: (0..<(500 * scale)).map { [.text(pick($0))] }),
            QueryShape(key: "shape.pk.in", title: "meta().id IN (5 IDs)",
                       tessera: "SELECT meta(c).id, \(nameCol) FROM docs AS c WHERE meta(c).id IN [$a, $b, $c, $d, $e]",
                       sqlite: "SELECT id, \(sqlName) FROM docs WHERE id IN (?1, ?2, ?3, ?4, ?5)",
                       names: ["a", "b", "c", "d", "e"],
                       executions: (0..<(100 * scale)).map { k in (0..<5).map { .text(pick(7 * k + $0 + 1)) } }),
            QueryShape(key: "shape.pk.range", title: "meta().id >= $x ORDER BY meta().id LIMIT 20",
                       tessera: "SELECT meta(c).id FROM docs AS c WHERE meta(c).id >= $x ORDER BY meta(c).id LIMIT 20",
                       sqlite: "SELECT id FROM docs WHERE id >= ?1 ORDER BY id LIMIT 20",
                       names: ["x"], executions: (0..<(100 * scale)).map { [.text(pick(3 * $0 + 2))] }),
            QueryShape(key: "shape.or", title: "city = $a OR city = $b (indexed)",
                       tessera: "SELECT meta(c).id, \(nameCol) FROM docs AS c WHERE c.city = $a OR c.city = $b",
                       sqlite: "SELECT id, \(sqlName) FROM docs WHERE json_extract(body, '$.city') = ?1 OR json_extract(body, '$.city') = ?2",
                       names: ["a", "b"],
                       executions: (0..<(50 * scale)).map { k in [.text(p.cities[(2 * k) % p.cities.count]), .text(p.cities[(2 * k + 1) % p.cities.count])] }),
            QueryShape(key: "shape.count.all", title: "count(*) of the collection",
                       tessera: "SELECT count(*) FROM docs AS c",
                       sqlite: "SELECT count(*) FROM docs",
                       names: [], executions: Array(repeating: [], count: 20 * scale)),
            QueryShape(key: "shape.count.where", title: "count(*) WHERE city = $city (indexed)",
                       tessera: "SELECT count(*) FROM docs AS c WHERE c.city = $city",
                       sqlite: "SELECT count(*) FROM docs WHERE json_extract(body, '$.city') = ?1",
                       names: ["city"], executions: p.cities.map { [.text($0)] }),
            QueryShape(key: "shape.max", title: "max(price) (indexed)",
                       tessera: "SELECT max(c.price) FROM docs AS c",
                       sqlite: "SELECT max(json_extract(body, '$.price')) FROM docs",
                       names: [], executions: Array(repeating: [], count: 100 * scale)),
            QueryShape(key: "shape.group.index", title: "GROUP BY city, count(*) (indexed)",
                       tessera: "SELECT c.city, count(*) FROM docs AS c GROUP BY c.city",
                       sqlite: "SELECT json_extract(body, '$.city'), count(*) FROM docs GROUP BY json_extract(body, '$.city')",
                       names: [], executions: Array(repeating: [], count: 2 * scale)),
            QueryShape(key: "shape.distinct.index", title: "DISTINCT city (indexed)",
                       tessera: "SELECT DISTINCT c.city FROM docs AS c",
                       sqlite: "SELECT DISTINCT json_extract(body, '$.city') FROM docs",
                       names: [], executions: Array(repeating: [], count: 2 * scale)),
            QueryShape(key: "shape.group.scan", title: "GROUP BY country, count(*) (no index)",
                       tessera: "SELECT c.country, count(*) FROM docs AS c GROUP BY c.country",
                       sqlite: "SELECT json_extract(body, '$.country'), count(*) FROM docs GROUP BY json_extract(body, '$.country')",
                       names: [], executions: Array(repeating: [], count: scale)),
            QueryShape(key: "shape.distinct.scan", title: "DISTINCT country (no index)",
                       tessera: "SELECT DISTINCT c.country FROM docs AS c",
                       sqlite: "SELECT DISTINCT json_extract(body, '$.country') FROM docs",
                       names: [], executions: Array(repeating: [], count: scale)),
        ]
    }
}

extension TesseraSide {
    /// Runs `shape` once per argument list; rows and checksum over all of them.
    func run(_ shape: QueryShape) throws -> Outcome {
        let q = try query(shape.tessera)
        var tally = ShapeTally()
        for args in shape.executions {
            var params = Parameters()
            for (name, arg) in zip(shape.names, args) {
                switch arg {
                case .text(let s): params = params.setString(s, forName: name)
                case .int(let i): params = params.setInt(i, forName: name)
                }
            }
            q.parameters = shape.names.isEmpty ? nil : params
            let rs = try q.execute()
            while let r = try rs.next() {
                tally.rows += 1
                for i in 0..<r.count { tally.add(r.value(at: i)) }
            }
        }
        return tally.outcome
    }
}

extension SQLiteSide {
    /// Runs `shape` once per argument list; rows and checksum over all of them.
    func run(_ shape: QueryShape) throws -> Outcome {
        let st = try statement(shape.sqlite)
        var tally = ShapeTally()
        for args in shape.executions {
            for (i, arg) in args.enumerated() {
                switch arg {
                case .text(let s): st.bind(Int32(i + 1), s)
                case .int(let v): st.bind(Int32(i + 1), v)
                }
            }
            while try st.step() {
                tally.rows += 1
                for i in 0..<st.columnCount {
                    switch st.columnType(i) {
                    case SQLITE_INTEGER: tally.add(.int(st.int(i)))
                    case SQLITE_FLOAT: tally.add(.double(st.double(i)))
                    case SQLITE_TEXT: tally.add(.string(st.text(i)))
                    default: break
                    }
                }
            }
            st.reset()
        }
        return tally.outcome
    }
}
