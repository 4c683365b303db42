import Foundation
import Synchronization

/// A context's bookkeeping: registered objects, pending changes, faulting and inverse maintenance.
///
/// It is not Sendable and lives only on its ``ObjectContext``'s executor: the actor owns it, and the objects it
/// registers reach it through a weak reference, so everything here runs synchronously on one queue.
final class ContextState {
    let name: String
    let executor: ContextExecutor
    let coordinator: PersistentStoreCoordinator
    var model: Model { coordinator.model }
    /// The store (for a root context) or the parent's current state (for a child).
    let below: any RowSource
    /// The parent context (a child's), nil for a root. Kept, not asked of `below`: every fetch asks, and a failed
    /// cast from an existential walks the runtime's conversion rules.
    let parentContext: ObjectContext?
    /// Whether this context writes to the store itself (`below` is the store).
    var isRoot: Bool { parentContext == nil }
    /// Children's saved changes, pending here until this context saves, oldest first, each naming every object by
    /// the ID the tree knows it by now.
    ///
    /// A child names objects by the IDs it knew when it saved; a save of the tree may have made some of them
    /// permanent since (before the layer arrived, or while it waits here, for a context below the root). Lookups ask
    /// by the permanent ID, so a layer naming an update or delete by the temporary one would go unseen, and the
    /// store's older row would show through. Layers are therefore renamed when read after such a save (each says
    /// when its names were current, so the check is a comparison per layer).
    var layers: [ChangeSet] {
        get {
            let saveCount = coordinator.saveCount
            if receivedLayers.contains(where: { $0.namesCurrentAt != saveCount }) { renameLayers() }
            return receivedLayers
        }
        set { receivedLayers = newValue }
    }
    /// The layers as stored (see ``layers``).
    var receivedLayers: [ChangeSet] = [] {
        didSet { (cachedLayerView, cachedLayerLinks) = (nil, [:]) }
    }
    /// ``layers`` merged and indexed for fetches (see ``layerView()``).
    var cachedLayerView: InFlightSave?
    /// The to-one links the layers' rows give, by entity name and slot (see ``layerLink(of:at:)``).
    var cachedLayerLinks: [String: [ObjectID: ObjectID?]] = [:]
    /// How a root save resolves rows changed in the store since they were read.
    var mergePolicy: MergePolicy = .error
    /// Whether typed properties read a fault whose row is gone as nil and zero values (see
    /// ``ObjectContext/shouldDeleteInaccessibleFaults``).
    var shouldDeleteInaccessibleFaults = true
    /// Objects marked for conflict detection at the next save (``ObjectContext/detectConflicts(for:)``), held until it.
    var conflictChecks: [ObjectIdentifier: ManagedObject] = [:]
    /// The author persistent history records for this context's saves.
    var transactionAuthor: String?
    /// Row versions this root context's own saves produced (a child's older reading of them is no conflict),
    /// recorded once the root has had a child.
    var savedVersions: [ObjectID: Int64] = [:]
    /// This context's notifications.
    let notifications: NotificationHub
    /// The coordinator save count this context last took permanent IDs from.
    var adoptedSaveCount = 0
    /// `@exclusivity(unchecked)` here and on the change tables below, which every insert, fetched row and save
    /// modifies (the run-time exclusivity check cost as much as the modification): sound because only this
    /// module's code touches them, on this context's executor, and nothing it runs while modifying one reaches the
    /// same table (an object released by a change table's modification removes itself from ``registered``,
    /// another property, and registering runs only the object's initializer).
    @exclusivity(unchecked) var registered = ObjectRegistry()
    /// Objects inserted here since the last save, in the order they were inserted; it holds them. Those still
    /// pending are the ones whose `isInserted` is set and that are still attached (see ``pendingInserts``): an
    /// insert deleted again, or detached by a merge, stays listed until the next save, reset or rollback. No table
    /// by ID: nothing looks inserted objects up by ID that the registry does not already answer, and a table cost
    /// a hash per insert.
    @exclusivity(unchecked) var insertionOrder: [ManagedObject] = []
    /// Compiled validation patterns, by pattern.
    var patterns: [String: NSRegularExpression] = [:]
    /// Objects changed since the last save, other than inserts; it holds them.
    @exclusivity(unchecked) var updated = UpdatedObjects()
    @exclusivity(unchecked) var deleted: [ObjectID: ManagedObject] = [:]
    /// How many live objects of this context hold loaded values (for tests and benchmarks of batching).
    let materializedCount = ConfinedCounter()
    /// What lies below's generation when this context last knew its loaded lists to be current (a child's).
    var seenBelowGeneration = 0
    /// How far this context (a child) has read the ``ViewChangeLog`` of each context below it, its parent first.
    var seenViewChanges: [Int] = []
    /// Objects whose row changed below while they had changes here: read again once nothing is pending on them.
    var staleBeneathChanges: Set<ObjectID> = []
    /// Objects with nothing pending here whose row was gone below when they were read again: they keep the values
    /// they showed, but this context no longer shows them, so a child's save of one is not rebased on those values.
    var goneBelow: Set<ObjectID> = []
    /// Destinations freed objects held, waiting to be released one object's at a time (see
    /// ``releaseHeldAwaitingRelease()``). `@exclusivity(unchecked)`, as the change tables above, and with the flag
    /// below: every freed object's `deinit` reaches both (a twentieth of walking 200,000 books went to checking
    /// them), always on the context's executor, and the drain releases each entry only after its access ended, so
    /// the appends of the objects that release frees never overlap another access.
    @exclusivity(unchecked) var heldAwaitingRelease: [HeldDestination] = []
    /// Whether ``releaseHeldAwaitingRelease()`` is draining ``heldAwaitingRelease`` further up the stack.
    @exclusivity(unchecked) var isReleasingHeld = false
    /// Where this context, as a root, publishes a save while the store writes it (see ``InFlightSave``).
    let inFlight = InFlightBoard()
    /// Whether ``inFlight`` holds this root's view now.
    var isViewPublished = false
    /// Whether this context changed an object itself since its last save or rollback: its published view, made of
    /// its layers alone, then leaves out changes (see ``republishView()``).
    var hasOwnEdits = false
    /// Objects this context deleted for good: unsaved inserts it discarded (see ``discardInsert(_:)``), and
    /// deletions it saved (to its parent or the store). A child that read one before may still save a change to it,
    /// which must not bring it back: ``receive(_:)`` drops such changes. (A deletion still pending here hides the
    /// object by itself, and wins over the change when this context saves.) Kept until ``reset()``: an ID each.
    var deletedForGood: Set<ObjectID> = []
    /// Set while save applies delete rules, which may touch objects that are themselves being deleted.
    var isApplyingDeleteRules = false
    /// Deletions whose rules already ran before the save (see ``propagatePendingDeletions()``).
    var propagatedDeletions: Set<ObjectID> = []
    /// Whether a ``propagatePendingDeletions()`` is queued.
    var isDeletePropagationScheduled = false
    /// See ``entity(named:)``. Every fetched row reads it; unchecked for the reason ``registered`` is: only this
    /// context's executor touches it, and `entity(named:)`, its only user, calls nothing that reaches it again.
    @exclusivity(unchecked) private var lastEntity: ModelEntity?

