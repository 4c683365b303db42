import Foundation
import Testing
@testable import ObjectGraph

/// A context's updated objects: an object leaves them when a refresh or a merge takes its changes away, comes back
/// when it changes again, and a save writes each one exactly once (a row written twice would fail its own version
/// check on the second write).
@Suite struct UpdatedObjectsTests {
    /// Three saved books, fetched back in name order in a fresh context.
    private func threeBooks(_ kind: StoreKind, _ folder: TemporaryFolder) async throws -> ObjectContext {
        let context = ObjectContext(coordinator: try kind.coordinator(try Model([Book.self]), folder), name: "updated")
        try await context.perform { ctx in
            for name in ["A", "B", "C"] { try ctx.insert(Book.self).name = name }
            try ctx.save()
            ctx.reset()
        }
        return context
    }

    private func names(_ ctx: isolated ObjectContext) throws -> [String] {
        ctx.reset()
        return try ctx.fetch(Book.fetchRequest(), as: Book.self).map(\.name).sorted()
    }

    @Test(arguments: StoreKind.allCases)
    func anObjectRefreshedAndChangedAgainIsSavedOnce(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let context = try await threeBooks(kind, folder)
        try await context.perform { ctx in
            let books = try ctx.fetch(Book.fetchRequest(), as: Book.self).sorted { $0.name < $1.name }
            for book in books { book.name += "1" }
            #expect(ctx.updatedObjects == Set(books))
            // Refreshed without its changes, B is no longer updated; changed again, it is, once.
            for round in 2...3 {
                try ctx.refresh(books[1], mergeChanges: false)
                #expect(ctx.updatedObjects == [books[0], books[2]])
                #expect(books[1].name == "B")
                books[1].name = "B\(round)"
                #expect(ctx.updatedObjects == Set(books))
            }
            try ctx.save()
            #expect(ctx.updatedObjects.isEmpty && !ctx.hasChanges)
            #expect(try names(ctx) == ["A1", "B3", "C1"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aRollbackAndAResetLeaveNothingUpdatedAndLaterChangesSave(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let context = try await threeBooks(kind, folder)
        try await context.perform { ctx in
            var books = try ctx.fetch(Book.fetchRequest(), as: Book.self)
            for book in books { book.name += "x" }
            ctx.rollback()
            #expect(ctx.updatedObjects.isEmpty && !ctx.hasChanges)
            #expect(books.map(\.name).sorted() == ["A", "B", "C"])
            // The same objects change again after the rollback.
            for book in books { book.name += "2" }
            #expect(ctx.updatedObjects.count == 3)
            ctx.reset()
            #expect(ctx.updatedObjects.isEmpty && !ctx.hasChanges)
            books = try ctx.fetch(Book.fetchRequest(), as: Book.self)
            for book in books { book.name += "3" }
            try ctx.save()
            #expect(try names(ctx) == ["A3", "B3", "C3"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anUpdatedObjectAnotherSaveDeletedLeavesTheUpdatedObjects(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let context = try await threeBooks(kind, folder)
        let other = ObjectContext(coordinator: context.coordinator, name: "other")
        var saves = other.notifications(.didSave).makeAsyncIterator()
        let doomed = try await other.perform { ctx in
            let book = try #require(try ctx.fetch(Book.fetchRequest(), as: Book.self).first { $0.name == "B" })
            return book.objectID
        }
        try await context.perform { ctx in
            for book in try ctx.fetch(Book.fetchRequest(), as: Book.self) { book.name += "1" }
            #expect(ctx.updatedObjects.count == 3)
        }
        try await other.perform { ctx in
            try ctx.delete(try ctx.existingObject(with: doomed))
            try ctx.save()
        }
        let notification = try #require(await saves.next())
        try await context.perform { ctx in
            ctx.mergeChanges(fromContextDidSave: notification)
            #expect(ctx.updatedObjects.map(\.objectID).contains(doomed) == false)
            #expect(ctx.updatedObjects.count == 2)
            try ctx.save()
            #expect(try names(ctx) == ["A1", "C1"])
        }
    }
}
