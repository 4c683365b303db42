import ExampleStores
import Foundation
import Synchronization
import Testing
@testable import ObjectGraph

/// An atomic store (Core Data's `NSAtomicStore`: loaded whole, written whole) in a file format the app writes: what
/// it keeps across openings, what it refuses, and that a write that fails keeps nothing. The conformance suite
/// (ObjectGraphPostgresTests) runs every store-level behaviour on it too.
@Suite struct AtomicStoreTests {
    static func open(_ folder: TemporaryFolder, model: Model? = nil) throws -> PersistentStoreCoordinator {
        let model = try model ?? Fixtures.model()
        return PersistentStoreCoordinator(model: model, store: try AtomicStore(model: model, file: JSONStoreFile(url: folder.url.appendingPathComponent("store.json"))))
    }

    /// Saves an author with two books (tags shared, ordered chapters) and returns the IDs of the author and a book.
    static func seed(_ coordinator: PersistentStoreCoordinator) async throws -> (author: ObjectID, book: ObjectID) {
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let author = try ctx.insert("Author")
            try author.setValue("Ann", forKey: "name")
            let tag = try ctx.insert("Tag")
            try tag.setValue("sf", forKey: "label")
            var books: [ManagedObject] = []
            for (index, title) in ["Dune", "Emma"].enumerated() {
                let book = try ctx.insert("Book")
                try book.setValue(title, forKey: "title")
                try book.setValue(100 + index, forKey: "pages")
                try book.setObject(author, forKey: "author")
                try book.addObject(tag, forKey: "tags")
                for heading in ["One", "Two", "Three"] {
                    let chapter = try ctx.insert("Chapter")
                    try chapter.setValue("\(title) \(heading)", forKey: "heading")
                    try book.addObject(chapter, forKey: "chapters")
                }
                books.append(book)
            }
            try ctx.save()
            return (author.objectID, books[0].objectID)
        }
    }

    @Test func aStoreOpenedAgainHoldsItsObjectsKeysAndURIs() async throws {
        let folder = try TemporaryFolder()
        let first = try Self.open(folder)
        #expect(FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("store.json").path), "a new store is written at once")
        let (author, book) = try await Self.seed(first)
        try first.setMetadata(["app.syncedAt": "noon"])
        let uri = first.uriRepresentation(for: book)
        let second = try Self.open(folder)
        #expect(second.store.identifier == first.store.identifier)
        #expect(try second.managedObjectID(forURIRepresentation: uri) == book)
        #expect(try second.metadata() == ["app.syncedAt": "noon"])
        try await ObjectContext(coordinator: second).perform { ctx in
            let read = try ctx.existingObject(with: book)
            #expect(try read.value(forKey: "title") == .string("Dune"))
            #expect(try read.object(forKey: "author")?.objectID == author)
            #expect(try read.objects(forKey: "chapters").map { try $0.value(forKey: "heading") } == ["Dune One", "Dune Two", "Dune Three"].map(AttributeValue.string))
            #expect(try read.objects(forKey: "tags").first?.objects(forKey: "books").count == 2)
            // A key of a deleted object is not handed out again, even by a store opened afterwards.
            try ctx.delete(ctx.existingObject(with: author))
            try ctx.save()
        }
        let third = try Self.open(folder)
        let newAuthor = try await ObjectContext(coordinator: third).perform { ctx in
            let author = try ctx.insert("Author")
            try author.setValue("Bo", forKey: "name")
            try ctx.save()
            return author.objectID
        }
        #expect(newAuthor.rawKey > author.rawKey)
        #expect(try third.store.count(StoreFetchRequest(entityName: "Book")) == 0, "the author's books went with it (cascade)")
    }

    @Test func aStoreWrittenWithAnotherModelIsRefused() async throws {
        let folder = try TemporaryFolder()
        _ = try await Self.seed(try Self.open(folder))
        var entities = Fixtures.entities
        entities[0].attributes.append(AttributeDescription("born", .date))
        #expect {
            _ = try Self.open(folder, model: try Model(entities: entities))
        } throws: { error in
            guard case ObjectGraphError.modelMismatch(let path, _, _) = error else { return false }
            return path.hasSuffix("store.json")
        }
    }

    enum Damage: String, CaseIterable, Sendable {
        case unknownEntity, unknownAttribute, linkToNoObject, toManyKeptByItsInverse

        /// What the error must name.
        var named: String {
            switch self {
            case .unknownEntity: "Essay"
            case .unknownAttribute: "subtitle"
            case .linkToNoObject: "Author/p99"
            case .toManyKeptByItsInverse: "books"
            }
        }

        func apply(to object: inout AtomicStoreContents.Object) {
            switch self {
            case .unknownEntity: object.objectID = ObjectID(entityName: "Essay", rawKey: 9)
            case .unknownAttribute: object.values["subtitle"] = .string("x")
            case .linkToNoObject: object.relationships["author"] = [ObjectID(entityName: "Author", rawKey: 99)]
            case .toManyKeptByItsInverse: object.relationships["books"] = []
            }
        }
    }

    /// Contents that do not fit the model are refused at open, naming the object and what is wrong; the file stays
    /// as it was.
    @Test(arguments: Damage.allCases)
    func contentsThatDoNotFitTheModelAreRefusedNamingTheObject(_ damage: Damage) async throws {
        let folder = try TemporaryFolder()
        let (_, book) = try await Self.seed(try Self.open(folder))
        let file = JSONStoreFile(url: folder.url.appendingPathComponent("store.json"))
        var contents = try #require(try file.read())
        // The book's, or (for a to-many) its author's.
        let index = try #require(contents.objects.firstIndex {
            damage == .toManyKeptByItsInverse ? $0.objectID.entityName == "Author" : $0.objectID == book
        })
        damage.apply(to: &contents.objects[index])
        try file.write(contents)
        let bytes = try Data(contentsOf: file.url)
        let error = #expect(throws: ObjectGraphError.self) { _ = try Self.open(folder) }
        #expect(error?.description.contains(damage.named) == true, "\(String(describing: error))")
        #expect(try Data(contentsOf: file.url) == bytes)
    }

    @Test func twoObjectsOfOneTreeWithOneKeyAreRefused() async throws {
        let folder = try TemporaryFolder()
        _ = try await Self.seed(try Self.open(folder))
        let file = JSONStoreFile(url: folder.url.appendingPathComponent("store.json"))
        var contents = try #require(try file.read())
        // A Movie with a Book's key: both are rows of Media's tree.
        let book = try #require(contents.objects.first { $0.objectID.entityName == "Book" })
        contents.objects.append(AtomicStoreContents.Object(objectID: ObjectID(entityName: "Movie", rawKey: book.objectID.rawKey), version: 1, values: ["title": .string("M")]))
        try file.write(contents)
        let error = #expect(throws: ObjectGraphError.self) { _ = try Self.open(folder) }
        #expect(error?.description.contains("Media") == true && error?.description.contains("\(book.objectID.rawKey)") == true)
    }

    /// A file that cannot be written fails the save that asked for it, naming the file: the store keeps what it had,
    /// the context keeps its changes, and the save goes through once the file can be written again.
    @Test func aFailedWriteKeepsNothingAndTheSaveCanBeRetried() async throws {
        let folder = try TemporaryFolder()
        let file = SwitchableFile(JSONStoreFile(url: folder.url.appendingPathComponent("store.json")))
        let model = try Fixtures.model()
        let coordinator = PersistentStoreCoordinator(model: model, store: try AtomicStore(model: model, file: file))
        let context = ObjectContext(coordinator: coordinator)
        let bytes = try await context.perform { ctx in
            let author = try ctx.insert("Author")
            try author.setValue("Ann", forKey: "name")
            try ctx.save()
            try author.setValue("Annie", forKey: "name")
            try ctx.insert("Tag").setValue("new", forKey: "label")
            return try Data(contentsOf: file.inner.url)
        }
        file.fails.store(true, ordering: .relaxed)
        await context.perform { ctx in
            let error = #expect(throws: ObjectGraphError.self) { try ctx.save() }
            #expect(error?.description.contains(file.location) == true)
            let unsaved = ctx.hasChanges
            #expect(unsaved)
        }
        #expect(try Data(contentsOf: file.inner.url) == bytes)
        #expect(try coordinator.store.count(StoreFetchRequest(entityName: "Tag")) == 0)
        let stored = try await ObjectContext(coordinator: coordinator).perform { try $0.fetch(FetchRequest(entityName: "Author")).first?.value(forKey: "name") }
        #expect(stored == .string("Ann"))
        file.fails.store(false, ordering: .relaxed)
        try await context.perform { try $0.save() }
        let reopened = try AtomicStore(model: model, file: file.inner)
        #expect(try reopened.count(StoreFetchRequest(entityName: "Tag")) == 1)
        #expect(try reopened.fetch(StoreFetchRequest(entityName: "Author")).first?.values[0] == .string("Annie"))
    }
}

/// A file whose writes can be made to fail.
final class SwitchableFile: AtomicStoreFile {
    let inner: JSONStoreFile
    let fails = Atomic(false)

    init(_ inner: JSONStoreFile) { self.inner = inner }

    var location: String { inner.location }
    func read() throws -> AtomicStoreContents? { try inner.read() }

    func write(_ contents: AtomicStoreContents) throws {
        if fails.load(ordering: .relaxed) { throw CocoaError(.fileWriteNoPermission) }
        try inner.write(contents)
    }
}
