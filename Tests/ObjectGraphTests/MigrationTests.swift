import Foundation
import GRDB
import Synchronization
import Testing
@testable import ObjectGraph

/// Lightweight migration: a store an earlier model version wrote opens with the current version, migrated in one
/// transaction by the plan inferred between each two versions; what cannot be inferred is refused, and a refused or
/// newer store is left byte for byte as it was.
@Suite struct MigrationTests {
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

    /// Renames title to name, widens pages, turns year into text and rating into Double, drops isbn, adds price
    /// (with a default) and subtitle, and a Tag entity with a many-to-many relationship.
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

    /// A book may now have several authors (to-one becomes to-many: a join table), authors need a name (with a
    /// default for those without), pages widen again, and the name gets an index.
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

    static func versions(_ count: Int = 3) throws -> SchemaVersions {
        try SchemaVersions(Array([version1(), version2(), version3()].prefix(count)).map { try Model(entities: $0) })
    }

    /// A store written by version 1: two authors (one without a name), three books (one without an author).
    /// The same three versions as model files the project wrote (`Fixtures/Shelf.xcdatamodeld`).
    static func xcodeVersions() throws -> SchemaVersions {
        try SchemaVersions(contentsOf: XcodeModelTests.fixtures.appendingPathComponent("Shelf.xcdatamodeld"))
    }

    /// The same three versions as `@Entity` classes.
    static func entityVersions() throws -> SchemaVersions {
        try SchemaVersions([
            Model([LibraryV1.Author.self, LibraryV1.Book.self]),
            Model([LibraryV2.Author.self, LibraryV2.Book.self, LibraryV2.Tag.self]),
            Model([LibraryV3.Author.self, LibraryV3.Book.self, LibraryV3.Tag.self]),
        ])
    }

    enum Source: String, CaseIterable, Sendable { case runTimeModels, xcodeBundle, entityClasses }

