extension ContextState {
    /// Ends the current event: deletions' rules run, then observers (and the undo manager) hear its changes.
    func processPendingChanges() {
        propagatePendingDeletions()
        observation?.process()
    }

    /// The observation center, made now if need be with the pending objects noted, so that the current event's end
    /// records where each stands (each event's start is kept from then on).
    func trackEvents() -> ObservationCenter {
        if let observation { return observation }
        let center = observationCenter
        for object in Array(pendingInserts) + updated.objects + Array(deleted.values) { center.noteChanged(object) }
        return center
    }

    /// Puts objects back as undo and redo remember them: first which exist (so every link below has its object),
    /// then attribute values, then to-ones (which move their inverses), then to-many lists (exact, in order).
    func restore(_ targets: [(object: ManagedObject, state: ObjectEventState?)]) throws {
        var returned: [ManagedObject] = []
        var removedAny = false
        for (object, wanted) in targets {
            let exists = object.state === self && !object.isDeleted
            if wanted == nil, exists {
                try removeForUndo(object)
                removedAny = true
            } else if wanted != nil, !exists {
                bringBack(object)
                returned.append(object)
            }
        }
        // Objects remembered as their rows have them need only exist.
        let restored = targets.compactMap { target in
            target.state.flatMap { wanted in wanted.values.map { (object: target.object, values: $0, state: wanted) } }
        }
        for (object, values, _) in restored where object.state === self {
            if object.isFaultStorage { try fulfill(object) }
            for index in object.entity.attributes.indices where object.entity.attributes[index].derivation == nil {
                if object.values[index] != values[index] { try object.setAttributeValue(values[index], at: index) }
            }
        }
        for (object, _, wanted) in restored where object.state === self {
            for (index, relationship) in object.entity.relationships.enumerated() {
                guard let slot = object.entity.toOneSlot[index], slot < wanted.toOne.count else { continue }
                let destination = wanted.toOne[slot].map(coordinator.resolve)
                if object.toOne[slot].map(coordinator.resolve) != destination {
                    try object.setObject(destination.map { try self.object(with: $0) }, forKey: relationship.name)
                }
            }
        }
        // A returned object's destinations lost it from their lists while it was gone: link it again (in the order
        // the objects were made), so each list loaded meanwhile has it, then put each ordered list back in the order
        // it had before (its last event's, or its committed one).
        var relinked: [(owner: ManagedObject, index: Int)] = []
        for object in returned.sorted(by: { $0.objectID < $1.objectID }) where object.state === self {
            if object.isFaultStorage { try fulfill(object) }
            for (index, relationship) in object.entity.relationships.enumerated() where relationship.hasInverse {
                guard let slot = object.entity.toOneSlot[index], let destination = object.toOne[slot] else { continue }
                let owner = try self.object(with: destination)
                try object.setObject(nil, forKey: relationship.name)
                try object.setObject(owner, forKey: relationship.name)
                if let inverse = try inverse(of: relationship), inverse.entity.relationships[inverse.index].isOrdered {
                    relinked.append((owner, inverse.index))
                }
            }
        }
        for (owner, index) in relinked where owner.state === self && !owner.isDeleted {
            let earlier = observation?.eventStates.start(of: owner)?.toMany[index] ?? owner.committedToMany[index]?.ids
            guard let earlier else { continue }
            let current = try loadedToMany(owner, index).ids
            let present = Set(current)
            let ordered = earlier.filter(present.contains) + current.filter { !earlier.contains($0) }
            if ordered != current {
                try owner.setObjects(ordered.map { try self.object(with: $0) }, forKey: owner.entity.relationships[index].name)
            }
        }
        for (object, _, wanted) in restored where object.state === self {
            for (index, ids) in wanted.toMany.sorted(by: { $0.key < $1.key }) {
                let relationship = object.entity.relationships[index]
                let destinations = ids.map(coordinator.resolve)
                let current = try loadedToMany(object, index).ids.map(coordinator.resolve)
                let same = relationship.isOrdered ? current == destinations : Set(current) == Set(destinations)
                if !same { try object.setObjects(destinations.map { try self.object(with: $0) }, forKey: relationship.name) }
            }
        }
        if removedAny || !returned.isEmpty { dropListsNothingChanged() }
    }

    /// Lets every loaded list of an object with nothing pending be read again: a list loaded while an object was
    /// deleted leaves it out (and one loaded before its deletion has it), where what lies below plus the context's
    /// changes is right.
    private func dropListsNothingChanged() {
        for object in registered.objects where !object.toMany.isEmpty && !EventStates.isPending(object) {
            object.toMany = [:]
            object.committedToMany = [:]
        }
    }

    /// Takes `object` out of the context as undoing its insert (or redoing its deletion) does. A stored object's
    /// deletion runs its rules when the restored changes are processed: what they reach is in the same group, so
    /// they change nothing the group puts back, and they take it out of lists loaded since.
    private func removeForUndo(_ object: ManagedObject) throws {
        if object.isInserted {
            try discardInsert(object)
        } else {
            try delete(object)
        }
    }

    /// Puts `object` back in the context as undoing its deletion (or redoing its insert) does: a pending deletion
    /// is withdrawn; an object that had left (a discarded insert, a saved deletion) is inserted again, with its ID.
    private func bringBack(_ object: ManagedObject) {
        if object.state === self, object.isDeleted {
            deleted[object.objectID] = nil
            propagatedDeletions.remove(object.objectID)
            object.isDeleted = false
            withdrawView()
            inFlight.viewChanges.record(CollectionOfOne(object.objectID))
            observation?.noteChanged(object)
            return
        }
        let entity = object.entity
        object.state = self
        object.isDeleted = false
        object.isInserted = true
        object.committed = nil
        if object.isFaultStorage {
            object.isFaultStorage = false
            object.values = entity.defaultValues
        }
        materializedCount.add(1)
        object.toMany = [:]
        giveEmptyRelationships(object)
        registered[object.objectID] = object
        if !insertionOrder.contains(where: { $0 === object }) { insertionOrder.append(object) }
        deletedForGood.remove(object.objectID)
        withdrawView()
        observation?.noteChanged(object)
    }
}