    /// Whether objects report typed reads to Swift's Observation: on the main queue, where views read them.
    let tracksReads: Bool
    /// The context this state belongs to, for queuing work on its executor.
    weak var owner: ObjectContext?
    /// The context's observers and the changes they have not seen; nil while nothing observes it.
    /// `@exclusivity(unchecked)` for the reason ``registered`` is: every change reads it, on this executor only, and
    /// nothing that reads it sets it.
    @exclusivity(unchecked) var observation: ObservationCenter?
    /// The query generation this context's tree reads (its root's); set once, when the context is made.
    var generationPin = GenerationPin()
    /// The context's undo manager, which keeps the observation center in being (it sees every event's end).
    var undoManager: ContextUndoManager? {
        didSet {
            guard undoManager !== oldValue else { return }
            oldValue?.state = nil
            guard let undoManager else { return }
            // Changes made before are not undoable: they end their event now, before the manager listens.
            processPendingChanges()
            trackEvents().process()
            undoManager.state = self
        }
    }

    /// Whether calls must run on ``executor``: ``ConcurrencyChecks/isEnabled`` as it was when the context was made
    /// (set once at start-up, as documented), read here so that every object access does not load a global.
    let checksConfinement: Bool

    init(name: String, executor: ContextExecutor, coordinator: PersistentStoreCoordinator, below: any RowSource, notifications: NotificationHub) {
        self.name = name
        self.executor = executor
        self.checksConfinement = ConcurrencyChecks.isEnabled
        self.coordinator = coordinator
        self.below = below
        self.parentContext = (below as? ParentSource)?.parent
        if case .main = executor { tracksReads = true } else { tracksReads = false }
        self.notifications = notifications
        self.adoptedSaveCount = coordinator.saveCount
    }

    /// Whether the caller may use this context: it runs on its executor, or checks are off.
    @inline(__always)
    var isAccessible: Bool { isAccessible(onThread: QueueExecutor.currentThread) }

    /// ``isAccessible`` for a caller that has already asked which thread it runs on: a private queue's check then
    /// calls nothing while it reads this state, so a hot accessor need not retain the state around it (a retain and
    /// a release per typed read were a tenth of a large fetch's reading).
    @inline(__always)
    func isAccessible(onThread thread: UInt) -> Bool {
        guard checksConfinement else { return true }
        if case .queue(let queue) = executor { return queue.isOwned(by: thread) }
        return executor.isCurrent
    }

