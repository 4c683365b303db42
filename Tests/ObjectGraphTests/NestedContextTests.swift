import Foundation
import Testing
@testable import ObjectGraph

@Suite struct NestedContextTests {
    func titleCount(_ context: ObjectContext, _ format: String = "TRUEPREDICATE") async throws -> Int {
        try await context.perform { ctx in try ctx.count(for: try FetchRequest(entityName: "Book", format: format)) }
    }

    /// Inserts two tags through `context`, labelled "first" and "doomed", and saves it (into its parent).
    func insertFirstAndDoomed(_ context: ObjectContext) async throws -> (first: ObjectID, doomed: ObjectID) {
        try await context.perform { ctx in
            let first = try ctx.insert("Tag")
            try first.setValue("first", forKey: "label")
            let doomed = try ctx.insert("Tag")
            try doomed.setValue("doomed", forKey: "label")
            try ctx.save()
            return (first.objectID, doomed.objectID)
        }
    }

    /// The labels of the tags on disk, read by a new root context.
    func storedTagLabels(_ coordinator: PersistentStoreCoordinator) async throws -> [AttributeValue] {
        try await ObjectContext(coordinator: coordinator, name: "outsider").perform { ctx in
            try ctx.fetch(FetchRequest(entityName: "Tag")).map { try $0.value(forKey: "label") }
        }
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

    /// A middle context keeps a child's changes as a layer naming objects by the temporary IDs the child knew; the
    /// root's save then makes those IDs permanent. Every read through the middle must still see the layer.
    @Test func aLayerNamingTemporaryIDsStillCountsAfterTheRootMakesThemPermanent() async throws {
        let folder = try TemporaryFolder()
        let coordinator = try StoreKind.sqlite.coordinator(try Fixtures.model(), folder)
        let writer = ObjectContext(coordinator: coordinator, name: "writer")
        let middle = ObjectContext(parent: writer, name: "middle")
        let worker = ObjectContext(parent: middle, name: "worker")
        let (kept, dropped) = try await insertFirstAndDoomed(worker)
        try await middle.perform { ctx in try ctx.save() }
        // Changed and deleted while the IDs are still temporary: the middle's layer names them so.
        try await worker.perform { ctx in
            try ctx.existingObject(with: kept).setValue("second", forKey: "label")
            try ctx.delete(ctx.existingObject(with: dropped))
            try ctx.save()
        }
        try await writer.perform { ctx in try ctx.save() }
        let keptPermanent = coordinator.resolve(kept), droppedPermanent = coordinator.resolve(dropped)
        #expect(!keptPermanent.isTemporaryID && !droppedPermanent.isTemporaryID)
        let reader = ObjectContext(parent: middle, name: "reader")
        for context in [middle, reader] {
            try await context.perform { ctx in
                for id in [kept, keptPermanent] {
                    #expect(try ctx.existingObject(with: id).value(forKey: "label") == .string("second"), "\(ctx.name) \(id)")
                }
                for id in [dropped, droppedPermanent] {
                    #expect(throws: ObjectGraphError.self, "\(ctx.name) \(id)") { try ctx.existingObject(with: id) }
                }
                let labels = try ctx.fetch(FetchRequest(entityName: "Tag")).map { try $0.value(forKey: "label") }
                #expect(labels == [.string("second")], "\(ctx.name)")
                #expect(try ctx.count(for: FetchRequest(entityName: "Tag")) == 1, "\(ctx.name)")
                #expect(try ctx.count(for: FetchRequest(entityName: "Tag", format: "label == 'first'")) == 0, "\(ctx.name)")
            }
        }
        try await middle.perform { ctx in try ctx.save() }
        try await writer.perform { ctx in try ctx.save() }
        #expect(try await storedTagLabels(coordinator) == [.string("second")])
    }

    /// A child's change set built just before its parent's save made its IDs permanent, and received just after
    /// (the race behind a stress-test failure): the parent must read its delete and update under the permanent IDs.
    @Test func aChangeSetBuiltBeforeASaveAndReceivedAfterItIsRenamed() async throws {
        let folder = try TemporaryFolder()
        let coordinator = try StoreKind.sqlite.coordinator(try Fixtures.model(), folder)
        let writer = ObjectContext(coordinator: coordinator, name: "writer")
        let worker = ObjectContext(parent: writer, name: "worker")
        let (changed, dropped) = try await insertFirstAndDoomed(worker)
        let savedBefore = coordinator.saveCount
        try await writer.perform { ctx in try ctx.save() }
        // What the worker would have pushed had it saved an update and a delete just before the writer's save.
        var late = ChangeSet()
        late.updated = [ChangeSet.Row(objectID: changed, version: 1, values: [.string("second")], toOne: [],
                                      changedAttributes: [0], changedToOne: [])]
        late.deleted = [(dropped, 1)]
        late.namesCurrentAt = savedBefore
        late.buildIndex()
        late.buildEqualityIndexes(model: coordinator.model)
        _ = try ParentSource(parent: writer).push([late], from: ObjectIdentifier(writer))
        let (changedPermanent, droppedPermanent) = (coordinator.resolve(changed), coordinator.resolve(dropped))
        for context in [writer, worker] {
            try await context.perform { ctx throws in
                #expect(try ctx.existingObject(with: changedPermanent).value(forKey: "label") == .string("second"), "\(ctx.name)")
                #expect(throws: ObjectGraphError.self, "\(ctx.name)") { try ctx.existingObject(with: dropped) }
                #expect(throws: ObjectGraphError.self, "\(ctx.name)") { try ctx.existingObject(with: droppedPermanent) }
                #expect(try ctx.count(for: FetchRequest(entityName: "Tag")) == 1, "\(ctx.name)")
            }
        }
        try await writer.perform { ctx in try ctx.save() }
        #expect(try await storedTagLabels(coordinator) == [.string("second")])
    }

    /// `obtainPermanentIDs` on an object already saved into the parent but not to disk reserves a key: the parent's
    /// save still inserts the row (under that key), it does not update a row that is not there.
    @Test func aPermanentIDObtainedAfterSavingIntoTheParentIsInsertedByTheParentsSave() async throws {
        let folder = try TemporaryFolder()
        let coordinator = try StoreKind.sqlite.coordinator(try Fixtures.model(), folder)
        let writer = ObjectContext(coordinator: coordinator, name: "writer")
        let worker = ObjectContext(parent: writer, name: "worker")
        let (temporary, permanent) = try await worker.perform { ctx in
            let tag = try ctx.insert("Tag")
            try tag.setValue("reserved", forKey: "label")
            try ctx.save()
            let temporary = tag.objectID
            try ctx.obtainPermanentIDs(for: [tag])
            return (temporary, tag.objectID)
        }
        #expect(temporary.isTemporaryID && !permanent.isTemporaryID)
        try await writer.perform { ctx in try ctx.save() }
        try await ObjectContext(coordinator: coordinator).perform { ctx throws in
            #expect(try ctx.existingObject(with: permanent).value(forKey: "label") == .string("reserved"))
            #expect(try ctx.count(for: FetchRequest(entityName: "Tag")) == 1)
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

    /// A child's save changes in its parent exactly the objects it names, and a deletion reaches the parent's
    /// loaded lists of objects it does not name. (Core Data: a child's save pushes its changes into the parent, which
    /// holds them as its own unsaved changes.)
    @Test func aChildSaveChangesTheParentsObjectsItNamesAndListsHoldingWhatItDeletes() async throws {
        let coordinator = PersistentStoreCoordinator.inMemory(model: try Fixtures.model())
        let main = ObjectContext(coordinator: coordinator, name: "main")
        let worker = ObjectContext(parent: main, name: "worker")
        let (authors, books, tags) = try await main.perform { ctx in
            let authors = try (0..<2).map { index in
                let author = try ctx.insert("Author")
                try author.setValue("Author \(index)", forKey: "name")
                return author
            }
            let books = try (0..<4).map { index in
                let book = try ctx.insert("Book")
                try book.setValue("Book \(index)", forKey: "title")
                try book.setObject(authors[index / 2], forKey: "author")
                return book
            }
            let tags = try (0..<20).map { index in
                let tag = try ctx.insert("Tag")
                try tag.setValue("tag \(index)", forKey: "label")
                return tag
            }
            try ctx.save()
            return (authors.map(\.objectID), books.map(\.objectID), tags.map(\.objectID))
        }
        // The parent holds every object (as an app holding them would), and the authors' and the third tag's lists
        // loaded.
        let held = try await main.perform { ctx in
            ctx.retainsRegisteredObjects = true
            let objects = try (authors + books + tags).map { try ctx.existingObject(with: $0) }
            for id in authors + [tags[2]] { _ = try ctx.existingObject(with: id).objects(forKey: "books") }
            return objects.map(\.objectID)
        }
        #expect(held.count == 26)
        try await worker.perform { ctx in
            try ctx.existingObject(with: tags[1]).setValue("renamed", forKey: "label")
            try ctx.existingObject(with: books[0]).setObject(try ctx.existingObject(with: authors[1]), forKey: "author")
            try ctx.existingObject(with: books[3]).addObject(try ctx.existingObject(with: tags[2]), forKey: "tags")
            try ctx.save()
        }
        try await main.perform { ctx throws in
            let titles = { (id: ObjectID) throws -> Set<AttributeValue> in
                Set(try ctx.existingObject(with: id).objects(forKey: "books").map { try $0.value(forKey: "title") })
            }
            #expect(try ctx.existingObject(with: tags[1]).value(forKey: "label") == .string("renamed"))
            #expect(try titles(authors[0]) == [.string("Book 1")])
            #expect(try titles(authors[1]) == [.string("Book 0"), .string("Book 2"), .string("Book 3")])
            #expect(try titles(tags[2]) == [.string("Book 3")])
            let updated = Set(ctx.updatedObjects.map(\.objectID))
            for id in [tags[1], books[0], books[3]] { #expect(updated.contains(id), "\(id) not updated") }
            // Nothing the save did not name is touched.
            let untouched = [books[1], books[2]] + tags.enumerated().filter { ![1, 2].contains($0.offset) }.map(\.element)
            for id in untouched { #expect(!updated.contains(id), "\(id) updated") }
        }
        try await worker.perform { ctx in
            try ctx.delete(try ctx.existingObject(with: books[2]))
            try ctx.save()
        }
        try await main.perform { ctx in
            #expect(ctx.deletedObjects.map(\.objectID) == [books[2]])
            let remaining = Set(try ctx.existingObject(with: authors[1]).objects(forKey: "books").map(\.objectID))
            #expect(remaining == [books[0], books[3]])
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
        // A save processes the pending edits first: their objects-did-change comes before it, as in Core Data.
        let heard = ["objectsDidChange", "willSave", "didSave"]
        #expect(seen.values == heard)
        token.remove()
        try await context.perform { ctx in
            try ctx.existingObject(with: id).setValue("y", forKey: "label")
            try ctx.save()
        }
        #expect(seen.values == heard)
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
