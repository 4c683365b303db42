/// Changes that failed to reach the store, handed back to the context they came from: the seeds' stack keeps every
/// failure recoverable this way (see ``DataStack``).
extension ContextState {
    /// Takes the change sets children pushed here, after a failed save left them unwritten: they go back to where
    /// they came from, so that this context holds nothing its children believe is elsewhere. Its objects and
    /// results controllers no longer show them.
    func takeReceivedLayers() -> [ChangeSet] {
        let taken = layers
        guard !taken.isEmpty else { return [] }
        dropReceivedLayers()
        republishView()
        observation?.noteRebuild()
        return taken
    }

    /// Makes change sets that failed to reach the store pending here again, older than anything already pending:
    /// the next save writes them, a rollback discards them, and meanwhile no object here shows values that are
    /// neither saved nor pending.
    ///
    /// Objects changed here since keep their newer values (the handed-back rows are older than those edits).
    func reinstate(_ failed: [ChangeSet]) {
        checkExecutor()
        guard !failed.isEmpty else { return }
        let failed = failed.map { renamedToCurrentIDs($0, reindex: true) }
        layers = failed + layers
        inFlight.viewChanges.record(failed.flatMap { $0.updated.map(\.objectID) + $0.deleted.map(\.objectID) })
        for layer in failed {
            show(layer) { object in !object.isDeleted && object.changedKeys().isEmpty }
        }
        republishView()
    }

    /// This context's pending changes as a change set another context can hold as a layer (indexed, as a child's
    /// save is): how a sibling's failed write is handed to the main context.
    func pendingChangesAsLayer() throws -> ChangeSet {
        var changes = flatten(layers + [try makeChangeSet()])
        changes.buildIndex()
        changes.buildEqualityIndexes(model: model)
        return changes
    }
}
