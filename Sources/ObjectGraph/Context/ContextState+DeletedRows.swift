/// A row deleted in the store leaves no link to it: the store nulls the stored rows' links (`ON DELETE SET NULL`; a
/// batch delete unlinks and announces them), and what a context holds pointing at it lets go too. After a merged
/// save, as Core Data's `mergeChanges(fromContextDidSave:)` "invokes `delete(_:)` on those which have been deleted",
/// whose rules run in the merging context; after a root's own save, for links its delete rules did not reach (a
/// link merged in after a child's deletion arrived).
extension ContextState {
    /// Unlinks every to-one this context holds that names one of `gone` (objects whose rows a save deleted): in its
    /// registered objects and in the rows its children's saves brought. A link this context read, or a child's row
    /// carried unchanged, becomes what the store holds now (no change); a link it made, or a child's save changed,
    /// becomes its change to none, which its save writes. Returns the objects unlinked, whose view changed for the
    /// contexts below.
    func unlinkDeletedRows(_ gone: Set<ObjectID>) -> [ObjectID] {
        guard !gone.isEmpty else { return [] }
        var unlinked: [ObjectID] = []
        for object in registered.objects where !object.isFaultStorage && object.state === self
            && object.toOne.contains(where: { $0.map(gone.contains) == true }) {
            let before = object.values
            var committed = object.committed
            var isChange = false
            for slot in object.toOne.indices where object.toOne[slot].map(gone.contains) == true {
                if committed?.toOne[slot] == object.toOne[slot] {
                    committed?.toOne[slot] = nil
                } else {
                    isChange = true
                }
                object.toOne[slot] = nil
            }
            if let committed, committed.toOne != object.committed?.toOne { object.committed = committed }
            if isChange { markUpdated(object) }
            object.observedReplacement(attributesBefore: before)
            unlinked.append(object.objectID)
        }
        unlinkInLayers(gone, unlinked: &unlinked)
        return unlinked
    }

    /// The received layers' rows that link to one of `gone`, unlinked as changes of theirs (see
    /// ``unlinkDeletedRows(_:)``).
    private func unlinkInLayers(_ gone: Set<ObjectID>, unlinked: inout [ObjectID]) {
        guard !receivedLayers.isEmpty else { return }
        func linksGone(_ row: ChangeSet.Row) -> Bool { row.toOne.contains { $0.map(gone.contains) == true } }
        layers = layers.map { layer in
            guard layer.inserted.contains(where: linksGone) || layer.updated.contains(where: linksGone) else { return layer }
            var fixed = layer
            for index in fixed.inserted.indices where linksGone(fixed.inserted[index]) {
                for slot in fixed.inserted[index].toOne.indices where fixed.inserted[index].toOne[slot].map(gone.contains) == true {
                    fixed.inserted[index].toOne[slot] = nil
                }
                unlinked.append(fixed.inserted[index].objectID)
            }
            // A link the child changed becomes its change to none; one it only carried, as read, is what the store
            // holds now: none, or what the merged save wrote there (``refreshLayers(with:isRootSave:)``).
            for index in fixed.updated.indices where linksGone(fixed.updated[index]) {
                for slot in fixed.updated[index].toOne.indices where fixed.updated[index].toOne[slot].map(gone.contains) == true {
                    fixed.updated[index].toOne[slot] = nil
                }
                unlinked.append(fixed.updated[index].objectID)
            }
            return fixed.reindexed(model: model)
        }
    }

    /// Runs the nullify side of the rules of the deletions a child's save brought (`gone`), over what this context
    /// shows pointing at them: the child ran them over what it showed, but this context may link there since (its own
    /// edit, a merge, another child's save). As Core Data's parent does when a child's deletion arrives: the parent
    /// deletes the object, and its rules run there. Each link becomes this context's change to none. Returns the
    /// objects unlinked.
    func unlinkArrivedDeletions(_ gone: [ObjectID]) throws -> [ObjectID] {
        var unlinked: [ObjectID] = []
        var byEntity: [String: [ObjectID]] = [:]
        for id in gone { byEntity[id.entityName, default: []].append(coordinator.resolve(id)) }
        for (entityName, ids) in byEntity {
            let entity = try model.entity(named: entityName)
            for (index, relationship) in entity.relationships.enumerated() where relationship.isToMany {
                guard let slot = movingInverse(of: entity, index) else { continue }
                // What points there below (a root's store has nothing under a temporary ID), what this context
                // linked there, which its loaded list of the deleted object holds, and what its children's saves
                // linked there, loaded here or not.
                let asked = ids.filter { !(isRoot && $0.isTemporaryID) }
                var candidates = asked.isEmpty ? [] : try below.relatedIDs(of: asked, relationship: relationship).flatMap { $0 }
                for id in ids { candidates += registered[id]?.toMany[index]?.ids ?? [] }
                candidates += ownLinks(to: ids, of: entity, through: index).values.joined()
                let owners = Set(ids)
                for memberID in Set(candidates.map { coordinator.resolve($0) }) where !isHidden(memberID) {
                    let member = try object(with: memberID)
                    if member.isFaultStorage { try fulfill(member) }
                    guard let owner = member.toOne[slot], owners.contains(coordinator.resolve(owner)) else { continue }
                    member.toOne[slot] = nil
                    markUpdated(member)
                    unlinked.append(memberID)
                }
            }
        }
        return unlinked
    }

    /// Unlinks the rows a merged save inserted or updated that now link, as this context shows them, to an object
    /// it has deleted and not saved: the deletion's nullify rule ran over what the context showed then, and runs over
    /// the links merged in since (or a child's save brought), as the context's save would run it again. Each link
    /// becomes this context's change to none, which its save writes with the deletion. Returns the objects
    /// unlinked.
    func unlinkMergedLinksToOwnDeletions(_ changes: ContextChanges) throws -> [ObjectID] {
        // Deleted here on its own, or by a child's save it holds.
        guard !deleted.isEmpty || layers.contains(where: { !$0.index.deleted.isEmpty }) else { return [] }
        func isDeletedHere(_ id: ObjectID?) -> Bool { id.map { isHidden(coordinator.resolve($0)) } ?? false }
        var unlinked: [ObjectID] = []
        // What the object shows: the merged row, unless this context's object or a child's row of it says otherwise.
        func mayLinkHere(_ id: ObjectID) -> Bool {
            if let row = changes.change(for: id, temporaryID: coordinator.temporaryID(for:)).updated, row.toOne.contains(where: isDeletedHere) {
                return true
            }
            if let object = registered[id], !object.isFaultStorage { return object.toOne.contains(where: isDeletedHere) }
            return layers.contains { $0.row(for: id)?.toOne.contains(where: isDeletedHere) == true }
        }
        for id in changes.insertedObjectIDs + changes.updatedObjectIDs where mayLinkHere(id) {
            let object = try object(with: id)
            if object.isFaultStorage { try fulfill(object) }
            guard !object.isDeleted else { continue }
            var isChange = false
            for slot in object.toOne.indices where isDeletedHere(object.toOne[slot]) {
                object.toOne[slot] = nil
                isChange = true
            }
            if isChange {
                markUpdated(object)
                unlinked.append(object.objectID)
            }
        }
        return unlinked
    }
}
