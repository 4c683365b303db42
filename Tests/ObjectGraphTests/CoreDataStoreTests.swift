import Foundation
import GRDB
import PredicateFormat
import Testing
@testable import ObjectGraph

/// Core Data's SQLite stores, opened read-only with the app's model: every object, value, link and order as Core
/// Data wrote it, answering fetches as the same data does in an ObjectGraph store, exported whole, and refusals
/// that name what is wrong. The stores are laid out by `CoreDataStoreFixture` with SQL.
@Suite struct CoreDataStoreTests {
    static func library(_ folder: TemporaryFolder, metadata: [String: Any] = [:]) throws -> (URL, PersistentStoreCoordinator) {
        let url = folder.url.appendingPathComponent("Library.sqlite")
        try CoreDataStoreFixture.writeLibrary(at: url, metadata: metadata)
        return (url, try PersistentStoreCoordinator(model: try CoreDataStoreFixture.model(), coreDataStoreURL: url))
    }

    /// What the tests ask both stores, as plain values.
    static func answers(_ coordinator: PersistentStoreCoordinator) async throws -> [String] {
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let dune = try #require(try ctx.fetch(Self.request("Book", "title == 'Dune'")).first)
            var perAuthor = ObjectGraph.FetchRequest(entityName: "Book")
            perAuthor.propertiesToGroupBy = ["author.name"]
            perAuthor.propertiesToFetch = [.attribute("author.name"), .aggregate("pages", .sum, of: "pages")]
            return [
                try Self.titles(ctx, "Media", "TRUEPREDICATE", sort: [SortKey("title")]),
                try Self.titles(ctx, "Book", "pages > 300 OR ANY tags.label == 'classic'", sort: [SortKey("-pages")]),
                try Self.titles(ctx, "Book", "author.name BEGINSWITH[c] 'an' AND rating >= 4", sort: []),
                try dune.objects(forKey: "chapters").map { Self.plain(try $0.value(forKey: "heading")) }.joined(separator: ", "),
                try dune.objects(forKey: "tags").map { Self.plain(try $0.value(forKey: "label")) }.sorted().joined(separator: ", "),
                try ctx.fetch(Self.request("Tag", "label == 'classic'")).first!.objects(forKey: "books").map { Self.plain(try $0.value(forKey: "title")) }.joined(separator: ", "),
                Self.plain(try ctx.fetch(Self.request("Chapter", "heading == 'Book Two'")).first!.object(forKey: "book")!.value(forKey: "title")).description,
                try ctx.fetch(Self.request("Movie", "rating == 'PG-13'")).map { try $0.value(forKey: "minutes").description }.joined(),
                try ctx.count(for: Self.request("Author", "books.@count == 2")).description,
                try ctx.fetchDictionaries(perAuthor).map { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") }.joined(separator: "; "),
            ]
        }
    }

    static func titles(_ ctx: isolated ObjectContext, _ entity: String, _ format: String, sort: [SortKey]) throws -> String {
        var request = ObjectGraph.FetchRequest(entityName: entity, sortKeys: sort)
        request.predicate = try FormatPredicate(format: format, argumentArray: [])
        return try ctx.fetch(request).map { Self.plain(try $0.value(forKey: "title")) }.joined(separator: ", ")
    }

    /// A string value without its quotes.
    static func plain(_ value: AttributeValue) -> String {
        if case .string(let text) = value { return text }
        return value.description
    }

    static func request(_ entity: String, _ format: String) throws -> ObjectGraph.FetchRequest {
        var request = ObjectGraph.FetchRequest(entityName: entity)
        request.predicate = try FormatPredicate(format: format, argumentArray: [])
        return request
    }

