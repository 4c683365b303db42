import Foundation
import struct GRDB.DatabaseValue
import Testing
@testable import ObjectGraph

/// The registry keeps objects unique without keeping them alive, and typed accessors find their attribute whatever
/// order the model gives it.
@Suite struct RegistryTests {
    @Test(arguments: StoreKind.allCases)
    func objectsStayUniqueWhileHeldAndLeaveTheRegistryWhenReleased(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Model([Book.self]), folder)
        let context = ObjectContext(coordinator: coordinator, name: "registry")
        try await context.perform { ctx in
            for index in 0..<50 { try ctx.insert(Book.self).name = "Book \(index)" }
            try ctx.save()
            ctx.reset()
            #expect(ctx.registeredObjects.isEmpty)

            var held = try ctx.fetch(Book.fetchRequest(), as: Book.self)
            #expect(held.count == 50)
            #expect(ctx.registeredObjects.count == 50)
            // Uniquing: a second fetch returns the very same objects.
            let again = try ctx.fetch(Book.fetchRequest(), as: Book.self)
            #expect(zip(held, again).allSatisfy { $0 === $1 })

            // Unchanged objects nobody holds leave the registry at once (no dead entries wait for a sweep).
            let kept = held[7]
            held = []
            _ = consume again
            #expect(ctx.registeredObjects == [kept])
            // A changed object stays registered after the app lets go of it, and its change is saved.
            kept.name = "Changed"
            let keptID = kept.objectID
            _ = consume kept
            #expect(ctx.registeredObjects.count == 1)
            try ctx.save()
            #expect(ctx.registeredObjects.isEmpty)
            #expect(try ctx.existingObject(with: keptID, as: Book.self).name == "Changed")
        }
    }

    @Test func accessorsFindTheirAttributeWhenTheModelOrdersAttributesDifferently() async throws {
        // An Xcode model mapped onto a macro class may list attributes in another order than the declaration.
        var description = Book.entityDescription
        description.attributes.reverse()
        let model = try Model(entities: [description], classes: ["Book": Book.self])
        #expect(try model.entity(named: "Book").attributes.map(\.name) == ["author", "name"])
        let context = ObjectContext(coordinator: .inMemory(model: model), name: "reordered")
        try await context.perform { ctx in
            let book = try ctx.insert(Book.self)
            book.name = "Dune"
            book.author = "Herbert"
            #expect(try book.value(forKey: "name") == .string("Dune"))
            #expect(try book.value(forKey: "author") == .string("Herbert"))
            #expect(book.name == "Dune" && book.author == "Herbert")
        }
    }

    @Test func anObjectReleasedOffItsQueueTrapsNamingEntityObjectAndContext() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let model = try Model(entities: Fixtures.entities)
            let context = ObjectContext(coordinator: .inMemory(model: model), name: "importer")
            let id = try await context.perform { ctx in
                let tag = try ctx.insert("Tag")
                try ctx.save()
                return tag.objectID
            }
            // An unchanged object that only the smuggler holds: its last release happens here, off its queue.
            let smuggled = try await context.perform { ctx in SmuggledObject(object: try ctx.existingObject(with: id)) }
            smuggled.release()
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("ObjectGraph concurrency violation: Tag Tag/p1"), "\(output)")
        #expect(output.contains("accessed off the queue of its context 'importer'"), "\(output)")
    }
}