    func writeVersion1(_ folder: TemporaryFolder, model: Model? = nil) async throws {
        let coordinator = try PersistentStoreCoordinator(model: try model ?? Model(entities: Self.version1()), storeURL: folder.storeURL)
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let ann = try ctx.insert("Author")
            try ann.setValue("Ann", forKey: "name")
            let nobody = try ctx.insert("Author")
            for (title, pages, year, author) in [("Dune", 412, 1965, ann), ("Emma", 300, 1815, nobody), ("Loose", 10, 2001, nil)] as [(String, Int, Int, ManagedObject?)] {
                let book = try ctx.insert("Book")
                try book.setValue(title, forKey: "title")
                try book.setValue(pages, forKey: "pages")
                try book.setValue(year, forKey: "year")
                try book.setValue("123", forKey: "isbn")
                try book.setValue(1.5, forKey: "rating")
                try book.setObject(author, forKey: "author")
            }
            try ctx.save()
        }
    }


    @Test(arguments: Source.allCases)
    func aStoreOfVersionOneMigratesThroughTwoToThree(_ source: Source) async throws {
        let folder = try TemporaryFolder()
        let versions = switch source {
        case .runTimeModels: try Self.versions()
        case .xcodeBundle: try Self.xcodeVersions()
        case .entityClasses: try Self.entityVersions()
        }
        #expect(versions.models.count == 3 && versions.currentIndex == 2)
        try await writeVersion1(folder, model: versions.models[0])
        let plan = try MigrationPlan(from: versions.models[0], to: versions.models[1])
        #expect(plan.description.contains("~ name: renamed from title"))
        #expect(plan.description.contains("~ pages: converted from Integer 16") && plan.description.contains("- isbn"))
        #expect(plan.description.contains("+ price = 9.5") && plan.description.contains("Tag: new entity"))
        #expect(plan.description.contains("tables rebuilt, every row copied") && plan.additions == nil)
        let coordinator = try PersistentStoreCoordinator(versions: versions, storeURL: folder.storeURL)
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            var request = FetchRequest(entityName: "Book")
            request.sortKeys = [SortKey("name")]
            let books = try ctx.fetch(request)
            #expect(try stringValues(books, "name") == ["Dune", "Emma", "Loose"])
            #expect(try books.map { try $0.value(forKey: "pages") } == [.int(412), .int(300), .int(10)])
            #expect(try stringValues(books, "year") == ["1965", "1815", "2001"])
            #expect(try books.map { try $0.value(forKey: "rating") } == Array(repeating: .double(1.5), count: 3))
            #expect(try books.map { try $0.value(forKey: "price") } == Array(repeating: .decimal(Decimal(string: "9.5")!), count: 3))
            #expect(try books.map { try stringValues(try $0.objects(forKey: "authors"), "name") } == [["Ann"], ["Anonymous"], []])
            let ann = try #require(try ctx.fetch(FetchRequest(entityName: "Author", format: "name == 'Ann'")).first)
            #expect(try stringValues(try ann.objects(forKey: "books"), "name") == ["Dune"])
            // The migrated store works on: a new book with two authors saves and gets a key after the old ones.
            let book = try ctx.insert("Book")
            try book.setValue("Both", forKey: "name")
            try book.setObjects(try ctx.fetch(FetchRequest(entityName: "Author")), forKey: "authors")
            try ctx.save()
            #expect(book.objectID.rawKey == 4)
        }
        // Now a store of version 3 alone.
        let reopened = try PersistentStoreCoordinator(model: versions.current, storeURL: folder.storeURL)
        let count = try await ObjectContext(coordinator: reopened).perform { ctx in
            try ctx.count(for: FetchRequest(entityName: "Book", format: "ANY authors.name == 'Ann'"))
        }
        #expect(count == 2)
        let store = try #require(reopened.store as? SQLiteStore)
        let check = try await store.writer.read { db in
            (try String.fetchAll(db, sql: "PRAGMA integrity_check"), try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").count,
             try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE name LIKE 'objectgraph.migrating.%'"))
        }
        #expect(check.0 == ["ok"] && check.1 == 0 && check.2.isEmpty)
    }

    /// Opening with `versions` throws `expected`, naming the store; the store then opens with version 1 and holds
    /// its three books. With `untouched`, the file is also byte for byte as it was (a refusal found before the file
    /// is opened for writing; one found in the data rolls its transaction back).
    func refuses(_ folder: TemporaryFolder, with versions: SchemaVersions, _ expected: String, untouched: Bool) async throws {
        let before = try Data(contentsOf: folder.storeURL)
        #expect { try PersistentStoreCoordinator(versions: versions, storeURL: folder.storeURL) } throws: { error in
            "\(error)".contains(expected) && "\(error)".contains(folder.storeURL.path)
        }
        if untouched { #expect(try Data(contentsOf: folder.storeURL) == before) }
        let old = try PersistentStoreCoordinator(model: versions.models[0], storeURL: folder.storeURL)
        let count = try await ObjectContext(coordinator: old).perform { ctx in try ctx.count(for: FetchRequest(entityName: "Book")) }
        #expect(count == 3)
    }

    @Test func aChangeNoRuleInfersIsRefusedAndTheStoreLeftAsItWas() async throws {
        let folder = try TemporaryFolder()
        try await writeVersion1(folder)
        var changed = Self.version1()
        changed[1].attributes[0] = .init("title", .int64)
        try await refuses(folder, with: try SchemaVersions([Model(entities: Self.version1()), Model(entities: changed)]),
                    "Book.title: its type changes from String to Integer 64, which no rule converts without loss", untouched: true)
        changed = Self.version1()
        changed[0].relationships[0] = .init("books", destination: "Book", inverse: "author")
        changed[1].relationships[0] = .init("author", destination: "Author", inverse: "books")
        try await refuses(folder, with: try SchemaVersions([Model(entities: Self.version1()), Model(entities: changed)]),
                    "Author.books: it changes from to-many to to-one", untouched: true)
        // Worked out apart from any store, the plan's refusal names no store.
        #expect {
            _ = try MigrationPlan(from: Model(entities: Self.version1()), to: Model(entities: changed))
        } throws: { error in
            "\(error)".hasPrefix("no migration between these model versions is inferred: Author.books: it changes from to-many to to-one")
        }
    }

    @Test func dataTheNewModelRefusesIsNamedAndTheStoreLeftAsItWas() async throws {
        let folder = try TemporaryFolder()
        try await writeVersion1(folder)
        var required = Self.version1()
        required[0].attributes[0] = .init("name", .string, isOptional: false)
        try await refuses(folder, with: try SchemaVersions([Model(entities: Self.version1()), Model(entities: required)]),
                    "Author.name: it is required and has no default, but 1 of the rows have no value for it", untouched: false)
        var unique = Self.version1()
        unique[1].uniquenessConstraints = [["isbn"]]
        try await refuses(folder, with: try SchemaVersions([Model(entities: Self.version1()), Model(entities: unique)]),
                    "Book.isbn: its uniqueness constraint finds rows with the same values (\"123\" in 3 rows)", untouched: false)
        // The same, in a step that rebuilds the table (pages widens).
        unique[1].attributes[1] = .init("pages", .int64)
        try await refuses(folder, with: try SchemaVersions([Model(entities: Self.version1()), Model(entities: unique)]),
                          "Book.isbn: its uniqueness constraint finds rows with the same values (\"123\" in 3 rows)", untouched: false)
    }

    @Test func aMigrationInferredFromTheStoreAloneReportsItsProgress() async throws {
        let folder = try TemporaryFolder()
        try await writeVersion1(folder)
        let target = try SchemaVersions([Model(entities: Self.version2())])
        let versions = try SchemaVersions.migrating(storeAt: folder.storeURL, to: target)
        #expect(versions.models.count == 2 && versions.current.versionHash == target.current.versionHash)
        #expect(try versions.plans(fromVersionWithHash: versions.models[0].versionHash).count == 1)
        #expect(try versions.plans(fromVersionWithHash: versions.current.versionHash).isEmpty)
        let reports = Mutex<[MigrationProgress]>([])
        _ = try PersistentStoreCoordinator(versions: versions, storeURL: folder.storeURL) { progress in reports.withLock { $0.append(progress) } }
        let all = reports.withLock { $0 }
        #expect(all.map(\.entity) == ["Author", "Book", "Tag"])
        #expect(all.map(\.rowsDone) == [2, 5, 5] && all.allSatisfy { $0.rows == 5 && $0.step == 1 && $0.steps == 1 })
        #expect(all.last?.fractionDone == 1)
    }

    @Test func aStepThatOnlyAddsChangesTheSchemaInPlace() async throws {
        let folder = try TemporaryFolder()
        try await writeVersion1(folder)
        var added = Self.version1()
        added[1].attributes += [.init("subtitle", .string), .init("price", .double, isOptional: false, defaultValue: .double(2.5))]
        added[1].attributes[0].isIndexed = true
        // Where the table's rows start in the file: a rebuilt table starts elsewhere.
        let rootPage = { @Sendable (url: URL) async throws in
            try await DatabaseQueue(path: url.path).read { db in try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = 'Book'") }
        }
        let before = try await rootPage(folder.storeURL)
        let versions = try SchemaVersions([Model(entities: Self.version1()), Model(entities: added)])
        let plan = try MigrationPlan(from: versions.models[0], to: versions.models[1])
        #expect(plan.description.contains("only adds, in place") && plan.additions?.columns.map(\.name) == ["subtitle", "price"])
        let coordinator = try PersistentStoreCoordinator(versions: versions, storeURL: folder.storeURL)
        let values = try await ObjectContext(coordinator: coordinator).perform { ctx in
            var request = FetchRequest(entityName: "Book")
            request.sortKeys = [SortKey("title")]
            return try ctx.fetch(request).map { "\(try $0.value(forKey: "title")) \(try $0.value(forKey: "subtitle")) \(try $0.value(forKey: "price"))" }
        }
        #expect(values == ["\"Dune\" nil 2.5", "\"Emma\" nil 2.5", "\"Loose\" nil 2.5"])
        #expect(try await rootPage(folder.storeURL) == before)
        let indexes = try await DatabaseQueue(path: folder.storeURL.path).read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Book' ORDER BY name")
        }
        #expect(indexes.contains("Book(title)"))
        let listed = try await DatabaseQueue(path: folder.storeURL.path).read { db in
            try String.fetchAll(db, sql: #"SELECT property || ':' || "column" FROM "objectgraph.schema" WHERE entity = 'Book' AND kind = 'attribute' ORDER BY property"#)
        }
        #expect(listed == ["isbn:isbn", "pages:pages", "price:price", "rating:rating", "subtitle:subtitle", "title:title", "year:year"])
    }

    @Test func removingAParentMovesItsAttributesDownAndTheRowsOut() async throws {
        let withParent = try Model(entities: [
            EntityDescription("Media", attributes: [.init("name", .string)], isAbstract: true),
            EntityDescription("Book", attributes: [.init("pages", .int64)], parent: "Media"),
            EntityDescription("Film", attributes: [.init("minutes", .int64)], parent: "Media"),
        ])
        let alone = try Model(entities: [
            EntityDescription("Book", attributes: [.init("name", .string), .init("pages", .int64)]),
            EntityDescription("Film", attributes: [.init("name", .string), .init("minutes", .int64)]),
        ])
        let folder = try TemporaryFolder()
        try await ObjectContext(coordinator: try PersistentStoreCoordinator(model: withParent, storeURL: folder.storeURL)).perform { ctx in
            for (entity, name, key, value) in [("Book", "Dune", "pages", 412), ("Film", "Heat", "minutes", 170), ("Book", "Emma", "pages", 300)] {
                let object = try ctx.insert(entity)
                try object.setValue(name, forKey: "name")
                try object.setValue(value, forKey: key)
            }
            try ctx.save()
        }
        let coordinator = try PersistentStoreCoordinator(versions: try SchemaVersions([withParent, alone]), storeURL: folder.storeURL)
        let (books, films) = try await ObjectContext(coordinator: coordinator).perform { ctx in
            var request = FetchRequest(entityName: "Book")
            request.sortKeys = [SortKey("name")]
            return (try ctx.fetch(request).map { "\(try $0.value(forKey: "name")) \(try $0.value(forKey: "pages"))" },
                    try ctx.fetch(FetchRequest(entityName: "Film")).map { "\(try $0.value(forKey: "name")) \(try $0.value(forKey: "minutes"))" })
        }
        #expect(books == ["\"Dune\" 412", "\"Emma\" 300"] && films == ["\"Heat\" 170"])
        let store = try #require(coordinator.store as? SQLiteStore)
        let tables = try await store.writer.read { db in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'objectgraph.%' ORDER BY name") }
        #expect(tables == ["Book", "Film"])
    }

    @Test func anyValueBecomesText() async throws {
        let before = try Model(entities: [EntityDescription("Doc", attributes: [
            .init("when", .date), .init("blob", .binary), .init("flag", .bool), .init("count", .int32), .init("ratio", .double), .init("id", .uuid),
        ])])
        let after = try Model(entities: [EntityDescription("Doc", attributes: ["when", "blob", "flag", "count", "ratio", "id"].map { .init($0, .string) })])
        let folder = try TemporaryFolder()
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        try await ObjectContext(coordinator: try PersistentStoreCoordinator(model: before, storeURL: folder.storeURL)).perform { ctx in
            let doc = try ctx.insert("Doc")
            try doc.setValue(Date(timeIntervalSince1970: 1_700_000_000.25), forKey: "when")
            try doc.setValue(Data([0xCA, 0xFE]), forKey: "blob")
            try doc.setValue(true, forKey: "flag")
            try doc.setValue(42, forKey: "count")
            try doc.setValue(2.5, forKey: "ratio")
            try doc.setValue(uuid, forKey: "id")
            _ = try ctx.insert("Doc")
            try ctx.save()
        }
        let coordinator = try PersistentStoreCoordinator(versions: try SchemaVersions([before, after]), storeURL: folder.storeURL)
        let texts = try await ObjectContext(coordinator: coordinator).perform { ctx in
            var request = FetchRequest(entityName: "Doc")
            request.sortKeys = [SortKey("count", ascending: false)]
            return try ctx.fetch(request).map { doc in try ["when", "blob", "flag", "count", "ratio", "id"].map { "\(try doc.value(forKey: $0))" } }
        }
        #expect(texts == [
            ["\"2023-11-14T22:13:20.250Z\"", "\"cafe\"", "\"1\"", "\"42\"", "\"2.5\"", "\"\(uuid.uuidString)\""],
            ["nil", "nil", "nil", "nil", "nil", "nil"],
        ])
    }

    @Test func aStoreOfANewerVersionIsRefusedUntouched() async throws {
        let folder = try TemporaryFolder()
        let all = try Self.versions()
        _ = try PersistentStoreCoordinator(model: all.current, storeURL: folder.storeURL)
        let before = try Data(contentsOf: folder.storeURL)
        let older = try SchemaVersions(all.models, current: 1)
        #expect { try PersistentStoreCoordinator(versions: older, storeURL: folder.storeURL) } throws: { error in
            "\(error)".contains("written by version 3 of the model, newer than this app's version 2")
        }
        #expect(try Data(contentsOf: folder.storeURL) == before)
    }

    @Test func anXcodeBundleMigratesAStoreOfItsFirstVersion() async throws {
        let bundle = XcodeModelTests.fixtures.appendingPathComponent("Library.xcdatamodeld")
        let versions = try SchemaVersions(contentsOf: bundle)
        #expect(versions.models.count == 2 && versions.currentIndex == 1)
        let folder = try TemporaryFolder()
        try await ObjectContext(coordinator: try PersistentStoreCoordinator(model: versions.models[0], storeURL: folder.storeURL)).perform { ctx in
            let author = try ctx.insert("Author")
            try author.setValue("Zola", forKey: "name")
            let book = try ctx.insert("Book")
            try book.setValue("Nana", forKey: "name")
            try book.setValue("É. Zola", forKey: "author")
            try book.setObject(author, forKey: "writer")
            try ctx.save()
        }
        // Book moves under a new abstract parent, Media, which takes its name: rows move to Media's table.
        let coordinator = try PersistentStoreCoordinator(versions: versions, storeURL: folder.storeURL)
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let media = try ctx.fetch(FetchRequest(entityName: "Media"))
            #expect(media.count == 1)
            let book = try #require(media.first)
            #expect(book.entity.name == "Book")
            #expect(try book.value(forKey: "name") == .string("Nana") && book.value(forKey: "author") == .string("É. Zola"))
            #expect(try book.value(forKey: "pages") == .int(1) && book.value(forKey: "inPrint") == .bool(true))
            #expect(try book.object(forKey: "writer")?.value(forKey: "name") == .string("Zola"))
        }
    }
}

