import Foundation

extension SchemaVersions {
    /// The versions a store migrates through to `target`'s current version: `target` itself when it lists the
    /// version that wrote the store, else the model the store keeps (every store describes itself) followed by
    /// `target`'s current version, so a migration is inferred from the store alone.
    ///
    /// Only for a store known to be older than `target`: a store a later model wrote would be "migrated" back, losing
    /// what that model added. `objectgraph migrate` uses it.
    public static func migrating(storeAt url: URL, to target: SchemaVersions) throws -> SchemaVersions {
        try migrating(from: try StoreSummary(contentsOf: url), to: target)
    }

    /// ``migrating(storeAt:to:)`` for the store `summary` describes, of any kind (a PostgreSQL store's summary comes
    /// from `PostgresStore.summary(configuration:)`).
    ///
    /// ```swift
    /// let summary = try PostgresStore.summary(configuration: configuration)
    /// let versions = try SchemaVersions.migrating(from: summary, to: SchemaVersions([newModel]))
    /// let store = try PostgresStore(configuration: configuration, versions: versions)
    /// ```
    public static func migrating(from summary: StoreSummary, to target: SchemaVersions) throws -> SchemaVersions {
        if target.index(ofHash: summary.modelHash) != nil { return target }
        return try SchemaVersions([summary.model, target.current])
    }

    /// The plan of each step from the version whose hash is `storedHash` to the current one, oldest first; empty when
    /// the store is at the current version.
    public func plans(fromVersionWithHash storedHash: String) throws -> [MigrationPlan] {
        guard let stored = index(ofHash: storedHash) else {
            throw ObjectGraphError.invalidModel(entity: "(versions)", property: nil, reason: "no version has the hash \(storedHash)")
        }
        return try (stored..<max(stored, currentIndex)).map { try MigrationPlan(from: models[$0], to: models[$0 + 1]) }
    }
}
