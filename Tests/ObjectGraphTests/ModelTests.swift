import Foundation
import Testing
@testable import ObjectGraph

@Suite struct ModelTests {
    /// A save deletes a table's rows before those of the tables its foreign keys refer to (chapters before their
    /// books, books before their authors), so the store never nullifies a reference in a row it deletes next; rows
    /// of one table keep their order.
    @Test func deletionsRunReferringTablesFirst() throws {
        let model = try Fixtures.model()
        let ids = [
            ObjectID(entityName: "Author", rawKey: 1), ObjectID(entityName: "Book", rawKey: 2), ObjectID(entityName: "Chapter", rawKey: 3),
            ObjectID(entityName: "Movie", rawKey: 4), ObjectID(entityName: "Book", rawKey: 1), ObjectID(entityName: "Chapter", rawKey: 1),
            ObjectID(entityName: "Tag", rawKey: 9),
        ]
        let ordered = model.deletionOrder(of: ids).map { ids[$0] }
        #expect(Set(ordered) == Set(ids) && ordered.count == ids.count)
        let position = { (id: ObjectID) in ordered.firstIndex(of: id)! }
        for chapter in ids where chapter.entityName == "Chapter" {
            for media in ids where media.entityName == "Book" || media.entityName == "Movie" { #expect(position(chapter) < position(media)) }
        }
        for book in ids where book.entityName == "Book" { #expect(position(book) < position(ids[0])) }
        // One table's rows (Book and Movie share Media's) keep the order given.
        #expect(ordered.filter { ["Book", "Movie"].contains($0.entityName) } == [ids[1], ids[3], ids[4]])
        #expect(ordered.filter { $0.entityName == "Chapter" } == [ids[2], ids[5]])
        // Rows of one table alone are left as given.
        #expect(model.deletionOrder(of: [ids[4], ids[1]]) == [0, 1])
    }

    @Test func buildsAndResolvesInheritanceAndStorage() throws {
        let model = try Fixtures.model()
        let book = try model.entity(named: "Book")
        #expect(book.rootName == "Media")
        #expect(book.attributes.map(\.name) == ["title", "pages", "isbn"])
        #expect(try model.entity(named: "Media").selfAndDescendantNames == ["Media", "Book", "Movie"])
        #expect(book.relationship(named: "author")?.storage == .foreignKey(column: "author"))
        #expect(try model.entity(named: "Author").relationship(named: "books")?.storage
            == .inverseForeignKey(column: "author", orderColumn: nil))
        #expect(book.relationship(named: "chapters")?.storage == .inverseForeignKey(column: "book", orderColumn: "book.order"))
        #expect(book.relationship(named: "tags")?.storage == .joinTable(table: "Book.tags", isSourceSide: true))
        #expect(try model.entity(named: "Tag").relationship(named: "books")?.storage == .joinTable(table: "Book.tags", isSourceSide: false))
    }

    @Test func versionHashIsStableAndOrderIndependent() throws {
        let a = try Model(entities: Fixtures.entities)
        let b = try Model(entities: Fixtures.entities.reversed())
        #expect(a.versionHash == b.versionHash)
        #expect(a.versionHash.count == 32)
        var changed = Fixtures.entities
        changed[0].attributes[0].maxLength = 41
        #expect(try Model(entities: changed).versionHash != a.versionHash)
    }

    static let broken: [(String, [EntityDescription], String)] = [
        ("duplicate entity", [EntityDescription("A"), EntityDescription("A")], "entity A: two entities have this name"),
        ("unknown parent", [EntityDescription("A", parent: "Nope")], "entity A: its parent entity 'Nope' is not in the model"),
        ("missing inverse",
         [EntityDescription("A", relationships: [.init("b", destination: "B", inverse: "a")]), EntityDescription("B")],
         "A.b: its inverse 'a' is not a relationship of B"),
        ("mismatched inverse",
         [EntityDescription("A", relationships: [.init("b", destination: "B", inverse: "a"), .init("c", destination: "B", inverse: "a")]),
          EntityDescription("B", relationships: [.init("a", destination: "A", inverse: "b")])],
         "A.c: its inverse B.a names A.b as its own inverse"),
        ("unknown destination", [EntityDescription("A", relationships: [.init("b", destination: "Ghost", inverse: "a")])],
         "A.b: its destination entity 'Ghost' is not in the model"),
        ("duplicate property", [EntityDescription("A", attributes: [.init("x", .string), .init("x", .int64)])],
         "A.x: two properties have this name"),
        ("inherited duplicate", [EntityDescription("P", attributes: [.init("x", .string)]),
                                 EntityDescription("C", attributes: [.init("x", .string)], parent: "P")],
         "C.x: two properties have this name"),
        ("dotted name", [EntityDescription("A", attributes: [.init("a.b", .int64)])], "A.a.b: a name cannot contain '.'"),
        ("empty name", [EntityDescription("A", relationships: [.init("", destination: "A", inverse: "")])], "A.: a name cannot be empty"),
        ("dotted entity", [EntityDescription("A.B")], "A.B: a name cannot contain '.'"),
        ("bad default", [EntityDescription("A", attributes: [.init("n", .int16, defaultValue: .string("x"))])],
         "A.n: default value \"x\" does not fit type Integer 16"),
        ("constraint on unknown key", [EntityDescription("A", uniquenessConstraints: [["nope"]])], "A.nope: a uniqueness constraint"),
        ("ordered to-one",
         [EntityDescription("A", relationships: [.init("b", destination: "B", inverse: "a", isOrdered: true)]),
          EntityDescription("B", relationships: [.init("a", destination: "A", inverse: "b")])],
         "A.b: only a to-many relationship can be ordered"),
        ("parent loop", [EntityDescription("A", parent: "B"), EntityDescription("B", parent: "A")], "its parent chain loops"),
    ]

    @Test(arguments: broken.indices)
    func wrongModelsThrowNamingEntityAndProperty(_ index: Int) {
        let (_, entities, expected) = Self.broken[index]
        do {
            _ = try Model(entities: entities)
            Issue.record("\(Self.broken[index].0): the model built")
        } catch let error as ObjectGraphError {
            #expect(error.message.contains(expected), "\(error.message)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
