import Foundation
import Testing
import ObjectGraph

/// Core Data's `shouldDeleteInaccessibleFaults` (on by default): "When this property is set to true, the context
/// returns a managed object with the following characteristics: the object's attributes, including scalars, nullable,
/// and mandatory attributes are all set to nil or 0" — for a fault whose row another context deleted before it
/// was read. Typed properties read such an object so; the untyped API keeps the error.
@Suite struct InaccessibleFaultTests {
    /// A novel saved with a writer and a part, a fault for it in `reader`, then the novel deleted and saved by
    /// another context: the fault's row is gone.
    static func goneNovel(_ kind: StoreKind, _ folder: TemporaryFolder) async throws -> (reader: ObjectContext, novel: ObjectID) {
        let coordinator = try kind.coordinator(try MacroEntityTests.model(), folder)
        let id = try await ObjectContext(coordinator: coordinator).perform { ctx in
            let writer = try ctx.insert(Writer.self)
            writer.name = "Ursula"
            let novel = try ctx.insert(Novel.self)
            novel.title = "The Dispossessed"
            novel.pages = 387
            novel.isbn = "0-06-012563-2"
            novel.writer = writer
            let part = try ctx.insert(Part.self)
            part.novel = novel
            try ctx.save()
            return novel.objectID
        }
        let reader = ObjectContext(coordinator: coordinator)
        try await reader.perform { ctx in _ = try ctx.object(with: id) }
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ctx.delete(try ctx.existingObject(with: id))
            try ctx.save()
        }
        return (reader, id)
    }

    @Test(arguments: StoreKind.allCases)
    func typedPropertiesOfAFaultWhoseRowIsGoneReadNilAndZero(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let (reader, id) = try await Self.goneNovel(kind, folder)
        try await reader.perform { ctx in
            let isOn = ctx.shouldDeleteInaccessibleFaults
            #expect(isOn)
            let novel = try #require(try ctx.object(with: id) as? Novel)
            #expect(novel.isFault)
            // Mandatory values read as zero, optional ones as nil, relationships as empty.
            #expect(novel.title == "" && novel.pages == 0 && novel.price == 0)
            #expect(novel.isbn == nil && novel.rating == nil && novel.shelf == nil)
            #expect(novel.writer == nil && novel.parts.isEmpty)
            // Not a change of the context's.
            let changed = ctx.hasChanges
            #expect(!changed && !novel.isFault)
            // The untyped API says what happened.
            #expect(throws: ObjectGraphError.objectNotFound(id)) { try ctx.existingObject(with: id) }
            // A change made to it fails at save: its row is gone.
            novel.pages = 12
            #expect(throws: ObjectGraphError.self) { try ctx.save() }
        }
    }

    @Test func withTheOptionOffATypedPropertyTrapsNamingTheObject() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = try TemporaryFolder()
            let (reader, id) = try await Self.goneNovel(.memory, folder)
            try await reader.perform { ctx in
                ctx.shouldDeleteInaccessibleFaults = false
                let novel = try ctx.object(with: id) as? Novel
                _ = novel?.title
            }
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("no stored object for Novel/"), "\(output)")
    }
}
