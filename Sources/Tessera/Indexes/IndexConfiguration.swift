/// A description of an index to create with `Collection.createIndex(withName:config:)`.
public protocol IndexConfiguration: Sendable {
    /// The stored definition this configuration creates under `name`.
    func definition(name: String) -> IndexDefinition
}
