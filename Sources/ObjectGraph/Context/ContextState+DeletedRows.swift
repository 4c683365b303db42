/// A row deleted in the store leaves no link to it: the store nulls the stored rows' links (`ON DELETE SET NULL`; a
/// batch delete unlinks and announces them), and what a context holds pointing at it lets go too. After a merged
/// save, as Core Data's `mergeChanges(fromContextDidSave:)` "invokes `delete(_:)` on those which have been deleted",
/// whose rules run in the merging context; after a root's own save, for links its delete rules did not reach (a
/// link merged in after a child's deletion arrived).
extension ContextState {
    /// Unlinks every to-one this context holds that names one of `gone` (objects whose rows a save deleted): in its
    /// registered objects and in the rows its children's saves brought. A link this context read becomes what the
    /// store holds now (no change); a link it made, or a child's save brought, becomes its change to none, which its
    /// save writes. Returns the objects unlinked, whose view changed for the contexts below.
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
            for index in fixed.updated.indices where linksGone(fixed.updated[index]) {
                for slot in fixed.updated[index].toOne.indices where fixed.updated[index].toOne[slot].map(gone.contains) == true {
                    fixed.updated[index].toOne[slot] = nil
                    if !fixed.updated[index].changedToOne.contains(slot) { fixed.updated[index].changedToOne.append(slot) }
                }
                unlinked.append(fixed.updated[index].objectID)
            }
            return fixed.reindexed(model: model)
        }
    }
}