    func checkExecutor() {
        if !isAccessible {
            fatalError("ObjectGraph concurrency violation: context '\(name)' was used off its queue. "
                + "Call it inside perform { } or performAndWait { }.")
        }
        adoptPermanentIDsIfNeeded()
    }

    // MARK: Registration and faulting

    /// The registered object for `id`, or a new fault for it (no I/O).
    func object(with id: ObjectID) throws -> ManagedObject {
        if let object = registered[id] { return object }
        let resolved = coordinator.resolve(id)
        if let object = registered[resolved] { return object }
        let entity = try model.entity(named: resolved.entityName)
        let object = entity.objectType.init(entity: entity, objectID: resolved)
        object.state = self
        registered[resolved] = object
        return object
    }

    /// The object for `id`, loaded; throws when no row exists.
    func existingObject(with id: ObjectID) throws -> ManagedObject {
        let object = try object(with: id)
        // A deletion saved here, or an inaccessible fault read as nil and zero values: no row stands behind it.
        if (object.isDeleted && object.state == nil) || object.isInaccessible { throw ObjectGraphError.objectNotFound(id) }
        if object.isFaultStorage {
            do {
                try fulfill(object)
            } catch ObjectGraphError.objectNotFound(let missing) {
                // Its row is gone: the fault leaves the context, so that whatever still holds it (a to-one read
                // before the deletion was merged) frees it on any thread, and reading it says why.
                if object.state != nil, !object.hasChanges { detach(object, reason: .deletedByAnotherContext) }
                throw ObjectGraphError.objectNotFound(missing)
            }
        }
        return object
    }

    /// Registers a fetched row: the existing object keeps its values (and its unsaved changes); a new one is filled.
    func register(_ snapshot: Snapshot) throws -> ManagedObject {
        // A parent may have answered with the temporary ID of a row whose save committed since: use the ID this
        // context adopts, so one row never has two objects here.
        if snapshot.objectID.isTemporaryID, case let resolved = coordinator.resolve(snapshot.objectID), resolved != snapshot.objectID {
            adoptPermanentIDsIfNeeded()
            // Recorded but not adopted yet (the save is still recording its IDs): the object keeps its temporary ID.
            if let object = registered[snapshot.objectID] {
                if object.isFaultStorage { fill(object, from: snapshot) }
                return object
            }
            return try register(Snapshot(objectID: resolved, version: snapshot.version, values: snapshot.values, toOne: snapshot.toOne))
        }
        let id = snapshot.objectID
        let entity = try entity(named: id.entityName)
        // The closure captures the ID alone: capturing the snapshot copied it whole for every row.
        let (object, _) = registered.object(for: id) {
            let object = entity.objectType.init(entity: entity, objectID: id)
            object.state = self
            return object
        }
        if object.isFaultStorage { fill(object, from: snapshot) }
        return object
    }

    /// The model's entity `name`; the last one found is kept, since consecutive rows are mostly of one entity.
    @inline(__always)
    func entity(named name: String) throws -> ModelEntity {
        if let last = lastEntity, last.name == name { return last }
        let entity = try model.entity(named: name)
        lastEntity = entity
        return entity
    }

    /// Gives `object` the values of `snapshot`, a row read from below; `awakens` calls its
    /// ``ManagedObject/awakeFromFetch()`` (not for rows a save of its own just wrote).
    func fill(_ object: ManagedObject, from snapshot: Snapshot, awakens: Bool = true) {
        if object.isFaultStorage { materializedCount.add(1) }
        // The row is both the current and the committed one, held once: through ``ManagedObject/committed`` the
        // whole snapshot would be copied into an optional first, and each part would be held twice.
        object.commitCurrentRow(version: snapshot.version)
        object.currentValues = snapshot.values
        object.currentDestinations = snapshot.toOne
        object.isFaultStorage = false
        if awakens { object.awakeFromFetch() }
    }

    func fulfill(_ object: ManagedObject) throws {
        guard object.isFaultStorage else { return }
        guard let snapshot = try layeredSnapshots(for: [object.objectID]).first else {
            throw ObjectGraphError.objectNotFound(object.objectID)
        }
        fill(object, from: snapshot)
    }

    func insert(_ entity: ModelEntity) throws -> ManagedObject {
        guard !entity.isAbstract else {
            throw ObjectGraphError.invalidModel(entity: entity.name, property: nil, reason: "an abstract entity cannot be inserted")
        }
        let id = ObjectID.temporary(entity.name)
        let object = entity.objectType.init(entity: entity, objectID: id)
        register(inserted: object, id: id, entity: entity)
        object.awakeFromInsert()
        observation?.noteChanged(object)
        return object
    }

