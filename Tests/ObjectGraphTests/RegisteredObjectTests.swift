import Foundation
import Testing
@testable import ObjectGraph

/// An object knows its context, and a context answers which objects it holds without making any: Core Data's
/// `managedObjectContext` ("nil if the object has been deleted from its context") and `registeredObject(for:)`
/// ("nil if the object is not registered": it never creates a fault, as `object(with:)` does).
@Suite struct RegisteredObjectTests {
    @Test(arguments: StoreKind.allCases)
    func anObjectNamesItsContextUntilItLeavesIt(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Fixtures.model(), folder)
        let context = ObjectContext(coordinator: coordinator)
        let other = ObjectContext(coordinator: coordinator)
        let (inserted, fetched) = try await context.perform { ctx in
            try seedLibrary(ctx)
            let book = try #require(try ctx.fetch(FetchRequest(entityName: "Book")).first)
            let author = try ctx.insert("Author")
            try author.setValue("Zola", forKey: "name")
            return (author.managedObjectContext === ctx, book.managedObjectContext === ctx)
        }
        #expect(inserted && fetched)
        let (afterDeletion, afterReset) = try await context.perform { ctx in
            let books = try ctx.fetch(FetchRequest(entityName: "Book"))
            try ctx.delete(books[0])
            let pending = books[0].managedObjectContext === ctx
            try ctx.save()
            let afterDeletion = (pending, books[0].managedObjectContext == nil)
            ctx.reset()
            return (afterDeletion, books[1].managedObjectContext == nil)
        }
        #expect(afterDeletion.0, "a pending deletion still belongs to its context")
        #expect(afterDeletion.1, "a saved deletion has left it")
        #expect(afterReset)
        // Another context's objects are its own.
        let elsewhere = try await other.perform { ctx in
            try ctx.fetch(FetchRequest(entityName: "Tag")).allSatisfy { $0.managedObjectContext === ctx }
        }
        #expect(elsewhere)
    }

    @Test(arguments: StoreKind.allCases)
    func registeredObjectAnswersWithoutRegistering(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Fixtures.model(), folder)
        let ids = try await ObjectContext(coordinator: coordinator).perform { ctx in
            try seedLibrary(ctx)
            return try ctx.fetchObjectIDs(FetchRequest(entityName: "Book"))
        }
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            #expect(ctx.registeredObject(for: ids[0]) == nil)
            #expect(ctx.registeredObjects.isEmpty, "asking registered nothing")
            let fault = try ctx.object(with: ids[0])
            #expect(fault.isFault)
            #expect(ctx.registeredObject(for: ids[0]) === fault, "a held fault is returned as one, the same instance")
            #expect(ctx.registeredObject(for: ids[0])?.isFault == true)
            // An insert is found by its temporary ID, and after the save by its permanent one.
            let author = try ctx.insert("Author")
            try author.setValue("Hugo", forKey: "name")
            let temporary = author.objectID
            #expect(ctx.registeredObject(for: temporary) === author)
            try ctx.save()
            #expect(ctx.registeredObject(for: author.objectID) === author)
            #expect(ctx.registeredObject(for: temporary) === author)
        }
    }
}
