import PredicateFormat

/// A context's current view of the data: its own objects first, then the change layers its children pushed,
/// then what lies below. Children read through it; so does the context itself.
extension ContextState {
    /// What the received layers say about `id`, newest first.
    enum LayerAnswer {
        case deleted
        case row(Snapshot)
        case silent
    }

    func layerAnswer(_ id: ObjectID) -> LayerAnswer {
        // A deletion in any layer wins over rows in later ones (see flatten).
        if layers.contains(where: { $0.index.deleted[id] != nil }) { return .deleted }
        for layer in layers.reversed() {
            if let snapshot = layer.snapshot(for: id) { return .row(snapshot) }
        }
        return .silent
    }

    func currentSnapshot(of object: ManagedObject) -> Snapshot {
        Snapshot(objectID: object.objectID, version: object.committedVersionIfAny ?? 0, values: object.values, toOne: object.toOne)
    }

    /// Snapshots as this context sees them: own objects (with their unsaved values), then layers, then below.
    func currentSnapshots(for ids: [ObjectID]) throws -> [Snapshot] {
        var result: [Snapshot] = []
        var others: [ObjectID] = []
        for raw in ids {
            let id = coordinator.resolve(raw)
            if let object = registered[id] ?? registered[raw], !object.isFaultStorage {
                if !object.isDeleted { result.append(currentSnapshot(of: object)) }
            } else {
                others.append(id)
            }
        }
        if !others.isEmpty { result += try layeredSnapshots(for: others) }
        return result
    }

    /// Rows from the layers, then below; never from this context's own objects (it is filling them).
    func layeredSnapshots(for ids: [ObjectID]) throws -> [Snapshot] {
        var result: [Snapshot] = []
        var missing: [ObjectID] = []
        for id in ids {
            switch layerAnswer(id) {
            case .deleted: continue
            case .row(let snapshot): result.append(snapshot)
            case .silent: missing.append(id)
            }
        }
        if !missing.isEmpty { result += try below.snapshots(for: missing) }
        return result
    }

    /// To-many contents as this context sees them: one list per ID of `ids`, in the same order.
    func currentRelatedIDs(of ids: [ObjectID], relationship: ModelRelationship) throws -> [[ObjectID]] {
        var result = [[ObjectID]](repeating: [], count: ids.count)
        var others: [ObjectID] = []
        var otherPositions: [Int] = []
        for (position, id) in ids.enumerated() {
            // A deleted owner's list is as its deletion left it (it is not read again), so a child that still shows
            // the owner (it changed it) reads the list as below shows it, with this context's moves.
            if let object = registered[coordinator.resolve(id)], !object.isFaultStorage, !object.isDeleted,
               let index = object.entity.relationshipIndex[relationship.name] {
                // A child shows none of what this context deleted.
                let ids = try loadedToMany(object, index).ids
                result[position] = deleted.isEmpty ? ids : ids.filter { !isHidden($0) }
            } else {
                others.append(id)
                otherPositions.append(position)
            }
        }
        guard !others.isEmpty else { return result }
        let lists = try layeredRelatedIDs(of: others, relationship: relationship)
        // As a load here would show them (``install(_:asToMany:of:inverseSlot:ownLinks:)``): less the members this
        // context moved elsewhere, plus those it shows pointing there on its own.
        let entity = try model.entity(named: coordinator.resolve(others[0]).entityName)
        guard updated.count > 0 || !receivedLayers.isEmpty, let index = entity.relationshipIndex[relationship.name], let slot = movingInverse(of: entity, index) else {
            for (position, list) in zip(otherPositions, lists) { result[position] = list }
            return result
        }
        let ownLinks = ownLinks(to: others.map { coordinator.resolve($0) }, of: entity, through: index)
        for (position, (owner, list)) in zip(otherPositions, zip(others, lists)) {
            let owner = coordinator.resolve(owner)
            let listed = resolved(list)
            result[position] = currentMembers(listed, of: owner, inverseSlot: slot) + (ownLinks[owner] ?? []).filter { !listed.contains($0) }
        }
        return result
    }

