/// Scope and collection name of a collection.
struct CollectionKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    static let defaultName = "_default"
    static let defaultCollection = CollectionKey(unchecked: defaultName, defaultName)

    let scope: String
    let name: String

    init(unchecked scope: String, _ name: String) {
        self.scope = scope
        self.name = name
    }

    /// Validates both names per SPEC §1.3.
    init(scope: String, name: String, validate: Bool) throws {
        try CollectionKey.validate(scope, what: "scope")
        try CollectionKey.validate(name, what: "collection")
        self.init(unchecked: scope, name)
    }

    /// Names: 1–251 chars of `A–Z a–z 0–9 _ - %`, not starting with `_` or `%` (except `_default`).
    static func validate(_ name: String, what: String) throws {
        if name == defaultName { return }
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= 251 else {
            throw DatabaseError(.invalidName, "\(what) name must be 1 to 251 characters long (got \(bytes.count))")
        }
        for (i, b) in bytes.enumerated() {
            let ok = (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || (b >= 48 && b <= 57) || b == 95 || b == 45 || b == 37
            guard ok else {
                throw DatabaseError(.invalidName, "\(what) name '\(name)' has an invalid character at position \(i + 1); allowed are A-Z a-z 0-9 _ - %")
            }
        }
        if bytes[0] == 95 || bytes[0] == 37 {
            throw DatabaseError(.invalidName, "\(what) name '\(name)' must not start with '_' or '%'")
        }
    }

    var fullName: String { scope + "." + name }
    var description: String { fullName }
    static func < (a: CollectionKey, b: CollectionKey) -> Bool { (a.scope, a.name) < (b.scope, b.name) }
}
