import Foundation
import GRDBSQLite
import PredicateFormat

/// What a file at a store's path holds, found before anything opens it for writing.
///
/// Opening a store for writing may write (a new file is switched to WAL mode), so a file that is not this model's store must be refused before: a damaged file, another
/// program's database or another model's store stays byte for byte as it was. Only a missing or empty file becomes a
/// new store, and so does an SQLite database holding nothing at all (no schema, no user version or application
/// ID): what a creation cut short by a crash leaves.
enum StoreFileCheck {
    /// SQLite's header, the first sixteen bytes of every database file.
    private static let header = Array("SQLite format 3\u{0}".utf8)

    /// Returns when the store may be opened or created at `path`, with the version of `versions` that wrote it (nil
    /// for a new store); throws, having written nothing, when it may not.
    @discardableResult
    static func inspect(path: String, versions: SchemaVersions) throws -> Int? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }
        if attributes[.type] as? FileAttributeType == .typeDirectory {
            throw ObjectGraphError.storeUnavailable(path: path, reason: "it is a folder, not a file")
        }
        guard (attributes[.size] as? NSNumber)?.intValue ?? 0 > 0 else { return nil }
        // The header is read through the check's own SQLite connection: a descriptor of this code's, once closed,
        // would drop every SQLite lock the process holds on the file (see `StoreFileRegistry`).
        let connection = try ReadOnlyConnection(path: path)
        let inUseBefore = isInUse(path)
        let (bytes, size): ([UInt8], Int64)
        do {
            (bytes, size) = try connection.fileStart(100)
        } catch let error as ReadOnlyConnection.Failure {
            throw ObjectGraphError.storeUnavailable(path: path, reason: "\(error.message), and was left as it was")
        }
        guard bytes.count == 100, Array(bytes.prefix(header.count)) == header else {
            throw ObjectGraphError.storeUnavailable(
                path: path, reason: "the file is not an SQLite database (it is \(bytes.count < 100 ? "shorter than SQLite's header" : "missing SQLite's header")): it is damaged, truncated or another kind of file, and was left as it was")
        }
        // SQLite reads missing pages of a cut file as empty ones; its header says how long the file must be. That
        // holds of a file at rest only: while another connection folds its log in, the header page (with the new
        // page count) reaches the file before the pages behind it, and the bare file looks cut. A file in use is
        // left to SQLite's quick check below, which reads the pages through the log, under a lock.
        let rawPageSize = Int(bytes[16]) << 8 | Int(bytes[17])
        let pageSize = rawPageSize == 1 ? 65_536 : rawPageSize
        let pageCount = bytes[28..<32].reduce(Int64(0)) { $0 << 8 | Int64($1) }
        let headerIsCurrent = bytes[24..<28] == bytes[92..<96]
        let atRest = !inUseBefore && !isInUse(path)
        guard pageSize >= 512, !atRest || size % Int64(pageSize) == 0, !atRest || !headerIsCurrent || size >= pageCount * Int64(pageSize) else {
            throw ObjectGraphError.storeUnavailable(
                path: path, reason: "the file is \(size) bytes, not the whole pages of \(pageSize) bytes its header promises: it is truncated or damaged, and was left as it was")
        }
        do {
            return try check(connection, path: path, versions: versions)
        } catch let error as ReadOnlyConnection.Failure {
            throw ObjectGraphError.storeUnavailable(
                path: path, reason: "SQLite cannot read it (\(error.message)); it is damaged or not a database, and was left as it was")
        }
    }

    /// Whether a connection has the file open, or left it mid-write: its log (`-wal` and `-shm`, which SQLite
    /// removes when the last connection closes) or its rollback journal is beside it.
    private static func isInUse(_ path: String) -> Bool {
        StoreFileRegistry.hasFileBeside(path, ["-wal", "-shm", "-journal"])
    }

    /// An empty database passes, and so does this model's store when SQLite's quick check finds it whole.
    private static func check(_ db: ReadOnlyConnection, path: String, versions: SchemaVersions) throws -> Int? {
        let model = versions.current
        let objects = try db.rows("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").map { ($0[0] ?? "", $0[1] ?? "") }
        // The current format's metadata, or format 1's (upgraded when the store opens).
        let metadataTable = [SQLiteStore.metadataTable, StoreFormat1.metadataTable].first { name in objects.contains { $0 == ("table", name) } }
        guard let metadataTable else {
            let userVersion = try db.rows("PRAGMA user_version").first?[0] ?? "0"
            let applicationID = try db.rows("PRAGMA application_id").first?[0] ?? "0"
            if objects.isEmpty && userVersion == "0" && applicationID == "0" { return nil }
            var holds = objects.map { "\($0.0) \($0.1)" }
            if userVersion != "0" { holds.append("user_version \(userVersion)") }
            if applicationID != "0" { holds.append("application_id \(applicationID)") }
            throw ObjectGraphError.storeUnavailable(
                path: path, reason: "it is an SQLite database but not an ObjectGraph store (it holds \(holds.joined(separator: ", ")) and no \(SQLiteStore.metadataTable)); it was left as it was")
        }
        var metadata: [String: String] = [:]
        for row in try db.rows("SELECT key, CAST(value AS TEXT) FROM \(sqlQuoted(metadataTable))") {
            if let key = row[0], let value = row[1] { metadata[key] = value }
        }
        if let format = metadata["format_version"].flatMap(Int.init), format > SQLiteStore.formatVersion {
            throw ObjectGraphError.storeUnavailable(
                path: path, reason: "it was written in store format \(format) by a newer ObjectGraph; this one reads format \(SQLiteStore.formatVersion) and left the file as it was")
        }
        let stored = metadata["model_hash"] ?? "none"
        // This model's store, or an earlier version's (migrated when opened); a later version's is the app's to
        // refuse, since it would lose what the later version added.
        let version = versions.index(ofHash: stored)
        switch version {
        case versions.currentIndex?:
            break
        case let index? where index < versions.currentIndex:
            // A change no rule infers is refused now, before anything opens the file for writing.
            for step in index..<versions.currentIndex {
                _ = try MigrationPlan.namingStore(path) { try MigrationPlan(from: versions.models[step], to: versions.models[step + 1]) }
            }
        case let index?:
            throw ObjectGraphError.storeUnavailable(
                path: path, reason: "it was written by version \(index + 1) of the model, newer than this app's version \(versions.currentIndex + 1); it was left as it was")
        case nil:
            throw ObjectGraphError.modelMismatch(path: path, storeHash: stored, modelHash: model.versionHash)
        }
        guard metadata["store_identifier"] != nil else {
            throw ObjectGraphError.storeUnavailable(path: path, reason: "its metadata table has no store identifier")
        }
        // A store of format 1 is upgraded once opened, and the upgrade checks every reference: a broken one is
        // found here, before the store writes anything.
        if metadataTable == StoreFormat1.metadataTable, let broken = try db.rows("PRAGMA foreign_key_check").first {
            throw ObjectGraphError.storeUnavailable(
                path: path, reason: "it needs upgrading from store format 1, but rows of table \(broken[0] ?? "?") refer to rows that do not exist; it was left as it was")
        }
        let problems = try db.rows("PRAGMA quick_check").map { $0[0] ?? "" }
        guard problems == ["ok"] else {
            throw ObjectGraphError.storeUnavailable(
                path: path, reason: "SQLite's quick check found it damaged (\(problems.prefix(3).joined(separator: "; "))); it was left as it was")
        }
        return version
    }
}
