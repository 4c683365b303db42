/// The kinds of context notifications, as Core Data's.
public enum ContextNotificationKind: Sendable, Hashable {
    /// Objects changed in the context: its own edits, once processed (at the end of the work that made them, or at
    /// ``ObjectContext/processPendingChanges()``), a refresh, a rollback, a reset, a child's save arriving, a merge.
    case objectsDidChange
    /// The context is about to save.
    case willSave
    /// The context saved (into its parent, or to the store for a root context).
    case didSave
}

/// What changed, as object IDs: Sendable, so it crosses queues. Built lazily from the saved change sets, so that
/// posting costs the poster nothing in proportion to the size of the save (decision 4).
public struct ContextChanges: Sendable {
    let layers: [ChangeSet]
    /// The permanent IDs the save produced (root saves).
    public let permanentIDs: PermanentIDMap
    /// The objects of a context's own edits, listed (its objects-did-change): inserted, updated, deleted.
    let edits: (inserted: [ObjectID], updated: [ObjectID], deleted: [ObjectID])
    /// Objects refreshed (``ObjectContext/refresh(_:mergeChanges:)``, a rollback's updated and deleted objects): they
    /// read their values again. Core Data's `NSRefreshedObjectsKey`.
    public let refreshedObjectIDs: [ObjectID]
    /// Objects that left the context (a rollback's inserts, everything at a reset). Core Data's
    /// `NSInvalidatedObjectsKey`.
    public let invalidatedObjectIDs: [ObjectID]
    /// Whether the context let go of every object (a reset): Core Data's `NSInvalidatedAllObjectsKey`.
    public let invalidatesAllObjects: Bool

    init(
        layers: [ChangeSet] = [], permanentIDs: PermanentIDMap = [:],
        edits: (inserted: [ObjectID], updated: [ObjectID], deleted: [ObjectID]) = ([], [], []),
        refreshed: [ObjectID] = [], invalidated: [ObjectID] = [], invalidatesAll: Bool = false
    ) {
        self.layers = layers
        self.permanentIDs = permanentIDs
        self.edits = edits
        self.refreshedObjectIDs = refreshed
        self.invalidatedObjectIDs = invalidated
        self.invalidatesAllObjects = invalidatesAll
    }

    private func resolve(_ id: ObjectID) -> ObjectID { permanentIDs[id] ?? id }

    /// Objects inserted (permanent IDs once a root save assigned them).
    public var insertedObjectIDs: [ObjectID] { layers.flatMap(\.insertedIDs).map(resolve) + edits.inserted }
    /// Objects whose values changed.
    public var updatedObjectIDs: [ObjectID] { layers.flatMap(\.updatedIDs).map(resolve) + edits.updated }
    /// Objects deleted.
    public var deletedObjectIDs: [ObjectID] { layers.flatMap(\.deletedIDs) + edits.deleted }

    /// Whether anything was inserted (without listing the IDs, which for a large import costs milliseconds).
    var hasInsertions: Bool { layers.contains { !$0.inserted.isEmpty } }

    /// Whether a relationship changed: a to-many's contents or order, or a to-one, whose object then left its old
    /// destination's inverse list and joined its new one's (which neither destination's row says).
    var changesRelationships: Bool {
        layers.contains { layer in !layer.toMany.isEmpty || layer.updated.contains { !$0.changedToOne.isEmpty } }
    }

    /// Whether `id` is inserted, updated or deleted here: constant time per layer, nothing flattened. The layers may
    /// name an inserted object by its temporary ID: `temporaryID` gives it (the coordinator's memory, which the saving
    /// thread recorded, so a merge on the main thread never reverses a large import's IDs itself); the save's own map
    /// gives it to a context on another coordinator of the store, whose coordinator never knew it.
    func change(for id: ObjectID, temporaryID: (ObjectID) -> ObjectID?) -> (updated: Snapshot?, deleted: Bool, inserted: Bool) {
        let ids = [id] + (permanentIDs.isEmpty ? [] : (temporaryID(id) ?? permanentIDs.temporaryID(for: id)).map { [$0] } ?? [])
        // A deletion in any layer wins over rows in later ones, as when the layers were saved (see `flatten`): a
        // child's change that reached its parent after the parent's deletion of the object was not saved.
        if layers.contains(where: { layer in ids.contains { layer.deletes($0) } }) { return (nil, true, false) }
        for layer in layers.reversed() {
            for candidate in ids {
                if let place = layer.place(of: candidate) { return (layer.snapshot(for: candidate), false, place.inserted) }
            }
        }
        return (nil, false, false)
    }

