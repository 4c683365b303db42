import GRDB

/// The app's own metadata, in the store's metadata table under keys of its own (`app.<key>`): migrations carry
/// every key of that table over, so the app's values outlive a model change.
extension SQLiteStore {
    static let appMetadataPrefix = "app."

    public func metadata() throws -> [String: String] {
        try readStore(singleStatement: true) { db in
            var result: [String: String] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT key, CAST(value AS TEXT) FROM \(sqlQuoted(Self.metadataTable)) WHERE substr(key, 1, 4) = ?",
                arguments: [Self.appMetadataPrefix]) {
                result[String((row[0] as String).dropFirst(Self.appMetadataPrefix.count))] = row[1]
            }
            return result
        }
    }

    public func setMetadata(_ metadata: [String: String]) throws {
        try writeStore { db in
            try db.execute(sql: "DELETE FROM \(sqlQuoted(Self.metadataTable)) WHERE substr(key, 1, 4) = ?", arguments: [Self.appMetadataPrefix])
            for (key, value) in metadata {
                try db.execute(
                    sql: "INSERT INTO \(sqlQuoted(Self.metadataTable)) (key, value) VALUES (?, ?)", arguments: [Self.appMetadataPrefix + key, value])
            }
        }
    }
}