    /// To-many contents from the layers, then below: one list per ID of `ids`, in the same order.
    ///
    /// A prefetch asks this for every owner of a large fetch at once: below is asked by the IDs it knows (temporary
    /// ones a save made permanent since, resolved), and its answer, by position, is taken as it comes when it
    /// answered every owner.
    func layeredRelatedIDs(of ids: [ObjectID], relationship: ModelRelationship) throws -> [[ObjectID]] {
        let layers = self.layers
        // No layers and only stored owners (a prefetch in a root, or in a child with nothing received): below answers
        // every owner, without the copy of the list asked and of their places.
        if layers.isEmpty && !ids.contains(where: \.isTemporaryID) {
            let fromBelow = try below.relatedIDs(of: ids, relationship: relationship)
            return deleted.isEmpty ? fromBelow : fromBelow.map { $0.filter { !isHidden($0) } }
        }
        var result = [[ObjectID]](repeating: [], count: ids.count)
        var asked: [ObjectID] = []
        var askedPositions: [Int] = []
        asked.reserveCapacity(ids.count)
        askedPositions.reserveCapacity(ids.count)
        // A deletion here or in a later layer takes its object out of every list, also out of one an earlier layer
        // set: the delete rules leave a survivor's unloaded to-many as it was (decision 27).
        let hides = !deleted.isEmpty || layers.contains { !$0.index.deleted.isEmpty }
        outer: for (position, id) in ids.enumerated() {
            for layer in layers.reversed() {
                if let contents = layer.index.toMany[id]?[relationship.name] {
                    result[position] = hides ? contents.filter { !isHidden($0) } : contents
                    continue outer
                }
                // Inserted in a layer: nothing below.
                if layer.index.rows[id]?.inserted == true { continue outer }
            }
            // A temporary ID has nothing below a root. Below a child it may: an object the child inserted and saved
            // lives on in its parent's layers, under that ID, until the root's save makes it permanent.
            let resolved = coordinator.resolve(id)
            if resolved.isTemporaryID && isRoot { continue }
            asked.append(resolved)
            askedPositions.append(position)
        }
        guard !asked.isEmpty else { return result }
        let fromBelow = try below.relatedIDs(of: asked, relationship: relationship)
        // Below answered every owner: its answer is this one.
        if asked.count == ids.count && !hides { return fromBelow }
        for (position, list) in zip(askedPositions, fromBelow) { result[position] = hides ? list.filter { !isHidden($0) } : list }
        return result
    }

    /// Whether `id` is deleted here or in a received layer: looked up, never gathered into a set, since deleting
    /// many objects loads a to-many relationship per object (cascades, nullify), and a set of every deletion per load
    /// made deleting 50,000 books take minutes.
    func isHidden(_ id: ObjectID) -> Bool {
        deleted[id] != nil || layers.contains { $0.index.deleted[id] != nil }
    }

    // MARK: Receiving a child's save

    /// Keeps a child's saved changes as pending layers. The work here is proportional to the objects this context
    /// has registered, not to the size of the layers (decision 4): each registered object looks itself up.
    /// Returns the objects the layers named that this context had deleted for good, which it let go of. `source` is
    /// the child that saved (see ``RowSource/push(_:from:)``).
    @discardableResult
    func receive(_ incoming: [ChangeSet], from source: ObjectIdentifier? = nil) -> Set<ObjectID> {
        checkExecutor()
        // The rows are rebased on this context's view: caught up first with what changed below it (its parent's
        // other children's saves), which finds the objects gone below, whose rows stay whole.
        try? followChangesBelow()
        var discarded: Set<ObjectID> = []
        // Named as the child knew its objects: a save since may have made some of those IDs permanent, and the
        // objects here (which `checkExecutor` just brought up to date) go by the permanent ones.
        // Each rebased on the view with the earlier ones in: a child pushes its own received layers with its save,
        // and a later one's unchanged keys must not undo what an earlier one changed.
        var arrived: [ChangeSet] = []
        var baseless: Set<ObjectID> = []
        var unlinked: [ObjectID] = []
        for layer in incoming {
            var layer = renamedToCurrentIDs(layer, reindex: true)
            // A child's deletion of an unsaved insert (this context's, or one an earlier layer brought) discards it for
            // good, as deleting it here does: a rollback does not bring it back, nor does a later change.
            // A parent's unsaved insert is not one: its deletion here is pending, and a rollback undoes it.
            var ownInserts: [ManagedObject] = []
            for (id, _) in layer.deleted where coordinator.resolve(id).isTemporaryID {
                if let object = registered[id], object.isInserted {
                    ownInserts.append(object)
                    deletedForGood.insert(id)
                } else if layers.contains(where: { $0.place(of: id)?.inserted == true }) {
                    deletedForGood.insert(id)
                }
            }
            if !deletedForGood.isEmpty { layer = withoutObjectsDeletedForGood(layer, discarded: &discarded, unlinked: &unlinked) }
            layer = rebased(layer, baseless: &baseless)
            layer = (try? listingBaselessLinks(layer, baseless: baseless)) ?? layer
            // Unread, a list stays as the child showed it (what it did before lists were rebased).
            layer = (try? rebasedLists(layer, baseless: baseless)) ?? layer
            try? moveInsertsLists(by: layer, baseless: baseless)
            layers.append(layer)
            show(layer) { _ in true }
            // This context's own insert leaves it, as its own deletion of it would: in neither its inserted nor its
            // deleted objects, with no row for its save to write or delete.
            for object in ownInserts { _ = try? discardInsert(object) }
            // Unread, a link stays until this context's save runs the rules again.
            if !layer.deleted.isEmpty { _ = try? unlinkArrivedDeletions(layer.deleted.map(\.objectID)) }
            arrived.append(layer)
        }
        let incoming = arrived
        // A moved to-one changes the inverse lists of its old and new destinations, which the child may not have
        // loaded (its layer then does not give them): those loaded here are read again.
        if incoming.contains(where: { $0.updated.contains { !$0.changedToOne.isEmpty } }) { dropUnchangedLists() }
        inFlight.viewChanges.record(incoming.lazy.flatMap { $0.updated.lazy.map(\.objectID) }, source: source)
        // Gone here: a child that holds one with nothing pending finds it gone when it reads it again.
        inFlight.viewChanges.record(incoming.lazy.flatMap { $0.deleted.lazy.map(\.objectID) }, source: source)
        // Shown here otherwise than the child showed them: its own children read them again too.
        inFlight.viewChanges.record(unlinked)
        republishView()
        observation?.process(external: ContextChanges(layers: incoming))
        notifications.post(.objectsDidChange, ContextChanges(layers: incoming), from: self, childSaveArrival: true)
        return discarded
    }