/// Migrations with custom stages: code on a context of the old version before a step, of the new one after it.
@Suite struct StagedMigrationTests {
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

    func writeV1(_ folder: TemporaryFolder) async throws {
        let coordinator = try PersistentStoreCoordinator(model: try Model(entities: Self.v1), storeURL: folder.storeURL)
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            for (code, title) in [("7", "seven"), ("7", "seven again"), ("42", "answer")] {
                let item = try ctx.insert("Item")
                try item.setValue(code, forKey: "code")
                try item.setValue(title, forKey: "title")
            }
            try ctx.save()
        }
    }

    static let stages = [
        MigrationStage(from: 0, willMigrate: { ctx in
            // Duplicates go before the uniqueness constraint arrives.
            var seen: Set<AttributeValue> = []
            var request = FetchRequest(entityName: "Item")
            request.sortKeys = [SortKey("title")]
            for item in try ctx.fetch(request) where !seen.insert(try item.value(forKey: "code")).inserted { try ctx.delete(item) }
        }, didMigrate: { ctx in
            for item in try ctx.fetch(FetchRequest(entityName: "Item")) {
                guard case .string(let code) = try item.value(forKey: "code") else { continue }
                try item.setValue(Int64(code), forKey: "number")
            }
        }),
    ]

    @Test func stagesFixWhatNoRuleInfersAcrossAChain() async throws {
        let folder = try TemporaryFolder()
        try await writeV1(folder)
        let versions = try SchemaVersions([Self.v1, Self.v2, Self.v3].map { try Model(entities: $0) }, stages: Self.stages)
        let coordinator = try PersistentStoreCoordinator(versions: versions, storeURL: folder.storeURL)
        let items = try await ObjectContext(coordinator: coordinator).perform { ctx in
            var request = FetchRequest(entityName: "Item")
            request.sortKeys = [SortKey("code")]
            return try ctx.fetch(request).map { "\(try $0.value(forKey: "code"))=\(try $0.value(forKey: "title"))" }
        }
        #expect(items == ["7=\"seven\"", "42=\"answer\""])
        #expect(!FileManager.default.fileExists(atPath: folder.storeURL.path + ".migrating"))
    }

    @Test func aStageThatThrowsLeavesTheOldStore() async throws {
        let folder = try TemporaryFolder()
        try await writeV1(folder)
        let failing = MigrationStage(from: 0, willMigrate: Self.stages[0].willMigrate, didMigrate: { _ in
            throw ObjectGraphError.invalidFetch(entity: "Item", reason: "the stage failed on purpose")
        })
        let versions = try SchemaVersions([Self.v1, Self.v2].map { try Model(entities: $0) }, stages: [failing])
        #expect { try PersistentStoreCoordinator(versions: versions, storeURL: folder.storeURL) } throws: { "\($0)".contains("the stage failed on purpose") }
        #expect(!FileManager.default.fileExists(atPath: folder.storeURL.path + ".migrating"))
        let old = try PersistentStoreCoordinator(model: versions.models[0], storeURL: folder.storeURL)
        let count = try await ObjectContext(coordinator: old).perform { ctx in try ctx.count(for: FetchRequest(entityName: "Item")) }
        #expect(count == 3)
    }
}

