/// One object's change, as its observers hear it: the keys whose values differ from the last time they heard,
/// or its deletion (after which they hear nothing more).
public struct ObjectChange: Sendable, Hashable {
    /// The object's ID now.
    public var objectID: ObjectID
    /// The attributes and relationships whose values changed.
    public var changedKeys: Set<String>
    /// Whether the object was deleted (here, or by a save merged here).
    public var isDeleted: Bool
}

/// What observers of one object last saw of it, and who they are.
final class ObjectObserverEntry {
    let object: ManagedObject
    var seen: [String: AnyHashable]
    var callbacks: [Int: (ObjectChange) -> Void] = [:]
    var continuations: [Int: AsyncStream<ObjectChange>.Continuation] = [:]
    var next = 0

    init(object: ManagedObject, seen: [String: AnyHashable]) {
        self.object = object
        self.seen = seen
    }

    var isEmpty: Bool { callbacks.isEmpty && continuations.isEmpty }
}

/// A registration of an object observer; removing it stops the calls.
public struct ObjectObservationToken: Sendable {
    let context: ObjectContext
    let object: ObjectIdentifier
    let token: Int

    /// Stops the calls (on the context's queue, after what it is running now).
    public func remove() {
        let (object, token) = (object, token)
        context.enqueue { ctx in ctx.state.observation?.removeObjectObserver(token, of: object) }
    }
}

extension ObjectContext {
    /// Calls `callback` on this context's queue whenever the object's values change or it is deleted, once per
    /// processing of changes (see ``processPendingChanges()``).
    ///
    /// ```swift
    /// let token = try ctx.observe(book) { change in print(change.changedKeys) }   // ["title"]
    /// ```
    public func observe(_ object: ManagedObject, _ callback: @escaping (ObjectChange) -> Void) throws -> ObjectObservationToken {
        let (entry, key) = try state.objectObserverEntry(for: object)
        let token = entry.next
        entry.next += 1
        entry.callbacks[token] = callback
        return ObjectObservationToken(context: self, object: key, token: token)
    }

    /// The changes of the object with `id`, as an AsyncSequence that ends after its deletion.
    public func changes(of id: ObjectID) throws -> AsyncStream<ObjectChange> {
        let (entry, key) = try state.objectObserverEntry(for: try state.existingObject(with: id))
        let (stream, continuation) = AsyncStream.makeStream(of: ObjectChange.self, bufferingPolicy: .unbounded)
        let token = entry.next
        entry.next += 1
        entry.continuations[token] = continuation
        continuation.onTermination = { [weak self] _ in
            self?.enqueue { ctx in ctx.state.observation?.removeObjectObserver(token, of: key) }
        }
        return stream
    }
}

extension ContextState {
    func objectObserverEntry(for object: ManagedObject) throws -> (ObjectObserverEntry, ObjectIdentifier) {
        checkExecutor()
        try checkOwnership(object)
        observation?.process()
        let key = ObjectIdentifier(object)
        let center = observationCenter
        if let entry = center.objectObservers[key] { return (entry, key) }
        let entry = ObjectObserverEntry(object: object, seen: try observedValues(of: object))
        center.objectObservers[key] = entry
        return (entry, key)
    }

    /// The object's values by key: attributes, to-one destinations, to-many members.
    func observedValues(of object: ManagedObject) throws -> [String: AnyHashable] {
        if object.isFaultStorage { try fulfill(object) }
        var seen: [String: AnyHashable] = [:]
        for (index, attribute) in object.entity.attributes.enumerated() { seen[attribute.name] = object.values[index] }
        for (index, relationship) in object.entity.relationships.enumerated() {
            if let slot = object.entity.toOneSlot[index] {
                seen[relationship.name] = object.toOne[slot]
            } else {
                seen[relationship.name] = try loadedToMany(object, index).members
            }
        }
        return seen
    }
}

extension ObservationCenter {
    func removeObjectObserver(_ token: Int, of key: ObjectIdentifier) {
        guard let entry = objectObservers[key] else { return }
        entry.callbacks[token] = nil
        entry.continuations[token] = nil
        if entry.isEmpty { objectObservers[key] = nil }
    }

    func notifyObjectObservers(_ objects: [ObjectIdentifier: ManagedObject], externalIDs: Set<ObjectID>, rebuild: Bool) {
        for (key, entry) in objectObservers where rebuild || objects[key] != nil || externalIDs.contains(entry.object.objectID) {
            let object = entry.object
            var change = ObjectChange(objectID: object.objectID, changedKeys: [], isDeleted: false)
            if object.isDeleted || object.state !== state {
                change.isDeleted = true
            } else if let now = try? state.observedValues(of: object) {
                change.changedKeys = Set(now.keys.filter { now[$0] != entry.seen[$0] })
                entry.seen = now
            } else {
                // Its row is gone: deleted by a save this context has not merged.
                change.isDeleted = true
            }
            guard change.isDeleted || !change.changedKeys.isEmpty else { continue }
            for callback in entry.callbacks.values { callback(change) }
            for continuation in entry.continuations.values { continuation.yield(change) }
            if change.isDeleted {
                for continuation in entry.continuations.values { continuation.finish() }
                objectObservers[key] = nil
            }
        }
    }
}
