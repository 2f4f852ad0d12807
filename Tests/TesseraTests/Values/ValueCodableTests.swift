import Foundation
import Testing
@testable import Tessera

// MARK: - Fixture types

struct CodableAddress: Codable, Equatable {
    var street: String
    var city: String
    var zip: String?
}

struct CodableRoom: Codable, Equatable {
    var number: Int16
    var price: Double
    var beds: UInt8
}

enum CodableCategory: String, Codable, Equatable {
    case budget, luxury
}

enum CodableAmenity: Codable, Equatable {
    case pool(heated: Bool)
    case parking(spaces: Int, fee: Double?)
    case wifi
}

struct CodableHotel: Codable, Equatable {
    var name: String
    var stars: Int
    var rating: Float
    var open: Bool
    var tags: [String]
    var address: CodableAddress
    var rooms: [CodableRoom]
    var phone: String?
    var email: String?
    var prices: [String: Int]
    var floors: [Int: String]
    var opened: Date
    var logo: Data
    var site: URL
    var category: CodableCategory
    var amenities: [CodableAmenity]
    var extra: Value
    var ids: [Int64?]
    var grid: [[UInt32]]
}

class CodableAnimal: Codable {
    var name: String
    init(name: String) { self.name = name }
}

final class CodableDog: CodableAnimal {
    var breed: String
    init(name: String, breed: String) {
        self.breed = breed
        super.init(name: name)
    }
    enum CodingKeys: String, CodingKey { case breed }
    required init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        breed = try c.decode(String.self, forKey: .breed)
        try super.init(from: c.superDecoder())
    }
    override func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(breed, forKey: .breed)
        try super.encode(to: c.superEncoder())
    }
}

/// Writes through nested containers and an unkeyed super encoder by hand.
struct HandWritten: Codable, Equatable {
    var a: Int
    var b: [String]
    var c: Double
    enum Keys: String, CodingKey { case outer, list }
    enum Inner: String, CodingKey { case a }
    init(a: Int, b: [String], c: Double) { self.a = a; self.b = b; self.c = c }
    func encode(to encoder: any Encoder) throws {
        var top = encoder.container(keyedBy: Keys.self)
        var outer = top.nestedContainer(keyedBy: Inner.self, forKey: .outer)
        try outer.encode(a, forKey: .a)
        var list = top.nestedUnkeyedContainer(forKey: .list)
        var strings = list.nestedUnkeyedContainer()
        for s in b { try strings.encode(s) }
        var single = list.superEncoder().singleValueContainer()
        try single.encode(c)
    }
    init(from decoder: any Decoder) throws {
        let top = try decoder.container(keyedBy: Keys.self)
        a = try top.nestedContainer(keyedBy: Inner.self, forKey: .outer).decode(Int.self, forKey: .a)
        var list = try top.nestedUnkeyedContainer(forKey: .list)
        var strings = try list.nestedUnkeyedContainer()
        var b: [String] = []
        while !strings.isAtEnd { b.append(try strings.decode(String.self)) }
        self.b = b
        c = try list.superDecoder().singleValueContainer().decode(Double.self)
    }
}

struct Empty: Codable, Equatable {}

struct Small<T: Codable & Equatable>: Codable, Equatable { var v: T }

struct WithOptional: Codable, Equatable {
    var name: String
    var nick: String?
    var age: Int?
}

struct UserInfoReader: Decodable, Encodable {
    var seen: String
    static let key = CodingUserInfoKey(rawValue: "tessera.test")!
    init(seen: String) { self.seen = seen }
    init(from decoder: any Decoder) throws { seen = decoder.userInfo[Self.key] as? String ?? "none" }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(encoder.userInfo[Self.key] as? String ?? "none")
    }
}

// MARK: - Tests

@Suite("ValueCodable")
struct ValueCodableTests {
    static let referenceDate = Date(timeIntervalSince1970: 1_714_566_600.125) // 2024-05-01T12:30:00.125Z

