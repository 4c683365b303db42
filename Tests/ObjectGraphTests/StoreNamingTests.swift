import Foundation
import GRDB
import Testing
@testable import ObjectGraph

/// Every name a model may use works, and no two properties share a column: names the store once reserved, SQL
/// keywords, names like the store's own, names equal ignoring case, and sibling sub-entities' like-named properties.
@Suite struct StoreNamingTests {
    static let entities: [EntityDescription] = [
        EntityDescription("Post", attributes: [
            .init("id", .uuid), .init("version", .int64), .init("entity", .string), .init("order", .int32),
            .init("group", .string), .init("select", .string), .init("_entity", .string), .init("_version", .int64),
            .init("author_id", .int64), .init("Name", .string), .init("name", .string), .init("row_id", .string),
        ], relationships: [
            .init("author", destination: "person", inverse: "posts"),
            .init("where", destination: "Book_tags", inverse: "from", isToMany: true),
        ]),
        EntityDescription("person", attributes: [.init("name", .string)],
                          relationships: [.init("posts", destination: "Post", inverse: "author", isToMany: true)]),
        EntityDescription("Person", attributes: [.init("name", .string)]),
        EntityDescription("Book_tags", attributes: [.init("label", .string)],
                          relationships: [.init("from", destination: "Post", inverse: "where", isToMany: true)]),
        EntityDescription("Garment", attributes: [.init("title", .string)], isAbstract: true),
        EntityDescription("Coat", attributes: [.init("size", .string)], parent: "Garment"),
        EntityDescription("Shoe", attributes: [.init("size", .int64), .init("SIZE", .double)], parent: "Garment"),
    ]

    func values(_ object: ManagedObject, _ keys: [String]) throws -> [AttributeValue] { try keys.map { try object.value(forKey: $0) } }

    @Test(arguments: StoreKind.allCases)
    func everyCollisionIsStoredAndReadBackApart(_ kind: StoreKind) async throws {
        let model = try Model(entities: Self.entities)
        let folder = try TemporaryFolder()
        let uuid = UUID()
        let postValues: [String: AttributeValue] = [
            "id": .uuid(uuid), "version": .int(7), "entity": .string("an entity"), "order": .int(3), "group": .string("g"),
            "select": .string("s"), "_entity": .string("underscored"), "_version": .int(9), "author_id": .int(42),
            "Name": .string("upper"), "name": .string("lower"), "row_id": .string("r"),
        ]
        let writer = ObjectContext(coordinator: try kind.coordinator(model, folder))
        try await writer.perform { ctx in
            let post = try ctx.insert("Post")
            for (key, value) in postValues { try post.setValue(value, forKey: key) }
            let lower = try ctx.insert("person")
            try lower.setValue("lower person", forKey: "name")
            try ctx.insert("Person").setValue("upper person", forKey: "name")
            try post.setObject(lower, forKey: "author")
            let tag = try ctx.insert("Book_tags")
            try tag.setValue("a tag", forKey: "label")
            try post.setObjects([tag], forKey: "where")
            try ctx.insert("Coat").setValue("007", forKey: "size")
            let shoe = try ctx.insert("Shoe")
            try shoe.setValue(44, forKey: "size")
            try shoe.setValue(44.5, forKey: "SIZE")
            try ctx.save()
        }
        // A coordinator of its own reads what is stored, not what a context remembers.
        let coordinator = kind == .sqlite ? try kind.coordinator(model, folder) : writer.coordinator
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let post = try #require(try ctx.fetch(FetchRequest(entityName: "Post")).first)
            for (key, value) in postValues { #expect(try post.value(forKey: key) == value, "Post.\(key)") }
            #expect(try post.object(forKey: "author")?.value(forKey: "name") == .string("lower person"))
            #expect(try post.objects(forKey: "where").map { try $0.value(forKey: "label") } == [.string("a tag")])
            #expect(try ctx.fetch(FetchRequest(entityName: "Person")).map { try $0.value(forKey: "name") } == [.string("upper person")])
            #expect(try ctx.fetch(FetchRequest(entityName: "person")).map { try $0.value(forKey: "name") } == [.string("lower person")])
            #expect(try ctx.fetch(FetchRequest(entityName: "Coat")).map { try $0.value(forKey: "size") } == [.string("007")])
            let shoe = try #require(try ctx.fetch(FetchRequest(entityName: "Shoe")).first)
            #expect(try values(shoe, ["size", "SIZE"]) == [.int(44), .double(44.5)])
            // Predicates and sorts reach the right columns.
            #expect(try ctx.count(for: FetchRequest(entityName: "Post", format: "id == %@ AND version == 7 AND order == 3 AND author_id == 42", uuid)) == 1)
            #expect(try ctx.count(for: FetchRequest(entityName: "Post", format: "name == 'lower' AND Name == 'upper' AND author.name == 'lower person'")) == 1)
            #expect(try ctx.count(for: FetchRequest(entityName: "Coat", format: "#size == '007'")) == 1)
            #expect(try ctx.count(for: FetchRequest(entityName: "Shoe", format: "#size == 44 AND #SIZE > 44")) == 1)
            #expect(try ctx.count(for: FetchRequest(entityName: "Post", format: "ANY where.label == 'a tag'")) == 1)
        }
    }

    @Test func theStoreNamesItsOwnColumnsApartAndListsWhereEachPropertyIs() async throws {
        let model = try Model(entities: Self.entities)
        let folder = try TemporaryFolder()
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL)
        let store = try #require(coordinator.store as? SQLiteStore)
        let columns = try await store.writer.read { db in try db.columns(in: "Post").map(\.name) }
        #expect(Array(columns.prefix(3)) == ["row.id", "row.entity", "row.version"])
        #expect(columns.contains("id") && columns.contains("author_id") && columns.contains("author") && columns.contains("name.2"))
        let tables = try await store.writer.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        }
        // Declared first, `person` keeps its name; `Person` takes the next one.
        #expect(tables == ["Book_tags", "Book_tags.from", "Garment", "Person.2", "Post", "objectgraph.metadata",
                           "objectgraph.schema", "objectgraph.sequence", "person"])
        let garment = try await store.writer.read { db in
            try Row.fetchAll(db, sql: #"SELECT entity, property, "column" FROM "objectgraph.schema" WHERE "table" = 'Garment' AND property IS NOT NULL ORDER BY entity, property"#)
                .map { "\($0[0] as String).\($0[1] as String)=\($0[2] as String)" }
        }
        #expect(garment == ["Coat.size=size", "Garment.title=title", "Shoe.SIZE=SIZE.3", "Shoe.size=size.2"])
    }

    @Test(arguments: [("a.b", "a name cannot contain '.'"), ("", "a name cannot be empty"), ("tab\tbed", "control characters")])
    func namesAModelCannotUseAreRefusedNamingTheProperty(_ name: String, _ reason: String) {
        #expect {
            try Model(entities: [EntityDescription("A", attributes: [.init(name, .string)])])
        } throws: { error in
            "\(error)".contains("A.\(name)") && "\(error)".contains(reason)
        }
    }
}
