/// A context's observers and the changes they have not seen yet: the context's own edits are gathered until it
/// processes them (a job queued behind the current one, as Core Data processes pending changes at the end of an
/// event), merges and children's saves are processed as they arrive, so one save gives one diff.
///
/// It exists only once something observes the context: until then each edit pays a nil check.
final class ObservationCenter {
    unowned let state: ContextState
    /// Controllers by identity: those a stream keeps alive are held strongly, the others weakly (their owner holds them).
    private var controllers: [ObjectIdentifier: ControllerEntry] = [:]
    /// Object observers, by the observed object's identity.
    var objectObservers: [ObjectIdentifier: ObjectObserverEntry] = [:]
    /// The objects changed here since the last processing, by identity.
    private var changed: [ObjectIdentifier: ManagedObject] = [:]
    /// Those of them refreshed (read again from below) rather than edited.
    private var refreshed: Set<ObjectIdentifier> = []
    /// Each object changed in an earlier event and not saved, as that event left it.
    var eventStates = EventStates()
    private var needsRebuild = false
    private var needsRenameCheck = false
    private var isScheduled = false

    init(state: ContextState) { self.state = state }

    struct ControllerEntry {
        weak var weakController: FetchedResultsController?
        var strongController: FetchedResultsController?
        var controller: FetchedResultsController? { strongController ?? weakController }
    }

    func add(_ controller: FetchedResultsController, keepAlive: Bool) {
        controllers[ObjectIdentifier(controller)] = ControllerEntry(weakController: controller, strongController: keepAlive ? controller : nil)
    }

    func remove(_ key: ObjectIdentifier) { controllers[key] = nil }

    /// A stream of a controller ended; a controller only streams kept alive goes with its last one.
    func endStream(_ token: Int, of key: ObjectIdentifier) {
        guard let entry = controllers[key], let controller = entry.controller else { return }
        controller.endStream(token)
        if entry.strongController != nil && !controller.hasStreams { controllers[key] = nil }
    }

    var isEmpty: Bool { controllers.isEmpty && objectObservers.isEmpty }

    /// The live controllers (for tests that compare them with fresh fetches).
    var controllersForTesting: [FetchedResultsController] { controllers.values.compactMap(\.controller) }

    // MARK: Gathering

    /// An object of this context was inserted, changed or deleted here.
    func noteChanged(_ object: ManagedObject) {
        changed[ObjectIdentifier(object)] = object
        schedule()
    }

    /// An object of this context was refreshed: it read its values again.
    func noteRefreshed(_ object: ManagedObject) {
        refreshed.insert(ObjectIdentifier(object))
        noteChanged(object)
    }

    /// Everything may have changed (a reset or a rollback): controllers fetch again.
    func noteRebuild() {
        needsRebuild = true
        schedule()
    }

    /// A save gave objects permanent IDs: controllers rename them.
    func noteRenamed() {
        needsRenameCheck = true
        schedule()
    }

    /// Queues a processing behind the work running now, so that a block's edits arrive as one diff.
    private func schedule() {
        guard !isScheduled, let owner = state.owner else { return }
        isScheduled = true
        owner.enqueue { ctx in ctx.state.observation?.process() }
    }

    // MARK: Processing

    /// Delivers what changed since the last processing, with `external` (a merge's or a child's save's objects).
    func process(external: ContextChanges? = nil) {
        isScheduled = false
        // An undo group holds a deletion's rules with it, as Core Data's processPendingChanges runs them first.
        if state.undoManager != nil, state.isDeletePropagationScheduled { state.propagatePendingDeletions() }
        let objects = changed
        changed = [:]
        let refreshedHere = refreshed
        refreshed = []
        let rebuild = needsRebuild
        needsRebuild = false
        let renameCheck = needsRenameCheck
        needsRenameCheck = false
        var externalIDs: [ObjectID] = []
        if let external {
            externalIDs = external.insertedObjectIDs + external.updatedObjectIDs + external.deletedObjectIDs
        }
        if !objects.isEmpty { endEvent(objects, refreshed: refreshedHere, external: Set(externalIDs)) }
        guard rebuild || renameCheck || !objects.isEmpty || !externalIDs.isEmpty else { return }
        for key in Array(controllers.keys) {
            guard let controller = controllers[key]?.controller else {
                controllers[key] = nil
                continue
            }
            controller.apply(changed: objects, external: external, rebuild: rebuild)
        }
        // An observed object is held, so an external change names it by the ID it has here.
        if !objectObservers.isEmpty { notifyObjectObservers(objects, externalIDs: Set(externalIDs), rebuild: rebuild) }
        if !objects.isEmpty { postOwnChanges(objects, refreshed: refreshedHere, excluding: Set(externalIDs)) }
    }

    /// Ends the event for the objects it changed: each one's start moves to where it is now, and the undo manager
    /// records the difference of those the context changed itself (merges and children's saves are not undoable).
    private func endEvent(_ objects: [ObjectIdentifier: ManagedObject], refreshed: Set<ObjectIdentifier>, external: Set<ObjectID>) {
        var steps: [ContextUndoManager.Step] = []
        let recordsUndo = state.undoManager != nil
        var objects = objects
        if recordsUndo {
            // A cascade marks the objects it reaches deleted without noting each: they are in this event too.
            for object in state.deleted.values where objects[ObjectIdentifier(object)] == nil && !eventStates.isGone(object) {
                objects[ObjectIdentifier(object)] = object
            }
        }
        for (key, object) in objects {
            // A merge's objects, as a rule: nothing to keep, no snapshot to take.
            guard recordsUndo || EventStates.isPending(object) else {
                eventStates.forget(object)
                continue
            }
            let now = ObjectEventState(of: object, in: state)
            let start = eventStates.end(for: object, at: now)
            guard recordsUndo, !refreshed.contains(key), !external.contains(object.objectID), start != now else { continue }
            steps.append(ContextUndoManager.Step(object: object, before: start, after: now))
        }
        state.undoManager?.record(steps.sorted { $0.object.objectID < $1.object.objectID })
    }

    /// Posts the context's objects-did-change for its own processed changes, as Core Data does at the end of an
    /// event: objects inserted, updated, deleted or refreshed here (a merge's objects are in its own notification).
    private func postOwnChanges(_ objects: [ObjectIdentifier: ManagedObject], refreshed: Set<ObjectIdentifier>, excluding external: Set<ObjectID>) {
        guard state.notifications.hasSubscribers(for: .objectsDidChange) else { return }
        var edits: (inserted: [ObjectID], updated: [ObjectID], deleted: [ObjectID]) = ([], [], [])
        var refreshedIDs: [ObjectID] = []
        for (key, object) in objects where object.state === state && !external.contains(object.objectID) {
            if object.isDeleted {
                edits.deleted.append(object.objectID)
            } else if object.isInserted {
                edits.inserted.append(object.objectID)
            } else if refreshed.contains(key) {
                refreshedIDs.append(object.objectID)
            } else {
                edits.updated.append(object.objectID)
            }
        }
        guard !edits.inserted.isEmpty || !edits.updated.isEmpty || !edits.deleted.isEmpty || !refreshedIDs.isEmpty else { return }
        state.notifications.post(.objectsDidChange, ContextChanges(edits: edits, refreshed: refreshedIDs), from: state)
    }
}
