import Foundation
import GRDB
import GRDBSQLite
import Testing
@testable import ObjectGraph

/// A save writes runs of new rows of one entity many rows per INSERT (``InsertStatements``). Whatever the chunk
/// size SQLite's parameter limit allows, the file must hold exactly the rows a row-per-statement save would write.
@Suite struct ChunkedInsertTests {
    /// What one inserted object must be in the file.
    struct Expected: Sendable {
        let id: ObjectID
        let title: String
        let number: Int64
        let hasAuthor: Bool
    }

    /// Lowers SQLite's limit on a statement's parameters on the store's writer, so chunks hold fewer rows.
    private func limitParameters(_ coordinator: PersistentStoreCoordinator, to limit: Int32) throws {
        let store = try #require(coordinator.store as? SQLiteStore)
        store.writer.writeWithoutTransaction { db in
            _ = sqlite3_limit(db.sqliteConnection, SQLITE_LIMIT_VARIABLE_NUMBER, limit)
        }
    }

    /// Reads the store's file with GRDB, synchronously (in an async test GRDB's async overloads would be chosen).
    private func read<T>(_ folder: TemporaryFolder, _ body: (Database) throws -> T) throws -> T {
        try DatabaseQueue(path: folder.storeURL.path).read(body)
    }

    /// Book rows bind 5 parameters (key, title, pages, isbn, author), Movie rows 3 (key, title, minutes). No limit
    /// given: 64 rows a statement; 30: Books 6 and Movies 10 a statement; 8: Books one at a time, Movies 2.
    @Test(arguments: [nil, 30, 8] as [Int32?])
    func runsOfEntitiesAcrossChunkBoundariesAreWrittenRowForRow(parameterLimit: Int32?) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try StoreKind.sqlite.coordinator(try Fixtures.model(), folder)
        if let parameterLimit { try limitParameters(coordinator, to: parameterLimit) }
        let context = ObjectContext(coordinator: coordinator)
        // Runs: 133 Books (two chunks of 64 and 5 more), 3 Movies, a Tag (another table), 70 Books, 1 Movie.
        let runs: [(entity: String, count: Int)] = [("Book", 133), ("Movie", 3), ("Tag", 1), ("Book", 70), ("Movie", 1)]
        let expected = try await context.perform { ctx in
            let author = try ctx.insert("Author")
            try author.setValue("Ann", forKey: "name")
            var objects: [(ManagedObject, String, Int64, Bool)] = []
            var serial: Int64 = 0
            for run in runs {
                for _ in 0..<run.count {
                    serial += 1
                    let object = try ctx.insert(run.entity)
                    switch run.entity {
                    case "Book":
                        try object.setValue("book \(serial)", forKey: "title")
                        try object.setValue(serial, forKey: "pages")
                        // Every third book has no author: a NULL key among bound ones.
                        let hasAuthor = serial % 3 != 0
                        if hasAuthor { try object.setObject(author, forKey: "author") }
                        objects.append((object, "book \(serial)", serial, hasAuthor))
                    case "Movie":
                        try object.setValue("movie \(serial)", forKey: "title")
                        try object.setValue(serial * 10, forKey: "minutes")
                        objects.append((object, "movie \(serial)", serial * 10, false))
                    default:
                        try object.setValue("tag \(serial)", forKey: "label")
                    }
                }
            }
            try ctx.save()
            return (author: author.objectID, media: objects.map { Expected(id: $0.0.objectID, title: $0.1, number: $0.2, hasAuthor: $0.3) })
        }
        #expect(expected.media.count == 207)
        // Keys follow the order of insertion across the tree (Books and Movies share the Media table's keys).
        #expect(expected.media.map(\.id.rawKey) == Array(1...207))

