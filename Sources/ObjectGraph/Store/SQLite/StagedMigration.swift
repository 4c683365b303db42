import Foundation
import GRDB

/// A migration with custom stages (see ``MigrationStage``), run on a copy of the store that replaces it only once
/// every step has succeeded: stages save through ordinary contexts, in transactions of their own, so the store
/// itself must not see any of it until the end. Killed at any moment, the store is the old one (a stray copy is
/// removed by the next attempt), or the new one: `rename` replaces the file in one step.
///
/// The store must not be open elsewhere meanwhile: its log is folded into the file first, and a connection holding
/// it open refuses that.
enum StagedMigration {
    static func run(path: String, from stored: Int, versions: SchemaVersions, busyTimeout: TimeInterval, progress: MigrationProgressHandler?) throws {
        let copy = path + ".migrating"
        for leftover in [copy, copy + "-wal", copy + "-shm"] { try? FileManager.default.removeItem(atPath: leftover) }
        try foldLog(path, busyTimeout: busyTimeout)
        let source = try DatabaseQueue(path: path)
        try source.inDatabase { db in try db.execute(sql: "VACUUM INTO ?", arguments: [copy]) }
        try source.close()
        let copyURL = URL(fileURLWithPath: copy)
        do {
            for step in stored..<versions.currentIndex {
                let stage = versions.stages.first { $0.from == step }
                if let willMigrate = stage?.willMigrate { try run(willMigrate, on: copyURL, model: versions.models[step], busyTimeout: busyTimeout) }
                let stepVersions = try SchemaVersions([versions.models[step], versions.models[step + 1]])
                let reporting = renumbering(progress, step: step - stored + 1, of: versions.currentIndex - stored)
                waitForRelease(copy, busyTimeout: busyTimeout)
                _ = try MigrationPlan.namingStore(path) {
                    try SQLiteStore(url: copyURL, versions: stepVersions, busyTimeout: busyTimeout, progress: reporting)
                }
                if let didMigrate = stage?.didMigrate { try run(didMigrate, on: copyURL, model: versions.models[step + 1], busyTimeout: busyTimeout) }
            }
            try foldLog(copy, busyTimeout: busyTimeout)
            // The store's own log must still be empty: nothing wrote to it since it was copied.
            try foldLog(path, busyTimeout: busyTimeout)
            guard rename(copy, path) == 0 else {
                throw ObjectGraphError.storeUnavailable(path: path, reason: "the migrated copy could not replace it (\(String(cString: strerror(errno))))")
            }
        } catch {
            for leftover in [copy, copy + "-wal", copy + "-shm"] { try? FileManager.default.removeItem(atPath: leftover) }
            throw error
        }
        for leftover in [path + "-shm", copy + "-wal", copy + "-shm"] { try? FileManager.default.removeItem(atPath: leftover) }
    }

    /// `handler`, hearing each report as step `step` of `steps` of the whole migration.
    private static func renumbering(_ handler: MigrationProgressHandler?, step: Int, of steps: Int) -> MigrationProgressHandler? {
        guard let handler else { return nil }
        return { report in
            var report = report
            report.step = step
            report.steps = steps
            handler(report)
        }
    }

    /// Runs a stage on a context of `model` over the copy, and saves what it changed.
    private static func run(
        _ body: @escaping @Sendable (isolated ObjectContext) throws -> Void, on url: URL, model: Model, busyTimeout: TimeInterval
    ) throws {
        waitForRelease(url.path, busyTimeout: busyTimeout)
        let coordinator = PersistentStoreCoordinator(model: model, store: try SQLiteStore(url: url, model: model, busyTimeout: busyTimeout))
        try ObjectContext(coordinator: coordinator, name: "migration stage").performAndWait { ctx in
            try body(ctx)
            try ctx.save()
        }
    }

    /// Waits (up to the busy timeout) until no store of this process holds the copy: the previous step's context
    /// lets go of its store on its own queue, just after the step returns, and the next step's migration needs the
    /// file to itself.
    private static func waitForRelease(_ path: String, busyTimeout: TimeInterval) {
        let file = StoreFileRegistry.canonicalPath(path)
        let deadline = Date(timeIntervalSinceNow: busyTimeout)
        while StoreFileRegistry.isHeld(file), Date() < deadline { usleep(1_000) }
    }

    /// Copies the write-ahead log into the file and empties it; refuses when another connection keeps it from
    /// emptying.
    private static func foldLog(_ path: String, busyTimeout: TimeInterval) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
        try queue.close()
        let log = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        guard log == 0 else {
            throw ObjectGraphError.storeUnavailable(
                path: path, reason: "another connection has it open, so its log cannot be folded in before a migration with stages; close it and open again")
        }
    }
}
