import Foundation
import Testing
@testable import ObjectGraph

/// Deliberately unsound: it moves an object out of its context to simulate what the compiler normally refuses
/// (an unsafe escape), so the run-time check has something to catch, or to keep an object alive between two
/// `perform` calls. Whoever holds the last reference must drop it on the object's queue (``release()``), since an
/// object deallocated anywhere else traps like any other access there.
final class SmuggledObject: @unchecked Sendable {
    private(set) var object: ManagedObject!

    init(object: ManagedObject) { self.object = object }

    /// Drops the object; call it inside its context's `perform`.
    func release() { object = nil }
}

@Suite struct ConfinementTests {
    @Test func contextsRunOnTheirOwnExecutors() async throws {
        let coordinator = PersistentStoreCoordinator.inMemory(model: try Fixtures.model())
        let main = ObjectContext(coordinator: coordinator, concurrencyType: .mainQueue)
        // The main actor's jobs run on the main dispatch queue (on Linux, not always on the first thread).
        let onMain = await main.perform { _ in MainActor.assumeIsolated { ContextExecutor.main.isCurrent } }
        #expect(onMain)
        let worker = ObjectContext(coordinator: coordinator, name: "worker")
        let workerOnMain = await worker.perform { _ in ContextExecutor.main.isCurrent }
        #expect(!workerOnMain)
        let fromMain = try await MainActor.run {
            try main.performAndWait { ctx in try ctx.insert("Tag").objectID.isTemporaryID }
        }
        #expect(fromMain)
    }

    @Test func performAndWaitRunsInlineWhenReentered() async throws {
        let worker = ObjectContext(coordinator: .inMemory(model: try Fixtures.model()), name: "worker")
        let depth = try worker.performAndWait { ctx in
            let tag = try ctx.insert("Tag")
            try tag.setValue("outer", forKey: "label")
            let id = tag.objectID
            // Re-entering the same context from inside it must not deadlock.
            return try ctx.performAndWait { inner in
                try inner.existingObject(with: id).value(forKey: "label") == .string("outer") ? 2 : 0
            }
        }
        #expect(depth == 2)
        let fromAsync = await worker.perform { ctx in
            ctx.performAndWait { $0.registeredObjects.count }
        }
        #expect(fromAsync == 1)
    }

    @Test func idsCrossContextsAndObjectsFromAnotherContextAreRefused() async throws {
        let coordinator = PersistentStoreCoordinator.inMemory(model: try Fixtures.model())
        let a = ObjectContext(coordinator: coordinator, name: "a")
        let b = ObjectContext(coordinator: coordinator, name: "b")
        let id = try await a.perform { ctx in
            let author = try ctx.insert("Author")
            try author.setValue("Shared", forKey: "name")
            try ctx.save()
            return author.objectID
        }
        try await b.perform { ctx in
            let author = try ctx.existingObject(with: id)
            #expect(try author.value(forKey: "name") == .string("Shared"))
        }
        // The compiler refuses to hand an object to another context; smuggle one to test the run-time refusal. An
        // unsaved insert, so that `a` keeps it alive and it is deallocated on a's queue, not here (an object
        // deallocated off its context's queue traps like any other access there).
        let smuggled = try await a.perform { ctx in SmuggledObject(object: try ctx.insert("Author")) }
        let message = await b.perform { other in
            do {
                try other.delete(smuggled.object)
                return "no error"
            } catch {
                return "\(error)"
            }
        }
        #expect(message.contains("belongs to another context than 'b'"))
    }

    @Test func touchingAnObjectOffItsQueueTrapsNamingEntityObjectAndContext() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let model = try Model(entities: Fixtures.entities)
            let context = ObjectContext(coordinator: .inMemory(model: model), name: "importer")
            let smuggled = try await context.perform { ctx in SmuggledObject(object: try ctx.insert("Tag")) }
            _ = try? smuggled.object.value(forKey: "label")
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("ObjectGraph concurrency violation: Tag Tag/t"), "\(output)")
        #expect(output.contains("accessed off the queue of its context 'importer'"), "\(output)")
    }

    @Test func aDisabledCheckIsDocumentedToBeProcessWide() {
        // Only read here: switching it off would race with the other tests in this process.
        #expect(ConcurrencyChecks.isEnabled)
    }
}
