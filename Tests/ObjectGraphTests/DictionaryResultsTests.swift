import Foundation
import PredicateFormat
import Testing
@testable import ObjectGraph

/// Dictionary results agree across stores: sort keys fold case as object fetches do, a having predicate reads a
/// grouped key path by its whole name (or fails with the same error everywhere), and a to-one relationship comes back
/// as its object's ID.
@Suite struct DictionaryResultsTests {
    /// Each author's name and how many books they wrote.
    static func booksPerAuthor() -> FetchRequest {
        var request = FetchRequest(entityName: "Book")
        request.propertiesToFetch = [.attribute("author.name"), .aggregate("books", .count)]
        request.propertiesToGroupBy = ["author.name"]
        return request
    }

    @Test(arguments: StoreKind.allCases)
    func aCaseInsensitiveSortKeyFoldsCaseInDictionaryResults(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try kind.coordinator(try Fixtures.model(), folder))
        try await context.perform { ctx in
            try seedLibrary(ctx)
            var request = Self.booksPerAuthor()
            request.sortKeys = [SortKey("author.name", comparison: .caseInsensitive)]
            // Binary order would put "Bruno" before "anna"; folded, only case goes ("é" still sorts after "z").
            #expect(try ctx.fetchDictionaries(request).map { $0["author.name"] } == [.string("anna"), .string("Bruno"), .string("zoë"), .string("Émile")])
            request.sortKeys = [SortKey("author.name", ascending: false, comparison: .caseInsensitive)]
            #expect(try ctx.fetchDictionaries(request).map { $0["author.name"] } == [.string("Émile"), .string("zoë"), .string("Bruno"), .string("anna")])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aHavingPredicateReadsAGroupedKeyPathByItsWholeName(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try kind.coordinator(try Fixtures.model(), folder))
        try await context.perform { ctx in
            try seedLibrary(ctx)
            var request = Self.booksPerAuthor()
            request.sortKeys = [SortKey("author.name")]
            request.havingPredicate = try FormatPredicate("author.name BEGINSWITH[c] 'ANN' OR books > 1")
            #expect(try ctx.fetchDictionaries(request) == [
                ["author.name": .string("anna"), "books": .int(2)],
                ["author.name": .string("Émile"), "books": .int(2)],
            ])
            // A key the results do not have is an error naming it and the keys there are, never an empty answer.
            request.havingPredicate = try FormatPredicate("author.born > 1900")
            do {
                _ = try ctx.fetchDictionaries(request)
                Issue.record("a having predicate on a missing key gave an answer")
            } catch let error as ObjectGraphError {
                #expect(error.message.contains("'author.born'") && error.message.contains("author.name, books"), "\(error)")
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aToOneRelationshipComesBackAsItsObjectsID(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try kind.coordinator(try Fixtures.model(), folder))
        try await context.perform { ctx in
            try seedLibrary(ctx)
            let annaID = try #require(try ctx.fetch(FetchRequest(entityName: "Author", format: "name == 'anna'")).first).objectID
            var request = FetchRequest(entityName: "Book")
            request.propertiesToFetch = [.attribute("title"), .attribute("author")]
            request.predicate = try FormatPredicate("author.name == 'anna'")
            request.sortKeys = [SortKey("title")]
            #expect(try ctx.fetchDictionaries(request) == [
                ["title": .string("Alpha"), "author": .objectID(annaID)],
                ["title": .string("Anna"), "author": .objectID(annaID)],
            ])
            // Grouped by the relationship, with a having on it: the ID compares as its object does in a predicate.
            var grouped = FetchRequest(entityName: "Book")
            grouped.propertiesToFetch = [.attribute("author"), .aggregate("pages", .sum, of: "pages")]
            grouped.propertiesToGroupBy = ["author"]
            grouped.havingPredicate = try FormatPredicate("author == %@", annaID)
            #expect(try ctx.fetchDictionaries(grouped) == [["author": .objectID(annaID), "pages": .int(1164)]])

            // Into a tree of several entities: the ID names the row's own entity.
            let book = try #require(try ctx.fetch(FetchRequest(entityName: "Book", format: "title == 'Zola'")).first)
            let chapter = try ctx.insert("Chapter")
            try chapter.setValue("One", forKey: "heading")
            try chapter.setObject(book, forKey: "book")
            try ctx.save()
            var chapters = FetchRequest(entityName: "Chapter")
            chapters.propertiesToFetch = [.attribute("book")]
            #expect(try ctx.fetchDictionaries(chapters) == [["book": .objectID(book.objectID)]])
            #expect(book.objectID.entityName == "Book")
        }
    }
}
