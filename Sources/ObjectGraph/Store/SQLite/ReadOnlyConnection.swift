import Foundation
import GRDBSQLite

/// A connection that cannot change a file or create one beside it, for checking and summarizing a store file.
///
/// When neither a `-wal` nor a `-shm` is beside the file and no store of this process holds it, no connection uses it
/// in WAL mode, so it is opened as an immutable file: no locks taken, nothing created beside it, and it works on
/// read-only media. Otherwise it is opened read-only as SQLite opens any reader, taking part in SQLite's locking, so
/// that it never disturbs a writer (a `-shm` may then be updated, as by every reader of that file).
///
/// An immutable connection's descriptor is outside SQLite's shared bookkeeping, and closing it would drop every
/// SQLite lock this process holds on the file: it is closed through ``StoreFileRegistry/close(_:path:)``.
final class ReadOnlyConnection {
    struct Failure: Error {
        let message: String
    }

    /// The SQLite connection, closed when freed: by this connection, or by the registry once no store holds the file.
    private final class Handle: Sendable {
        // An `OpaquePointer` is not Sendable; this one is only closed, once, when the handle is freed, after the
        // connection that used it is gone.
        nonisolated(unsafe) let pointer: OpaquePointer?
        init(_ pointer: OpaquePointer?) { self.pointer = pointer }
        deinit { sqlite3_close(pointer) }
    }

    private let handle: Handle
    private var db: OpaquePointer? { handle.pointer }
    /// The file, its symbolic links resolved.
    let path: String
    /// Whether the file was opened as immutable (see the type's documentation).
    let isImmutable: Bool

    init(path: String) throws {
        let path = StoreFileRegistry.canonicalPath(path)
        self.path = path
        isImmutable = StoreFileRegistry.mayOpenImmutable(path)
        let uri = StoreFileRegistry.readOnlyURI(path, immutable: isImmutable)
        var pointer: OpaquePointer?
        let code = sqlite3_open_v2(uri, &pointer, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nil)
        handle = Handle(pointer)
        guard code == SQLITE_OK else {
            let message = pointer.map { String(cString: sqlite3_errmsg($0)) } ?? "error \(code)"
            throw ObjectGraphError.storeUnavailable(path: path, reason: "SQLite cannot open it read-only (\(message)); it was left as it was")
        }
    }

    deinit {
        if isImmutable { StoreFileRegistry.close(handle, path: path) }
    }

    /// The file's first `count` bytes (fewer when it is shorter) and its size, read through SQLite's own descriptor:
    /// a descriptor of our own would drop this process's locks when closed (see ``StoreFileRegistry``).
    func fileStart(_ count: Int) throws -> (bytes: [UInt8], size: Int64) {
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK,
              let file, let methods = file.pointee.pMethods,
              let read = methods.pointee.xRead, let fileSize = methods.pointee.xFileSize else {
            throw Failure(message: "SQLite did not give its file")
        }
        var size: sqlite3_int64 = 0
        guard fileSize(file, &size) == SQLITE_OK else { throw Failure(message: "the file's size cannot be read") }
        var bytes = [UInt8](repeating: 0, count: count)
        let code = bytes.withUnsafeMutableBytes { read(file, $0.baseAddress, Int32(count), 0) }
        // SQLITE_IOERR_SHORT_READ (not imported into Swift): a file shorter than `count`, the rest read as zeros.
        guard code == SQLITE_OK || code == SQLITE_IOERR | (2 << 8) else { throw Failure(message: "the file cannot be read (error \(code))") }
        return (Array(bytes.prefix(Int(min(Int64(count), size)))), size)
    }

    /// Every row of `sql`, each column as text (nil for NULL).
    func rows(_ sql: String) throws -> [[String?]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { throw failure() }
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

    /// One value as SQLite stored it, whatever the column's declared type.
    enum Cell: Equatable {
        case null
        case integer(Int64)
        case real(Double)
        case text(String)
        case blob(Data)
    }

    /// Hands each row of `sql` to `body`, each column as SQLite stored it: for files of another program's layout,
    /// whose values are decoded by the model rather than by the columns' declared types.
    func cells(_ sql: String, _ body: ([Cell]) throws -> Void) throws {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { throw failure() }
        defer { sqlite3_finalize(statement) }
        let count = sqlite3_column_count(statement)
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw failure() }
            try body((0..<count).map { column in
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: .integer(sqlite3_column_int64(statement, column))
                case SQLITE_FLOAT: .real(sqlite3_column_double(statement, column))
                case SQLITE_TEXT: .text(String(cString: sqlite3_column_text(statement, column)))
                case SQLITE_BLOB:
                    .blob(sqlite3_column_blob(statement, column).map { Data(bytes: $0, count: Int(sqlite3_column_bytes(statement, column))) } ?? Data())
                default: .null
                }
            })
        }
    }

    private func failure() -> Failure { Failure(message: String(cString: sqlite3_errmsg(db))) }
}
