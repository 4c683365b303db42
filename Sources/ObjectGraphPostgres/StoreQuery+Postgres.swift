import ObjectGraph

extension StoreQuery {
    /// Runs `predicate` (the format language; nil for every object) against `entity` in the PostgreSQL store of the
    /// database `configuration` names, with the model the store keeps: what `objectgraph query postgres://…` runs.
    ///
    /// ```swift
    /// let result = try StoreQuery(configuration: PostgresStoreConfiguration(url: "postgres://app@db.local/books"),
    ///                             entity: "Book", predicate: "pages > 300", sortedBy: ["-pages"], limit: 10)
    /// print(result.table)
    /// ```
    ///
    /// The store is opened with the model it keeps, which changes nothing in the database.
    ///
    /// - Throws: `ObjectGraphError.storeUnavailable(path:reason:)`, naming the user, host, port and database, when the
    ///   server cannot be reached or the database holds no ObjectGraph store; `ObjectGraphError.invalidFetch(entity:reason:)`
    ///   for an entity the store lacks, listing those it has; `FormatPredicateError` for a malformed predicate, and
    ///   `ObjectGraphError.invalidPredicate(entity:error:)` for one that cannot run.
    public init(
        configuration: PostgresStoreConfiguration, entity: String, predicate: String? = nil, sortedBy sortKeys: [String] = [],
        limit: Int? = nil, offset: Int = 0
    ) throws {
        let summary = try PostgresStore.summary(configuration: configuration)
        try self.init(model: summary.model, entity: entity, predicate: predicate, sortedBy: sortKeys, limit: limit, offset: offset) { model in
            PersistentStoreCoordinator(model: model, store: try PostgresStore(configuration: configuration, model: model))
        }
    }
}
