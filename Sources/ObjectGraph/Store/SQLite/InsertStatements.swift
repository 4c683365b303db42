import Foundation
import GRDB
import GRDBSQLite
import PredicateFormat

/// The prepared INSERTs of one entity for a save: one that writes a row, and one that writes ``chunkRows`` rows
/// (`VALUES (…), (…), …`) for runs of new rows of the entity.
///
/// SQLite runs a statement's program once per step: a row per step paid that start, the step and the reset for
/// every row, and a 64-row statement wrote 50,000 rows of ten integers in 45% less time (a C program over our
/// table; 16 rows gained 40%, 256 no more than 64). Each row's entity and version are literals of the SQL,
/// so a row binds its key, its attributes and its to-one keys only.
struct InsertStatements {
    /// The entity whose rows these statements write.
    let entityName: String
    /// The attributes a row binds, by position, when some are transient (not stored); nil when all are bound.
    let storedAttributes: [Int]?
    /// Writes one row.
    let single: Statement
    /// Writes ``chunkRows`` rows; nil when SQLite's limit on parameters leaves room for fewer than two rows.
    let chunk: Statement?
    /// How many rows ``chunk`` writes.
    let chunkRows: Int

    /// The most rows one statement writes (see the type's comment for why 64).
    static let maximumChunkRows = 64

    /// Calls `body` with the statement for each stretch of `rows`: ``chunk`` for each whole chunk, then ``single`` for
    /// each row left.
    func forEachStatement(over rows: Range<Int>, _ body: (Statement, Range<Int>) throws -> Void) rethrows {
        var position = rows.lowerBound
        if let chunk {
            while rows.upperBound - position >= chunkRows {
                try body(chunk, position..<position + chunkRows)
                position += chunkRows
            }
        }
        while position < rows.upperBound {
            try body(single, position..<position + 1)
            position += 1
        }
    }

    /// Prepares both statements for `entityName`'s rows in `table`, whose writable columns are `columns`.
    /// `suffix` follows the rows (an upsert's `ON CONFLICT` clause, a `RETURNING` list).
    init(entityName: String, table: String, columns: [String], storedAttributes: [Int]?, suffix: String = "", in db: Database) throws {
        self.entityName = entityName
        self.storedAttributes = storedAttributes
        let names = ([RowColumn.id, RowColumn.entity, RowColumn.version] + columns.map(sqlQuoted)).joined(separator: ",")
        let row = "(?," + sqlStringLiteral(entityName) + ",1" + String(repeating: ",?", count: columns.count) + ")"
        let head = "INSERT INTO \(sqlQuoted(table)) (\(names)) VALUES "
        single = try db.cachedStatement(sql: head + row + suffix)
        // A row's parameters: its key, then its columns.
        let limit = Int(sqlite3_limit(db.sqliteConnection, SQLITE_LIMIT_VARIABLE_NUMBER, -1))
        let rows = min(Self.maximumChunkRows, limit / (1 + columns.count))
        chunkRows = rows
        chunk = rows < 2 ? nil : try db.cachedStatement(sql: head + Array(repeating: row, count: rows).joined(separator: ",") + suffix)
    }
}

/// An SQL string literal in single quotes, inner quotes doubled.
func sqlStringLiteral(_ text: String) -> String {
    guard text.utf8.contains(UInt8(ascii: "'")) else { return "'" + text + "'" }
    return "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
}
