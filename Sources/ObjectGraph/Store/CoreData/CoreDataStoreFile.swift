import Foundation

/// A store written by Core Data on Apple platforms (its SQLite store type), read with the app's model, read-only:
/// every object with its values, links and order, through an ``AtomicStore``, so fetches, predicates, sorts,
/// relationships, faults, dictionaries and aggregates work on it as on any store. Saves, batch requests and
/// metadata changes throw ``ObjectGraphError/storeWriteFailed(path:reason:)``; writing a Core Data store so that
/// Core Data keeps opening it is not done, since it cannot be checked against Core Data here.
///
/// ```swift
/// let model = try Model(contentsOf: URL(filePath: "Notes.xcdatamodeld"))
/// let coordinator = try PersistentStoreCoordinator(model: model, coreDataStoreURL: URL(filePath: "Notes.sqlite"))
/// let copy = try coordinator.migratePersistentStore(to: try SQLiteStore(url: URL(filePath: "notes-export.sqlite"), model: model))
/// ```
///
/// The file is opened as the read-only stores are (nothing is written or created beside it). The objects are read
/// when the store opens and kept in memory: stores of up to some hundred thousand objects.
public struct CoreDataStoreFile: AtomicStoreFile {
    /// The Core Data store.
    public let url: URL
    /// The model the store was written with.
    public let model: Model

    /// The Core Data store at `url`, to be read with `model`.
    public init(url: URL, model: Model) {
        self.url = url
        self.model = model
    }

    public var location: String { url.path }
    public var isReadOnly: Bool { true }

    /// Reads every object.
    ///
    /// - Throws: ``ObjectGraphError/storeUnavailable(path:reason:)`` for a file that is not a Core Data SQLite
    ///   store (Core Data's XML or binary store types, another SQLite database, a damaged file);
    ///   ``ObjectGraphError/storeReadFailed(path:reason:)`` when its entities and columns are not the model's, or a
    ///   value or link cannot be read, naming the table, column and row.
    public func read() throws -> AtomicStoreContents? {
        let file = try OpenedFile(url: url)
        let layout = try CoreDataLayout(model: model, schema: file.schema, primaryKeys: file.primaryKeys, path: file.path)
        let reader = CoreDataRowReader(model: model, layout: layout, connection: file.connection, path: file.path, externalData: Self.externalDataFolder(of: url))
        let objects = try file.failing("the rows") { try reader.objects() }
        return AtomicStoreContents(
            storeIdentifier: file.identifier, modelVersionHash: model.versionHash, objects: objects, lastKeys: layout.lastKeys, metadata: file.metadata)
    }

    /// The version of the Xcode model at `modelURL` (a `.xcdatamodeld` with any number of versions, or one
    /// `.xcdatamodel`) that the Core Data store at `storeURL` was written with: the one whose entities, tables and
    /// columns the store has. Core Data names the version by hashes of its own making, which are not reproduced
    /// here; the layout tells the versions of a bundle apart as well, since Core Data migrates a store whenever it
    /// changes.
    ///
    /// ```swift
    /// let model = try CoreDataStoreFile.model(in: URL(filePath: "Notes.xcdatamodeld"), forStoreAt: storeURL)
    /// ```
    ///
    /// - Throws: ``ObjectGraphError/storeReadFailed(path:reason:)`` naming, for each version, what the store lacks.
    public static func model(in modelURL: URL, forStoreAt storeURL: URL, classes: [any ManagedEntity.Type] = []) throws -> Model {
        let file = try OpenedFile(url: storeURL)
        var versions = [modelURL]
        if modelURL.pathExtension == "xcdatamodeld",
           let names = try? FileManager.default.contentsOfDirectory(atPath: modelURL.path).filter({ $0.hasSuffix(".xcdatamodel") }), !names.isEmpty {
            versions = names.sorted().map { modelURL.appendingPathComponent($0) }
        }
        var reasons: [String] = []
        for version in versions {
            let model = try Model(contentsOf: version, classes: classes)
            do {
                _ = try CoreDataLayout(model: model, schema: file.schema, primaryKeys: file.primaryKeys, path: file.path)
                return model
            } catch ObjectGraphError.storeReadFailed(_, let reason) {
                reasons.append("\(version.lastPathComponent): \(reason)")
            }
        }
        throw ObjectGraphError.storeReadFailed(path: file.path, reason: "no version of \(modelURL.lastPathComponent) wrote it; " + reasons.joined(separator: "; "))
    }

    /// The store's file opened read-only, its format checked, its schema and Core Data's own tables read.
    struct OpenedFile {
        let path: String
        let connection: ReadOnlyConnection
        /// Each table's columns, in order.
        let schema: [String: [String]]
        /// Each table's columns' declared types, by column.
        let declaredTypes: [String: [String: String]]
        let primaryKeys: [(ent: Int64, name: String, superEnt: Int64, max: Int64)]
        let identifier: String
        let metadata: [String: String]

