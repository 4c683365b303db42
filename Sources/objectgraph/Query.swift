import ArgumentParser
import Foundation
import ObjectGraph

/// Runs a predicate against a store with the model the store keeps, without the app's code.
struct Query: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fetch objects from a store with a predicate; relationships print as object IDs.",
        discussion: "Example: objectgraph query books.sqlite Book \"pages > 300 AND author.name BEGINSWITH 'A'\" --sort -pages,title --limit 10")

    @Argument(help: "The store file, or a PostgreSQL store's URL (postgres://user@host:port/database).") var path: String
    @Option(help: "For a store Core Data wrote: its model (.xcdatamodeld or .xcdatamodel); without it, one is rebuilt from the store.")
    var model: String?
    @Argument(help: "The entity to fetch.") var entity: String
    @Argument(help: "A predicate in the format language (every object when absent).") var predicate: String?
    @Option(parsing: .unconditional, help: "Sort keys, comma-separated; a leading - sorts descending (--sort -pages,title).")
    var sort: String?
    // Unconditional: `--limit -1` reads -1 as the value (and refuses it), not as an unknown option.
    @Option(parsing: .unconditional, help: "At most this many objects.") var limit: Int?
    @Option(parsing: .unconditional, help: "Skip this many objects first.") var offset = 0
    @Flag(help: "Print only how many objects match.") var count = false
    @Flag(help: "Print JSON lines, one object per line.") var json = false

    func validate() throws {
        if let limit, limit < 0 { throw ToolInputError("--limit must be zero or more, not \(limit)") }
        if offset < 0 { throw ToolInputError("--offset must be zero or more, not \(offset)") }
    }

    func run() throws {
        let keys = sort.map { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } } ?? []
        let result = try StoreArgument(path, toBe: "queried", model: model)
            .query(entity: entity, predicate: predicate, sortedBy: keys, limit: count ? 0 : limit, offset: offset)
        if count {
            print(result.matchCount)
        } else {
            print(json ? result.jsonLines : result.table)
        }
    }
}
