/// A contender from another package, run beside raw SQLite and ObjectGraph on W1, W2, W3 and W11 in the same run.
///
/// The Fluent benchmark (`Benchmarks/Fluent`, a package of its own so that this one does not build Fluent's stack)
/// implements one. The suite opens the peer on a file, times each call, and checks what it stored or read the way it
/// checks every contender: W1's rows are read back from the file, W2's and W11's sums compared with what SQL computes.
///
/// ```swift
/// var options = BenchmarkSuite.Options()
/// options.workloads = ["W1", "W2", "W3", "W11"]
/// let report = try await BenchmarkSuite(options: options, peer: FluentContender()).run()
/// print(report.table())          // a "Fluent" column beside raw SQLite's and ObjectGraph's
/// ```
public protocol PeerContender: Actor {
    /// The column the peer's values go to ("Fluent").
    nonisolated var name: String { get }

    /// Opens the SQLite file at `path`, creating it when missing. Untimed.
    func open(path: String) async throws
    /// Closes what ``open(path:)`` opened, so the suite can read the file. Untimed.
    func close() async throws

    /// W1, untimed: creates table `item` (`id INTEGER PRIMARY KEY`, `a0` … `a9 INTEGER`, an index on `a0`).
    func createItemTable() async throws
    /// W1, timed: inserts `count` rows, row `r` holding `r * 10 + c` in column `a<c>`, in one transaction.
    func insertItems(count: Int) async throws
    /// W2, timed: reads every row of `item` as the peer's own records and returns the sum of all ten values.
    func sumOfItems() async throws -> Int64
    /// W3, each call timed: `a1` of the row of `item` whose `a0` is `a0`, or nil.
    func lookUp(a0: Int64) async throws -> Int64?

    /// W11, untimed: stores `shape`'s authors, tags, books and chapters in the peer's own schema.
    func createGraph(_ shape: GraphShape) async throws
    /// W11, timed: `walk` over every book, returning the sum ``GraphWalk`` describes.
    func walk(_ walk: GraphWalk) async throws -> Int64
}

/// W11's three walks over every book. Each sums the UTF-8 lengths of what it reads, so every contender's sum can be
/// checked against SQL's.
public enum GraphWalk: String, CaseIterable, Sendable {
    /// Each book's title and its author's name, the authors loaded with the books (a join, or a prefetch).
    case authorsPrefetched = "authors prefetched"
    /// Each book's title, and 1 + the length of each of its tags' labels, the tags loaded with the books.
    case tagsPrefetched = "tags prefetched"
    /// As ``authorsPrefetched``, but each author loaded on first use, one at a time.
    case authorsFaulted = "authors faulted"
}

/// What W11-W13's store holds, so that every contender stores the same values: books `0..<books`, authors
/// `0..<authors`, tags `0..<100`, one chapter per book.
public struct GraphShape: Sendable {
    public let books: Int
    public let authors: Int
    public static let tagCount = 100

    public init(books: Int, authors: Int) { (self.books, self.authors) = (books, authors) }

    public func title(ofBook book: Int) -> String { "Book \(book)" }
    public func serial(ofBook book: Int) -> Int64 { Int64(book) }
    public func pages(ofBook book: Int) -> Int64 { Int64(book % 500) }
    public func author(ofBook book: Int) -> Int { book % authors }
    /// The book's tags: two, or one where both rules pick the same tag.
    public func tags(ofBook book: Int) -> [Int] {
        let (first, second) = (book % Self.tagCount, (book / Self.tagCount + book + 1) % Self.tagCount)
        return first == second ? [first] : [first, second]
    }
    public func heading(ofChapterOfBook book: Int) -> String { "Chapter \(book)" }
    public func name(ofAuthor author: Int) -> String { "Author \(author)" }
    public func label(ofTag tag: Int) -> String { "tag \(tag)" }
}
