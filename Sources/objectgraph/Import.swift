import ArgumentParser
import Foundation
import ObjectGraph
#if OBJECTGRAPH_POSTGRES
import ObjectGraphPostgres
#endif

/// Copies a store Core Data wrote into an ObjectGraph store: every object, value, link and order.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy a store Core Data wrote (its SQLite store type) into a new ObjectGraph store, read-only on the source.",
        discussion: "Example: objectgraph import Notes.sqlite notes-export.sqlite --model Notes.xcdatamodeld")

    @Argument(help: "The Core Data store (.sqlite).") var source: String
    @Argument(help: "The store to create: a file's path, or a PostgreSQL store's URL (postgres://user@host:port/database).")
    var destination: String
    @Option(help: "The app's model (.xcdatamodeld with its versions, or one .xcdatamodel); without it, one is rebuilt from the store.")
    var model: String?

    func run() throws {
        guard case .coreData(let url, let model, let modelSource, let notes) = try StoreArgument(source, toBe: "imported", model: model) else {
            throw ToolInputError("\(source) is not a store Core Data wrote (an SQLite file with Z_PRIMARYKEY and Z_METADATA tables)")
        }
        print("model: \(modelSource)")
        for note in notes { print("  note: \(note)") }
        let coordinator = try PersistentStoreCoordinator(model: model, coreDataStoreURL: url)
        let counts = try model.entities.filter { !$0.isAbstract }.map { entity in
            var request = StoreFetchRequest(entityName: entity.name)
            request.includesSubentities = false
            return (entity.name, try coordinator.store.count(request))
        }
        let total = counts.reduce(0) { $0 + $1.1 }
        FileHandle.standardError.write(Data("read \(total) objects of \(counts.count) entities; writing them to \(destination)\n".utf8))
        let copy = try coordinator.migratePersistentStore(to: try Self.store(destination, model: model))
        for (entity, count) in counts.sorted(by: { $0.0 < $1.0 }) {
            var request = StoreFetchRequest(entityName: entity)
            request.includesSubentities = false
            print("\(entity): \(count) objects, \(try copy.store.count(request)) written")
        }
        print("imported \(total) objects from \(source) into \(destination)")
    }

    /// A new store for `model` at `argument`.
    static func store(_ argument: String, model: Model) throws -> any PersistentStore {
        switch try StoreArgument(argument, toBe: "written") {
        case .file(let url):
            guard !FileManager.default.fileExists(atPath: url.path) else {
                throw ToolInputError("\(url.path) already exists: name a new file to import into")
            }
            return try SQLiteStore(url: url, model: model)
        case .coreData(let url, _, _, _):
            throw ToolInputError("\(url.path) is a Core Data store: name a new file to import into")
        #if OBJECTGRAPH_POSTGRES
        case .postgres(let configuration):
            return try PostgresStore(configuration: configuration, model: model)
        #endif
        }
    }
}
