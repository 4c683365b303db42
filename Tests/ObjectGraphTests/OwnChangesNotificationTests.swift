import Foundation
import Synchronization
import Testing
import ObjectGraph

/// Core Data's `NSManagedObjectContextObjectsDidChange`: "posted when values of properties of objects contained in a
/// managed object context are changed… during processPendingChanges", with the inserted, updated and deleted
/// objects, the refreshed ones (`NSRefreshedObjectsKey`), and the invalidated ones (`NSInvalidatedObjectsKey`,
/// `NSInvalidatedAllObjectsKey` at a reset), also for a rollback and a reset.
@Suite struct OwnChangesNotificationTests {
    /// What the context's objects-did-change notifications said, in order.
    final class Heard: Sendable {
        private let notes = Mutex<[ContextChanges]>([])
        func add(_ changes: ContextChanges) { notes.withLock { $0.append(changes) } }
        func take() -> [ContextChanges] { notes.withLock { notes in defer { notes = [] }; return notes } }
    }

    static func listening(_ context: ObjectContext) -> (Heard, NotificationToken) {
        let heard = Heard()
        let token = context.addObserver(for: .objectsDidChange) { heard.add($0.changes) }
        return (heard, token)
    }

    @Test(arguments: StoreKind.allCases)
    func ownEditsAreHeardOnceProcessedWithEachKindOfChange(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try MacroEntityTests.model(), folder)
        let ids = try await ObjectContext(coordinator: coordinator).perform { ctx in try RefreshAllObjectsTests.novels(ctx, ["B", "C"]) }
        let context = ObjectContext(coordinator: coordinator)
        let (heard, token) = Self.listening(context)
        defer { token.remove() }
        let inserted = try await context.perform { ctx in
            ctx.retainsRegisteredObjects = true
            let novel = try ctx.insert(Novel.self)
            novel.title = "A"
            try ctx.existingObject(with: ids[0], as: Novel.self).pages = 2
            try ctx.delete(try ctx.existingObject(with: ids[1]))
            // Processed at the end of this work: nothing heard yet.
            #expect(heard.take().isEmpty)
            return novel.objectID
        }
        // The work queued after it runs after the processing.
        await context.perform { _ in }
        let first = heard.take()
        #expect(first.count == 1)
        #expect(first.first?.insertedObjectIDs == [inserted] && first.first?.updatedObjectIDs == [ids[0]] && first.first?.deletedObjectIDs == [ids[1]])
        try await context.perform { ctx in
            // processPendingChanges delivers now; a refresh is heard as one.
            try ctx.refresh(try ctx.existingObject(with: ids[0]), mergeChanges: true)
            ctx.processPendingChanges()
            let refreshed = heard.take()
            #expect(refreshed.count == 1 && refreshed.first?.refreshedObjectIDs == [ids[0]] && refreshed.first?.updatedObjectIDs == [])
            // A rollback: the insert leaves (invalidated), the changed and deleted objects read their rows again.
            ctx.rollback()
            let rollback = heard.take()
            #expect(rollback.count == 1)
            #expect(rollback.first?.invalidatedObjectIDs == [inserted])
            #expect(Set(rollback.first?.refreshedObjectIDs ?? []) == Set(ids))
            // A reset invalidates every object.
            _ = try ctx.existingObject(with: ids[0], as: Novel.self).title
            ctx.reset()
            let reset = heard.take()
            #expect(reset.count == 1 && reset.first?.invalidatesAllObjects == true && reset.first?.invalidatedObjectIDs.contains(ids[0]) == true)
        }
    }

    @Test func aListenerOfEveryKindHearsTheEditsBeforeTheSave() async throws {
        let context = ObjectContext(coordinator: .inMemory(model: try MacroEntityTests.model()))
        let kinds = Mutex<[ContextNotificationKind]>([])
        let token = context.addObserver { note in kinds.withLock { $0.append(note.kind) } }
        defer { token.remove() }
        try await context.perform { ctx in
            _ = try ctx.insert(Novel.self)
            // A save processes the pending edits first, as Core Data's does.
            try ctx.save()
        }
        #expect(kinds.withLock { $0 } == [.objectsDidChange, .willSave, .didSave])
    }
}
