/// A store that hears, by itself, the transactions other coordinators commit to it: other processes on the same
/// file, or other hosts on the same server. The SQLite store is watched by polling (``StoreOptions/remoteChangePollInterval``);
/// a server store is told.
///
/// ```swift
/// let coordinator = try PersistentStoreCoordinator(model: model, store: postgresStore, watchesRemoteChanges: true)
/// ```
public protocol RemoteChangeSource: PersistentStore {
    /// Starts handing every batch of other coordinators' transactions, in order, to `deliver`, from the last
    /// transaction now on, and a notification with ``RemoteChangeNotification/missedChanges`` when history it had
    /// not read was deleted; the watch ends when ``RemoteChangeWatch/stop()`` is called.
    func watchRemoteChanges(_ deliver: @escaping @Sendable (RemoteChangeNotification) -> Void) throws -> any RemoteChangeWatch
}

/// A running watch of a store for other coordinators' transactions.
public protocol RemoteChangeWatch: Sendable {
    /// Stops delivering transactions.
    func stop()
}
