/// An immutable copy of one stored row: what a store returns and a context fulfils faults from.
///
/// Values are positional: `values[i]` belongs to `entity.attributes[i]` and `toOne[j]` to the entity's j-th to-one
/// relationship, so reading a row never hashes a property name.
public struct Snapshot: Sendable, Hashable {
    /// The row's object.
    public let objectID: ObjectID
    /// The row's version, bumped by every saved change (optimistic locking).
    public let version: Int64
    /// Attribute values in the entity's attribute order.
    public var values: AttributeValues
    /// The destinations of the entity's to-one relationships, in to-one slot order.
    public var toOne: [ObjectID?]

    /// Creates a snapshot.
    public init(objectID: ObjectID, version: Int64, values: AttributeValues, toOne: [ObjectID?]) {
        self.objectID = objectID
        self.version = version
        self.values = values
        self.toOne = toOne
    }
}
