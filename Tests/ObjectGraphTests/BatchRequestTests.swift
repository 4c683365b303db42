import Foundation
import GRDB
import PredicateFormat
import Testing
@testable import ObjectGraph

/// Batch insert, update and delete on both stores: what they write, what they refuse (with nothing written), and
/// that each leaves the store exactly as the same change made through a context does.
@Suite struct BatchRequestTests {
    /// Every stored row of the fixture model, by entity and key, with its version, values, to-ones and tags: two
    /// stores with the same dump hold the same data.
    static func dump(_ coordinator: PersistentStoreCoordinator) throws -> [String] {
        var lines: [String] = []
        for entity in coordinator.model.entities where entity.rootName == entity.name {
            for row in try coordinator.store.fetch(StoreFetchRequest(entityName: entity.name)).sorted(by: { $0.objectID < $1.objectID }) {
                var line = "\(row.objectID) v\(row.version) \(Array(row.values)) \(row.toOne.map { $0.map(\.description) ?? "nil" })"
                if row.objectID.entityName == "Book", let tags = coordinator.model.entityIfPresent("Book")?.relationship(named: "tags") {
                    line += " tags \(try coordinator.store.relatedIDs(of: row.objectID, relationship: tags).sorted())"
                }
                lines.append(line)
            }
        }
        return lines
    }

