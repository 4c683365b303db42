import Foundation
import Testing
@testable import ObjectGraph

/// A to-many's loaded contents: the list and its membership tests agree with a plain list and set whatever the
/// length (short lists are scanned, long ones keep a set), and a store's batched read of many owners agrees with
/// reading each owner alone.
@Suite struct RelatedIDsTests {
    @Test(arguments: [0 as UInt64, 1, 2, 3])
    func randomChangesAgreeWithAListAndASet(seed: UInt64) {
        var random = SplitMix(state: seed)
        let pool = (1...40).map { ObjectID(entityName: "Tag", rawKey: Int64($0)) }
        var contents = RelatedIDs(Array(pool.shuffled(using: &random).prefix(Int.random(in: 0...30, using: &random))))
        var list = contents.ids
        for _ in 0..<2_000 {
            let id = pool.randomElement(using: &random)!
            switch Int.random(in: 0..<5, using: &random) {
            case 0, 1:
                let added = contents.append(id)
                #expect(added == !list.contains(id))
                if added { list.append(id) }
            case 2:
                let removed = contents.remove(id)
                #expect(removed == list.contains(id))
                list.removeAll { $0 == id }
            case 3:
                let gone = Set(pool.shuffled(using: &random).prefix(Int.random(in: 0...6, using: &random)))
                contents.remove(gone)
                list.removeAll { gone.contains($0) }
            default:
                let new = ObjectID(entityName: "Tag", rawKey: -Int64.random(in: 1...1_000_000, using: &random))
                contents.replace(id, with: new)
                if let index = list.firstIndex(of: id) { list[index] = new }
            }
            #expect(contents.ids == list)
            #expect(contents.members == Set(list))
            #expect(pool.allSatisfy { contents.contains($0) == list.contains($0) })
            let reordered = RelatedIDs(list.shuffled(using: &random))
            #expect(contents.hasSameMembers(as: reordered))
            #expect(reordered.hasSameMembers(as: contents))
            if let first = list.first {
                #expect(!contents.hasSameMembers(as: RelatedIDs(Array(list.dropFirst()))))
                #expect(!RelatedIDs(list.filter { $0 != first }).hasSameMembers(as: contents))
            }
        }
    }

    /// An object's table of loaded to-many contents answers as a dictionary by relationship index would, whatever
    /// the order indexes are loaded and unloaded in.
    @Test(arguments: [0 as UInt64, 1, 2])
    func toManyTableAgreesWithADictionary(seed: UInt64) {
        var random = SplitMix(state: seed)
        var table = ToManyTable()
        var dictionary: [Int: RelatedIDs] = [:]
        for step in 0..<500 {
            let index = Int.random(in: 0..<6, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0: (table[index], dictionary[index]) = (nil, nil)
            case 1:
                let contents = RelatedIDs([ObjectID(entityName: "Tag", rawKey: Int64(step))])
                (table[index], dictionary[index]) = (contents, contents)
            case 2:
                table[index]?.append(ObjectID(entityName: "Tag", rawKey: -Int64(step)))
                dictionary[index]?.append(ObjectID(entityName: "Tag", rawKey: -Int64(step)))
            default:
                // A copy changed apart leaves the original as it was.
                var copy = table
                copy[index] = RelatedIDs()
                #expect(copy[index] == RelatedIDs())
            }
            #expect((0..<8).allSatisfy { table[$0] == dictionary[$0] }, "step \(step)")
            #expect(table.isEmpty == dictionary.isEmpty)
            #expect(table.keys == dictionary.keys.sorted())
            #expect(table.values == dictionary.sorted { $0.key < $1.key }.map(\.value))
            #expect(table.map(\.key) == table.keys && table.map(\.value) == table.values)
        }
    }

