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
    func run(binding values: [DatabaseValue], in db: Database) throws {
        let raw = sqliteStatement
        sqlite3_reset(raw)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
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
            guard code == SQLITE_OK else { throw Self.error(db, sql: sql) }
        }
        let code = sqlite3_step(raw)
        sqlite3_reset(raw)
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw Self.error(db, sql: sql) }
    }

    static func error(_ db: Database, sql: String) -> DatabaseError {
        let connection = db.sqliteConnection
        return DatabaseError(
            resultCode: ResultCode(rawValue: sqlite3_extended_errcode(connection)),
            message: connection.map { String(cString: sqlite3_errmsg($0)) }, sql: sql)
    }
}

/// SQLite copies a value bound with this destructor, so the Swift string or data may go away at once.
private let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