    /// Two agents, `authors` authors (by default three, the third with a profile), each with two books with two
    /// chapters each and tags.
    static func fill(
        _ coordinator: PersistentStoreCoordinator, authors: Int = 3, hasProfile: @escaping @Sendable (Int) -> Bool = { $0 == 2 }
    ) async throws {
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let agents = try (0..<2).map { index in
                let agent = try ctx.insert("Agent")
                try agent.setValue("Agent \(index)", forKey: "name")
                return agent
            }
            let tags = try (0..<3).map { index in
                let tag = try ctx.insert("Tag")
                try tag.setValue("tag\(index)", forKey: "label")
                return tag
            }
            for a in 0..<authors {
                let author = try ctx.insert("Author")
                try author.setValue("Author \(a)", forKey: "name")
                try author.setObject(agents[a % 2], forKey: "agent")
                if hasProfile(a) {
                    let profile = try ctx.insert("Profile")
                    try profile.setValue("bio", forKey: "bio")
                    try author.setObject(profile, forKey: "profile")
                }
                for b in 0..<2 {
                    let book = try ctx.insert("Book")
                    try book.setValue("Book \(a)-\(b)", forKey: "title")
                    try book.setValue(Int64(90 + a * 10 + b), forKey: "pages")
                    try book.setObject(author, forKey: "author")
                    try book.addObject(tags[(a + b) % 3], forKey: "tags")
                    for c in 0..<2 {
                        let chapter = try ctx.insert("Chapter")
                        try chapter.setValue("Chapter \(c)", forKey: "heading")
                        try chapter.setObject(book, forKey: "book")
                    }
                }
            }
            try ctx.save()
        }
    }

    static func titles(_ coordinator: PersistentStoreCoordinator, _ format: String = "TRUEPREDICATE") async throws -> [String] {
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            var request = try FetchRequest(entityName: "Book", format: format)
            request.sortKeys = [SortKey("title")]
            return try stringValues(try ctx.fetch(request), "title")
        }
    }

    /// Expects `body` to throw ``ObjectGraphError/invalidBatchRequest(entity:reason:)`` with a message containing
    /// `expected`.
    static func expectRefusal(_ expected: String, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("\(expected): the request went through")
        } catch let error as ObjectGraphError {
            guard case .invalidBatchRequest = error else {
                Issue.record("\(expected): \(error)")
                return
            }
            #expect(error.message.contains(expected), "\(error.message)")
        } catch {
            Issue.record("\(expected): \(error)")
        }
    }

    // MARK: Insert

    @Test(arguments: StoreKind.allCases)
    func insertsRowsFromDictionariesWithDefaultsAndReportsTheirIDs(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Fixtures.model(), folder)
        var request = BatchInsertRequest(entityName: "Book", objects: [
            ["title": .string("One"), "pages": .int(10)],
            ["title": .string("Two")],
        ])
        request.resultType = .objectIDs
        let result = try coordinator.execute(request)
        #expect(result.count == 2)
        let ids = try #require(result.objectIDs)
        #expect(ids.count == 2 && ids.allSatisfy { !$0.isTemporaryID && $0.entityName == "Book" })
        #expect(result.changes?.insertedObjectIDs == ids)
        let pages = try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ids.map { try ctx.existingObject(with: $0).value(forKey: "pages") }
        }
        // The second row left pages out: the attribute's default.
        #expect(pages == [.int(10), .int(1)])
    }

    @Test(arguments: StoreKind.allCases)
    func insertsRowsAClosureFillsUntilItStops(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Fixtures.model(), folder)
        let request = BatchInsertRequest(entityName: "Book", keys: ["title", "pages"]) { row in
            guard row.index < 1_000 else { return false }
            row["title"] = .string("Book \(row.index)")
            row[1] = .int(Int64(1 + row.index % 500))
            return true
        }
        #expect(try coordinator.execute(request).count == 1_000)
        let count = try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ctx.count(for: FetchRequest(entityName: "Book", format: "pages == 500"))
        }
        #expect(count == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func refusesABadRowNamingItAndWritesNothing(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Fixtures.model(), folder)
        let cases: [(BatchInsertRequest, String)] = [
            (BatchInsertRequest(entityName: "Book", objects: [["title": .string("A")], ["title": .string("B"), "pages": .string("many")]]), "row 1: 'pages'"),
            (BatchInsertRequest(entityName: "Book", objects: [["title": .string("A"), "colour": .string("red")]]), "no attribute 'colour'"),
            (BatchInsertRequest(entityName: "Book", objects: [["title": .string("A"), "author": .int(1)]]), "'author' is a relationship"),
            (BatchInsertRequest(entityName: "Book", objects: [["pages": .int(3)]]), "'title' is not optional"),
            (BatchInsertRequest(entityName: "Book", objects: [["title": .string("A"), "pages": .int(3_000_000_000)]]), "'pages' takes a value of type int32"),
            (BatchInsertRequest(entityName: "Media", objects: [["title": .string("A")]]), "abstract"),
            // Rows a closure fills are checked as rows given as values are, each named by its number.
            (BatchInsertRequest(entityName: "Book", keys: ["title", "pages"]) { row in
                guard row.index < 5 else { return false }
                row[0] = .string("Book \(row.index)")
                row[1] = row.index == 3 ? .string("many") : .int(1)
                return true
            }, "row 3: 'pages' takes a value of type int32"),
            (BatchInsertRequest(entityName: "Book", keys: ["title", "pages"]) { row in
                guard row.index < 5 else { return false }
                if row.index < 2 { row[0] = .string("Book \(row.index)") }
                row[1] = .int(1)
                return true
            }, "row 2: 'title' is not optional"),
            (BatchInsertRequest(entityName: "Book", keys: ["title", "pages"]) { row in
                guard row.index < 5 else { return false }
                row[0] = .string("Book \(row.index)")
                row[1] = .int(row.index == 4 ? 3_000_000_000 : 1)
                return true
            }, "row 4: 'pages' takes a value of type int32"),
        ]
        for (request, expected) in cases { Self.expectRefusal(expected) { try coordinator.execute(request) } }
        #expect(try await Self.titles(coordinator).isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func aRowMatchingAStoredOneOnAConstraintUpdatesIt(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Fixtures.model(), folder)
        let existing = try await ObjectContext(coordinator: coordinator).perform { ctx in
            let book = try ctx.insert("Book")
            try book.setValue("Old", forKey: "title")
            try book.setValue(7, forKey: "pages")
            try book.setValue("123-4567", forKey: "isbn")
            try ctx.save()
            return book.objectID
        }
        var request = BatchInsertRequest(entityName: "Book", objects: [
            ["title": .string("New"), "isbn": .string("123-4567")],
            ["title": .string("Other"), "isbn": .string("999-0000")],
        ])
        request.resultType = .objectIDs
        let result = try coordinator.execute(request)
        #expect(result.count == 2)
        #expect(result.changes?.updatedObjectIDs == [existing])
        #expect(result.changes?.insertedObjectIDs.count == 1)
        #expect(try await Self.titles(coordinator) == ["New", "Other"])
        let stored = try #require(try coordinator.store.snapshots(for: [existing]).first)
        // Only the keys the row gave changed; the row's version moved on.
        #expect(stored.version == 2)
        let pages = try coordinator.model.entity(named: "Book").attributeIndex["pages"]!
        #expect(stored.values[pages] == .int(7))

        var strict = BatchInsertRequest(entityName: "Book", objects: [["title": .string("Third"), "isbn": .string("555-5555")], ["title": .string("Clash"), "isbn": .string("999-0000")]])
        strict.upserts = false
        #expect {
            try coordinator.execute(strict)
        } throws: { error in
            guard case ObjectGraphError.uniquenessViolation(let entity, let keys, _) = error else { return false }
            return entity == "Book" && keys == ["isbn"]
        }
        #expect(try await Self.titles(coordinator) == ["New", "Other"])
    }

    /// Rows that give different keys each update a matched row under their own keys alone: Core Data's batch insert
    /// with uniqueness constraints merges each dictionary into the stored object, leaving the keys it does not name.
    /// (Each row is still checked as an insert: it gives every non-optional attribute that has no default.)
    @Test(arguments: StoreKind.allCases)
    func anUpsertWritesOnlyTheKeysEachRowGives(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Fixtures.model(), folder)
        let ids = try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ["111-1111", "222-2222", "333-3333"].map { isbn in
                let book = try ctx.insert("Book")
                try book.setValue("Old \(isbn)", forKey: "title")
                try book.setValue(7, forKey: "pages")
                try book.setValue(isbn, forKey: "isbn")
                try ctx.save()
                return book.objectID
            }
        }
        var request = BatchInsertRequest(entityName: "Book", objects: [
            ["title": .string("Titled"), "isbn": .string("111-1111")],
            ["title": .string("Both"), "pages": .int(60), "isbn": .string("333-3333")],
            ["title": .string("New"), "isbn": .string("444-4444")],
        ])
        request.resultType = .objectIDs
        let result = try coordinator.execute(request)
        #expect(Set(try #require(result.changes).updatedObjectIDs) == [ids[0], ids[2]])
        let book = try coordinator.model.entity(named: "Book")
        let stored = Dictionary(uniqueKeysWithValues: try coordinator.store.snapshots(for: ids).map { ($0.objectID, $0) })
        func values(_ id: ObjectID) -> [AttributeValue?] {
            ["title", "pages"].map { key in stored[id].map { $0.values[book.attributeIndex[key]!] } }
        }
        #expect(values(ids[0]) == [.string("Titled"), .int(7)])
        #expect(values(ids[1]) == [.string("Old 222-2222"), .int(7)])
        #expect(values(ids[2]) == [.string("Both"), .int(60)])
        // A new row takes the defaults of the keys it leaves out.
        let inserted = try #require(result.changes?.insertedObjectIDs.first)
        let new = try #require(try coordinator.store.snapshots(for: [inserted]).first)
        #expect(new.values[book.attributeIndex["pages"]!] == .int(1))
    }

    /// A dictionary naming a key the entity cannot take is named with the row, as a value of the wrong type is.
    @Test(arguments: StoreKind.allCases)
    func anUnknownKeyInADictionaryNamesItsRow(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Fixtures.model(), folder)
        for (key, said) in [("color", "no attribute 'color'"), ("author", "'author' is a relationship")] {
            let request = BatchInsertRequest(entityName: "Book", objects: [
                ["title": .string("A"), "isbn": .string("111-1111")],
                ["title": .string("B"), key: .string("x")],
            ])
            #expect {
                try coordinator.execute(request)
            } throws: { error in
                guard case ObjectGraphError.invalidBatchRequest(let entity, let reason) = error else { return false }
                return entity == "Book" && reason.hasPrefix("row 1: ") && reason.contains(said)
            }
        }
        #expect(try await Self.titles(coordinator) == [])
    }

    /// A batch update or delete of a parent entity reaches its sub-entities' rows unless `includesSubentities` is
    /// off (Core Data's `NSBatchUpdateRequest.includesSubentities`), and history names each row's own entity.
    @Test(arguments: StoreKind.allCases)
    func batchRequestsReachSubEntitiesOnlyWhenAsked(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let model = try Model(entities: [
            EntityDescription("Item", attributes: [.init("name", .string), .init("n", .int64)]),
            EntityDescription("Special", attributes: [.init("extra", .string, isOptional: true)], parent: "Item"),
        ])
        let coordinator = try PersistentHistoryTests.coordinator(kind, folder, model: model)
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            for (index, entity) in ["Item", "Item", "Special", "Special"].enumerated() {
                let object = try ctx.insert(entity)
                try object.setValue("\(entity) \(index)", forKey: "name")
                try object.setValue(0, forKey: "n")
            }
            try ctx.save()
        }
        let start = try coordinator.lastHistoryToken()
        func entities(_ changes: StoreChanges?, _ ids: KeyPath<StoreChanges, [ObjectID]>) -> [String] {
            (changes?[keyPath: ids] ?? []).map(\.entityName).sorted()
        }
        var exact = BatchUpdateRequest(entityName: "Item", values: ["n": .int(1)])
        exact.includesSubentities = false
        exact.resultType = .objectIDs
        let exactResult = try coordinator.execute(exact)
        #expect(exactResult.count == 2)
        #expect(entities(exactResult.changes, \.updatedObjectIDs) == ["Item", "Item"])
        var all = BatchUpdateRequest(entityName: "Item", values: ["n": .int(2)])
        all.resultType = .objectIDs
        #expect(entities(try coordinator.execute(all).changes, \.updatedObjectIDs) == ["Item", "Item", "Special", "Special"])
        var deleteExact = BatchDeleteRequest(entityName: "Item")
        deleteExact.includesSubentities = false
        deleteExact.resultType = .objectIDs
        #expect(entities(try coordinator.execute(deleteExact).changes, \.deletedObjectIDs) == ["Item", "Item"])
        let left = try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ctx.fetch(FetchRequest(entityName: "Item")).map { ($0.objectID.entityName, try $0.value(forKey: "n")) }
        }
        #expect(left.map(\.0) == ["Special", "Special"] && left.map(\.1) == [.int(2), .int(2)])
        let history = try coordinator.history(after: start)
        #expect(history.map { $0.changes.map(\.changedObjectID.entityName).sorted() } == [
            ["Item", "Item"], ["Item", "Item", "Special", "Special"], ["Item", "Item"],
        ])
        #expect(history.map { Set($0.changes.map(\.changeType)) } == [[.update], [.update], [.delete]])
    }

    // MARK: Update

    @Test(arguments: StoreKind.allCases)
    func updatesWithExpressionsAndMovesVersionsOn(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Fixtures.model(), folder)
        try await Self.fill(coordinator)
        let holder = ObjectContext(coordinator: coordinator, name: "holder")
        // A context holds a book the batch changes: its next save of that book must conflict.
        let held = try await holder.perform { ctx in try ctx.fetch(FetchRequest(entityName: "Book", format: "title == 'Book 0-0'"))[0].objectID }
        var request = try BatchUpdateRequest(entityName: "Book", format: "pages < %d", 100, set: ["pages": "pages + 1000", "title": "uppercase:(title)"])
        request.resultType = .objectIDs
        let result = try coordinator.execute(request)
        #expect(result.count == 2)
        #expect(try await Self.titles(coordinator, "pages > 1000") == ["BOOK 0-0", "BOOK 0-1"])
        await #expect(throws: ObjectGraphError.self) {
            try await holder.perform { ctx in
                try ctx.existingObject(with: held).setValue("Mine", forKey: "isbn")
                try ctx.save()
            }
        }
        // Merging the result brings the holder's object up to date, and then its save goes through.
        try await coordinator.mergeChanges(try #require(result.changes), into: [holder])
        try await holder.perform { ctx in
            let book = try ctx.existingObject(with: held)
            #expect(try book.value(forKey: "pages") == .int(1090))
            try book.setValue("000-0000", forKey: "isbn")
            try ctx.save()
        }
        let constant = BatchUpdateRequest(entityName: "Book", predicate: try FormatPredicate("author.name == 'Author 1'"), values: ["title": .string("Renamed")])
        #expect(try coordinator.execute(constant).count == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func refusesAValueOfTheWrongTypeAndChangesNoRow(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Fixtures.model(), folder)
        try await Self.fill(coordinator)
        let before = try Self.dump(coordinator)
        let cases: [(BatchUpdateRequest, String)] = [
            // 90 / 3 is whole; 91 / 3 is not: no row changes, not even the first.
            (try BatchUpdateRequest(entityName: "Book", format: "TRUEPREDICATE", set: ["pages": "pages / 3"]), "a whole number is needed"),
            (try BatchUpdateRequest(entityName: "Book", format: "TRUEPREDICATE", set: ["pages": "title"]), "'pages'"),
            (try BatchUpdateRequest(entityName: "Book", format: "TRUEPREDICATE", set: ["pages": "pages * 100000000"]), "out of its range"),
            (BatchUpdateRequest(entityName: "Book", values: ["title": .null]), "'title' is not optional"),
            (BatchUpdateRequest(entityName: "Book", values: ["author": .null]), "is a relationship"),
            (try BatchUpdateRequest(entityName: "Book", format: "TRUEPREDICATE", set: ["title": "author.name"]), "across a to-one relationship"),
        ]
        for (request, expected) in cases { Self.expectRefusal(expected) { try coordinator.execute(request) } }
        #expect(try Self.dump(coordinator) == before)
    }

    /// New values that change from call to call (`now()`, `random()`): every row matched gets one, of its
    /// attribute's type. (PostgreSQL computes these in its plan, other expressions on the server.)
    @Test(arguments: StoreKind.allCases)
    func volatileNewValuesAreComputedForEveryRow(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Fixtures.model(), folder)
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            for index in 0..<50 { try ctx.insert("Sample").setValue(Int64(index), forKey: "int64") }
            try ctx.save()
        }
        let before = Date()
        let request = try BatchUpdateRequest(
            entityName: "Sample", format: "int64 < 40", set: ["double": "random()", "date": "now()", "int32": "randomn:(10)"])
        #expect(try coordinator.execute(request).count == 40)
        let rows = try coordinator.store.fetch(StoreFetchRequest(entityName: "Sample"))
        let entity = try coordinator.model.entity(named: "Sample")
        func value(_ row: Snapshot, _ key: String) -> AttributeValue { row.values[entity.attributeIndex[key]!] }
        for row in rows {
            guard case .int(let index) = value(row, "int64"), index < 40 else {
                #expect(value(row, "double") == .null && row.version == 1)
                continue
            }
            guard case .double(let double) = value(row, "double"), case .date(let date) = value(row, "date"),
                  case .int(let int32) = value(row, "int32") else {
                Issue.record("row \(index): \(Array(row.values))")
                continue
            }
            #expect((0..<1).contains(double) && (0..<10).contains(int32) && row.version == 2)
            #expect(date.timeIntervalSince(before) > -1 && date.timeIntervalSinceNow < 1)
        }
    }

    // MARK: Delete

    @Test(arguments: StoreKind.allCases)
    func deletesWithTheModelsDeleteRules(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Fixtures.model(), folder)
        try await Self.fill(coordinator)
        // Author 2 has a profile, which its deny rule protects: nothing goes.
        let before = try Self.dump(coordinator)
        #expect {
            try coordinator.execute(BatchDeleteRequest(entityName: "Author", predicate: try FormatPredicate("name != 'Author 1'")))
        } throws: { error in
            guard case ObjectGraphError.deleteDenied(let entity, _, let relationship, let count) = error else { return false }
            return entity == "Author" && relationship == "profile" && count == 1
        }
        #expect(try Self.dump(coordinator) == before)
        // Author 0 goes with its books (cascade) and their chapters (cascade); its agent stays.
        var request = BatchDeleteRequest(entityName: "Author", predicate: try FormatPredicate("name == 'Author 0'"))
        request.resultType = .objectIDs
        let result = try coordinator.execute(request)
        #expect(result.count == 1)
        #expect(result.changes?.deletedObjectIDs.count == 1 + 2 + 4)
        #expect(try await Self.titles(coordinator) == ["Book 1-0", "Book 1-1", "Book 2-0", "Book 2-1"])
        let counts = try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ["Chapter", "Agent", "Tag"].map { try ctx.count(for: FetchRequest(entityName: $0)) }
        }
        #expect(counts == [8, 2, 3])
        // Deleting an agent clears its clients' references (nullify), moving their versions on.
        var agents = BatchDeleteRequest(entityName: "Agent", predicate: try FormatPredicate("name == 'Agent 1'"))
        agents.resultType = .objectIDs
        let cleared = try coordinator.execute(agents)
        #expect(cleared.changes?.updatedObjectIDs.count == 1)
        let author = try #require(try coordinator.store.snapshots(for: cleared.changes!.updatedObjectIDs).first)
        #expect(author.version == 2 && author.toOne.allSatisfy { $0 == nil || $0?.entityName != "Agent" })
    }

    /// A delete of many objects reads their rows and destinations an entity at a time: every rule still applies to
    /// each object, the refusal named is the first in ID order, and objects of two entities of one table go by ID.
    @Test(arguments: StoreKind.allCases)
    func deletesOfManyObjectsApplyEveryRuleToEachOfThem(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Fixtures.model(), folder)
        // 120 authors, every tenth with a profile, alternating between two agents; two books each with two chapters;
        // and 30 movies beside the books in Media's table.
        try await Self.fill(coordinator, authors: 120, hasProfile: { $0 % 10 == 3 })
        let (agentIDs, guarded, movieIDs) = try await ObjectContext(coordinator: coordinator).perform { ctx in
            let movies = try (0..<30).map { index in
                let movie = try ctx.insert("Movie")
                try movie.setValue("Movie \(index)", forKey: "title")
                return movie
            }
            try ctx.save()
            let agents = try ctx.fetch(FetchRequest(entityName: "Agent", sortKeys: [SortKey("name")]))
            let guarded = try ctx.fetch(try FetchRequest(entityName: "Author", format: "profile != nil"))
            return (agents.map(\.objectID), guarded.map(\.objectID).sorted(), movies.map(\.objectID))
        }
        func count(_ entity: String) throws -> Int { try coordinator.store.count(StoreFetchRequest(entityName: entity)) }

        // Every author: the twelve with a profile refuse, and the first of them in ID order is the one named.
        let before = try Self.dump(coordinator)
        #expect {
            try coordinator.execute(BatchDeleteRequest(entityName: "Author"))
        } throws: { error in
            guard case ObjectGraphError.deleteDenied("Author", let id, "profile", 1) = error else { return false }
            return id == guarded[0]
        }
        #expect(try Self.dump(coordinator) == before)

        // The 108 without one go, with their 216 books and 432 chapters.
        var unguarded = BatchDeleteRequest(entityName: "Author", predicate: try FormatPredicate("profile == nil"))
        unguarded.resultType = .objectIDs
        let deleted = try coordinator.execute(unguarded)
        #expect(deleted.count == 108 && deleted.changes?.deletedObjectIDs.count == 108 + 216 + 432)
        #expect(try [count("Author"), count("Book"), count("Chapter"), count("Movie")] == [12, 24, 48, 30])

        // The second agent's twelve remaining clients (the guarded authors are odd) each lose their reference, and
        // nothing else of theirs changes.
        var agent = BatchDeleteRequest(objectIDs: [agentIDs[1]])
        agent.resultType = .objectIDs
        let cleared = try coordinator.execute(agent)
        let clients = try coordinator.store.snapshots(for: try #require(cleared.changes?.updatedObjectIDs))
        #expect(clients.map(\.objectID).sorted() == guarded)
        #expect(clients.allSatisfy { client in client.version == 2 && !client.toOne.contains { $0?.entityName == "Agent" } && client.toOne.contains { $0?.entityName == "Profile" } })

        // Books and movies named together, by ID, from their common table; a missing ID is skipped.
        let books = try coordinator.store.fetch(StoreFetchRequest(entityName: "Book")).map(\.objectID)
        let media = Array(books.prefix(10)) + movieIDs.prefix(20) + [ObjectID(entityName: "Movie", rawKey: 1_000_000)]
        let named = try coordinator.execute(BatchDeleteRequest(objectIDs: media))
        #expect(named.count == 30)
        #expect(try [count("Book"), count("Chapter"), count("Movie")] == [14, 28, 10])
    }

    /// The same changes, once through batch requests and once through a context on a second store, leave both
    /// stores holding the same rows, versions included.
    @Test(arguments: StoreKind.allCases)
    func batchRequestsLeaveTheStoreAsTheObjectGraphPathDoes(_ kind: StoreKind) async throws {
        let folders = (try TemporaryFolder(), try TemporaryFolder())
        let batch = try kind.coordinator(try Fixtures.model(), folders.0)
        let graph = try kind.coordinator(try Fixtures.model(), folders.1)
        try await Self.fill(batch)
        try await Self.fill(graph)
        #expect(try Self.dump(batch) == Self.dump(graph))

        try batch.execute(BatchUpdateRequest(entityName: "Book", format: "pages >= %d", 100, set: ["pages": "pages * 2", "title": "lowercase:(title)"]))
        try batch.execute(BatchDeleteRequest(entityName: "Author", predicate: try FormatPredicate("name == 'Author 1'")))
        try batch.execute(BatchDeleteRequest(entityName: "Agent", predicate: try FormatPredicate("name == 'Agent 0'")))
        try batch.execute(BatchInsertRequest(entityName: "Tag", objects: [["label": .string("new")]]))

        try await ObjectContext(coordinator: graph).perform { ctx in
            for book in try ctx.fetch(FetchRequest(entityName: "Book", format: "pages >= %d", 100)) {
                guard case .int(let pages) = try book.value(forKey: "pages") else { continue }
                try book.setValue(pages * 2, forKey: "pages")
                guard case .string(let title) = try book.value(forKey: "title") else { continue }
                try book.setValue(title.lowercased(), forKey: "title")
            }
            try ctx.save()
            for author in try ctx.fetch(FetchRequest(entityName: "Author", format: "name == 'Author 1'")) { try ctx.delete(author) }
            try ctx.save()
            for agent in try ctx.fetch(FetchRequest(entityName: "Agent", format: "name == 'Agent 0'")) { try ctx.delete(agent) }
            try ctx.save()
            try ctx.insert("Tag").setValue("new", forKey: "label")
            try ctx.save()
        }
        #expect(try Self.dump(batch) == Self.dump(graph))
    }
}
