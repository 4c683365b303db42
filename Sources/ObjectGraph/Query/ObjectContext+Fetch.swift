import Foundation
import PredicateFormat

/// Fetching: Core Data's result types as separate calls (objects, IDs, count, dictionaries, lazy batches).
extension ObjectContext {
    /// The objects a request selects, registered in this context (Core Data's managed-object result type).
    ///
    /// With ``FetchRequest/includesPendingChanges`` (the default) the result includes this context's unsaved inserts
    /// that match, leaves out objects deleted here, and judges changed objects by their current values, with order,
    /// offset and limit applied across stored and unsaved objects alike.
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        state.checkExecutor()
        return try state.fetch(request)
    }

    /// The IDs of the objects a request selects, without loading their values from the store.
    public func fetchObjectIDs(_ request: FetchRequest) throws -> [ObjectID] {
        state.checkExecutor()
        return try state.fetchIDs(request)
    }

    /// The number of objects a request would return; counted by the store without reading rows when nothing is
    /// pending here.
    public func count(for request: FetchRequest) throws -> Int {
        state.checkExecutor()
        return try state.count(request)
    }

    /// Rows of chosen properties and aggregates, grouped by ``FetchRequest/propertiesToGroupBy`` and filtered by
    /// ``FetchRequest/havingPredicate`` (Core Data's dictionary result type). As in Core Data, these read what is
    /// saved: pending changes do not count.
    ///
    /// ```swift
    /// var request = FetchRequest(entityName: "Book")
    /// request.propertiesToFetch = [.attribute("author.name"), .aggregate("pages", .sum, of: "pages")]
    /// request.propertiesToGroupBy = ["author.name"]
    /// request.havingPredicate = try FormatPredicate("pages > 1000")
    /// ```
    public func fetchDictionaries(_ request: FetchRequest) throws -> [[String: AttributeValue]] {
        state.checkExecutor()
        return try state.fetchDictionaries(request)
    }

    /// The objects a request selects as a collection that loads them a batch at a time
    /// (``FetchRequest/fetchBatchSize``, 100 when 0) as it is read: reading a million objects keeps about one
    /// batch of them loaded.
    public func fetchResults(_ request: FetchRequest) throws -> FetchedResults<ManagedObject> {
        state.checkExecutor()
        let ids = try state.fetchIDs(request)
        return FetchedResults(ids: ids, batchSize: request.fetchBatchSize == 0 ? 100 : request.fetchBatchSize,
                              prefetching: request.relationshipKeyPathsForPrefetching, state: state)
    }

    /// The objects a request selects, as a macro entity class.
    public func fetch<T: ManagedEntity>(_ request: FetchRequest, as type: T.Type) throws -> [T] {
        state.checkExecutor()
        return try state.fetch(request, as: type)
    }

    /// The objects a request selects as a macro entity class (``fetch(_:as:)`` with the class first).
    ///
    /// ```swift
    /// let recent = try ctx.fetch(Book.self, FetchRequest(entityName: "Book", format: "year > 2000"))
    /// ```
    public func fetch<T: ManagedEntity>(_ type: T.Type, _ request: FetchRequest) throws -> [T] {
        try fetch(request, as: type)
    }

    /// The objects a request selects as a macro entity class, loaded a batch at a time.
    public func fetchResults<T: ManagedEntity>(_ request: FetchRequest, as type: T.Type) throws -> FetchedResults<T> {
        let results = try fetchResults(request)
        return FetchedResults(ids: results.ids, batchSize: results.batchSize, prefetching: results.prefetching, state: state)
    }

    /// Every object of a macro entity class (and its sub-entities) matching a format, in the order of `sortedBy`
    /// (key paths; a leading `-` sorts descending).
    ///
    /// ```swift
    /// let books = try ctx.fetch(Book.self, sortedBy: ["-pages", "title"], where: "author = %@", "约翰史蒂芬")
    /// ```
    public func fetch<T: ManagedEntity>(_ type: T.Type, sortedBy sortKeys: [String] = [], where format: String? = nil, _ arguments: Any?...) throws -> [T] {
        try fetch(try T.request(format: format, arguments: arguments, orderBy: sortKeys, offset: 0, limit: nil), as: T.self)
    }

    /// Every object of a macro entity class matching a typed `#Predicate`.
    public func fetch<T: ManagedEntity>(_ type: T.Type, matching predicate: Predicate<T>, sortedBy sortKeys: [String] = []) throws -> [T] {
        var request = try T.fetchRequest(predicate)
        request.sortKeys = sortKeys.map { SortKey($0) }
        return try fetch(request, as: T.self)
    }
}
