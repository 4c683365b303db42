import Foundation
import GRDBSQLite
import ObjectGraph

/// W11-W13: relationships, updates and deletes over a store of ``BenchmarkSuite/Options/graphBooks`` books by
/// ``BenchmarkSuite/Options/graphAuthors`` authors, each book with two of 100 tags and a chapter, against raw SQLite
/// doing the same work on the same file (opened as the store's connections are, foreign keys on).
///
/// - W11 reads every book's title with its author's name (authors prefetched), with its tags' labels (tags
///   prefetched), and with its author's name again, faulting each author in one by one (raw SQLite: one prepared
///   lookup per author not seen yet).
/// - W12 changes one attribute of ``BenchmarkSuite/Options/graphChanges`` fetched books and saves (raw SQLite: reads
///   them, then one version-checked UPDATE per row).
/// - W13 deletes that many books, their chapters by cascade, and saves (raw SQLite: reads them, then deletes each
///   book's chapters and the book; the join table's rows go by their foreign keys).
///
/// Each contender's result is checked: sums of what was read, and the rows left after a write.
extension BenchmarkSuite {
    package static let graphModel: Model = try! Model([Author.self, Book.self, Tag.self, Chapter.self])

    /// The selected of W11, W12 and W13 (all three when `workloads` is empty).
    func graph(_ workloads: Set<String>) async throws -> [BenchmarkReport.Row] {
        func selected(_ name: String) -> Bool { workloads.isEmpty || workloads.contains(name) }
        let template = try await graphTemplate()
        var reads: [GraphWalk: Samples] = [:]
        var update = Samples()
        var delete = Samples()
        let expected = try graphSums(template)
        func expectedSum(_ walk: GraphWalk) -> Int64 { walk == .tagsPrefetched ? expected.tags : expected.authors }
        // The peer keeps a store of its own schema, made once; the same shape gives the same sums.
        let peerPath = try freshPath("w11-peer")
        let peer = peer.flatMap { options.contenders.contains($0.name) ? $0 : nil }
        if let peer, selected("W11") {
            try await peer.open(path: peerPath)
            try await peer.createGraph(graphShape)
            try await peer.close()
        }
        for repetition in 0...options.repetitions {
            let coordinator = try PersistentStoreCoordinator(model: Self.graphModel, storeURL: URL(fileURLWithPath: template))
            let context = ObjectContext(coordinator: coordinator, name: "bench")
            var taken: [GraphWalk: Samples] = [:]
            for walk in GraphWalk.allCases where selected("W11") {
                let (sample, walked) = try await Measure.timed(on: context) { ctx in try Self.walk(walk, in: ctx) }
                taken[walk, default: Samples()].add(sample, for: "ObjectGraph")
                try check(walked, expectedSum(walk), "ObjectGraph (\(walk.rawValue))")
                var sum: Int64 = 0
                let raw = try RawSQLite(path: template, fair: true)
                taken[walk, default: Samples()].add(try Measure.timed { sum = try raw.walk(walk) }, for: "raw")
                raw.close()
                try check(sum, expectedSum(walk), "raw (\(walk.rawValue))")
                for baseline in BenchmarkReport.objectBaselines where options.contenders.contains(baseline) {
                    let raw = try RawSQLite(path: template, fair: true)
                    let readingAhead = baseline == BenchmarkReport.objectBaselineReadAhead
                    taken[walk, default: Samples()].add(try Measure.timed { sum = try raw.walkObjects(walk, readingAhead: readingAhead) }, for: baseline)
                    raw.close()
                    try check(sum, expectedSum(walk), "\(baseline) (\(walk.rawValue))")
                }
                if let peer {
                    try await peer.open(path: peerPath)
                    taken[walk, default: Samples()].add(try await Measure.timed { sum = try await peer.walk(walk) }, for: peer.name)
                    try await peer.close()
                    try check(sum, expectedSum(walk), "\(peer.name) (\(walk.rawValue))")
                }
            }

            let changes = options.graphChanges
            if repetition > 0 { for (walk, samples) in taken { reads[walk] = (reads[walk] ?? Samples()) + samples } }
            if selected("W12") {
            let graphCopy = try copyOf(template, "w12-graph")
            let updateContext = ObjectContext(coordinator: try PersistentStoreCoordinator(model: Self.graphModel, storeURL: URL(fileURLWithPath: graphCopy)))
            let (updated, _) = try await Measure.timed(on: updateContext) { ctx in
                for book in try ctx.fetch(try FetchRequest(entityName: "Book", format: "serial < %d", changes), as: Book.self) { book.pages += 1 }
                try ctx.save()
                ctx.reset()
            }
            try checkPages(graphCopy, expected: expected.pages + Int64(changes), who: "ObjectGraph")
            let rawCopy = try copyOf(template, "w12-raw")
            let rawUpdate = try RawSQLite(path: rawCopy, fair: true)
            let rawUpdated = try Measure.timed { try rawUpdate.updatePages(below: changes) }
            rawUpdate.close()
            try checkPages(rawCopy, expected: expected.pages + Int64(changes), who: "raw")
            if repetition > 0 {
                update.add(updated, for: "ObjectGraph")
                update.add(rawUpdated, for: "raw")
            }
            }
            guard selected("W13") else { continue }

            let deleteCopy = try copyOf(template, "w13-graph")
            let deleteContext = ObjectContext(coordinator: try PersistentStoreCoordinator(model: Self.graphModel, storeURL: URL(fileURLWithPath: deleteCopy)))
            let (deleted, _) = try await Measure.timed(on: deleteContext) { ctx in
                for book in try ctx.fetch(try FetchRequest(entityName: "Book", format: "serial < %d", changes), as: Book.self) { try ctx.delete(book) }
                try ctx.save()
                ctx.reset()
            }
            try checkRemaining(deleteCopy, books: options.graphBooks - changes, who: "ObjectGraph")
            let rawDeleteCopy = try copyOf(template, "w13-raw")
            let rawDelete = try RawSQLite(path: rawDeleteCopy, fair: true)
            let rawDeleted = try Measure.timed { try rawDelete.deleteBooks(below: changes) }
            rawDelete.close()
            try checkRemaining(rawDeleteCopy, books: options.graphBooks - changes, who: "raw")

            guard repetition > 0 else { continue }
            delete.add(deleted, for: "ObjectGraph")
            delete.add(rawDeleted, for: "raw")
        }
        let books = options.graphBooks
        var rows: [BenchmarkReport.Row] = []
        for walk in GraphWalk.allCases where selected("W11") {
            rows += BenchmarkReport.Row.wallAndCPU("W11 \(books) books, \(walk.rawValue)", reads[walk]!, target: .ratioToObjects(1.3))
        }
        if selected("W12") {
            rows += BenchmarkReport.Row.wallAndCPU("W12 update \(options.graphChanges)", update, note: "fetch, change pages, save", target: .ratio(2))
        }
        if selected("W13") {
            rows += BenchmarkReport.Row.wallAndCPU("W13 delete \(options.graphChanges)", delete,
                                                   note: "fetch, delete (chapters cascade, authors nullify), save", target: .ratio(2))
        }
        return rows
    }

