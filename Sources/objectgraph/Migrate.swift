import ArgumentParser
import Foundation
import ObjectGraph

/// Migrates a store to a model: prints the plan, then runs it with a progress bar.
struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Migrate a store to a model (.xcdatamodeld with its versions, or one .xcdatamodel), printing the plan first.")

    @Argument(help: "The store file, or a PostgreSQL store's URL (postgres://user@host:port/database).") var store: String
    @Option(help: "The model to migrate to: a .xcdatamodeld (its current version) or a .xcdatamodel.") var model: String
    @Flag(help: "Print the plan and stop.") var dryRun = false

    func run() throws {
        let modelURL = URL(fileURLWithPath: model)
        let target = modelURL.pathExtension == "xcdatamodeld" ? try SchemaVersions(contentsOf: modelURL) : try SchemaVersions([Model(contentsOf: modelURL)])
        let named = try StoreArgument(store, toBe: "migrated")
        let summary = try named.summary()
        let versions = try SchemaVersions.migrating(from: summary, to: target)
        let plans = try MigrationPlan.namingStore(summary.path) { try versions.plans(fromVersionWithHash: summary.modelHash) }
        guard !plans.isEmpty else {
            print("\(store) is already at this model's version: nothing to migrate")
            return
        }
        for plan in plans { print(plan) }
        print("rows: " + summary.rowCounts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        guard !dryRun else { return }
        try named.migrate(through: versions) { progress in
            let width = 30
            let filled = Int(progress.fractionDone * Double(width))
            let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
            FileHandle.standardError.write(Data("\r[\(bar)] step \(progress.step)/\(progress.steps) \(progress.entity): \(progress.rowsDone)/\(progress.rows) rows".utf8))
        }
        FileHandle.standardError.write(Data("\n".utf8))
        print("migrated \(store)")
    }
}