/// `@Entity` versions, as SwiftData declares them: each version's classes in a namespace of their own, with the
/// entity names unchanged.
enum ShelfV1 {
    @Entity final class Volume: ManagedObject {
        var title: String = ""
        var pages: Int16 = 0
    }
}

enum ShelfV2 {
    @Entity final class Volume: ManagedObject {
        @Attribute(originalName: "title") var name: String = ""
        var pages: Int64 = 0
        var note: String?
    }
}

@Suite struct EntityVersionTests {
    @Test func aStoreOfTheFirstEntityVersionMigratesToTheSecond() async throws {
        let folder = try TemporaryFolder()
        let first = try Model([ShelfV1.Volume.self])
        try await ObjectContext(coordinator: try PersistentStoreCoordinator(model: first, storeURL: folder.storeURL)).perform { ctx in
            let volume = try ctx.insert(ShelfV1.Volume.self)
            volume.title = "Dune"
            volume.pages = 412
            try ctx.save()
        }
        let versions = try SchemaVersions([first, Model([ShelfV2.Volume.self])])
        let coordinator = try PersistentStoreCoordinator(versions: versions, storeURL: folder.storeURL)
        let volume = try await ObjectContext(coordinator: coordinator).perform { ctx in
            let volume = try #require(try ctx.fetch(ShelfV2.Volume.self).first)
            return "\(volume.name) \(volume.pages) \(volume.note ?? "-")"
        }
        #expect(volume == "Dune 412 -")
    }
}