    /// W11's walk through a context: what an app writes.
    package static func walk(_ walk: GraphWalk, in ctx: isolated ObjectContext) throws -> Int64 {
        var request = Book.fetchRequest()
        request.relationshipKeyPathsForPrefetching = [.authorsPrefetched: ["author"], .tagsPrefetched: ["tags"]][walk] ?? []
        var total: Int64 = 0
        for book in try ctx.fetch(request, as: Book.self) {
            total &+= Int64(book.title.utf8.count)
            if walk == .tagsPrefetched {
                for tag in book.tags { total &+= 1 + Int64(tag.label.utf8.count) }
            } else {
                total &+= Int64(book.author?.name.utf8.count ?? 0)
            }
        }
        ctx.reset()
        return total
    }

    var graphShape: GraphShape { GraphShape(books: options.graphBooks, authors: options.graphAuthors) }

    /// A store of the graph model, written once through a context.
    private func graphTemplate() async throws -> String {
        let path = try freshPath("w11-template")
        let coordinator = try PersistentStoreCoordinator(model: Self.graphModel, storeURL: URL(fileURLWithPath: path))
        let shape = graphShape
        try await ObjectContext(coordinator: coordinator).perform { ctx in try Self.insertGraph(shape, in: ctx) }
        return path
    }

