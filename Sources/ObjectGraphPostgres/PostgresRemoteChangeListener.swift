import Dispatch
import Foundation
import ObjectGraph
import PostgresNIO
import Synchronization

/// Hears the store's `NOTIFY objectgraph_history` on a connection of its own and hands other coordinators'
/// transactions on, in order.
///
/// A notification only says that something was committed: the listener reads the history after the last
/// transaction it handed on (so a lost or merged notification loses nothing), skipping this coordinator's own
/// (its contexts merged them as they saved). Reads run on a serial queue of the listener's, never on the event loop.
/// A dropped connection is reopened, and the history read again, since notifications may have been missed.
final class PostgresRemoteChangeListener: RemoteChangeWatch {
    private let queue = DispatchQueue(label: "ObjectGraph.PostgresRemoteChangeListener")
    private let state: Mutex<(connection: PostgresConnection?, token: Int64, stopped: Bool)>
    private weak let store: PostgresStore?
    private let deliver: @Sendable (RemoteChangeNotification) -> Void

    init(store: PostgresStore, deliver: @escaping @Sendable (RemoteChangeNotification) -> Void) throws {
        self.store = store
        self.deliver = deliver
        state = Mutex((nil, try store.lastHistoryToken().transactionNumber, false))
        try listen(store)
    }

    private func listen(_ store: PostgresStore) throws {
        let connection = try store.pool.connect()
        connection.addListener(channel: PostgresStore.channel) { [weak self] _, notification in
            guard let self, notification.payload != store.historyOrigin else { return }
            self.queue.async { self.catchUp() }
        }
        do {
            try PostgresSession(connection: connection, pool: store.pool).query("LISTEN \(PostgresStore.channel)")
        } catch let failure as PostgresErrors.Failure {
            connection.closeSoon()
            throw ObjectGraphError.storeUnavailable(path: store.location, reason: failure.reason)
        }
        let stopped = state.withLock { state in
            state.connection = connection
            return state.stopped
        }
        if stopped { connection.closeSoon() }
        connection.closeFuture.whenComplete { [weak self] _ in
            guard let self else { return }
            self.queue.asyncAfter(deadline: .now() + 0.2) { self.reconnect() }
        }
    }

    private func reconnect() {
        guard let store, !state.withLock({ $0.stopped }) else { return }
        do {
            try listen(store)
            catchUp()
        } catch {
            ObjectGraphLogging.logger.error("listening to \(store.location) for other hosts' changes failed, retrying: \(error)")
            queue.asyncAfter(deadline: .now() + 1) { self.reconnect() }
        }
    }

    /// Reads and delivers the transactions after the last one handed on.
    private func catchUp() {
        guard let store else { return }
        let (after, stopped) = state.withLock { ($0.token, $0.stopped) }
        guard !stopped else { return }
        do {
            let (transactions, last) = try store.history(
                after: PersistentHistoryToken(storeIdentifier: store.identifier, transactionNumber: after), excludingOrigin: store.historyOrigin)
            state.withLock { $0.token = max($0.token, last) }
            if !transactions.isEmpty { deliver(RemoteChangeNotification(transactions: transactions)) }
        } catch where RemoteChangeNotification.isHistoryGap(error) {
            // What changed meanwhile cannot be read: start again from the newest transaction, and say so.
            do {
                let newest = try store.lastHistoryToken().transactionNumber
                state.withLock { $0.token = newest }
                ObjectGraphLogging.logger.warning("missed other hosts' changes to \(store.location): \(error); going on from transaction \(newest)")
                deliver(RemoteChangeNotification(transactions: [], missedChanges: true))
            } catch {
                ObjectGraphLogging.logger.error("reading other hosts' changes to \(store.location) failed: \(error)")
            }
        } catch {
            ObjectGraphLogging.logger.error("reading other hosts' changes to \(store.location) failed: \(error)")
        }
    }

    /// Runs `body` while the listener's queue waits: the catch-ups notifications ask for meanwhile run after it.
    /// Tests use it to know what the listener will have missed.
    func holding<T>(_ body: () throws -> T) rethrows -> T {
        let entered = DispatchSemaphore(value: 0)
        let held = DispatchSemaphore(value: 0)
        queue.async {
            entered.signal()
            held.wait()
        }
        entered.wait()
        defer { held.signal() }
        return try body()
    }

    func stop() {
        // Taken, so that `deinit` after an explicit stop does not close it again.
        let connection = state.withLock { state in
            state.stopped = true
            defer { state.connection = nil }
            return state.connection
        }
        connection?.closeSoon()
    }

    deinit { stop() }
}
