import Foundation
import ObjectGraph
import ObjectGraphPostgres
import Testing

/// `StoreQuery(configuration:…)`, what `objectgraph query postgres://…` runs: a PostgreSQL store answers a predicate
/// with the model it keeps, and changes nothing.
@Suite struct PostgresStoreQueryTests {
    @Test func aStoreAnswersAPredicateWithTheModelItKeeps() async throws {
        let store = try await TestStore.make(.postgres, model: try Library.model())
        let database = try #require(store.database)
        try await ObjectContext(coordinator: store.coordinator).perform { ctx in
            let author = try ctx.insert("Author")
            try author.setValue("Herbert", forKey: "name")
            for (title, pages) in [("Dune", 412), ("Dune Messiah", 256), ("Children of Dune", 444)] {
                let book = try ctx.insert("Book")
                try book.setValue(title, forKey: "title")
                try book.setValue(pages, forKey: "pages")
                try book.setObject(author, forKey: "author")
            }
            try ctx.save()
        }
        let before = try PostgresStore.summary(configuration: database.configuration)
        let result = try StoreQuery(configuration: database.configuration, entity: "Book", predicate: "pages > 300", sortedBy: ["-pages"], limit: 1)
        #expect(result.matchCount == 2)
        let title = try #require(result.columns.firstIndex(of: "title"))
        #expect(result.rows.map { $0.values[title] } == [.attribute(.string("Children of Dune"))])
        let author = try #require(result.columns.firstIndex(of: "author"))
        guard case .object(let id?) = result.rows.first?.values[author] else {
            Issue.record("a to-one relationship did not read as an object ID")
            return
        }
        #expect(id.entityName == "Author")
        let after = try PostgresStore.summary(configuration: database.configuration)
        #expect(after.modelHash == before.modelHash && after.rowCounts == before.rowCounts)
        await store.remove()
    }

    @Test func anUnknownEntityNamesTheStoresEntities() async throws {
        let store = try await TestStore.make(.postgres, model: try Library.model())
        let database = try #require(store.database)
        #expect {
            _ = try StoreQuery(configuration: database.configuration, entity: "Movie")
        } throws: { error in
            guard case ObjectGraphError.invalidFetch(let entity, let reason) = error else { return false }
            return entity == "Movie" && reason == "the store has no such entity; its entities are Author, Book, Chapter, Tag"
        }
        await store.remove()
    }

    @Test func aDatabaseWithoutAStoreIsNamedAndLeftAlone() async throws {
        let database = try await TestDatabase.make()
        #expect {
            _ = try StoreQuery(configuration: database.configuration, entity: "Book")
        } throws: { error in
            guard case ObjectGraphError.storeUnavailable(let path, let reason) = error else { return false }
            return path == database.configuration.location && reason.contains("no ObjectGraph store")
        }
        // Still no store: the query created nothing.
        #expect(throws: ObjectGraphError.self) { try PostgresStore.summary(configuration: database.configuration) }
        await database.drop()
    }
}