/// The migration test's three versions as `@Entity` classes, each version in a namespace of its own.
enum LibraryV1 {
    @Entity final class Author: ManagedObject {
        var name: String?
        @Relationship(inverse: "author") var books: Set<Book>
    }

    @Entity final class Book: ManagedObject {
        var title: String = "Untitled"
        var pages: Int16?
        var year: Int32?
        var isbn: String?
        var rating: Float?
        @Relationship(inverse: "books") var author: Author?
    }
}

enum LibraryV2 {
    @Entity final class Author: ManagedObject {
        var name: String?
        @Relationship(inverse: "author") var books: Set<Book>
    }

    @Entity final class Book: ManagedObject {
        @Attribute(originalName: "title") var name: String = "Untitled"
        var pages: Int32?
        var year: String?
        var rating: Double?
        var price: Decimal = 9.5
        var subtitle: String?
        @Relationship(inverse: "books") var author: Author?
        @Relationship(inverse: "books") var tags: Set<Tag>
    }

    @Entity final class Tag: ManagedObject {
        var label: String?
        @Relationship(inverse: "tags") var books: Set<Book>
    }
}

enum LibraryV3 {
    @Entity final class Author: ManagedObject {
        @Attribute(isIndexed: true) var name: String = "Anonymous"
        @Relationship(inverse: "authors") var books: Set<Book>
    }

