import Foundation
import PredicateFormat
import Testing
@testable import ObjectGraph

/// The predicate language's expressions through the object graph: fetches with arithmetic and functions, saved
/// and unsaved, and dictionary results with computed values, the same on both stores; errors by kind.
@Suite struct ExpressionFetchTests {
    /// Book pages in the library: Germinal 592, Nana 464 (Émile), Anna 864, Alpha 300 (anna), Bleak 1017 (Bruno),
    /// Zola 120 (zoë).
    @Test(arguments: StoreKind.allCases)
    func arithmeticAndFunctionsSelectTheSameBooksSavedOrNot(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try kind.coordinator(try Fixtures.model(), folder))
        try await context.perform { ctx in
            try seedLibrary(ctx)
            let fetch = { (format: String, arguments: [Any?]) throws -> Set<String> in
                var request = try FetchRequest(entityName: "Book", format: format, argumentArray: arguments)
                request.sortKeys = [SortKey("title")]
                return Set(try titles(ctx.fetch(request)))
            }
            #expect(try fetch("pages * 2 > 1500", []) == ["Anna", "Bleak"])
            #expect(try fetch("pages / 2 == 232", []) == ["Nana"])
            #expect(try fetch("modulus:by:(pages, 100) == 64", []) == ["Nana", "Anna"])
            #expect(try fetch("uppercase:(title) BEGINSWITH %@", ["AN"]) == ["Anna"])
            #expect(try fetch("-pages < -1000 OR abs:(pages - 500) < 50", []) == ["Bleak", "Nana"])
            #expect(try fetch("pages > author.books.@avg.pages", []) == ["Germinal", "Anna"])
            #expect(try fetch("pages == max:(author.books.pages)", []) == ["Germinal", "Anna", "Bleak", "Zola"])
            #expect(try fetch("TERNARY(author.name == 'anna', pages, 0) > 500", []) == ["Anna"])
            #expect(try fetch("chapters[SIZE] == 0 AND tags[SIZE] == 2", []) == ["Nana", "Bleak", "Alpha"])
            #expect(try fetch("ANY author.books.@distinctUnionOfObjects.pages > 1000", []) == ["Bleak"])
            // An ordered relationship has a first, a last and an n-th object, in its order.
            let germinal = try ctx.fetch(try FetchRequest(entityName: "Book", format: "title == 'Germinal'", argumentArray: []))[0]
            let chapters = try ["Un", "Deux", "Trois"].map { heading in
                let chapter = try ctx.insert("Chapter")
                try chapter.setValue(heading, forKey: "heading")
                return chapter
            }
            try germinal.setObjects(chapters, forKey: "chapters")
            try ctx.save()
            #expect(try fetch("chapters[FIRST].heading == 'Un' AND chapters[LAST].heading == 'Trois' AND chapters[1].heading == 'Deux'", []) == ["Germinal"])
            #expect(try fetch("chapters[5].heading == nil AND chapters[-1].heading == nil AND chapters[SIZE] == 3", []) == ["Germinal"])
            // An unsaved change is judged in memory by the same rules.
            let unsaved = try ctx.insert("Book")
            try unsaved.setValue("Draft", forKey: "title")
            try unsaved.setValue(2000, forKey: "pages")
            #expect(try fetch("pages * 2 > 1500", []) == ["Anna", "Bleak", "Draft"])
            #expect(try fetch("sqrt:(pages) > 40", []) == ["Draft"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func dictionaryResultsComputeExpressionsPerGroupAndPerObject(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try kind.coordinator(try Fixtures.model(), folder))
        try await context.perform { ctx in
            try seedLibrary(ctx)
            var grouped = FetchRequest(entityName: "Book")
            grouped.propertiesToFetch = [
                .attribute("author.name"), try .expression("total", "sum:(pages)"), try .expression("doubled", "sum:(pages) * 2"),
                try .expression("mean", "average:(pages)"), try .expression("books", "count:(title)"),
            ]
            grouped.propertiesToGroupBy = ["author.name"]
            grouped.sortKeys = [SortKey("author.name")]
            #expect(try ctx.fetchDictionaries(grouped) == [
                ["author.name": .string("Bruno"), "total": .int(1017), "doubled": .int(2034), "mean": .double(1017), "books": .int(1)],
                ["author.name": .string("anna"), "total": .int(1164), "doubled": .int(2328), "mean": .double(582), "books": .int(2)],
                ["author.name": .string("zoë"), "total": .int(120), "doubled": .int(240), "mean": .double(120), "books": .int(1)],
                ["author.name": .string("Émile"), "total": .int(1056), "doubled": .int(2112), "mean": .double(528), "books": .int(2)],
            ])
            grouped.havingPredicate = try FormatPredicate("doubled > 2200")
            #expect(try ctx.fetchDictionaries(grouped).map { $0["author.name"] } == [.string("anna")])

            var perBook = FetchRequest(entityName: "Book", predicate: try FormatPredicate("pages < 400"))
            perBook.propertiesToFetch = [.attribute("title"), try .expression("half", "pages / 2"), try .expression("shout", "uppercase:(title)")]
            perBook.sortKeys = [SortKey("title")]
            #expect(try ctx.fetchDictionaries(perBook) == [
                ["title": .string("Alpha"), "half": .double(150), "shout": .string("ALPHA")],
                ["title": .string("Zola"), "half": .double(60), "shout": .string("ZOLA")],
            ])

            var everything = FetchRequest(entityName: "Book")
            everything.propertiesToFetch = [try .expression("pages", "sum:(pages)"), try .expression("spread", "max:(pages) - min:(pages)")]
            #expect(try ctx.fetchDictionaries(everything) == [["pages": .int(3357), "spread": .int(897)]])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aPredicateThatCannotRunSaysWhichKindOfFaultItIs(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try kind.coordinator(try Fixtures.model(), folder))
        try await context.perform { ctx in
            try seedLibrary(ctx)
            let fault = { (format: String) throws -> FormatPredicateError? in
                do {
                    _ = try ctx.fetch(try FetchRequest(entityName: "Book", format: format, argumentArray: []))
                    return nil
                } catch ObjectGraphError.invalidPredicate(let entity, let error) {
                    #expect(entity == "Book")
                    return error
                }
            }
            guard case .typeMismatch(let expression, _, _)? = try fault("pages > 'many'") else {
                Issue.record("a number compared with a string was not a type mismatch")
                return
            }
            #expect(expression.contains("pages > \"many\""))
            #expect(try fault("pgaes > 3") == .unknownKey(entity: "Book", key: "pgaes"))
            #expect(try fault("author.nmae == 'x'") == .unknownKey(entity: "Author", key: "nmae"))
            guard case .typeMismatch? = try fault("title + 1 > 2") else {
                Issue.record("a string in arithmetic was not a type mismatch")
                return
            }
            if kind == .sqlite {
                guard case .unsupported? = try fault("tags[FIRST].label == 'war'") else {
                    Issue.record("an index into an unordered relationship compiled to SQL")
                    return
                }
            }
        }
    }
}
