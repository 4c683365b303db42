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