    /// Makes `object` one of this context's inserts, with its entity's default values and no links.
    @inline(__always)
    private func register(inserted object: ManagedObject, id: ObjectID, entity: ModelEntity) {
        object.state = self
        object.values = entity.defaultValues
        giveEmptyRelationships(object)
        object.isFaultStorage = false
        materializedCount.add(1)
        object.isInserted = true
        withdrawView()
        // Both callers give a temporary ID never registered (a new one, or a never-inserted object's own).
        registered.registerNew(object, for: id)
        insertionOrder.append(object)
    }

    /// Inserts an object made by its class's own initializer (``ManagedObject/init()``), with the values it was
    /// given, then the new objects it links to, and links them: SwiftData's `context.insert(_:)`. An object this
    /// context already has is left as it is.
    func insert(_ object: ManagedObject) throws {
        if object.state === self { return }
        if object.state != nil {
            throw ObjectGraphError.crossContext(
                entity: object.entity.name, objectID: object.objectID, reason: "belongs to another context than '\(name)'; an object is inserted once")
        }
        guard object.detachReason == .notInserted else {
            throw ObjectGraphError.objectInaccessible(
                entity: object.entity.name, objectID: object.objectID,
                reason: "\(object.detachReason.description); only an object made by its class's initializer and never inserted can be inserted")
        }
        let type = Swift.type(of: object)
        guard let managed = type as? any ManagedEntity.Type, let entity = model.entityIfPresent(managed.entityName), entity.objectType == type else {
            throw ObjectGraphError.invalidModel(
                entity: object.entity.name, property: nil, reason: "the model was not built with the class \(type); build it with Model([\(type).self, ...])")
        }
        guard !entity.isAbstract else {
            throw ObjectGraphError.invalidModel(entity: entity.name, property: nil, reason: "an abstract entity cannot be inserted")
        }
        let alone = object.entity
        let (values, links) = (object.values, object.extras?.detachedLinks ?? [:])
        object.extras?.detachedLinks = [:]
        object.entity = entity
        let id = object.storedObjectID
        register(inserted: object, id: id, entity: entity)
        object.detachReason = .contextDeallocated
        object.awakeFromInsert()
        observation?.noteChanged(object)
        // What the initializer set wins over what awakeFromInsert() set, as the app wrote it last.
        for (index, attribute) in alone.attributes.enumerated() where values[index] != alone.defaultValues[index] {
            guard let position = entity.attributeIndex[attribute.name] else { continue }
            try object.setAttributeValue(values[index], at: position)
        }
        for (key, destinations) in links.sorted(by: { $0.key < $1.key }) {
            for destination in destinations where destination.isNewAndDetached { try insert(destination) }
            if entity.relationship(named: key)?.isToMany == true {
                try object.setObjects(destinations, forKey: key)
            } else {
                try object.setObject(destinations.first, forKey: key)
            }
        }
    }

    /// Gives a new insert (or one brought back by an undo) no to-one destinations and empty to-many lists.
    @inline(__always)
    func giveEmptyRelationships(_ object: ManagedObject) {
        let entity = object.entity
        object.toOne = Array(repeating: nil, count: entity.toOneCount)
        for (index, relationship) in entity.relationships.enumerated() where relationship.isToMany {
            object.toMany[index] = RelatedIDs()
        }
    }

    /// Notes a change of a pending insert's attribute, which is written whole and tracks no change: observers judge
    /// it again, and children that read it (a parent's insert shows in its children) read it again at their next
    /// fetch. Each only when there is one: a large insert pays two tests per value.
    @inline(__always)
    func noteInsertChanged(_ object: ManagedObject) {
        if let observation { observation.noteChanged(object) }
        if inFlight.viewChanges.isRead.value { inFlight.viewChanges.record(CollectionOfOne(object.objectID)) }
    }

    /// Notes a change of `object`: this context's own (an edit, a delete rule), or `byLayer`, a child's save shown in it.
    func markUpdated(_ object: ManagedObject, byLayer: Bool = false, listsOnly: Bool = false) {
        // Every change, not only the first: an observer judges the object as it is when changes are processed.
        observation?.noteChanged(object)
        if !byLayer {
            // An own edit of an object a layer already changed is in no layer: the published view no longer holds.
            hasOwnEdits = true
            withdrawView()
            inFlight.viewChanges.record(CollectionOfOne(object.objectID))
        }
        guard !object.isInserted else { return }
        updated.insert(object, listsOnly: listsOnly)
    }

