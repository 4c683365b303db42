import Foundation
import ObjectGraph
import ObjectGraphPostgres
import Testing

/// Several hosts on one server: each is a process of its own (an exit test) with its own coordinator and pool.
/// Each hears the others' saves through NOTIFY and history, conflicts between them are caught by the rows'
/// versions, and a host killed in the middle of a save harms no other.
@Suite(.serialized) struct PostgresHostsTests {
    static let model = try! Model(entities: [
        EntityDescription("Entry", attributes: [.init("writer", .string), .init("serial", .int64), .init("title", .string), .init("pages", .int64)]),
    ])

    /// A coordinator on the test database `name` of the test server.
    static func open(_ name: String, watching: Bool = false) throws -> PersistentStoreCoordinator {
        var configuration = try PostgresStoreConfiguration(url: try TestServer.url)
        configuration.database = name
        return try PersistentStoreCoordinator(model: model, store: try PostgresStore(configuration: configuration, model: model), watchesRemoteChanges: watching)
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

    /// Saves `saves` times five entries of `writer`, reading the count between saves.
    static func write(_ name: String, writer: String, saves: Int) async throws {
        let context = ObjectContext(coordinator: try open(name), name: writer)
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

    @Test func anotherHostsSaveReachesAutoMergingContextsAndTheirChildren() async throws {
        let database = try await TestDatabase.make()
        let name = database.name
        let coordinator = try Self.open(name, watching: true)
        let root = ObjectContext(coordinator: coordinator, name: "root")
        let child = ObjectContext(parent: root, name: "child")
        let id = try await root.perform { ctx in
            ctx.automaticallyMergesChangesFromParent = true
            let entry = try ctx.insert("Entry")
            try entry.setValue("Before", forKey: "title")
            try ctx.save()
            return entry.objectID
        }
        try await child.perform { ctx throws in
            ctx.automaticallyMergesChangesFromParent = true
            #expect(try ctx.existingObject(with: id).value(forKey: "title") == .string("Before"))
        }
        let remote = coordinator.remoteChangeNotifications()
        let key = id.rawKey
        await #expect(processExitsWith: .success) { [name = name as String, key = key as Int64] in
            try await ObjectContext(coordinator: try PostgresHostsTests.open(name), name: "other").perform { ctx in
                ctx.transactionAuthor = "other host"
                try ctx.existingObject(with: ObjectID(entityName: "Entry", rawKey: key)).setValue("After", forKey: "title")
                try ctx.insert("Entry").setValue("New", forKey: "title")
                try ctx.save()
            }
        }
        let heard = try await Self.first(of: remote)
        #expect(heard.transactions.map(\.author) == ["other host"])
        #expect(heard.changes.updatedObjectIDs == [id] && heard.changes.insertedObjectIDs.count == 1)
        try await root.perform { ctx throws in
            #expect(try ctx.existingObject(with: id).value(forKey: "title") == .string("After"))
            #expect(try ctx.count(for: FetchRequest(entityName: "Entry")) == 2)
        }
        try await child.perform { ctx throws in
            #expect(try ctx.existingObject(with: id).value(forKey: "title") == .string("After"))
        }
        await database.drop()
    }

    @Test func conflictsBetweenHostsAreCaughtAndResolvedByTheMergePolicy() async throws {
        let database = try await TestDatabase.make()
        let name = database.name
        let coordinator = try Self.open(name)
        let context = ObjectContext(coordinator: coordinator, name: "here")
        let id = try await context.perform { ctx in
            let entry = try ctx.insert("Entry")
            try entry.setValue("Original", forKey: "title")
            try entry.setValue(1, forKey: "pages")
            try ctx.save()
            return entry.objectID
        }
        let key = id.rawKey
        // This host holds an unsaved change of the row, read at version 1, while another host saves it twice.
        try await context.perform { ctx in try ctx.existingObject(with: id).setValue(2, forKey: "pages") }
        for title in ["Theirs 1", "Theirs 2"] {
            await #expect(processExitsWith: .success) { [name = name as String, key = key as Int64, title = title as String] in
                try await ObjectContext(coordinator: try PostgresHostsTests.open(name)).perform { ctx in
                    try ctx.existingObject(with: ObjectID(entityName: "Entry", rawKey: key)).setValue(title, forKey: "title")
                    try ctx.save()
                }
            }
        }
        try await context.perform { ctx throws in
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
        await database.drop()
    }

    @Test func hostsSavingAtOnceLoseNothingAndSeeEachOthersInserts() async throws {
        let database = try await TestDatabase.make()
        let name = database.name
        let coordinator = try Self.open(name)
        await withTaskGroup(of: Void.self) { group in
            for writer in ["a", "b", "c"] {
                group.addTask {
                    await #expect(processExitsWith: .success) { [name = name as String, writer = writer as String] in
                        try await PostgresHostsTests.write(name, writer: writer, saves: 40)
                        // This host sees every save of the others that committed before it read.
                        let all = try await ObjectContext(coordinator: try PostgresHostsTests.open(name)).perform { ctx in
                            try ctx.count(for: FetchRequest(entityName: "Entry", format: "writer == %@", writer))
                        }
                        guard all == 200 else { exit(1) }
                    }
                }
            }
        }
        let counts = try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ["a", "b", "c"].map { try ctx.count(for: FetchRequest(entityName: "Entry", format: "writer == %@", $0)) }
        }
        #expect(counts == [200, 200, 200])
        let transactions = try coordinator.history(after: nil)
        #expect(transactions.count == 120)
        // Numbers appear in commit order: each writer's own transactions are in its order.
        for writer in ["a", "b", "c"] {
            let numbers = transactions.filter { $0.contextName == writer }.map(\.token.transactionNumber)
            #expect(numbers == numbers.sorted() && numbers.count == 40)
        }
        await database.drop()
    }

    @Test func aHostKilledWhileSavingHarmsNoOther() async throws {
        let database = try await TestDatabase.make()
        let name = database.name
        _ = try Self.open(name)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await #expect(processExitsWith: .signal(SIGKILL)) { [name = name as String] in
                    let delay = UInt32.random(in: 100_000...400_000)
                    Thread.detachNewThread {
                        usleep(delay)
                        kill(getpid(), SIGKILL)
                    }
                    try await PostgresHostsTests.write(name, writer: "killed", saves: 1_000_000)
                }
            }
            group.addTask {
                await #expect(processExitsWith: .success) { [name = name as String] in
                    try await PostgresHostsTests.write(name, writer: "survivor", saves: 100)
                }
            }
        }
        let coordinator = try Self.open(name)
        let (survivor, killed) = try await ObjectContext(coordinator: coordinator).perform { ctx in
            (try ctx.count(for: FetchRequest(entityName: "Entry", format: "writer == 'survivor'")),
             try ctx.count(for: FetchRequest(entityName: "Entry", format: "writer == 'killed'")))
        }
        #expect(survivor == 500)
        // Every save of the killed host is whole: its entries come in fives.
        #expect(killed % 5 == 0)
        await database.drop()
    }
}
