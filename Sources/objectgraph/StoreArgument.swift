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
    #if OBJECTGRAPH_POSTGRES
    case postgres(PostgresStoreConfiguration)
    #endif

    /// The store `argument` names; `use` completes "… cannot be" for a build without the PostgreSQL store.
    init(_ argument: String, toBe use: String) throws {
        guard argument.hasPrefix("postgres://") || argument.hasPrefix("postgresql://") else {
            self = .file(URL(fileURLWithPath: argument))
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
        #if OBJECTGRAPH_POSTGRES
        case .postgres(let configuration): _ = try PostgresStore(configuration: configuration, versions: versions, progress: progress)
        #endif
        }
    }
}
