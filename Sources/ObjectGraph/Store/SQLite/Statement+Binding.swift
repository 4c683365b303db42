import Foundation
import GRDB
import GRDBSQLite

/// The save path's inner loop: binding values to GRDB's prepared statements and running them through SQLite's C
/// API. GRDB's `StatementArguments` converts every value through generic code and key paths, which cost more than
/// the insert itself; here each value is bound by its storage class.
extension Statement {
    /// Binds `values` to the parameters `1…values.count` and runs the statement to completion.
    ///
    /// - Throws: `DatabaseError` with SQLite's extended result code (so a uniqueness violation is recognizable)
    ///   and message.
    func run(binding values: [DatabaseValue]) throws {
        try bind(values)
        try step()
    }

    /// Binds `values` to the statement's parameters, which must be as many (a statement keeps bindings from its last
    /// use, so a missing value would silently reuse an old one); a statement still running is reset first.
    ///
    /// A fetch's slice (`LIMIT ? OFFSET ?`, the last two parameters) comes as `slice`, so that a sliced fetch need
    /// not copy its cached arguments into a new array to append two integers.
    ///
    /// - Throws: `DatabaseError` (`SQLITE_MISUSE`) naming both counts when they differ.
    func bind(_ values: [DatabaseValue], slice: FetchSlice? = nil) throws {
        let raw = sqliteStatement
        // Every path that steps a statement resets it when done (also when it throws), so a statement normally
        // arrives reset; resetting it again cost a fortieth of a small query. One still running is reset here, and
        // one halted without a reset would make SQLite refuse the binding (SQLITE_MISUSE), not bind silently wrong.
        if sqlite3_stmt_busy(raw) != 0 { sqlite3_reset(raw) }
        let expected = Int(sqlite3_bind_parameter_count(raw))
        let count = values.count + (slice == nil ? 0 : 2)
        guard count == expected else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "\(count) values for \(expected) parameters", sql: Self.sql(of: raw))
        }
        for (offset, value) in values.enumerated() { try bind(value, at: Int32(offset + 1)) }
        if let slice {
            try bind(slice.limit, at: Int32(values.count + 1))
            try bind(slice.offset, at: Int32(values.count + 2))
        }
    }

    /// Binds one value to parameter `index` (1-based).
    func bind(_ value: DatabaseValue, at index: Int32) throws {
        let raw = sqliteStatement
        let code: Int32
        switch value.storage {
        case .null: code = sqlite3_bind_null(raw, index)
        case .int64(let int): code = sqlite3_bind_int64(raw, index, int)
        case .double(let double): code = sqlite3_bind_double(raw, index, double)
        case .string(let string): code = sqlite3_bind_text(raw, index, string, -1, SQLITE_TRANSIENT)
        case .blob(let data):
            code = data.withUnsafeBytes { bytes in
                sqlite3_bind_blob(raw, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), SQLITE_TRANSIENT)
            }
        }
        guard code == SQLITE_OK else { throw Self.lastError(of: raw) }
    }

    /// Binds an attribute value to parameter `index`: the kinds a row is mostly made of directly, the others in
    /// their stored form (``SQLiteValueCoding/encode(_:)``), so an insert builds no array of database values.
    func bind(_ value: AttributeValue, at index: Int32) throws {
        let raw = sqliteStatement
        let code: Int32
        switch value {
        case .null: code = sqlite3_bind_null(raw, index)
        case .int(let int): code = sqlite3_bind_int64(raw, index, int)
        case .double(let double): code = sqlite3_bind_double(raw, index, double)
        default: return try bind(SQLiteValueCoding.encode(value), at: index)
        }
        guard code == SQLITE_OK else { throw Self.lastError(of: raw) }
    }

    /// Binds an integer to parameter `index`.
    func bind(_ value: Int64, at index: Int32) throws {
        guard sqlite3_bind_int64(sqliteStatement, index, value) == SQLITE_OK else { throw Self.lastError(of: sqliteStatement) }
    }

    /// Runs the bound statement to completion and resets it.
    func step() throws {
        let raw = sqliteStatement
        let code = sqlite3_step(raw)
        sqlite3_reset(raw)
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw Self.lastError(of: raw) }
    }

    /// The last error of the connection `statement` belongs to (SQLite's extended code and message), as GRDB's error
    /// for the statement's SQL: what a failed bind or step reports.
    ///
    /// It reads only SQLite's own state, so it also serves where a statement runs outside GRDB's queue
    /// (``StatementReaders``, ``RowPipeline``), where GRDB's `sql` property would stop the process.
    static func lastError(of statement: OpaquePointer) -> DatabaseError {
        let connection = sqlite3_db_handle(statement)
        return DatabaseError(
            resultCode: ResultCode(rawValue: sqlite3_extended_errcode(connection)),
            message: connection.map { String(cString: sqlite3_errmsg($0)) }, sql: sql(of: statement))
    }

    /// The SQL `statement` was prepared from, read from SQLite (see ``lastError(of:)``).
    static func sql(of statement: OpaquePointer) -> String? {
        sqlite3_sql(statement).map { String(cString: $0) }
    }
}

/// SQLite copies a value bound with this destructor, so the Swift string or data may go away at once.
private let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