    @Entity final class Book: ManagedObject {
        var name: String = "Untitled"
        var pages: Int64?
        var year: String?
        var rating: Double?
        var price: Decimal = 9.5
        var subtitle: String?
        @Relationship(inverse: "books", originalName: "author") var authors: Set<Author>
        @Relationship(inverse: "books") var tags: Set<Tag>
    }

    @Entity final class Tag: ManagedObject {
        var label: String?
        @Relationship(inverse: "tags") var books: Set<Book>
    }
}

/// A second pair of versions, as model files (`Fixtures/Catalog.xcdatamodeld`) and as `@Entity` classes: a parent
/// entity removed (its attribute moving down, the rows out of its table), an entity removed, integer to Double,
/// required to optional, and a new uniqueness constraint the data breaks (refused, naming the duplicates).
enum CatalogV1 {
    @Entity(isAbstract: true) class Media: ManagedObject {
        var title: String = "Untitled"
    }

    @Entity final class Book: Media {
        var pages: Int32 = 0
        var weight: Int32?
    }

    @Entity final class Film: Media {
        var minutes: Int32?
    }

    @Entity final class Note: ManagedObject {
        var text: String?
    }
}

enum CatalogV2 {
    @Entity final class Book: ManagedObject {
        var title: String = "Untitled"
        var pages: Int32?
        var weight: Double?
    }