    @Test func aCoreDataStoreAnswersAsTheSameDataInAnObjectGraphStore() async throws {
        let folder = try TemporaryFolder()
        let (_, coreData) = try Self.library(folder)
        let answers = try await Self.answers(coreData)
        #expect(answers[0] == "Dune, Dune (film), Emma")
        #expect(answers[1] == "Dune, Emma")
        #expect(answers[2] == "Dune")
        #expect(answers[3] == "Book One, Book Two, Appendix", "ordered by Z_FOK_BOOK, not by key")
        #expect(answers[4] == "classic, sf")
        #expect(answers[5] == "Emma, Dune", "a many-to-many side ordered by Z_FOK_3BOOKS")
        #expect(answers[6] == "Dune")
        #expect(answers[7] == "155", "Movie's rating is ZRATING1: Book's took ZRATING")
        #expect(answers[8] == "1")
        #expect(answers[9] == "author.name=\"Ann\" pages=652")
        // Exported whole into an SQLite store, the same data answers the same.
        let exported = try coreData.migratePersistentStore(
            to: try SQLiteStore(url: folder.url.appendingPathComponent("export.sqlite"), model: try CoreDataStoreFixture.model()))
        let exportedAnswers = try await Self.answers(exported)
        #expect(exportedAnswers == answers)
        // Keys and versions (Z_PK, Z_OPT) come along; the store's UUID names its objects.
        #expect(coreData.store.identifier == CoreDataStoreFixture.storeUUID)
        let dune = try #require(try coreData.store.fetch(StoreFetchRequest(entityName: "Book")).first { $0.objectID.rawKey == 1 })
        #expect(dune.version == 2)
        #expect(try exported.store.fetch(StoreFetchRequest(entityName: "Media")).count == 3)
    }

    /// Without the model file: entities, inheritance, columns, links named after entities, join tables and order
    /// come back from the store, and the store answers through the rebuilt model as through its own.
    @Test func aModelRebuiltFromTheStoreReadsItAsItsOwnDoes() async throws {
        let folder = try TemporaryFolder()
        let (url, original) = try Self.library(folder)
        let inferred = try CoreDataStoreFile.inferredModel(forStoreAt: url)
        let model = inferred.model
        #expect(model.entities.map(\.name).sorted() == ["Author", "Book", "Chapter", "Media", "Movie", "Sample", "Tag"])
        #expect(try model.entity(named: "Book").description.parentName == "Media")
        #expect(try model.entity(named: "Media").attributes.map(\.name) == ["title"], "held by both sub-entities' rows")
        #expect(try model.entity(named: "Movie").attribute(named: "rating")?.type == .string)
        #expect(try model.entity(named: "Book").attribute(named: "rating")?.type == .double)
        #expect(try model.entity(named: "Book").relationship(named: "chapters")?.isOrdered == true)
        #expect(try model.entity(named: "Tag").relationship(named: "books")?.inverseName == "tags")
        #expect(try model.entity(named: "Tag").relationship(named: "books")?.isOrdered == true)
        #expect(try model.entity(named: "Sample").attribute(named: "date")?.type == .date)
        #expect(inferred.notes.contains { $0.contains("Author.books") || $0.contains("Book.author") })
        let rebuilt = try PersistentStoreCoordinator(model: model, coreDataStoreURL: url)
        let answers = try await Self.answers(rebuilt)
        #expect(answers == (try await Self.answers(original)))
    }

    /// What `objectgraph inspect` prints for a Core Data store: the model and each entity's own rows.
    @Test func aSummaryCountsEachEntitysOwnRows() throws {
        let folder = try TemporaryFolder()
        let (url, _) = try Self.library(folder)
        let summary = try StoreSummary(coreDataStoreAt: url, model: try CoreDataStoreFixture.model(), modelSource: "Library.xcdatamodel")
        #expect(summary.rowCounts == ["Author": 1, "Book": 2, "Movie": 1, "Tag": 2, "Chapter": 3, "Sample": 1])
        #expect(summary.report.hasPrefix("\(url.path): Core Data SQLite store (read-only), model Library.xcdatamodel"))
        #expect(summary.report.contains("Movie : Media: 1 rows"))
    }