        init(url: URL) throws {
            let path = url.path
            self.path = path
            guard FileManager.default.fileExists(atPath: path) else {
                throw ObjectGraphError.storeUnavailable(path: path, reason: "there is no file there; nothing was created")
            }
            connection = try ReadOnlyConnection(path: path)
            try CoreDataStoreFile.checkFormat(connection, path: path)
            let connection = connection
            let tableNames = try Self.failing("its schema", path: path) {
                try connection.rows("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap { $0[0] }
            }
            guard tableNames.contains("Z_PRIMARYKEY"), tableNames.contains("Z_METADATA") else {
                throw ObjectGraphError.storeUnavailable(path: path, reason: "it is an SQLite database but not a Core Data store (no Z_PRIMARYKEY and Z_METADATA tables)")
            }
            var schema: [String: [String]] = [:]
            var declaredTypes: [String: [String: String]] = [:]
            for table in tableNames {
                let columns = try Self.failing("the table \(table)", path: path) {
                    try connection.rows("PRAGMA table_info(\"\(table.replacingOccurrences(of: "\"", with: "\"\""))\")")
                }
                schema[table] = columns.compactMap { $0[1] }
                declaredTypes[table] = Dictionary(columns.compactMap { row in row[1].map { ($0, row[2] ?? "") } }) { first, _ in first }
            }
            (self.schema, self.declaredTypes) = (schema, declaredTypes)
            primaryKeys = try Self.failing("Z_PRIMARYKEY", path: path) {
                try connection.rows("SELECT Z_ENT, Z_NAME, COALESCE(Z_SUPER, 0), COALESCE(Z_MAX, 0) FROM Z_PRIMARYKEY").map {
                    (ent: Int64($0[0] ?? "") ?? 0, name: $0[1] ?? "", superEnt: Int64($0[2] ?? "") ?? 0, max: Int64($0[3] ?? "") ?? 0)
                }
            }
            (identifier, metadata) = try Self.failing("Z_METADATA", path: path) { try CoreDataStoreFile.metadata(connection, path: path) }
        }

        func failing<T>(_ what: String, _ body: () throws -> T) throws -> T { try Self.failing(what, path: path, body) }

        /// Runs `body`, answering SQLite's failures as a file that cannot be read.
        static func failing<T>(_ what: String, path: String, _ body: () throws -> T) throws -> T {
            do {
                return try body()
            } catch let error as ObjectGraphError {
                throw error
            } catch {
                throw ObjectGraphError.storeUnavailable(path: path, reason: "\(what) cannot be read (\(error)); the file may be damaged")
            }
        }
    }

    public func write(_ contents: AtomicStoreContents) throws {
        throw ObjectGraphError.storeWriteFailed(path: url.path, reason: "a Core Data store is opened read-only; nothing was written")
    }

    /// Whether the file at `url` is a Core Data SQLite store (an SQLite database with Core Data's `Z_PRIMARYKEY` and
    /// `Z_METADATA` tables), read without writing to it.
    public static func isCoreDataStore(at url: URL) -> Bool {
        (try? OpenedFile(url: url)) != nil
    }

    /// Where Core Data keeps the values it stores outside the file: `.<name>_SUPPORT/_EXTERNAL_DATA` beside it.
    static func externalDataFolder(of url: URL) -> URL {
        let name = url.deletingPathExtension().lastPathComponent
        return url.deletingLastPathComponent().appendingPathComponent(".\(name)_SUPPORT").appendingPathComponent("_EXTERNAL_DATA")
    }

    /// Refuses what is not an SQLite file, naming Core Data's other store types.
    fileprivate static func checkFormat(_ connection: ReadOnlyConnection, path: String) throws {
        let start: [UInt8]
        do {
            start = try connection.fileStart(16).bytes
        } catch {
            throw ObjectGraphError.storeUnavailable(path: path, reason: "the file cannot be read")
        }
        if start.starts(with: Array("SQLite format 3\0".utf8)) { return }
        let text = String(decoding: start, as: UTF8.self)
        let reason = if text.hasPrefix("<?xml") || text.hasPrefix("<!DOCTYPE") {
            "it is Core Data's XML store type (or another XML file); only the SQLite store type is read"
        } else if text.hasPrefix("bplist") {
            "it is a binary property list, as Core Data's binary store type writes; only the SQLite store type is read"
        } else {
            "it is not an SQLite database (it may be damaged)"
        }
        throw ObjectGraphError.storeUnavailable(path: path, reason: reason)
    }

    /// The store's UUID and the app's own metadata: the property list's string values, Core Data's own keys aside.
    fileprivate static func metadata(_ connection: ReadOnlyConnection, path: String) throws -> (String, [String: String]) {
        var identifier: String?
        var plist: Data?
        try connection.cells("SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION DESC LIMIT 1") { row in
            if case .text(let uuid) = row[0] { identifier = uuid }
            if case .blob(let data) = row[1] { plist = data }
        }
        guard let identifier else {
            throw ObjectGraphError.storeUnavailable(path: path, reason: "its Z_METADATA names no store UUID (Z_UUID); the file may be damaged")
        }
        var metadata: [String: String] = [:]
        if let plist, let values = try? PropertyListSerialization.propertyList(from: plist, format: nil) as? [String: Any] {
            for (key, value) in values where !key.hasPrefix("NS") && !key.hasPrefix("_NS") {
                if let text = value as? String { metadata[key] = text }
            }
        }
        return (identifier, metadata)
    }
}

extension PersistentStoreCoordinator {
    /// A coordinator on the Core Data SQLite store at `url`, read-only, with the model it was written with (see
    /// ``CoreDataStoreFile``).
    ///
    /// ```swift
    /// let coordinator = try PersistentStoreCoordinator(model: model, coreDataStoreURL: URL(filePath: "Notes.sqlite"))
    /// ```
    public convenience init(model: Model, coreDataStoreURL url: URL) throws {
        self.init(model: model, store: try AtomicStore(model: model, file: CoreDataStoreFile(url: url, model: model)))
    }
}
