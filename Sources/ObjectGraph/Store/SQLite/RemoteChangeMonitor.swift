import Foundation
import GRDBSQLite

/// Watches an SQLite store for transactions other processes (or other coordinators on the same file) commit.
///
/// A thread of its own sleeps for the interval, then reads SQLite's `PRAGMA data_version` on a read-only connection
/// of its own: the number changes when any other connection has committed since the last read, and reading it costs
/// no lock and no file read. Only then is the history read, after the last transaction heard, without the
/// transactions this coordinator wrote (it merged them as it saved them). No busy loop: a store nobody writes costs
/// one pragma per interval.
final class RemoteChangeMonitor: RemoteChangeWatch {
    private let stopped = AtomicFlag(false)

    /// Starts watching `store` from its last transaction now; `deliver` gets each batch of other processes'
    /// transactions, on the monitor's thread, in order.
    init(store: SQLiteStore, interval: Duration, deliver: @escaping @Sendable ([PersistentHistoryTransaction]) -> Void) throws {
        let start = try store.lastHistoryToken()
        let path = store.location
        let stopped = self.stopped
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        weak let weakStore = store
        Thread.detachNewThread {
            var handle: OpaquePointer?
            guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else {
                ObjectGraphLogging.logger.error("cannot watch \(path) for other processes' changes: \(handle.map { String(cString: sqlite3_errmsg($0)) } ?? "open failed")")
                sqlite3_close(handle)
                return
            }
            defer { sqlite3_close(handle) }
            sqlite3_busy_timeout(handle, 1_000)
            var version = Self.dataVersion(handle)
            var token = start
            while !stopped.value {
                Thread.sleep(forTimeInterval: seconds)
                guard !stopped.value, let store = weakStore else { return }
                let current = Self.dataVersion(handle)
                guard current != version else { continue }
                do {
                    let (transactions, last) = try store.history(after: token, excludingOrigin: store.historyOrigin)
                    // Past every transaction of the snapshot read, this coordinator's own included.
                    token = PersistentHistoryToken(storeIdentifier: token.storeIdentifier, transactionNumber: last)
                    version = current
                    if !transactions.isEmpty { deliver(transactions) }
                } catch {
                    ObjectGraphLogging.logger.error("reading other processes' changes to \(path) failed: \(error)")
                }
            }
        }
    }

    /// Stops the thread at its next wake.
    func stop() { stopped.value = true }

    deinit { stop() }

    private static func dataVersion(_ handle: OpaquePointer?) -> Int64 {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, "PRAGMA data_version", -1, &statement, nil) == SQLITE_OK else { return -1 }
        defer { sqlite3_finalize(statement) }
        return sqlite3_step(statement) == SQLITE_ROW ? sqlite3_column_int64(statement, 0) : -1
    }
}
