/// A child's objects with nothing pending show what lies below (ARCHITECTURE.md, "What a context shows"): values,
/// to-ones and lists. Its parent's edits, its siblings' saves and the merges below change that without telling the
/// child, so before a fetch or a list read the child catches up with what changed.
extension ContextState {
    /// Reads again the objects whose rows changed below since this context last looked (``ViewChangeLog``), and
    /// drops its loaded lists if anything below changed. Objects with changes here keep their values until their
    /// save or rollback, and are read again at the next call after it.
    func followChangesBelow() throws {
        guard let parent = parentContext else { return }
        var layersRefreshed = false
        // After the objects are read again: a list's rebase reads its members' to-ones.
        defer { dropListsIfBelowChanged(layersRefreshed: layersRefreshed) }
        var changes = ViewChangeLog.Changes()
        var level = 0
        var context: ObjectContext? = parent
        let reader = ObjectIdentifier(self)
        while let current = context, level < seenViewChanges.count {
            let (found, end) = current.inFlight.viewChanges.changes(after: seenViewChanges[level], for: reader)
            seenViewChanges[level] = end
            changes.everything = changes.everything || found.everything
            if !found.objects.isEmpty { changes.objects.formUnion(found.objects) }
            level += 1
            context = current.parent
        }
        guard changes.everything || !changes.objects.isEmpty || !staleBeneathChanges.isEmpty else { return }
        // Unread, a layer's list stays as it was shown when the child's save arrived.
        if changes.everything || !changes.objects.isEmpty {
            try? refreshLayerLists()
            layersRefreshed = true
        }
        let named: [ManagedObject]
        if changes.everything {
            named = registered.objects
        } else {
            let ids = changes.objects.union(staleBeneathChanges)
            named = ids.compactMap { registered[coordinator.resolve($0)] }
        }
        var stale: [ManagedObject] = []
        for object in named where !object.isFaultStorage && object.state === self {
            if showsOwnState(object) {
                staleBeneathChanges.insert(object.objectID)
            } else {
                staleBeneathChanges.remove(object.objectID)
                stale.append(object)
            }
        }
        try readAgain(stale)
    }

    /// Whether `object` shows values of this context's own: an insert, a deletion, a changed attribute or to-one
    /// (or one changed and set back, held until the save), or a row a child's save brought. A change to its lists
    /// alone (``ManagedObject/changesOnlyLists``) is not one: its values still follow below.
    func showsOwnState(_ object: ManagedObject) -> Bool {
        if object.isInserted || object.isDeleted { return true }
        if layers.contains(where: { $0.index.rows[object.objectID] != nil || $0.index.deleted[object.objectID] != nil }) { return true }
        return object.isMarkedUpdated && !object.changesOnlyLists
    }

    /// Gives `objects` the rows below shows now, in one read; their lists stay, changed ones too. One whose row is
    /// gone below keeps its values: it is deleted there, and this context hears of that as of any deletion.
    private func readAgain(_ objects: [ManagedObject]) throws {
        guard !objects.isEmpty else { return }
        let rows = Dictionary(try below.snapshots(for: objects.map(\.objectID)).map { (coordinator.resolve($0.objectID), $0) }) { first, _ in first }
        for object in objects {
            guard let row = rows[coordinator.resolve(object.objectID)] else {
                goneBelow.insert(object.objectID)
                continue
            }
            if !goneBelow.isEmpty { goneBelow.remove(object.objectID) }
            let before = object.values
            let (lists, committedLists, wasUpdated) = (object.toMany, object.committedToMany, object.isMarkedUpdated)
            let wasListsOnly = object.isMarkedForListsOnly
            turnIntoFault(object)
            fill(object, from: row)
            if wasUpdated {
                object.toMany = lists
                object.committedToMany = committedLists
                updated.insert(object, listsOnly: wasListsOnly)
            }
            object.observedReplacement(attributesBefore: before)
        }
    }

    /// A child's loaded to-many lists it did not change are read from its parent's view, which the parent's edits,
    /// its children's saves and its merges change without telling the child: when anything below changed since they
    /// were read, they are read again on next use. A list the child changed keeps its contents: they hold its edits.
    /// `layersRefreshed` says the caller has just rebased the layers' lists, so they are not rebased twice.
    func dropListsIfBelowChanged(layersRefreshed: Bool = false) {
        let generation = below.generation
        guard generation != seenBelowGeneration else { return }
        seenBelowGeneration = generation
        // The parent's own edits (a deletion's nullified links) are no view change: the layers' lists follow them here.
        if !layersRefreshed { try? refreshLayerLists() }
        dropUnchangedLists()
    }

    /// Drops the loaded to-many lists that hold no change of this context's own, to be read again from below on
    /// next use: all of an object with nothing pending, the unchanged ones of an updated object. A list of a to-one
    /// inverse that is changed, or holds a link of this context's own (the same as read, but below may have let go
    /// of it since), is read again at once with this context's links on it (``rebaseChangedLists(_:)``); other
    /// changed lists keep their contents.
    func dropUnchangedLists() {
        // No relationship, no list: the walk over every registered object is skipped.
        guard model.hasRelationships else { return }
        var changed: [(object: ManagedObject, index: Int)] = []
        // Without an edit of its own (or a child's), no list here holds a link of this context's.
        let mayHoldOwnLinks = updated.count > 0 || !insertionOrder.isEmpty || !receivedLayers.isEmpty
        registered.forEachObject { object in
            guard !object.toMany.isEmpty, !object.isInserted, !object.isDeleted else { return }
            guard object.hasChanges || mayHoldOwnLinks else {
                object.toMany = [:]
                object.committedToMany = [:]
                return
            }
            for (index, current) in object.toMany {
                let relationship = object.entity.relationships[index]
                let before = object.committedToMany[index] ?? RelatedIDs()
                guard current.isSame(as: before, ordered: relationship.isOrdered) else {
                    if !relationship.isOrdered { changed.append((object, index)) }
                    continue
                }
                // The same as read, but holding a link of this context's own: read again, below may have let go of it.
                if !relationship.isOrdered, let slot = movingInverse(of: object.entity, index), holdsOwnLink(current, to: object.objectID, slot: slot) {
                    changed.append((object, index))
                    continue
                }
                object.toMany[index] = nil
                object.committedToMany[index] = nil
            }
        }
        // Unread, a list keeps the contents it had: what this context showed before the change below.
        try? rebaseChangedLists(changed)
    }
}
