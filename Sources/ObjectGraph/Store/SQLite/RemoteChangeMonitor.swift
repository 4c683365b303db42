import Foundation
import GRDBSQLite
import PredicateFormat

/// Watches an SQLite store for transactions other processes (or other coordinators on the same file) commit.
///
/// A thread of its own sleeps for the interval, then reads SQLite's `PRAGMA data_version` on a read-only connection
/// of its own: the number changes when any other connection has committed since the last read, and reading it costs
/// no lock and no file read. Only then is the history read, after the last transaction heard, without the
/// transactions this coordinator wrote (it merged them as it saved them). No busy loop: a store nobody writes costs
/// one pragma per interval.
///
/// When the history after the last transaction heard is gone (another process deleted it unread, or the file is an
/// older copy), the monitor goes on from the newest transaction and delivers a notification with
/// ``RemoteChangeNotification/missedChanges``: nothing is skipped without a word.
final class RemoteChangeMonitor: RemoteChangeWatch {
    private let stopped = AtomicFlag(false)
    private let poller: Protected<Poller>

    /// What one look at the store needs, and what it leaves for the next: the connection, the last data version
    /// and the last transaction heard.
    private struct Poller {
        weak var store: SQLiteStore?
        let path: String
        let handle: Connection
        var version: Int64
        var token: PersistentHistoryToken
        let deliver: @Sendable (RemoteChangeNotification) -> Void
    }

    /// The monitor's own read-only connection, closed when the last look is done.
    private final class Connection: Sendable {
        // Sendable: the handle is only used under the poller's lock.
        nonisolated(unsafe) let handle: OpaquePointer?
        init(_ handle: OpaquePointer?) { self.handle = handle }
        deinit { sqlite3_close(handle) }
    }

    /// Starts watching `store` from its last transaction now; `deliver` gets each batch of other processes'
    /// transactions, on the monitor's thread, in order, and the news of a gap when history it had not read is gone.
    init(store: SQLiteStore, interval: Duration, deliver: @escaping @Sendable (RemoteChangeNotification) -> Void) throws {
        let start = try store.lastHistoryToken()
        let path = store.location
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else {
            let reason = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "open failed"
            sqlite3_close(handle)
            throw ObjectGraphError.storeUnavailable(path: path, reason: "cannot watch it for other processes' changes: \(reason)")
        }
        sqlite3_busy_timeout(handle, 1_000)
        let connection = Connection(handle)
        poller = Protected(Poller(
            store: store, path: path, handle: connection, version: Self.dataVersion(handle), token: start, deliver: deliver))
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        let stopped = self.stopped
        let poller = self.poller
        Thread.detachNewThread {
            while !stopped.value {
                Thread.sleep(forTimeInterval: seconds)
                guard !stopped.value, Self.look(poller) else { return }
            }
        }
    }

    /// Looks at the store now rather than at the next interval (tests use it to know when a look happened).
    func pollNow() { _ = Self.look(poller) }

    /// One look: when another connection committed since the last, the history after the last transaction heard is
    /// read and delivered. Returns false once the store is gone.
    private static func look(_ poller: Protected<Poller>) -> Bool {
        poller.withLock { poller in
            guard let store = poller.store else { return false }
            let current = dataVersion(poller.handle.handle)
            guard current != poller.version else { return true }
            do {
                let (transactions, last) = try store.history(after: poller.token, excludingOrigin: store.historyOrigin)
                // Past every transaction of the snapshot read, this coordinator's own included.
                poller.token = PersistentHistoryToken(storeIdentifier: poller.token.storeIdentifier, transactionNumber: last)
                poller.version = current
                if !transactions.isEmpty { poller.deliver(RemoteChangeNotification(transactions: transactions)) }
            } catch where RemoteChangeNotification.isHistoryGap(error) {
                // What changed meanwhile cannot be read: start again from the newest transaction, and say so.
                do {
                    poller.token = try store.lastHistoryToken()
                    poller.version = current
                    ObjectGraphLogging.logger.warning("missed other processes' changes to \(poller.path): \(error); going on from \(poller.token)")
                    poller.deliver(RemoteChangeNotification(transactions: [], missedChanges: true))
                } catch {
                    ObjectGraphLogging.logger.error("reading other processes' changes to \(poller.path) failed: \(error)")
                }
            } catch {
                ObjectGraphLogging.logger.error("reading other processes' changes to \(poller.path) failed: \(error)")
            }
            return true
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