    func delete(_ object: ManagedObject) throws {
        try checkOwnership(object)
        guard !object.isDeleted else { return }
        // Before its rules run (they run when the deletions are processed), as Core Data calls it.
        if !isApplyingDeleteRules { object.prepareForDeletion() }
        if object.isInserted {
            // The save's delete rules follow the deletions they find; an unsaved insert leaves at once, so its own
            // rules run now. While the save applies them, they have already reached what this one cascades to.
            if isApplyingDeleteRules {
                try discardInsert(object)
            } else {
                try deleteInsertFollowingRules(object)
            }
            return
        }
        withdrawView()
        // An insert a child's save brought here, never stored: gone for good at once, as an own unsaved insert is
        // (see ``deletedForGood``), and a rollback (which drops the child's save) does not bring it back. A parent's
        // unsaved insert is deleted as a stored object is: pending, until a save or a rollback.
        if coordinator.resolve(object.objectID).isTemporaryID, layers.contains(where: { $0.place(of: object.objectID)?.inserted == true }) {
            deletedForGood.insert(object.objectID)
        }
        object.isDeleted = true
        deleted[object.objectID] = object
        observation?.noteChanged(object)
        // Gone from this context's view: a child that holds it with nothing pending finds it gone when it reads it
        // again, and keeps a grandchild's later row of it whole.
        inFlight.viewChanges.record(CollectionOfOne(object.objectID))
        scheduleDeletePropagation()
    }

    func checkOwnership(_ object: ManagedObject) throws {
        guard object.state === self else {
            // An object cut loose (its context reset, its row deleted by another save…) says why, not "another context".
            if object.state == nil {
                throw ObjectGraphError.objectInaccessible(
                    entity: object.entity.name, objectID: object.objectID, reason: "\(object.detachReason.description); it was handed to context '\(name)'")
            }
            throw ObjectGraphError.crossContext(
                entity: object.entity.name, objectID: object.objectID,
                reason: "belongs to another context than '\(name)'; fetch it here by its objectID")
        }
    }

    /// Cuts an object loose from this context; its registry entry goes first (see ``ObjectRegistry``).
    func detach(_ object: ManagedObject, reason: DetachReason) {
        registered.remove(object)
        if !object.isFaultStorage { materializedCount.add(-1) }
        object.state = nil
        object.detachReason = reason
        object.releaseHeldDestinations()
    }

    // MARK: Relationships

    /// The inverse's entity and position; nil for a relationship without an inverse.
    func inverse(of relationship: ModelRelationship) throws -> (entity: ModelEntity, index: Int)? {
        guard relationship.hasInverse else { return nil }
        let destination = try model.entity(named: relationship.destinationEntityName)
        guard let index = destination.relationshipIndex[relationship.inverseName] else {
            throw ObjectGraphError.unknownKey(entity: destination.name, key: relationship.inverseName)
        }
        return (destination, index)
    }

    /// The to-many relationship's contents, loaded from the store the first time.
    func loadedToMany(_ object: ManagedObject, _ index: Int) throws -> RelatedIDs {
        if !isRoot { try followChangesBelow() }
        if let loaded = object.toMany[index] { return loaded }
        if object.isFaultStorage { try fulfill(object) }
        var ids: [ObjectID] = []
        if !object.isInserted {
            ids = try layeredRelatedIDs(of: [object.objectID], relationship: object.entity.relationships[index])[0]
        }
        let ownLinks = ownLinks(to: [object], through: index)[object.objectID] ?? []
        return install(ids, asToMany: index, of: object, inverseSlot: movingInverse(of: object.entity, index), ownLinks: ownLinks)
    }

    /// Loads to-many relationship `index` of each of `owners` (objects of one entity) that has not loaded it, with one
    /// store read per 500 owners rather than one per owner: prefetching, and the delete rules of a large delete.
    func loadToMany(_ index: Int, of owners: [ManagedObject]) throws {
        func isUnloaded(_ owner: ManagedObject) -> Bool { owner.extras.map { $0.toMany[index] == nil } ?? true }
        // Mostly stored owners that have loaded nothing (a prefetch of the objects a fetch just made): they are then
        // the list to read, with no copies of the list, each a retain and a release of every owner.
        var stored = owners
        var inserted: [ManagedObject] = []
        if !owners.allSatisfy({ !$0.isInserted && isUnloaded($0) }) {
            stored = owners.filter { !$0.isInserted && isUnloaded($0) }
            inserted = owners.filter { $0.isInserted && isUnloaded($0) }
        }
        guard let first = stored.first ?? inserted.first else { return }
        let related = stored.isEmpty ? [] : try layeredRelatedIDs(of: stored.map(\.objectID), relationship: first.entity.relationships[index])
        let inverseSlot = movingInverse(of: first.entity, index)
        let ownLinks = ownLinks(to: stored, through: index)
        for (owner, ids) in zip(stored, related) {
            install(ids, asToMany: index, of: owner, inverseSlot: inverseSlot, ownLinks: ownLinks[owner.objectID] ?? [])
        }
        for owner in inserted { install([], asToMany: index, of: owner, inverseSlot: inverseSlot) }
    }

