import Foundation
import Synchronization

/// Connects contexts to a store: one model, one store (or one per configuration), and the memory of which temporary IDs became which
/// permanent ones.
///
/// ```swift
/// let coordinator = try PersistentStoreCoordinator(model: model, storeURL: URL(filePath: "books.sqlite"))
/// let context = ObjectContext(coordinator: coordinator)
/// ```
public final class PersistentStoreCoordinator: Sendable {
    /// The model every context on this coordinator uses.
    public let model: Model
    /// The store rows are read from and written to.
    public let store: any PersistentStore
    private let forwarding = IDForwarding()
    private let saves = Atomic<Int>(0)
    /// Did-save notifications of every root context on this coordinator.
    let hub = NotificationHub()

    /// Other processes' transactions, for whoever listens (see ``addRemoteChangeObserver(_:)``).
    let remoteChanges = CallbackList<RemoteChangeNotification>()
    let monitor: (any RemoteChangeWatch)?

    /// Uses an existing store.
    public init(model: Model, store: any PersistentStore) {
        self.model = model
        self.store = store
        monitor = nil
    }

    /// Joins one store per configuration of `model` (Xcode's configurations): each entity's rows live in the store
    /// of the configuration that includes it, and contexts see one graph, as with Core Data's coordinator holding
    /// several stores. Open each store with its configuration's part of the model, ``Model/model(forConfiguration:)``.
    ///
    /// ```swift
    /// let coordinator = try PersistentStoreCoordinator(model: model, stores: [
    ///     "Reference": try SQLiteStore(url: shipped, versions: SchemaVersions([model.model(forConfiguration: "Reference")]),
    ///                                  options: StoreOptions(isReadOnly: true)),
    ///     "User": try SQLiteStore(url: documents, versions: SchemaVersions([model.model(forConfiguration: "User")]),
    ///                             options: StoreOptions()),
    /// ])
    /// ```
    ///
    /// Relationships stay within a store; a save writing to several stores commits all of them or none, except for
    /// a commit failing after another store's (``ObjectGraphError/partialSave(committed:notCommitted:reason:)``).
    /// Persistent history is read through the coordinator when one store records it, else from each store.
    ///
    /// - Throws: ``ObjectGraphError/invalidModel(entity:property:reason:)`` for an unknown configuration, one that
    ///   splits an inheritance tree or a relationship, or an entity that two of the configurations include.
    public convenience init(model: Model, stores: [String: any PersistentStore]) throws {
        self.init(model: model, store: try ConfiguredStores(model: model, stores: stores))
    }

    /// Opens (or creates) one SQLite store file per configuration of `model`, each keeping the entities of its
    /// configuration (see ``init(model:stores:)``), all with `options`.
    ///
    /// ```swift
    /// let coordinator = try PersistentStoreCoordinator(
    ///     model: model, storeURLs: ["Reference": referenceURL, "User": userURL], options: StoreOptions())
    /// ```
    public convenience init(model: Model, storeURLs: [String: URL], options: StoreOptions) throws {
        var stores: [String: any PersistentStore] = [:]
        for (configuration, url) in storeURLs {
            let part = try model.model(forConfiguration: configuration)
            stores[configuration] = try SQLiteStore(url: url, versions: SchemaVersions([part]), options: options)
        }
        try self.init(model: model, stores: stores)
    }

    /// The store keeping the entities of `configuration`, on a coordinator joining one store per configuration;
    /// nil for another configuration. A coordinator of one store answers its store for any name.
    public func persistentStore(forConfiguration configuration: String) -> (any PersistentStore)? {
        guard let stores = store as? ConfiguredStores else { return store }
        return stores.members.first { $0.configuration == configuration }?.store
    }

    /// The store that keeps `entityName`'s rows (Core Data's `persistentStore(for:)` by entity), or nil when none does.
    public func persistentStore(forEntity entityName: String) -> (any PersistentStore)? {
        guard let stores = store as? ConfiguredStores else { return model.entityIfPresent(entityName) == nil ? nil : store }
        return stores.member(for: entityName)?.store
    }

