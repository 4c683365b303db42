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

    /// Options with the defaults: a 10-second busy timeout, no history, no watching.
    public init(busyTimeout: TimeInterval = SQLiteStore.defaultBusyTimeout, recordsHistory: Bool = false, remoteChangePollInterval: Duration? = nil) {
        self.busyTimeout = busyTimeout
        self.recordsHistory = recordsHistory || remoteChangePollInterval != nil
        self.remoteChangePollInterval = remoteChangePollInterval
    }

    /// Whether history is kept, by either option.
    var keepsHistory: Bool { recordsHistory || remoteChangePollInterval != nil }
}
