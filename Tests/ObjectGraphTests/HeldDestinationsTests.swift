import Foundation
import Testing
@testable import ObjectGraph

/// A relationship's destinations live as long as the source that handed them out, as in Core Data; a refresh or a
/// reset lets go of them, cycles included; and letting go of a long chain nests nothing.
@Suite struct HeldDestinationsTests {
    /// Runs `body` on a context over a SQLite store seeded with the fixtures' library, with that store.
    static func withLibrary(_ body: @Sendable (isolated ObjectContext, SQLiteStore) throws -> Void) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try StoreKind.sqlite.coordinator(try Fixtures.model(), folder)
        let store = try #require(coordinator.store as? SQLiteStore)
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            try seedLibrary(ctx)
            try body(ctx, store)
        }
    }

    /// Zola, fetched anew: zoë's only book.
    static func zola(_ ctx: isolated ObjectContext) throws -> ManagedObject {
        try #require(try ctx.fetch(FetchRequest(entityName: "Book", format: "title == 'Zola'")).first)
    }

    @Test func aDestinationReadOnceLivesAsLongAsItsSource() async throws {
        try await Self.withLibrary { ctx, store in
            ctx.reset()
            let book = try Self.zola(ctx)
            weak var author: ManagedObject?
            author = try book.object(forKey: "author")
            #expect(try author?.value(forKey: "name") == .string("zoë"))
            // Nothing else holds the author, yet it is the same loaded object the next time, read with no query.
            let before = store.queryCount
            do {
                let again = try #require(try book.object(forKey: "author"))
                #expect(again === author)
                #expect(!again.isFault)
                #expect(try again.value(forKey: "name") == .string("zoë"))
            }
            #expect(store.queryCount == before)

            weak var tag: ManagedObject?
            tag = try book.objects(forKey: "tags").first
            #expect(tag != nil)

            // Turning the source into a fault lets go of what it held.
            try ctx.refresh(book, mergeChanges: false)
            #expect(author == nil)
            #expect(tag == nil)
        }
    }

    /// One relationship's destinations are held in the object itself and a second's move both into a table: in
    /// either order of reading, each stays held, a read of one relationship replaces only its own, and a refresh
    /// lets go of all of them.
    @Test func destinationsOfSeveralRelationshipsAreEachHeldInAnyOrder() async throws {
        try await Self.withLibrary { ctx, store in
            for authorFirst in [true, false] {
                ctx.reset()
                let book = try Self.zola(ctx)
                weak var author: ManagedObject?
                weak var tag: ManagedObject?
                if authorFirst {
                    author = try book.object(forKey: "author")
                    #expect(author != nil, "read alone, the author is held")
                    tag = try book.objects(forKey: "tags").first
                } else {
                    tag = try book.objects(forKey: "tags").first
                    #expect(tag != nil, "read alone, the tags are held")
                    author = try book.object(forKey: "author")
                }
                #expect(author != nil && tag != nil)
                // Read again, each relationship gives its own held destinations, with no query.
                let before = store.queryCount
                #expect(try book.object(forKey: "author") === author)
                #expect(try book.objects(forKey: "tags").first === tag)
                #expect(try book.object(forKey: "author") === author)
                #expect(store.queryCount == before)
                try ctx.refresh(book, mergeChanges: false)
                #expect(author == nil && tag == nil, "author first: \(authorFirst)")
            }
        }
    }

    /// Zola and zoë, her only book, each holding the other through a relationship read on both sides: a cycle, as in
    /// Core Data.
    static func zolaAndZoeHoldingEachOther(_ ctx: isolated ObjectContext) throws -> (book: ManagedObject, author: ManagedObject) {
        try seedLibrary(ctx)
        ctx.reset()
        let zola = try Self.zola(ctx)
        let zoe = try #require(try zola.object(forKey: "author"))
        #expect(try zoe.objects(forKey: "books").contains(zola))
        return (zola, zoe)
    }

    @Test func prefetchedAuthorsLiveWithTheirBooksLoadedOnce() async throws {
        try await Self.withLibrary { ctx, store in
            ctx.reset()
            var request = FetchRequest(entityName: "Book")
            request.relationshipKeyPathsForPrefetching = ["author"]
            let books = try ctx.fetch(request)
            // Before any book reads its relationship, its author is registered and loaded: the book holds it.
            let authors = ctx.registeredObjects.filter { $0.entity.name == "Author" }
            #expect(authors.count == 4)
            #expect(authors.allSatisfy { !$0.isFault })
            let (queries, loaded) = (store.queryCount, ctx.materializedObjectCount)
            for book in books {
                let author = try #require(try book.object(forKey: "author"))
                #expect(authors.contains(author), "\(book) reached an author the prefetch did not make")
                _ = try author.value(forKey: "name")
            }
            #expect(store.queryCount == queries)
            #expect(ctx.materializedObjectCount == loaded, "reading the authors loaded objects again")
        }
    }

    /// A read returns the held destination only while the registry would return it too.
    @Test func aHeldAuthorIsReadOnlyWhileItIsTheBooksAuthor() async throws {
        try await Self.withLibrary { ctx, _ in
            ctx.reset()
            let book = try Self.zola(ctx)
            let first = try #require(try book.object(forKey: "author"))
            let other = try #require(try ctx.fetch(FetchRequest(entityName: "Author", format: "name == 'anna'")).first)
            try book.setObject(other, forKey: "author")
            #expect(try book.object(forKey: "author") === other)
            try book.setObject(first, forKey: "author")
            try ctx.refresh(first, mergeChanges: false)
            #expect(try book.object(forKey: "author") === first, "a refreshed author is still the registry's object")
            try book.setObject(nil, forKey: "author")
            #expect(try book.object(forKey: "author") == nil)
            try book.setObject(first, forKey: "author")
            try ctx.save()
            ctx.reset()
            let again = try #require(try Self.zola(ctx).object(forKey: "author"))
            #expect(again !== first, "an author the reset let go of was read again")
            #expect(try again.value(forKey: "name") == .string("zoë"))
        }
    }

    @Test func aResetFreesObjectsThatHoldEachOther() async throws {
        let folder = try TemporaryFolder()
        try await ObjectContext(coordinator: try StoreKind.sqlite.coordinator(try Fixtures.model(), folder)).perform { ctx in
            weak var book: ManagedObject?
            weak var author: ManagedObject?
            do { (book, author) = try Self.zolaAndZoeHoldingEachOther(ctx) }
            #expect(book != nil && author != nil)
            #expect(ctx.registeredObjects.count == 2)
            ctx.reset()
            #expect(book == nil)
            #expect(author == nil)
        }
    }

    @Test func aRefreshBreaksACycle() async throws {
        let folder = try TemporaryFolder()
        try await ObjectContext(coordinator: try StoreKind.sqlite.coordinator(try Fixtures.model(), folder)).perform { ctx in
            weak var book: ManagedObject?
            weak var author: ManagedObject?
            do {
                let (zola, zoe) = try Self.zolaAndZoeHoldingEachOther(ctx)
                (book, author) = (zola, zoe)
                try ctx.refresh(zoe, mergeChanges: false)
            }
            #expect(book == nil)
            #expect(author == nil)
            #expect(ctx.registeredObjects.isEmpty)
        }
    }

    /// Freed by its head alone, a chain of objects each holding the next would nest a deinitializer per link.
    @Test func freeingALongChainOfHeldObjectsNestsNoDeinitializers() async throws {
        let model = try Model(entities: [
            EntityDescription("Node", attributes: [.init("index", .int64)], relationships: [
                .init("next", destination: "Node", inverse: "previous"),
                .init("previous", destination: "Node", inverse: "next"),
            ]),
        ])
        let links = 100_000
        try await ObjectContext(coordinator: PersistentStoreCoordinator.inMemory(model: model)).perform { ctx in
            let headID: ObjectID
            do {
                var previous: ManagedObject?
                var head: ManagedObject?
                for index in 0..<links {
                    let node = try ctx.insert("Node")
                    try node.setValue(index, forKey: "index")
                    try previous?.setObject(node, forKey: "next")
                    head = head ?? node
                    previous = node
                }
                try ctx.save()
                headID = try #require(head).objectID
            }
            ctx.reset()
            do {
                let head = try ctx.existingObject(with: headID)
                var node = head
                var count = 1
                while let next = try node.object(forKey: "next") {
                    node = next
                    count += 1
                }
                #expect(count == links)
                #expect(try node.value(forKey: "index") == .int(Int64(links - 1)))
                #expect(ctx.state.registered.count == links)
            }
            // Only the head held the chain: letting it go freed every link, one at a time.
            #expect(ctx.state.registered.count == 0)
            #expect(ctx.state.heldAwaitingRelease.isEmpty)
        }
    }
}
