import Foundation
import Testing
@testable import ObjectGraph

@Suite struct NestedContextTests {
    func titleCount(_ context: ObjectContext, _ format: String = "TRUEPREDICATE") async throws -> Int {
        try await context.perform { ctx in try ctx.count(for: try FetchRequest(entityName: "Book", format: format)) }
    }

    @Test func aChildSavePushesIntoItsParentOnlyAndTheRootWritesIt() async throws {
        let folder = try TemporaryFolder()
        let coordinator = try StoreKind.sqlite.coordinator(try Fixtures.model(), folder)
        let writer = ObjectContext(coordinator: coordinator, name: "writer")
        let worker = ObjectContext(parent: writer, name: "worker")
        let outsider = ObjectContext(coordinator: coordinator, name: "outsider")
        let authorID = try await writer.perform { ctx in
            let author = try ctx.insert("Author")
            try author.setValue("Stored", forKey: "name")
            try ctx.save()
            return author.objectID
        }
        try await worker.perform { ctx in
            let author = try ctx.existingObject(with: authorID)
            try author.setValue("Renamed", forKey: "name")
            for index in 0..<3 {
                let book = try ctx.insert("Book")
                try book.setValue("Child \(index)", forKey: "title")
                try book.setObject(author, forKey: "author")
            }
            try ctx.save()
            let pending = ctx.hasChanges
            #expect(!pending)
        }
        // The parent holds the changes as its own unsaved ones; nothing is on disk yet.
        try await writer.perform { ctx in
            let pending = ctx.hasChanges
            #expect(pending)
            #expect(try ctx.count(for: FetchRequest(entityName: "Book")) == 3)
            let author = try ctx.existingObject(with: authorID)
            #expect(try author.value(forKey: "name") == .string("Renamed"))
            #expect(try author.objects(forKey: "books").count == 3)
        }
        #expect(try await titleCount(outsider) == 0)
        try await writer.perform { ctx in try ctx.save() }
        #expect(try await titleCount(outsider) == 3)
        try await outsider.perform { ctx throws in
            #expect(try ctx.existingObject(with: authorID).value(forKey: "name") == .string("Renamed"))
            #expect(try ctx.existingObject(with: authorID).objects(forKey: "books").count == 3)
        }
    }

    @Test func aChildSeesItsParentsUnsavedChanges() async throws {
        let coordinator = PersistentStoreCoordinator.inMemory(model: try Fixtures.model())
        let parent = ObjectContext(coordinator: coordinator, name: "parent")
        let (storedID, insertedID) = try await parent.perform { ctx in
            let stored = try ctx.insert("Tag")
            try stored.setValue("stored", forKey: "label")
            try ctx.save()
            try stored.setValue("changed in parent", forKey: "label")
            let fresh = try ctx.insert("Tag")
            try fresh.setValue("inserted in parent", forKey: "label")
            return (stored.objectID, fresh.objectID)
        }
        let child = ObjectContext(parent: parent, name: "child")
        try await child.perform { ctx in
            #expect(try ctx.existingObject(with: storedID).value(forKey: "label") == .string("changed in parent"))
            #expect(try ctx.existingObject(with: insertedID).value(forKey: "label") == .string("inserted in parent"))
            let labels = try ctx.fetch(FetchRequest(entityName: "Tag", sortKeys: [SortKey("label")])).map { try $0.value(forKey: "label") }
            #expect(labels == [.string("changed in parent"), .string("inserted in parent")])
            #expect(try ctx.count(for: try FetchRequest(entityName: "Tag", format: "label BEGINSWITH 'changed'")) == 1)
        }
    }

    @Test func temporaryIDsBecomePermanentInEveryContextOfTheTree() async throws {
        let folder = try TemporaryFolder()
        let coordinator = try StoreKind.sqlite.coordinator(try Fixtures.model(), folder)
        let writer = ObjectContext(coordinator: coordinator, name: "writer")
        let main = ObjectContext(parent: writer, concurrencyType: .mainQueue, name: "main")
        let worker = ObjectContext(parent: main, name: "worker")
        let temporary = try await worker.perform { ctx in
            let tag = try ctx.insert("Tag")
            try tag.setValue("deep", forKey: "label")
            try ctx.save()
            return tag.objectID
        }
        #expect(temporary.isTemporaryID)
        try await main.perform { ctx in
            #expect(try ctx.existingObject(with: temporary).value(forKey: "label") == .string("deep"))
            try ctx.save()
        }
        try await writer.perform { ctx in try ctx.save() }
        let permanent = coordinator.resolve(temporary)
        #expect(!permanent.isTemporaryID)
        for context in [worker, main, writer] {
            try await context.perform { ctx in
                let tag = try ctx.object(with: temporary)
                #expect(tag.objectID == permanent, "\(ctx.name)")
                #expect(try ctx.existingObject(with: permanent) === tag, "\(ctx.name)")
                #expect(try tag.value(forKey: "label") == .string("deep"))
            }
        }
    }

