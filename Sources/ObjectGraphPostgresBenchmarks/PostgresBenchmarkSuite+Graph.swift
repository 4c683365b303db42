import Foundation
import ObjectGraph
import ObjectGraphBenchmarks
import ObjectGraphPostgres
import PostgresNIO

/// W11-W13 on PostgreSQL: the SQLite suite's relationship walks, update and delete over the same graph, written
/// once by the PostgreSQL store into a template database, against raw postgres-nio sending the statements the
/// store sends for the same work. Every write runs on a fresh copy of the template (`CREATE DATABASE … TEMPLATE`),
/// one per contender, and both contenders' results are checked.
extension PostgresBenchmarkSuite {
    static let graphTemplate = "og_bench_graph_t"

    var graphShape: GraphShape { GraphShape(books: options.graphBooks, authors: max(1, options.graphBooks / 10)) }

    /// W11, W12 and W13's rows, over the template ``makeGraphTemplate()`` wrote.
    func graph() async throws -> [BenchmarkReport.Row] {
        log("PostgreSQL W11-W13: relationships, updates and deletes over \(options.graphBooks) books")
        let expected = try await graphSums()
        try await copyTemplate(to: "og_bench_w11")
        var reads: [GraphWalk: Samples] = [:]
        var update = Samples(), delete = Samples()
        let changes = options.graphChanges
        for repetition in 0...options.repetitions {
            var taken: [GraphWalk: Samples] = [:]
            let context = try makeContext(on: "og_bench_w11", model: BenchmarkSuite.graphModel)
            let connection = try await connect("og_bench_w11")
            for walk in GraphWalk.allCases {
                let (sample, walked) = try await Measure.timed(on: context) { ctx in try BenchmarkSuite.walk(walk, in: ctx) }
                taken[walk, default: Samples()].add(sample, for: "ObjectGraph")
                try check(walked, walk == .tagsPrefetched ? expected.tags : expected.authors, "ObjectGraph (W11 \(walk.rawValue))")
                var sum: Int64 = 0
                taken[walk, default: Samples()].add(try await Measure.timed { sum = try await rawWalk(walk, on: connection) }, for: "raw")
                try check(sum, walk == .tagsPrefetched ? expected.tags : expected.authors, "raw (W11 \(walk.rawValue))")
            }
            try await connection.close()

            try await copyTemplate(to: "og_bench_w12_graph")
            let updating = try makeContext(on: "og_bench_w12_graph", model: BenchmarkSuite.graphModel)
            let (updated, _) = try await Measure.timed(on: updating) { ctx in
                for book in try ctx.fetch(try FetchRequest(entityName: "Book", format: "serial < %d", changes), as: Book.self) { book.pages += 1 }
                try ctx.save()
                ctx.reset()
            }
            try await checkPages("og_bench_w12_graph", expected: expected.pages + Int64(changes), who: "ObjectGraph")
            try await copyTemplate(to: "og_bench_w12_raw")
            let rawUpdating = try await connect("og_bench_w12_raw")
            let rawUpdated = try await Measure.timed { try await rawUpdatePages(below: changes, on: rawUpdating) }
            try await rawUpdating.close()
            try await checkPages("og_bench_w12_raw", expected: expected.pages + Int64(changes), who: "raw")

            try await copyTemplate(to: "og_bench_w13_graph")
            let deleting = try makeContext(on: "og_bench_w13_graph", model: BenchmarkSuite.graphModel)
            let (deleted, _) = try await Measure.timed(on: deleting) { ctx in
                for book in try ctx.fetch(try FetchRequest(entityName: "Book", format: "serial < %d", changes), as: Book.self) { try ctx.delete(book) }
                try ctx.save()
                ctx.reset()
            }
            try await checkRemaining("og_bench_w13_graph", who: "ObjectGraph")
            try await copyTemplate(to: "og_bench_w13_raw")
            let rawDeleting = try await connect("og_bench_w13_raw")
            let rawDeleted = try await Measure.timed { try await rawDeleteBooks(below: changes, on: rawDeleting) }
            try await rawDeleting.close()
            try await checkRemaining("og_bench_w13_raw", who: "raw")

            // The first round warms code, caches and the server up for both, and is not counted.
            guard repetition > 0 else { continue }
            for (walk, samples) in taken { reads[walk] = (reads[walk] ?? Samples()) + samples }
            update.add(updated, for: "ObjectGraph")
            update.add(rawUpdated, for: "raw")
            delete.add(deleted, for: "ObjectGraph")
            delete.add(rawDeleted, for: "raw")
        }
        var rows: [BenchmarkReport.Row] = []
        for walk in GraphWalk.allCases {
            rows += BenchmarkReport.Row.wallAndCPU("PG W11 \(options.graphBooks) books, \(walk.rawValue)", reads[walk]!, note: "CPU: this process only")
        }
        rows += BenchmarkReport.Row.wallAndCPU("PG W12 update \(changes)", update, note: "fetch, change pages, save; CPU: this process only")
        rows += BenchmarkReport.Row.wallAndCPU(
            "PG W13 delete \(changes)", delete, note: "fetch, delete (chapters cascade, authors nullify), save; CPU: this process only")
        return rows
    }

