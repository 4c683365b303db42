import Foundation
import PredicateFormat
import Testing
@testable import ObjectGraph

/// Authors with books, tags and chapters, saved: the data most fetch tests read.
func seedLibrary(_ ctx: isolated ObjectContext) throws {
    let authors = try ["Émile", "anna", "Bruno", "zoë"].map { name in
        let author = try ctx.insert("Author")
        try author.setValue(name, forKey: "name")
        return author
    }
    let tags = try ["war", "peace", "sea"].map { label in
        let tag = try ctx.insert("Tag")
        try tag.setValue(label, forKey: "label")
        return tag
    }
    let books: [(String, Int, Int)] = [("Germinal", 0, 592), ("Nana", 0, 464), ("Anna", 1, 864), ("Bleak", 2, 1017), ("Zola", 3, 120), ("Alpha", 1, 300)]
    for (index, (title, author, pages)) in books.enumerated() {
        let book = try ctx.insert("Book")
        try book.setValue(title, forKey: "title")
        try book.setValue(pages, forKey: "pages")
        try book.setObject(authors[author], forKey: "author")
        try book.setObjects([tags[index % 3], tags[(index + 1) % 3]].prefix(index % 2 + 1).map { $0 }, forKey: "tags")
    }
    let movie = try ctx.insert("Movie")
    try movie.setValue("Germinal", forKey: "title")
    try movie.setValue(160, forKey: "minutes")
    try ctx.save()
}

func titles(_ objects: [ManagedObject]) throws -> [String] {
    try objects.map { object in
        guard case .string(let title) = try object.value(forKey: "title") else { return "?" }
        return title
    }
}

