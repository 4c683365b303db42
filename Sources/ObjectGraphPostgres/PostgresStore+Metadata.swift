import ObjectGraph

/// The app's own metadata, in the store's metadata table under keys of its own (`app.<key>`), which migrations
/// carry over.
extension PostgresStore {
    private static let appMetadataPrefix = "app."

    public func metadata() throws -> [String: String] {
        try read { session in
            var result: [String: String] = [:]
            for row in try session.query(
                "SELECT key, value FROM \(pgQuoted(PostgresSchema.metadataTable)) WHERE left(key, 4) = 'app.'") {
                let (key, value) = try row.decode((String, String).self)
                result[String(key.dropFirst(Self.appMetadataPrefix.count))] = value
            }
            return result
        }
    }

    public func setMetadata(_ metadata: [String: String]) throws {
        try PostgresErrors.writing(location) {
            try pool.withSession { session in
                try session.transaction(learningOutcome: true) {
                    try session.query("DELETE FROM \(pgQuoted(PostgresSchema.metadataTable)) WHERE left(key, 4) = 'app.'")
                    for (key, value) in metadata {
                        var binds = StatementBindings()
                        binds.append(Self.appMetadataPrefix + key)
                        binds.append(value)
                        try session.query("INSERT INTO \(pgQuoted(PostgresSchema.metadataTable)) (key, value) VALUES ($1, $2)", binds)
                    }
                }
            }
        }
    }
}
