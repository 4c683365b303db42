import FluentKit
import FluentSQL
import FluentSQLiteDriver
import Logging
import NIOCore
import NIOPosix
import ObjectGraphBenchmarks

/// Fluent as a server developer writes it: models, query builders, eager loading, transactions, on FluentKit's
/// SQLite driver (one connection, on one event loop, its blocking calls on a thread pool).
///
/// Its connection is set as ObjectGraph's store sets its own (WAL, `synchronous=NORMAL`), so the comparison is of the
/// two libraries, not of their pragmas. Inserts go 1,000 models to a `create` (one INSERT each; a larger one would
/// pass SQLite's limit on bound values).
actor FluentContender: PeerContender {
    nonisolated let name = "Fluent"
    private var opened: (databases: Databases, group: MultiThreadedEventLoopGroup, pool: NIOThreadPool, db: any Database)?

    private var db: any Database {
        get throws {
            guard let opened else { throw FluentBenchmarkError("Fluent: no database is open") }
            return opened.db
        }
    }

    func open(path: String) async throws {
        try await close()
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let databases = Databases(threadPool: pool, on: group)
        databases.use(.sqlite(SQLiteConfiguration(storage: .file(path: path)), sqlLogLevel: nil), as: .sqlite)
        guard let db = databases.database(logger: Logger(label: "fluent-bench"), on: group.any()) else {
            throw FluentBenchmarkError("Fluent: no database for \(path)")
        }
        opened = (databases, group, pool, db)
        let sql = try sqlDatabase
        try await sql.raw("PRAGMA journal_mode=WAL").run()
        try await sql.raw("PRAGMA synchronous=NORMAL").run()
    }

    func close() async throws {
        guard let opened else { return }
        self.opened = nil
        await opened.databases.shutdownAsync()
        try await opened.group.shutdownGracefully()
        try await opened.pool.shutdownGracefully()
    }

    private var sqlDatabase: any SQLDatabase {
        get throws {
            guard let sql = try db as? any SQLDatabase else { throw FluentBenchmarkError("Fluent: the SQLite driver is not an SQL database") }
            return sql
        }
    }

    // MARK: W1-W3

    func createItemTable() async throws {
        var schema = try db.schema(ItemModel.schema).field("id", .int, .identifier(auto: true))
        for column in 0..<10 { schema = schema.field(FieldKey(stringLiteral: "a\(column)"), .int64, .required) }
        try await schema.create()
        try await sqlDatabase.create(index: "item_a0").on(ItemModel.schema).column("a0").run()
    }

    func insertItems(count: Int) async throws {
        try await db.transaction { db in
            for start in stride(from: 0, to: count, by: 1_000) {
                try await (start..<min(count, start + 1_000)).map(ItemModel.init(row:)).create(on: db)
            }
        }
    }

    func sumOfItems() async throws -> Int64 {
        try await ItemModel.query(on: db).all().reduce(0) { $0 &+ $1.sum }
    }

    func lookUp(a0: Int64) async throws -> Int64? {
        try await ItemModel.query(on: db).filter(\.$a0 == a0).first()?.a1
    }

    // MARK: W11

    func createGraph(_ shape: GraphShape) async throws {
        let db = try db
        try await db.schema(AuthorModel.schema).field("id", .int, .identifier(auto: false)).field("name", .string, .required).create()
        try await db.schema(TagModel.schema).field("id", .int, .identifier(auto: false)).field("label", .string, .required).create()
        try await db.schema(BookModel.schema).field("id", .int, .identifier(auto: false))
            .field("serial", .int64, .required).field("title", .string, .required).field("pages", .int64, .required)
            .field("author_id", .int, .required, .references(AuthorModel.schema, "id")).create()
        try await db.schema(BookTagModel.schema).field("id", .int, .identifier(auto: false))
            .field("book_id", .int, .required, .references(BookModel.schema, "id", onDelete: .cascade))
            .field("tag_id", .int, .required, .references(TagModel.schema, "id", onDelete: .cascade)).create()
        try await db.schema(ChapterModel.schema).field("id", .int, .identifier(auto: false))
            .field("heading", .string, .required).field("book_id", .int, .required, .references(BookModel.schema, "id", onDelete: .cascade)).create()
        let sql = try sqlDatabase
        try await sql.create(index: "books_serial").on(BookModel.schema).column("serial").run()
        try await sql.create(index: "books_author_id").on(BookModel.schema).column("author_id").run()
        try await sql.create(index: "book_tag_book_id").on(BookTagModel.schema).column("book_id").run()
        try await sql.create(index: "chapters_book_id").on(ChapterModel.schema).column("book_id").run()

        try await db.transaction { db in
            try await (0..<GraphShape.tagCount).map { TagModel(id: $0 + 1, label: shape.label(ofTag: $0)) }.create(on: db)
            for start in stride(from: 0, to: shape.authors, by: 1_000) {
                try await (start..<min(shape.authors, start + 1_000)).map { AuthorModel(id: $0 + 1, name: shape.name(ofAuthor: $0)) }.create(on: db)
            }
            var link = 0
            for start in stride(from: 0, to: shape.books, by: 1_000) {
                let range = start..<min(shape.books, start + 1_000)
                var books: [BookModel] = []
                var links: [BookTagModel] = []
                var chapters: [ChapterModel] = []
                for index in range {
                    let book = BookModel()
                    (book.id, book.serial, book.title, book.pages) = (index + 1, shape.serial(ofBook: index), shape.title(ofBook: index), shape.pages(ofBook: index))
                    book.$author.id = shape.author(ofBook: index) + 1
                    books.append(book)
                    for tag in shape.tags(ofBook: index) {
                        link += 1
                        let pivot = BookTagModel()
                        (pivot.id, pivot.$book.id, pivot.$tag.id) = (link, index + 1, tag + 1)
                        links.append(pivot)
                    }
                    let chapter = ChapterModel()
                    (chapter.id, chapter.heading, chapter.$book.id) = (index + 1, shape.heading(ofChapterOfBook: index), index + 1)
                    chapters.append(chapter)
                }
                try await books.create(on: db)
                try await links.create(on: db)
                try await chapters.create(on: db)
            }
        }
    }

    func walk(_ walk: GraphWalk) async throws -> Int64 {
        let db = try db
        var total: Int64 = 0
        switch walk {
        case .authorsPrefetched:
            for book in try await BookModel.query(on: db).with(\.$author).all() {
                total &+= Int64(book.title.utf8.count) &+ Int64(book.author.name.utf8.count)
            }
        case .tagsPrefetched:
            for book in try await BookModel.query(on: db).with(\.$tags).all() {
                total &+= Int64(book.title.utf8.count)
                for tag in book.tags { total &+= 1 + Int64(tag.label.utf8.count) }
            }
        case .authorsFaulted:
            // Each author read once, on first use, as a developer who keeps what Fluent loaded would.
            var names: [Int: Int64] = [:]
            for book in try await BookModel.query(on: db).all() {
                let author = book.$author.id
                if names[author] == nil { names[author] = Int64(try await book.$author.get(on: db).name.utf8.count) }
                total &+= Int64(book.title.utf8.count) &+ names[author]!
            }
        }
        return total
    }
}

struct FluentBenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