    /// `layer` with each updated row's unchanged keys taken from this context's current view: a child's row is
    /// whole, but only the keys the child changed are its news; the others are what it last read, which a merge
    /// here may have overtaken. Without this, the row would bring those stale values back (and the store, which
    /// writes changed keys only, would then disagree with this context after its save).
    ///
    /// An object this context does not show (its own insert rolled back, or a deletion merged here, while a child
    /// held a change to it) has no view to rebase on: its row stays whole, and so do the rows later layers of the same
    /// save bring (`baseless` carries them from layer to layer). Each is whole as the child showed the object then,
    /// so the last one is what the child showed when it saved: an earlier row's unchanged keys, which the child may
    /// have changed since, must not show through.
    func rebased(_ layer: ChangeSet, baseless: inout Set<ObjectID>) -> ChangeSet {
        guard !layer.updated.isEmpty else { return layer }
        var base: [ObjectID: (values: AttributeValues, toOne: [ObjectID?])] = [:]
        var unloaded: [ObjectID] = []
        for row in layer.updated where !baseless.contains(row.objectID) {
            // Gone below, an object still shows here while it holds changes of this context's own.
            if let object = registered[row.objectID], !object.isFaultStorage,
               goneBelow.isEmpty || !goneBelow.contains(row.objectID) || showsOwnState(object) {
                base[row.objectID] = (object.values, object.toOne)
            } else {
                unloaded.append(row.objectID)
            }
        }
        for snapshot in (try? layeredSnapshots(for: unloaded)) ?? [] { base[snapshot.objectID] = (snapshot.values, snapshot.toOne) }
        var fixed = layer
        var changed = false
        for index in fixed.updated.indices {
            let row = fixed.updated[index]
            guard let current = base[row.objectID] else {
                baseless.insert(row.objectID)
                // Every link of a whole row is its news: a list rebased later (``refreshLayerLists()``) keeps them.
                if fixed.updated[index].changedToOne.count != row.toOne.count {
                    fixed.updated[index].changedToOne = Array(row.toOne.indices)
                    changed = true
                }
                continue
            }
            let (values, toOne) = row.rebased(on: current.values, current.toOne)
            if values != row.values || toOne != row.toOne {
                fixed.updated[index].values = values
                fixed.updated[index].toOne = toOne
                changed = true
            }
        }
        return changed ? fixed.reindexed(model: model) : layer
    }

