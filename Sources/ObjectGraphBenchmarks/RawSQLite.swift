import GRDBSQLite
import Foundation

/// The limit: SQLite's C API with prepared statements, nothing in between.
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

    /// W1: one transaction, one prepared statement.
    func insert(rows: Int, table: String) throws {
        try execute("BEGIN")
        let statement = try prepare("INSERT INTO \(table) (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        for row in 0..<rows {
            for column in 0..<10 { sqlite3_bind_int64(statement, Int32(column + 1), Int64(row * 10 + column)) }
            guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchmarkError("insert failed") }
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
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

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