    /// Sets a to-many relationship's contents as read from below (`ids`, committed), less the members registered
    /// here whose to-one inverse has moved them elsewhere without a save (see ``movingInverse(of:_:)``), plus
    /// `ownLinks`, those this context shows linking here on their own (see ``ownLinks(to:through:)``).
    @discardableResult
    func install(
        _ stored: [ObjectID], asToMany index: Int, of object: ManagedObject, inverseSlot: Int?, ownLinks: [ObjectID] = []
    ) -> RelatedIDs {
        var ids = resolved(stored)
        var added = ownLinks.filter { !ids.contains($0) }
        // A transient relationship's links live here alone: those this context shows are as read, not a change.
        if object.entity.relationships[index].isTransient { (ids, added) = (ids + added, []) }
        var committed = RelatedIDs(ids)
        let members = currentMembers(ids, of: object.objectID, inverseSlot: inverseSlot)
        // Appending nothing still copied the list (`ids` holds it too): a copy per object of a prefetch.
        let current = added.isEmpty ? members : members + added
        // An insert of this context's is in no list below: read through a layer (a child's save, which showed it
        // linked), it is a link of this context's own, a change, which a merge must not drop with the list.
        let holdsOwnInsert = !insertionOrder.isEmpty && ids.contains { $0.isTemporaryID && registered[$0]?.isInserted == true }
        let isAsRead = added.isEmpty && current.count == ids.count && !holdsOwnInsert
        // Mostly the same list: then both share one storage.
        let contents = isAsRead ? committed : RelatedIDs(current)
        if holdsOwnInsert { committed = RelatedIDs(ids.filter { registered[$0]?.isInserted != true }) }
        if !isAsRead, let inverseSlot {
            // A member whose row already pointed elsewhere when this context read it was linked here below since:
            // it is not in the list here, and leaving it out is no change of this context's, which its save would
            // push over the link below. Only a member this context moved makes the list a change. So does one it
            // lists on its own (`added`), which below has moved or deleted since: its save then brings the list,
            // and the parent, which no longer shows the link, lists the member as the child does.
            committed = RelatedIDs(committed.ids.filter { id in
                guard let member = registered[id], !member.isFaultStorage, !links(member, at: inverseSlot, to: object.objectID) else { return true }
                return !member.hasCommitted || member.committedDestinations[inverseSlot] == object.objectID
            })
        }
        let extras = object.madeExtras()
        if isAsRead && extras.toMany.isEmpty && extras.committedToMany.isEmpty {
            // The first relationship loaded, as committed: both tables share one, until either changes (a
            // prefetch loads one for each of many objects, and each table is an allocation to make and free).
            var table = ToManyTable()
            table[index] = committed
            (extras.committedToMany, extras.toMany) = (table, table)
        } else {
            extras.committedToMany[index] = committed
            extras.toMany[index] = contents
        }
        return contents
    }

    /// The objects this context shows linking to each of `owners` (objects of one entity) through the to-one inverse
    /// of their to-many `index`, on their own: changed here, so their to-one is what this context read or set, which
    /// below may have moved or deleted since. Below's list misses them, and a list here lists every object the
    /// context shows pointing there. One walk of the changed objects per load, none when nothing changed.
    func ownLinks(to owners: [ManagedObject], through index: Int) -> [ObjectID: [ObjectID]] {
        guard let first = owners.first,
              updated.count > 0 || !receivedLayers.isEmpty || first.entity.relationships[index].isTransient else { return [:] }
        return ownLinks(to: owners.map(\.objectID), of: first.entity, through: index)
    }

    /// ``ownLinks(to:through:)`` for owners named by ID, objects of `entity`.
    ///
    /// Rows a child's save brought, of objects not loaded here, are links of this context's too: what fetches here
    /// show of those objects. A transient relationship's links are in memory only, the saved ones too: every object
    /// registered here is looked at, since below holds none of them.
    func ownLinks(to owners: [ObjectID], of entity: ModelEntity, through index: Int) -> [ObjectID: [ObjectID]] {
        let isTransient = entity.relationships[index].isTransient
        guard updated.count > 0 || !receivedLayers.isEmpty || isTransient, !owners.isEmpty,
              let slot = movingInverse(of: entity, index), let (memberEntity, _) = try? inverse(of: entity.relationships[index]) else { return [:] }
        let wanted = Set(owners)
        var links: [ObjectID: [ObjectID]] = [:]
        func visit(_ member: ManagedObject) {
            guard !member.isFaultStorage && !member.isDeleted && member.entity.isKind(of: memberEntity),
                  let owner = member.toOne[slot].map(resolvedLink), wanted.contains(owner) else { return }
            links[owner, default: []].append(member.objectID)
        }
        if isTransient {
            for member in registered.objects { visit(member) }
        } else {
            for member in updated.objects where !member.changesOnlyLists { visit(member) }
        }
        guard !receivedLayers.isEmpty else { return links }
        for kind in model.entities where kind.isKind(of: memberEntity) {
            for (member, row) in layerLinks(ofEntity: kind.name, at: slot) {
                var destination = row
                if let object = registered[member], !object.isFaultStorage {
                    // Counted above when changed here (or, for a transient relationship, loaded); otherwise loaded from
                    // the layer's row, or read since.
                    if object.isMarkedUpdated || object.isDeleted || isTransient { continue }
                    destination = object.toOne[slot]
                }
                guard let owner = destination.map(resolvedLink), wanted.contains(owner) else { continue }
                if !isHidden(member) { links[owner, default: []].append(member) }
            }
        }
        return links
    }

