import Tessera

/// A review inside a generated document.
struct GeneratedReview: Sendable {
    /// Reviewer name.
    var author: String
    /// `ratings.overall`, 1–5.
    var overall: Int
    /// `ratings.service`, 1–5.
    var service: Int
    /// Review text (vocabulary words).
    var content: String
}

/// One generated hotel-like document (a hotel, landmark or airport).
struct GeneratedDocument: Sendable {
    /// Document ID, e.g. `hotel_123`.
    var id: String
    /// `hotel` (60 %), `landmark` (25 %) or `airport` (15 %).
    var type: String
    var name: String
    var city: String
    var state: String
    var country: String
    /// An integer price.
    var price: Int
    /// 1.0–5.0 with one decimal.
    var rating: Double
    /// 0–8 reviews.
    var reviews: [GeneratedReview]
    /// 0–5 distinct tags.
    var likes: [String]
    /// 40–120 words drawn from a Zipf distribution over the vocabulary.
    var description: String

    /// The body as JSON text (keys in a fixed order).
    var json: String {
        var w = JSONTextBuilder()
        w.open()
        w.key("type"); w.string(type)
        w.key("name"); w.string(name)
        w.key("city"); w.string(city)
        w.key("state"); w.string(state)
        w.key("country"); w.string(country)
        w.key("price"); w.int(price)
        w.key("rating"); w.double(rating)
        w.key("reviews"); w.openArray()
        for r in reviews {
            w.element(); w.open()
            w.key("author"); w.string(r.author)
            w.key("ratings"); w.open()
            w.key("overall"); w.int(r.overall)
            w.key("service"); w.int(r.service)
            w.close()
            w.key("content"); w.string(r.content)
            w.close()
        }
        w.closeArray()
        w.key("likes"); w.openArray()
        for l in likes { w.element(); w.string(l) }
        w.closeArray()
        w.key("description"); w.string(description)
        w.close()
        return w.text
    }

    /// The body as Tessera values (for `Collection.save(id:properties:)`).
    var properties: [String: Value] {
        [
            "type": .string(type), "name": .string(name), "city": .string(city), "state": .string(state),
            "country": .string(country), "price": .int(Int64(price)), "rating": .double(rating),
            "reviews": .array(reviews.map { r in
                .object(["author": .string(r.author),
                         "ratings": .object(["overall": .int(Int64(r.overall)), "service": .int(Int64(r.service))]),
                         "content": .string(r.content)])
            }),
            "likes": .array(likes.map { .string($0) }),
            "description": .string(description),
        ]
    }
}

/// Deterministic generator of hotel-like documents: the same `seed` gives the same
/// vocabulary, cities, tags and documents, and document `i` does not depend on how many
/// documents are generated.
///
/// - `city`: ~2,000 values, each in one `state` of one of ~30 `country` values;
///   uniform, so `city = X` selects about N / 2,000 documents.
/// - `likes`: 0–5 distinct tags of 200, uniform (a tag is in about N · 2.5 / 200 documents).
/// - `description`: 40–120 words, Zipf (s = 1) over a 20,000-word vocabulary of
///   pronounceable pseudo-words, about 5 % of them accented (precomposed, NFC).
struct HotelGenerator: Sendable {
    /// The seed.
    let seed: UInt64
    /// Vocabulary in Zipf rank order (index 0 is the most frequent word).
    let vocabulary: [String]
    /// City names; city `i` lies in `cityState[i]` and `cityCountry[i]`.
    let cities: [String]
    let cityState: [String]
    let cityCountry: [String]
    /// The country names.
    let countries: [String]
    /// The tags that `likes` draws from.
    let tags: [String]
    private let zipfCDF: [Double]
    private let firstNames: [String]
    private let lastNames: [String]

    static let vocabularySize = 20_000
    static let cityCount = 2_000
    static let tagCount = 200
    static let statesPerCountry = 12

