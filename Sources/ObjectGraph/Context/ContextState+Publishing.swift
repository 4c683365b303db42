/// A root context keeps its state published (``InFlightSave``) while it is exactly "the store plus change sets":
/// its layers, from the moment a child's save arrives, then the change set it writes, then nothing pending after the
/// save. Its own changes (app code inserting, changing or deleting the root's objects) withdraw the view, and reads
/// go through the root's queue again until its next save.
extension ContextState {
    /// Publishes the view of the current layers, or withdraws it when the root holds changes of its own.
    func republishView() {
        inFlight.viewGeneration.add(1)
        guard isRoot, inFlight.hasReaders.value else { return }
        guard ownChangesAreLayered() else { return withdrawView() }
        publish(layerView())
    }

    /// The context's layers merged and indexed for reading, built on first use after they change.
    func layerView() -> InFlightSave {
        if let cachedLayerView { return cachedLayerView }
        let view = InFlightSave(layers: layers, coordinator: coordinator)
        cachedLayerView = view
        return view
    }

    /// Publishes the change set the root is about to write, with its inserts' keys reserved.
    func publishWrite(_ changes: inout ChangeSet) throws {
        guard inFlight.hasReaders.value else { return }
        try reserveKeys(for: &changes)
        publish(InFlightSave(layers: [changes], presetIDs: changes.presetIDs, coordinator: coordinator))
    }

    private func publish(_ view: InFlightSave) {
        inFlight.publish(view)
        isViewPublished = true
    }

    /// Withdraws the view (the root's own changes are not in it); readers wait for the root's queue again.
    func withdrawView() {
        inFlight.viewGeneration.add(1)
        guard isViewPublished else { return }
        inFlight.clear()
        isViewPublished = false
    }

    /// Whether every pending change here came from a layer (receiving a layer marks the objects it changes).
    private func ownChangesAreLayered() -> Bool {
        guard !hasPendingInserts, !hasOwnEdits else { return false }
        return updated.objects.allSatisfy { object in layers.contains { $0.index.rows[object.objectID] != nil } }
            && deleted.keys.allSatisfy { id in layers.contains { $0.index.deleted[id] != nil } }
    }

    /// Gives every insert of `changes` the permanent key it will be written with (a failed write leaves a gap in the
    /// keys, nothing else): a published view names rows by the keys the store will hold.
    private func reserveKeys(for changes: inout ChangeSet) throws {
        let unkeyed = changes.inserted.map(\.objectID).filter { $0.isTemporaryID && changes.presetIDs[$0] == nil }
        guard !unkeyed.isEmpty else { return }
        changes.presetIDs.merge(try coordinator.reservePermanentIDs(for: unkeyed)) { preset, _ in preset }
    }
}