    static func hotel() -> CodableHotel {
        CodableHotel(
            name: "Ritz", stars: 5, rating: 4.5, open: true, tags: ["spa", "bar"],
            address: CodableAddress(street: "15 Place Vendôme", city: "Paris", zip: nil),
            rooms: [CodableRoom(number: 101, price: 950.5, beds: 2), CodableRoom(number: -2, price: 0, beds: 255)],
            phone: nil, email: "desk@ritz.example", prices: ["low": 800, "high": 2400],
            floors: [1: "lobby", -1: "spa"], opened: referenceDate, logo: Data([0, 1, 2, 250, 255]),
            site: URL(string: "https://www.ritzparis.com/en-GB?x=1#top")!, category: .luxury,
            amenities: [.pool(heated: true), .parking(spaces: 40, fee: nil), .wifi],
            extra: ["nested": [1, 2.5, "x", .null], "flag": true], ids: [1, nil, .max], grid: [[1, 2], [], [UInt32.max]])
    }

    @Test("A nested struct encodes to the expected Value and decodes back")
    func roundTrip() throws {
        let h = Self.hotel()
        let v = try ValueEncoder().encode(h)
        #expect(v["name"] == "Ritz")
        #expect(v["stars"] == 5)
        if case .double(4.5) = v["rating"] {} else { Issue.record("rating is \(v["rating"])") }
        #expect(v["open"] == true)
        #expect(v["tags"] == ["spa", "bar"])
        #expect(v["address"] == ["street": "15 Place Vendôme", "city": "Paris", "zip": .null])
        #expect(v["rooms"][1] == ["number": -2, "price": 0, "beds": 255])
        #expect(v["phone"] == .null)
        #expect(v["email"] == "desk@ritz.example")
        #expect(v["prices"] == ["low": 800, "high": 2400])
        #expect(v["floors"] == ["1": "lobby", "-1": "spa"])
        #expect(v["opened"] == "2024-05-01T12:30:00.125Z")
        #expect(v["logo"] == .string(Data([0, 1, 2, 250, 255]).base64EncodedString()))
        #expect(v["site"] == "https://www.ritzparis.com/en-GB?x=1#top")
        #expect(v["category"] == "luxury")
        #expect(v["amenities"][0] == ["pool": ["heated": true]])
        #expect(v["amenities"][1] == ["parking": ["spaces": 40, "fee": .null]])
        #expect(v["extra"] == ["nested": [1, 2.5, "x", .null], "flag": true])
        #expect(v["ids"] == [1, .null, .int(.max)])
        #expect(v["grid"] == [[1, 2], [], [.int(Int64(UInt32.max))]])
        #expect(try ValueDecoder().decode(CodableHotel.self, from: v) == h)
    }

