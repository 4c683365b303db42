import Foundation
import GRDB
import Testing
@testable import ObjectGraph

/// A process migrating a store is killed with SIGKILL at a random moment; the store it leaves passes SQLite's
/// integrity check and is wholly the old version with the old data or wholly the new one with the data migrated.
/// Both ways of migrating are killed: in place in one transaction, and on a copy for a migration with stages.
@Suite(.serialized) struct MigrationCrashTests {
    enum Mode: String, CaseIterable, Sendable, Codable {
        case inPlace, staged
    }

    static let rows = 40_000
    /// Kills of each mode: `OBJECTGRAPH_CRASH_KILLS` when set, else 10 (20 kills in all).
    static var kills: Int { ProcessInfo.processInfo.environment["OBJECTGRAPH_CRASH_KILLS"].flatMap(Int.init) ?? 10 }

    static let v1 = try! Model(entities: [
        EntityDescription("Shelf", attributes: [.init("name", .string)],
                          relationships: [.init("items", destination: "Item", inverse: "shelf", isToMany: true)]),
        EntityDescription("Item", attributes: [.init("n", .int32), .init("label", .string)],
                          relationships: [.init("shelf", destination: "Shelf", inverse: "items")]),
    ])
    /// Widens n, turns label into `title`, adds a required price with a default, and lets an item be on several shelves.
    static let v2: Model = {
        var title = AttributeDescription("title", .string)
        title.renamingIdentifier = "label"
        var shelves = RelationshipDescription("shelves", destination: "Shelf", inverse: "items", isToMany: true)
        shelves.renamingIdentifier = "shelf"
        return try! Model(entities: [
            EntityDescription("Shelf", attributes: [.init("name", .string)],
                              relationships: [.init("items", destination: "Item", inverse: "shelves", isToMany: true)]),
            EntityDescription("Item", attributes: [.init("n", .int64), title, .init("price", .double, isOptional: false, defaultValue: .double(1.5))],
                              relationships: [shelves]),
        ])
    }()

    static func versions(_ mode: Mode) throws -> SchemaVersions {
        let stage = MigrationStage(from: 0, didMigrate: { ctx in
            for shelf in try ctx.fetch(FetchRequest(entityName: "Shelf")) { try shelf.setValue("migrated", forKey: "name") }
        })
        return try SchemaVersions([v1, v2], stages: mode == .staged ? [stage] : [])
    }

    /// The child: opens the store with both versions, migrating it, and is killed on the way (or after).
    static func migrateUntilKilled(folder: URL, mode: Mode) throws -> Never {
        let delay = UInt32.random(in: 0...250_000)
        Thread.detachNewThread {
            usleep(delay)
            kill(getpid(), SIGKILL)
        }
        _ = try PersistentStoreCoordinator(versions: try versions(mode), storeURL: folder.appendingPathComponent("store.sqlite"))
        while true { sleep(1) }
    }

    /// A store of version 1: 20 shelves, `rows` items spread over them.
    static func makeTemplate(_ url: URL) async throws {
        try await ObjectContext(coordinator: try PersistentStoreCoordinator(model: v1, storeURL: url)).perform { ctx in
            let shelves = try (0..<20).map { index in
                let shelf = try ctx.insert("Shelf")
                try shelf.setValue("shelf \(index)", forKey: "name")
                return shelf
            }
            for index in 0..<rows {
                let item = try ctx.insert("Item")
                try item.setValue(index, forKey: "n")
                try item.setValue("item \(index)", forKey: "label")
                try item.setObject(shelves[index % 20], forKey: "shelf")
            }
            try ctx.save()
        }
    }

    @Test(arguments: Mode.allCases)
    func aKilledMigrationLeavesTheOldStoreOrTheNewOneWhole(_ mode: Mode) async throws {
        let template = try TemporaryFolder()
        try await Self.makeTemplate(template.storeURL)
        var outcomes: [String: Int] = [:]
        for _ in 0..<Self.kills {
            let folder = try TemporaryFolder()
            try FileManager.default.copyItem(at: template.storeURL, to: folder.storeURL)
            // Through the capture list, not the environment (see CrashTests).
            let path = folder.url.path
            await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String, mode = mode as Mode] in
                try MigrationCrashTests.migrateUntilKilled(folder: URL(filePath: path), mode: mode)
            }
            outcomes[try await Self.check(folder, mode: mode), default: 0] += 1
        }
        #expect(outcomes.values.reduce(0, +) == Self.kills, "\(outcomes)")
    }

    /// The store is wholly version 1 with its data, or wholly version 2 with the data migrated; returns which.
    static func check(_ folder: TemporaryFolder, mode: Mode) async throws -> String {
        let queue = try DatabaseQueue(path: folder.storeURL.path)
        let (integrity, hash) = try await queue.read { db in
            (try String.fetchAll(db, sql: "PRAGMA integrity_check"),
             try String.fetchOne(db, sql: #"SELECT value FROM "objectgraph.metadata" WHERE key = 'model_hash'"#))
        }
        try queue.close()
        #expect(integrity == ["ok"])
        let isNew = hash == v2.versionHash
        #expect(isNew || hash == v1.versionHash, "an unknown model hash \(hash ?? "none")")
        let coordinator = try PersistentStoreCoordinator(model: isNew ? v2 : v1, storeURL: folder.storeURL)
        let (count, spread, names) = try await ObjectContext(coordinator: coordinator).perform { ctx in
            let count = try ctx.count(for: FetchRequest(entityName: "Item"))
            let onShelfSeven = isNew ? 0 : try ctx.count(for: FetchRequest(entityName: "Item", format: "shelf.name == 'shelf 7'"))
            let names = Set(try ctx.fetch(FetchRequest(entityName: "Shelf")).map { "\(try $0.value(forKey: "name"))" })
            return (count, onShelfSeven, names)
        }
        #expect(count == rows)
        if isNew {
            let migrated = try await ObjectContext(coordinator: coordinator).perform { ctx in
                (try ctx.count(for: FetchRequest(entityName: "Item", format: "price == 1.5 AND title BEGINSWITH 'item '")),
                 try ctx.count(for: FetchRequest(entityName: "Item", format: "shelves.@count == 1")))
            }
            #expect(migrated == (rows, rows))
            #expect(names.count == (mode == .staged ? 1 : 20), "\(names)")
        } else {
            #expect(spread == rows / 20 && names.count == 20)
        }
        return isNew ? "new" : "old"
    }
}