    @Test func aChildSaveCostsTheParentWorkInProportionToWhatItHasRegistered() async throws {
        let coordinator = PersistentStoreCoordinator.inMemory(model: try Fixtures.model())
        let main = ObjectContext(coordinator: coordinator, name: "main")
        let worker = ObjectContext(parent: main, name: "worker")
        try await worker.perform { ctx in
            for index in 0..<5_000 {
                try ctx.insert("Tag").setValue("tag \(index)", forKey: "label")
            }
            try ctx.save()
        }
        try await main.perform { ctx in
            // The parent registered nothing and materialized nothing while receiving 5,000 inserts...
            let (registered, materialized) = (ctx.registeredObjects.count, ctx.materializedObjectCount)
            #expect(registered == 0 && materialized == 0)
            // ...yet it sees them when asked.
            #expect(try ctx.count(for: FetchRequest(entityName: "Tag")) == 5_000)
            try ctx.save()
        }
        try await ObjectContext(coordinator: coordinator).perform { ctx throws in
            #expect(try ctx.count(for: FetchRequest(entityName: "Tag")) == 5_000)
        }
    }

    @Test func notificationsArriveAsStreamsAndCallbacks() async throws {
        let coordinator = PersistentStoreCoordinator.inMemory(model: try Fixtures.model())
        let context = ObjectContext(coordinator: coordinator, name: "poster")
        let seen = Recorder()
        let token = context.addObserver { seen.append("\($0.kind)") }
        var didSaves = coordinator.didSaveNotifications().makeAsyncIterator()
        var contextSaves = context.notifications(.didSave).makeAsyncIterator()
        let id = try await context.perform { ctx in
            let tag = try ctx.insert("Tag")
            try tag.setValue("x", forKey: "label")
            try ctx.save()
            return tag.objectID
        }
        let fromCoordinator = await didSaves.next()
        let fromContext = await contextSaves.next()
        #expect(fromCoordinator?.changes.insertedObjectIDs == [id])
        #expect(fromContext?.contextName == "poster" && fromContext?.isRootSave == true)
        #expect(seen.values == ["willSave", "didSave"])
        token.remove()
        try await context.perform { ctx in
            try ctx.existingObject(with: id).setValue("y", forKey: "label")
            try ctx.save()
        }
        #expect(seen.values == ["willSave", "didSave"])
        #expect(await contextSaves.next()?.changes.updatedObjectIDs == [id])
    }

    @Test func mergingRefreshesUpdatedKeepsLocalChangesDropsDeletedAndReachesInserted() async throws {
        let folder = try TemporaryFolder()
        let coordinator = try StoreKind.sqlite.coordinator(try Fixtures.model(), folder)
        let a = ObjectContext(coordinator: coordinator, name: "a")
        let b = ObjectContext(coordinator: coordinator, name: "b")
        let (bookID, doomedID) = try await a.perform { ctx in
            let book = try ctx.insert("Book")
            try book.setValue("Old", forKey: "title")
            try book.setValue(10, forKey: "pages")
            let doomed = try ctx.insert("Tag")
            try ctx.save()
            return (book.objectID, doomed.objectID)
        }
        try await b.perform { ctx in
            let book = try ctx.existingObject(with: bookID)
            try book.setValue(99, forKey: "pages")
            _ = try ctx.existingObject(with: doomedID)
        }
        var saves = a.notifications(.didSave).makeAsyncIterator()
        let newID = try await a.perform { ctx in
            try ctx.existingObject(with: bookID).setValue("New", forKey: "title")
            try ctx.delete(try ctx.existingObject(with: doomedID))
            let tag = try ctx.insert("Tag")
            try tag.setValue("fresh", forKey: "label")
            try ctx.save()
            return tag.objectID
        }
        let notification = try #require(await saves.next())
        try await b.perform { ctx in
            ctx.mergeChanges(fromContextDidSave: notification)
            let book = try ctx.existingObject(with: bookID)
            #expect(try book.value(forKey: "title") == .string("New"))
            #expect(try book.value(forKey: "pages") == .int(99))
            #expect(try book.changedValues() == ["pages": .int(99)])
            #expect(throws: ObjectGraphError.self) { try ctx.existingObject(with: doomedID) }
            #expect(try ctx.existingObject(with: newID).value(forKey: "label") == .string("fresh"))
            // The merged version is current: saving b's own change is no conflict.
            try ctx.save()
        }
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let book = try ctx.existingObject(with: bookID)
            #expect(try book.value(forKey: "title") == .string("New") && book.value(forKey: "pages") == .int(99))
        }
    }

    @Test func siblingsMergeAutomatically() async throws {
        let coordinator = PersistentStoreCoordinator.inMemory(model: try Fixtures.model())
        let a = ObjectContext(coordinator: coordinator, name: "a")
        let b = ObjectContext(coordinator: coordinator, name: "b")
        let id = try await a.perform { ctx in
            let tag = try ctx.insert("Tag")
            try tag.setValue("one", forKey: "label")
            try ctx.save()
            return tag.objectID
        }
        var changes = b.notifications(.objectsDidChange).makeAsyncIterator()
        try await b.perform { ctx in
            ctx.automaticallyMergesChangesFromParent = true
            _ = try ctx.existingObject(with: id).value(forKey: "label")
        }
        let keep = try await b.perform { ctx in SmuggledObject(object: try ctx.existingObject(with: id)) }
        try await a.perform { ctx in
            try ctx.existingObject(with: id).setValue("two", forKey: "label")
            try ctx.save()
        }
        _ = await changes.next()
        let label = try await b.perform { _ in
            defer { keep.release() }
            return try keep.object.value(forKey: "label")
        }
        #expect(label == .string("two"))
    }
}

/// A thread-safe list for callbacks in tests.
final class Recorder: Sendable {
    private let storage = Protected<[String]>([])
    func append(_ value: String) { storage.withLock { $0.append(value) } }
    var values: [String] { storage.withLock { $0 } }
}