    /// Inserts and saves the graph of `shape`: tags, authors, and each book with its tags and a chapter.
    package static func insertGraph(_ shape: GraphShape, in ctx: isolated ObjectContext) throws {
        let tags = try (0..<GraphShape.tagCount).map { index in
            let tag = try ctx.insert(Tag.self)
            tag.label = shape.label(ofTag: index)
            return tag
        }
        let authors = try (0..<shape.authors).map { index in
            let author = try ctx.insert(Author.self)
            author.name = shape.name(ofAuthor: index)
            return author
        }
        for index in 0..<shape.books {
            let book = try ctx.insert(Book.self)
            book.serial = shape.serial(ofBook: index)
            book.title = shape.title(ofBook: index)
            book.pages = shape.pages(ofBook: index)
            book.author = authors[shape.author(ofBook: index)]
            book.tags = Set(shape.tags(ofBook: index).map { tags[$0] })
            let chapter = try ctx.insert(Chapter.self)
            chapter.heading = shape.heading(ofChapterOfBook: index)
            chapter.book = book
        }
        try ctx.save()
    }

    /// What each walk must read, computed by SQL over the template: titles and author names; titles, tag links and
    /// labels; and the sum of pages.
    private func graphSums(_ path: String) throws -> (authors: Int64, tags: Int64, pages: Int64) {
        let raw = try RawSQLite(path: path)
        defer { raw.close() }
        let join = try raw.joinTable()
        return (
            try raw.integer("SELECT sum(length(CAST(b.title AS BLOB))) + sum(length(CAST(a.name AS BLOB))) FROM \"Book\" b JOIN \"Author\" a ON a.\"row.id\" = b.\"author\""),
            try raw.integer("SELECT sum(length(CAST(title AS BLOB))) FROM \"Book\"")
                + raw.integer("SELECT count(*) + sum(length(CAST(t.label AS BLOB))) FROM \(join) j JOIN \"Tag\" t ON t.\"row.id\" = j.target"),
            try raw.integer("SELECT sum(pages) FROM \"Book\"")
        )
    }

    private func copyOf(_ template: String, _ name: String) throws -> String {
        let copy = try freshPath(name)
        try FileManager.default.copyItem(atPath: template, toPath: copy)
        return copy
    }

    private func checkPages(_ path: String, expected: Int64, who: String) throws {
        let raw = try RawSQLite(path: path)
        defer { raw.close() }
        let found = try raw.integer("SELECT sum(pages) FROM \"Book\"")
        guard found == expected else { throw BenchmarkError("W12 \(who): pages sum to \(found), expected \(expected)") }
    }

    private func checkRemaining(_ path: String, books: Int, who: String) throws {
        let raw = try RawSQLite(path: path)
        defer { raw.close() }
        let join = try raw.joinTable()
        let found = [
            try raw.integer("SELECT count(*) FROM \"Book\""), try raw.integer("SELECT count(*) FROM \"Chapter\""),
            try raw.integer("SELECT count(*) FROM \(join)"), try raw.integer("SELECT count(*) FROM \"Chapter\" WHERE book IS NULL"),
        ]
        let expected = [Int64(books), Int64(books), 2 * Int64(books) - (try raw.integer("SELECT count(*) FROM \"Book\" WHERE (serial / 100 + serial + 1) % 100 = serial % 100")), 0]
        guard found == expected else { throw BenchmarkError("W13 \(who): books, chapters, tag links, orphans \(found), expected \(expected)") }
    }
}

