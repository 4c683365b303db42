import Foundation

/// Other processes' transactions, as a coordinator watching its store hears them.
///
/// When history the watcher had not read yet was deleted (``PersistentStoreCoordinator/deleteHistory(before:)-(PersistentHistoryToken)`` by
/// another process), or the store is an older copy than the one the watcher read, what changed meanwhile cannot be
/// told: the notification says so with ``missedChanges``, and the watch goes on from the store's newest transaction.
/// Core Data's answer is the same: refetch from a fresh token. Auto-merging contexts refresh every object they hold
/// from the store (keeping their unsaved changes); an app refetches what it keeps itself.
///
/// ```swift
/// for await notification in coordinator.remoteChangeNotifications() {
///     if notification.missedChanges { reloadEverything() } else { apply(notification.changes) }
/// }
/// ```
public struct RemoteChangeNotification: Sendable {
    /// The transactions, oldest first.
    public let transactions: [PersistentHistoryTransaction]
    /// Whether changes were missed before ``transactions``: their history was deleted before the watcher read it.
    public let missedChanges: Bool

    /// Transactions heard in order, or (with `missedChanges`) the news that some could not be: what a
    /// ``RemoteChangeSource`` hands to its watch's `deliver`.
    public init(transactions: [PersistentHistoryTransaction], missedChanges: Bool = false) {
        self.transactions = transactions
        self.missedChanges = missedChanges
    }

    /// Whether `error` means the history after a watcher's token is gone: it must start again from the newest
    /// transaction, telling its listeners they missed changes.
    package static func isHistoryGap(_ error: any Error) -> Bool {
        switch error {
        case ObjectGraphError.historyTokenExpired, ObjectGraphError.historyTokenAhead: true
        default: false
        }
    }
    /// Where the coordinator's reading stopped: the newest transaction's token.
    public var token: PersistentHistoryToken? { transactions.last?.token }
    /// What they changed, each object's last change winning.
    public var changes: StoreChanges { StoreChanges(transactions) }
}

/// Persistent history, batch requests and other processes' changes.
extension PersistentStoreCoordinator {
    /// The transactions the store recorded after `token` (all that are kept, for nil), oldest first.
    ///
    /// ```swift
    /// let transactions = try coordinator.history(after: lastToken)
    /// try await context.perform { ctx in try ctx.merge(transactions) }
    /// lastToken = transactions.last?.token ?? lastToken
    /// ```
    ///
    /// - Throws: ``ObjectGraphError/historyNotRecorded(path:)``, or ``ObjectGraphError/historyTokenExpired(path:token:reason:)``
    ///   for a token of another store or one older than the history kept.
    public func history(after token: PersistentHistoryToken?) throws -> [PersistentHistoryTransaction] {
        try store.history(after: token)
    }

    /// The transactions recorded after `date`, oldest first (Core Data's `fetchHistory(after:)` with a date): those
    /// still kept, never an expired-token error.
    ///
    /// ```swift
    /// let lastDay = try coordinator.history(after: Date.now.addingTimeInterval(-86_400))
    /// ```
    public func history(after date: Date) throws -> [PersistentHistoryTransaction] {
        try store.history(HistoryRequest(after: date))
    }

    /// The transactions and changes `request` selects (authors, contexts, entities, kinds of change, changed keys),
    /// oldest first: Core Data's history change request with a fetch request on transactions or changes.
    public func history(_ request: HistoryRequest) throws -> [PersistentHistoryTransaction] { try store.history(request) }

    /// Deletes the transactions recorded before `date` (through the newest one recorded before it); returns how many
    /// went. A reader whose token is older than the last one deleted is told its token expired.
    @discardableResult
    public func deleteHistory(before date: Date) throws -> Int { try store.deleteHistory(before: date) }

    /// The token of the store's newest transaction: a reader starting now starts there.
    public func lastHistoryToken() throws -> PersistentHistoryToken { try store.lastHistoryToken() }

    /// Deletes the transactions recorded before `token`'s (every reader has merged them); returns how many went.
    @discardableResult
    public func deleteHistory(before token: PersistentHistoryToken) throws -> Int { try store.deleteHistory(before: token) }

    /// Inserts rows straight into the store in one transaction (see ``BatchInsertRequest``).
    @discardableResult
    public func execute(_ request: BatchInsertRequest, source: TransactionSource = TransactionSource()) throws -> BatchResult {
        try store.execute(.insert(request), source: source)
    }

    /// Updates rows straight in the store in one transaction (see ``BatchUpdateRequest``).
    @discardableResult
    public func execute(_ request: BatchUpdateRequest, source: TransactionSource = TransactionSource()) throws -> BatchResult {
        try store.execute(.update(request), source: source)
    }

    /// Deletes rows straight from the store in one transaction, with the delete rules (see ``BatchDeleteRequest``).
    @discardableResult
    public func execute(_ request: BatchDeleteRequest, source: TransactionSource = TransactionSource()) throws -> BatchResult {
        try store.execute(.delete(request), source: source)
    }

    /// Brings `contexts` up to date with changes made outside them (a batch request's, another process's), each
    /// on its own queue, as Core Data's `mergeChanges(fromRemoteContextSave:into:)`: updated objects take the stored
    /// values (keeping each context's unsaved changes), deleted ones leave, and results controllers see inserts.
    public func mergeChanges(_ changes: StoreChanges, into contexts: [ObjectContext]) async throws {
        for context in contexts {
            try await context.perform { ctx in try ctx.mergeChanges(changes) }
        }
    }

    /// Calls `callback` with each batch of other processes' transactions, on the coordinator's watching thread. The
    /// coordinator must watch its store (``StoreOptions/remoteChangePollInterval``).
    public func addRemoteChangeObserver(_ callback: @escaping @Sendable (RemoteChangeNotification) -> Void) -> RemoteChangeToken {
        RemoteChangeToken(list: remoteChanges, token: remoteChanges.add(callback))
    }

    /// Other processes' transactions as they are heard, as an AsyncSequence.
    public func remoteChangeNotifications() -> AsyncStream<RemoteChangeNotification> { remoteChanges.stream() }
}

/// A registration for remote change notifications; removing it stops the calls.
public struct RemoteChangeToken: Sendable {
    let list: CallbackList<RemoteChangeNotification>
    let token: Int

    /// Stops the callback.
    public func remove() { list.remove(token) }
}
