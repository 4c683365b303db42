import Foundation
import Synchronization
import Testing
@testable import ObjectGraph

/// Every context converges to the store, and no saved change is lost: the layouts a results controller found losing
/// or misshowing saved data, each as it was reported, on each store.
@Suite struct ConvergenceTests {
    static let model = try! Model(entities: [
        EntityDescription("Entry", attributes: [.init("title", .string), .init("pages", .int64)]),
    ])

    /// An entry saved to the store by a context of its own; its ID.
    static func storedEntry(_ coordinator: PersistentStoreCoordinator, title: String = "t0", pages: Int64 = 1) async throws -> ObjectID {
        try await ObjectContext(coordinator: coordinator, name: "seed").perform { ctx in
            let entry = try ctx.insert("Entry")
            try entry.setValue(title, forKey: "title")
            try entry.setValue(pages, forKey: "pages")
            try ctx.save()
            return entry.objectID
        }
    }

    /// The entry's values as a fresh root context reads them from the store.
    static func stored(_ coordinator: PersistentStoreCoordinator, _ id: ObjectID) async throws -> (title: AttributeValue, pages: AttributeValue) {
        try await ObjectContext(coordinator: coordinator, name: "reader").perform { ctx in
            let entry = try ctx.existingObject(with: id)
            return (try entry.value(forKey: "title"), try entry.value(forKey: "pages"))
        }
    }

    /// Case 1: a worker of the nested stack saves a change to an object main has not loaded; main then changes
    /// another key of it; the stack's save writes both (Core Data: a child's save pushes its changes into the
    /// parent, and the parent's save writes every change it holds).
    @Test(arguments: StoreKind.allCases)
    func aWorkersChangeToAnObjectMainHasNotLoadedIsSavedWithMainsChangeOfAnotherKey(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(Self.model, folder)
        let id = try await Self.storedEntry(coordinator)
        let stack = DataStack(coordinator: coordinator, layout: .nested)
        try await stack.newContext().perform { ctx in
            try ctx.existingObject(with: id).setValue("worker", forKey: "title")
            try ctx.save()
        }
        let seen = try await stack.onMainContext { ctx in try ctx.existingObject(with: id).value(forKey: "title") }
        #expect(seen == .string("worker"), "main reads the worker's saved change")
        try await stack.onMainContext { ctx in try ctx.existingObject(with: id).setValue(Int64(2), forKey: "pages") }
        try await stack.save()
        let shown = try await stack.onMainContext { ctx in try ctx.existingObject(with: id).value(forKey: "title") }
        #expect(shown == .string("worker"))
        let (title, pages) = try await Self.stored(coordinator, id)
        #expect(title == .string("worker"))
        #expect(pages == .int(2))
    }

    /// Case 2: a root saves with `.mergeByPropertyObjectTrump` over a key another save changed; a root merging its
    /// did-save shows the store's value of the key the saver never changed (Core Data: the policy merges the
    /// store's values into the saver's objects, and the did-save carries what was saved).
    @Test(arguments: StoreKind.allCases)
    func mergingASaveSettledByPropertyShowsTheStoresValueOfKeysTheSaverDidNotChange(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(Self.model, folder)
        let id = try await Self.storedEntry(coordinator)
        let saver = ObjectContext(coordinator: coordinator, parent: nil, name: "saver", mergePolicy: .mergeByPropertyObjectTrump)
        let other = ObjectContext(coordinator: coordinator, name: "other")
        let watcher = ObjectContext(coordinator: coordinator, name: "watcher")
        // Results controllers keep the objects registered, as a screen's do.
        let all = FetchRequest(entityName: "Entry", sortKeys: [SortKey("title")])
        try await saver.perform { ctx in _ = try ctx.state.fetchedResultsController(for: all, sectionNameKeyPath: nil, keepAlive: true) }
        try await watcher.perform { ctx in _ = try ctx.state.fetchedResultsController(for: all, sectionNameKeyPath: nil, keepAlive: true) }
        let otherSave = try await other.perform { ctx in
            try ctx.existingObject(with: id).setValue(Int64(7), forKey: "pages")
            return try #require(try ctx.saveAndNotification())
        }
        await watcher.mergeChanges(fromContextDidSave: otherSave)
        let saverSave = try await saver.perform { ctx in
            try ctx.existingObject(with: id).setValue("saver", forKey: "title")
            return try #require(try ctx.saveAndNotification())
        }
        await watcher.mergeChanges(fromContextDidSave: saverSave)
        let shown = try await watcher.perform { ctx in
            let entry = try ctx.existingObject(with: id)
            return (try entry.value(forKey: "title"), try entry.value(forKey: "pages"))
        }
        #expect(shown.0 == .string("saver"))
        #expect(shown.1 == .int(7))
        let inSaver = try await saver.perform { ctx in try ctx.existingObject(with: id).value(forKey: "pages") }
        #expect(inSaver == .int(7))
        let (title, pages) = try await Self.stored(coordinator, id)
        #expect(title == .string("saver") && pages == .int(7))
    }