    /// Where the last layer's row of `member` links at to-one `slot`: `.some(nil)` for no link, nil when no layer
    /// has a row of it.
    func layerLink(of member: ObjectID, at slot: Int) -> ObjectID?? {
        guard !receivedLayers.isEmpty else { return nil }
        return layerLinks(ofEntity: member.entityName, at: slot)[member]
    }

    /// Every layer row's to-one at `slot`, for objects of the entity named `name` (not its subentities), the last
    /// layer's row winning; built once per change of the layers.
    private func layerLinks(ofEntity name: String, at slot: Int) -> [ObjectID: ObjectID?] {
        let key = "\(name)#\(slot)"
        if let cached = cachedLayerLinks[key] { return cached }
        var links: [ObjectID: ObjectID?] = [:]
        for layer in layers {
            for row in layer.inserted where row.objectID.entityName == name { links[row.objectID] = row.toOne[slot] }
            for row in layer.updated where row.objectID.entityName == name { links[row.objectID] = row.toOne[slot] }
        }
        cachedLayerLinks[key] = links
        return links
    }

    /// The to-one slot, in the destination's rows, of the inverse of `entity`'s to-many relationship `index`: what
    /// can move a member elsewhere without a save. Nil for a to-many inverse or none, where no member need be looked
    /// up. Worked out once per load of many owners, not per owner.
    func movingInverse(of entity: ModelEntity, _ index: Int) -> Int? {
        guard let (inverseEntity, inverseIndex) = try? inverse(of: entity.relationships[index]) else { return nil }
        return inverseEntity.toOneSlot[inverseIndex]
    }

    /// `ids` with every temporary ID a save has made permanent since renamed: the list itself when it holds none,
    /// as most lists read from below do.
    func resolved(_ ids: [ObjectID]) -> [ObjectID] {
        ids.contains(where: \.isTemporaryID) ? ids.map { coordinator.resolve($0) } : ids
    }

    /// `ids`, the members of `owner`'s to-many relationship as read from below (resolved to current IDs), less those
    /// registered here whose to-one inverse (at `inverseSlot` of their rows) has moved them elsewhere without a save;
    /// `ids` itself when no inverse can move a member (`inverseSlot` nil, see ``movingInverse(of:_:)``).
    func currentMembers(_ ids: [ObjectID], of owner: ObjectID, inverseSlot: Int?) -> [ObjectID] {
        guard let inverseSlot else { return ids }
        return ids.filter { id in
            guard let member = registered[id], !member.isFaultStorage else {
                // Not loaded here: a child's saved row of it, if any, says where it points.
                guard let link = layerLink(of: id, at: inverseSlot) else { return true }
                return link.map(resolvedLink) == owner
            }
            return links(member, at: inverseSlot, to: owner)
        }
    }

    /// Whether `member`'s to-one at `slot` names `owner`, also under the temporary ID a save has made permanent
    /// since (a merged row may name an insert of the merged save by it).
    func links(_ member: ManagedObject, at slot: Int, to owner: ObjectID) -> Bool {
        guard let linked = member.toOne[slot] else { return false }
        return linked == owner || resolvedLink(linked) == owner
    }

    /// Whether two links name the same object: also when one names an insert by the temporary ID a save has made
    /// permanent since (a snapshot read before the save keeps the name it read).
    func isSameLink(_ first: ObjectID?, _ second: ObjectID?) -> Bool {
        if first == second { return true }
        guard let first, let second else { return false }
        return resolvedLink(first) == resolvedLink(second)
    }

    /// `id`, or the permanent ID a save gave it when it is a temporary one.
    func resolvedLink(_ id: ObjectID) -> ObjectID {
        id.isTemporaryID ? coordinator.resolve(id) : id
    }

    /// Changes a to-many's contents in place; `change` says whether it changed anything. The object lets go of its
    /// copy first, so a large relationship is neither copied nor compared per member added: building a tag's 4,000
    /// books one by one was quadratic.
    private func withToMany(_ object: ManagedObject, _ index: Int, _ change: (inout RelatedIDs) -> Bool) throws {
        var contents = try loadedToMany(object, index)
        object.toMany[index] = nil
        let changed = change(&contents)
        object.toMany[index] = contents
        if changed { markUpdated(object, listsOnly: true) }
    }

