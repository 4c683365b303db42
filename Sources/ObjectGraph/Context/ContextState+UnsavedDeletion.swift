/// Deleting an object never saved: it leaves the context at once, where a saved object waits for the save, so its
/// delete rules run at once too (a cascade, a deny), as the save's would (``ContextState/applyDeleteRules()``).
extension ContextState {
    /// Deletes an unsaved insert as the save's rules would delete it: what it cascades to goes too (inserts at once,
    /// stored objects marked deleted, their own rules to run at the save), a deny rule with anything left behind
    /// refuses the whole deletion before anything changes, and the rest let go of it.
    func deleteInsertFollowingRules(_ object: ManagedObject) throws {
        var inserts = [object]
        var stored: [ManagedObject] = []
        var reached: Set<ObjectIdentifier> = [ObjectIdentifier(object)]
        var next = 0
        while next < inserts.count {
            let source = inserts[next]
            next += 1
            for (index, relationship) in source.entity.relationships.enumerated() where relationship.deleteRule == .cascade {
                for target in try destinations(of: source, index) where !target.isDeleted && reached.insert(ObjectIdentifier(target)).inserted {
                    if target.isInserted { inserts.append(target) } else { stored.append(target) }
                }
            }
        }
        for source in inserts {
            for (index, relationship) in source.entity.relationships.enumerated() where relationship.deleteRule == .deny {
                let survivors = try destinations(of: source, index).filter { !$0.isDeleted && !reached.contains(ObjectIdentifier($0)) }
                if !survivors.isEmpty {
                    throw ObjectGraphError.deleteDenied(
                        entity: source.entity.name, objectID: source.objectID, relationship: relationship.name, count: survivors.count)
                }
            }
        }
        for target in stored { try delete(target) }
        for insert in inserts { try discardInsert(insert) }
    }

    /// The objects `object`'s relationship `index` holds now.
    private func destinations(of object: ManagedObject, _ index: Int) throws -> [ManagedObject] {
        if let slot = object.entity.toOneSlot[index] { return try object.toOne[slot].map { [try self.object(with: $0)] } ?? [] }
        return try loadedToMany(object, index).ids.map { try self.object(with: $0) }
    }

    /// `layer`, a child's save, without the objects this context deleted for good, which the child still showed: no
    /// row of one, no list naming one (the child linked it to another object, whose inverse list it then held), and
    /// no to-one naming one (the child linked to it), since no row will ever have its ID. The rows dropped go into
    /// `discarded`, the rows unlinked into `unlinked` (the child, and its own children, showed them linked).
    func withoutObjectsDeletedForGood(_ layer: ChangeSet, discarded: inout Set<ObjectID>, unlinked: inout [ObjectID]) -> ChangeSet {
        let gone = { (id: ObjectID?) in id.map(self.deletedForGood.contains) ?? false }
        let namesOne = layer.updated.contains { gone($0.objectID) || $0.toOne.contains(where: gone) }
            || layer.inserted.contains { $0.toOne.contains(where: gone) }
            || layer.toMany.contains { $0.destinations.contains(where: gone) }
        guard namesOne else { return layer }
        var layer = layer
        for row in layer.updated where gone(row.objectID) { discarded.insert(row.objectID) }
        layer.updated.removeAll { gone($0.objectID) }
        for index in layer.updated.indices where layer.updated[index].toOne.contains(where: gone) {
            layer.updated[index].toOne = layer.updated[index].toOne.map { gone($0) ? nil : $0 }
            unlinked.append(layer.updated[index].objectID)
        }
        for index in layer.inserted.indices where layer.inserted[index].toOne.contains(where: gone) {
            layer.inserted[index].toOne = layer.inserted[index].toOne.map { gone($0) ? nil : $0 }
            unlinked.append(layer.inserted[index].objectID)
        }
        for index in layer.toMany.indices {
            discarded.formUnion(layer.toMany[index].destinations.filter(gone))
            layer.toMany[index].destinations.removeAll(where: gone)
        }
        layer.toMany.removeAll { gone($0.objectID) }
        return layer.reindexed(model: model)
    }

    /// Takes an unsaved insert out of the context: its relationships let go of it, and it is gone.
    func discardInsert(_ object: ManagedObject) throws {
        guard object.isInserted, object.state === self else { return }
        try nullifyAll(object)
        registered[object.objectID] = nil
        // A child's save that deleted it showed it deleted here first: no deletion of it is pending either.
        deleted[object.objectID] = nil
        // A child's pending row of it goes too, now and when a child's later save brings one: fetches read the
        // layers, and would bring it back.
        dropFromLayers([object.objectID])
        deletedForGood.insert(object.objectID)
        object.isInserted = false
        object.isDeleted = true
        observation?.noteChanged(object)
        detach(object, reason: .deletedBeforeSaved)
    }
}
