import ArgumentParser
import Foundation
import ObjectGraph
#if OBJECTGRAPH_POSTGRES
import ObjectGraphPostgres
#endif

extension DataStack.Layout: ExpressibleByArgument {}

/// Imports books in the background while the main thread keeps answering queries, then reports.
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Import books in the background while the main context answers queries.")

    // Unconditional: `--count -5` reads -5 as the value (and refuses it), not as an unknown option.
    @Option(parsing: .unconditional, help: "How many books to import.") var count = 100_000
    @Option(help: "The store file, kept and added to by later runs (default: a fresh objectgraph-demo.sqlite in the temporary folder each run).")
    var store: String?
    @Flag(help: "Use an in-memory store instead of a file.") var inMemory = false
    @Option(help: "A PostgreSQL database instead of a file (postgres://user:password@host:port/database); other hosts running the demo against it share the books.")
    var postgres: String?
    @Option(parsing: .unconditional, help: "Books per background save.") var batch = 5_000
    @Option(help: "The stack's layout: nested (writer <- main <- workers) or siblings.") var layout: DataStack.Layout = .nested

    func validate() throws {
        if count < 0 { throw ToolInputError("--count must be zero or more, not \(count)") }
        if batch < 1 { throw ToolInputError("--batch must be at least 1, not \(batch)") }
    }

    @MainActor
    mutating func run() async throws {
        let model = try Model([Writer.self, Book.self])
        let path = store ?? FileManager.default.temporaryDirectory.appendingPathComponent("objectgraph-demo.sqlite").path
        // The default store starts empty each run, so repeated runs measure the same import rather than one into an
        // ever larger store; a store named with --store is the user's, kept and added to.
        if store == nil && !inMemory && postgres == nil {
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
                try FileManager.default.removeItem(atPath: path + suffix)
            }
        }
        let stack: DataStack
        let place: String
        if let postgres {
            #if OBJECTGRAPH_POSTGRES
            let store = try PostgresStore(url: postgres, model: model)
            // Other hosts' imports reach this one's main context through the writer, which merges what it hears.
            stack = DataStack(coordinator: try PersistentStoreCoordinator(model: model, store: store, watchesRemoteChanges: true), layout: layout)
            place = store.location
            #else
            throw withoutPostgres("--postgres \(postgres) cannot be used")
            #endif
        } else if inMemory {
            (stack, place) = (DataStack.inMemory(model: model, layout: layout), "in memory")
        } else {
            (stack, place) = (try DataStack(databaseFileName: path, model: model, layout: layout), path)
        }
        print("store: \(place), layout: \(layout.rawValue)")
        #if DEBUG
        // A debug build's stalls and rates are the unoptimized code's, not the library's.
        print("note: this is a debug build; its timings are not representative. For release figures:")
        print("  swift build -c release --product objectgraph && .build/release/objectgraph demo")
        #endif
        let existing = try stack.onMain { ctx in try ctx.count(for: Book.fetchRequest()) }
        // Numbered after the writers already stored, so that a name stands for one writer across runs.
        let existingWriters = try stack.onMain { ctx in try ctx.count(for: Writer.fetchRequest()) }
        print("books already in the store: \(existing)")

        // A live query on the main actor: the long books, sorted and in sections by page count, kept current as the
        // import saves, one diff per save.
        var longBooks = try FetchRequest(entityName: "Book", format: "pages >= %d", argumentArray: [945])
        longBooks.sortKeys = [SortKey("pages"), SortKey("name")]
        let live = try stack.onMain { try $0.fetchedResultsController(for: longBooks, sectionNameKeyPath: "pages") }
        let liveLog = LiveQueryLog(initial: live.snapshot.count)
        live.onChange { change in liveLog.record(change) }

        let monitor = MainThreadMonitor()
        let total = count
        let perSave = max(1, batch)
        let clock = ContinuousClock()
        let start = clock.now
        let progress = Progress(total: total)
        let importer = Task.detached {
            var imported = 0
            while imported < total {
                let size = min(perSave, total - imported)
                let offset = imported
                // A background block on a worker: it saves when it returns, and the save goes up to disk.
                try await stack.background { ctx in
                    // Ten writers per save, each with a tenth of the save's books.
                    let firstWriter = existingWriters + offset / perSave * 10
                    var writers: [Writer] = []
                    for index in 0..<10 {
                        let author = try ctx.insert(Writer.self)
                        author.name = "Writer \(firstWriter + index)"
                        author.born = Int32(1800 + (firstWriter + index) % 200)
                        writers.append(author)
                    }
                    for index in 0..<size {
                        let book = try ctx.insert(Book.self)
                        let number = existing + offset + index
                        let author = writers[index % writers.count]
                        book.name = number % 1_000 == 0 ? "拿破仑" : "Book \(number)"
                        book.author = number % 1_000 == 0 ? "约翰史蒂芬" : author.name
                        book.pages = Int32(50 + number % 900)
                        book.price = Double(number % 4_000) / 100
                        book.writer = author
                    }
                }
                imported += size
                await progress.show(imported)
            }
        }
        let sampler = Task { @MainActor in
            var probe = 0
            try await monitor.run(every: .milliseconds(5)) {
                // A small query of the kind a UI makes: one book by its (indexed) name.
                probe = (probe + 7_919) % max(1, existing + total)
                let name = "Book \(probe)"
                _ = try Book.one(in: stack, where: "name == %@", name)
            }
        }
        try await importer.value
        monitor.stop()
        try await sampler.value
        let elapsed = (clock.now - start).seconds
        progress.finish()

        print(String(format: "imported %d books in %.2f s: %.0f books/s", total, elapsed, Double(total) / elapsed))
        print(String(format: "main thread during the import: %d queries, stall p50 %.2f ms, p99 %.2f ms, max %.2f ms, busy %.1f%%",
                     monitor.queries, monitor.percentile(0.5) * 1000, monitor.percentile(0.99) * 1000,
                     monitor.percentile(1) * 1000, monitor.busy / elapsed * 100))

        let fresh = try stack.onMain { try $0.count(for: longBooks) }
        print("\nlive query \"pages >= 945\" on the main actor, sorted and in sections by pages:")
        print("  \(liveLog.diffs.count) diffs, one per save; objects changed per diff: \(liveLog.sizesSummary)")
        print("  now \(live.snapshot.count) books in \(live.snapshot.sections.count) sections; a fresh fetch counts \(fresh)")

        print("\nexample queries (predicate format language):")
        try stack.onMain { ctx in
            let napoleon = try ctx.fetch(Book.self, sortedBy: ["name"], where: "author = %@", "约翰史蒂芬")
            print("  author = \"约翰史蒂芬\": \(napoleon.count) books, first: \(napoleon.first.map { "\($0.name), \($0.pages) pages" } ?? "none")")
            let cheapLong = try ctx.fetch(Book.self, sortedBy: ["-pages", "name"], where: "pages BETWEEN {940, 949} AND price < 5")
            print("  pages BETWEEN {940, 949} AND price < 5: \(cheapLong.count) books, e.g. \(cheapLong.prefix(3).map(\.name))")
            var top = FetchRequest(entityName: "Book")
            top.propertiesToFetch = [.attribute("writer.name"), .aggregate("books", .count), .aggregate("pages", .sum, of: "pages")]
            top.propertiesToGroupBy = ["writer.name"]
            top.havingPredicate = try FormatPredicate("books >= 100")
            top.sortKeys = [SortKey("-pages")]
            top.fetchLimit = 3
            for row in try ctx.fetchDictionaries(top) {
                print("  writer \(row["writer.name"] ?? .null): \(row["books"] ?? .null) books, \(row["pages"] ?? .null) pages")
            }
            let prolific = try ctx.count(for: try FetchRequest(entityName: "Writer", format: "books.@count >= 100 AND name BEGINSWITH[cd] %@", "writer 1"))
            print("  writers with 100+ books whose name begins with \"writer 1\" (case-insensitive): \(prolific)")
            print("  books in the store now: \(try ctx.count(for: Book.fetchRequest()))")
        }
    }
}

/// A progress bar on standard error, redrawn in place.
actor Progress {
    let total: Int
    init(total: Int) { self.total = total }

    func show(_ done: Int) {
        let width = 40
        let filled = total == 0 ? width : width * done / total
        let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
        FileHandle.standardError.write(Data("\rimporting [\(bar)] \(done)/\(total)".utf8))
    }

    nonisolated func finish() { FileHandle.standardError.write(Data("\n".utf8)) }
}

/// What the demo's live query heard: each diff's size, printed as it arrives.
@MainActor
final class LiveQueryLog {
    private(set) var diffs: [Int] = []
    private var count: Int

    init(initial: Int) { count = initial }

    func record(_ change: FetchedResultsChange) {
        diffs.append(change.objectChanges.count)
        count = change.snapshot.count
        FileHandle.standardError.write(Data("\r  live query: \(count) books, last diff \(change.objectChanges.count) objects, \(change.sectionChanges.count) sections\n".utf8))
    }

    var sizesSummary: String {
        guard let low = diffs.min(), let high = diffs.max() else { return "none" }
        let sorted = diffs.sorted()
        return "min \(low), median \(sorted[sorted.count / 2]), max \(high)"
    }
}