/// Parsed predicates and compiled fetch SQL are kept for repeated requests; a kept one must never stand for a
/// request that differs in what SQLite compares, such as the bytes of a string.
@Suite struct RequestCacheTests {
    @Test func canonicallyEqualStringsWithDifferentBytesAreDifferentRequests() async throws {
        let precomposed = "Caf\u{E9}"
        let decomposed = "Cafe\u{301}"
        #expect(precomposed == decomposed)
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try StoreKind.sqlite.coordinator(try Model([Book.self]), folder), name: "cache")
        let (first, second, again) = try await context.perform { ctx in
            try ctx.insert(Book.self).name = precomposed
            try ctx.insert(Book.self).name = decomposed
            try ctx.save()
            var found: [[String]] = []
            for value in [precomposed, decomposed, precomposed] {
                found.append(try ctx.fetch(FetchRequest(entityName: "Book", format: "name == %@", value), as: Book.self).map(\.name))
            }
            return (found[0], found[1], found[2])
        }
        // Each finds the row with its own bytes (SQLite compares bytes), however often it is asked.
        #expect(first.map { Array($0.utf8) } == [Array(precomposed.utf8)])
        #expect(second.map { Array($0.utf8) } == [Array(decomposed.utf8)])
        #expect(again.map { Array($0.utf8) } == [Array(precomposed.utf8)])
        // The same deeper in a predicate, and in a list argument (not a kept parse, but kept SQL).
        let nested = try await context.perform { ctx in
            try [precomposed, decomposed, precomposed, decomposed].map { value in
                let byCondition = try ctx.fetch(FetchRequest(entityName: "Book", format: "name != '' AND (name == %@ OR author == 'nobody')", value), as: Book.self)
                let byList = try ctx.fetch(FetchRequest(entityName: "Book", format: "name IN %@", [value]), as: Book.self)
                return (byCondition + byList).map { Array($0.name.utf8) }
            }
        }
        #expect(nested == [precomposed, decomposed, precomposed, decomposed].map { [Array($0.utf8), Array($0.utf8)] })
    }

    /// A fetch that differs from a compiled one only in its constants takes the kept SQL with its own constants:
    /// the SQL and arguments are exactly what a store that never compiled anything compiles, whatever lands where
    /// (a BEGINSWITH's pattern, a Boolean, nil, NaN, a string equal to an entity's name, an IN list).
    @Test func fetchesOfOneShapeWithOtherConstantsBindExactlyWhatAFreshCompileBinds() throws {
        let model = try Fixtures.model()
        let (warm, cold) = (try TemporaryFolder(), try TemporaryFolder())
        let warmStore = try #require(try StoreKind.sqlite.coordinator(model, warm).store as? SQLiteStore)
        let cases: [(entity: String, format: String, argumentLists: [[Any?]])] = [
            ("Book", "pages == %lld", [[1], [2], [-9], [Int64.max]]),
            ("Book", "title BEGINSWITH[cd] %@ AND pages > %d", [["Du", 3], ["", -1], ["%_", 4]]),
            ("Media", "title == %@ OR title == %@", [["Book", "Movie"], ["Movie", "x"], ["a", "a"]]),
            ("Book", "pages == %@ OR isbn == %@", [[true, "1"], [false, "2"], [nil as Int?, "3"], [Double.nan, "4"], [2.5, "5"]]),
            ("Book", "pages IN {%d, %d} AND author.name == %@", [[1, 2, "Le Guin"], [3, 3, "Herbert"]]),
            ("Book", "ANY tags.label == %@ AND pages BETWEEN {%d, %d}", [["sf", 1, 9], ["fantasy", 9, 1]]),
            ("Book", "SUBQUERY(chapters, $c, $c.heading CONTAINS %@).@count > %d", [["a", 0], ["b", 2]]),
        ]
        for (entity, format, argumentLists) in cases {
            for (round, arguments) in (argumentLists + argumentLists.reversed()).enumerated() {
                var request = StoreFetchRequest(entityName: entity)
                request.predicate = try FormatPredicate(format: format, argumentArray: arguments)
                request.sortKeys = [SortKey("title", ascending: round % 2 == 0)]
                let kept = try warmStore.fetchSQL(request).compiled
                let coldStore = try #require(try StoreKind.sqlite.coordinator(model, cold).store as? SQLiteStore)
                let fresh = try coldStore.fetchSQL(request).compiled
                #expect(kept.sql == fresh.sql, "\(format) with \(arguments)")
                #expect(kept.arguments.count == fresh.arguments.count
                        && zip(kept.arguments, fresh.arguments).allSatisfy { DatabaseValue.isIdentical($0, $1) }, "\(format) with \(arguments): \(kept.arguments) vs \(fresh.arguments)")
            }
        }
    }

    /// Lookups by many keys, through the kept SQL, each find their own object (and a key no row has finds none).
    @Test func lookupsByManyKeysEachFindTheirOwnObject() async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try StoreKind.sqlite.coordinator(try Model([Book.self]), folder), name: "lookups")
        let found = try await context.perform { ctx in
            for index in 0..<300 { try ctx.insert(Book.self).name = "Book \(index)" }
            try ctx.save()
            ctx.reset()
            return try (0..<320).map { index in
                var request = try FetchRequest(entityName: "Book", format: "name == %@", "Book \(index)")
                request.fetchLimit = 1
                return try ctx.fetch(request, as: Book.self).first?.name
            }
        }
        #expect(found == (0..<320).map { $0 < 300 ? "Book \($0)" : nil })
    }

    /// A reader connection keeps the statement of the fetch it ran last; a fetch of the same compiled SQL with or
    /// without a slice, or another fetch in between, must each run their own statement with their own bindings.
    @Test func fetchesAlternatingOnOneConnectionEachGetTheirOwnStatement() async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try StoreKind.sqlite.coordinator(try Model([Book.self]), folder), name: "memo")
        let answers = try await context.perform { ctx in
            for index in 0..<6 { try ctx.insert(Book.self).name = "Book \(index % 3)" }
            try ctx.save()
            ctx.reset()
            func named(_ round: Int, limit: Int?) throws -> FetchRequest {
                var request = try FetchRequest(entityName: "Book", format: "name == %@", "Book \(round)")
                request.fetchLimit = limit
                if limit == 2 { request.fetchOffset = 1 }
                return request
            }
            var answers: [[String]] = []
            for round in 0..<3 {
                // The same compiled fetch, unsliced and sliced in turn, then another fetch, then the first again.
                for limit in [nil, 1, 2, nil] as [Int?] { answers.append(try ctx.fetch(named(round, limit: limit), as: Book.self).map(\.name)) }
                answers.append(try ctx.fetch(FetchRequest(entityName: "Book", format: "name BEGINSWITH 'Book'"), as: Book.self).map(\.name))
                answers.append(try ctx.fetch(named(round, limit: 1), as: Book.self).map(\.name))
            }
            return answers
        }
        let all = (0..<6).map { "Book \($0 % 3)" }
        let expected = (0..<3).flatMap { round in
            [2, 1, 1, 2].map { Array(repeating: "Book \(round)", count: $0) } + [all, ["Book \(round)"]]
        }
        #expect(answers == expected)
    }
}

