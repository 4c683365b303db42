import Foundation
import ObjectGraph
import ObjectGraphPostgres
import Testing

/// `PostgresStore.summary`, what `objectgraph inspect postgres://…` prints: the model and rows a database's store
/// keeps, read without the app's model.
@Suite struct PostgresSummaryTests {
    @Test func aSummaryNamesTheStoresModelAndEachEntitysRows() async throws {
        let store = try await TestStore.make(.postgres, model: try Library.model())
        let database = try #require(store.database)
        try await ObjectContext(coordinator: store.coordinator).perform { ctx in
            let author = try ctx.insert("Author")
            try author.setValue("Herbert", forKey: "name")
            for title in ["Dune", "Dune Messiah"] {
                let book = try ctx.insert("Book")
                try book.setValue(title, forKey: "title")
                try book.setObject(author, forKey: "author")
            }
            try ctx.save()
        }
        let summary = try PostgresStore.summary(configuration: database.configuration)
        #expect(summary.path == database.configuration.location)
        #expect(summary.modelHash == (try Library.model()).versionHash)
        #expect(summary.model.entities.map(\.name).sorted() == ["Author", "Book", "Chapter", "Tag"])
        #expect(summary.rowCounts == ["Author": 1, "Book": 2])
        #expect(summary.report.contains("Book: 2 rows") && summary.report.contains("  author -> Author, inverse books"))
        await store.remove()
    }

    @Test func aDatabaseWithoutAStoreIsNamedAndLeftAlone() async throws {
        let database = try await TestDatabase.make()
        #expect {
            _ = try PostgresStore.summary(configuration: database.configuration)
        } throws: { error in
            guard case ObjectGraphError.storeUnavailable(let path, let reason) = error else { return false }
            return path == database.configuration.location && reason.contains("no ObjectGraph store")
        }
        await database.drop()
    }
}
