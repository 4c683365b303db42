import Foundation
import GRDB
import PredicateFormat
import Testing
@testable import ObjectGraph

/// Persistent history on both stores: what saves and batch requests record, reading after a token, deleting, and
/// merging transactions into contexts and their results controllers.
@Suite struct PersistentHistoryTests {
    /// The fixture model with Book's ISBN kept in history after a deletion.
    static func model() throws -> Model {
        var entities = Fixtures.entities
        let book = entities.firstIndex { $0.name == "Book" }!
        let isbn = entities[book].attributes.firstIndex { $0.name == "isbn" }!
        entities[book].attributes[isbn].preservesValueInHistoryOnDeletion = true
        return try Model(entities: entities)
    }

    static func coordinator(_ kind: StoreKind, _ folder: TemporaryFolder, model: Model? = nil) throws -> PersistentStoreCoordinator {
        let model = try model ?? Self.model()
        switch kind {
        case .sqlite: return try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL, options: StoreOptions(recordsHistory: true))
        case .memory: return PersistentStoreCoordinator.inMemory(model: model, recordsHistory: true)
        #if OBJECTGRAPH_POSTGRES
        case .postgres: return try kind.coordinator(model, folder)
        #endif
        }
    }

    @Test(arguments: StoreKind.allCases)
    func savesRecordTheirAuthorChangesAndTombstones(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try Self.coordinator(kind, folder)
        let context = ObjectContext(coordinator: coordinator, name: "editor")
        let ids = try await context.perform { ctx in
            ctx.transactionAuthor = "app"
            let author = try ctx.insert("Author")
            try author.setValue("Ann", forKey: "name")
            let book = try ctx.insert("Book")
            try book.setValue("First", forKey: "title")
            try book.setValue("123-4567", forKey: "isbn")
            try book.setObject(author, forKey: "author")
            try ctx.save()
            return (author.objectID, book.objectID)
        }
        let start = try coordinator.lastHistoryToken()
        try await context.perform { ctx in
            try ctx.existingObject(with: ids.1).setValue("Second", forKey: "title")
            try ctx.save()
            try ctx.delete(try ctx.existingObject(with: ids.1))
            try ctx.save()
        }
        let all = try coordinator.history(after: nil)
        #expect(all.count == 3)
        #expect(all.map(\.author) == ["app", "app", "app"] && all.map(\.contextName) == ["editor", "editor", "editor"])
        #expect(Set(all[0].insertedObjectIDs) == [ids.0, ids.1])
        #expect(all[1].changes == [PersistentHistoryChange(changedObjectID: ids.1, changeType: .update, updatedProperties: ["title"])])
        #expect(all[2].changes == [PersistentHistoryChange(changedObjectID: ids.1, changeType: .delete, tombstone: ["isbn": .string("123-4567")])])
        #expect(all.map(\.token.transactionNumber) == [1, 2, 3])
        // After a token: only what came later. Tokens survive a trip through JSON.
        let decoded = try JSONDecoder().decode(PersistentHistoryToken.self, from: try JSONEncoder().encode(start))
        #expect(decoded == start)
        #expect(try coordinator.history(after: decoded).map(\.token) == Array(all.dropFirst().map(\.token)))
        #expect(try coordinator.history(after: all[2].token).isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func batchRequestsRecordTransactionsToo(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try Self.coordinator(kind, folder)
        let insert = BatchInsertRequest(entityName: "Book", keys: ["title", "isbn"]) { row in
            guard row.index < 500 else { return false }
            row[0] = .string("Book \(row.index)")
            row[1] = .string(String(format: "%03d-%04d", row.index / 100, row.index))
            return true
        }
        try coordinator.execute(insert, source: TransactionSource(author: "importer"))
        try coordinator.execute(BatchUpdateRequest(entityName: "Book", predicate: try FormatPredicate("title == 'Book 7'"), values: ["pages": .int(7)]))
        try coordinator.execute(BatchDeleteRequest(entityName: "Book", predicate: try FormatPredicate("title == 'Book 8'")))
        let history = try coordinator.history(after: nil)
        #expect(history.map(\.author) == ["importer", nil, nil])
        #expect(history[0].insertedObjectIDs.count == 500)
        #expect(history[1].changes.map(\.updatedProperties) == [["pages"]])
        #expect(history[2].changes.first?.tombstone == ["isbn": .string("000-0008")])
        if kind == .sqlite, let store = coordinator.store as? SQLiteStore {
            // The 500 inserts are one run of keys: one row of changes.
            let runs = try await store.writer.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM \"objectgraph.history_changes\" WHERE \"transaction\" = 1") }
            #expect(runs == 1)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func deletingHistoryExpiresOlderTokens(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try Self.coordinator(kind, folder)
        for index in 0..<4 {
            try coordinator.execute(BatchInsertRequest(entityName: "Tag", objects: [["label": .string("t\(index)")]]))
        }
        let tokens = try coordinator.history(after: nil).map(\.token)
        #expect(try coordinator.deleteHistory(before: tokens[2]) == 2)
        #expect(try coordinator.history(after: nil).map(\.token) == Array(tokens[2...]))
        // A reader at transaction 2 has merged it and needs 3 on: still whole.
        #expect(try coordinator.history(after: tokens[1]).map(\.token) == Array(tokens[2...]))
        // A reader at transaction 1 would miss 2.
        #expect {
            try coordinator.history(after: tokens[0])
        } throws: { error in
            guard case ObjectGraphError.historyTokenExpired(_, let token, let reason) = error else { return false }
            return token == tokens[0].description && reason.contains("refetch")
        }
        let foreign = PersistentHistoryToken(storeIdentifier: "elsewhere", transactionNumber: 1)
        #expect(throws: ObjectGraphError.self) { try coordinator.history(after: foreign) }
    }

    /// A token the store has not reached (kept across the restore of an older copy) is refused, for reading and for
    /// deleting, naming the store's last transaction: deleting before it would record history as deleted that was
    /// never written, and expire every token after.
    @Test(arguments: StoreKind.allCases)
    func aTokenAheadOfTheStoreIsRefused(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try Self.coordinator(kind, folder)
        for index in 0..<3 {
            try coordinator.execute(BatchInsertRequest(entityName: "Tag", objects: [["label": .string("t\(index)")]]))
        }
        let last = try coordinator.lastHistoryToken()
        let ahead = PersistentHistoryToken(storeIdentifier: last.storeIdentifier, transactionNumber: last.transactionNumber + 997)
        func isAhead(_ error: any Error) -> Bool {
            guard case ObjectGraphError.historyTokenAhead(_, let token, let number) = error else { return false }
            return token == ahead.description && number == last.transactionNumber
        }
        #expect { try coordinator.deleteHistory(before: ahead) } throws: { isAhead($0) }
        #expect { try coordinator.history(after: ahead) } throws: { isAhead($0) }
        // Nothing was recorded as deleted: the newest token still reads.
        #expect(try coordinator.history(after: last).isEmpty)
        #expect(try coordinator.history(after: nil).count == 3)
    }

    /// A watching coordinator whose unread history another coordinator deleted tells its listeners it missed
    /// changes, goes on from the newest transaction (later saves are heard again), and its auto-merging contexts
    /// read what they hold again from the store. Core Data's answer to an expired token is the same: refetch.
    @Test func aWatcherWhoseHistoryWasDeletedSaysSoAndRecovers() async throws {
        let folder = try TemporaryFolder()
        let model = try Self.model()
        let writer = try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL, options: StoreOptions(recordsHistory: true))
        let ids = try await ObjectContext(coordinator: writer).perform { ctx in
            let books = try (0..<2).map { index in
                let book = try ctx.insert("Book")
                try book.setValue("Book \(index)", forKey: "title")
                return book
            }
            try ctx.save()
            return books.map(\.objectID)
        }
        // A poll interval no test waits for: the test looks at the store itself (`pollNow`), so it knows when.
        let watcher = try PersistentStoreCoordinator(
            model: model, storeURL: folder.storeURL, options: StoreOptions(recordsHistory: true, remoteChangePollInterval: .seconds(3_600)))
        let monitor = try #require(watcher.monitor as? RemoteChangeMonitor)
        let heard = Protected<[RemoteChangeNotification]>([])
        let observer = watcher.addRemoteChangeObserver { notification in heard.withLock { $0.append(notification) } }
        defer { observer.remove() }
        let reader = ObjectContext(coordinator: watcher, name: "reader")
        // The reader's results controller holds both books, as a screen would.
        try await reader.perform { ctx in
            ctx.automaticallyMergesChangesFromParent = true
            var request = FetchRequest(entityName: "Book")
            request.sortKeys = [SortKey("title")]
            _ = try ctx.state.fetchedResultsController(for: request, sectionNameKeyPath: nil, keepAlive: true)
        }
        // Another process changes one book, deletes the other, saves once more, and deletes the history the watcher
        // has not read.
        let other = ObjectContext(coordinator: writer, name: "other")
        try await other.perform { ctx in
            try ctx.existingObject(with: ids[0]).setValue("Changed", forKey: "title")
            try ctx.delete(try ctx.existingObject(with: ids[1]))
            try ctx.save()
            try ctx.insert("Tag").setValue("later", forKey: "label")
            try ctx.save()
        }
        try writer.deleteHistory(before: try writer.lastHistoryToken())
        monitor.pollNow()
        #expect(heard.withLock { $0.map(\.missedChanges) } == [true])
        // The refresh is enqueued on the reader's queue by the notification, and the controller's processing after
        // it: a block enqueued now runs after both.
        await reader.perform { _ in }
        let shown = try await reader.perform { ctx in
            let controller = try #require(ctx.state.observation?.controllersForTesting.first)
            return try controller.fetchedObjects.map { [$0.objectID.description, "\(try $0.value(forKey: "title"))"] }
        }
        #expect(shown == [[ids[0].description, "\(AttributeValue.string("Changed"))"]])
        // Later saves are heard again, from the newest transaction on.
        try await other.perform { ctx in
            try ctx.existingObject(with: ids[0]).setValue("Again", forKey: "title")
            try ctx.save()
        }
        monitor.pollNow()
        #expect(heard.withLock { $0.map(\.missedChanges) } == [true, false])
        #expect(heard.withLock { $0.last?.changes.updatedObjectIDs } == [ids[0]])
    }

    /// The stores that may run without history; the PostgreSQL store always records it (other hosts hear each
    /// other's saves through it), which its own suite checks.
    @Test(arguments: [StoreKind.sqlite, .memory])
    func aStoreWithoutHistorySaysSo(_ kind: StoreKind) throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Fixtures.model(), folder)
        #expect {
            try coordinator.history(after: nil)
        } throws: { error in
            guard case ObjectGraphError.historyNotRecorded(let path) = error else { return false }
            return path == coordinator.store.location
        }
    }

    @Test func historyOutlivesAReopenAndStaysOn() async throws {
        let folder = try TemporaryFolder()
        do {
            let coordinator = try Self.coordinator(.sqlite, folder)
            try coordinator.execute(BatchInsertRequest(entityName: "Tag", objects: [["label": .string("kept")]]))
        }
        // Opened without the option, the store goes on recording: another process relies on it.
        let reopened = try PersistentStoreCoordinator(model: try Self.model(), storeURL: folder.storeURL)
        try await ObjectContext(coordinator: reopened).perform { ctx in
            try ctx.insert("Tag").setValue("later", forKey: "label")
            try ctx.save()
        }
        let history = try reopened.history(after: nil)
        #expect(history.map(\.token.transactionNumber) == [1, 2])
        #expect(history.map { $0.insertedObjectIDs.count } == [1, 1])
    }

    /// A coordinator already open without history records from the moment another turns it on for the file: its
    /// saves and batch requests are heard by watchers, and it reads the history itself.
    @Test func historyTurnedOnByAnotherCoordinatorRecordsEveryLaterWrite() async throws {
        let folder = try TemporaryFolder()
        let plain = try PersistentStoreCoordinator(model: try Self.model(), storeURL: folder.storeURL)
        try plain.execute(BatchInsertRequest(entityName: "Tag", objects: [["label": .string("before")]]))
        let recording = try Self.coordinator(.sqlite, folder)
        try await ObjectContext(coordinator: plain).perform { ctx in
            try ctx.insert("Tag").setValue("saved", forKey: "label")
            try ctx.save()
        }
        try plain.execute(BatchUpdateRequest(entityName: "Tag", predicate: try FormatPredicate("label == 'saved'"), values: ["label": .string("batch")]))
        let history = try recording.history(after: nil)
        #expect(history.map { $0.insertedObjectIDs.count } == [1, 0])
        #expect(history.last?.changes.map(\.updatedProperties) == [["label"]])
        #expect(try plain.history(after: nil).map(\.token) == history.map(\.token))
    }

    /// A context and its results controller catch up with transactions another coordinator wrote to the same file.
    @Test func mergingTransactionsUpdatesObjectsAndResults() async throws {
        let folder = try TemporaryFolder()
        let mine = try Self.coordinator(.sqlite, folder)
        let theirs = try Self.coordinator(.sqlite, folder)
        let context = ObjectContext(coordinator: mine, name: "mine")
        let ids = try await context.perform { ctx in
            let books = try (0..<3).map { index in
                let book = try ctx.insert("Book")
                try book.setValue("Book \(index)", forKey: "title")
                return book
            }
            try ctx.save()
            return books.map(\.objectID)
        }
        let start = try mine.lastHistoryToken()
        let results = try await context.perform { ctx in
            try ctx.results(of: FetchRequest(entityName: "Book", sortKeys: [SortKey("title")]))
        }
        var changes = results.makeAsyncIterator()
        #expect(await changes.next()?.snapshot.objectIDs == ids)
        // Another writer changes one, deletes one, inserts one.
        try await ObjectContext(coordinator: theirs, name: "theirs").perform { ctx in
            try ctx.existingObject(with: ids[0]).setValue("Book 0 renamed", forKey: "title")
            try ctx.delete(try ctx.existingObject(with: ids[1]))
            try ctx.insert("Book").setValue("Book 3", forKey: "title")
            try ctx.save()
        }
        let transactions = try mine.history(after: start)
        #expect(transactions.count == 1 && transactions[0].contextName == "theirs")
        try await context.perform { ctx in
            let held = try ctx.existingObject(with: ids[0])
            try ctx.merge(transactions)
            #expect(try held.value(forKey: "title") == .string("Book 0 renamed"))
        }
        let diff = try #require(await changes.next())
        let inserted = try #require(transactions[0].insertedObjectIDs.first)
        #expect(diff.snapshot.objectIDs == [ids[0], ids[2], inserted])
        #expect(diff.objectChanges.contains { $0.kind == .delete && $0.objectID == ids[1] })
    }
}