@Suite struct FetchTests {
    @Test(arguments: StoreKind.allCases)
    func predicatesSortKeysAcrossRelationshipsLimitsAndOffsets(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try kind.coordinator(try Fixtures.model(), folder))
        try await context.perform { ctx in
            try seedLibrary(ctx)
            var request = try FetchRequest(entityName: "Book", format: "pages > %d AND author.name != %@", 200, "zoë")
            request.sortKeys = [SortKey("author.name"), SortKey("-pages")]
            // Binary order of names: "Bruno" < "anna" < "Émile".
            #expect(try titles(ctx.fetch(request)) == ["Bleak", "Anna", "Alpha", "Germinal", "Nana"])
            request.fetchOffset = 1
            request.fetchLimit = 2
            #expect(try titles(ctx.fetch(request)) == ["Anna", "Alpha"])
            #expect(try ctx.count(for: request) == 2)
            #expect(try ctx.fetchObjectIDs(request).count == 2)
            request.fetchLimit = 0
            #expect(try ctx.fetch(request).isEmpty)

            var tagged = try FetchRequest(entityName: "Book", format: "ANY tags.label == %@", "sea")
            tagged.sortKeys = [SortKey("title")]
            #expect(try titles(ctx.fetch(tagged)) == ["Alpha", "Anna", "Nana"])
            let prolific = try FetchRequest(entityName: "Author", format: "books.@count >= 2 AND SUBQUERY(books, $b, $b.pages > 500).@count > 0")
            #expect(Set(try ctx.fetch(prolific).map { try $0.value(forKey: "name") }) == [.string("Émile"), .string("anna")])
            let author = try ctx.fetch(FetchRequest(entityName: "Author", predicate: try FormatPredicate("name == 'Bruno'")))[0]
            let byObject = try FetchRequest(entityName: "Book", format: "author == %@", author)
            #expect(try titles(ctx.fetch(byObject)) == ["Bleak"])
            let byID = try FetchRequest(entityName: "Book", format: "author == %@", author.objectID)
            #expect(try titles(ctx.fetch(byID)) == ["Bleak"])
            #expect(try ctx.count(for: FetchRequest(entityName: "Book", format: "author == nil")) == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func caseInsensitiveAndLocalizedSortKeys(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try kind.coordinator(try Fixtures.model(), folder))
        try await context.perform { ctx in
            try seedLibrary(ctx)
            let names = { (comparison: SortKey.Comparison) throws -> [AttributeValue] in
                try ctx.fetch(FetchRequest(entityName: "Author", sortKeys: [SortKey("name", comparison: comparison)])).map { try $0.value(forKey: "name") }
            }
            #expect(try names(.standard) == [.string("Bruno"), .string("anna"), .string("zoë"), .string("Émile")])
            #expect(try names(.caseInsensitive) == [.string("anna"), .string("Bruno"), .string("zoë"), .string("Émile")])
            #expect(try names(.localized) == [.string("anna"), .string("Bruno"), .string("Émile"), .string("zoë")])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func subEntitiesAreIncludedUnlessExcluded(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try kind.coordinator(try Fixtures.model(), folder))
        try await context.perform { ctx in
            try seedLibrary(ctx)
            let media = try ctx.fetch(FetchRequest(entityName: "Media", predicate: try FormatPredicate("title == 'Germinal'")))
            #expect(Set(media.map(\.entity.name)) == ["Book", "Movie"])
            var exclusive = FetchRequest(entityName: "Media")
            exclusive.includesSubentities = false
            #expect(try ctx.fetch(exclusive).isEmpty)
            #expect(try ctx.count(for: FetchRequest(entityName: "Media")) == 7)
            #expect(try ctx.count(for: FetchRequest(entityName: "Movie")) == 1)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func pendingChangesCountAcrossStoredAndUnsavedObjects(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try kind.coordinator(try Fixtures.model(), folder))
        try await context.perform { ctx in
            try seedLibrary(ctx)
            var request = try FetchRequest(entityName: "Book", format: "pages >= 300")
            request.sortKeys = [SortKey("pages")]
            #expect(try titles(ctx.fetch(request)) == ["Alpha", "Nana", "Germinal", "Anna", "Bleak"])
            let fresh = try ctx.insert("Book")
            try fresh.setValue("Fresh", forKey: "title")
            try fresh.setValue(500, forKey: "pages")
            let unmatched = try ctx.insert("Book")
            try unmatched.setValue("Tiny", forKey: "title")
            try unmatched.setValue(10, forKey: "pages")
            let nana = try ctx.fetch(FetchRequest(entityName: "Book", predicate: try FormatPredicate("title == 'Nana'")))[0]
            try ctx.delete(nana)
            let zola = try ctx.fetch(FetchRequest(entityName: "Book", predicate: try FormatPredicate("title == 'Zola'")))[0]
            try zola.setValue(2000, forKey: "pages")
            let anna = try ctx.fetch(FetchRequest(entityName: "Book", predicate: try FormatPredicate("title == 'Anna'")))[0]
            try anna.setValue(1, forKey: "pages")
            #expect(try titles(ctx.fetch(request)) == ["Alpha", "Fresh", "Germinal", "Bleak", "Zola"])
            request.fetchOffset = 1
            request.fetchLimit = 3
            #expect(try titles(ctx.fetch(request)) == ["Fresh", "Germinal", "Bleak"])
            #expect(try ctx.count(for: request) == 3)
            request.includesPendingChanges = false
            #expect(try titles(ctx.fetch(request)) == ["Nana", "Germinal", "Anna"])
        }
    }

    @Test func objectsCanComeBackAsFaults() async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try StoreKind.sqlite.coordinator(try Fixtures.model(), folder))
        try await context.perform { ctx in
            try seedLibrary(ctx)
            ctx.reset()
            var request = FetchRequest(entityName: "Tag")
            request.returnsObjectsAsFaults = true
            let tags = try ctx.fetch(request)
            #expect(tags.count == 3 && tags.allSatisfy(\.isFault))
            #expect(try tags[0].value(forKey: "label") != .null)
            #expect(!tags[0].isFault)
            request.returnsObjectsAsFaults = false
            ctx.reset()
            #expect(try ctx.fetch(request).allSatisfy { !$0.isFault })
        }
    }

    @Test func prefetchedRelationshipsCostNoFurtherStoreReads() async throws {
        let folder = try TemporaryFolder()
        let coordinator = try StoreKind.sqlite.coordinator(try Fixtures.model(), folder)
        let store = try #require(coordinator.store as? SQLiteStore)
        let context = ObjectContext(coordinator: coordinator)
        try await context.perform { ctx in
            try seedLibrary(ctx)
            ctx.reset()
            var request = FetchRequest(entityName: "Book")
            request.relationshipKeyPathsForPrefetching = ["author", "tags"]
            let books = try ctx.fetch(request)
            let before = store.queryCount
            var seen = 0
            for book in books {
                if let author = try book.object(forKey: "author") { _ = try author.value(forKey: "name"); seen += 1 }
                for tag in try book.objects(forKey: "tags") { _ = try tag.value(forKey: "label"); seen += 1 }
            }
            #expect(seen == 6 + 9)
            #expect(store.queryCount == before, "reading prefetched relationships ran \(store.queryCount - before) queries")

            // Without prefetching the same reads go to the store.
            ctx.reset()
            let plain = try ctx.fetch(FetchRequest(entityName: "Book"))
            let plainBefore = store.queryCount
            for book in plain { _ = try book.object(forKey: "author")?.value(forKey: "name") }
            #expect(store.queryCount > plainBefore)
        }
    }