    /// Core Data's encodings: dates in seconds since 2001, booleans as integers, UUIDs as 16 bytes, decimals as SQLite
    /// kept them, externally stored bytes behind a marker byte (inline, or in a file beside the store).
    @Test func everyAttributeTypeReadsAsCoreDataWroteIt() async throws {
        let folder = try TemporaryFolder()
        let (_, coordinator) = try Self.library(folder)
        let values = try await ObjectContext(coordinator: coordinator).perform { ctx in
            let sample = try #require(try ctx.fetch(ObjectGraph.FetchRequest(entityName: "Sample")).first)
            return try Dictionary(uniqueKeysWithValues: sample.entity.attributes.map { ($0.name, try sample.value(forKey: $0.name)) })
        }
        let expected: [String: AttributeValue] = [
            "string": .string("Straße 拿破仑"), "bool": .bool(true), "int16": .int(-32768), "int32": .int(2_147_483_647),
            "int64": .int(Int64.max), "double": .double(0.1 + 0.2), "float": .double(1.5), "decimal": .decimal(Decimal(string: "12345.678")!),
            "date": .date(Date(timeIntervalSinceReferenceDate: 123_456.789)), "data": .data(Data([0, 1, 255])),
            "uuid": .uuid(UUID(uuidString: "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0")!), "url": .url(URL(string: "https://example.com/a?b=c")!),
            "transformed": .data(Data("bplist00 archived".utf8)), "inlineBlob": .data(Data([7, 8, 9])), "fileBlob": .data(CoreDataStoreFixture.externalBytes),
        ]
        for (key, value) in expected { #expect(values[key] == value, "\(key)") }
    }

    @Test func theAppsMetadataComesAlongAndCoreDatasOwnStaysBehind() throws {
        let folder = try TemporaryFolder()
        let (_, coordinator) = try Self.library(folder, metadata: ["lastSync": "noon", "count": 3])
        #expect(try coordinator.metadata() == ["lastSync": "noon"])
    }

    /// A Core Data store is read-only here: nothing is written to it or created beside it, and changes are refused
    /// naming the file.
    @Test func aCoreDataStoreIsNeverWritten() async throws {
        let folder = try TemporaryFolder()
        let (url, coordinator) = try Self.library(folder)
        let bytes = try Data(contentsOf: url)
        let error = await #expect(throws: ObjectGraphError.self) {
            try await ObjectContext(coordinator: coordinator).perform { ctx in
                try ctx.insert("Tag").setValue("new", forKey: "label")
                try ctx.save()
            }
        }
        #expect(error?.description.contains(url.path) == true && error?.description.contains("read-only") == true)
        #expect(throws: ObjectGraphError.self) { try coordinator.execute(BatchDeleteRequest(entityName: "Tag")) }
        #expect(throws: ObjectGraphError.self) { try coordinator.setMetadata(["a": "b"]) }
        #expect(try Data(contentsOf: url) == bytes)
        for suffix in ["-wal", "-shm", "-journal"] { #expect(!FileManager.default.fileExists(atPath: url.path + suffix), "\(suffix)") }
        #expect(try coordinator.store.count(StoreFetchRequest(entityName: "Tag")) == 2)
    }

    /// Of an `.xcdatamodeld`'s versions, the one whose layout the store has; a model the store was not written with
    /// is refused naming the entity or column it lacks.
    @Test func theModelVersionTheStoreWasWrittenWithIsChosen() throws {
        let folder = try TemporaryFolder()
        let store = folder.url.appendingPathComponent("Notes.sqlite")
        let queue = try DatabaseQueue(path: store.path)
        try queue.write { db in
            try CoreDataStoreFixture.writeCoreDataTables(db, entities: [(1, "Note", 0, 1)])
            try db.execute(sql: """
                CREATE TABLE ZNOTE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTITLE VARCHAR);
                INSERT INTO ZNOTE VALUES (1, 1, 1, 'Groceries');
                """)
        }
        try queue.close()
        let bundle = folder.url.appendingPathComponent("Notes.xcdatamodeld")
        for (version, attributes) in [("Notes", ["title"]), ("Notes 2", ["title", "body"])] {
            let directory = bundle.appendingPathComponent("\(version).xcdatamodel")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let xml = """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="1" systemVersion="1" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
                    <entity name="Note" representedClassName="Note" syncable="YES" codeGenerationType="class">
                \(attributes.map { "        <attribute name=\"\($0)\" optional=\"YES\" attributeType=\"String\"/>" }.joined(separator: "\n"))
                    </entity>
                </model>
                """
            try xml.write(to: directory.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        }
        try PropertyListSerialization.data(fromPropertyList: ["_XCCurrentVersionName": "Notes 2.xcdatamodel"], format: .xml, options: 0)
            .write(to: bundle.appendingPathComponent(".xccurrentversion"))
        let chosen = try CoreDataStoreFile.model(in: bundle, forStoreAt: store)
        #expect(try chosen.entity(named: "Note").attributes.map(\.name) == ["title"])
        #expect(try PersistentStoreCoordinator(model: chosen, coreDataStoreURL: store).store.count(StoreFetchRequest(entityName: "Note")) == 1)
        // The current version (with `body`) is not the store's.
        let current = try Model(contentsOf: bundle)
        let error = #expect(throws: ObjectGraphError.self) { _ = try PersistentStoreCoordinator(model: current, coreDataStoreURL: store) }
        #expect(error?.description.contains("ZNOTE") == true && error?.description.contains("Note.body") == true, "\(String(describing: error))")
        let other = try Model(entities: [EntityDescription("Memo", attributes: [.init("title", .string)])])
        let noEntity = #expect(throws: ObjectGraphError.self) { _ = try PersistentStoreCoordinator(model: other, coreDataStoreURL: store) }
        #expect(noEntity?.description.contains("Memo") == true)
    }

    enum OtherFile: String, CaseIterable, Sendable {
        case xmlStore, binaryStore, plainSQLite, damaged, missing
    }

    /// What is not a Core Data SQLite store is refused saying what it is, and left as it was.
    @Test(arguments: OtherFile.allCases)
    func otherFilesAreRefusedSayingWhatTheyAre(_ kind: OtherFile) throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("Store.data")
        let expected: String
        switch kind {
        case .xmlStore:
            try Data("<?xml version=\"1.0\"?><!DOCTYPE database SYSTEM \"file://localhost/System/Library/DTDs/CoreData.dtd\"><database/>".utf8).write(to: url)
            expected = "XML store"
        case .binaryStore:
            try PropertyListSerialization.data(fromPropertyList: ["$archiver": "NSKeyedArchiver"], format: .binary, options: 0).write(to: url)
            expected = "binary store"
        case .plainSQLite:
            let queue = try DatabaseQueue(path: url.path)
            try queue.write { try $0.execute(sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT)") }
            try queue.close()
            expected = "not a Core Data store"
        case .damaged:
            try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: url)
            expected = "not an SQLite database"
        case .missing:
            expected = "no file"
        }
        let before = try? Data(contentsOf: url)
        let error = #expect(throws: ObjectGraphError.self) {
            _ = try PersistentStoreCoordinator(model: try CoreDataStoreFixture.model(), coreDataStoreURL: url)
        }
        #expect(error?.description.contains(expected) == true && error?.description.contains(url.path) == true, "\(String(describing: error))")
        #expect((try? Data(contentsOf: url)) == before)
        #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"))
    }

