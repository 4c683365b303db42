import Foundation
import GRDBSQLite

/// A connection that cannot change a file or create one beside it: SQLite's C API opened read-only, and when no
/// `-wal` file is there, as an immutable file (no locks, no `-shm`), so checking a file leaves its folder as it was.
///
/// A file with a `-wal` beside it is opened as SQLite opens any WAL database, since its latest state may be in the
/// WAL; a `-shm` may then appear, as it does for every reader of that file.
final class ReadOnlyConnection {
    struct Failure: Error {
        let message: String
    }

    private var handle: OpaquePointer?

    init(path: String) throws {
        var components = URLComponents()
        components.scheme = "file"
        components.path = path
        let hasWAL = ((try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? nil).map { $0 > 0 } ?? false
        components.queryItems = [URLQueryItem(name: "mode", value: "ro")] + (hasWAL ? [] : [URLQueryItem(name: "immutable", value: "1")])
        let uri = components.string ?? path
        let code = sqlite3_open_v2(uri, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nil)
        guard code == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "error \(code)"
            sqlite3_close(handle)
            throw ObjectGraphError.storeUnavailable(path: path, reason: "SQLite cannot open it read-only (\(message)); it was left as it was")
        }
    }

    deinit { sqlite3_close(handle) }

    /// Every row of `sql`, each column as text (nil for NULL).
    func rows(_ sql: String) throws -> [[String?]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else { throw failure() }
        defer { sqlite3_finalize(statement) }
        var result: [[String?]] = []
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { return result }
            guard code == SQLITE_ROW else { throw failure() }
            result.append((0..<sqlite3_column_count(statement)).map { column in
                sqlite3_column_text(statement, column).map { String(cString: $0) }
            })
        }
    }

    private func failure() -> Failure { Failure(message: String(cString: sqlite3_errmsg(handle))) }
}
