import Foundation
import Testing
@testable import ObjectGraph

/// Core Data's store-file calls: `setMetadata(_:for:)` keeps the app's values in the store,
/// `destroyPersistentStore(at:type:options:)` removes a store and what belongs to it, `replacePersistentStore(at:
/// withPersistentStoreFrom:)` copies one over another, and `migratePersistentStore(_:to:options:type:)` moves every
/// object to another store.
@Suite struct StoreFilesAndMetadataTests {
    /// Fixtures plus a cover image kept outside the row when large.
    static func model() throws -> Model {
        var entities = Fixtures.entities
        var cover = AttributeDescription("cover", .binary)
        cover.allowsExternalBinaryDataStorage = true
        entities[entities.firstIndex { $0.name == "Book" }!].attributes.append(cover)
        return try Model(entities: entities)
    }

    static let cover = Data((0..<200_000).map { UInt8($0 % 251) })

    /// An author with two books (one with a large cover), ordered chapters and shared tags.
    static func fill(_ coordinator: PersistentStoreCoordinator) async throws {
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let author = try ctx.insert("Author")
            try author.setValue("Ann", forKey: "name")
            let tags = try ["x", "y"].map { label in
                let tag = try ctx.insert("Tag")
                try tag.setValue(label, forKey: "label")
                return tag
            }
            for (title, isbn) in [("One", "111-1111"), ("Two", "222-2222")] {
                let book = try ctx.insert("Book")
                try book.setValue(title, forKey: "title")
                try book.setValue(isbn, forKey: "isbn")
                try book.setObject(author, forKey: "author")
                try book.setObjects(tags, forKey: "tags")
                if title == "One" { try book.setValue(Self.cover, forKey: "cover") }
                try book.setObjects(try ["c", "a", "b"].map { heading in
                    let chapter = try ctx.insert("Chapter")
                    try chapter.setValue("\(title)-\(heading)", forKey: "heading")
                    return chapter
                }, forKey: "chapters")
            }
            try ctx.save()
        }
    }

    /// Everything a store holds, by object: keys, values and relationships, comparable between stores.
    static func contents(_ coordinator: PersistentStoreCoordinator) async throws -> [String] {
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            var lines: [String] = []
            for entity in ["Author", "Book", "Tag", "Chapter"] {
                for object in try ctx.fetch(FetchRequest(entityName: entity)) {
                    var line = "\(object.objectID)"
                    for attribute in object.entity.attributes { line += " \(attribute.name)=\(try object.value(forKey: attribute.name))" }
                    for relationship in object.entity.relationships {
                        let ids = relationship.isToMany
                            ? try object.objects(forKey: relationship.name).map { "\($0.objectID)" }
                            : [try object.object(forKey: relationship.name).map { "\($0.objectID)" } ?? "-"]
                        line += " \(relationship.name)=\(relationship.isOrdered ? ids : ids.sorted())"
                    }
                    lines.append(line)
                }
            }
            return lines.sorted()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func theAppsMetadataLivesInTheStoreBesideItsOwn(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let model = try Self.model()
        let coordinator = try kind.coordinator(model, folder)
        #expect(try coordinator.metadata().isEmpty)
        try coordinator.setMetadata(["lastImport": "2026-11-29", "source": "feed"])
        try coordinator.setMetadata(["lastImport": "2026-11-30"])
        #expect(try coordinator.metadata() == ["lastImport": "2026-11-30"])
        // The store's own values are untouched: it reopens with its model.
        let reopened = kind == .memory ? coordinator : try kind.coordinator(model, folder)
        #expect(try reopened.metadata() == ["lastImport": "2026-11-30"])
    }

    @Test func destroyingAStoreRemovesWhatBelongsToItAndRefusesAnOpenOne() async throws {
        let folder = try TemporaryFolder()
        let url = folder.storeURL
        var coordinator: PersistentStoreCoordinator? = try PersistentStoreCoordinator(model: Self.model(), storeURL: url)
        try await Self.fill(coordinator!)
        #expect(FileManager.default.fileExists(atPath: url.path + "-external"))
        let refusal = #expect(throws: ObjectGraphError.self) { try PersistentStoreCoordinator.destroyPersistentStore(at: url) }
        #expect(refusal?.message.contains("release every coordinator") == true, "\(refusal?.message ?? "")")
        coordinator = nil
        try PersistentStoreCoordinator.destroyPersistentStore(at: url)
        for suffix in ["", "-wal", "-shm", "-external"] { #expect(!FileManager.default.fileExists(atPath: url.path + suffix), "\(suffix)") }
        // Destroying what is not there is not an error; a new store opens empty there.
        try PersistentStoreCoordinator.destroyPersistentStore(at: url)
        let fresh = try PersistentStoreCoordinator(model: Self.model(), storeURL: url)
        #expect(try await Self.contents(fresh).isEmpty)
    }

    @Test func replacingAStoreCopiesALiveOneWithItsExternalValues() async throws {
        let folder = try TemporaryFolder()
        let source = folder.url.appendingPathComponent("live.sqlite"), copy = folder.url.appendingPathComponent("copy.sqlite")
        let live = try PersistentStoreCoordinator(model: Self.model(), storeURL: source)
        try await Self.fill(live)
        // The destination held another store before.
        _ = try PersistentStoreCoordinator(model: Self.model(), storeURL: copy)
        try PersistentStoreCoordinator.replacePersistentStore(at: copy, withPersistentStoreFrom: source)
        let copied = try PersistentStoreCoordinator(model: Self.model(), storeURL: copy)
        #expect(try await Self.contents(copied) == Self.contents(live))
        let missing = #expect(throws: ObjectGraphError.self) {
            try PersistentStoreCoordinator.replacePersistentStore(at: copy, withPersistentStoreFrom: folder.url.appendingPathComponent("none.sqlite"))
        }
        #expect(missing?.message.contains("none.sqlite") == true)
    }

    /// SQLite to every store kind and back: the same objects with the same keys, values (the external cover
    /// included), orders and links; new objects get new keys; the metadata comes along; a store holding objects is
    /// refused.
    @Test(arguments: StoreKind.allCases)
    func migratingMovesEveryObjectToAnotherStore(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let model = try Self.model()
        let original = try PersistentStoreCoordinator(model: model, storeURL: folder.url.appendingPathComponent("original.sqlite"))
        try await Self.fill(original)
        try original.setMetadata(["origin": "original"])
        let expected = try await Self.contents(original)
        let moved = try original.migratePersistentStore(to: kind.store(model, folder, name: "moved"))
        #expect(try await Self.contents(moved) == expected)
        #expect(try moved.metadata() == ["origin": "original"])
        let back = try moved.migratePersistentStore(to: SQLiteStore(url: folder.url.appendingPathComponent("back.sqlite"), model: model))
        #expect(try await Self.contents(back) == expected)
        let newKey = try await ObjectContext(coordinator: moved).perform { ctx in
            let tag = try ctx.insert("Tag")
            try tag.setValue("z", forKey: "label")
            try ctx.save()
            return tag.objectID.rawKey
        }
        #expect(newKey == 3)
        let refusal = #expect(throws: ObjectGraphError.self) { _ = try original.migratePersistentStore(to: back.store) }
        #expect(refusal?.message.contains("already holds") == true, "\(refusal?.message ?? "")")
    }
}
