import Foundation
import ObjectGraph
import ObjectGraphPostgres
import Synchronization
import Testing

/// Lightweight migration on PostgreSQL: a store an earlier model version wrote opens with the current version,
/// migrated in one transaction by the plans inferred between versions, keys, versions and history kept; what cannot
/// be inferred is refused, and a refused or newer store is left as it was.
@Suite struct PostgresMigrationTests {
    static func version1() -> [EntityDescription] {
        [
            EntityDescription("Author", attributes: [.init("name", .string)],
                              relationships: [.init("books", destination: "Book", inverse: "author", isToMany: true)]),
            EntityDescription("Book", attributes: [
                .init("title", .string, isOptional: false, defaultValue: .string("Untitled")), .init("pages", .int16),
                .init("year", .int32), .init("isbn", .string), .init("rating", .float),
            ], relationships: [.init("author", destination: "Author", inverse: "books")]),
        ]
    }

    /// Renames title to name, widens pages, turns year into text and rating into a Double, drops isbn, adds price
    /// (with a default) and subtitle, and tags (many-to-many).
    static func version2() -> [EntityDescription] {
        var entities = version1()
        var name = AttributeDescription("name", .string, isOptional: false, defaultValue: .string("Untitled"))
        name.renamingIdentifier = "title"
        entities[1].attributes = [
            name, .init("pages", .int32), .init("year", .string), .init("rating", .double),
            .init("price", .decimal, isOptional: false, defaultValue: .decimal(Decimal(string: "9.5")!)), .init("subtitle", .string),
        ]
        entities[1].relationships.append(.init("tags", destination: "Tag", inverse: "books", isToMany: true))
        entities.append(EntityDescription("Tag", attributes: [.init("label", .string)],
                                          relationships: [.init("books", destination: "Book", inverse: "tags", isToMany: true)]))
        return entities
    }

    /// A book may have several authors (a to-one becomes a to-many: a join table), and authors need a name.
    static func version3() -> [EntityDescription] {
        var entities = version2()
        entities[0].attributes = [.init("name", .string, isOptional: false, defaultValue: .string("Anonymous"), isIndexed: true)]
        entities[0].relationships = [.init("books", destination: "Book", inverse: "authors", isToMany: true)]
        entities[1].attributes[1] = .init("pages", .int64)
        var authors = RelationshipDescription("authors", destination: "Author", inverse: "books", isToMany: true)
        authors.renamingIdentifier = "author"
        entities[1].relationships[0] = authors
        return entities
    }

    static func versions(_ count: Int) throws -> SchemaVersions {
        try SchemaVersions(Array([version1(), version2(), version3()].prefix(count)).map { try Model(entities: $0) })
    }

    /// Two authors (one without a name), three books (one without an author), written by version 1.
    static func seed(_ database: TestDatabase) async throws -> [String: ObjectID] {
        let model = try Model(entities: version1())
        let store = try PostgresStore(configuration: database.configuration, model: model)
        return try await ObjectContext(coordinator: PersistentStoreCoordinator(model: model, store: store)).perform { ctx in
            let hugo = try ctx.insert("Author")
            try hugo.setValue("Hugo", forKey: "name")
            let nameless = try ctx.insert("Author")
            var books: [String: ManagedObject] = [:]
            for (title, pages, year, author) in [("Les Misérables", 1_463, 1_862, hugo), ("Notre-Dame", 940, 1_831, hugo), ("Anonymous", 120, 1_900, nil)] {
                let book = try ctx.insert("Book")
                try book.setValue(title, forKey: "title")
                try book.setValue(pages, forKey: "pages")
                try book.setValue(year, forKey: "year")
                try book.setValue(Float(4.5), forKey: "rating")
                try book.setObject(author, forKey: "author")
                books[title] = book
            }
            _ = nameless
            try ctx.save()
            return books.mapValues(\.objectID)
        }
    }

    @Test func aVersion1StoreOpensWithVersion3KeepingKeysValuesAndHistory() async throws {
        let database = try await TestDatabase.make()
        let ids = try await Self.seed(database)
        let store = try PostgresStore(configuration: database.configuration, versions: try Self.versions(3))
        let coordinator = PersistentStoreCoordinator(model: try Self.versions(3).current, store: store)
        try await ObjectContext(coordinator: coordinator).perform { ctx throws in
            let book = try ctx.existingObject(with: ObjectID(entityName: "Book", rawKey: ids["Les Misérables"]!.rawKey))
            #expect(try book.value(forKey: "name") == .string("Les Misérables"))
            #expect(try book.value(forKey: "pages") == .int(1_463))
            #expect(try book.value(forKey: "year") == .string("1862"))
            #expect(try book.value(forKey: "rating") == .double(4.5))
            #expect(try book.value(forKey: "price") == .decimal(Decimal(string: "9.5")!))
            #expect(try book.objects(forKey: "authors").map { try $0.value(forKey: "name") } == [.string("Hugo")])
            let authors = try ctx.fetch(FetchRequest(entityName: "Author", sortKeys: [SortKey("name")]))
            #expect(try authors.map { try $0.value(forKey: "name") } == [.string("Anonymous"), .string("Hugo")])
            let orphan = try ctx.existingObject(with: ObjectID(entityName: "Book", rawKey: ids["Anonymous"]!.rawKey))
            #expect(try orphan.objects(forKey: "authors").isEmpty)
            // New keys come after the old ones.
            let tag = try ctx.insert("Tag")
            try tag.setValue("classic", forKey: "label")
            try book.addObject(tag, forKey: "tags")
            let next = try ctx.insert("Book")
            try ctx.save()
            #expect(next.objectID.rawKey > ids.values.map(\.rawKey).max()!)
        }
        #expect(try coordinator.history(after: nil).count == 2)
        await database.drop()
    }

