import ArgumentParser
import Foundation
import ObjectGraph

/// Describes a store (a file, or a PostgreSQL database) as its model, from the store's own metadata, without the
/// app's code.
struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show a store's model: entities, their properties and rows.")

    @Argument(help: "The store file, or a PostgreSQL store's URL (postgres://user@host:port/database).") var path: String

    func run() throws {
        // Thrown as they are: ArgumentParser prints an error that is not a validation error without the usage text.
        print(try StoreArgument(path, toBe: "inspected").summary().report)
    }
}