    /// Case 3: a child saves into its root; the root loads the object, merges a sibling root's save of another key,
    /// and saves: nothing stays listed as changed, so a later merge of a newer value is shown, and the root's next
    /// unrelated save does not write the stale value back (a lost update).
    @Test(arguments: StoreKind.allCases)
    func aRootsSaveAfterMergingLeavesNoKeyChangedAndLosesNoLaterUpdate(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(Self.model, folder)
        let id = try await Self.storedEntry(coordinator)
        let root = ObjectContext(coordinator: coordinator, name: "root")
        let child = ObjectContext(parent: root, name: "child")
        let sibling = ObjectContext(coordinator: coordinator, name: "sibling")
        try await child.perform { ctx in
            try ctx.existingObject(with: id).setValue("child", forKey: "title")
            try ctx.save()
        }
        try await root.perform { ctx in _ = try ctx.existingObject(with: id).value(forKey: "title") }
        let first = try await sibling.perform { ctx in
            try ctx.existingObject(with: id).setValue(Int64(5), forKey: "pages")
            return try #require(try ctx.saveAndNotification())
        }
        await root.mergeChanges(fromContextDidSave: first)
        try await root.perform { ctx in
            try ctx.save()
            let changed = try ctx.existingObject(with: id).changedValues().keys.sorted()
            #expect(changed.isEmpty, "still changed after the save: \(changed)")
        }
        let second = try await sibling.perform { ctx in
            try ctx.existingObject(with: id).setValue(Int64(9), forKey: "pages")
            return try #require(try ctx.saveAndNotification())
        }
        await root.mergeChanges(fromContextDidSave: second)
        try await root.perform { ctx in
            #expect(try ctx.existingObject(with: id).value(forKey: "pages") == .int(9))
            try ctx.insert("Entry").setValue("unrelated", forKey: "title")
            try ctx.save()
        }
        let (title, pages) = try await Self.stored(coordinator, id)
        #expect(title == .string("child"))
        #expect(pages == .int(9))
    }