    // MARK: The template and its copies

    /// The graph, written by the store into a database of its own, analyzed; no connection to it is left open, so
    /// that it can be copied.
    func makeGraphTemplate() async throws {
        try await freshDatabase(Self.graphTemplate)
        let shape = graphShape
        let writer = try makeContext(on: Self.graphTemplate, model: BenchmarkSuite.graphModel)
        try await writer.perform { ctx in try BenchmarkSuite.insertGraph(shape, in: ctx) }
        let connection = try await connect(Self.graphTemplate)
        _ = try await connection.query("ANALYZE", logger: Self.logger)
        try await connection.close()
    }

    /// Drops `name` and creates it as a copy of the template.
    func copyTemplate(to name: String) async throws {
        try await freshDatabase(name, template: Self.graphTemplate)
    }

    /// The quoted name of the table keeping Book.tags.
    static var tagLinks: String {
        get throws {
            guard let table = SQLiteStore.joinTables(BenchmarkSuite.graphModel).first(where: { $0.sourceTable == "Book" && $0.targetTable == "Tag" })
            else { throw BenchmarkError("PostgreSQL: the graph model has no join table for Book.tags") }
            return "\"" + table.name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
    }

    /// The first column of the first row of `sql`, an integer.
    func integer(_ sql: String, on connection: PostgresConnection) async throws -> Int64 {
        for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Self.logger) {
            return try row.makeRandomAccess()[0].decode(Int64.self)
        }
        throw BenchmarkError("PostgreSQL: \(sql) returned no row")
    }