    /// The number of objects the notification covers.
    public var count: Int {
        layers.reduce(0) { $0 + $1.inserted.count + $1.updated.count + $1.deleted.count }
            + edits.inserted.count + edits.updated.count + edits.deleted.count + refreshedObjectIDs.count + invalidatedObjectIDs.count
    }
}

/// A notification from a context: its kind, the context's name, and the changes.
public struct ContextNotification: Sendable {
    /// What happened.
    public let kind: ContextNotificationKind
    /// The posting context's name.
    public let contextName: String
    /// Whether the posting context is a root (its did-save reached the store).
    public let isRootSave: Bool
    /// What changed.
    public let changes: ContextChanges
    let sender: ObjectIdentifier
    /// Set on a parent's objects-did-change when a child's save arrived (what children merge automatically).
    let isChildSaveArrival: Bool
    /// Set on a context's objects-did-change when it merged changes made outside the object graph (a batch request,
    /// another process): its children merging automatically take them too.
    var isStoreChange = false
}

/// Delivers notifications to callbacks (called on the posting context's queue, in order) and to AsyncSequences.
final class NotificationHub: Sendable {
    typealias Callback = @Sendable (ContextNotification) -> Void

    private struct Subscribers {
        var callbacks: [Int: (ContextNotificationKind?, Callback)] = [:]
        var next = 0
    }

    private let subscribers = Protected(Subscribers())
    /// Where this hub's notifications also go (the coordinator's hub, for root contexts).
    let forward: NotificationHub?

    init(forward: NotificationHub? = nil) { self.forward = forward }

    func add(_ kind: ContextNotificationKind?, _ callback: @escaping Callback) -> Int {
        subscribers.withLock { state in
            let token = state.next
            state.next += 1
            state.callbacks[token] = (kind, callback)
            return token
        }
    }

    /// Whether anyone hears notifications of `kind` from this hub (did-saves also through the hub it forwards to).
    func hasSubscribers(for kind: ContextNotificationKind) -> Bool {
        if subscribers.withLock({ $0.callbacks.values.contains { $0.0 == nil || $0.0 == kind } }) { return true }
        return kind == .didSave && forward?.hasSubscribers(for: kind) == true
    }

    /// How many callbacks are registered here.
    var subscriberCount: Int { subscribers.withLock { $0.callbacks.count } }

    func remove(_ token: Int) {
        _ = subscribers.withLock { $0.callbacks.removeValue(forKey: token) }
    }

    func post(_ notification: ContextNotification) {
        let targets = subscribers.withLock { state in
            state.callbacks.sorted { $0.key < $1.key }.map(\.value).filter { $0.0 == nil || $0.0 == notification.kind }.map(\.1)
        }
        for callback in targets { callback(notification) }
        // The coordinator hears root saves only.
        if notification.kind == .didSave { forward?.post(notification) }
    }

    func stream(_ kind: ContextNotificationKind?) -> AsyncStream<ContextNotification> {
        let (stream, continuation) = AsyncStream.makeStream(of: ContextNotification.self, bufferingPolicy: .unbounded)
        let token = add(kind) { continuation.yield($0) }
        continuation.onTermination = { [weak self] _ in self?.remove(token) }
        return stream
    }
}

extension NotificationHub {
    func post(_ kind: ContextNotificationKind, _ changes: ContextChanges, from state: ContextState, childSaveArrival: Bool = false, storeChange: Bool = false) {
        post(ContextNotification(kind: kind, contextName: state.name, isRootSave: state.isRoot && kind == .didSave, changes: changes,
                                 sender: ObjectIdentifier(state), isChildSaveArrival: childSaveArrival, isStoreChange: storeChange))
    }
}

/// A registration for a notification callback; removing it stops the calls.
public struct NotificationToken: Sendable {
    let hub: NotificationHub
    let token: Int

    /// Stops the callback.
    public func remove() { hub.remove(token) }
}