    @Test("nil optionals: null by default, omitted on request; missing or null decode as nil")
    func optionals() throws {
        let w = WithOptional(name: "a", nick: nil, age: 3)
        #expect(try ValueEncoder().encode(w) == ["name": "a", "nick": .null, "age": 3])
        var omitting = ValueEncoder()
        omitting.nilEncodingStrategy = .omit
        let o = try omitting.encode(w)
        #expect(o == ["name": "a", "age": 3])
        #expect(o.objectValue?.keys.contains("nick") == false)
        #expect(try ValueDecoder().decode(WithOptional.self, from: ["name": "a"]) == WithOptional(name: "a"))
        #expect(try ValueDecoder().decode(WithOptional.self, from: ["name": "a", "nick": .null, "age": .missing])
            == WithOptional(name: "a"))
        #expect(try ValueEncoder().encode(Int?.none) == .null)
        #expect(try ValueEncoder().encode([1, nil, 3] as [Int?]) == [1, .null, 3])
        #expect(try ValueDecoder().decode(Int?.self, from: .null) == nil)
        #expect(try ValueDecoder().decode([Int?].self, from: [1, .null]) == [1, nil])
        // A Value property receives MISSING for an absent key and is dropped again on encode.
        let s = try ValueDecoder().decode(Small<Value>.self, from: [:])
        #expect(s.v.isMissing)
        #expect(try ValueEncoder().encode(s) == [:])
    }

    @Test("Scalars and top-level values")
    func scalars() throws {
        let e = ValueEncoder(), d = ValueDecoder()
        #expect(try e.encode(5) == 5)
        #expect(try e.encode("x") == "x")
        #expect(try e.encode(true) == true)
        #expect(try e.encode(Int64.min) == .int(.min))
        #expect(try e.encode(UInt64(Int64.max)) == .int(.max))
        #expect(try e.encode(Float(0.5)) == 0.5)
        #expect(try e.encode(Empty()) == [:])
        #expect(try e.encode(Decimal(string: "12")!) == 12)
        #expect(try e.encode(Decimal(string: "1.5")!) == 1.5)
        #expect(try d.decode(Decimal.self, from: 12) == Decimal(12))
        #expect(try d.decode(Empty.self, from: ["ignored": 1]) == Empty())
        #expect(try d.decode(Double.self, from: 3) == 3.0)
        #expect(try d.decode(Int.self, from: 3.0) == 3)
        #expect(try d.decode(UInt64.self, from: .double(0x1p63)) == UInt64(1) << 63)
        #expect(try d.decode(Float.self, from: 0.1) == Float(0.1))
        #expect(try d.decode([String: [Int]].self, from: ["a": [1], "b": []]) == ["a": [1], "b": []])
        #expect(try d.decode(Value.self, from: ["k": [1, .null]]) == ["k": [1, .null]])
        #expect(try e.encode(Value.missing) == .missing)
        #expect(try e.encode([Value.missing, 1]) == [1])
        let info = UserInfoReader(seen: "")
        var ue = ValueEncoder()
        ue.userInfo[UserInfoReader.key] = "enc"
        #expect(try ue.encode(info) == "enc")
        var ud = ValueDecoder()
        ud.userInfo[UserInfoReader.key] = "dec"
        #expect(try ud.decode(UserInfoReader.self, from: .null).seen == "dec")
    }

    @Test("Integer overflow and non-integral numbers are errors")
    func integerChecks() throws {
        let d = ValueDecoder()
        func corruptedPath(_ body: () throws -> Void) -> [String]? {
            do {
                try body()
                return nil
            } catch DecodingError.dataCorrupted(let ctx) {
                return ctx.codingPath.map(\.stringValue)
            } catch {
                return ["unexpected \(error)"]
            }
        }
        #expect(corruptedPath { _ = try d.decode(Small<Int8>.self, from: ["v": 300]) } == ["v"])
        #expect(corruptedPath { _ = try d.decode(Small<UInt>.self, from: ["v": -1]) } == ["v"])
        #expect(corruptedPath { _ = try d.decode(Small<Int>.self, from: ["v": 3.5]) } == ["v"])
        #expect(corruptedPath { _ = try d.decode(Small<Int64>.self, from: ["v": .double(0x1p63)]) } == ["v"])
        #expect(corruptedPath { _ = try d.decode(Small<Int32>.self, from: ["v": .double(.nan)]) } == ["v"])
        #expect(corruptedPath { _ = try d.decode([UInt8].self, from: [1, 256]) } == ["Index 1"])
        #expect(corruptedPath { _ = try d.decode(Float.self, from: 1e300) } == [])
        #expect(try d.decode(Small<Int8>.self, from: ["v": -128]) == Small(v: -128))
        #expect(try d.decode(Small<UInt64>.self, from: ["v": .int(.max)]) == Small(v: UInt64(Int64.max)))

        do {
            _ = try ValueEncoder().encode(Small(v: [UInt64.max]))
            Issue.record("UInt64.max encoded")
        } catch EncodingError.invalidValue(_, let ctx) {
            #expect(ctx.codingPath.map(\.stringValue) == ["v", "Index 0"])
        }
        #expect(throws: EncodingError.self) { try ValueEncoder().encode(UInt.max) }
    }

    @Test("Decoding errors name the path")
    func errorPaths() throws {
        var v = try ValueEncoder().encode(Self.hotel())
        guard case .object(var o) = v, case .array(var rooms) = o["rooms"]! else { Issue.record("shape"); return }
        rooms.append(["number": 3, "price": "cheap", "beds": 1])
        o["rooms"] = .array(rooms)
        v = .object(o)
        do {
            _ = try ValueDecoder().decode(CodableHotel.self, from: v)
            Issue.record("decoded a string price")
        } catch DecodingError.typeMismatch(let type, let ctx) {
            #expect(type is Double.Type)
            #expect(ctx.codingPath.map(\.stringValue) == ["rooms", "Index 2", "price"])
            #expect(ctx.debugDescription.contains("rooms[2].price"))
        }

        o["rooms"] = .array(Array(rooms.dropLast()))
        o["address"] = ["street": "x"]
        do {
            _ = try ValueDecoder().decode(CodableHotel.self, from: .object(o))
            Issue.record("decoded without city")
        } catch DecodingError.keyNotFound(let key, let ctx) {
            #expect(key.stringValue == "city")
            #expect(ctx.codingPath.map(\.stringValue) == ["address"])
            #expect(ctx.debugDescription.contains("address.city"))
        }

        do {
            _ = try ValueDecoder().decode(Small<String>.self, from: ["v": .null])
            Issue.record("decoded null as String")
        } catch DecodingError.valueNotFound(_, let ctx) {
            #expect(ctx.codingPath.map(\.stringValue) == ["v"])
        }
        #expect(throws: DecodingError.self) { try ValueDecoder().decode(Small<Bool>.self, from: ["v": 1]) }
        #expect(throws: DecodingError.self) { try ValueDecoder().decode([Int].self, from: ["a": 1]) }
        #expect(throws: DecodingError.self) { try ValueDecoder().decode(Small<Int>.self, from: [1]) }
        #expect(throws: DecodingError.self) { try ValueDecoder().decode(Small<Date>.self, from: ["v": "yesterday"]) }
        #expect(throws: DecodingError.self) { try ValueDecoder().decode(Small<Data>.self, from: ["v": "***"]) }
        #expect(throws: DecodingError.self) { try ValueDecoder().decode(CodableCategory.self, from: "mid") }
        #expect(throws: DecodingError.self) { try ValueDecoder().decode([Int].self, from: [1, "2"]) }
    }

    @Test("Super encoders, nested and hand-written containers")
    func containers() throws {
        let dog = CodableDog(name: "Rex", breed: "Collie")
        let v = try ValueEncoder().encode(dog)
        #expect(v == ["breed": "Collie", "super": ["name": "Rex"]])
        let back = try ValueDecoder().decode(CodableDog.self, from: v)
        #expect(back.name == "Rex" && back.breed == "Collie")

        let h = HandWritten(a: 7, b: ["x", "y"], c: 2.5)
        let hv = try ValueEncoder().encode(h)
        #expect(hv == ["outer": ["a": 7], "list": [["x", "y"], 2.5]])
        #expect(try ValueDecoder().decode(HandWritten.self, from: hv) == h)
    }

    @Test("Dates: ISO-8601 text, variants, calendar arithmetic")
    func dates() throws {
        #expect(ISO8601Text.format(Self.referenceDate) == "2024-05-01T12:30:00.125Z")
        #expect(ISO8601Text.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(ISO8601Text.format(Date(timeIntervalSince1970: -0.001)) == "1969-12-31T23:59:59.999Z")
        #expect(ISO8601Text.format(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00.000Z")
        let same: [String] = [
            "2024-05-01T12:30:00.125Z", "2024-05-01T14:30:00.125+02:00", "2024-05-01T07:30:00.125-0500",
            "2024-05-01 12:30:00.125z", "2024-05-01T13:30:00,125+01", "2024-05-01T12:30:00.125",
            "2024-05-01T12:30:00.125000000Z",
        ]
        for s in same {
            let d = try #require(ISO8601Text.parse(s), "\(s)")
            #expect(abs(d.timeIntervalSince(Self.referenceDate)) < 1e-6, "\(s)")
        }
        #expect(ISO8601Text.format(Date(timeIntervalSince1970: -62_167_219_200)) == "0000-01-01T00:00:00.000Z")
        #expect(ISO8601Text.format(Date(timeIntervalSince1970: -62_167_219_201)) == "-0001-12-31T23:59:59.000Z")
        #expect(ISO8601Text.format(Date(timeIntervalSince1970: 253_402_300_800)) == "+10000-01-01T00:00:00.000Z")
        for s in ["0000-01-01T00:00:00.000Z", "-0001-12-31T23:59:59.000Z", "+10000-01-01T00:00:00.000Z"] {
            #expect(ISO8601Text.parse(s).flatMap(ISO8601Text.format) == s)
        }
        #expect(ISO8601Text.format(Date(timeIntervalSince1970: .infinity)) == nil)
        #expect(throws: EncodingError.self) { try ValueEncoder().encode(Date(timeIntervalSince1970: .nan)) }
        #expect(ISO8601Text.parse("2024-05-01") == Date(timeIntervalSince1970: 1_714_521_600))
        #expect(ISO8601Text.parse("2024-05-01T12:30Z") == Date(timeIntervalSince1970: 1_714_566_600))
        for bad in ["", "2024", "2024-13-01", "2023-02-29", "2024-05-01T25:00Z", "2024-05-01T12:30:00.Z",
                    "2024-05-01T12:30:00Zjunk", "24-05-01", "2024-05-01T12", "2024-04-31"] {
            #expect(ISO8601Text.parse(bad) == nil, "\(bad)")
        }
        // Random instants over four centuries: text round trip at millisecond precision, and
        // the same text as Foundation's formatter.
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        var r = KeyTestRNG(seed: 2024)
        for _ in 0..<2_000 {
            let ms = Int64(r.below(25_000_000)) * 1_000_000 - 11_000_000_000_000 + Int64(r.below(1_000_000))
            let date = Date(timeIntervalSince1970: Double(ms) / 1000)
            let text = try #require(ISO8601Text.format(date))
            #expect(text == formatter.string(from: date), "\(ms)")
            let back = try #require(ISO8601Text.parse(text))
            #expect(abs(back.timeIntervalSince(date)) < 0.0005, "\(text)")
            #expect(try ValueDecoder().decode(Date.self, from: ValueEncoder().encode(date)) == back)
        }
    }

    @Test("Value is Codable with JSONEncoder and JSONDecoder")
    func valueWithJSON() throws {
        let sample: Value = ["s": "é\0😀", "i": .int(.max), "n": .int(.min), "d": 0.1, "b": false, "z": .null,
                             "a": [1, [2, [3]], [:], []], "o": ["x": ["y": -2.5e-300]], "gone": .missing]
        let data = try JSONEncoder().encode(sample)
        let back = try JSONDecoder().decode(Value.self, from: data)
        guard case .object(var expected) = sample else { return }
        expected["gone"] = nil
        #expect(back == .object(expected))
        if case .int(.max) = back["i"] {} else { Issue.record("Int64.max came back as \(back["i"])") }
        if case .double(0.1) = back["d"] {} else { Issue.record("0.1 came back as \(back["d"])") }

        // Random values (finite numbers, no MISSING) survive JSON, and ValueEncoder unchanged.
        var r = KeyTestRNG(seed: 11)
        var checked = 0
        for _ in 0..<3_000 {
            let v = ValueGen.value(&r)
            guard Self.jsonSafe(v) else { continue }
            checked += 1
            let json = try JSONDecoder().decode(Value.self, from: JSONEncoder().encode(v))
            #expect(Value.compare(json, v) == 0, "\(v) came back as \(json)")
            let direct = try ValueDecoder().decode(Value.self, from: ValueEncoder().encode(v))
            #expect(Value.compare(direct, v) == 0)
            let nested = try ValueDecoder().decode(Small<Value>.self, from: ValueEncoder().encode(Small(v: v)))
            #expect(Value.compare(nested.v, v) == 0)
        }
        #expect(checked > 1_000)
        // A Value inside a Codable type, through JSON.
        let hotel = Self.hotel()
        let viaJSON = try JSONDecoder().decode(CodableHotel.self, from: JSONEncoder().encode(hotel))
        #expect(viaJSON.extra == hotel.extra)
    }

    @Test("JSONEncoder's text for large integral doubles decodes as that integer")
    func jsonLargeIntegralDoubles() throws {
        let d = 0x1p62 + 0x1p10 // prints as 4611686018427388928 or shorter digits
        let back = try JSONDecoder().decode(Value.self, from: JSONEncoder().encode(Value.double(d)))
        #expect(back.isNumber)
        #expect(abs(back.doubleValue! - d) <= 1024)
        let exact = try JSONDecoder().decode(Value.self, from: Data("9007199254740993".utf8))
        if case .int(9_007_199_254_740_993) = exact {} else { Issue.record("2^53 + 1 came back as \(exact)") }
        let big = try JSONDecoder().decode(Value.self, from: Data("1e20".utf8))
        if case .double(1e20) = big {} else { Issue.record("1e20 came back as \(big)") }
    }

    static func jsonSafe(_ v: Value) -> Bool {
        switch v {
        case .missing: false
        // JSONEncoder prints integral doubles without exponent or fraction, so those above 2^53
        // come back as the (nearby) integer their text names; see jsonLargeIntegralDoubles.
        case .double(let d): d.isFinite && !(d.rounded() == d && abs(d) >= 0x1p53 && abs(d) < 0x1p63)
        case .array(let a): a.allSatisfy(jsonSafe)
        case .object(let o): o.values.allSatisfy(jsonSafe)
        default: true
        }
    }
}