    /// Owners in any order, twice over, with and without destinations, through each kind of to-many storage: the
    /// inverse's foreign key (ordered and not) and a join table from either side.
    @Test(arguments: StoreKind.allCases)
    func aBatchOfOwnersReadsWhatEachOwnerReadsAlone(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let model = try Fixtures.model()
        let coordinator = try kind.coordinator(model, folder)
        let (books, authors, tags) = try await ObjectContext(coordinator: coordinator).perform { ctx in
            try seedLibrary(ctx)
            let lonely = try ctx.insert("Author")
            try lonely.setValue("nobody", forKey: "name")
            for book in try ctx.fetch(FetchRequest(entityName: "Book", format: "pages > 400")) {
                let headings = try stringValues([book], "title").map { ["\($0) II", "\($0) I"] }[0]
                try book.setObjects(try headings.map { heading in
                    let chapter = try ctx.insert("Chapter")
                    try chapter.setValue(heading, forKey: "heading")
                    return chapter
                }, forKey: "chapters")
            }
            try ctx.save()
            return try (ctx.fetch(FetchRequest(entityName: "Book")).map(\.objectID),
                        ctx.fetch(FetchRequest(entityName: "Author")).map(\.objectID),
                        ctx.fetch(FetchRequest(entityName: "Tag")).map(\.objectID))
        }
        let store = coordinator.store
        var sizes: Set<Int> = []
        for (entity, key, owners) in [("Book", "tags", books), ("Book", "chapters", books),
                                      ("Author", "books", authors), ("Tag", "books", tags)] {
            let relationship = try #require(try model.entity(named: entity).relationship(named: key))
            // Every owner (consecutive keys, asked as a range) and every other one (asked by their keys).
            let sparse = owners.sorted { $0.rawKey < $1.rawKey }.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
            let sparseAsked = Array(sparse.reversed())
            let sparseBatch = try store.relatedIDs(of: sparseAsked, relationship: relationship)
            #expect(sparseBatch.count == sparseAsked.count, "\(entity).\(key): one list per owner asked")
            for (owner, found) in zip(sparseAsked, sparseBatch) {
                let alone = try store.relatedIDs(of: owner, relationship: relationship)
                #expect(relationship.isOrdered ? found == alone : Set(found) == Set(alone), "\(entity).\(key) of \(owner), asked with every other owner")
            }
            // Every owner twice, in two orders, and an unsaved one: each place answered, the unsaved one empty.
            let asked = owners.reversed() + owners.shuffled() + [ObjectID(entityName: entity, rawKey: -7)]
            let batch = try store.relatedIDs(of: asked, relationship: relationship)
            #expect(batch.count == asked.count, "\(entity).\(key): one list per owner asked")
            #expect(batch.last == [], "\(entity).\(key): an unsaved owner has destinations")
            for (owner, found) in zip(asked, batch) where !owner.isTemporaryID {
                let alone = try store.relatedIDs(of: owner, relationship: relationship)
                #expect(relationship.isOrdered ? found == alone : Set(found) == Set(alone), "\(entity).\(key) of \(owner)")
                // Unordered destinations come in key order, as they did from one query sorted by SQLite.
                #expect(relationship.isOrdered || alone == alone.sorted { $0.rawKey < $1.rawKey }, "\(entity).\(key) of \(owner) out of key order")
                #expect(found.count == alone.count, "\(entity).\(key) of \(owner) read twice over")
                sizes.insert(min(alone.count, 2))
            }
        }
        // Owners without destinations, with one, and with several were all asked.
        #expect(sizes == [0, 1, 2])
    }
}

/// A member moved to another owner and not saved yet is not read back into its old owner's to-many from the store
/// (which still lists it there): loaded alone, prefetched, or followed by a cascading delete.
@Suite struct MovedMemberTests {
    static func moveZola(_ ctx: isolated ObjectContext) throws -> (zola: ManagedObject, anna: ManagedObject) {
        try seedLibrary(ctx)
        ctx.reset()
        let zola = try #require(try ctx.fetch(FetchRequest(entityName: "Book", format: "title == 'Zola'")).first)
        let anna = try #require(try ctx.fetch(FetchRequest(entityName: "Author", format: "name == 'anna'")).first)
        try zola.setObject(anna, forKey: "author")
        // zoë lets go of her own side of the move, so her books are read again from the store, which still lists
        // Zola among them.
        let zoe = try #require(try ctx.fetch(FetchRequest(entityName: "Author", format: "name == 'zoë'")).first)
        try ctx.refresh(zoe, mergeChanges: false)
        #expect(zoe.isFault)
        return (zola, anna)
    }

    @Test(arguments: StoreKind.allCases)
    func aMovedMemberStaysWithItsNewOwner(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        try await ObjectContext(coordinator: try kind.coordinator(try Fixtures.model(), folder)).perform { ctx in
            let (zola, anna) = try Self.moveZola(ctx)
            let zoe = try #require(try ctx.fetch(FetchRequest(entityName: "Author", format: "name == 'zoë'")).first)
            #expect(try zoe.objects(forKey: "books").isEmpty)
            #expect(try anna.objects(forKey: "books").contains(zola))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aMovedMemberIsNotPrefetchedIntoItsOldOwner(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        try await ObjectContext(coordinator: try kind.coordinator(try Fixtures.model(), folder)).perform { ctx in
            let (zola, _) = try Self.moveZola(ctx)
            var request = FetchRequest(entityName: "Author")
            request.relationshipKeyPathsForPrefetching = ["books"]
            let authors = try ctx.fetch(request)
            let books = try Dictionary(uniqueKeysWithValues: authors.map { (try stringValues([$0], "name")[0], try $0.objects(forKey: "books")) })
            #expect(books["zoë"]?.isEmpty == true)
            #expect(books["anna"]?.contains(zola) == true)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aCascadeFromTheOldOwnerSparesAMovedMember(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try kind.coordinator(try Fixtures.model(), folder))
        try await context.perform { ctx in
            _ = try Self.moveZola(ctx)
            let zoe = try #require(try ctx.fetch(FetchRequest(entityName: "Author", format: "name == 'zoë'")).first)
            try ctx.delete(zoe)
            try ctx.save()
            ctx.reset()
            let zola = try #require(try ctx.fetch(FetchRequest(entityName: "Book", format: "title == 'Zola'")).first)
            #expect(try zola.object(forKey: "author")?.value(forKey: "name") == .string("anna"))
        }
    }
}
