/// A sort key a store understands: an attribute name and a direction.
public struct StoreSortKey: Sendable, Hashable {
    /// The attribute's name.
    public var attribute: String
    /// Whether smaller values come first.
    public var ascending: Bool

    /// Creates a sort key.
    public init(_ attribute: String, ascending: Bool = true) {
        self.attribute = attribute
        self.ascending = ascending
    }
}

/// A fetch as a store sees it: which entities' rows, in which order, which slice.
public struct StoreFetchRequest: Sendable {
    /// The entity fetched.
    public var entityName: String
    /// Whether rows of sub-entities count.
    public var includesSubentities: Bool = true
    /// The order; ties are broken by primary key so results are stable.
    public var sortKeys: [StoreSortKey] = []
    /// How many rows to skip.
    public var offset: Int = 0
    /// How many rows at most, or nil for all.
    public var limit: Int?

    /// Creates a request for every row of `entityName`.
    public init(entityName: String) { self.entityName = entityName }
}

/// Where rows live. Stores speak only Sendable values (IDs, snapshots, change sets), never objects, so a store can
/// be shared by every context on every queue.
public protocol PersistentStore: AnyObject, Sendable {
    /// A UUID chosen when the store was created; object URIs name it.
    var identifier: String { get }
    /// The store's file path, or a description of where it lives.
    var location: String { get }
    /// The rows for `ids` that exist, in no particular order.
    func snapshots(for ids: [ObjectID]) throws -> [Snapshot]
    /// The rows a request selects, in its order.
    func fetch(_ request: StoreFetchRequest) throws -> [Snapshot]
    /// The number of rows a request selects.
    func count(_ request: StoreFetchRequest) throws -> Int
    /// The destinations of a to-many relationship of the stored object `id`, in order when ordered.
    func relatedIDs(of id: ObjectID, relationship: ModelRelationship) throws -> [ObjectID]
    /// Reserves `count` primary keys for rows of the inheritance tree rooted at `rootEntity`.
    func allocatePrimaryKeys(rootEntity: String, count: Int) throws -> [Int64]
    /// Writes a change set in one transaction: all of it, or (on any error) none of it.
    func save(_ changes: ChangeSet) throws -> SaveResult
}
