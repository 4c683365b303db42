/// A fetched property of an entity (Core Data's `NSFetchedPropertyDescription`): a named fetch whose predicate may
/// read `$FETCH_SOURCE`, the object it is asked of. It is not stored; ``ManagedObject/fetchedObjects(forKey:)`` runs it.
///
/// ```swift
/// FetchedPropertyDescription("longBooks", entity: "Book", predicate: "author == $FETCH_SOURCE AND pages > 500")
/// ```
public struct FetchedPropertyDescription: Sendable, Hashable, Codable {
    /// The property's name, unique among the entity's properties.
    public var name: String
    /// The entity it fetches.
    public var entityName: String
    /// Its predicate, in the format language; `$FETCH_SOURCE` is the object the property is asked of.
    public var predicate: String

    /// Creates a fetched property description.
    public init(_ name: String, entity: String, predicate: String) {
        self.name = name
        self.entityName = entity
        self.predicate = predicate
    }
}
