/// A value index over one or more SQL++ expressions, optionally partial (`where`).
///
/// ```swift
/// try hotels.createIndex(withName: "HotelCityIndex",
///                        config: ValueIndexConfiguration(["city"], where: "type = 'hotel'"))
/// ```
public struct ValueIndexConfiguration: IndexConfiguration {
    /// The indexed expressions (a string may hold a comma-separated list).
    public var expressions: [String]
    /// The partial-index condition.
    public var whereClause: String?

    /// Creates a value index configuration.
    public init(_ expressions: [String], where whereClause: String? = nil) {
        self.expressions = expressions
        self.whereClause = whereClause
    }

    /// The stored definition.
    public func definition(name: String) -> IndexDefinition {
        IndexDefinition(name: name, type: .value, expressions: expressions, whereClause: whereClause)
    }
}
