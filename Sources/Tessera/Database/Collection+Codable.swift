extension Collection {
    /// Saves an `Encodable` value as the body of document `id` (it must encode as an object).
    ///
    /// ```swift
    /// struct Hotel: Codable { var name: String; var city: String }
    /// try hotels.save(Hotel(name: "Lakeside Inn", city: "Ann Arbor"), id: "hotel1")
    /// ```
    ///
    /// - Throws: `.notAnObject` if it does not encode as an object, `EncodingError` for
    ///   values with no JSON form, and the errors of `save(document:)`.
    public func save<T: Encodable>(_ value: T, id: String) throws {
        let encoded = try ValueEncoder().encode(value)
        guard case .object(let o) = encoded else {
            throw DatabaseError(.notAnObject, "document '\(id)': \(T.self) encodes as \(encoded.typeName), not an object")
        }
        try save(id: id, properties: o)
    }

    /// Reads document `id` and decodes its body as `type`; nil if there is no such document.
    ///
    /// - Throws: `DecodingError` (with the path of the offending property) if the body does not fit.
    public func document<T: Decodable>(id: String, as type: T.Type) throws -> T? {
        guard let doc = try document(id: id) else { return nil }
        return try ValueDecoder().decode(type, from: doc.body)
    }
}

extension Document {
    /// Decodes the body as `type`.
    public func data<T: Decodable>(as type: T.Type) throws -> T {
        try ValueDecoder().decode(type, from: body)
    }
}
