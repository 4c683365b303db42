import Foundation
import GRDB

/// What a file at a store's path holds, found before anything opens it for writing.
///
/// Opening a `DatabasePool` already writes (it switches the file to WAL mode and creates and drops a table to make
/// the WAL file exist), so a file that is not this model's store must be refused before: a damaged file, another
/// program's database or another model's store stays byte for byte as it was. Only a missing or empty file becomes a
/// new store, and so does an SQLite database holding nothing at all (no schema, no user version or application
/// ID): what a creation cut short by a crash leaves.
enum StoreFileCheck {
    enum Verdict: Equatable {
        /// Nothing worth keeping is there: the store is created.
        case create
        /// This model's store, whole as far as SQLite's quick check can tell.
        case open
    }

    /// SQLite's header, the first sixteen bytes of every database file.
    private static let header = Array("SQLite format 3\u{0}".utf8)

    static func inspect(path: String, model: Model) throws -> Verdict {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return .create }
        if attributes[.type] as? FileAttributeType == .typeDirectory {
            throw ObjectGraphError.storeUnavailable(path: path, reason: "it is a folder, not a file")
        }
        guard (attributes[.size] as? NSNumber)?.intValue ?? 0 > 0 else { return .create }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ObjectGraphError.storeUnavailable(path: path, reason: "the file cannot be read")
        }
        let start = (try? handle.read(upToCount: 100)) ?? Data()
        try? handle.close()
        guard start.count == 100, Array(start.prefix(header.count)) == header else {
            throw ObjectGraphError.storeUnavailable(
                path: path, reason: "the file is not an SQLite database (it is \(start.count < 100 ? "shorter than SQLite's header" : "missing SQLite's header")): it is damaged, truncated or another kind of file, and was left as it was")
        }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "ObjectGraph.SQLiteStore.check"
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            return try queue.read { db in try verdict(db, path: path, model: model) }
        } catch let error as ObjectGraphError {
            throw error
        } catch let error as DatabaseError {
            throw ObjectGraphError.storeUnavailable(
                path: path, reason: "SQLite cannot read it (\(error.message ?? "\(error)")); it is damaged or not a database, and was left as it was")
        }
    }

    private static func verdict(_ db: Database, path: String, model: Model) throws -> Verdict {
        let objects = try Row.fetchAll(db, sql: "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
        guard objects.contains(where: { $0["type"] == "table" && $0["name"] == SQLiteStore.metadataTable }) else {
            let userVersion = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
            let applicationID = try Int.fetchOne(db, sql: "PRAGMA application_id") ?? 0
            if objects.isEmpty && userVersion == 0 && applicationID == 0 { return .create }
            var holds = objects.map { "\($0["type"] as String) \($0["name"] as String)" }
            if userVersion != 0 { holds.append("user_version \(userVersion)") }
            if applicationID != 0 { holds.append("application_id \(applicationID)") }
            throw ObjectGraphError.storeUnavailable(
                path: path, reason: "it is an SQLite database but not an ObjectGraph store (it holds \(holds.joined(separator: ", ")) and no \(SQLiteStore.metadataTable)); it was left as it was")
        }
        let metadata = try [String: String](
            try Row.fetchAll(db, sql: "SELECT key, CAST(value AS TEXT) AS value FROM \(SQLiteStore.metadataTable)").map { ($0["key"], $0["value"]) },
            uniquingKeysWith: { first, _ in first })
        if let format = metadata["format_version"].flatMap(Int.init), format > SQLiteStore.formatVersion {
            throw ObjectGraphError.storeUnavailable(
                path: path, reason: "it was written in store format \(format) by a newer ObjectGraph; this one reads format \(SQLiteStore.formatVersion) and left the file as it was")
        }
        let stored = metadata["model_hash"] ?? "none"
        guard stored == model.versionHash else {
            throw ObjectGraphError.modelMismatch(path: path, storeHash: stored, modelHash: model.versionHash)
        }
        guard metadata["store_identifier"] != nil else {
            throw ObjectGraphError.storeUnavailable(path: path, reason: "its metadata table has no store identifier")
        }
        let problems = try String.fetchAll(db, sql: "PRAGMA quick_check")
        guard problems == ["ok"] else {
            throw ObjectGraphError.storeUnavailable(
                path: path, reason: "SQLite's quick check found it damaged (\(problems.prefix(3).joined(separator: "; "))); it was left as it was")
        }
        return .open
    }
}
