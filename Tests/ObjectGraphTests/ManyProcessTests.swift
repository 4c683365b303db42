import Foundation
import GRDB
import Testing
@testable import ObjectGraph

/// Several processes on one store file: each hears the others' saves through history, conflicts between them are
/// caught by the rows' versions, ordinary contention never surfaces as SQLite's "busy", and a process killed in the
/// middle of a save harms no other. Each other process is an exit test: a child running the closure.
@Suite(.serialized) struct ManyProcessTests {
    static let model = try! Model(entities: [
        EntityDescription("Entry", attributes: [.init("writer", .string), .init("serial", .int64), .init("title", .string), .init("pages", .int64)]),
    ])

    static func open(_ path: String, poll: Duration? = nil) throws -> PersistentStoreCoordinator {
        try PersistentStoreCoordinator(
            model: model, storeURL: URL(filePath: path), options: StoreOptions(recordsHistory: true, remoteChangePollInterval: poll))
    }

    /// The first element of `stream`, or a failure after `seconds` (a guard against hanging, not a timing check).
    static func first<T: Sendable>(of stream: AsyncStream<T>, within seconds: Double = 60) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { await stream.first { _ in true } }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return nil
            }
            defer { group.cancelAll() }
            guard let value = try await group.next() ?? nil else { throw CancellationError() }
            return value
        }
    }

    /// Saves `count` entries of `writer`, one save per entry, reading the store's count between saves.
    static func write(_ path: String, writer: String, saves: Int) async throws {
        let coordinator = try open(path)
        let context = ObjectContext(coordinator: coordinator, name: writer)
        for serial in 0..<saves {
            try await context.perform { ctx in
                for row in 0..<5 {
                    let entry = try ctx.insert("Entry")
                    try entry.setValue(writer, forKey: "writer")
                    try entry.setValue(Int64(serial * 5 + row), forKey: "serial")
                }
                try ctx.save()
                _ = try ctx.count(for: FetchRequest(entityName: "Entry"))
            }
        }
    }

    @Test func anotherProcessesSaveReachesAutoMergingContextsAndTheirChildren() async throws {
        let folder = try TemporaryFolder()
        let path = folder.storeURL.path
        let coordinator = try Self.open(path, poll: .milliseconds(20))
        let root = ObjectContext(coordinator: coordinator, name: "root")
        let child = ObjectContext(parent: root, name: "child")
        let id = try await root.perform { ctx in
            ctx.automaticallyMergesChangesFromParent = true
            let entry = try ctx.insert("Entry")
            try entry.setValue("Before", forKey: "title")
            try ctx.save()
            return entry.objectID
        }
        try await child.perform { ctx in
            ctx.automaticallyMergesChangesFromParent = true
            let title = try ctx.existingObject(with: id).value(forKey: "title")
            #expect(title == .string("Before"))
        }
        let remote = coordinator.remoteChangeNotifications()
        let key = id.rawKey
        await #expect(processExitsWith: .success) { [path = path as String, key = key as Int64] in
            let other = try ManyProcessTests.open(path)
            try await ObjectContext(coordinator: other, name: "other").perform { ctx in
                ctx.transactionAuthor = "other process"
                try ctx.existingObject(with: ObjectID(entityName: "Entry", rawKey: key)).setValue("After", forKey: "title")
                try ctx.insert("Entry").setValue("New", forKey: "title")
                try ctx.save()
            }
        }
        let heard = try await Self.first(of: remote)
        #expect(heard.transactions.map(\.author) == ["other process"])
        #expect(heard.changes.updatedObjectIDs == [id] && heard.changes.insertedObjectIDs.count == 1)
        try await root.perform { ctx in
            let title = try ctx.existingObject(with: id).value(forKey: "title")
            #expect(title == .string("After"))
        }
        try await child.perform { ctx in
            let title = try ctx.existingObject(with: id).value(forKey: "title")
            #expect(title == .string("After"))
        }
    }

    @Test func conflictsBetweenProcessesAreCaughtAndResolvedByTheMergePolicy() async throws {
        let folder = try TemporaryFolder()
        let path = folder.storeURL.path
        let coordinator = try Self.open(path)
        let context = ObjectContext(coordinator: coordinator, name: "here")
        let id = try await context.perform { ctx in
            let entry = try ctx.insert("Entry")
            try entry.setValue("Original", forKey: "title")
            try entry.setValue(1, forKey: "pages")
            try ctx.save()
            return entry.objectID
        }
        let key = id.rawKey
        // This context holds an unsaved change of the row, read at version 1, while another process saves it twice.
        try await context.perform { ctx in try ctx.existingObject(with: id).setValue(2, forKey: "pages") }
        for title in ["Theirs 1", "Theirs 2"] {
            await #expect(processExitsWith: .success) { [path = path as String, key = key as Int64, title = title as String] in
                let other = try ManyProcessTests.open(path)
                try await ObjectContext(coordinator: other).perform { ctx in
                    try ctx.existingObject(with: ObjectID(entityName: "Entry", rawKey: key)).setValue(title, forKey: "title")
                    try ctx.save()
                }
            }
        }
        try await context.perform { ctx in
            #expect {
                try ctx.save()
            } throws: { error in
                guard case ObjectGraphError.conflict(let conflicts) = error, let conflict = conflicts.first else { return false }
                return conflict.expectedVersion == 1 && conflict.storedVersion == 3 && conflict.storedValues["title"] == .string("Theirs 2")
            }
            ctx.mergePolicy = .mergeByPropertyObjectTrump
            try ctx.save()
        }
        let stored = try #require(try coordinator.store.snapshots(for: [id]).first)
        #expect(Array(stored.values) == [.null, .null, .string("Theirs 2"), .int(2)])
    }

    @Test func processesSavingAtOnceNeverSeeBusyAndLoseNothing() async throws {
        let folder = try TemporaryFolder()
        let path = folder.storeURL.path
        _ = try Self.open(path)
        let writers = ["a", "b", "c"]
        await withTaskGroup(of: Void.self) { group in
            for writer in writers {
                group.addTask {
                    await #expect(processExitsWith: .success) { [path = path as String, writer = writer as String] in
                        try await ManyProcessTests.write(path, writer: writer, saves: 40)
                    }
                }
            }
        }
        let coordinator = try Self.open(path)
        let store = try #require(coordinator.store as? SQLiteStore)
        let counts = try await store.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT writer, count(DISTINCT serial) FROM Entry GROUP BY writer ORDER BY writer").map { "\($0[0] as String):\($0[1] as Int)" }
        }
        #expect(counts == ["a:200", "b:200", "c:200"])
        #expect(try coordinator.history(after: nil).count == 120)
    }

    @Test func aProcessKilledWhileSavingHarmsNoOther() async throws {
        let folder = try TemporaryFolder()
        let path = folder.storeURL.path
        _ = try Self.open(path)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String] in
                    let delay = UInt32.random(in: 50_000...300_000)
                    Thread.detachNewThread {
                        usleep(delay)
                        kill(getpid(), SIGKILL)
                    }
                    try await ManyProcessTests.write(path, writer: "killed", saves: 1_000_000)
                }
            }
            group.addTask {
                await #expect(processExitsWith: .success) { [path = path as String] in
                    try await ManyProcessTests.write(path, writer: "survivor", saves: 100)
                }
            }
        }
        let coordinator = try Self.open(path)
        let store = try #require(coordinator.store as? SQLiteStore)
        #expect(try await store.writer.read { try String.fetchAll($0, sql: "PRAGMA integrity_check") } == ["ok"])
        let survivor = try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ctx.count(for: FetchRequest(entityName: "Entry", format: "writer == 'survivor'"))
        }
        #expect(survivor == 500)
        // Every save of the killed process is whole: its entries come in fives.
        let killed = try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ctx.count(for: FetchRequest(entityName: "Entry", format: "writer == 'killed'"))
        }
        #expect(killed % 5 == 0)
    }
}