    /// Shows `layer`'s rows in the registered objects `accepts` lets it change: their values become the layer's,
    /// and they count as updated (or deleted) here.
    func show(_ layer: ChangeSet, accepts: (ManagedObject) -> Bool) {
        guard !layer.index.rows.isEmpty || !layer.index.deleted.isEmpty || !layer.index.toMany.isEmpty else { return }
        // Gathered (and so retained) first: replacing an object's values tells its observers at once, and app code
        // there may let go of other registered objects, which a walk in place would then reach freed.
        for object in objectsShowing(layer) where accepts(object) {
            let id = object.objectID
            if layer.index.deleted[id] != nil {
                if !object.isDeleted {
                    object.isDeleted = true
                    deleted[id] = object
                }
                continue
            }
            guard !object.isFaultStorage else { continue }
            var changed = false
            var listsOnly = true
            let before = object.values
            defer { if changed { object.observedReplacement(attributesBefore: before) } }
            if let snapshot = layer.snapshot(for: id) {
                object.values = snapshot.values
                object.toOne = snapshot.toOne
                changed = true
                listsOnly = false
            }
            if let lists = layer.index.toMany[id] {
                for (name, contents) in lists {
                    // Less what this context deleted: its deletion stands over the child's link.
                    if let index = object.entity.relationshipIndex[name] {
                        object.toMany[index] = RelatedIDs(deleted.isEmpty ? contents : contents.filter { deleted[$0] == nil })
                    }
                }
                changed = true
            }
            // The child's delete rules left this object's list alone where the child had not loaded it (decision
            // 27); loaded here, it lets go of the objects the layer deletes, as the rules would have.
            if !layer.index.deleted.isEmpty {
                for index in object.toMany.keys {
                    let members = object.toMany[index]!.ids
                    guard members.contains(where: { layer.index.deleted[$0] != nil }) else { continue }
                    object.toMany[index] = RelatedIDs(members.filter { layer.index.deleted[$0] == nil })
                    changed = true
                }
            }
            if changed { markUpdated(object, byLayer: true, listsOnly: listsOnly) }
        }
    }

    /// The registered objects `layer` may change: those it holds a row or lists for, found by their IDs, unless it
    /// deletes objects, whose IDs any loaded list may hold. Retaining every registered object at each arriving save
    /// was a third of what a main context over a results controller's 10,000 objects spent on an import's saves.
    private func objectsShowing(_ layer: ChangeSet) -> [ManagedObject] {
        guard layer.index.deleted.isEmpty, layer.index.rows.count + layer.index.toMany.count < registered.count else {
            return registered.objects
        }
        // The objects are then looked up under the IDs the layer names them by, which are the current ones.
        adoptPermanentIDsIfNeeded()
        var objects: [ManagedObject] = []
        objects.reserveCapacity(min(registered.count, layer.index.rows.count + layer.index.toMany.count))
        for id in layer.index.rows.keys { if let object = registered[id] { objects.append(object) } }
        for id in layer.index.toMany.keys where layer.index.rows[id] == nil {
            if let object = registered[id] { objects.append(object) }
        }
        return objects
    }

    // MARK: Serving children

    func serveFetch(_ request: StoreFetchRequest) throws -> [Snapshot] {
        var fetch = FetchRequest(entityName: request.entityName, predicate: request.predicate, sortKeys: request.sortKeys)
        fetch.includesSubentities = request.includesSubentities
        fetch.fetchLimit = request.limit
        fetch.fetchOffset = request.offset
        return try fetchCandidates(fetch).map { candidate in
            switch candidate {
            case .object(let object): currentSnapshot(of: object)
            case .snapshot(let snapshot): snapshot
            }
        }
    }

    func serveCount(_ request: StoreFetchRequest) throws -> Int {
        var fetch = FetchRequest(entityName: request.entityName, predicate: request.predicate)
        fetch.includesSubentities = request.includesSubentities
        fetch.fetchLimit = request.limit
        fetch.fetchOffset = request.offset
        return try count(fetch)
    }
}

/// A row known only as a snapshot (from a layer or below), as the evaluator sees it.
struct SnapshotSource: IdentifiableSource {
    let snapshot: Snapshot
    let state: ContextState

    var sourceIdentity: PredicateValue { .int(snapshot.objectID.rawKey) }

    func matchesIdentity(_ value: PredicateValue) throws(FormatPredicateError) -> Bool { value == .int(snapshot.objectID.rawKey) }

    func predicateValue(forKey key: String) throws(FormatPredicateError) -> EvaluatedValue {
        guard let entity = state.model.entityIfPresent(snapshot.objectID.entityName) else { return .value(.null) }
        if let index = entity.attributeIndex[key] { return .value(snapshot.values[index].predicateValue) }
        guard let index = entity.relationshipIndex[key] else { throw .unknownKey(entity: entity.name, key: key) }
        do {
            if let slot = entity.toOneSlot[index] {
                guard let target = snapshot.toOne[slot] else { return .value(.null) }
                return try state.evaluationSource(for: target).map { .object($0) } ?? .value(.null)
            }
            let ids = try state.currentRelatedIDs(of: [snapshot.objectID], relationship: entity.relationships[index])[0]
            return .collection(try ids.compactMap { try state.evaluationSource(for: $0).map { .object($0) } })
        } catch {
            throw .evaluation("\(error)")
        }
    }
}

extension ContextState {
    /// The object, or else the current snapshot, that stands for `id` in an evaluation.
    func evaluationSource(for id: ObjectID) throws -> (any KeyValueSource)? {
        if let object = registered[coordinator.resolve(id)], !object.isFaultStorage { return object }
        return try currentSnapshots(for: [id]).first.map { SnapshotSource(snapshot: $0, state: self) }
    }
}
