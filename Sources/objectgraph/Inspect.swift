import ArgumentParser
import Foundation
import ObjectGraph

/// Describes a store (a file, or a PostgreSQL database) as its model, from the store's own metadata, without the
/// app's code.
struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show a store's model: entities, their properties and rows.")

    @Argument(help: "The store file, or a PostgreSQL store's URL (postgres://user@host:port/database).") var path: String
    @Option(help: "For a store Core Data wrote: its model (.xcdatamodeld or .xcdatamodel); without it, one is rebuilt from the store.")
    var model: String?

    func run() throws {
        // Thrown as they are: ArgumentParser prints an error that is not a validation error without the usage text.
        let store = try StoreArgument(path, toBe: "inspected", model: model)
        print(try store.summary().report)
        if case .coreData(_, _, _, let notes) = store, !notes.isEmpty {
            print("rebuilt from the store alone:\n" + notes.map { "  \($0)" }.joined(separator: "\n"))
        }
    }
}
