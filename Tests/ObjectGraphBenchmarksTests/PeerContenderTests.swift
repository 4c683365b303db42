import Foundation
import GRDB
import Testing
@testable import ObjectGraphBenchmarks

/// A peer contender as the Fluent package plugs one in, here on GRDB: the suite runs it on W1, W2, W3 and W11, checks
/// what it stored and read, and gives it a column and a verdict.
@Suite struct PeerContenderTests {
    @MainActor
    @Test func aPeerRunsBesideTheOthersAndIsJudged() async throws {
        let report = try await run(peer: GRDBPeer())
        for workload in ["W1 insert 500", "W1 insert 500 CPU", "W2 fetch 1000", "W3 lookup median", "W3 lookup CPU",
                         "W11 1000 books, authors prefetched", "W11 1000 books, tags prefetched", "W11 1000 books, authors faulted CPU"] {
            let row = try #require(report.rows.first { $0.workload == workload }, "\(workload) is missing")
            #expect(row.values["Peer"] != nil && row.fasterThanPeer == "Peer", "\(workload) has no peer value")
            #expect(report.met(row) != nil)
        }
        #expect(report.columns.last == "Peer")
        #expect(report.table().contains("< Peer"))
    }

    @MainActor
    @Test func aPeerThatReadsWrongIsCaught() async throws {
        await #expect(throws: BenchmarkError.self) { try await run(peer: GRDBPeer(skipsLastRow: true)) }
    }

    @Test func beingSlowerThanThePeerFailsTheRow() {
        var row = BenchmarkReport.Row(workload: "w", unit: "s", values: ["raw": 1, "ObjectGraph": 2, "Peer": 1.5], target: .ratio(2.5))
        row.fasterThanPeer = "Peer"
        #expect(BenchmarkReport(rows: [row]).met(row) == false)
        row.values["Peer"] = 2.5
        #expect(BenchmarkReport(rows: [row]).met(row) == true)
        row.values["raw"] = 0.5
        #expect(BenchmarkReport(rows: [row]).met(row) == false)
    }

    @MainActor
    private func run(peer: GRDBPeer) async throws -> BenchmarkReport {
        var options = BenchmarkSuite.Options.tiny
        options.workloads = ["W1", "W2", "W3", "W11"]
        options.contenders = ["raw", "ObjectGraph", "Peer"]
        options.folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-peer-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: options.folder) }
        return try await BenchmarkSuite(options: options, peer: peer, log: { _ in }).run()
    }
}

/// The peer protocol served by GRDB, in a schema of its own for W11.
private actor GRDBPeer: PeerContender {
    nonisolated let name = "Peer"
    /// Drops the last row W2 reads, so its sum is wrong.
    let skipsLastRow: Bool
    private var queue: DatabaseQueue?

    init(skipsLastRow: Bool = false) { self.skipsLastRow = skipsLastRow }

    private var db: DatabaseQueue {
        get throws {
            guard let queue else { throw BenchmarkError("no database open") }
            return queue
        }
    }

    func open(path: String) throws { queue = try DatabaseQueue(path: path) }
    func close() throws {
        try queue?.close()
        queue = nil
    }

    func createItemTable() throws { try db.write { try $0.execute(sql: plainSchema) } }

    func insertItems(count: Int) throws {
        try db.write { db in
            for row in 0..<count {
                let values = (0..<10).map { Int64(row * 10 + $0) }
                try db.execute(sql: "INSERT INTO item (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                               arguments: StatementArguments(values))
            }
        }
    }

    func sumOfItems() throws -> Int64 {
        let rows = try db.read { try Row.fetchAll($0, sql: "SELECT a0, a1, a2, a3, a4, a5, a6, a7, a8, a9 FROM item ORDER BY id") }
        return rows.dropLast(skipsLastRow ? 1 : 0).reduce(0) { sum, row in (0..<10).reduce(sum) { $0 &+ (row[$1] as Int64) } }
    }

    func lookUp(a0: Int64) throws -> Int64? {
        try db.read { try Int64.fetchOne($0, sql: "SELECT a1 FROM item WHERE a0 = ?", arguments: [a0]) }
    }

    func createGraph(_ shape: GraphShape) throws {
        try db.write { db in
            try db.execute(sql: """
                CREATE TABLE author (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                CREATE TABLE tag (id INTEGER PRIMARY KEY, label TEXT NOT NULL);
                CREATE TABLE book (id INTEGER PRIMARY KEY, title TEXT NOT NULL, authorId INTEGER NOT NULL REFERENCES author);
                CREATE TABLE bookTag (bookId INTEGER NOT NULL REFERENCES book, tagId INTEGER NOT NULL REFERENCES tag);
                """)
            for tag in 0..<GraphShape.tagCount { try db.execute(sql: "INSERT INTO tag VALUES (?, ?)", arguments: [tag, shape.label(ofTag: tag)]) }
            for author in 0..<shape.authors { try db.execute(sql: "INSERT INTO author VALUES (?, ?)", arguments: [author, shape.name(ofAuthor: author)]) }
            for book in 0..<shape.books {
                try db.execute(sql: "INSERT INTO book VALUES (?, ?, ?)", arguments: [book, shape.title(ofBook: book), shape.author(ofBook: book)])
                for tag in shape.tags(ofBook: book) { try db.execute(sql: "INSERT INTO bookTag VALUES (?, ?)", arguments: [book, tag]) }
            }
        }
    }

    func walk(_ walk: GraphWalk) throws -> Int64 {
        let sql = switch walk {
        case .authorsPrefetched, .authorsFaulted: "SELECT length(CAST(title AS BLOB)) + length(CAST(name AS BLOB)) FROM book JOIN author ON author.id = authorId"
        case .tagsPrefetched: "SELECT (SELECT sum(length(CAST(title AS BLOB))) FROM book) + (SELECT count(*) + sum(length(CAST(label AS BLOB))) FROM bookTag JOIN tag ON tag.id = tagId)"
        }
        return try db.read { try Int64.fetchAll($0, sql: sql).reduce(0, &+) }
    }
}
