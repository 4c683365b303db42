import Foundation
import GRDB
import Testing
@testable import ObjectGraph

/// A store written in format 1 (`Fixtures/format1.store`, made by the release that wrote that format) opens and is
/// upgraded in place: every row, reference, order and join kept, the old names gone.
@Suite struct StoreUpgradeTests {
    /// The model the fixture was written with.
    static let entities: [EntityDescription] = [
        EntityDescription("Author", attributes: [.init("name", .string)],
                          relationships: [.init("books", destination: "Book", inverse: "author", isToMany: true)]),
        EntityDescription("Media", attributes: [.init("title", .string, isIndexed: true)], isAbstract: true),
        EntityDescription("Book", attributes: [.init("pages", .int64)], relationships: [
            .init("author", destination: "Author", inverse: "books"),
            .init("chapters", destination: "Chapter", inverse: "book", isToMany: true, isOrdered: true),
            .init("tags", destination: "Tag", inverse: "books", isToMany: true),
        ], parent: "Media"),
        EntityDescription("Film", attributes: [.init("minutes", .int64)], parent: "Media"),
        EntityDescription("Chapter", attributes: [.init("heading", .string)],
                          relationships: [.init("book", destination: "Book", inverse: "chapters")]),
        EntityDescription("Tag", attributes: [.init("label", .string)],
                          relationships: [.init("books", destination: "Book", inverse: "tags", isToMany: true)]),
        // Format 1 named this join table after ItemSet ('_' sorts after 'S'), the current format after Item ('.'
        // sorts before it): source and target swap.
        EntityDescription("Item", attributes: [.init("name", .string)],
                          relationships: [.init("sets", destination: "ItemSet", inverse: "items", isToMany: true)]),
        EntityDescription("ItemSet", attributes: [.init("title", .string)],
                          relationships: [.init("items", destination: "Item", inverse: "sets", isToMany: true)]),
    ]

    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/format1.store")

    func copyOfFixture(_ folder: TemporaryFolder) throws -> URL {
        try FileManager.default.copyItem(at: Self.fixture, to: folder.storeURL)
        return folder.storeURL
    }


    @Test func aFormat1StoreIsUpgradedInPlaceKeepingEveryRow() async throws {
        let folder = try TemporaryFolder()
        let url = try copyOfFixture(folder)
        let model = try Model(entities: Self.entities)
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: url)
        let store = try #require(coordinator.store as? SQLiteStore)
        let (tables, format) = try await store.writer.read { db in
            (try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"),
             try String.fetchOne(db, sql: #"SELECT value FROM "objectgraph.metadata" WHERE key = 'format_version'"#))
        }
        #expect(format == "2")
        #expect(tables == ["Author", "Book.tags", "Chapter", "Item", "Item.sets", "ItemSet", "Media", "Tag",
                           "objectgraph.metadata", "objectgraph.schema", "objectgraph.sequence"])
        #expect(try await store.writer.read { try String.fetchAll($0, sql: "PRAGMA integrity_check") } == ["ok"])
        let context = ObjectContext(coordinator: coordinator)
        try await context.perform { ctx in
            let dune = try #require(try ctx.fetch(FetchRequest(entityName: "Book", format: "title == 'Dune'")).first)
            #expect(try dune.value(forKey: "pages") == .int(412))
            #expect(try dune.object(forKey: "author")?.value(forKey: "name") == .string("Ann"))
            #expect(try stringValues(try dune.objects(forKey: "chapters"), "heading") == ["Three", "One", "Two"])
            #expect(try stringValues(try dune.objects(forKey: "tags"), "label").sorted() == ["classic", "novel"])
            let film = try #require(try ctx.fetch(FetchRequest(entityName: "Film")).first)
            #expect(try film.value(forKey: "minutes") == .int(170))
            #expect(try ctx.count(for: FetchRequest(entityName: "Media")) == 3)
            let ink = try #require(try ctx.fetch(FetchRequest(entityName: "Item", format: "name == 'ink'")).first)
            #expect(try stringValues(try ink.objects(forKey: "sets"), "title").sorted() == ["desk", "refill"])
            let desk = try #require(try ctx.fetch(FetchRequest(entityName: "ItemSet", format: "title == 'desk'")).first)
            #expect(try stringValues(try desk.objects(forKey: "items"), "name").sorted() == ["ink", "pen"])
            // New objects take keys after the old ones, and everything saves.
            let book = try ctx.insert("Book")
            try book.setValue("Persuasion", forKey: "title")
            try book.setObject(try dune.object(forKey: "author"), forKey: "author")
            try ctx.save()
            #expect(book.objectID.rawKey == 4)
        }
        let reopened = ObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: url))
        let titles = try await reopened.perform { ctx in
            var request = try FetchRequest(entityName: "Book", format: "author.name == 'Ann'")
            request.sortKeys = [SortKey("title")]
            return try stringValues(try ctx.fetch(request), "title")
        }
        #expect(titles == ["Dune", "Emma", "Persuasion"])
    }

    @Test func aSummaryDescribesTheStoreAsItsModelBeforeAndAfterTheUpgrade() throws {
        let folder = try TemporaryFolder()
        let url = try copyOfFixture(folder)
        let before = try Data(contentsOf: url)
        let old = try StoreSummary(contentsOf: url)
        #expect(try Data(contentsOf: url) == before)
        #expect(old.formatVersion == 1)
        #expect(old.rowCounts == ["Author": 1, "Book": 2, "Film": 1, "Chapter": 3, "Tag": 2, "Item": 2, "ItemSet": 2])
        #expect(old.report.contains("Book : Media: 2 rows\n  pages: Integer 64?\n  author -> Author, inverse books"))
        _ = try PersistentStoreCoordinator(model: try Model(entities: Self.entities), storeURL: url)
        let upgraded = try StoreSummary(contentsOf: url)
        #expect(upgraded.formatVersion == 2 && upgraded.rowCounts == old.rowCounts && upgraded.modelHash == old.modelHash)
        let notAStore = folder.url.appendingPathComponent("other.sqlite")
        try Data("not a database at all, but long enough to be read as one".utf8).write(to: notAStore)
        #expect { try StoreSummary(contentsOf: notAStore) } throws: { "\($0)".contains("not a database") }
    }

    @Test func aFailedUpgradeLeavesTheStoreAsItWas() async throws {
        let folder = try TemporaryFolder()
        let url = try copyOfFixture(folder)
        // A chapter pointing at a book that does not exist: the upgrade's reference check refuses the whole store.
        let queue = try DatabaseQueue(path: url.path)
        try await queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            try db.execute(sql: "UPDATE Chapter SET book_id = 999 WHERE heading = 'One'")
            _ = try db.checkpoint(.truncate)
        }
        try queue.close()
        let before = try Data(contentsOf: url)
        #expect {
            try PersistentStoreCoordinator(model: try Model(entities: Self.entities), storeURL: url)
        } throws: { error in
            "\(error)".contains("refer to rows that do not exist") && "\(error)".contains("Chapter")
        }
        let after = try Data(contentsOf: url)
        #expect(after == before, "\(after.count) vs \(before.count) bytes; first difference at \(zip(after, before).enumerated().first { $1.0 != $1.1 }?.offset ?? -1)")
    }
}
