/// Changes made outside the object graph (batch requests, other processes), and batch requests run from a context.
extension ObjectContext {
    /// Brings this context up to date with changes made outside it, reading the changed rows from the store: updated
    /// objects take the stored values (keeping this context's unsaved changes on other keys), deleted ones leave,
    /// results controllers see inserts, and children merging automatically hear of it.
    ///
    /// ```swift
    /// let result = try coordinator.execute(request)   // with resultType = .objectIDs
    /// try await main.perform { ctx in try ctx.mergeChanges(result.changes!) }
    /// ```
    public func mergeChanges(_ changes: StoreChanges) throws {
        state.checkExecutor()
        try state.mergeStoreChanges(changes)
    }

    /// Reads every saved object this context holds again from the store, as if each had changed: what an
    /// auto-merging context does when its coordinator missed other processes' changes
    /// (``RemoteChangeNotification/missedChanges``). Objects gone from the store leave, as merged deletions do;
    /// unsaved changes stay; results controllers fetch again, for objects inserted meanwhile.
    public func refreshAllObjectsFromStore() throws {
        state.checkExecutor()
        let held = state.registered.objects.map(\.objectID).filter { !$0.isTemporaryID }
        let present = Set(try coordinator.store.snapshots(for: held).map(\.objectID))
        try state.mergeStoreChanges(StoreChanges(updated: held.filter(present.contains), deleted: held.filter { !present.contains($0) }))
        // What this context's children hold, it may not: they read everything again.
        state.inFlight.viewChanges.recordEverything()
        state.observation?.noteRebuild()
    }

    /// Merges persistent history transactions (another process's saves, read with
    /// ``PersistentStoreCoordinator/history(after:)-(PersistentHistoryToken?)``), each object's last change winning.
    public func merge(_ transactions: [PersistentHistoryTransaction]) throws {
        try mergeChanges(StoreChanges(transactions))
    }

    /// Runs a batch insert, recorded in history with this context's name and ``transactionAuthor``. The context's
    /// objects do not change: merge the result's changes to see them.
    @discardableResult
    public func execute(_ request: BatchInsertRequest) throws -> BatchResult {
        try coordinator.execute(request, source: state.transactionSource)
    }

    /// Runs a batch update, recorded in history with this context's name and ``transactionAuthor``.
    @discardableResult
    public func execute(_ request: BatchUpdateRequest) throws -> BatchResult {
        try coordinator.execute(request, source: state.transactionSource)
    }

    /// Runs a batch delete, recorded in history with this context's name and ``transactionAuthor``.
    @discardableResult
    public func execute(_ request: BatchDeleteRequest) throws -> BatchResult {
        try coordinator.execute(request, source: state.transactionSource)
    }
}

extension ContextState {
    /// Who this context's writes are from, as history records them.
    var transactionSource: TransactionSource { TransactionSource(author: transactionAuthor, contextName: name) }

    /// Merges `changes` as a notification whose rows are the store's current ones: the rows of objects registered
    /// here, and with results controllers or observers, of every object inserted or updated (they may enter a result).
    func mergeStoreChanges(_ changes: StoreChanges) throws {
        if isRoot { advanceQueryGeneration() }
        guard !changes.isEmpty else { return }
        // Children may hold objects this context does not: they read every changed one again.
        inFlight.viewChanges.record(changes.updatedObjectIDs + changes.deletedObjectIDs)
        let observing = observation != nil
        // Held here: registered, or in a row a child's save brought (whose unchanged keys show the stored values).
        let layers = self.layers
        func isHeld(_ id: ObjectID) -> Bool { registered[id] != nil || layers.contains { $0.place(of: id) != nil } }
        let wanted = (observing ? changes.insertedObjectIDs : []) + changes.updatedObjectIDs.filter { observing || isHeld($0) }
        let rows = Dictionary(try coordinator.store.snapshots(for: wanted).map { ($0.objectID, $0) }) { first, _ in first }
        var set = ChangeSet()
        var deleted = Set(changes.deletedObjectIDs)
        func row(_ snapshot: Snapshot) -> ChangeSet.Row {
            ChangeSet.Row(
                objectID: snapshot.objectID, version: snapshot.version, values: snapshot.values, toOne: snapshot.toOne,
                changedAttributes: Array(snapshot.values.indices), changedToOne: Array(snapshot.toOne.indices))
        }
        for id in changes.insertedObjectIDs {
            if let snapshot = rows[id] { set.inserted.append(row(snapshot)) }
        }
        for id in changes.updatedObjectIDs {
            if let snapshot = rows[id] {
                set.updated.append(row(snapshot))
            } else if isHeld(id) {
                // Gone since: a later change deleted it.
                deleted.insert(id)
            }
        }
        set.deleted = deleted.sorted().map { ($0, 0) }
        set.buildIndex()
        merge(ContextNotification(
            kind: .objectsDidChange, contextName: "store", isRootSave: false, changes: ContextChanges(layers: [set]),
            sender: ObjectIdentifier(coordinator), isChildSaveArrival: false, isStoreChange: true))
    }
}