    /// What `objectgraph migrate postgres://…` does: the target lists only its own model, and the store's summary
    /// supplies the version that wrote it.
    @Test func aStoreMigratesToAModelThatDoesNotListItsVersion() async throws {
        let database = try await TestDatabase.make()
        let ids = try await Self.seed(database)
        let target = try SchemaVersions([Model(entities: Self.version2())])
        let summary = try PostgresStore.summary(configuration: database.configuration)
        let versions = try SchemaVersions.migrating(from: summary, to: target)
        #expect(try versions.plans(fromVersionWithHash: summary.modelHash).count == 1)
        let store = try PostgresStore(configuration: database.configuration, versions: versions)
        try await ObjectContext(coordinator: PersistentStoreCoordinator(model: target.current, store: store)).perform { ctx throws in
            let book = try ctx.existingObject(with: ObjectID(entityName: "Book", rawKey: ids["Notre-Dame"]!.rawKey))
            #expect(try book.value(forKey: "name") == .string("Notre-Dame"))
            #expect(try book.value(forKey: "year") == .string("1831"))
        }
        let migrated = try PostgresStore.summary(configuration: database.configuration)
        #expect(migrated.modelHash == target.current.versionHash && migrated.rowCounts == summary.rowCounts)
        #expect(try SchemaVersions.migrating(from: migrated, to: target).plans(fromVersionWithHash: migrated.modelHash).isEmpty)
        await database.drop()
    }

    @Test func progressReportsEveryEntityOfEveryStepWithItsRows() async throws {
        let database = try await TestDatabase.make()
        _ = try await Self.seed(database)
        let reports = Mutex<[MigrationProgress]>([])
        _ = try PostgresStore(configuration: database.configuration, versions: try Self.versions(3)) { report in
            reports.withLock { $0.append(report) }
        }
        let heard = reports.withLock { $0 }
        // Each step reports once per entity of the new version, its rows growing to the step's total: two authors
        // and three books (and, in the second step, no tags yet).
        #expect(heard.map(\.step) == [1, 1, 1, 2, 2, 2] && heard.allSatisfy { $0.steps == 2 })
        #expect(heard.map(\.entitiesDone) == [1, 2, 3, 1, 2, 3] && heard.allSatisfy { $0.entities == 3 })
        #expect(Set(heard.map(\.entity)) == ["Author", "Book", "Tag"])
        #expect(heard.allSatisfy { $0.rows == 5 && $0.rowsDone <= $0.rows })
        #expect(heard[2].rowsDone == 5 && heard[5].rowsDone == 5 && heard.last?.fractionDone == 1)
        await database.drop()
    }

    @Test func aRequiredAttributeWithoutValuesIsRefusedNamingItAndTheStoreIsLeftAsItWas() async throws {
        let database = try await TestDatabase.make()
        _ = try await Self.seed(database)
        var entities = Self.version1()
        entities[1].attributes.append(.init("publisher", .string, isOptional: false))
        let versions = try SchemaVersions([try Model(entities: Self.version1()), try Model(entities: entities)])
        #expect {
            _ = try PostgresStore(configuration: database.configuration, versions: versions)
        } throws: { error in
            guard case ObjectGraphError.migrationRefused(let path, let entity, let property, _) = error else { return false }
            return path == database.configuration.location && entity == "Book" && property == "publisher"
        }
        let model = try Model(entities: Self.version1())
        let store = try PostgresStore(configuration: database.configuration, model: model)
        #expect(try store.count(StoreFetchRequest(entityName: "Book")) == 3)
        await database.drop()
    }

    @Test func aStoreOfALaterVersionIsRefused() async throws {
        let database = try await TestDatabase.make()
        _ = try PostgresStore(configuration: database.configuration, versions: try Self.versions(2))
        #expect {
            _ = try PostgresStore(configuration: database.configuration, model: try Model(entities: Self.version1()))
        } throws: { error in
            guard case ObjectGraphError.modelMismatch(let path, _, _) = error else { return false }
            return path == database.configuration.location
        }
        await database.drop()
    }
}

