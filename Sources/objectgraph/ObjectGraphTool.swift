import ArgumentParser

/// The command-line tool: the demo (the README's main job), and store inspection.
@main
struct ObjectGraphTool: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "objectgraph",
        abstract: "Core Data's object graph on SQLite, in Swift.",
        subcommands: [Demo.self, Inspect.self, Migrate.self, Bench.self]
    )
}
