import Dispatch

/// Notifications, merge policies and merging.
extension ObjectContext {
    /// This context's notifications of one kind (or all kinds), as an AsyncSequence.
    ///
    /// ```swift
    /// for await saved in context.notifications(.didSave) { print(saved.changes.insertedObjectIDs.count) }
    /// ```
    public nonisolated func notifications(_ kind: ContextNotificationKind? = nil) -> AsyncStream<ContextNotification> {
        defer { gatherEditsIfHeard(kind) }
        return hub.stream(kind)
    }

    /// Calls `callback` for each notification of `kind` (all kinds when nil), on this context's queue, in order.
    public nonisolated func addObserver(
        for kind: ContextNotificationKind? = nil, _ callback: @escaping @Sendable (ContextNotification) -> Void
    ) -> NotificationToken {
        defer { gatherEditsIfHeard(kind) }
        return NotificationToken(hub: hub, token: hub.add(kind, callback))
    }

    /// Someone hears objects-did-change: the context's own edits are gathered from the next work on its queue (until
    /// then each edit pays a nil check, see ``ObservationCenter``).
    private nonisolated func gatherEditsIfHeard(_ kind: ContextNotificationKind?) {
        guard kind == nil || kind == .objectsDidChange else { return }
        enqueue { ctx in _ = ctx.state.observationCenter }
    }

    /// How a root save resolves conflicts with the store (``MergePolicy/error`` by default).
    public var mergePolicy: MergePolicy {
        get { state.mergePolicy }
        set { state.mergePolicy = newValue }
    }

    /// The author persistent history records for this context's saves to the store (Core Data's
    /// `transactionAuthor`): a process reading history can skip, or single out, what one part of the app wrote.
    ///
    /// ```swift
    /// importer.transactionAuthor = "importer"
    /// let others = try coordinator.history(after: token).filter { $0.author != "importer" }
    /// ```
    public var transactionAuthor: String? {
        get { state.transactionAuthor }
        set { state.transactionAuthor = newValue }
    }

    /// Whether the context merges what is saved around it without being asked: a root context, what other root
    /// contexts on its coordinator save (the sibling layout); a child, what its parent receives or saves. Merging
    /// does not keep the context alive: it merges for as long as the app holds it, and stops when it goes.
    public var automaticallyMergesChangesFromParent: Bool {
        get { mergeToken != nil }
        set {
            mergeToken?.remove()
            mergeToken = nil
            remoteMergeToken?.remove()
            remoteMergeToken = nil
            guard newValue else { return }
            let source = parent?.hub ?? coordinator.hub
            let me = ObjectIdentifier(state)
            let target = self
            let isChild = parent != nil
            // Held weakly: the hub lives as long as the coordinator (or the parent), and a context it held would
            // never go, merging every later save (the sibling layout makes a context per background call).
            let token = source.add(nil) { [weak target] notification in
                guard let target, notification.sender != me else { return }
                // Roots merge other roots' saves; children merge their parent's saves and children's arrivals.
                let wanted = isChild ? (notification.kind == .didSave || notification.isChildSaveArrival || notification.isStoreChange)
                    : (notification.kind == .didSave && notification.isRootSave)
                guard wanted else { return }
                target.enqueue { ctx in ctx.mergeChanges(fromContextDidSave: notification) }
            }
            mergeToken = NotificationToken(hub: source, token: token)
            // A root also takes other processes' transactions, when its coordinator watches the store.
            guard !isChild else { return }
            remoteMergeToken = coordinator.addRemoteChangeObserver { [weak target] remote in
                target?.enqueue { ctx in
                    do {
                        // Changes were missed: every object held is read again, as if each had changed.
                        if remote.missedChanges { try ctx.refreshAllObjectsFromStore() }
                        try ctx.mergeChanges(remote.changes)
                    } catch {
                        ObjectGraphLogging.logger.error("context \(ctx.name) could not merge other processes' changes: \(error)")
                    }
                }
            }
        }
    }