    @Entity(uniquenessConstraints: [["title"]]) final class Film: ManagedObject {
        var title: String = "Untitled"
        var minutes: Int32?
    }
}

@Suite struct CatalogMigrationTests {
    enum Source: String, CaseIterable, Sendable { case xcodeBundle, entityClasses }

    static func versions(_ source: Source) throws -> SchemaVersions {
        try versions(source, bundle: "Catalog", second: [CatalogV2.Book.self, CatalogV2.Film.self])
    }

    /// Version 1 and a second version, from the bundle `bundle`.xcdatamodeld or as version 1's classes and `second`.
    static func versions(_ source: Source, bundle: String, second: [any ManagedEntity.Type]) throws -> SchemaVersions {
        switch source {
        case .xcodeBundle: try SchemaVersions(contentsOf: XcodeModelTests.fixtures.appendingPathComponent("\(bundle).xcdatamodeld"))
        case .entityClasses: try SchemaVersions([Model([CatalogV1.Media.self, CatalogV1.Book.self, CatalogV1.Film.self, CatalogV1.Note.self]), Model(second)])
        }
    }

    /// Two books, two films (titled `filmTitles`, lasting `minutes`), a note, written by version 1.
    func write(_ folder: TemporaryFolder, _ model: Model, filmTitles: [String], minutes: [Int?] = [170, 95]) async throws {
        try await ObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL)).perform { ctx in
            for (title, pages, weight) in [("Dune", 412, 3), ("Emma", 300, 2)] {
                let book = try ctx.insert("Book")
                try book.setValue(title, forKey: "title")
                try book.setValue(pages, forKey: "pages")
                try book.setValue(weight, forKey: "weight")
            }
            for (title, minutes) in zip(filmTitles, minutes) {
                let film = try ctx.insert("Film")
                try film.setValue(title, forKey: "title")
                try film.setValue(minutes, forKey: "minutes")
            }
            try ctx.insert("Note").setValue("gone", forKey: "text")
            try ctx.save()
        }
    }

    @Test(arguments: Source.allCases)
    func parentAndEntityRemovedTypesWidenedRequirementsRelaxed(_ source: Source) async throws {
        let versions = try Self.versions(source)
        let folder = try TemporaryFolder()
        try await write(folder, versions.models[0], filmTitles: ["Heat", "Up"])
        let coordinator = try PersistentStoreCoordinator(versions: versions, storeURL: folder.storeURL)
        let (books, films) = try await ObjectContext(coordinator: coordinator).perform { ctx in
            var request = FetchRequest(entityName: "Book")
            request.sortKeys = [SortKey("title")]
            let books = try ctx.fetch(request).map { book in try ["title", "pages", "weight"].map { "\(try book.value(forKey: $0))" } }
            // Pages may now be missing.
            let emma = try #require(try ctx.fetch(FetchRequest(entityName: "Book", format: "title == 'Emma'")).first)
            try emma.setValue(nil, forKey: "pages")
            try ctx.save()
            request = FetchRequest(entityName: "Film")
            request.sortKeys = [SortKey("title")]
            return (books, try ctx.fetch(request).map { "\(try $0.value(forKey: "title")) \(try $0.value(forKey: "minutes"))" })
        }
        #expect(books == [["\"Dune\"", "412", "3.0"], ["\"Emma\"", "300", "2.0"]])
        #expect(films == ["\"Heat\" 170", "\"Up\" 95"])
        let store = try #require(coordinator.store as? SQLiteStore)
        let tables = try await store.writer.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'objectgraph.%' ORDER BY name")
        }
        #expect(tables == ["Book", "Film"])
    }

    @Test(arguments: Source.allCases)
    func aUniquenessConstraintTheDataBreaksIsRefused(_ source: Source) async throws {
        let versions = try Self.versions(source)
        let folder = try TemporaryFolder()
        try await write(folder, versions.models[0], filmTitles: ["Heat", "Heat"])
        #expect { try PersistentStoreCoordinator(versions: versions, storeURL: folder.storeURL) } throws: { error in
            "\(error)".contains("Film.title: its uniqueness constraint finds rows with the same values (\"Heat\" in 2 rows)")
        }
        let old = try PersistentStoreCoordinator(model: versions.models[0], storeURL: folder.storeURL)
        let count = try await ObjectContext(coordinator: old).perform { ctx in try ctx.count(for: FetchRequest(entityName: "Note")) }
        #expect(count == 1)
    }
}

