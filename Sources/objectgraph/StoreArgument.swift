import ArgumentParser
import Foundation
import ObjectGraph
#if OBJECTGRAPH_POSTGRES
import ObjectGraphPostgres
#endif

/// A store named on the command line: a file's path, or a PostgreSQL store's URL. The one place the commands tell
/// the two apart, and the one place a build without the PostgreSQL store refuses a URL.
enum StoreArgument {
    case file(URL)
    /// A store Core Data wrote, read-only, with its model (`--model`'s version that wrote it, or one rebuilt from
    /// the store) and where the model came from.
    case coreData(URL, model: Model, source: String, notes: [String])
    #if OBJECTGRAPH_POSTGRES
    case postgres(PostgresStoreConfiguration)
    #endif

    /// The store `argument` names; `use` completes "… cannot be" for a build without the PostgreSQL store. A Core
    /// Data store is read with `model` (a `.xcdatamodeld` or `.xcdatamodel`), or with a model rebuilt from it.
    init(_ argument: String, toBe use: String, model: String? = nil) throws {
        guard argument.hasPrefix("postgres://") || argument.hasPrefix("postgresql://") else {
            let url = URL(fileURLWithPath: argument)
            guard CoreDataStoreFile.isCoreDataStore(at: url) else {
                if let model { throw ToolInputError("--model \(model) is for Core Data stores, and \(argument) is not one") }
                self = .file(url)
                return
            }
            if let model {
                let modelURL = URL(fileURLWithPath: model)
                self = .coreData(url, model: try CoreDataStoreFile.model(in: modelURL, forStoreAt: url), source: modelURL.lastPathComponent, notes: [])
            } else {
                let inferred = try CoreDataStoreFile.inferredModel(forStoreAt: url)
                self = .coreData(url, model: inferred.model, source: "rebuilt from the store (give --model for the app's own)", notes: inferred.notes)
            }
            return
        }
        #if OBJECTGRAPH_POSTGRES
        self = .postgres(try PostgresStoreConfiguration(url: argument))
        #else
        throw withoutPostgres("\(argument) cannot be \(use)")
        #endif
    }

    /// What the store holds, read from its own metadata.
    func summary() throws -> StoreSummary {
        switch self {
        case .file(let url): try StoreSummary(contentsOf: url)
        case .coreData(let url, let model, let source, _): try StoreSummary(coreDataStoreAt: url, model: model, modelSource: source)
        #if OBJECTGRAPH_POSTGRES
        case .postgres(let configuration): try PostgresStore.summary(configuration: configuration)
        #endif
        }
    }

    /// A fetch with the model the store keeps.
    func query(entity: String, predicate: String?, sortedBy keys: [String], limit: Int?, offset: Int) throws -> StoreQuery {
        switch self {
        case .file(let url):
            try StoreQuery(contentsOf: url, entity: entity, predicate: predicate, sortedBy: keys, limit: limit, offset: offset)
        case .coreData(let url, let model, _, _):
            try StoreQuery(model: model, entity: entity, predicate: predicate, sortedBy: keys, limit: limit, offset: offset) {
                try PersistentStoreCoordinator(model: $0, coreDataStoreURL: url)
            }
        #if OBJECTGRAPH_POSTGRES
        case .postgres(let configuration):
            try StoreQuery(configuration: configuration, entity: entity, predicate: predicate, sortedBy: keys, limit: limit, offset: offset)
        #endif
        }
    }

    /// Opens the store with `versions`, which migrates it to the current one.
    func migrate(through versions: SchemaVersions, progress: @escaping MigrationProgressHandler) throws {
        switch self {
        case .file(let url): _ = try PersistentStoreCoordinator(versions: versions, storeURL: url, progress: progress)
        case .coreData(let url, _, _, _):
            throw ToolInputError("\(url.path) is a Core Data store, which is read-only here: copy it with `objectgraph import` first")
        #if OBJECTGRAPH_POSTGRES
        case .postgres(let configuration): _ = try PostgresStore(configuration: configuration, versions: versions, progress: progress)
        #endif
        }
    }
}
