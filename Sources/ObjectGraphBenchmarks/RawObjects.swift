import GRDBSQLite

/// What handing out an object per row costs done the plain way: raw SQLite's reads, each row made into an instance of
/// a plain Swift class, kept in an identity map by key (so that a row read twice is one object) and linked to its
/// related objects, then read through the objects and freed.
///
/// It does none of what ObjectGraph adds (change tracking, faults, versions, confinement checks, observation): the
/// distance from raw SQLite to it is the price of objects themselves, which a ratio to raw SQLite counts against
/// ObjectGraph. The report prints ObjectGraph's ratio to it beside the ratio to raw SQLite. `readingAhead` makes the
/// objects with ObjectGraph's own way of reading cheaply: past 2,048 rows, a second thread steps the statement and
/// decodes the rows in batches while the caller makes the objects (``BenchmarkReport/objectBaselineReadAhead``).
/// (ObjectGraph's other way, values in shared blocks, has nothing to share here: a plain object holds its values.)
extension RawSQLite {
    /// One row of W2's table: its key and its ten values.
    private struct ItemRow: Sendable {
        let key: Int64
        let a0, a1, a2, a3, a4, a5, a6, a7, a8, a9: Int64

        init(_ row: OpaquePointer) {
            key = sqlite3_column_int64(row, 0)
            (a0, a1, a2, a3, a4) = (sqlite3_column_int64(row, 1), sqlite3_column_int64(row, 2), sqlite3_column_int64(row, 3),
                                    sqlite3_column_int64(row, 4), sqlite3_column_int64(row, 5))
            (a5, a6, a7, a8, a9) = (sqlite3_column_int64(row, 6), sqlite3_column_int64(row, 7), sqlite3_column_int64(row, 8),
                                    sqlite3_column_int64(row, 9), sqlite3_column_int64(row, 10))
        }
    }

    /// W2 through objects: every row made into an object with its ten values, the values summed through them.
    func readAllAsObjects(table: String, readingAhead: Bool = false) throws -> Int64 {
        final class Item {
            let key: Int64
            let a0, a1, a2, a3, a4, a5, a6, a7, a8, a9: Int64
            init(_ row: ItemRow) {
                key = row.key
                (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9) = (row.a0, row.a1, row.a2, row.a3, row.a4, row.a5, row.a6, row.a7, row.a8, row.a9)
            }
        }
        var registry: [Int64: Item] = [:]
        var items: [Item] = []
        try rows("SELECT id, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9 FROM \(table)", readingAhead: readingAhead, decode: ItemRow.init) { row in
            items.append(Self.unique(row.key, in: &registry) { Item(row) })
        }
        var sum: Int64 = 0
        for r in items { sum &+= r.a0 &+ r.a1 &+ r.a2 &+ r.a3 &+ r.a4 &+ r.a5 &+ r.a6 &+ r.a7 &+ r.a8 &+ r.a9 }
        return sum
    }

    /// W11's walks through objects: books with their titles, linked to their authors (read with them, or one at a
    /// time on first use) or to their tags, summed as ``walk(_:)`` sums.
    func walkObjects(_ walk: GraphWalk, readingAhead: Bool = false) throws -> Int64 {
        final class Author {
            let name: String
            init(name: String) { self.name = name }
        }
        final class Tag {
            let label: String
            init(label: String) { self.label = label }
        }
        final class Book {
            let title: String
            let authorKey: Int64
            var author: Author?
            var tags: [Tag] = []
            init(title: String, authorKey: Int64) { (self.title, self.authorKey) = (title, authorKey) }
        }
        var books: [Int64: Book] = [:]
        var results: [Book] = []
        try rows("SELECT \"row.id\", title, author FROM \"Book\"", readingAhead: readingAhead, decode: KeyedText.init) { row in
            results.append(Self.unique(row.key, in: &books) { Book(title: row.text, authorKey: row.other) })
        }
        var authors: [Int64: Author] = [:]
        var total: Int64 = 0
        switch walk {
        case .authorsPrefetched:
            let sql = "SELECT \"row.id\", name, 0 FROM \"Author\" WHERE \"row.id\" IN (SELECT author FROM \"Book\")"
            try rows(sql, readingAhead: readingAhead, decode: KeyedText.init) { row in
                _ = Self.unique(row.key, in: &authors) { Author(name: row.text) }
            }
            for book in results { book.author = authors[book.authorKey] }
            for book in results { total &+= Int64(book.title.utf8.count) &+ Int64(book.author?.name.utf8.count ?? 0) }
        case .tagsPrefetched:
            var tags: [Int64: Tag] = [:]
            let links = try joinTable()
            let sql = "SELECT \"row.id\", label, 0 FROM \"Tag\" WHERE \"row.id\" IN (SELECT target FROM \(links))"
            try rows(sql, readingAhead: readingAhead, decode: KeyedText.init) { row in
                _ = Self.unique(row.key, in: &tags) { Tag(label: row.text) }
            }
            try each("SELECT source, target FROM \(links)") { row in
                if let book = books[sqlite3_column_int64(row, 0)], let tag = tags[sqlite3_column_int64(row, 1)] { book.tags.append(tag) }
            }
            for book in results {
                total &+= Int64(book.title.utf8.count)
                for tag in book.tags { total &+= 1 + Int64(tag.label.utf8.count) }
            }
        case .authorsFaulted:
            let lookup = try prepare("SELECT name FROM \"Author\" WHERE \"row.id\" = ?")
            defer { sqlite3_finalize(lookup) }
            for book in results {
                if book.author == nil {
                    book.author = Self.unique(book.authorKey, in: &authors) {
                        sqlite3_bind_int64(lookup, 1, book.authorKey)
                        defer { sqlite3_reset(lookup) }
                        return Author(name: sqlite3_step(lookup) == SQLITE_ROW ? Self.string(lookup, 0) : "")
                    }
                }
                total &+= Int64(book.title.utf8.count) &+ Int64(book.author?.name.utf8.count ?? 0)
            }
        }
        return total
    }

    /// A row of a key, a text and another integer (a book's title and author key; a name or label and 0), decoded as
    /// a fetch decodes it.
    private struct KeyedText: Sendable {
        let key: Int64
        let text: String
        let other: Int64

        init(_ row: OpaquePointer) {
            (key, text, other) = (sqlite3_column_int64(row, 0), RawSQLite.string(row, 1), sqlite3_column_int64(row, 2))
        }
    }

    /// Steps `sql` to its end, handing each row to `body`.
    func each(_ sql: String, _ body: (OpaquePointer) -> Void) throws {
        let statement = try prepare(sql)
        defer { sqlite3_finalize(statement) }
        while sqlite3_step(statement) == SQLITE_ROW { body(statement) }
    }

    /// The object `registry` keeps for `key`, made by `make` and kept there when it has none.
    private static func unique<Object: AnyObject>(_ key: Int64, in registry: inout [Int64: Object], _ make: () -> Object) -> Object {
        if let kept = registry[key] { return kept }
        let made = make()
        registry[key] = made
        return made
    }

    /// Column `column` of `row` as a string, read by its length.
    private static func string(_ row: OpaquePointer, _ column: Int32) -> String {
        guard let text = sqlite3_column_text(row, column) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(row, column))), as: UTF8.self)
    }
}