    /// Uses an existing SQLite store, watching it every `remoteChangePollInterval` for other processes' transactions
    /// (the store must record history).
    ///
    /// - Throws: ``ObjectGraphError/historyNotRecorded(path:)`` when the store does not record history.
    public init(model: Model, store: SQLiteStore, remoteChangePollInterval: Duration?) throws {
        self.model = model
        self.store = store
        let hub = remoteChanges
        monitor = try remoteChangePollInterval.map { interval in
            try RemoteChangeMonitor(store: store, interval: interval) { hub.post($0) }
        }
    }

    /// Uses a store that hears other coordinators' transactions by itself (the PostgreSQL store's LISTEN), handing
    /// them to auto-merging contexts and to ``remoteChangeNotifications()`` when `watchesRemoteChanges` is set.
    public init(model: Model, store: any RemoteChangeSource, watchesRemoteChanges: Bool) throws {
        self.model = model
        self.store = store
        let hub = remoteChanges
        monitor = watchesRemoteChanges ? try store.watchRemoteChanges { hub.post($0) } : nil
    }

    deinit { monitor?.stop() }

    /// Opens (or creates) an SQLite store file at `storeURL` with `options`: history, watching other processes,
    /// a busy timeout.
    ///
    /// ```swift
    /// let coordinator = try PersistentStoreCoordinator(
    ///     model: model, storeURL: url, options: StoreOptions(remoteChangePollInterval: .milliseconds(100)))
    /// ```
    public convenience init(model: Model, storeURL: URL, options: StoreOptions) throws {
        try self.init(versions: SchemaVersions([model]), storeURL: storeURL, options: options)
    }

    /// Opens (or creates, or migrates) an SQLite store file at `storeURL` for the current of `versions`, with `options`.
    public convenience init(versions: SchemaVersions, storeURL: URL, options: StoreOptions, progress: MigrationProgressHandler? = nil) throws {
        try self.init(
            model: versions.current, store: try SQLiteStore(url: storeURL, versions: versions, options: options, progress: progress),
            remoteChangePollInterval: options.remoteChangePollInterval)
    }

    /// Opens (or creates) an SQLite store file at `storeURL`.
    ///
    /// - Throws: ``ObjectGraphError/storeUnavailable(path:reason:)`` for a missing folder, a file that is not an
    ///   SQLite database or an unwritable location; ``ObjectGraphError/modelMismatch(path:storeHash:modelHash:)``
    ///   when the file was made with another model.
    public convenience init(model: Model, storeURL: URL) throws {
        self.init(model: model, store: try SQLiteStore(url: storeURL, model: model))
    }

    /// Opens (or creates) an SQLite store file at `storeURL` for the current of `versions`, migrating a store an
    /// earlier version wrote (see ``SQLiteStore/init(url:versions:busyTimeout:)``).
    ///
    /// ```swift
    /// let coordinator = try PersistentStoreCoordinator(versions: SchemaVersions(contentsOf: modelURL), storeURL: storeURL)
    /// ```
    public convenience init(versions: SchemaVersions, storeURL: URL, progress: MigrationProgressHandler? = nil) throws {
        self.init(
            model: versions.current,
            store: try SQLiteStore(url: storeURL, versions: versions, busyTimeout: SQLiteStore.defaultBusyTimeout, progress: progress))
    }

    /// A coordinator on a new, empty in-memory store; with `recordsHistory`, the store keeps persistent history.
    public static func inMemory(model: Model, recordsHistory: Bool = false) -> PersistentStoreCoordinator {
        PersistentStoreCoordinator(model: model, store: InMemoryStore(model: model, recordsHistory: recordsHistory))
    }

    /// The permanent ID a temporary one became, or the ID itself.
    func resolve(_ id: ObjectID) -> ObjectID {
        guard id.isTemporaryID else { return id }
        return forwarding.permanent(for: id) ?? id
    }

    /// The permanent IDs that those of `ids` which were saved became (the rest are absent).
    func permanentIDs(for ids: some Sequence<ObjectID>) -> [ObjectID: ObjectID] {
        forwarding.permanentIDs(for: ids)
    }

    /// The temporary ID a permanent one had, if it was assigned in this process.
    func temporaryID(for id: ObjectID) -> ObjectID? {
        guard !id.isTemporaryID else { return nil }
        return forwarding.temporary(for: id)
    }

    /// How many saves assigned permanent IDs so far: contexts compare it to know when to adopt new ones.
    var saveCount: Int { saves.load(ordering: .acquiring) }