    /// Adds or removes `member` on one side only; the callers keep both sides in step.
    private func link(_ object: ManagedObject, _ index: Int, _ member: ManagedObject?, remove: ManagedObject? = nil) throws {
        if object.isFaultStorage { try fulfill(object) }
        if let slot = object.entity.toOneSlot[index] {
            let newValue = member?.objectID
            if let remove, object.toOne[slot] != remove.objectID { return }
            guard object.toOne[slot] != newValue else { return }
            object.toOne[slot] = newValue
            markUpdated(object)
        } else if let member {
            try withToMany(object, index) { $0.append(member.objectID) }
        } else if let remove {
            try withToMany(object, index) { $0.remove(remove.objectID) }
        }
    }

    func checkDestination(_ object: ManagedObject, _ index: Int, _ target: ManagedObject) throws {
        try checkOwnership(target)
        let relationship = object.entity.relationships[index]
        let destination = try model.entity(named: relationship.destinationEntityName)
        guard target.entity.isKind(of: destination) else {
            throw ObjectGraphError.wrongDestination(
                entity: object.entity.name, key: relationship.name, expected: destination.name, got: target.entity.name)
        }
    }

    func setToOne(_ object: ManagedObject, _ index: Int, to target: ManagedObject?) throws {
        let relationship = object.entity.relationships[index]
        if let target { try checkDestination(object, index, target) }
        // The other end of a to-many change may still be a fault (a member reached through the relationship):
        // its row holds the old destination, which the inverse bookkeeping below reads.
        try fulfill(object)
        let slot = object.entity.toOneSlot[index]!
        let oldID = object.toOne[slot]
        guard oldID != target?.objectID else { return }
        guard let inverse = try inverse(of: relationship) else {
            object.toOne[slot] = target?.objectID
            return markUpdated(object)
        }
        if let oldID {
            do {
                try link(try self.object(with: oldID), inverse.index, nil, remove: object)
            } catch ObjectGraphError.objectNotFound {
                // The old destination is gone below (another save deleted it): it holds no list to keep in step.
            }
        }
        if let target {
            let inverseRelationship = target.entity.relationships[inverse.index]
            if !inverseRelationship.isToMany {
                if target.isFaultStorage { try fulfill(target) }
                // One-to-one: the target's previous partner loses it.
                if let previous = target.toOne[target.entity.toOneSlot[inverse.index]!], previous != object.objectID {
                    try link(try self.object(with: previous), index, nil, remove: target)
                }
            }
            try link(target, inverse.index, object)
        }
        object.toOne[slot] = target?.objectID
        markUpdated(object)
    }

    func addToMany(_ object: ManagedObject, _ index: Int, _ target: ManagedObject) throws {
        try checkDestination(object, index, target)
        guard let inverse = try inverse(of: object.entity.relationships[index]) else { return try link(object, index, target) }
        if !target.entity.relationships[inverse.index].isToMany {
            try setToOne(target, inverse.index, to: object)
        } else {
            try link(object, index, target)
            try link(target, inverse.index, object)
        }
    }

    func removeFromToMany(_ object: ManagedObject, _ index: Int, _ target: ManagedObject) throws {
        try checkDestination(object, index, target)
        guard let inverse = try inverse(of: object.entity.relationships[index]) else { return try link(object, index, nil, remove: target) }
        if !target.entity.relationships[inverse.index].isToMany {
            if target.isFaultStorage { try fulfill(target) }
            if target.toOne[target.entity.toOneSlot[inverse.index]!] == object.objectID {
                try setToOne(target, inverse.index, to: nil)
            }
        } else {
            try link(object, index, nil, remove: target)
            try link(target, inverse.index, nil, remove: object)
        }
    }

    func setToMany(_ object: ManagedObject, _ index: Int, _ targets: [ManagedObject]) throws {
        for target in targets { try checkDestination(object, index, target) }
        let current = try loadedToMany(object, index)
        let wanted = Set(targets.map(\.objectID))
        for id in current.ids where !wanted.contains(id) {
            try removeFromToMany(object, index, try self.object(with: id))
        }
        for target in targets { try addToMany(object, index, target) }
        if object.entity.relationships[index].isOrdered {
            try withToMany(object, index) { contents in
                let ordered = targets.map(\.objectID)
                guard contents.ids != ordered else { return false }
                contents = RelatedIDs(ordered)
                return true
            }
        }
    }

    /// Removes `object` from every relationship it is in, on both sides (used when an unsaved insert is deleted
    /// and by the nullify rule).
    func nullifyAll(_ object: ManagedObject) throws {
        for (index, relationship) in object.entity.relationships.enumerated() {
            if relationship.isToMany {
                for id in try loadedToMany(object, index).ids {
                    try removeFromToMany(object, index, try self.object(with: id))
                }
            } else {
                try setToOne(object, index, to: nil)
            }
        }
    }
}
