import Foundation
import PredicateFormat

/// What a store holds, read from the store alone, read-only: its format, the model it keeps, and how many rows each
/// entity has. What `objectgraph inspect` prints. (The PostgreSQL store reads one with `PostgresStore.summary`.)
///
/// ```swift
/// let summary = try StoreSummary(contentsOf: URL(fileURLWithPath: "books.sqlite"))
/// print(summary.report)
/// ```
public struct StoreSummary: Sendable {
    /// The store file, or the PostgreSQL database's location.
    public let path: String
    /// The store's format (see ``SQLiteStore``); format 1 is upgraded when an app opens the store.
    public let formatVersion: Int
    /// The hash of the model the store was made with.
    public let modelHash: String
    /// The model the store keeps.
    public let model: Model
    /// The rows of each entity (its own rows, not its sub-entities').
    public let rowCounts: [String: Int]
    /// What kind of store it is, for the report's first line.
    private let kind: String?

    /// Reads the summary of the store at `url` without writing to it.
    ///
    /// - Throws: ``ObjectGraphError/storeUnavailable(path:reason:)`` for a missing file, a file that is not an SQLite
    ///   database, or a database that is not an ObjectGraph store.
    public init(contentsOf url: URL) throws {
        let path = url.path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw ObjectGraphError.storeUnavailable(path: path, reason: "there is no file there")
        }
        guard !isFolder.boolValue else {
            throw ObjectGraphError.storeUnavailable(path: path, reason: "it is a folder; name the store's .sqlite file in it")
        }
        let db = try ReadOnlyConnection(path: path)
        func rows(_ sql: String) throws -> [[String?]] {
            do {
                return try db.rows(sql)
            } catch let error as ReadOnlyConnection.Failure {
                throw ObjectGraphError.storeUnavailable(path: path, reason: "SQLite cannot read it (\(error.message)); it is damaged or not a database")
            }
        }
        let tables = Set(try rows("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap { $0[0] })
        let isFormat1 = !tables.contains(SQLiteStore.metadataTable)
        let metadataTable = isFormat1 ? StoreFormat1.metadataTable : SQLiteStore.metadataTable
        guard tables.contains(metadataTable) else {
            throw ObjectGraphError.storeUnavailable(path: path, reason: "it is not an ObjectGraph store (it has no \(SQLiteStore.metadataTable) table)")
        }
        var metadata: [String: String] = [:]
        for row in try rows("SELECT key, CAST(value AS TEXT) FROM \(sqlQuoted(metadataTable))") {
            if let key = row[0], let value = row[1] { metadata[key] = value }
        }
        try self.init(path: path, metadata: metadata) { root in
            let (table, entityColumn) = isFormat1 ? (root.name, "_entity") : (root.tableName, StorageNames.rowEntity)
            return try rows("SELECT \(sqlQuoted(entityColumn)), COUNT(*) FROM \(sqlQuoted(table)) GROUP BY 1").compactMap { row in
                guard let name = row[0], let count = row[1].flatMap(Int.init) else { return nil }
                return (name, count)
            }
        }
    }

    /// The summary of the store at `path` whose metadata table holds `metadata` (its `model`, `model_hash` and
    /// `format_version`), every kind of store alike; `rows` gives the rows of a root entity's table, by entity.
    package init(path: String, metadata: [String: String], rows: (_ root: ModelEntity) throws -> [(entity: String, count: Int)]) throws {
        self.path = path
        formatVersion = metadata["format_version"].flatMap(Int.init) ?? 1
        modelHash = metadata["model_hash"] ?? "none"
        guard let json = metadata["model"], let descriptions = try? JSONDecoder().decode([EntityDescription].self, from: Data(json.utf8)) else {
            throw ObjectGraphError.storeUnavailable(path: path, reason: "its metadata holds no model this release can read")
        }
        model = try Model(entities: descriptions)
        kind = nil
        var counts: [String: Int] = [:]
        for root in model.entities where root.rootName == root.name {
            for (entity, count) in try rows(root) { counts[entity] = count }
        }
        rowCounts = counts
    }

    /// A summary of the Core Data store at `url` read with `model` (its own, or one rebuilt from the store: see
    /// ``CoreDataStoreFile``), read-only. Its format is 0 and its model hash names where the model came from.
    ///
    /// ```swift
    /// let inferred = try CoreDataStoreFile.inferredModel(forStoreAt: url)
    /// print(try StoreSummary(coreDataStoreAt: url, model: inferred.model, modelSource: "rebuilt from the store").report)
    /// ```
    public init(coreDataStoreAt url: URL, model: Model, modelSource: String) throws {
        let store = try AtomicStore(model: model, file: CoreDataStoreFile(url: url, model: model))
        path = url.path
        formatVersion = 0
        modelHash = modelSource
        self.model = model
        kind = "Core Data SQLite store (read-only), model \(modelSource)"
        var counts: [String: Int] = [:]
        for entity in model.entities where !entity.isAbstract {
            var request = StoreFetchRequest(entityName: entity.name)
            request.includesSubentities = false
            counts[entity.name] = try store.count(request)
        }
        rowCounts = counts
    }

    /// The summary as text: each entity with its parent, rows, attributes and relationships.
    public var report: String {
        var lines = ["\(path): " + (kind ?? "ObjectGraph store, format \(formatVersion), model \(modelHash)")]
        for entity in model.entities.sorted(by: { $0.name < $1.name }) {
            let description = entity.description
            var heading = "\(entity.name)"
            if let parent = description.parentName { heading += " : \(parent)" }
            if description.isAbstract { heading += " (abstract)" }
            lines.append("\(heading): \(rowCounts[entity.name] ?? 0) rows")
            for attribute in description.attributes {
                lines.append("  \(attribute.name): \(attribute.type.name)\(attribute.isOptional ? "?" : "")")
            }
            for relationship in description.relationships {
                let destination = relationship.isToMany ? "[\(relationship.destinationEntityName)]\(relationship.isOrdered ? " ordered" : "")" : relationship.destinationEntityName
                lines.append("  \(relationship.name) -> \(destination), " + (relationship.hasInverse ? "inverse \(relationship.inverseName)" : "no inverse"))
            }
        }
        return lines.joined(separator: "\n")
    }
}
