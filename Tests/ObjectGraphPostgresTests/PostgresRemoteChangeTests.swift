import Foundation
import Testing
@testable import ObjectGraph
@testable import ObjectGraphPostgres

/// A host listening for other hosts' saves, when the history it had not read yet is deleted: it says so, and goes on.
@Suite struct PostgresRemoteChangeTests {
    static let model = try! Model(entities: [EntityDescription("Entry", attributes: [.init("title", .string), .init("pages", .int64)])])

    /// The listener's notification says changes were missed (`missedChanges`), and later saves are heard again,
    /// from the newest transaction on: as the SQLite store's watcher (`PersistentHistoryTests`). The test waits for
    /// the notifications themselves; the time limit only ends a run in which one never comes.
    @Test(.timeLimit(.minutes(1))) func aListenerWhoseHistoryWasDeletedSaysSoAndGoesOn() async throws {
        let database = try await TestDatabase.make()
        // The coordinators go (and the listener stops) before the database is dropped under them.
        try await Self.check(database)
        await database.drop()
    }

    static func check(_ database: TestDatabase) async throws {
        let writer = PersistentStoreCoordinator(model: Self.model, store: try PostgresStore(configuration: database.configuration, model: Self.model))
        try writer.execute(BatchInsertRequest(entityName: "Entry", objects: [["title": .string("first"), "pages": .int(1)]]))
        let watcher = try PersistentStoreCoordinator(
            model: Self.model, store: try PostgresStore(configuration: database.configuration, model: Self.model), watchesRemoteChanges: true)
        let listener = try #require(watcher.monitor as? PostgresRemoteChangeListener)
        var notifications = watcher.remoteChangeNotifications().makeAsyncIterator()
        // Two writes and the deletion of their history, all before the listener reads any of it.
        try listener.holding {
            try writer.execute(BatchUpdateRequest(entityName: "Entry", values: ["pages": .int(2)]))
            try writer.execute(BatchInsertRequest(entityName: "Entry", objects: [["title": .string("second"), "pages": .int(1)]]))
            try writer.deleteHistory(before: try writer.lastHistoryToken())
        }
        let gap = try #require(await notifications.next())
        #expect(gap.missedChanges && gap.transactions.isEmpty)
        var update = BatchUpdateRequest(entityName: "Entry", values: ["pages": .int(3)])
        update.resultType = .objectIDs
        let updated = try #require(try writer.execute(update).changes?.updatedObjectIDs)
        let next = try #require(await notifications.next())
        #expect(!next.missedChanges)
        #expect(Set(next.changes.updatedObjectIDs) == Set(updated))
    }
}
