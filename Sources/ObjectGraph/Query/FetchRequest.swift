/// What to fetch: an entity, an order, a slice.
///
/// ```swift
/// var request = FetchRequest(entityName: "Book")
/// request.sortKeys = [StoreSortKey("title")]
/// request.fetchLimit = 10
/// let books = try ctx.fetch(request)
/// ```
public struct FetchRequest: Sendable {
    /// The entity fetched.
    public var entityName: String
    /// The order; ties are broken by primary key.
    public var sortKeys: [StoreSortKey] = []
    /// How many objects at most, or nil for all.
    public var fetchLimit: Int?
    /// How many objects to skip.
    public var fetchOffset: Int = 0
    /// Whether objects of sub-entities count (default true).
    public var includesSubentities = true
    /// Whether this context's unsaved inserts and deletes count (default true).
    public var includesPendingChanges = true

    /// Creates a request for every object of `entityName`.
    public init(entityName: String) { self.entityName = entityName }
}

extension ObjectContext {
    /// The objects a request selects, registered in this context.
    ///
    /// With ``FetchRequest/includesPendingChanges`` the result includes unsaved inserts of the entity and leaves out
    /// objects deleted here, with order, offset and limit applied across both.
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        state.checkExecutor()
        if let limit = request.fetchLimit, limit < 0 {
            throw ObjectGraphError.typeMismatch(entity: request.entityName, key: "fetchLimit", expected: "a count of zero or more", got: "\(limit)")
        }
        guard request.fetchOffset >= 0 else {
            throw ObjectGraphError.typeMismatch(entity: request.entityName, key: "fetchOffset", expected: "a count of zero or more", got: "\(request.fetchOffset)")
        }
        let entity = try coordinator.model.entity(named: request.entityName)
        var storeRequest = StoreFetchRequest(entityName: request.entityName)
        storeRequest.includesSubentities = request.includesSubentities
        storeRequest.sortKeys = request.sortKeys
        let names = Set(request.includesSubentities ? entity.selfAndDescendantNames : [entity.name])
        let pendingInserts = request.includesPendingChanges ? state.inserted.values.filter { names.contains($0.entity.name) } : []
        let pendingOther = request.includesPendingChanges
            && (state.deleted.values.contains { names.contains($0.entity.name) } || state.updated.values.contains { names.contains($0.entity.name) })
        if pendingInserts.isEmpty && !pendingOther {
            storeRequest.limit = request.fetchLimit
            storeRequest.offset = request.fetchOffset
            return try coordinator.store.fetch(storeRequest).map { try state.register($0) }
        }
        // Pending changes decide membership and order in memory, over the stored rows and the unsaved inserts.
        var objects = try coordinator.store.fetch(storeRequest).map { try state.register($0) }.filter { !$0.isDeleted }
        objects += pendingInserts
        let indexes = try request.sortKeys.map { key -> (Int, Bool) in
            guard let index = entity.attributeIndex[key.attribute] else { throw ObjectGraphError.unknownKey(entity: entity.name, key: key.attribute) }
            return (index, key.ascending)
        }
        for object in objects where object.isFaultStorage { try state.fulfill(object) }
        objects.sort { lhs, rhs in
            for (index, ascending) in indexes {
                let order = lhs.values[index].storeOrder(rhs.values[index])
                if order != .orderedSame { return ascending == (order == .orderedAscending) }
            }
            // Unsaved inserts (negative keys) sort after stored rows, in insertion order.
            let (l, r) = (lhs.objectID.rawKey, rhs.objectID.rawKey)
            return (l < 0) != (r < 0) ? l > 0 : (l < 0 ? l > r : l < r)
        }
        let start = min(request.fetchOffset, objects.count)
        let end = request.fetchLimit.map { min(start + $0, objects.count) } ?? objects.count
        return Array(objects[start..<end])
    }

    /// The number of objects a request would return, counted without registering objects when nothing is pending.
    public func count(for request: FetchRequest) throws -> Int {
        state.checkExecutor()
        var storeRequest = StoreFetchRequest(entityName: request.entityName)
        storeRequest.includesSubentities = request.includesSubentities
        if !request.includesPendingChanges || !state.hasChanges {
            let total = try coordinator.store.count(storeRequest)
            let afterOffset = max(0, total - request.fetchOffset)
            return request.fetchLimit.map { min($0, afterOffset) } ?? afterOffset
        }
        return try fetch(request).count
    }
}
