import Foundation
import Testing
@testable import ObjectGraph

struct Point: Codable, Equatable {
    var x: Double
    var y: Double
}

@Suite struct PersistenceTests {
    @Test func everyAttributeTypeRoundTripsThroughAReopenedFile() async throws {
        let folder = try TemporaryFolder()
        let model = try Fixtures.model()
        let date = Date(timeIntervalSince1970: 1_700_000_000.123456)
        let decimal = Decimal(string: "12345678901234567890.123456789")!
        let bytes = Data([0, 1, 2, 255, 0, 42])
        let uuid = UUID()
        let point = try JSONEncoder().encode(Point(x: 1.5, y: -2))
        let expected: [String: AttributeValue] = [
            "string": .string("héllo \"world\"; DROP TABLE x; -- 拿破仑"), "bool": .bool(true), "int16": .int(-32768),
            "int32": .int(2_147_483_647), "int64": .int(Int64.min), "double": .double(0.1 + 0.2),
            "float": .double(Double(Float(3.25))), "decimal": .decimal(decimal), "date": .date(date), "data": .data(bytes),
            "uuid": .uuid(uuid), "url": .url(URL(string: "https://example.com/a?b=c#d")!), "codable": .data(point),
        ]
        let id = try await {
            let context = ObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL))
            return try await context.perform { ctx in
                let full = try ctx.insert("Sample")
                for (key, value) in expected { try full.setValue(value, forKey: key) }
                let empty = try ctx.insert("Sample")
                try ctx.save()
                #expect(!empty.objectID.isTemporaryID)
                return [full.objectID, empty.objectID]
            }
        }()
        let reopened = ObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL))
        try await reopened.perform { ctx in
            let full = try ctx.existingObject(with: id[0])
            for (key, value) in expected {
                #expect(try full.value(forKey: key) == value, "\(key)")
            }
            if case .date(let stored) = try full.value(forKey: "date") {
                #expect(stored.timeIntervalSinceReferenceDate == date.timeIntervalSinceReferenceDate)
            }
            let empty = try ctx.existingObject(with: id[1])
            for key in expected.keys { #expect(try empty.value(forKey: key) == .null, "\(key)") }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func relationshipsSurviveReopening(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let model = try Fixtures.model()
        let coordinator = try kind.coordinator(model, folder)
        let ids = try await ObjectContext(coordinator: coordinator).perform { ctx in
            let author = try ctx.insert("Author")
            try author.setValue("Le Guin", forKey: "name")
            let books = try (0..<3).map { index in
                let book = try ctx.insert("Book")
                try book.setValue("Book \(index)", forKey: "title")
                try book.setObject(author, forKey: "author")
                return book
            }
            #expect(try author.objects(forKey: "books").count == 3)
            let tags = try (0..<2).map { index in
                let tag = try ctx.insert("Tag")
                try tag.setValue("tag\(index)", forKey: "label")
                return tag
            }
            try books[0].setObjects(tags, forKey: "tags")
            try tags[1].addObject(books[1], forKey: "books")
            #expect(Set(try tags[1].objects(forKey: "books")) == Set([books[0], books[1]]))
            let chapters = try (0..<4).map { index in
                let chapter = try ctx.insert("Chapter")
                try chapter.setValue("C\(index)", forKey: "heading")
                return chapter
            }
            try books[0].setObjects([chapters[2], chapters[0], chapters[3], chapters[1]], forKey: "chapters")
            try ctx.save()
            return (author.objectID, books.map(\.objectID), tags.map(\.objectID))
        }
        let reader = kind == .sqlite
            ? ObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL))
            : ObjectContext(coordinator: coordinator)
        try await reader.perform { ctx in
            let author = try ctx.existingObject(with: ids.0)
            let books = try author.objects(forKey: "books")
            #expect(Set(books.map(\.objectID)) == Set(ids.1))
            let first = try ctx.existingObject(with: ids.1[0])
            #expect(try first.object(forKey: "author") === author)
            #expect(Set(try first.objects(forKey: "tags").map(\.objectID)) == Set(ids.2))
            let tag1 = try ctx.existingObject(with: ids.2[1])
            #expect(Set(try tag1.objects(forKey: "books").map(\.objectID)) == Set([ids.1[0], ids.1[1]]))
            #expect(try first.objects(forKey: "chapters").map { try $0.value(forKey: "heading") }
                == [.string("C2"), .string("C0"), .string("C3"), .string("C1")])
        }
    }

    /// One save updating many rows in different ways (other columns, other entities of one table, a to-one): each
    /// row gets exactly its own changes, whatever order the context lists them in and however the store groups
    /// rows that change the same columns.
    @Test(arguments: StoreKind.allCases)
    func updatesOfDifferentColumnsInOneSaveWriteEachRowsOwn(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let model = try Fixtures.model()
        let coordinator = try kind.coordinator(model, folder)
        let (authorIDs, bookIDs, movieIDs) = try await ObjectContext(coordinator: coordinator).perform { ctx in
            let authors = try (0..<2).map { index in
                let author = try ctx.insert("Author")
                try author.setValue("A\(index)", forKey: "name")
                return author
            }
            var books: [ManagedObject] = [], movies: [ManagedObject] = []
            for index in 0..<60 {
                let book = try ctx.insert("Book")
                try book.setValue("B\(index)", forKey: "title")
                try book.setValue(10 + index, forKey: "pages")
                books.append(book)
                if index % 3 == 0 {
                    let movie = try ctx.insert("Movie")
                    try movie.setValue("M\(index)", forKey: "title")
                    try movie.setValue(index, forKey: "minutes")
                    movies.append(movie)
                }
            }
            try ctx.save()
            return (authors.map(\.objectID), books.map(\.objectID), movies.map(\.objectID))
        }
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            // Interleaved: books and movies alternate, and consecutive books change different columns.
            for (index, id) in bookIDs.enumerated() {
                let book = try ctx.existingObject(with: id)
                switch index % 4 {
                case 0: try book.setValue(1000 + index, forKey: "pages")
                case 1: try book.setValue("B\(index)!", forKey: "title")
                case 2:
                    try book.setValue(2000 + index, forKey: "pages")
                    try book.setValue("B\(index)?", forKey: "title")
                default: try book.setObject(try ctx.existingObject(with: authorIDs[index % 2]), forKey: "author")
                }
                if index % 3 == 0 { try ctx.existingObject(with: movieIDs[index / 3]).setValue(500 + index, forKey: "minutes") }
            }
            try ctx.save()
        }
        let reader = kind == .sqlite
            ? ObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL))
            : ObjectContext(coordinator: coordinator)
        try await reader.perform { ctx in
            for (index, id) in bookIDs.enumerated() {
                let book = try ctx.existingObject(with: id)
                let expected: (pages: Int, title: String, author: ObjectID?) = switch index % 4 {
                case 0: (1000 + index, "B\(index)", nil)
                case 1: (10 + index, "B\(index)!", nil)
                case 2: (2000 + index, "B\(index)?", nil)
                default: (10 + index, "B\(index)", authorIDs[index % 2])
                }
                #expect(try book.value(forKey: "pages") == .int(Int64(expected.pages)), "book \(index)")
                #expect(try book.value(forKey: "title") == .string(expected.title), "book \(index)")
                #expect(try book.object(forKey: "author")?.objectID == expected.author, "book \(index)")
            }
            for (index, id) in movieIDs.enumerated() {
                let movie = try ctx.existingObject(with: id)
                #expect(try movie.value(forKey: "minutes") == .int(Int64(500 + index * 3)), "movie \(index)")
                #expect(try movie.value(forKey: "title") == .string("M\(index * 3)"), "movie \(index)")
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func cascadeRemovesTheGraphAndNullifyLetsGo(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Fixtures.model(), folder)
        let context = ObjectContext(coordinator: coordinator)
        try await context.perform { ctx in
            let agent = try ctx.insert("Agent")
            let author = try ctx.insert("Author")
            try author.setValue("A", forKey: "name")
            try author.setObject(agent, forKey: "agent")
            for index in 0..<2 {
                let book = try ctx.insert("Book")
                try book.setValue("B\(index)", forKey: "title")
                try book.setObject(author, forKey: "author")
                let chapter = try ctx.insert("Chapter")
                try chapter.setObject(book, forKey: "book")
            }
            try ctx.save()
            try ctx.delete(author)
            try ctx.save()
            #expect(try ctx.fetch(FetchRequest(entityName: "Book")).isEmpty)
            #expect(try ctx.fetch(FetchRequest(entityName: "Chapter")).isEmpty)
            #expect(try agent.objects(forKey: "clients").isEmpty)
            #expect(author.isDeleted)
            #expect(throws: ObjectGraphError.self) { try author.value(forKey: "name") }
        }
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let agents = try ctx.fetch(FetchRequest(entityName: "Agent"))
            #expect(agents.count == 1)
            #expect(try agents[0].objects(forKey: "clients").isEmpty)
            #expect(try ctx.count(for: FetchRequest(entityName: "Chapter")) == 0)
        }
    }

    /// Deleting many objects loads what the rules follow a relationship at a time, not an object at a time; a
    /// survivor's to-many loses the deleted members whether it was loaded before the save or only after it.
    @Test(arguments: StoreKind.allCases)
    func deletingManyObjectsAppliesTheRulesToEveryoneInFewReads(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Fixtures.model(), folder)
        let (bookIDs, tagIDs) = try await ObjectContext(coordinator: coordinator).perform { ctx in
            let tags = try (0..<2).map { index in
                let tag = try ctx.insert("Tag")
                try tag.setValue("T\(index)", forKey: "label")
                return tag
            }
            let books = try (0..<30).map { index in
                let book = try ctx.insert("Book")
                try book.setValue("B\(index)", forKey: "title")
                try book.setObjects(tags, forKey: "tags")
                let chapter = try ctx.insert("Chapter")
                try chapter.setObject(book, forKey: "book")
                return book
            }
            try ctx.save()
            return (books.map(\.objectID), tags.map(\.objectID))
        }
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let loadedTag = try ctx.existingObject(with: tagIDs[0])
            #expect(try loadedTag.objects(forKey: "books").count == 30)
            for id in bookIDs.prefix(20) { try ctx.delete(try ctx.existingObject(with: id)) }
            let before = (coordinator.store as? SQLiteStore)?.queryCount
            try ctx.save()
            if let before, let after = (coordinator.store as? SQLiteStore)?.queryCount {
                // The books' tags, their chapters, the chapters' rows, and the tag not loaded yet: a read per
                // relationship, not per book.
                #expect(after - before == 4, "deleting 20 books ran \(after - before) reads")
            }
            let survivors = Set(bookIDs.suffix(10))
            #expect(Set(try loadedTag.objects(forKey: "books").map(\.objectID)) == survivors)
            let otherTag = try ctx.existingObject(with: tagIDs[1])
            #expect(Set(try otherTag.objects(forKey: "books").map(\.objectID)) == survivors)
            #expect(try ctx.count(for: FetchRequest(entityName: "Chapter")) == 10)
            #expect(try ctx.count(for: FetchRequest(entityName: "Book")) == 10)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func denyBlocksTheSaveNamingObjectAndRelationship(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try kind.coordinator(try Fixtures.model(), folder))
        try await context.perform { ctx in
            let author = try ctx.insert("Author")
            try author.setValue("A", forKey: "name")
            let profile = try ctx.insert("Profile")
            try author.setObject(profile, forKey: "profile")
            try ctx.save()
            try ctx.delete(author)
            do {
                try ctx.save()
                Issue.record("the save went through")
            } catch let error as ObjectGraphError {
                guard case .deleteDenied(let entity, let id, let relationship, 1) = error else {
                    Issue.record("unexpected \(error)")
                    return
                }
                #expect(entity == "Author" && id == author.objectID && relationship == "profile")
                #expect(error.message.contains("Author \(author.objectID)") && error.message.contains("'profile'"))
            }
            let (pending, deleted) = (ctx.hasChanges, ctx.deletedObjects)
            #expect(pending)
            #expect(deleted == [author])
            ctx.rollback()
            #expect(!author.isDeleted)
            #expect(try profile.object(forKey: "author") === author)
        }
    }

    @Test func temporaryIDsBecomePermanentAndURIsResolveAfterReopening() async throws {
        let folder = try TemporaryFolder()
        let model = try Fixtures.model()
        let (uri, id, early) = try await {
            let coordinator = try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL)
            return try await ObjectContext(coordinator: coordinator).perform { ctx in
                let tag = try ctx.insert("Tag")
                try tag.setValue("swift", forKey: "label")
                let temporary = tag.objectID
                #expect(temporary.isTemporaryID)
                let other = try ctx.insert("Tag")
                try ctx.obtainPermanentIDs(for: [other])
                #expect(!other.objectID.isTemporaryID)
                let early = other.objectID
                try ctx.save()
                #expect(!tag.objectID.isTemporaryID)
                #expect(other.objectID == early)
                // The temporary ID still leads to the object.
                #expect(try ctx.object(with: temporary) === tag)
                return (coordinator.uriRepresentation(for: tag.objectID), tag.objectID, early)
            }
        }()
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL)
        let resolved = try coordinator.managedObjectID(forURIRepresentation: uri)
        #expect(resolved == id)
        let data = try JSONEncoder().encode(resolved)
        #expect(try JSONDecoder().decode(ObjectID.self, from: data) == id)
        try await ObjectContext(coordinator: coordinator).perform { ctx throws in
            #expect(try ctx.existingObject(with: resolved).value(forKey: "label") == .string("swift"))
            #expect(try ctx.existingObject(with: early).value(forKey: "label") == .null)
        }
        #expect(throws: ObjectGraphError.self) {
            try coordinator.managedObjectID(forURIRepresentation: URL(string: "x-objectgraph://OTHER/Tag/p1")!)
        }
        #expect(throws: ObjectGraphError.self) {
            try coordinator.managedObjectID(forURIRepresentation: URL(string: "x-objectgraph://\(coordinator.store.identifier)/Ghost/p1")!)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func uniquingRollbackRefreshAndChangeTracking(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Fixtures.model(), folder)
        let id = try await ObjectContext(coordinator: coordinator).perform { ctx in
            let author = try ctx.insert("Author")
            try author.setValue("Original", forKey: "name")
            let inserted = ctx.insertedObjects
            #expect(inserted == [author])
            try ctx.save()
            let pending = ctx.hasChanges
            #expect(!pending)
            return author.objectID
        }
        let writer = ObjectContext(coordinator: coordinator, name: "writer")
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let first = try ctx.object(with: id)
            #expect(first.isFault)
            #expect(try ctx.object(with: id) === first)
            #expect(try first.value(forKey: "name") == .string("Original"))
            #expect(!first.isFault)
            try first.setValue("Original", forKey: "name")
            var pending = ctx.hasChanges
            #expect(!pending)
            try first.setValue("Changed", forKey: "name")
            pending = ctx.hasChanges
            let updated = ctx.updatedObjects
            #expect(pending && updated == [first])
            #expect(try first.changedValues() == ["name": .string("Changed")])
            #expect(try first.committedValues(forKeys: ["name"]) == ["name": .string("Original")])
            try first.setValue("Original", forKey: "name")
            pending = ctx.hasChanges
            #expect(!pending)
            try first.setValue("Changed", forKey: "name")
            ctx.rollback()
            #expect(try first.value(forKey: "name") == .string("Original"))
            pending = ctx.hasChanges
            #expect(!pending)

            // Another context saves a new value; refresh turns ours into a fault that reloads it.
            try writer.performAndWait { w in
                try w.existingObject(with: id).setValue("Stored elsewhere", forKey: "name")
                try w.save()
            }
            #expect(try first.value(forKey: "name") == .string("Original"))
            try ctx.refresh(first, mergeChanges: false)
            #expect(first.isFault)
            #expect(try first.value(forKey: "name") == .string("Stored elsewhere"))
            ctx.reset()
            #expect(throws: ObjectGraphError.self) { try first.value(forKey: "name") }
            #expect(try ctx.object(with: id) !== first)
        }
    }
}