/// Custom stages on PostgreSQL: code on a context of the old version before a step and of the new one after it, in
/// the migration's transaction, so a stage's failure leaves the store as it was.
@Suite struct PostgresStagedMigrationTests {
    static func shelf(_ attributes: [AttributeDescription], unique: [[String]] = []) -> [EntityDescription] {
        [EntityDescription("Item", attributes: attributes, uniquenessConstraints: unique)]
    }

    static let v1 = shelf([.init("code", .string), .init("title", .string)])
    /// v2: codes must be unique, and a number is kept beside the code.
    static let v2 = shelf([.init("code", .string), .init("title", .string), .init("number", .int64)], unique: [["code"]])
    /// v3: the code, now a number (an intermediate version and a stage make the change no rule infers).
    static var v3: [EntityDescription] {
        var number = AttributeDescription("code", .int64)
        number.renamingIdentifier = "number"
        return shelf([number, .init("title", .string)], unique: [["code"]])
    }

    static func writeV1(_ database: TestDatabase) async throws {
        let store = try PostgresStore(configuration: database.configuration, model: try Model(entities: v1))
        let coordinator = PersistentStoreCoordinator(model: try Model(entities: v1), store: store)
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            for (code, title) in [("7", "seven"), ("7", "seven again"), ("42", "answer")] {
                let item = try ctx.insert("Item")
                try item.setValue(code, forKey: "code")
                try item.setValue(title, forKey: "title")
            }
            try ctx.save()
        }
    }

    /// Removes duplicate codes before the uniqueness constraint; fills the number after, and adds an item.
    static let stages = [
        MigrationStage(from: 0, willMigrate: { ctx in
            var seen: Set<AttributeValue> = []
            var request = FetchRequest(entityName: "Item")
            request.sortKeys = [SortKey("title")]
            for item in try ctx.fetch(request) where !seen.insert(try item.value(forKey: "code")).inserted { try ctx.delete(item) }
        }, didMigrate: { ctx in
            for item in try ctx.fetch(FetchRequest(entityName: "Item")) {
                guard case .string(let code) = try item.value(forKey: "code") else { continue }
                try item.setValue(Int64(code), forKey: "number")
            }
            let added = try ctx.insert("Item")
            try added.setValue("99", forKey: "code")
            try added.setValue(Int64(99), forKey: "number")
            try added.setValue("added by the stage", forKey: "title")
        }),
    ]

    static func items(_ coordinator: PersistentStoreCoordinator) async throws -> [String] {
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            var request = FetchRequest(entityName: "Item")
            request.sortKeys = [SortKey("code"), SortKey("title")]
            return try ctx.fetch(request).map { "\(try $0.value(forKey: "code"))=\(try $0.value(forKey: "title"))" }
        }
    }

    @Test func stagesFixWhatNoRuleInfersAcrossAChain() async throws {
        let database = try await TestDatabase.make()
        try await Self.writeV1(database)
        let versions = try SchemaVersions([Self.v1, Self.v2, Self.v3].map { try Model(entities: $0) }, stages: Self.stages)
        let store = try PostgresStore(configuration: database.configuration, versions: versions)
        let coordinator = PersistentStoreCoordinator(model: versions.current, store: store)
        #expect(try await Self.items(coordinator) == ["7=\"seven\"", "42=\"answer\"", "99=\"added by the stage\""])
        // The stage's insert took its key from the store's sequence: the next insert gets a new one.
        let keys = try await ObjectContext(coordinator: coordinator).perform { ctx in
            let item = try ctx.insert("Item")
            try item.setValue(Int64(100), forKey: "code")
            try ctx.save()
            return try ctx.fetch(FetchRequest(entityName: "Item")).map(\.objectID.rawKey)
        }
        #expect(Set(keys).count == 4)
        await database.drop()
    }

    @Test func aStageThatThrowsLeavesTheStoreAsItWas() async throws {
        let database = try await TestDatabase.make()
        try await Self.writeV1(database)
        // The first stage's deletes and the step itself have run when the second stage throws: all of it goes back.
        let failing = MigrationStage(from: 0, willMigrate: Self.stages[0].willMigrate, didMigrate: { _ in
            throw ObjectGraphError.invalidFetch(entity: "Item", reason: "the stage failed on purpose")
        })
        let versions = try SchemaVersions([Self.v1, Self.v2].map { try Model(entities: $0) }, stages: [failing])
        #expect { _ = try PostgresStore(configuration: database.configuration, versions: versions) } throws: {
            "\($0)".contains("the stage failed on purpose")
        }
        let old = try PostgresStore(configuration: database.configuration, model: versions.models[0])
        let coordinator = PersistentStoreCoordinator(model: versions.models[0], store: old)
        #expect(try await Self.items(coordinator) == ["\"42\"=\"answer\"", "\"7\"=\"seven\"", "\"7\"=\"seven again\""])
        await database.drop()
    }
}