    /// What each walk must read, computed by SQL over the template (as the SQLite suite computes it).
    func graphSums() async throws -> (authors: Int64, tags: Int64, pages: Int64) {
        let connection = try await connect(Self.graphTemplate)
        let links = try Self.tagLinks
        let sums = (
            try await integer(#"SELECT (sum(octet_length(b.title)) + sum(octet_length(a.name)))::BIGINT FROM "Book" b JOIN "Author" a ON a."row.id" = b."author""#, on: connection),
            try await integer(#"SELECT sum(octet_length(title))::BIGINT FROM "Book""#, on: connection)
                + integer("SELECT (count(*) + sum(octet_length(t.label)))::BIGINT FROM \(links) j JOIN \"Tag\" t ON t.\"row.id\" = j.target", on: connection),
            try await integer(#"SELECT sum(pages)::BIGINT FROM "Book""#, on: connection))
        try await connection.close()
        return sums
    }

    func checkPages(_ database: String, expected: Int64, who: String) async throws {
        let connection = try await connect(database)
        let found = try await integer(#"SELECT sum(pages)::BIGINT FROM "Book""#, on: connection)
        try await connection.close()
        guard found == expected else { throw BenchmarkError("PostgreSQL W12 \(who): pages sum to \(found), expected \(expected)") }
    }

    func checkRemaining(_ database: String, who: String) async throws {
        let connection = try await connect(database)
        let links = try Self.tagLinks
        let books = Int64(options.graphBooks - options.graphChanges)
        let found = [
            try await integer(#"SELECT count(*) FROM "Book""#, on: connection), try await integer(#"SELECT count(*) FROM "Chapter""#, on: connection),
            try await integer("SELECT count(*) FROM \(links) j LEFT JOIN \"Book\" b ON b.\"row.id\" = j.source WHERE b.\"row.id\" IS NULL", on: connection),
            try await integer(#"SELECT count(*) FROM "Chapter" WHERE book IS NULL"#, on: connection),
        ]
        try await connection.close()
        guard found == [books, books, 0, 0] else {
            throw BenchmarkError("PostgreSQL W13 \(who): books, chapters, links of deleted books, orphan chapters \(found), expected \([books, books, 0, 0])")
        }
    }

    // MARK: Raw postgres-nio

    /// W11's walks as SQL reads: the same bytes summed as ObjectGraph's walks sum.
    func rawWalk(_ walk: GraphWalk, on connection: PostgresConnection) async throws -> Int64 {
        var total: Int64 = 0
        func each(_ sql: String, _ body: (PostgresRandomAccessRow) throws -> Void) async throws {
            for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Self.logger) { try body(row.makeRandomAccess()) }
        }
        func length(_ cell: PostgresCell) -> Int64 { Int64(cell.bytes?.readableBytes ?? 0) }
        switch walk {
        case .authorsPrefetched:
            try await each(#"SELECT b.title, a.name FROM "Book" b LEFT JOIN "Author" a ON a."row.id" = b."author""#) { row in
                total &+= length(row[0]) &+ length(row[1])
            }
        case .tagsPrefetched:
            try await each(#"SELECT title FROM "Book""#) { total &+= length($0[0]) }
            try await each("SELECT t.label FROM \(try Self.tagLinks) j JOIN \"Tag\" t ON t.\"row.id\" = j.target") { total &+= 1 + length($0[0]) }
        case .authorsFaulted:
            // The books first, as a fetch returns them; then each author not seen yet, one lookup each.
            var books: [(title: Int64, author: Int64)] = []
            try await each(#"SELECT title, "author" FROM "Book""#) { row in books.append((length(row[0]), try row[1].decode(Int64.self))) }
            var names: [Int64: Int64] = [:]
            for book in books {
                if names[book.author] == nil {
                    var name: Int64 = 0
                    for try await row in try await connection.query(#"SELECT name FROM "Author" WHERE "row.id" = \#(book.author)"#, logger: Self.logger) {
                        name = length(row.makeRandomAccess()[0])
                    }
                    names[book.author] = name
                }
                total &+= book.title &+ names[book.author]!
            }
        }
        return total
    }

    /// W12: the books below `serial` read, then their pages written back plus one, version-checked, in the
    /// statements the store sends (runs of rows in `UPDATE … FROM (VALUES …)`).
    func rawUpdatePages(below serial: Int, on connection: PostgresConnection) async throws {
        var rows: [(id: Int64, version: Int64, pages: Int64)] = []
        for try await row in try await connection.query(#"SELECT "row.id", "row.version", pages FROM "Book" WHERE serial < \#(Int64(serial))"#, logger: Self.logger) {
            rows.append(try row.decode((Int64, Int64, Int64).self))
        }
        _ = try await connection.query("BEGIN", logger: Self.logger)
        for start in stride(from: 0, to: rows.count, by: 10_000) {
            let chunk = rows[start..<min(start + 10_000, rows.count)]
            var binds = PostgresBindings(capacity: chunk.count * 3)
            var tuples: [String] = []
            for row in chunk {
                tuples.append("($\(binds.count + 1)::BIGINT, $\(binds.count + 2)::BIGINT, $\(binds.count + 3)::BIGINT)")
                binds.append(row.id)
                binds.append(row.version)
                binds.append(row.pages + 1)
            }
            let result = try await connection.query(PostgresQuery(unsafeSQL: """
                UPDATE "Book" AS t SET pages = v.c0, "row.version" = t."row.version" + 1
                FROM (VALUES \(tuples.joined(separator: ", "))) AS v(id, version, c0)
                WHERE t."row.id" = v.id AND t."row.version" = v.version RETURNING t."row.id"
                """, binds: binds), logger: Self.logger)
            var changed = 0
            for try await _ in result { changed += 1 }
            guard changed == chunk.count else { throw BenchmarkError("PostgreSQL W12 raw: \(changed) of \(chunk.count) rows updated") }
        }
        _ = try await connection.query("COMMIT", logger: Self.logger)
    }

    /// W13: the books below `serial` and their chapters read, then the chapters and the books deleted, version-checked,
    /// in the statements the store sends (a `DELETE … USING unnest(…)` per table); the tag links go by their
    /// foreign keys.
    func rawDeleteBooks(below serial: Int, on connection: PostgresConnection) async throws {
        func keysAndVersions(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) async throws -> (keys: [Int64], versions: [Int64]) {
            var found: (keys: [Int64], versions: [Int64]) = ([], [])
            for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: Self.logger) {
                let (key, version) = try row.decode((Int64, Int64).self)
                found.keys.append(key)
                found.versions.append(version)
            }
            return found
        }
        let books = try await keysAndVersions(#"SELECT "row.id", "row.version" FROM "Book" WHERE serial < \#(Int64(serial))"#)
        var bookKeys = PostgresBindings()
        bookKeys.append(books.keys)
        let chapters = try await keysAndVersions(#"SELECT "row.id", "row.version" FROM "Chapter" WHERE book = ANY($1::BIGINT[])"#, bookKeys)
        _ = try await connection.query("BEGIN", logger: Self.logger)
        for (table, rows) in [("Chapter", chapters), ("Book", books)] {
            var binds = PostgresBindings()
            binds.append(rows.keys)
            binds.append(rows.versions)
            var deleted = 0
            for try await _ in try await connection.query(PostgresQuery(unsafeSQL: """
                DELETE FROM "\(table)" AS t USING unnest($1::BIGINT[], $2::BIGINT[]) AS v(id, version)
                WHERE t."row.id" = v.id AND t."row.version" = v.version RETURNING t."row.id"
                """, binds: binds), logger: Self.logger) { deleted += 1 }
            guard deleted == rows.keys.count else { throw BenchmarkError("PostgreSQL W13 raw: \(deleted) of \(rows.keys.count) \(table) rows deleted") }
        }
        _ = try await connection.query("COMMIT", logger: Self.logger)
    }
}
