import Foundation
import GRDBSQLite
import Testing
@testable import ObjectGraphBenchmarks

/// The object baseline's read-ahead hands over every row, once, in the statement's order, however the rows fall
/// between the caller's first ones and the reading thread's batches.
@Suite struct RowsReadAheadTests {
    @Test(arguments: [
        (rows: 10_000, readingAhead: true, threshold: 100),
        (rows: 10_000, readingAhead: true, threshold: 0),
        (rows: 2_048 * 5, readingAhead: true, threshold: 0),
        (rows: 50, readingAhead: true, threshold: 100),
        (rows: 0, readingAhead: true, threshold: 0),
        (rows: 10_000, readingAhead: false, threshold: 100),
    ])
    func everyRowArrivesOnceInOrder(rows: Int, readingAhead: Bool, threshold: Int) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("read-ahead-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let raw = try RawSQLite(path: path, fair: true)
        defer { raw.close() }
        try raw.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, label TEXT)")
        try raw.execute("BEGIN")
        for key in stride(from: 1, through: rows, by: 1) { try raw.execute("INSERT INTO t VALUES (\(key), 'row \(key)')") }
        try raw.execute("COMMIT")

        var seen: [Int64] = []
        try raw.rows("SELECT id, label FROM t ORDER BY id", readingAhead: readingAhead, threshold: threshold, decode: { row in
            (sqlite3_column_int64(row, 0), String(cString: sqlite3_column_text(row, 1)))
        }) { key, label in
            #expect(label == "row \(key)")
            seen.append(key)
        }
        #expect(seen == (0..<Int64(rows)).map { $0 + 1 })
    }
}
