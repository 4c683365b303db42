import ArgumentParser

/// The command-line tool: the demo (the README's main job), store inspection and queries, migration, import of Core
/// Data stores, benchmarks.
@main
struct ObjectGraphTool: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "objectgraph",
        abstract: "Core Data's object graph on SQLite, in Swift.",
        subcommands: [Demo.self, Inspect.self, Query.self, Migrate.self, Import.self, Bench.self]
    )
}