    /// Case 4: a root deletes an object it inserted and a child of it has updated: fetches no longer return it,
    /// and it is in neither the inserted nor the deleted set (Core Data: deleting an unsaved insert cancels it).
    @Test(arguments: StoreKind.allCases)
    func aRootDeletingItsInsertThatAChildUpdatedForgetsIt(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(Self.model, folder)
        let root = ObjectContext(coordinator: coordinator, name: "root")
        let child = ObjectContext(parent: root, name: "child")
        let id = try await root.perform { ctx in
            let entry = try ctx.insert("Entry")
            try entry.setValue("new", forKey: "title")
            return entry.objectID
        }
        try await child.perform { ctx in
            try ctx.existingObject(with: id).setValue(Int64(3), forKey: "pages")
            try ctx.save()
        }
        try await root.perform { ctx in
            try ctx.delete(try ctx.existingObject(with: id))
            #expect(try ctx.fetch(FetchRequest(entityName: "Entry")).isEmpty)
            #expect(ctx.insertedObjects.isEmpty)
            #expect(ctx.deletedObjects.isEmpty)
            try ctx.save()
        }
        #expect(try await ObjectContext(coordinator: coordinator).perform { try $0.count(for: FetchRequest(entityName: "Entry")) } == 0)
    }
    /// Case 5: after the nested stack's save, a results controller on main holds the inserts by the permanent IDs
    /// the store gave them, without waiting for another change, and orders ties as a fetch does (the siblings
    /// layout renamed them already).
    @Test(arguments: StoreKind.allCases)
    func aControllerOnMainHoldsPermanentIDsAfterTheNestedStacksSave(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(Self.model, folder)
        let stack = DataStack(coordinator: coordinator, layout: .nested)
        let request = FetchRequest(entityName: "Entry", sortKeys: [SortKey("title")])
        let controller = try await stack.onMainContext { ctx in
            let controller = try ctx.state.fetchedResultsController(for: request, sectionNameKeyPath: nil, keepAlive: true)
            for title in ["b", "a", "b", "a"] { try ctx.insert("Entry").setValue(title, forKey: "title") }
            return ObjectIdentifier(controller)
        }
        try await stack.save()
        // The controller's processing was queued on main by the save: it runs before this.
        let (held, fetched) = try await stack.onMainContext { ctx in
            let live = try #require(ctx.state.observation?.controllersForTesting.first { ObjectIdentifier($0) == controller })
            let held: [ObjectID] = live.buckets.flatMap { Array($0.ids) }
            return (held, try ctx.fetch(request).map { $0.objectID })
        }
        #expect(held.allSatisfy { !$0.isTemporaryID }, "the controller still holds \(held.filter(\.isTemporaryID))")
        #expect(held == fetched)
    }

    /// Case 6: under `.mergeByPropertyObjectTrump`, a save that keeps meeting other saves of its rows keeps merging
    /// until it is written (Core Data's merging policies settle a conflict rather than fail the save); here another
    /// writer changes the row before each of the save's first ten attempts.
    @Test(arguments: StoreKind.allCases)
    func aMergingPolicySettlesAsManyConflictsAsContentionBrings(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let contended = ContendedStore(try kind.coordinator(Self.model, folder).store, competingSaves: 10)
        let coordinator = PersistentStoreCoordinator(model: Self.model, store: contended)
        let id = try await Self.storedEntry(coordinator)
        contended.arm()
        try await ObjectContext(coordinator: coordinator, parent: nil, name: "saver", mergePolicy: .mergeByPropertyObjectTrump).perform { ctx in
            try ctx.existingObject(with: id).setValue("saver", forKey: "title")
            try ctx.save()
        }
        #expect(contended.competed == 10)
        let (title, pages) = try await Self.stored(coordinator, id)
        #expect(title == .string("saver"))
        #expect(pages == .int(11))
    }

    static let library = try! Model(entities: [
        EntityDescription("Writer", attributes: [.init("name", .string)], relationships: [
            .init("books", destination: "Volume", inverse: "writer", isToMany: true, deleteRule: .nullify),
        ]),
        EntityDescription("Volume", attributes: [.init("title", .string)], relationships: [
            .init("writer", destination: "Writer", inverse: "books"),
        ]),
    ])

    /// Case 7: merging history that deletes a book removes it from a loaded list of its writer, also when the writer
    /// has an unsaved edit of another key (Core Data removes merged deletions from registered objects'
    /// relationships), and the edit stays.
    @Test(arguments: StoreKind.allCases)
    func mergingADeletionRemovesItFromTheListsOfChangedObjects(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try PersistentHistoryTests.coordinator(kind, folder, model: Self.library)
        let (writer, first) = try await ObjectContext(coordinator: coordinator, name: "seed").perform { ctx in
            let writer = try ctx.insert("Writer")
            let first = try ctx.insert("Volume")
            try first.setObject(writer, forKey: "writer")
            try ctx.insert("Volume").setObject(writer, forKey: "writer")
            try ctx.save()
            return (writer.objectID, first.objectID)
        }
        let token = try coordinator.lastHistoryToken()
        let editor = ObjectContext(coordinator: coordinator, name: "editor")
        try await editor.perform { ctx in
            let object = try ctx.existingObject(with: writer)
            #expect(try object.objects(forKey: "books").count == 2)
            try object.setValue("edited", forKey: "name")
        }
        try await ObjectContext(coordinator: coordinator, name: "deleter").perform { ctx in
            try ctx.delete(try ctx.existingObject(with: first))
            try ctx.save()
        }
        try await editor.perform { ctx in
            try ctx.merge(try coordinator.history(after: token))
            let object = try ctx.existingObject(with: writer)
            let books = try object.objects(forKey: "books").map(\.objectID)
            #expect(books.count == 1 && !books.contains(first))
            #expect(try object.value(forKey: "name") == .string("edited"))
        }
    }

