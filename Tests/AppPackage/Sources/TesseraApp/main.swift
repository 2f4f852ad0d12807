// Uses Tessera as an app would, through `import Tessera` and nothing else: if this needs an
// engine internal, the public API is missing something. Run: `swift run` in this folder.

import Foundation
import Tessera

struct Hotel: Codable, Equatable {
    var type: String
    var name: String
    var city: String
    var price: Int
    var tags: [String]
    var about: String
}

/// A count shared with listener callbacks.
final class Counter: @unchecked Sendable {
    private var total = 0
    private let lock = NSLock()
    func add(_ n: Int) { lock.lock(); total += n; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return total }
}

func expect(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("TesseraApp: " + message()) }
}

let db = try Database.temporary()
let hotels = try db.createCollection(name: "hotels", scope: "inventory")

// Documents: JSON text, a MutableDocument, Codable.
try hotels.save(id: "h1", json: #"""
    {"type":"hotel","name":"Lakeside Inn","city":"Ann Arbor","price":120,"tags":["lake","quiet"],
     "about":"Rooms overlooking the lake"}
    """#)
let doc = MutableDocument(id: "h2")
doc["type"] = "hotel"
doc["name"] = "Motor Lodge"
doc["city"] = "Detroit"
doc.setInt(80, forKey: "price")
doc.setArray(["parking"], forKey: "tags")
doc.setString("Free parking by the highway", forKey: "about")
try hotels.save(document: doc)
let michigander = Hotel(type: "hotel", name: "The Michigander", city: "Detroit", price: 210,
                        tags: ["downtown", "lake"], about: "Downtown towers with lake views")
try hotels.save(michigander, id: "h3")
try db.inBatch {
    for i in 0..<50 { try hotels.save(id: "l\(i)", properties: ["type": "landmark", "n": .int(Int64(i))]) }
}
expect(try hotels.document(id: "h3", as: Hotel.self) == michigander, "Codable round trip")
expect(try hotels.count == 53, "count")

// Many JSON documents at once, in one batch (encoded on a second core); a bad one saves none.
let visits = try db.createCollection(name: "visits", scope: "inventory")
let saved = try visits.save(jsonDocuments: (0..<1_000).map { (id: "v\($0)", json: #"{"hotel":"h\#($0 % 3 + 1)","n":\#($0)}"#) })
let visitCount = try visits.count
expect(saved == 1_000 && visitCount == 1_000, "save(jsonDocuments:)")
do {
    try visits.save(jsonDocuments: [(id: "ok", json: "{}"), (id: "bad", json: "{\"n\": }")])
    expect(false, "a bad document was saved")
} catch let error as DatabaseError {
    expect(error.code == .invalidJSON && error.message.contains("document 2 of the sequence"), "\(error)")
}
expect(try visits.document(id: "ok") == nil, "nothing of a failed save(jsonDocuments:) is kept")

// Indexes: value (partial), array, full-text.
try hotels.createIndex(withName: "HotelCity", config: ValueIndexConfiguration(["city", "price"], where: "type = 'hotel'"))
try hotels.createIndex(withName: "HotelTags", config: ArrayIndexConfiguration(path: "tags"))
try hotels.createIndex(withName: "HotelAbout", config: FullTextIndexConfiguration(["about"]))
expect(try hotels.indexes().sorted() == ["HotelAbout", "HotelCity", "HotelTags"], "indexes")

// SQL++ with parameters.
let byCity = try db.createQuery("""
    SELECT name, price FROM inventory.hotels
    WHERE type = 'hotel' AND city = $city AND price >= $min ORDER BY price DESC
    """)
expect(try byCity.parameterNames == ["city", "min"], "parameter names")
byCity.parameters = Parameters().setString("Detroit", forName: "city").setInt(0, forName: "min")
let rows = try byCity.execute().allResults()
expect(rows.map { $0.string(forKey: "name") ?? "" } == ["The Michigander", "Motor Lodge"], "rows: \(rows)")
expect(rows[0].int(forKey: "price") == 210, "price")
let plan = try byCity.explainPlan()
expect(plan.indexesUsed == ["HotelCity"], "plan: \(plan.text)")
expect(!(try byCity.explain()).isEmpty, "explain text")

// Array and full-text queries.
let tagged = try db.createQuery("""
    SELECT META().id AS id FROM inventory.hotels AS h
    WHERE ANY t IN h.tags SATISFIES t = 'lake' END ORDER BY META().id
    """)
expect(try tagged.execute().allResults().map { $0.string(forKey: "id") ?? "" } == ["h1", "h3"], "array query")
let search = try db.createQuery("SELECT name FROM inventory.hotels WHERE MATCH(HotelAbout, 'lakes') ORDER BY name")
expect(try search.execute().allResults().compactMap { $0.string(forKey: "name") } == ["Lakeside Inn", "The Michigander"],
       "full-text query")
expect(try search.explainPlan().indexesUsed == ["HotelAbout"], "full-text plan")

// QueryBuilder.
let built = try db.createQuery(
    QueryBuilder
        .select(SelectResult.property("name"), SelectResult.expression(Meta.id).as("id"))
        .from(DataSource.collection(name: "hotels", scope: "inventory"))
        .where(Expression.property("type").equalTo(Expression.string("hotel"))
            .and(Expression.property("price").lessThan(Expression.parameter("max"))))
        .orderBy(Ordering.property("price").ascending())
)
built.parameters = Parameters().setInt(150, forName: "max")
let cheap = try built.execute().allResults()
expect(cheap.map { $0.string(forKey: "id") ?? "" } == ["h2", "h1"], "builder rows: \(cheap)")
struct Row: Decodable { var name: String; var id: String }
expect(try cheap[0].data(as: Row.self).name == "Motor Lodge", "Result.data(as:)")

// Errors are typed.
do {
    _ = try db.createQuery("SELEC name FROM hotels")
    expect(false, "a syntax error must throw")
} catch let error as QueryError {
    expect(error.kind == .syntax, "syntax error kind")
}

// A Database is Sendable: read it from several tasks.
let counts = await withTaskGroup(of: Int.self) { group in
    for _ in 0..<4 {
        group.addTask {
            (try? db.createQuery("SELECT COUNT(*) AS n FROM inventory.hotels").execute().allResults().first?.int(forKey: "n")) ?? -1
        }
    }
    var out: [Int] = []
    for await n in group { out.append(n) }
    return out
}
expect(counts == [53, 53, 53, 53], "concurrent counts \(counts)")

// Observing changes (issue 17's names): the change feed, listeners, live queries, streams.
let before = hotels.lastSequence
let feedStart = try hotels.changes(since: 0, limit: 5)
expect(feedStart.count == 5 && feedStart[0].sequence >= 1 && !feedStart[0].isDeleted, "change feed \(feedStart)")
let seen = Counter()
let collectionToken = hotels.addChangeListener { (change: CollectionChange) in seen.add(change.documentIDs.count) }
let documentToken = hotels.addDocumentChangeListener(id: "h1") { (change: DocumentChange) in
    expect(change.documentID == "h1", "document change \(change.documentID)")
    seen.add(1)
}
let live = try db.createQuery("SELECT META().id AS id, price FROM inventory.hotels WHERE price < 100 ORDER BY META().id")
let liveToken = live.addChangeListener { (change: QueryChange) in
    if let rows = try? change.results?.allResults() { seen.add(rows.count) }
}
let updates = Task { () -> ResultDiff? in
    for try await update in live.changes() {
        let u: LiveQueryUpdate = update
        if u.results.contains(where: { $0.string(forKey: "id") == "cheap" }) { return u.diff }
    }
    return nil
}
try await Task.sleep(nanoseconds: 100_000_000)
try hotels.save(id: "cheap", json: #"{"type":"hotel","name":"Cheap","city":"X","price":10}"#)
try hotels.save(Hotel(type: "hotel", name: "Lakeside Inn", city: "Ann Arbor", price: 121, tags: ["lake"], about: "lakes"), id: "h1")
let diff = try await updates.value
expect(diff.map { d in d.inserted.contains { $0.key == .documentID("cheap") } } == true, "live diff \(String(describing: diff))")
expect(hotels.lastSequence > before, "lastSequence")
var waited = 0
while seen.value < 3 && waited < 200 { try await Task.sleep(nanoseconds: 10_000_000); waited += 1 }
expect(seen.value >= 3, "listeners called \(seen.value)")
for token in [collectionToken, documentToken, liveToken] { token.remove() }

// Maintenance.
let report = try db.performMaintenance(.integrityCheck)
expect(report.isOK, "integrity: \(report)")
try db.close()
print("TesseraApp: ok")
