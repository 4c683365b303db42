import Foundation
import Testing
@testable import ObjectGraph

/// History read by date and by request, as Core Data's `fetchHistory(after: Date)`, `deleteHistory(before: Date)`
/// and a history change request whose fetch request filters transactions (author, context) and changes (entity,
/// kind, changed keys). On every store, what the store selects is what filtering the whole history selects.
@Suite struct HistoryRequestTests {
    /// Five transactions by two authors in two contexts: inserts, updates of different keys, a deletion.
    static func record(_ coordinator: PersistentStoreCoordinator) async throws -> (ids: [String: ObjectID], middle: Date) {
        let app = ObjectContext(coordinator: coordinator, name: "editor")
        let sync = ObjectContext(coordinator: coordinator, name: "sync")
        let ids = try await app.perform { ctx in
            ctx.transactionAuthor = "app"
            let author = try ctx.insert("Author")
            try author.setValue("Ann", forKey: "name")
            let book = try ctx.insert("Book")
            try book.setValue("First", forKey: "title")
            try book.setObject(author, forKey: "author")
            try ctx.save()
            return ["author": author.objectID, "book": book.objectID]
        }
        try await sync.perform { ctx in
            ctx.transactionAuthor = "sync"
            try ctx.existingObject(with: ids["book"]!).setValue(Int64(300), forKey: "pages")
            try ctx.save()
        }
        // A moment between the second and the third transaction.
        let middle = Date()
        while Date() <= middle {}
        try await app.perform { ctx in
            try ctx.existingObject(with: ids["book"]!).setValue("Second", forKey: "title")
            try ctx.existingObject(with: ids["author"]!).setValue("Anne", forKey: "name")
            try ctx.save()
        }
        try await sync.perform { ctx in
            let tag = try ctx.insert("Tag")
            try tag.setValue("new", forKey: "label")
            try ctx.save()
        }
        try await app.perform { ctx in
            try ctx.delete(try ctx.existingObject(with: ids["book"]!))
            try ctx.save()
        }
        return (ids, middle)
    }

    @Test(arguments: StoreKind.allCases)
    func requestsSelectTransactionsAndChangesInTheStore(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try PersistentHistoryTests.coordinator(kind, folder)
        let (ids, middle) = try await Self.record(coordinator)
        let all = try coordinator.history(after: nil)
        #expect(all.count == 5)
        var requests: [(String, HistoryRequest, [Int64])] = []
        var byAuthor = HistoryRequest()
        byAuthor.authors = ["sync"]
        requests.append(("authors", byAuthor, [2, 4]))
        var others = HistoryRequest()
        others.excludedAuthors = ["app"]
        requests.append(("excluded authors", others, [2, 4]))
        var byContext = HistoryRequest()
        byContext.contextNames = ["editor"]
        requests.append(("contexts", byContext, [1, 3, 5]))
        var books = HistoryRequest()
        books.entityNames = ["Book"]
        requests.append(("entities", books, [1, 2, 3, 5]))
        var deletions = HistoryRequest()
        deletions.changeTypes = [.delete]
        requests.append(("kinds", deletions, [5]))
        var titles = HistoryRequest()
        titles.entityNames = ["Book"]
        titles.changedKeys = ["title"]
        requests.append(("changed keys", titles, [1, 3, 5]))
        var later = HistoryRequest(after: all[1].token)
        later.authors = ["app"]
        later.fetchLimit = 1
        requests.append(("token, author and limit", later, [3]))
        var recent = HistoryRequest(after: middle)
        recent.excludedAuthors = ["sync"]
        requests.append(("date", recent, [3, 5]))
        for (name, request, numbers) in requests {
            let selected = try coordinator.history(request)
            #expect(selected.map(\.token.transactionNumber) == numbers, "\(name)")
            // The store's selection is the whole history's, filtered.
            let filtered = request.filter(all)
            #expect(selected.map(\.token) == filtered.map(\.token) && selected.map(\.changes) == filtered.map(\.changes), "\(name)")
        }
        // Changes are filtered within a transaction: the third transaction's Book change only, not Author's.
        let third = try #require(try coordinator.history(titles).first { $0.token.transactionNumber == 3 })
        #expect(third.changes.map(\.changedObjectID) == [ids["book"]!])
    }

    @Test(arguments: StoreKind.allCases)
    func historyByDateReadsAndDeletesWhatWasRecordedAroundAMoment(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try PersistentHistoryTests.coordinator(kind, folder)
        let (_, middle) = try await Self.record(coordinator)
        let first = try #require(try coordinator.history(after: nil).first?.token)
        #expect(try coordinator.history(after: middle).map(\.token.transactionNumber) == [3, 4, 5])
        #expect(try coordinator.deleteHistory(before: middle) == 2)
        #expect(try coordinator.history(after: nil).map(\.token.transactionNumber) == [3, 4, 5])
        // A token from before the deletion has lost changes; a date never expires.
        #expect { try coordinator.history(after: first) } throws: { error in
            if case ObjectGraphError.historyTokenExpired = error { return true }
            return false
        }
        #expect(try coordinator.history(after: Date.distantPast).count == 3)
        #expect(try coordinator.deleteHistory(before: Date.distantPast) == 0)
        #expect(try coordinator.deleteHistory(before: Date.distantFuture) == 3)
        #expect(try coordinator.history(after: nil).isEmpty)
    }
}