    /// Case 8: a to-one whose destination another context deleted (its save nullified the link) hands back a fault of
    /// the deleted object; fetching that object throws, and releasing the context afterwards, off its queue, must
    /// not trap (an exit test: the process ends normally).
    @Test func releasingAContextAfterAFaultOfADeletedObjectFailedToLoadDoesNotTrap() async throws {
        let folder = try TemporaryFolder()
        let path = folder.storeURL.path
        await #expect(processExitsWith: .success) { [path = path as String] in
            let coordinator = try PersistentStoreCoordinator(model: ConvergenceTests.library, storeURL: URL(filePath: path))
            let (volume, writer) = try await ObjectContext(coordinator: coordinator, name: "seed").perform { ctx in
                let writer = try ctx.insert("Writer")
                let volume = try ctx.insert("Volume")
                try volume.setObject(writer, forKey: "writer")
                try ctx.save()
                return (volume.objectID, writer.objectID)
            }
            var reader: ObjectContext? = ObjectContext(coordinator: coordinator, name: "reader")
            // An unsaved edit keeps the volume registered, with the to-one it read.
            try await reader!.perform { ctx in try ctx.existingObject(with: volume).setValue("kept", forKey: "title") }
            try await ObjectContext(coordinator: coordinator, name: "deleter").perform { ctx in
                try ctx.delete(try ctx.existingObject(with: writer))
                try ctx.save()
            }
            try await reader!.perform { ctx in
                let held = try ctx.existingObject(with: volume).object(forKey: "writer")
                #expect(held?.objectID == writer)
                #expect(throws: ObjectGraphError.self) { try ctx.existingObject(with: writer) }
            }
            reader = nil
        }
    }
}

extension ObjectContext {
    /// Saves, and returns the did-save notification of this save (nil when there was nothing to save).
    func saveAndNotification() throws -> ContextNotification? {
        let heard = Mutex<ContextNotification?>(nil)
        let token = coordinator.addDidSaveObserver { notification in heard.withLock { $0 = notification } }
        defer { withExtendedLifetime(token) {} }
        try save()
        return heard.withLock { $0 }
    }
}

/// A store where, once armed, another writer changes every row a save updates (adding one to `pages`) just before
/// each of the save's first attempts, as contention between hosts does.
final class ContendedStore: ForwardingStore {
    let inner: any PersistentStore
    private let remaining = Mutex(0)
    private let count = Mutex(0)
    private let planned: Int

    init(_ inner: any PersistentStore, competingSaves: Int) {
        self.inner = inner
        planned = competingSaves
    }

    func arm() { remaining.withLock { $0 = planned } }
    var competed: Int { count.withLock { $0 } }

    func save(_ changes: ChangeSet) throws -> SaveResult {
        if remaining.withLock({ left in defer { left = max(0, left - 1) }; return left > 0 }) {
            count.withLock { $0 += 1 }
            var competing = ChangeSet()
            for stored in try inner.snapshots(for: changes.updated.map(\.objectID)) {
                var values = stored.values
                let pages = 1
                if case .int(let value) = values[pages] { values[pages] = .int(value + 1) }
                competing.updated.append(ChangeSet.Row(
                    objectID: stored.objectID, version: stored.version, values: values, toOne: stored.toOne,
                    changedAttributes: [pages], changedToOne: [], committedValues: stored.values))
            }
            _ = try inner.save(competing)
        }
        return try inner.save(changes)
    }
}
