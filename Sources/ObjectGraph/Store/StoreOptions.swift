import Foundation

/// How a store is opened: how long a write waits for a lock, whether it records persistent history, and whether
/// it watches for other processes' changes.
///
/// ```swift
/// var options = StoreOptions()
/// options.recordsHistory = true                   // every save and batch request leaves a transaction
/// options.remoteChangePollInterval = .milliseconds(100)   // hear other processes' saves
/// let coordinator = try PersistentStoreCoordinator(model: model, storeURL: url, options: options)
/// ```
public struct StoreOptions: Sendable, Hashable {
    /// How long a write waits for a lock another connection or process holds (SQLite stores).
    public var busyTimeout: TimeInterval = SQLiteStore.defaultBusyTimeout
    /// Whether every save and batch request records a transaction in the store's persistent history. Once a store
    /// records history it always does, whoever opens it: a process that left it out would make the others miss
    /// its changes.
    public var recordsHistory = false
    /// How often the store looks for transactions other processes committed (SQLite's data version, read between
    /// sleeps); nil to not look. Turning it on turns on ``recordsHistory``: history is how the changes are told.
    public var remoteChangePollInterval: Duration?
    /// Whether the store is opened read-only, as Core Data's `NSReadOnlyPersistentStoreOption` opens one: nothing is
    /// written, not a byte of the file nor of the `-wal` and `-shm` beside it (none is created), so a store on
    /// read-only media, shipped with an app or shared with another program opens, and a live store can be inspected
    /// without risk to it. A save, a batch request or a history deletion throws
    /// ``ObjectGraphError/storeWriteFailed(path:reason:)``; a store that needs a migration or an upgrade is refused.
    ///
    /// ```swift
    /// let reference = try PersistentStoreCoordinator(model: model, storeURL: bundledURL, options: StoreOptions(isReadOnly: true))
    /// ```
    ///
    /// A file no connection uses when the store opens (no `-wal` or `-shm` beside it) is read as SQLite's immutable
    /// file: without locks, as it was when opened. Such a store is for files nothing writes while it is open; open it
    /// again to read what another process wrote since. A file in use (by this process or another) is read as any
    /// SQLite reader reads it, seeing each commit.
    public var isReadOnly = false

    /// Options with the defaults: a 10-second busy timeout, no history, no watching, writable.
    public init(
        busyTimeout: TimeInterval = SQLiteStore.defaultBusyTimeout, recordsHistory: Bool = false, remoteChangePollInterval: Duration? = nil,
        isReadOnly: Bool = false
    ) {
        self.busyTimeout = busyTimeout
        self.recordsHistory = recordsHistory || remoteChangePollInterval != nil
        self.remoteChangePollInterval = remoteChangePollInterval
        self.isReadOnly = isReadOnly
    }

    /// Whether history is kept, by either option.
    var keepsHistory: Bool { recordsHistory || remoteChangePollInterval != nil }
}