    /// Runs `body` on the context's queue later, in the order of calls (unlike separate Tasks, which may reorder).
    nonisolated func enqueue(_ body: @escaping @Sendable (isolated ObjectContext) -> Void) {
        switch executor {
        case .main:
            DispatchQueue.main.async { MainActor.assumeIsolated { self.assumeIsolated { body($0) } } }
        case .queue(let queue):
            queue.async { self.assumeIsolated { body($0) } }
        }
    }

    /// Brings registered objects up to date with another context's save: updated objects take the saved values
    /// (keeping this context's own unsaved changes on other keys), deleted ones leave the context, inserted ones are
    /// reachable by fetch and ID. The work is proportional to the smaller of what is registered here and the save.
    public func mergeChanges(fromContextDidSave notification: ContextNotification) {
        state.checkExecutor()
        state.merge(notification)
    }
}

extension ContextState {
    /// Takes `gone` out of the loaded to-many lists of the registered objects `where` picks, on both sides (the
    /// current list and the committed one).
    func removeFromLists(_ gone: Set<ObjectID>, where picked: (ManagedObject) -> Bool) {
        guard !gone.isEmpty else { return }
        for object in registered.objects where !object.toMany.isEmpty && picked(object) {
            for index in object.entity.relationships.indices where object.entity.toOneSlot[index] == nil {
                for side in [\ManagedObject.toMany, \ManagedObject.committedToMany] {
                    guard var contents = object[keyPath: side][index], contents.ids.contains(where: gone.contains) else { continue }
                    object[keyPath: side][index] = nil
                    contents.remove(gone)
                    object[keyPath: side][index] = contents
                }
            }
        }
    }

    /// `toOne`, a row of a merged root save, with each insert of that save named by its permanent ID: by the save's
    /// own map first, since a root on another coordinator of the store cannot resolve the saver's temporary IDs.
    func permanentLinks(_ toOne: [ObjectID?], of changes: ContextChanges) -> [ObjectID?] {
        guard toOne.contains(where: { $0?.isTemporaryID == true }) else { return toOne }
        return toOne.map { $0.map { changes.permanentIDs[$0] ?? coordinator.resolve($0) } }
    }

    /// The keys pending children's rows change on `object`.
    func layerChangedKeys(of object: ManagedObject) -> Set<String> {
        guard !receivedLayers.isEmpty else { return [] }
        var keys: Set<String> = []
        for layer in layers {
            guard let place = layer.index.rows[object.objectID], !place.inserted else { continue }
            let row = layer.updated[place.position]
            for index in row.changedAttributes { keys.insert(object.entity.attributes[index].name) }
            for slot in row.changedToOne {
                if let index = object.entity.toOneSlot.firstIndex(of: slot) { keys.insert(object.entity.relationships[index].name) }
            }
        }
        return keys
    }