extension RawSQLite {
    /// The quoted name of the table keeping Book.tags, read from the store's schema table.
    func joinTable() throws -> String {
        let name = try text("SELECT \"table\" FROM \"objectgraph.schema\" WHERE entity = 'Book' AND property = 'tags'")
        return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    func integer(_ sql: String) throws -> Int64 { try integers(sql)[0] }

    /// The first row of `sql`, every column read as an integer.
    func integers(_ sql: String) throws -> [Int64] {
        let statement = try prepare(sql)
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { throw BenchmarkError("\(sql) returned no row") }
        return (0..<sqlite3_column_count(statement)).map { sqlite3_column_int64(statement, $0) }
    }

    func text(_ sql: String) throws -> String {
        let statement = try prepare(sql)
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else { throw BenchmarkError("\(sql) returned no text") }
        return String(cString: text)
    }

    /// W11's walks as SQL reads: the same bytes summed as ObjectGraph's walks sum.
    func walk(_ walk: GraphWalk) throws -> Int64 {
        var total: Int64 = 0
        switch walk {
        case .authorsPrefetched:
            try each("SELECT b.title, a.name FROM \"Book\" b LEFT JOIN \"Author\" a ON a.\"row.id\" = b.\"author\"") { row in
                total &+= Int64(sqlite3_column_bytes(row, 0)) &+ Int64(sqlite3_column_bytes(row, 1))
            }
        case .tagsPrefetched:
            try each("SELECT title FROM \"Book\"") { total &+= Int64(sqlite3_column_bytes($0, 0)) }
            try each("SELECT t.label FROM \(try joinTable()) j JOIN \"Tag\" t ON t.\"row.id\" = j.target") { total &+= 1 + Int64(sqlite3_column_bytes($0, 0)) }
        case .authorsFaulted:
            let lookup = try prepare("SELECT name FROM \"Author\" WHERE \"row.id\" = ?")
            defer { sqlite3_finalize(lookup) }
            var names: [Int64: Int64] = [:]
            try each("SELECT title, \"author\" FROM \"Book\"") { row in
                let author = sqlite3_column_int64(row, 1)
                if names[author] == nil {
                    sqlite3_bind_int64(lookup, 1, author)
                    names[author] = sqlite3_step(lookup) == SQLITE_ROW ? Int64(sqlite3_column_bytes(lookup, 0)) : 0
                    sqlite3_reset(lookup)
                }
                total &+= Int64(sqlite3_column_bytes(row, 0)) &+ names[author]!
            }
        }
        return total
    }

    /// W12: the books below `serial` read, then each one's pages written back plus one, version-checked.
    func updatePages(below serial: Int) throws {
        let select = try prepare("SELECT \"row.id\", \"row.version\", pages FROM \"Book\" WHERE serial < ?")
        defer { sqlite3_finalize(select) }
        sqlite3_bind_int64(select, 1, Int64(serial))
        var rows: [(Int64, Int64, Int64)] = []
        while sqlite3_step(select) == SQLITE_ROW {
            rows.append((sqlite3_column_int64(select, 0), sqlite3_column_int64(select, 1), sqlite3_column_int64(select, 2)))
        }
        let update = try prepare("UPDATE \"Book\" SET pages = ?, \"row.version\" = \"row.version\" + 1 WHERE \"row.id\" = ? AND \"row.version\" = ?")
        defer { sqlite3_finalize(update) }
        try execute("BEGIN IMMEDIATE")
        for (id, version, pages) in rows {
            sqlite3_bind_int64(update, 1, pages + 1)
            sqlite3_bind_int64(update, 2, id)
            sqlite3_bind_int64(update, 3, version)
            guard sqlite3_step(update) == SQLITE_DONE, sqlite3_changes(handle) == 1 else { throw BenchmarkError("W12 raw: update of \(id) failed") }
            sqlite3_reset(update)
        }
        try execute("COMMIT")
    }

    /// W13: the books below `serial` read, then each one's chapters and the book deleted (the join table's rows go
    /// by their foreign keys).
    func deleteBooks(below serial: Int) throws {
        try execute("PRAGMA foreign_keys = ON")
        let select = try prepare("SELECT \"row.id\" FROM \"Book\" WHERE serial < ?")
        defer { sqlite3_finalize(select) }
        sqlite3_bind_int64(select, 1, Int64(serial))
        var ids: [Int64] = []
        while sqlite3_step(select) == SQLITE_ROW { ids.append(sqlite3_column_int64(select, 0)) }
        let chapters = try prepare("DELETE FROM \"Chapter\" WHERE book = ?")
        let book = try prepare("DELETE FROM \"Book\" WHERE \"row.id\" = ?")
        defer {
            sqlite3_finalize(chapters)
            sqlite3_finalize(book)
        }
        try execute("BEGIN IMMEDIATE")
        for id in ids {
            for statement in [chapters, book] {
                sqlite3_bind_int64(statement, 1, id)
                guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchmarkError("W13 raw: delete of \(id) failed: \(String(cString: sqlite3_errmsg(handle)))") }
                sqlite3_reset(statement)
            }
        }
        try execute("COMMIT")
    }
}
