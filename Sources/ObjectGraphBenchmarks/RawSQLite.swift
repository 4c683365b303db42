import GRDBSQLite
import Foundation

/// The limit: SQLite's C API with prepared statements, nothing in between, opened as the store's own connections
/// are (`fair`) wherever it is measured.
struct RawSQLite {
    let handle: OpaquePointer

    /// Opens `path` in WAL mode; `fair` opens it as the store's own connections are opened (no mutex,
    /// `synchronous=NORMAL`), for the workloads that measure against that limit.
    init(path: String, fair: Bool = false) throws {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | (fair ? SQLITE_OPEN_NOMUTEX : SQLITE_OPEN_FULLMUTEX)
        guard sqlite3_open_v2(path, &db, flags, nil) == SQLITE_OK, let db else { throw BenchmarkError("sqlite3_open \(path) failed") }
        handle = db
        try execute("PRAGMA journal_mode=WAL")
        if fair { try execute("PRAGMA synchronous=NORMAL") }
    }

    func close() { sqlite3_close(handle) }

    func execute(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
            throw BenchmarkError("\(sql): \(String(cString: sqlite3_errmsg(handle)))")
        }
    }

    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw BenchmarkError("\(sql): \(String(cString: sqlite3_errmsg(handle)))")
        }
        return statement
    }

    /// W1's rows (`row * 10 + column` in column `column`) in one transaction, 64 rows per prepared INSERT as the store
    /// writes them. Into a store's own table (`storeTable`), each row also gets its key, entity and version as the
    /// store writes them, and the store's key sequence moves past them.
    func insertRows(_ rows: Int, table: String, storeTable: Bool = false) throws {
        let chunk = 64
        let row = storeTable ? "(?, 'Item', 1" + String(repeating: ", ?", count: 10) + ")" : "(?" + String(repeating: ", ?", count: 9) + ")"
        let columns = (storeTable ? "\"row.id\", \"row.entity\", \"row.version\", " : "") + "a0, a1, a2, a3, a4, a5, a6, a7, a8, a9"
        let head = "INSERT INTO \"\(table)\" (\(columns)) VALUES "
        let many = try prepare(head + Array(repeating: row, count: chunk).joined(separator: ","))
        let one = try prepare(head + row)
        defer {
            sqlite3_finalize(many)
            sqlite3_finalize(one)
        }
        try execute("BEGIN")
        var next = 0
        while next < rows {
            let statement = rows - next >= chunk ? many : one
            let take = statement == many ? chunk : 1
            var index: Int32 = 1
            for offset in 0..<take {
                let key = next + offset
                if storeTable {
                    sqlite3_bind_int64(statement, index, Int64(key + 1))
                    index += 1
                }
                for column in 0..<10 {
                    sqlite3_bind_int64(statement, index, Int64(key * 10 + column))
                    index += 1
                }
            }
            guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchmarkError("insert failed: \(String(cString: sqlite3_errmsg(handle)))") }
            sqlite3_reset(statement)
            next += take
        }
        if storeTable { try execute("UPDATE \"objectgraph.sequence\" SET max_key = \(rows) WHERE entity = '\(table)'") }
        try execute("COMMIT")
    }

    /// W2: every row, every column read.
    func readAll(table: String) throws -> Int64 {
        let statement = try prepare("SELECT a0, a1, a2, a3, a4, a5, a6, a7, a8, a9 FROM \(table)")
        var sum: Int64 = 0
        while sqlite3_step(statement) == SQLITE_ROW {
            for column in 0..<10 { sum &+= sqlite3_column_int64(statement, Int32(column)) }
        }
        sqlite3_finalize(statement)
        return sum
    }

    /// W3: one row by an indexed value.
    func lookup(_ value: Int64, statement: OpaquePointer) -> Int64 {
        sqlite3_bind_int64(statement, 1, value)
        var found: Int64 = -1
        if sqlite3_step(statement) == SQLITE_ROW { found = sqlite3_column_int64(statement, 1) }
        sqlite3_reset(statement)
        return found
    }
}

package struct BenchmarkError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