/// The coordinator's memory of permanent IDs: every save's mapping stays resolvable both ways however the
/// segments holding them are merged.
/// The registry's own hash table against a `Dictionary` doing the same operations: every ID leads to what the
/// dictionary holds, through growth, tombstones, removal by address, keys shared across entities (each table
/// numbers its rows) and temporary (negative) keys.
@Suite struct ObjectRegistryTableTests {
    /// Dense runs of the same keys in two entities (rows of two tables, fetched in key order) land in the same
    /// groups of slots before the entity's salt: every entry is still found, and freeing in order empties the table.
    @Test func denseRunsOfTheSameKeysInTwoEntities() throws {
        let model = try Fixtures.model()
        let entities = [try model.entity(named: "Tag"), try model.entity(named: "Author")]
        var registry = ObjectRegistry()
        var objects: [ManagedObject] = []
        for entity in entities {
            for key in Int64(1)...5_000 {
                let id = ObjectID(entityName: entity.name, rawKey: key)
                let (object, isNew) = registry.object(for: id) { entity.objectType.init(entity: entity, objectID: id) }
                #expect(isNew)
                objects.append(object)
            }
        }
        #expect(registry.count == 10_000)
        for object in objects { #expect(registry[object.storedObjectID] === object) }
        for object in objects { registry.remove(object) }
        #expect(registry.count == 0)
        // Each run's last removal cleared the run: nothing is left for lookups to probe past.
        #expect(registry.tombstoneCount == 0)
        for object in objects { #expect(registry[object.storedObjectID] == nil) }
        // A table emptied keeping its slots (a context's reset) takes the same entries again, in the same slots.
        let capacity = registry.capacity
        registry.removeAll(keepingCapacity: true)
        #expect(registry.capacity == capacity)
        for object in objects { #expect(registry[object.storedObjectID] == nil) }
        for object in objects { #expect(registry.object(for: object.storedObjectID) { object }.isNew) }
        for object in objects { #expect(registry[object.storedObjectID] === object) }
        #expect(registry.count == 10_000 && registry.capacity == capacity)
        // Emptied by its objects' ends (tombstones) and filled again to the same count: rebuilt where it is, not
        // shrunk and grown again. The entries taken over the tombstones are all found, the old ones gone.
        for object in objects { registry.remove(object) }
        let again = entities.flatMap { entity in
            (Int64(5_001)...10_000).map { key in
                let id = ObjectID(entityName: entity.name, rawKey: key)
                return registry.object(for: id) { entity.objectType.init(entity: entity, objectID: id) }.object
            }
        }
        #expect(registry.count == 10_000 && registry.capacity == capacity)
        for object in again { #expect(registry[object.storedObjectID] === object) }
        for object in objects { #expect(registry[object.storedObjectID] == nil) }
        registry.removeAll()
        #expect(registry.capacity == 0)
    }

    @Test func randomOperationsAgreeWithADictionary() throws {
        let model = try Fixtures.model()
        let entities = [try model.entity(named: "Tag"), try model.entity(named: "Author")]
        var registry = ObjectRegistry()
        var reference: [ObjectID: ManagedObject] = [:]
        var generator = FetchConsistencyTests.SplitMix(seed: 42)
        for step in 0..<40_000 {
            let entity = entities[generator.below(2)]
            // Few distinct keys, so operations meet the same IDs again; a stride of 1,024 mimics sparse rows.
            let raw = Int64(generator.below(600)) - 100
            let id = ObjectID(entityName: entity.name, rawKey: raw == 0 ? 1 : raw * (step % 3 == 0 ? 1_024 : 1))
            switch generator.below(11) {
            case 0...3:
                let object = entity.objectType.init(entity: entity, objectID: id)
                registry[id] = object
                reference[id] = object
            case 4...5:
                registry[id] = nil
                reference[id] = nil
            case 6...7:
                if let object = reference[id] {
                    registry.remove(object)
                    reference[id] = nil
                }
            case 8:
                let (object, isNew) = registry.object(for: id) { entity.objectType.init(entity: entity, objectID: id) }
                #expect(isNew == (reference[id] == nil))
                if let existing = reference[id] { #expect(existing === object) }
                reference[id] = object
            case 9:
                // A save's new ID for a registered object (taking over the entry of any object already there).
                let target = ObjectID(entityName: entity.name, rawKey: Int64(generator.below(600)) + 1)
                if let object = reference[id] {
                    registry.rekey(object, to: target)
                    object.storedObjectID = target
                    reference[id] = nil
                    reference[target] = object
                }
                #expect(registry[target] === reference[target])
            default:
                if step % 5_000 == 0 { registry.reserveCapacity(reference.count * 3) }
                // Now and then everything goes at once, as a context's reset empties its table.
                if step % 7_919 == 0 {
                    registry.removeAll(keepingCapacity: true)
                    reference = [:]
                }
                // A stale remove: an object that is not (or no longer) the one registered changes nothing.
                registry.remove(entity.objectType.init(entity: entity, objectID: id))
            }
            #expect(registry[id] === reference[id])
            // The objects under temporary IDs are told by the slots alone, whatever the entity's salt.
            if step % 500 == 0 {
                #expect(Set(registry.temporaryObjects.map(ObjectIdentifier.init))
                        == Set(reference.filter { $0.key.isTemporaryID }.values.map(ObjectIdentifier.init)))
            }
        }
        #expect(registry.count == reference.count)
        for (id, object) in reference { #expect(registry[id] === object) }
        #expect(Set(registry.objects.map(ObjectIdentifier.init)) == Set(reference.values.map(ObjectIdentifier.init)))
        registry.removeAll()
        #expect(registry.count == 0 && reference.keys.allSatisfy { registry[$0] == nil })
    }
}

@Suite struct IDForwardingTests {
    @Test func everyRecordedMappingResolvesBothWaysAcrossMerges() {
        let forwarding = IDForwarding()
        var expected: [ObjectID: ObjectID] = [:]
        // Temporary IDs handed out between saved ones but never saved (an insert deleted before its save): inside a
        // segment's span of keys, yet never to resolve.
        var unsaved: [ObjectID] = []
        var key: Int64 = 0
        // Saves of varied sizes, enough to merge segments many times.
        for save in 0..<200 {
            var mapping: [ObjectID: ObjectID] = [:]
            for index in 0..<(save % 7 == 0 ? 500 : save % 5 + 1) {
                key += 1
                let temporary = ObjectID.temporary("Tag")
                mapping[temporary] = ObjectID(entityName: "Tag", rawKey: key)
                if index % 3 == 1 { unsaved.append(ObjectID.temporary("Tag")) }
            }
            forwarding.record(PermanentIDMap(mapping))
            expected.merge(mapping) { _, new in new }
        }
        for (temporary, permanent) in expected {
            #expect(forwarding.permanent(for: temporary) == permanent)
            #expect(forwarding.temporary(for: permanent) == temporary)
        }
        #expect(unsaved.count > 100)
        for temporary in unsaved { #expect(forwarding.permanent(for: temporary) == nil) }
        let sample = Array(expected.keys.prefix(50)) + unsaved.prefix(50) + [ObjectID.temporary("Tag")]
        #expect(forwarding.permanentIDs(for: sample) == expected.filter { sample.contains($0.key) })
    }
}

/// Objects hold their context's bookkeeping strongly; the context's end detaches them, on its own executor.
@Suite struct ContextLifetimeTests {
    @MainActor @Test func anObjectOutlivingItsContextSaysSoAndNothingLeaks() async throws {
        let coordinator = PersistentStoreCoordinator.inMemory(model: try Model([Book.self]))
        var context: ObjectContext? = ObjectContext(coordinator: coordinator, concurrencyType: .mainQueue, name: "short-lived")
        let book: Book
        weak var state: ContextState?
        do {
            let main = MainContext(context!)
            book = try main.insert(Book.self)
            book.name = "Unsaved"
            state = book.state
        }
        #expect(state != nil)
        // The unsaved insert holds the book and the book holds the bookkeeping: only the context's end cuts that.
        context = nil
        // Released on the main actor, the context's isolated deinit has run by now.
        #expect(book.state == nil)
        #expect(state == nil)
        do {
            _ = try book.value(forKey: "name")
            Issue.record("a detached object answered")
        } catch {
            #expect("\(error)".contains("its context was deallocated"), "\(error)")
        }
    }
}