    @Test func aPrefetchThatFailsPartWayLeavesTheNextOneWhole() async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try StoreKind.sqlite.coordinator(try Fixtures.model(), folder))
        try await context.perform { ctx in
            try seedLibrary(ctx)
            ctx.reset()
            var request = FetchRequest(entityName: "Book")
            request.relationshipKeyPathsForPrefetching = ["author.nothing"]
            #expect(throws: ObjectGraphError.self) { try ctx.fetch(request) }
            request.relationshipKeyPathsForPrefetching = ["author"]
            let books = try ctx.fetch(request)
            let authors = ctx.registeredObjects.filter { $0.entity.name == "Author" }
            #expect(books.count == 6)
            #expect(authors.count == 4 && authors.allSatisfy { !$0.isFault }, "authors the failed prefetch reached were left out")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func prefetchingResultsFetchedAsFaultsLoadsThemFirst(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try kind.coordinator(try Fixtures.model(), folder))
        try await context.perform { ctx in
            try seedLibrary(ctx)
            ctx.reset()
            var request = FetchRequest(entityName: "Book")
            request.returnsObjectsAsFaults = true
            request.relationshipKeyPathsForPrefetching = ["author", "tags.books"]
            let books = try ctx.fetch(request)
            #expect(books.count == 6)
            #expect(books.allSatisfy { !$0.isFault })
            #expect(ctx.materializedObjectCount == 6 + 4 + 3, "the books, and the authors and tags they hold")
            var names: [String] = []
            for book in books {
                if case .string(let name) = try book.object(forKey: "author")?.value(forKey: "name") { names.append(name) }
                for tag in try book.objects(forKey: "tags") { _ = try tag.value(forKey: "label") }
            }
            #expect(names.sorted() == ["Bruno", "anna", "anna", "zoë", "Émile", "Émile"].sorted())
        }
    }

    @Test(arguments: StoreKind.allCases)
    func dictionariesWithAggregatesGroupByAndHaving(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try kind.coordinator(try Fixtures.model(), folder))
        try await context.perform { ctx in
            try seedLibrary(ctx)
            var request = FetchRequest(entityName: "Book")
            request.propertiesToFetch = [.attribute("author.name"), .aggregate("total", .sum, of: "pages"),
                                         .aggregate("books", .count), .aggregate("longest", .max, of: "pages"),
                                         .aggregate("mean", .avg, of: "pages")]
            request.propertiesToGroupBy = ["author.name"]
            request.sortKeys = [SortKey("-total")]
            let rows = try ctx.fetchDictionaries(request)
            #expect(rows.count == 4)
            #expect(rows[0] == ["author.name": .string("anna"), "total": .int(1164), "books": .int(2), "longest": .int(864), "mean": .double(582)])
            #expect(rows.map { $0["author.name"] } == [.string("anna"), .string("Émile"), .string("Bruno"), .string("zoë")])
            request.havingPredicate = try FormatPredicate("books > 1 AND total < 1100")
            #expect(try ctx.fetchDictionaries(request).map { $0["author.name"] } == [.string("Émile")])

            var distinct = FetchRequest(entityName: "Media")
            distinct.propertiesToFetch = [.attribute("title")]
            distinct.returnsDistinctResults = true
            distinct.sortKeys = [SortKey("title")]
            let titles = try ctx.fetchDictionaries(distinct).map { $0["title"] }
            #expect(titles.count == 6 && titles.first == .string("Alpha"))
            var everything = FetchRequest(entityName: "Book")
            everything.propertiesToFetch = [.aggregate("n", .count), .aggregate("pages", .sum, of: "pages")]
            #expect(try ctx.fetchDictionaries(everything) == [["n": .int(6), "pages": .int(3357)]])
        }
    }

    @Test func badRequestsNameTheKeyOrValue() async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try StoreKind.sqlite.coordinator(try Fixtures.model(), folder))
        try await context.perform { ctx in
            try seedLibrary(ctx)
            let message = { (request: FetchRequest) -> String in
                do {
                    _ = try ctx.fetch(request)
                    return "no error"
                } catch {
                    return "\(error)"
                }
            }
            #expect(message(FetchRequest(entityName: "Book", sortKeys: [SortKey("nmae")])).contains("entity Book has no property 'nmae'"))
            #expect(message(FetchRequest(entityName: "Book", sortKeys: [SortKey("author.nmae")])).contains("entity Author has no property 'nmae'"))
            #expect(message(FetchRequest(entityName: "Book", sortKeys: [SortKey("tags.label")])).contains("crosses the to-many relationship 'tags' of Book"))
            #expect(message(try FetchRequest(entityName: "Book", format: "pgaes > 3")).contains("entity Book has no property 'pgaes'"))
            #expect(message(try FetchRequest(entityName: "Book", format: "author == 'Bruno'"))
                .contains("the relationship 'author' of Book cannot be compared with a String using =="))
            var negative = FetchRequest(entityName: "Book")
            negative.fetchLimit = -1
            #expect(message(negative).contains("fetchLimit must be zero or more, not -1"))
            negative = FetchRequest(entityName: "Book")
            negative.fetchOffset = -3
            #expect(message(negative).contains("fetchOffset must be zero or more, not -3"))
            #expect(message(FetchRequest(entityName: "Bok")).contains("unknown entity 'Bok'"))
            // With pending changes the overlay judges objects in memory: the same errors.
            _ = try ctx.insert("Tag")
            #expect(message(try FetchRequest(entityName: "Tag", format: "lable == 'x'")).contains("no property 'lable'"))
        }
    }

    @Test func anEqualityFetchOnAnIndexedAttributeSearchesTheIndex() async throws {
        let folder = try TemporaryFolder()
        let coordinator = try StoreKind.sqlite.coordinator(try Fixtures.model(), folder)
        let store = try #require(coordinator.store as? SQLiteStore)
        var request = StoreFetchRequest(entityName: "Book")
        request.predicate = try FormatPredicate("title == %@", "Nana")
        let plan = try store.queryPlan(for: request).joined(separator: "\n")
        #expect(plan.contains("USING INDEX Media(title)"), "\(plan)")
        request.predicate = try FormatPredicate("title >= 'A' AND title < 'B'")
        let rangePlan = try store.queryPlan(for: request).joined(separator: "\n")
        #expect(rangePlan.contains("USING INDEX Media(title)"), "\(rangePlan)")
    }

    @Test func readingA200000ObjectFetchInBatchesKeepsLoadedObjectsBounded() async throws {
        let folder = try TemporaryFolder()
        let model = try Model(entities: [EntityDescription("Row", attributes: [.init("n", .int64), .init("label", .string)])])
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL)
        // The rows are written straight into the store's table: this test is about reading them back in batches.
        try await (coordinator.store as! SQLiteStore).writer.write { db in
            let statement = try db.makeStatement(sql: "INSERT INTO Row (\"row.id\", \"row.entity\", \"row.version\", n) VALUES (?, 'Row', 1, ?)")
            for n in 0..<200_000 { try statement.execute(arguments: [n + 1, n]) }
            try db.execute(sql: "UPDATE \"objectgraph.sequence\" SET max_key = 200000 WHERE entity = 'Row'")
        }
        let context = ObjectContext(coordinator: coordinator)
        try await context.perform { ctx in
            var request = FetchRequest(entityName: "Row", sortKeys: [SortKey("n")])
            request.fetchBatchSize = 1_000
            let results = try ctx.fetchResults(request)
            #expect(results.count == 200_000)
            var sum: Int64 = 0
            var peak = 0
            for (index, row) in results.enumerated() {
                if case .int(let n) = try row.value(forKey: "n") { sum += n }
                if index % 997 == 0 { peak = max(peak, ctx.materializedObjectCount) }
            }
            peak = max(peak, ctx.materializedObjectCount)
            #expect(sum == Int64(199_999) * 200_000 / 2)
            #expect(peak <= 2_000, "\(peak) objects were loaded at once")
        }
    }

    /// Each batch's books hold the chapters prefetched for them, read with no further query, and let go of them with
    /// the batch: what is loaded stays about one batch's books and chapters however far the reading goes.
    @Test func batchesPrefetchingAToManyKeepOnlyTheirOwnMembers() async throws {
        let folder = try TemporaryFolder()
        let coordinator = try StoreKind.sqlite.coordinator(try Fixtures.model(), folder)
        let store = try #require(coordinator.store as? SQLiteStore)
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            for serial in 0..<60 {
                let book = try ctx.insert("Book")
                try book.setValue("Book \(serial)", forKey: "title")
                try book.setObjects(try (0..<2).map { part in
                    let chapter = try ctx.insert("Chapter")
                    try chapter.setValue("\(serial).\(part)", forKey: "heading")
                    return chapter
                }, forKey: "chapters")
            }
            try ctx.save()
            ctx.reset()
            var request = FetchRequest(entityName: "Book", sortKeys: [SortKey("title")])
            request.fetchBatchSize = 10
            request.relationshipKeyPathsForPrefetching = ["chapters"]
            let results = try ctx.fetchResults(request)
            var headings = 0
            var peak = 0
            var queries = 0
            for (position, book) in results.enumerated() {
                // Each batch's own reads are its IDs and its books, chapter links and chapters: none per book.
                let before = store.queryCount
                for chapter in try book.objects(forKey: "chapters") {
                    if case .string(let heading) = try chapter.value(forKey: "heading"), heading.hasPrefix("\(try titles([book])[0].dropFirst(5)).") {
                        headings += 1
                    }
                }
                if position % 10 != 0 { queries += store.queryCount - before }
                peak = max(peak, ctx.materializedObjectCount)
            }
            #expect(headings == 120)
            #expect(queries == 0, "reading prefetched chapters ran \(queries) queries")
            #expect(peak <= 10 + 20, "\(peak) objects were loaded at once")
        }
    }

    /// A fetch's rows of numbers share blocks of storage; a row holding a value that does not fit a word (text left
    /// in an integer column by another program) moves out of its block. Every row reads back as stored, and changing
    /// and saving one object leaves the objects that shared its block as they were.
    @Test func rowsSharingStorageReadBackAsStoredAndChangeAlone() async throws {
        let folder = try TemporaryFolder()
        let model = try Model(entities: [EntityDescription("Reading", attributes: [
            .init("n", .int64), .init("ratio", .double), .init("flag", .bool, isOptional: true), .init("at", .date),
        ])])
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL)
        try await (coordinator.store as! SQLiteStore).writer.write { db in
            let statement = try db.makeStatement(sql: "INSERT INTO Reading (\"row.id\", \"row.entity\", \"row.version\", n, ratio, flag, at) VALUES (?, 'Reading', 1, ?, ?, ?, ?)")
            for n in 1...300 {
                let flag: Bool? = n % 3 == 0 ? nil : n % 2 == 0
                try statement.execute(arguments: [n, n, Double(n) / 4, flag, Double(n * 60)])
            }
            try db.execute(sql: "UPDATE Reading SET n = 'not a number' WHERE \"row.id\" = 150")
            try db.execute(sql: "UPDATE \"objectgraph.sequence\" SET max_key = 300 WHERE entity = 'Reading'")
        }
        @Sendable func expected(_ n: Int) -> [AttributeValue] {
            [n == 150 ? .string("not a number") : .int(Int64(n)), .double(Double(n) / 4), n % 3 == 0 ? .null : .bool(n % 2 == 0),
             .date(Date(timeIntervalSinceReferenceDate: Double(n * 60)))]
        }
        let keys = ["n", "ratio", "flag", "at"]
        let context = ObjectContext(coordinator: coordinator)
        try await context.perform { ctx in
            let rows = try ctx.fetch(FetchRequest(entityName: "Reading", sortKeys: [SortKey("ratio")]))
            #expect(rows.count == 300)
            for (index, row) in rows.enumerated() {
                #expect(try keys.map { try row.value(forKey: $0) } == expected(index + 1))
            }
            try rows[200].setValue(Int64(-1), forKey: "n")
            try rows[200].setValue(Date(timeIntervalSinceReferenceDate: 0), forKey: "at")
            #expect(try rows[200].changedValues().keys.sorted() == ["at", "n"])
            try ctx.save()
        }
        let reader = ObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL))
        try await reader.perform { ctx in
            let rows = try ctx.fetch(FetchRequest(entityName: "Reading", sortKeys: [SortKey("ratio")]))
            for (index, row) in rows.enumerated() {
                var want = expected(index + 1)
                if index == 200 { (want[0], want[3]) = (.int(-1), .date(Date(timeIntervalSinceReferenceDate: 0))) }
                #expect(try keys.map { try row.value(forKey: $0) } == want, "row \(index + 1)")
            }
        }
    }

    /// Single-statement reads take the store's own read-only connections instead of a pool reader: they must see
    /// every save committed before them (no connection keeps an old snapshot), also saves made through another
    /// coordinator on the same file, and more concurrent reads than connections kept idle must all succeed.
    @Test func singleStatementReadsSeeEverySaveAndRunConcurrently() async throws {
        let folder = try TemporaryFolder()
        let model = try Fixtures.model()
        let writer = ObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL), name: "writer")
        let readerCoordinator = try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL)
        let reader = ObjectContext(coordinator: readerCoordinator, name: "reader")
        for round in 1...5 {
            try await writer.perform { ctx in
                let tag = try ctx.insert("Tag")
                try tag.setValue("round \(round)", forKey: "label")
                try ctx.save()
            }
            let seen = try await reader.perform { ctx in
                // The first read finds its statement still prepared from the last round's last read, and runs it
                // outside GRDB's queue: it must read the store as it is now all the same.
                [try ctx.fetch(FetchRequest(entityName: "Tag")).count,
                 try ctx.fetch(try FetchRequest(entityName: "Tag", format: "label == %@", "round \(round)")).count,
                 try ctx.fetch(FetchRequest(entityName: "Tag")).count]
            }
            #expect(seen == [round, 1, round], "round \(round)")
        }
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<12 {
                group.addTask {
                    let context = ObjectContext(coordinator: readerCoordinator, name: "concurrent \(index)")
                    return try await context.perform { ctx in
                        var found = 0
                        for round in 1...5 { found += try ctx.fetch(try FetchRequest(entityName: "Tag", format: "label == %@", "round \(round)")).count }
                        return found
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(counts == Array(repeating: 5, count: 12))
    }

    /// A reader connection keeps the statements of its last fetches prepared, bound to the slice they last read:
    /// each fetch must read its own predicate and slice, whichever fetch or slice came before it, also when more
    /// fetches take turns than a connection keeps statements.
    @Test func keptStatementsReadEachFetchWithItsOwnSlice() async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try PersistentStoreCoordinator(model: try Fixtures.model(), storeURL: folder.storeURL), name: "reader")
        let labels = (0..<12).map { "tag \($0 % 4) \($0)" }
        try await context.perform { ctx in
            for label in labels { try ctx.insert("Tag").setValue(label, forKey: "label") }
            try ctx.save()
        }
        // (group, limit, offset): groups 0…3 match three tags each; group 4 is every tag.
        let slices: [(Int, Int?, Int)] = [(0, 1, 0), (0, 1, 0), (0, 1, 1), (0, 1, 1), (0, nil, 0), (0, 1, 0), (4, 2, 3), (4, 2, 3), (4, nil, 0),
                                          (1, 2, 1), (2, nil, 1), (3, 1, 2), (0, 5, 0), (4, 2, 3)]
        for round in 0..<3 {
            for (step, (group, limit, offset)) in (slices + (0..<10).map { ($0 % 5, 1, $0 % 2) }).enumerated() {
                let (found, expected) = try await context.perform { ctx in
                    var request = group == 4 ? FetchRequest(entityName: "Tag") : try FetchRequest(entityName: "Tag", format: "label BEGINSWITH %@", "tag \(group) ")
                    request.sortKeys = [SortKey("label")]
                    request.fetchLimit = limit
                    request.fetchOffset = offset
                    let found = try ctx.fetch(request).map { try $0.value(forKey: "label") }
                    let all = labels.filter { group == 4 || $0.hasPrefix("tag \(group) ") }.sorted().dropFirst(offset)
                    return (found, Array(all.prefix(limit ?? all.count)).map { AttributeValue.string($0) })
                }
                #expect(found == expected, "round \(round), step \(step): group \(group), limit \(String(describing: limit)), offset \(offset)")
            }
        }
    }
}
