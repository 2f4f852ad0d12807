// Sample data for `tessera demo`, generated deterministically: travel documents (hotels,
// landmarks, airports with `type`, `name`, `overview`, `description`, `city`, `state`, as
// in Couchbase Lite's indexing examples) and profiles (`name`, `contacts` with `address`
// and `phones`, `likes`).

import Tessera

// Random choices come from `SplitMix64` (Tessera's seeded source), so the demo data is the
// same every run.

enum DemoData {
    /// (city, state, airport code).
    static let cities: [(String, String, String)] = [
        ("Ann Arbor", "Michigan", "ARB"), ("Detroit", "Michigan", "DTW"), ("Grand Rapids", "Michigan", "GRR"),
        ("Chicago", "Illinois", "ORD"), ("Springfield", "Illinois", "SPI"), ("San Francisco", "California", "SFO"),
        ("Los Angeles", "California", "LAX"), ("San Diego", "California", "SAN"), ("Seattle", "Washington", "SEA"),
        ("Spokane", "Washington", "GEG"), ("Portland", "Oregon", "PDX"), ("Denver", "Colorado", "DEN"),
        ("Austin", "Texas", "AUS"), ("Houston", "Texas", "IAH"), ("Dallas", "Texas", "DFW"),
        ("Miami", "Florida", "MIA"), ("Orlando", "Florida", "MCO"), ("Boston", "Massachusetts", "BOS"),
        ("New York", "New York", "JFK"), ("Buffalo", "New York", "BUF"), ("Atlanta", "Georgia", "ATL"),
        ("Nashville", "Tennessee", "BNA"), ("Phoenix", "Arizona", "PHX"), ("Santa Fe", "New Mexico", "SAF"),
    ]

    static let hotelPrefixes = ["Lakeside", "Riverside", "Harbor", "Grand", "Maple", "Cedar", "Summit", "Union",
                                "Park", "Garden", "Old Town", "Liberty", "Pioneer", "Sunset", "Willow", "Heritage"]
    static let hotelSuffixes = ["Inn", "Hotel", "Lodge", "Suites", "House", "Motel", "Resort", "Hostel"]
    static let styles = ["historic", "modern", "boutique", "family-run", "luxury", "budget", "cozy", "art deco"]
    static let places = ["the heart", "downtown", "the old town", "a quiet corner", "the waterfront", "the arts district"]
    static let amenities = ["an outdoor pool", "a heated indoor pool", "a full-service spa", "free breakfast",
                            "a rooftop bar", "free wifi", "a fitness center", "valet parking", "pet-friendly rooms",
                            "a business center", "an award-winning restaurant", "ocean views", "mountain views",
                            "a quiet garden", "bike rentals", "a sauna", "late checkout"]
    static let landmarkKinds = ["Museum of Art", "Botanical Garden", "Zoo", "Riverwalk", "City Hall", "Science Center",
                                "Opera House", "Lighthouse", "Farmers Market", "Public Library", "Aquarium",
                                "Stadium", "Public Pool", "History Museum"]
    static let activities = ["see", "do", "eat", "buy"]
    static let firstNames = ["Ada", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas",
                             "Kara", "Liam", "Maya", "Noor", "Oscar", "Priya", "Quinn", "Rosa", "Sam", "Tariq",
                             "Uma", "Victor", "Wen", "Yara", "Zoe"]
    static let lastNames = ["Adams", "Baker", "Chen", "Diaz", "Evans", "Fischer", "Garcia", "Hughes", "Ito", "Jensen",
                            "Khan", "Lopez", "Moreau", "Nakamura", "Okafor", "Patel", "Rossi", "Silva", "Tanaka", "Weber"]
    static let interests = ["hiking", "soccer", "travel", "cooking", "jazz", "chess", "swimming", "photography",
                            "reading", "cycling", "opera", "gardening"]

    static let hotelCount = 240
    static let landmarkCount = 160
    static let profileCount = 200

    /// The travel documents: (ID, body).
    static func travel() -> [(String, [String: Value])] {
        var rng = SplitMix64(seed: 2024)
        var docs: [(String, [String: Value])] = []
        for i in 0..<hotelCount {
            let (city, state, _) = rng.pick(cities)
            let name = "\(rng.pick(hotelPrefixes)) \(rng.pick(hotelSuffixes))"
            let style = rng.pick(styles)
            let perks = rng.sample(amenities, 3 + rng.below(3))
            var description = "A \(style) hotel in \(rng.pick(places)) of \(city). "
            description += "Guests enjoy \(perks[0]) and \(perks[1]). "
            description += "Rooms offer " + perks[2...].joined(separator: ", ") + "."
            let price = 60 + rng.below(33) * 10
            docs.append(("hotel\(i + 1)", [
                "type": "hotel", "name": .string(name), "city": .string(city), "state": .string(state),
                "overview": .string("\(name) is a \(style) stay in \(city), \(state)."),
                "description": .string(description),
                "price": .int(Int64(price)),
                "rating": .double(Double(20 + rng.below(31)) / 10),
                "vacancy": .bool(rng.below(4) != 0),
            ]))
        }
        for i in 0..<landmarkCount {
            let (city, state, _) = rng.pick(cities)
            let kind = rng.pick(landmarkKinds)
            let name = kind == "Lighthouse" || kind == "Riverwalk" ? "Old \(city) \(kind)" : "\(city) \(kind)"
            var description = "The \(kind.lowercased()) of \(city) is a favourite of visitors"
            if kind == "Public Pool" { description += "; the outdoor pool opens in summer" }
            description += ". Free entry on Sundays."
            docs.append(("landmark\(i + 1)", [
                "type": "landmark", "name": .string(name), "city": .string(city), "state": .string(state),
                "activity": .string(rng.pick(activities)),
                "overview": .string("\(name), \(city)."),
                "description": .string(description),
            ]))
        }
        for (i, (city, state, code)) in cities.enumerated() {
            docs.append(("airport\(i + 1)", [
                "type": "airport", "name": .string("\(city) Airport"), "faa": .string(code),
                "city": .string(city), "state": .string(state),
                "overview": .string("Airport serving \(city), \(state)."),
            ]))
        }
        return docs
    }

    /// The profiles: (ID, body).
    static func profiles() -> [(String, [String: Value])] {
        var rng = SplitMix64(seed: 7)
        var docs: [(String, [String: Value])] = []
        for i in 0..<profileCount {
            var contacts: [Value] = []
            for (k, kind) in ["primary", "secondary"].enumerated() where k == 0 || rng.below(2) == 0 {
                let (city, state, _) = rng.pick(cities)
                var phones: [Value] = []
                for t in rng.sample(["home", "mobile", "work"], 1 + rng.below(2)) {
                    phones.append(["type": .string(t), "number": .string("\(200 + rng.below(700))-555-\(1000 + rng.below(9000))")])
                }
                contacts.append(["type": .string(kind), "address": ["city": .string(city), "state": .string(state)],
                                 "phones": .array(phones)])
            }
            let likes = rng.sample(interests, 1 + rng.below(3)).map(Value.string)
            docs.append(("profile\(i + 1)", [
                "name": .string("\(rng.pick(firstNames)) \(rng.pick(lastNames))"),
                "contacts": .array(contacts),
                "likes": .array(likes),
            ]))
        }
        return docs
    }
}