/// Version 1 of the catalog with Media's title turned from String into Integer 64, a change no rule infers.
enum CatalogRefusedV2 {
    @Entity(isAbstract: true) class Media: ManagedObject {
        var title: Int64?
    }

    @Entity final class Book: Media {
        var pages: Int32 = 0
        var weight: Int32?
    }

    @Entity final class Film: Media {
        var minutes: Int32?
    }

    @Entity final class Note: ManagedObject {
        var text: String?
    }
}

extension CatalogMigrationTests {
    @Test(arguments: Source.allCases)
    func aChangeNoRuleInfersIsRefusedBeforeTheFileIsTouched(_ source: Source) async throws {
        let versions = try Self.versions(source, bundle: "CatalogRefused", second: [CatalogRefusedV2.Media.self, CatalogRefusedV2.Book.self, CatalogRefusedV2.Film.self, CatalogRefusedV2.Note.self])
        let folder = try TemporaryFolder()
        try await write(folder, versions.models[0], filmTitles: ["Heat", "Up"])
        let before = try Data(contentsOf: folder.storeURL)
        #expect { try PersistentStoreCoordinator(versions: versions, storeURL: folder.storeURL) } throws: { error in
            "\(error)".contains("its type changes from String to Integer 64, which no rule converts without loss")
        }
        #expect(try Data(contentsOf: folder.storeURL) == before)
    }
}

/// Version 1 of the catalog with a film's minutes now required, without a default.
enum CatalogRequiredV2 {
    @Entity(isAbstract: true) class Media: ManagedObject {
        var title: String = "Untitled"
    }

    @Entity final class Book: Media {
        var pages: Int32 = 0
        var weight: Int32?
    }

    @Entity final class Film: Media {
        var minutes: Int32
    }

    @Entity final class Note: ManagedObject {
        var text: String?
    }
}

extension CatalogMigrationTests {
    @Test(arguments: Source.allCases)
    func aRequiredAttributeRowsLackIsRefusedWithTheirCount(_ source: Source) async throws {
        let versions = try Self.versions(source, bundle: "CatalogRequired", second: [CatalogRequiredV2.Media.self, CatalogRequiredV2.Book.self, CatalogRequiredV2.Film.self, CatalogRequiredV2.Note.self])
        let folder = try TemporaryFolder()
        try await write(folder, versions.models[0], filmTitles: ["Heat", "Up"], minutes: [170, nil])
        #expect { try PersistentStoreCoordinator(versions: versions, storeURL: folder.storeURL) } throws: { error in
            "\(error)".contains("Film.minutes: it is required and has no default, but 1 of the rows have no value for it")
        }
        let old = try PersistentStoreCoordinator(model: versions.models[0], storeURL: folder.storeURL)
        let count = try await ObjectContext(coordinator: old).perform { ctx in try ctx.count(for: FetchRequest(entityName: "Film")) }
        #expect(count == 2)
    }
}