    /// Builds the word lists for `seed`.
    init(seed: UInt64) {
        self.seed = seed
        var rng = SplitMix64(seed: seed, stream: 1, index: 0)
        let reserved: Set<String> = ["and", "or", "not", "near"]  // full-text query operators in some engines
        var seen = Set<String>()
        var words: [String] = []
        words.reserveCapacity(Self.vocabularySize)
        while words.count < Self.vocabularySize {
            var w = Self.pseudoWord(&rng, syllables: 1 + rng.scaled(below: 3) + (rng.chance(0.3) ? 1 : 0))
            if rng.chance(0.05) { w = Self.accent(w, &rng) }
            if w.unicodeScalars.count < 2 || reserved.contains(w) { continue }
            if seen.insert(w).inserted { words.append(w) }
        }
        vocabulary = words

        var cdf = [Double](repeating: 0, count: Self.vocabularySize)
        var total = 0.0
        for r in 0..<Self.vocabularySize { total += 1.0 / Double(r + 1); cdf[r] = total }
        for r in 0..<Self.vocabularySize { cdf[r] /= total }
        zipfCDF = cdf

        let countryNames = ["United States", "United Kingdom", "France", "Germany", "España", "Italia", "Portugal",
                            "Nederland", "België", "Schweiz", "Österreich", "Danmark", "Sverige", "Norge", "Suomi",
                            "Polska", "Česko", "Magyarország", "România", "Ελλάδα", "Türkiye", "Canada", "México",
                            "Brasil", "Argentina", "Perú", "Japan", "Australia", "New Zealand", "Côte d'Ivoire"]
        countries = countryNames
        var stateNames: [[String]] = []
        var seenStates = Set<String>()
        for _ in countryNames {
            var list: [String] = []
            while list.count < Self.statesPerCountry {
                let s = Self.capitalized(Self.pseudoWord(&rng, syllables: 2 + rng.scaled(below: 2)))
                if seenStates.insert(s).inserted { list.append(s) }
            }
            stateNames.append(list)
        }
        var cityNames: [String] = []
        var seenCities = Set<String>()
        let prefixes = ["San ", "Port ", "New ", "Saint-", "Lake ", "Fort ", "Mount ", "Bad ", "Villa ", "Old "]
        while cityNames.count < Self.cityCount {
            var c = Self.capitalized(Self.pseudoWord(&rng, syllables: 2 + rng.scaled(below: 2)))
            if rng.chance(0.06) { c = Self.capitalized(Self.accent(c.lowercased(), &rng)) }
            if rng.chance(0.15) { c = prefixes[rng.scaled(below: prefixes.count)] + c }
            if seenCities.insert(c).inserted { cityNames.append(c) }
        }
        cities = cityNames
        var states: [String] = []
        var ctry: [String] = []
        for i in 0..<Self.cityCount {
            let k = i % countryNames.count
            ctry.append(countryNames[k])
            states.append(stateNames[k][(i / countryNames.count) % Self.statesPerCountry])
        }
        cityState = states
        cityCountry = ctry

        var tagSet = Set<String>()
        var tagList: [String] = []
        while tagList.count < Self.tagCount {
            let t = Self.pseudoWord(&rng, syllables: 2 + rng.scaled(below: 2))
            if seen.contains(t) { continue }  // tags never collide with description words
            if tagSet.insert(t).inserted { tagList.append(t) }
        }
        tags = tagList

        var fn: [String] = []
        var ln: [String] = []
        for _ in 0..<300 { fn.append(Self.capitalized(Self.pseudoWord(&rng, syllables: 2))) }
        for _ in 0..<500 { ln.append(Self.capitalized(Self.pseudoWord(&rng, syllables: 2 + rng.scaled(below: 2)))) }
        firstNames = fn
        lastNames = ln
    }

    /// Document `i` (its ID encodes its type and `i`).
    func document(_ i: Int) -> GeneratedDocument {
        var rng = SplitMix64(seed: seed, stream: 2, index: i)
        return makeDocument(i, &rng, revision: 0)
    }

    /// A new version of document `i` for update workloads: the same ID, type and place, with a
    /// new price, rating, likes and description (`revision` ≥ 1 picks the variant).
    func revision(_ i: Int, revision: Int) -> GeneratedDocument {
        var original = document(i)
        var rng = SplitMix64(seed: seed, stream: 3 &+ UInt64(revision) &* 7919, index: i)
        let fresh = makeDocument(i, &rng, revision: revision)
        original.price = fresh.price
        original.rating = fresh.rating
        original.likes = fresh.likes
        original.description = fresh.description
        return original
    }

    /// A word of Zipf rank `rank` (0 = most frequent).
    func word(rank: Int) -> String { vocabulary[rank] }

    private func makeDocument(_ i: Int, _ rng: inout SplitMix64, revision: Int) -> GeneratedDocument {
        let roll = rng.scaled(below: 100)
        let type = roll < 60 ? "hotel" : (roll < 85 ? "landmark" : "airport")
        let c = rng.scaled(below: Self.cityCount)
        let city = cities[c]
        let name: String
        switch type {
        case "hotel":
            let adj = ["Grand", "Royal", "Little", "Old", "Blue", "Golden", "Quiet", "Sunny", "Cozy", "Modern",
                       "Historic", "Riverside", "Lakeside", "Garden", "Central", "Harbor"]
            let kind = ["Hotel", "Inn", "Lodge", "Suites", "Resort", "Motel", "Guesthouse", "Hostel", "B&B"]
            name = "\(adj[rng.scaled(below: adj.count)]) \(Self.capitalized(vocabulary[rng.scaled(below: 3_000)])) \(kind[rng.scaled(below: kind.count)])"
        case "landmark":
            let kind = ["Museum", "Park", "Bridge", "Tower", "Gallery", "Cathedral", "Market", "Castle", "Gardens"]
            name = "\(Self.capitalized(vocabulary[rng.scaled(below: 5_000)])) \(kind[rng.scaled(below: kind.count)])"
        default:
            name = "\(city) \(rng.chance(0.5) ? "International" : "Regional") Airport"
        }
        let price: Int
        switch type {
        case "hotel": price = rng.scaled(in: 40...800)
        case "landmark": price = rng.scaled(in: 0...60)
        default: price = rng.scaled(in: 0...40)
        }
        let rating = Double(rng.scaled(in: 10...50)) / 10
        var reviews: [GeneratedReview] = []
        let reviewCount = rng.scaled(below: 9)
        for _ in 0..<reviewCount {
            let author = "\(firstNames[rng.scaled(below: firstNames.count)]) \(lastNames[rng.scaled(below: lastNames.count)])"
            reviews.append(GeneratedReview(author: author, overall: rng.scaled(in: 1...5), service: rng.scaled(in: 1...5),
                                           content: text(&rng, words: rng.scaled(in: 5...20))))
        }
        let likes = rng.distinct(rng.scaled(below: 6), below: Self.tagCount).map { tags[$0] }
        let description = text(&rng, words: rng.scaled(in: 40...120))
        return GeneratedDocument(id: "\(type)_\(i)", type: type, name: name, city: city, state: cityState[c],
                                 country: cityCountry[c], price: price, rating: rating, reviews: reviews,
                                 likes: likes, description: description)
    }

