import Foundation
import GRDB
import GRDBSQLite

/// The write-ahead log: how large it is, and copying it into the store file.
///
/// Every save appends to the `-wal` beside the store, and SQLite copies the log into the file (a checkpoint) after
/// each commit that leaves it over a thousand pages, as far as no reader still needs the older pages. A reader that
/// keeps one snapshot for minutes (a long read transaction, in any process) holds every later save in the log, which
/// grows meanwhile; once it is gone, the next checkpoint copies everything, and the log is cut back to
/// ``SQLiteStore/logSizeLimit`` bytes.
extension SQLiteStore {
    /// The size the `-wal` is cut back to after a checkpoint has copied all of it: large enough that ordinary saves
    /// reuse the file, small enough that one long reader's backlog does not stay on disk.
    public static let logSizeLimit = 64 * 1024 * 1024

    /// The size of the store's write-ahead log (`-wal`) in bytes now: what a store keeps beside its file until a
    /// checkpoint copies it in. An app can watch it to find a reader that keeps checkpoints from completing.
    ///
    /// ```swift
    /// if let store = coordinator.store as? SQLiteStore, store.writeAheadLogSize > 256 << 20 { logger.warning("…") }
    /// ```
    public var writeAheadLogSize: Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: files.path + "-wal"))?[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// Copies the whole log into the store file and empties it (SQLite's TRUNCATE checkpoint), without waiting:
    /// returns false, having copied what it could, when a reader (of this process or another) still needs part of
    /// the log, or another connection is writing.
    ///
    /// - Throws: ``ObjectGraphError/storeWriteFailed(path:reason:)`` for a read-only store, or when SQLite fails.
    @discardableResult
    public func checkpoint() throws -> Bool {
        guard !isReadOnly else { throw Self.readOnlyRefusal(location) }
        do {
            return try writer.writeWithoutTransaction { db in
                sqlite3_busy_timeout(db.sqliteConnection, 0)
                defer { sqlite3_busy_timeout(db.sqliteConnection, Int32(busyTimeout * 1000)) }
                do {
                    let (logFrames, copiedFrames) = try db.checkpoint(.truncate)
                    return logFrames == copiedFrames
                } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
                    return false
                }
            }
        } catch let error as DatabaseError {
            throw ObjectGraphError.storeWriteFailed(path: location, reason: "the checkpoint failed: \(error.message ?? "\(error)")")
        }
    }
}
