import ObjectGraph

extension PostgresStore {
    /// What the store in the database `configuration` names holds, read without opening it for the app's model:
    /// its format, the model it keeps and each entity's rows. What `objectgraph inspect postgres://…` prints.
    ///
    /// ```swift
    /// let summary = try PostgresStore.summary(configuration: PostgresStoreConfiguration(url: "postgres://app@db.local/books"))
    /// print(summary.report)
    /// ```
    ///
    /// - Throws: `ObjectGraphError.storeUnavailable(path:reason:)`, naming the user, host, port and database, when the
    ///   server cannot be reached, the database holds no ObjectGraph store, or its model cannot be read.
    public static func summary(configuration: PostgresStoreConfiguration) throws -> StoreSummary {
        let location = configuration.location
        let pool = try PostgresConnectionPool(configuration: configuration)
        return try pool.withSession { session in
            do {
                guard let metadata = try PostgresSchema.storedMetadata(session, location: location) else {
                    throw ObjectGraphError.storeUnavailable(
                        path: location, reason: "the database holds no ObjectGraph store (it has no \(PostgresSchema.metadataTable) table)")
                }
                return try StoreSummary(path: location, metadata: metadata) { root in
                    try session.query("SELECT \(pgQuoted(StorageNames.rowEntity)), COUNT(*) FROM \(pgQuoted(root.tableName)) GROUP BY 1").map { row in
                        let (entity, count) = try row.decode((String, Int64).self)
                        return (entity, Int(count))
                    }
                }
            } catch let failure as PostgresErrors.Failure {
                throw ObjectGraphError.storeUnavailable(path: location, reason: failure.reason)
            }
        }
    }
}
