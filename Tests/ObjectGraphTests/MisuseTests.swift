import Foundation
import Testing
@testable import ObjectGraph

/// Holds a main context's facade so a test can carry it off the main actor, as an unsafe escape would.
final class SmuggledMainContext: @unchecked Sendable {
    let main: MainContext
    init(_ main: MainContext) { self.main = main }
}

/// What goes wrong when an app misuses the stack, and what it is told: every entry point checks its thread, an
/// object cut loose says why, and a store file deleted or replaced under an open store fails the save.
@Suite struct MisuseTests {
    @Test func theMainContextFacadeTrapsOffTheMainThread() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let model = try Model(entities: Fixtures.entities)
            let stack = DataStack(coordinator: .inMemory(model: model))
            let smuggled = await MainActor.run { stack.onMain { SmuggledMainContext($0) } }
            // What an unsafe escape does: a main-actor call made from another thread.
            let call: @MainActor () -> Void = { _ = try? smuggled.main.count(for: FetchRequest(entityName: "Tag")) }
            let escaped = unsafeBitCast(call, to: (@Sendable () -> Void).self)
            let thread = Thread { escaped() }
            thread.start()
            while true { sleep(1) }
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("ObjectGraph concurrency violation: context 'main' was used off its queue"), "\(output)")
    }

    @Test func anObjectOfAResetContextSaysSoWithEntityIDAndContext() async throws {
        let context = ObjectContext(coordinator: .inMemory(model: try Fixtures.model()), name: "editor")
        try await context.perform { ctx in
            let tag = try ctx.insert("Tag")
            try ctx.save()
            let id = tag.objectID
            ctx.reset()
            for attempt in [{ try ctx.delete(tag) }, { try ctx.refresh(tag, mergeChanges: false) }] {
                do {
                    try attempt()
                    Issue.record("a detached object was accepted")
                } catch let error as ObjectGraphError {
                    #expect(error.message == "Tag \(id) is inaccessible: its context was reset; it was handed to context 'editor'")
                }
            }
            let book = try ctx.insert("Book")
            let tags = try ctx.insert("Tag")
            try tags.setValue("fresh", forKey: "label")
            #expect(throws: ObjectGraphError.objectInaccessible(
                entity: "Tag", objectID: id, reason: "its context was reset; it was handed to context 'editor'")) {
                try book.setObjects([tag], forKey: "tags")
            }
        }
    }

    @Test func anObjectAnotherSaveDeletedSaysSo() async throws {
        let coordinator = PersistentStoreCoordinator.inMemory(model: try Fixtures.model())
        let a = ObjectContext(coordinator: coordinator, name: "a")
        let b = ObjectContext(coordinator: coordinator, name: "b")
        let id = try await a.perform { ctx in
            let tag = try ctx.insert("Tag")
            try ctx.save()
            return tag.objectID
        }
        let held = try await b.perform { ctx in SmuggledObject(object: try ctx.existingObject(with: id)) }
        var saves = a.notifications(.didSave).makeAsyncIterator()
        try await a.perform { ctx in
            try ctx.delete(try ctx.existingObject(with: id))
            try ctx.save()
        }
        let notification = try #require(await saves.next())
        try await b.perform { ctx in
            ctx.mergeChanges(fromContextDidSave: notification)
            do {
                try ctx.delete(held.object)
                Issue.record("an object another save deleted was deleted again")
            } catch let error as ObjectGraphError {
                #expect(error.message == "Tag \(id) is inaccessible: another context's save deleted it; it was handed to context 'b'")
            }
            held.release()
        }
    }

    @Test(arguments: ["deleted", "replaced"])
    func aStoreFileDeletedOrReplacedUnderAnOpenStoreFailsTheSave(_ what: String) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try PersistentStoreCoordinator(model: try Fixtures.model(), storeURL: folder.storeURL)
        let context = ObjectContext(coordinator: coordinator, name: "writer")
        try await context.perform { ctx in
            try ctx.insert("Tag").setValue("first", forKey: "label")
            try ctx.save()
        }
        let path = folder.storeURL.path
        if what == "deleted" {
            try FileManager.default.removeItem(atPath: path)
        } else {
            let copy = folder.url.appendingPathComponent("copy.sqlite")
            try FileManager.default.copyItem(atPath: path, toPath: copy.path)
            #expect(rename(copy.path, path) == 0, "the copy did not replace the store file")
        }
        try await context.perform { ctx in
            try ctx.insert("Tag").setValue("second", forKey: "label")
            do {
                try ctx.save()
                Issue.record("a save went into a store file that was \(what)")
            } catch let error as ObjectGraphError {
                #expect(error == .storeWriteFailed(
                    path: path, reason: "the store file was deleted or replaced since the store opened it; open the store again"))
                let unsaved = ctx.hasChanges
                #expect(unsaved)
            }
        }
    }
}