    /// A link to a row that is not there, or a value of the wrong kind, is refused naming the table, column and row.
    @Test func damagedRowsAreRefusedNamingTheRow() throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("Library.sqlite")
        try CoreDataStoreFixture.writeLibrary(at: url)
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { try $0.execute(sql: "UPDATE ZCHAPTER SET ZBOOK = 99 WHERE Z_PK = 2") }
        try queue.close()
        let error = #expect(throws: ObjectGraphError.self) { _ = try PersistentStoreCoordinator(model: try CoreDataStoreFixture.model(), coreDataStoreURL: url) }
        #expect(error?.description.contains("ZCHAPTER.ZBOOK of the row Z_PK 2") == true, "\(String(describing: error))")
        let queue2 = try DatabaseQueue(path: url.path)
        try queue2.write { try $0.execute(sql: "UPDATE ZCHAPTER SET ZBOOK = 1; UPDATE ZMEDIA SET ZPAGES = 'many' WHERE Z_PK = 2") }
        try queue2.close()
        let value = #expect(throws: ObjectGraphError.self) { _ = try PersistentStoreCoordinator(model: try CoreDataStoreFixture.model(), coreDataStoreURL: url) }
        #expect(value?.description.contains("ZMEDIA.ZPAGES of the row Z_PK 2") == true, "\(String(describing: value))")
    }
}