    func save(_ changes: ChangeSet) throws -> SaveResult {
        let result = try store.save(changes)
        if !result.permanentIDs.isEmpty { remember(result.permanentIDs) }
        return result
    }

    private func remember(_ mapping: PermanentIDMap) {
        forwarding.record(mapping)
        saves.add(1, ordering: .releasing)
    }

    /// Root contexts' did-save notifications, as an AsyncSequence.
    public func didSaveNotifications() -> AsyncStream<ContextNotification> { hub.stream(.didSave) }

    /// Calls `callback` after each root context's save, on that context's queue.
    public func addDidSaveObserver(_ callback: @escaping @Sendable (ContextNotification) -> Void) -> NotificationToken {
        NotificationToken(hub: hub, token: hub.add(.didSave, callback))
    }

    func obtainPermanentIDs(for ids: [ObjectID]) throws -> [ObjectID: ObjectID] {
        let mapping = try permanentIDs(for: ids, writing: true)
        remember(PermanentIDMap(mapping))
        return mapping
    }

    /// New primary keys for `ids`, reserved in memory and not recorded: the save that writes them records them, and
    /// a failed one leaves the store untouched.
    func reservePermanentIDs(for ids: [ObjectID]) throws -> [ObjectID: ObjectID] {
        try permanentIDs(for: ids, writing: false)
    }

    private func permanentIDs(for ids: [ObjectID], writing: Bool) throws -> [ObjectID: ObjectID] {
        var mapping: [ObjectID: ObjectID] = [:]
        for (root, group) in Dictionary(grouping: ids, by: { model.entityIfPresent($0.entityName)?.rootName ?? $0.entityName }) {
            let keys = writing
                ? try store.allocatePrimaryKeys(rootEntity: root, count: group.count)
                : try store.reservePrimaryKeys(rootEntity: root, count: group.count)
            for (id, key) in zip(group, keys) { mapping[id] = ObjectID(entityName: id.entityName, rawKey: key) }
        }
        return mapping
    }

    /// A URI naming the object in this store: `x-objectgraph://<store identifier>/<Entity>/p<key>`.
    ///
    /// A temporary ID's URI resolves only in this process, and only once its object is saved.
    public func uriRepresentation(for id: ObjectID) -> URL {
        let resolved = resolve(id)
        let key = resolved.isTemporaryID ? "t\(-resolved.rawKey)" : "p\(resolved.rawKey)"
        let entity = resolved.entityName.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? resolved.entityName
        let host = persistentStore(forEntity: resolved.entityName)?.identifier ?? store.identifier
        return URL(string: "x-objectgraph://\(host)/\(entity)/\(key)")!
    }

    /// The object ID a URI from ``uriRepresentation(for:)`` names.
    ///
    /// - Throws: ``ObjectGraphError/invalidURI(_:reason:)`` for another store's URI, an unknown entity, or a
    ///   malformed URI.
    public func managedObjectID(forURIRepresentation uri: URL) throws -> ObjectID {
        let text = uri.absoluteString
        guard uri.scheme == "x-objectgraph" else { throw ObjectGraphError.invalidURI(text, reason: "the scheme is not x-objectgraph") }
        let parts = uri.path.split(separator: "/").map(String.init)
        guard parts.count == 2, let entity = parts[0].removingPercentEncoding,
              let kind = parts[1].first, let number = Int64(parts[1].dropFirst()), number > 0 else {
            throw ObjectGraphError.invalidURI(text, reason: "expected /<Entity>/p<key>")
        }
        guard model.entityIfPresent(entity) != nil else {
            throw ObjectGraphError.invalidURI(text, reason: "entity \(entity) is not in the model")
        }
        let keeper = persistentStore(forEntity: entity)?.identifier ?? store.identifier
        guard uri.host == keeper else {
            throw ObjectGraphError.invalidURI(text, reason: "it names store \(uri.host ?? "nil"), and \(entity)'s store is \(keeper)")
        }
        switch kind {
        case "p": return ObjectID(entityName: entity, rawKey: number)
        case "t": return resolve(ObjectID(entityName: entity, rawKey: -number))
        default: throw ObjectGraphError.invalidURI(text, reason: "the key must start with p or t")
        }
    }
}
