import ArgumentParser
import Foundation
import ObjectGraph
#if canImport(ObjectGraphPostgres)
import ObjectGraphPostgres
#endif

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
        let summary = try summary()
        let versions = try SchemaVersions.migrating(from: summary, to: target)
        let plans = try MigrationPlan.namingStore(summary.path) { try versions.plans(fromVersionWithHash: summary.modelHash) }
        guard !plans.isEmpty else {
            print("\(store) is already at this model's version: nothing to migrate")
            return
        }
        for plan in plans { print(plan) }
        print("rows: " + summary.rowCounts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        guard !dryRun else { return }
        try migrate(through: versions) { progress in
            let width = 30
            let filled = Int(progress.fractionDone * Double(width))
            let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
            FileHandle.standardError.write(Data("\r[\(bar)] step \(progress.step)/\(progress.steps) \(progress.entity): \(progress.rowsDone)/\(progress.rows) rows".utf8))
        }
        FileHandle.standardError.write(Data("\n".utf8))
        print("migrated \(store)")
    }

    private func summary() throws -> StoreSummary {
        guard namesPostgresStore(store) else { return try StoreSummary(contentsOf: URL(fileURLWithPath: store)) }
        #if canImport(ObjectGraphPostgres)
        return try PostgresStore.summary(configuration: PostgresStoreConfiguration(url: store))
        #else
        throw ValidationError("this build leaves the PostgreSQL store out (OBJECTGRAPH_WITHOUT_POSTGRES); \(store) cannot be migrated")
        #endif
    }

    private func migrate(through versions: SchemaVersions, progress: @escaping MigrationProgressHandler) throws {
        guard namesPostgresStore(store) else {
            _ = try PersistentStoreCoordinator(versions: versions, storeURL: URL(fileURLWithPath: store), progress: progress)
            return
        }
        #if canImport(ObjectGraphPostgres)
        _ = try PostgresStore(configuration: PostgresStoreConfiguration(url: store), versions: versions, progress: progress)
        #endif
    }
}