    /// `words` Zipf-distributed words as sentences: capitalised first word, commas, full stops.
    private func text(_ rng: inout SplitMix64, words: Int) -> String {
        var out = ""
        out.reserveCapacity(words * 8)
        var sentenceStart = true
        for k in 0..<words {
            let w = vocabulary[zipfRank(&rng)]
            if k > 0 { out += " " }
            out += sentenceStart ? Self.capitalized(w) : w
            sentenceStart = false
            if k == words - 1 {
                out += "."
            } else {
                let p = rng.scaled(below: 100)
                if p < 7 { out += "."; sentenceStart = true } else if p < 14 { out += "," }
            }
        }
        return out
    }

    private func zipfRank(_ rng: inout SplitMix64) -> Int {
        let u = rng.unit()
        var lo = 0
        var hi = zipfCDF.count - 1
        while lo < hi {
            let mid = (lo + hi) / 2
            if zipfCDF[mid] < u { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    private static let onsets = ["b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w",
                                 "z", "br", "ch", "cl", "dr", "fl", "gr", "pl", "sh", "st", "tr", "th"]
    private static let vowels = ["a", "e", "i", "o", "u", "a", "e", "o", "ea", "ou", "ai", "y"]
    private static let codas = ["", "", "", "n", "r", "s", "l", "m", "t", "nd", "st", "rk", "x"]

    private static func pseudoWord(_ rng: inout SplitMix64, syllables: Int) -> String {
        var w = ""
        for s in 0..<max(1, syllables) {
            if s > 0 || rng.chance(0.8) { w += onsets[rng.scaled(below: onsets.count)] }
            w += vowels[rng.scaled(below: vowels.count)]
            if s == syllables - 1 || rng.chance(0.2) { w += codas[rng.scaled(below: codas.count)] }
        }
        return w
    }

    /// Replaces one vowel (or n, c) with a precomposed accented letter.
    private static func accent(_ w: String, _ rng: inout SplitMix64) -> String {
        let table: [Character: [Character]] = [
            "a": ["\u{E1}", "\u{E0}", "\u{E2}", "\u{E4}", "\u{E5}"], "e": ["\u{E9}", "\u{E8}", "\u{EA}", "\u{EB}"],
            "i": ["\u{ED}", "\u{EF}"], "o": ["\u{F3}", "\u{F4}", "\u{F6}", "\u{F8}"], "u": ["\u{FA}", "\u{FC}"],
            "n": ["\u{F1}"], "c": ["\u{E7}"],
        ]
        var chars = Array(w)
        let candidates = chars.indices.filter { table[chars[$0]] != nil }
        guard !candidates.isEmpty else { return w }
        let at = candidates[rng.scaled(below: candidates.count)]
        let options = table[chars[at]]!
        chars[at] = options[rng.scaled(below: options.count)]
        return String(chars)
    }

    static func capitalized(_ w: String) -> String {
        guard let first = w.first else { return w }
        return first.uppercased() + w.dropFirst()
    }
}

/// A small JSON text builder for generated documents (strings are escaped per RFC 8259).
struct JSONTextBuilder {
    private(set) var text = ""
    private var needComma: [Bool] = []

    init() { text.reserveCapacity(2048) }

    mutating func open() { text += "{"; needComma.append(false) }
    mutating func close() { text += "}"; needComma.removeLast() }
    mutating func openArray() { text += "["; needComma.append(false) }
    mutating func closeArray() { text += "]"; needComma.removeLast() }

    mutating func key(_ k: String) {
        separator()
        string(k)
        text += ":"
    }

    /// Starts an array element.
    mutating func element() { separator() }

    private mutating func separator() {
        if needComma[needComma.count - 1] { text += "," }
        needComma[needComma.count - 1] = true
    }

    mutating func string(_ s: String) {
        text += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\t": text += "\\t"
            default:
                if u.value < 0x20 {
                    let hex = String(u.value, radix: 16)
                    text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    text.unicodeScalars.append(u)
                }
            }
        }
        text += "\""
    }

    mutating func int(_ v: Int) { text += String(v) }
    /// Appends a literal as is (`true`, `false`, `null`).
    mutating func raw(_ literal: String) { text += literal }
    mutating func double(_ v: Double) { text += v.description }
}
