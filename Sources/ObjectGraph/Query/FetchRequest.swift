import Foundation
import PredicateFormat

/// What to fetch: an entity, which of its objects, in which order, which slice, and in what form.
///
/// ```swift
/// var request = try FetchRequest(entityName: "Book", format: "author.name = %@", "约翰史蒂芬")
/// request.sortKeys = [SortKey("-pages"), SortKey("title")]
/// request.fetchLimit = 10
/// let books = try ctx.fetch(request)
/// ```
public struct FetchRequest: Sendable {
    /// The entity fetched.
    public var entityName: String
    /// Which objects; nil for all.
    public var predicate: FormatPredicate?
    /// The order; ties are broken by primary key (unsaved inserts last, in insertion order).
    public var sortKeys: [SortKey] = []
    /// How many results at most, or nil for all.
    public var fetchLimit: Int?
    /// How many results to skip.
    public var fetchOffset = 0
    /// With ``ObjectContext/fetchResults(_:)``: how many objects load at a time (0 picks 100); with
    /// ``ObjectContext/fetch(_:)``: how many rows each store read asks for.
    public var fetchBatchSize = 0
    /// Whether objects of sub-entities count (default true).
    public var includesSubentities = true
    /// Whether this context's unsaved inserts, updates and deletes count (default true), for object, ID and count
    /// fetches. Dictionary results (``propertiesToFetch``) always read what is saved, as in Core Data: their
    /// aggregates are computed by the store, so save first to count unsaved changes in them.
    public var includesPendingChanges = true
    /// Whether objects come back as faults that load on first access. The default is false: objects come back
    /// filled, since there is no shared row cache to make faults cheap (a deliberate difference from Core Data).
    public var returnsObjectsAsFaults = false
    /// Relationship key paths (`"author"`, `"tags"`, `"author.agent"`) whose objects load with the fetch, in one
    /// store read per relationship, so reading them later costs no round trip.
    public var relationshipKeyPathsForPrefetching: [String] = []
    /// For dictionary results: the properties and aggregates each result holds. They read what is saved, whatever
    /// ``includesPendingChanges`` says; a to-one relationship's value is its object's ID
    /// (``AttributeValue/objectID(_:)``).
    public var propertiesToFetch: [FetchProperty] = []
    /// For dictionary results: key paths whose values form the groups.
    public var propertiesToGroupBy: [String] = []
    /// For dictionary results: a condition on the result's keys, after grouping. A key path names a result key by
    /// its whole text (`author.name BEGINSWITH 'a'` reads the key `"author.name"`); any other key is an error.
    public var havingPredicate: FormatPredicate?
    /// For dictionary results: whether equal results appear once.
    public var returnsDistinctResults = false

    /// A request for the objects of `entityName` that match `predicate`.
    public init(entityName: String, predicate: FormatPredicate? = nil, sortKeys: [SortKey] = []) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortKeys = sortKeys
    }

    /// A request whose predicate is a format string with arguments.
    ///
    /// - Throws: `FormatPredicateError` naming the offset of a malformed format.
    public init(entityName: String, format: String, _ arguments: Any?...) throws {
        self.init(entityName: entityName, predicate: try FormatPredicate(format: format, argumentArray: arguments))
    }

    func storeRequest() -> StoreFetchRequest {
        var request = StoreFetchRequest(entityName: entityName)
        request.predicate = predicate
        request.sortKeys = sortKeys
        request.includesSubentities = includesSubentities
        return request
    }

    func validate() throws {
        if let limit = fetchLimit, limit < 0 {
            throw ObjectGraphError.invalidFetch(entity: entityName, reason: "fetchLimit must be zero or more, not \(limit)")
        }
        if fetchOffset < 0 {
            throw ObjectGraphError.invalidFetch(entity: entityName, reason: "fetchOffset must be zero or more, not \(fetchOffset)")
        }
        if fetchBatchSize < 0 {
            throw ObjectGraphError.invalidFetch(entity: entityName, reason: "fetchBatchSize must be zero or more, not \(fetchBatchSize)")
        }
        for key in sortKeys where key.keyPath.contains(where: \.isEmpty) {
            throw ObjectGraphError.invalidFetch(entity: entityName, reason: "the sort key '\(key.keyPathText)' has an empty component")
        }
    }
}

extension ManagedEntity {
    /// The name of the entity this class represents (its class name), for a class the `@Entity` macro did not
    /// expand: looked up once per class, since describing a type costs more than the rest of a small fetch.
    public static var entityName: String {
        let key = ObjectIdentifier(Self.self)
        if let name = entityNames.withLock({ $0[key] }) { return name }
        let name = String(describing: Self.self)
        entityNames.withLock { $0[key] = name }
        return name
    }

    /// A request for every object of this class's entity.
    public static func fetchRequest() -> FetchRequest {
        FetchRequest(entityName: entityName)
    }

    /// A request for the objects matching a typed `#Predicate`.
    ///
    /// ```swift
    /// let request = try Book.fetchRequest(#Predicate { $0.pages > 100 })
    /// ```
    public static func fetchRequest(_ predicate: Predicate<Self>) throws -> FetchRequest {
        FetchRequest(entityName: entityName, predicate: try FormatPredicate(predicate, keyPathNames: entityKeyPathName))
    }
}

/// Entity names of macro classes, by class.
private let entityNames = Protected<[ObjectIdentifier: String]>([:])

/// The persisted property a key path of any macro entity names.
func entityKeyPathName(_ keyPath: AnyKeyPath) -> String? {
    (type(of: keyPath).rootType as? any ManagedEntity.Type)?._keyPathNames[keyPath]
}
