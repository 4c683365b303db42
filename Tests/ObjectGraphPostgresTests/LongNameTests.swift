import Foundation
import ObjectGraph
import ObjectGraphPostgres
import PredicateFormat
import Testing

/// A model whose entity, attribute and relationship names run past the 63 bytes PostgreSQL keeps of a name, and share
/// those bytes: every store keeps each name apart, so the same model works on each.
@Suite struct LongNameTests {
    /// 70 bytes that every long name below starts with.
    static let stem = String(repeating: "Abcdefghij", count: 7)
    static var shelf: String { stem + "Shelf" }
    static var volume: String { stem + "Volume" }
    static var code: String { stem + "code" }
    static var count: String { stem + "count" }

    static func model() throws -> Model {
        try Model(entities: [
            EntityDescription(
                shelf, attributes: [.init(code, .string, isIndexed: true), .init(count, .int64, isIndexed: true)],
                relationships: [
                    .init(stem + "volumes", destination: volume, inverse: stem + "shelves", isToMany: true),
                    .init(stem + "favourite", destination: volume, inverse: stem + "favouriteOf"),
                ],
                uniquenessConstraints: [[code]]),
            EntityDescription(
                volume, attributes: [.init("title", .string)],
                relationships: [
                    .init(stem + "shelves", destination: shelf, inverse: stem + "volumes", isToMany: true),
                    .init(stem + "favouriteOf", destination: shelf, inverse: stem + "favourite", isToMany: true),
                ]),
        ])
    }

    @Test(arguments: StoreKind.allCases)
    func aModelOfLongNamesSharingTheirFirstBytesWorksOnEveryStore(_ kind: StoreKind) async throws {
        let store = try await TestStore.make(kind, model: try Self.model())
        let (shelf, volume, code, count, stem) = (Self.shelf, Self.volume, Self.code, Self.count, Self.stem)
        let found = try await ObjectContext(coordinator: store.coordinator).perform { ctx in
            let dune = try ctx.insert(volume)
            try dune.setValue("Dune", forKey: "title")
            for (index, name) in ["north", "south"].enumerated() {
                let item = try ctx.insert(shelf)
                try item.setValue(name, forKey: code)
                try item.setValue(Int64(index + 1), forKey: count)
                try item.addObject(dune, forKey: stem + "volumes")
                try item.setObject(dune, forKey: stem + "favourite")
            }
            try ctx.save()
            let request = FetchRequest(
                entityName: shelf, predicate: try FormatPredicate(format: "\(count) > 1 AND ANY \(stem)volumes.title == 'Dune'", argumentArray: []))
            var totals = FetchRequest(entityName: shelf)
            totals.propertiesToFetch = [.aggregate(count, .sum, of: count), .aggregate(code, .count)]
            return (try ctx.fetch(request).map { try $0.value(forKey: code) }, try ctx.fetchDictionaries(totals),
                    try dune.objects(forKey: stem + "favouriteOf").count)
        }
        #expect(found.0 == [.string("south")])
        #expect(found.1 == [[count: .int(3), code: .int(2)]])
        #expect(found.2 == 2)
        // A broken uniqueness constraint names its keys, found by the index's (shortened) name.
        await #expect {
            try await ObjectContext(coordinator: store.coordinator).perform { ctx in
                let copy = try ctx.insert(shelf)
                try copy.setValue("north", forKey: code)
                try ctx.save()
            }
        } throws: { error in
            guard case ObjectGraphError.uniquenessViolation(let entity, let keys, _) = error else { return false }
            return entity == shelf && keys == [code]
        }
        // Batch requests write their own SQL: an update through the long names, then a delete of what it matched.
        let update = try BatchUpdateRequest(entityName: shelf, format: "\(count) >= 1", set: [count: "\(count) + 10"])
        #expect(try store.coordinator.execute(update).count == 2)
        #expect(try store.coordinator.execute(BatchDeleteRequest(entityName: shelf, predicate: try FormatPredicate(format: "\(count) == 12", argumentArray: []))).count == 1)
        if let database = store.database {
            // The store opens again with the same model, its names read back as written.
            let again = try PostgresStore(configuration: database.configuration, model: try Self.model())
            #expect(try again.count(StoreFetchRequest(entityName: shelf)) == 1)
        }
        await store.remove()
    }

    @Test func aModelOfLongNamesMigratesOnPostgreSQL() async throws {
        let store = try await TestStore.make(.postgres, model: try Self.model())
        let database = try #require(store.database)
        let (shelf, code) = (Self.shelf, Self.code)
        try await ObjectContext(coordinator: store.coordinator).perform { ctx in
            let item = try ctx.insert(shelf)
            try item.setValue("north", forKey: code)
            try ctx.save()
        }
        // Version 2 renames the long code (a new long name sharing the stem) and adds a long attribute with a default.
        var entities = try Self.model().entities.map(\.description)
        var renamed = AttributeDescription(Self.stem + "label", .string, isIndexed: true)
        renamed.renamingIdentifier = code
        entities[0].attributes[0] = renamed
        entities[0].uniquenessConstraints = [[Self.stem + "label"]]
        entities[0].attributes.append(.init(Self.stem + "added", .int64, isOptional: false, defaultValue: .int(7)))
        let versions = try SchemaVersions([try Self.model(), try Model(entities: entities)])
        let migrated = try PostgresStore(configuration: database.configuration, versions: versions)
        let values = try await ObjectContext(coordinator: PersistentStoreCoordinator(model: versions.current, store: migrated)).perform { ctx in
            try ctx.fetch(FetchRequest(entityName: shelf)).map { [try $0.value(forKey: Self.stem + "label"), try $0.value(forKey: Self.stem + "added")] }
        }
        #expect(values == [[.string("north"), .int(7)]])
        await store.remove()
    }

    @Test func postgresNamesAreKeptUpToTheLimitAndShortenedApartPastIt() {
        #expect(SQLDialect.postgresName("Book") == "Book")
        let limit = String(repeating: "é", count: 31) + "a"   // 63 bytes
        #expect(SQLDialect.postgresName(limit) == limit)
        let names = [Self.shelf, Self.volume, Self.code, Self.stem + "é" + "x", Self.stem + "é" + "y"]
        let shortened = names.map(SQLDialect.postgresName)
        #expect(shortened.allSatisfy { $0.utf8.count <= SQLDialect.postgresNameLimit && $0.hasPrefix(String(Self.stem.prefix(50)) + "~") })
        #expect(Set(shortened).count == names.count)
        #expect(names.map(SQLDialect.postgresName) == shortened)
        // Cut between code points, never inside one.
        let accented = SQLDialect.postgresName(String(repeating: "é", count: 40))
        #expect(accented.hasPrefix(String(repeating: "é", count: 25) + "~") && accented.utf8.count == 63)
        #expect(SQLDialect.postgres.quoted(Self.shelf) == "\"\(SQLDialect.postgresName(Self.shelf))\"")
        #expect(SQLDialect.sqlite.quoted(Self.shelf) == "\"\(Self.shelf)\"")
    }
}
