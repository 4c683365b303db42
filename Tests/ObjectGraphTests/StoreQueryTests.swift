import Foundation
import PredicateFormat
import Testing
@testable import ObjectGraph

/// A store answers queries with the model it keeps, no app code: filtered, sorted, sliced, as a table or JSON lines,
/// with relationships as object IDs; a file that is not a store, or an unknown entity, is a clear error.
@Suite struct StoreQueryTests {
    @Test func aStoreAnswersAPredicateWithTheModelItKeeps() async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try PersistentStoreCoordinator(model: try Fixtures.model(), storeURL: folder.storeURL))
        try await context.perform { ctx in try seedLibrary(ctx) }
        let result = try StoreQuery(contentsOf: folder.storeURL, entity: "Book", predicate: "pages * 2 > 1000", sortedBy: ["-pages"], limit: 2)
        #expect(result.matchCount == 3)
        #expect(result.rows.count == 2)
        let title = try #require(result.columns.firstIndex(of: "title"))
        #expect(result.rows.map { $0.values[title] } == [.attribute(.string("Bleak")), .attribute(.string("Anna"))])
        let author = try #require(result.columns.firstIndex(of: "author"))
        guard case .object(let id?) = result.rows[0].values[author] else {
            Issue.record("a to-one relationship did not read as an object ID")
            return
        }
        #expect(id.entityName == "Author")
        let lines = result.table.split(separator: "\n")
        #expect(lines.count == 3 && lines[0].hasPrefix("id") && lines[1].contains("Bleak"))
        let json = try #require(result.jsonLines.split(separator: "\n").first)
        let decoded = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(decoded["title"] as? String == "Bleak" && decoded["pages"] as? Int == 1017 && (decoded["id"] as? String)?.hasPrefix("Book/p") == true)
        #expect((decoded["tags"] as? [String])?.allSatisfy { $0.hasPrefix("Tag/p") } == true)
    }

    @Test func aFileThatIsNotAStoreOrAnUnknownEntityIsAClearError() async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try PersistentStoreCoordinator(model: try Fixtures.model(), storeURL: folder.storeURL))
        try await context.perform { ctx in try seedLibrary(ctx) }
        do {
            _ = try StoreQuery(contentsOf: folder.storeURL, entity: "Boook")
            Issue.record("an unknown entity was queried")
        } catch let error as ObjectGraphError {
            #expect(error.message.hasPrefix("fetch of Boook: the store has no such entity; its entities are Agent, Author, Book, Chapter"), "\(error)")
        }
        // A folder is not a store file: said so, not "disk I/O error".
        do {
            _ = try StoreQuery(contentsOf: folder.url, entity: "Book")
            Issue.record("a folder was queried")
        } catch let error as ObjectGraphError {
            #expect(error.message.contains("is a folder"), "\(error)")
        }
        let text = folder.url.appendingPathComponent("notes.txt")
        try Data("not a database".utf8).write(to: text)
        do {
            _ = try StoreQuery(contentsOf: text, entity: "Book")
            Issue.record("a text file was queried")
        } catch let error as ObjectGraphError {
            #expect(error.message.contains("notes.txt"), "\(error)")
        }
        #expect(throws: FormatPredicateError.self) { try StoreQuery(contentsOf: folder.storeURL, entity: "Book", predicate: "pages >") }
    }
}
