/// A saved change set as the store holds it once a merge policy has settled its conflicts.
extension ChangeSet {
    /// The set with the updated rows of `settled` objects (a save's ``SaveResult/refreshed``) as the store holds
    /// them: a row settled by property keeps the saver's changed keys, and takes the stored values of the others,
    /// which the saver may have read before another save changed them. What a did-save tells its listeners, so that
    /// a context merging it never shows a value that is in no store (Core Data's policies merge the stored values
    /// into the saver's objects before the did-save is posted).
    ///
    /// Versions stay the ones the rows were written at: merging a root's save adds the store's increment.
    func settled(by settled: [ObjectID: Snapshot], model: Model) -> ChangeSet {
        guard !settled.isEmpty, updated.contains(where: { settled[$0.objectID] != nil }) else { return self }
        var set = self
        for position in set.updated.indices {
            guard let stored = settled[set.updated[position].objectID] else { continue }
            set.updated[position].values = stored.values
            set.updated[position].toOne = stored.toOne
            set.updated[position].version = stored.version - 1
        }
        // The equality indexes are by value; the rows' positions, and so the rest of the index, are unchanged.
        if set.index.equality != nil { set.buildEqualityIndexes(model: model) }
        return set
    }
}