    func merge(_ notification: ContextNotification) {
        // A pinned context merging moves to the store's newest state, which holds what it merges.
        if isRoot { advanceQueryGeneration() }
        let changes = notification.changes
        var touched: [ObjectID] = []
        var deletedHere: [ObjectID] = []
        let candidates: [ManagedObject]
        if changes.count < 64 || changes.count < registered.count {
            candidates = (changes.updatedObjectIDs + changes.deletedObjectIDs).compactMap { registered[$0] }
        } else {
            candidates = registered.objects
        }
        for object in candidates {
            // Listed twice when the save both updated and deleted it (a layer's change, then a deletion): the
            // second time it has left already, and its deletion here must not be taken for this context's own.
            guard object.state === self else { continue }
            let change = changes.change(for: object.objectID, temporaryID: coordinator.temporaryID(for:))
            if change.deleted {
                // Its own pending deletion is done: a child's later change to it must not bring it back.
                if object.isDeleted { deletedForGood.insert(object.objectID) }
                registered[object.objectID] = nil
                updated.remove(object)
                deleted[object.objectID] = nil
                object.isDeleted = true
                deletedHere.append(object.objectID)
                detach(object, reason: .deletedByAnotherContext)
                continue
            }
            guard var snapshot = change.updated, !change.inserted || object.isFaultStorage else { continue }
            if notification.isRootSave {
                // The store bumped the row's version by one when it wrote this row, and gave the objects the save
                // inserted their permanent IDs, which the row may name by their temporary ones.
                snapshot = Snapshot(objectID: object.objectID, version: snapshot.version + 1, values: snapshot.values,
                                    toOne: permanentLinks(snapshot.toOne, of: changes))
            }
            guard !object.isFaultStorage else { continue }
            // Keys changed here, or by a child's row pending here, keep their values (as refreshLayers keeps them).
            // An object with nothing pending has none, even where its snapshot still names an insert by the
            // temporary ID the save replaced.
            let ownChanges = Set(object.isMarkedUpdated || object.isDeleted ? object.changedKeys() : []).union(layerChangedKeys(of: object))
            let before = object.values
            let beforeToOne = object.toOne
            fill(object, from: snapshot)
            for (index, attribute) in object.entity.attributes.enumerated() where ownChanges.contains(attribute.name) {
                object.values[index] = before[index]
            }
            for (index, relationship) in object.entity.relationships.enumerated() {
                if let slot = object.entity.toOneSlot[index], ownChanges.contains(relationship.name) {
                    object.toOne[slot] = beforeToOne[slot]
                } else if object.entity.toOneSlot[index] == nil, !ownChanges.contains(relationship.name) {
                    object.toMany[index] = nil
                    object.committedToMany[index] = nil
                }
            }
            if ownChanges.isEmpty { updated.remove(object) }
            object.observedReplacement(attributesBefore: before)
            touched.append(object.objectID)
        }
        let merged = Set(changes.deletedObjectIDs)
        // A deletion a child's save brought, which the merged save has done: as an own one above.
        for id in merged where layers.contains(where: { $0.deletes(id) }) { deletedForGood.insert(id) }
        dropFromLayers(merged)
        var unlinked = unlinkDeletedRows(merged)
        // Before the links to own deletions are looked for: a child's row here shows the merged links it did not
        // change only once rebased.
        refreshLayers(with: changes, isRootSave: notification.isRootSave)
        do {
            unlinked += try unlinkMergedLinksToOwnDeletions(changes)
        } catch {
            // The save runs the rules again and throws what it meets there.
            ObjectGraphLogging.logger.debug("context \(name) left merged links to its deletions to its save: \(error)")
        }
        // A store change's every row is in the log already, held here or not: the root that read it recorded them
        // (``mergeStoreChanges(_:)``), and every context below reads the root's log too.
        if !notification.isStoreChange { inFlight.viewChanges.record(changes.updatedObjectIDs + changes.deletedObjectIDs) }
        inFlight.viewChanges.record(unlinked)
        // Children reading through this root's published view read the merged layers, not the ones before.
        republishView()
        // Loaded to-many contents may now miss inserted objects, hold deleted ones, or be out of date with a
        // relationship changed on either side: reload them lazily.
        if changes.hasInsertions || !deletedHere.isEmpty || changes.changesRelationships {
            // Unread, a layer's list stays as it was shown when the child's save arrived.
            try? refreshLayerLists()
            dropUnchangedLists()
        }
        // A changed list keeps its contents (they may hold its unsaved edits), less the objects the save deleted, as
        // Core Data removes merged deletions from registered objects' relationships.
        removeFromLists(Set(changes.deletedObjectIDs)) { $0.hasChanges }
        observation?.process(external: changes)
        ObjectGraphLogging.logger.debug("context \(name) merged \(changes.count) changes from \(notification.isStoreChange ? "the store" : "context \(notification.contextName)")")
        notifications.post(.objectsDidChange, changes, from: self, storeChange: notification.isStoreChange)
    }
}