        let rows = try read(folder) { db in
            try Row.fetchAll(db, sql: "SELECT \"row.id\", \"row.entity\", \"row.version\", title, pages, minutes, author FROM Media ORDER BY \"row.id\"")
        }
        try #require(rows.count == expected.media.count)
        for (row, object) in zip(rows, expected.media) {
            let isBook = object.id.entityName == "Book"
            #expect(row["row.id"] as Int64 == object.id.rawKey)
            #expect(row["row.entity"] as String == object.id.entityName)
            #expect(row["row.version"] as Int64 == 1)
            #expect(row["title"] as String == object.title)
            #expect(row[isBook ? "pages" : "minutes"] as Int64 == object.number, "\(object.id)")
            #expect(row[isBook ? "minutes" : "pages"] as Int64? == nil, "\(object.id)")
            #expect(row["author"] as Int64? == (object.hasAuthor ? expected.author.rawKey : nil), "\(object.id)")
        }
        let tags = try read(folder) { db in try String.fetchAll(db, sql: "SELECT label FROM Tag") }
        #expect(tags == ["tag 137"])

        // A second coordinator reads the same objects back through the library.
        let reader = ObjectContext(coordinator: try StoreKind.sqlite.coordinator(try Fixtures.model(), folder))
        try await reader.perform { ctx in
            let author = try ctx.existingObject(with: expected.author)
            #expect(try author.objects(forKey: "books").count == expected.media.filter(\.hasAuthor).count)
            for object in expected.media where object.id.rawKey % 17 == 0 {
                let stored = try ctx.existingObject(with: object.id)
                #expect(try stored.value(forKey: "title") == .string(object.title))
            }
        }
    }

    /// A duplicate inside a chunk (row 40 of 100 repeats row 10's ISBN) and one written by a single-row statement
    /// after the chunk (row 90 repeats row 5's): either way the save fails naming the constraint, writes nothing,
    /// and keeps every change, so the corrected save writes all 100 rows.
    @Test(arguments: [40, 90])
    func aDuplicateAnywhereInARunFailsTheWholeSave(duplicateAt position: Int) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try StoreKind.sqlite.coordinator(try Fixtures.model(), folder)
        let context = ObjectContext(coordinator: coordinator)
        let original = position == 40 ? 10 : 5
        try await context.perform { ctx in
            var books: [ManagedObject] = []
            for index in 0..<100 {
                let book = try ctx.insert("Book")
                try book.setValue("book \(index)", forKey: "title")
                try book.setValue("\(100 + (index == position ? original : index))-0000", forKey: "isbn")
                books.append(book)
            }
            #expect {
                try ctx.save()
            } throws: { error in
                guard case ObjectGraphError.uniquenessViolation(let entity, let keys, _) = error else { return false }
                return entity == "Book" && keys == ["isbn"]
            }
            #expect(books.allSatisfy { $0.objectID.isTemporaryID && $0.isInserted })
            try books[position].setValue("\(100 + position)-0000", forKey: "isbn")
            try ctx.save()
        }
        let isbns = try read(folder) { db in
            try String.fetchAll(db, sql: "SELECT isbn FROM Media ORDER BY \"row.id\"")
        }
        #expect(isbns == (0..<100).map { "\(100 + $0)-0000" })
    }

    /// The entity's name is a literal of the INSERT's SQL: quotes in it are written as they are.
    @Test func anEntityNamedWithQuotesIsWrittenByName() async throws {
        let name = "O'Brien's \"Notes\""
        let model = try Model(entities: [EntityDescription(name, attributes: [.init("line", .int64)])])
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try StoreKind.sqlite.coordinator(model, folder))
        try await context.perform { ctx in
            for line in 0..<70 { try ctx.insert(name).setValue(Int64(line), forKey: "line") }
            try ctx.save()
        }
        let rows = try read(folder) { db in
            try Row.fetchAll(db, sql: "SELECT \"row.entity\", line FROM \"O'Brien's \"\"Notes\"\"\" ORDER BY \"row.id\"")
        }
        #expect(rows.map { $0["row.entity"] as String } == Array(repeating: name, count: 70))
        #expect(rows.map { $0["line"] as Int64 } == (0..<70).map(Int64.init))
    }
}
