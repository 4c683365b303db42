/// Core Data's refreshing of a whole context, its conflict detection for unchanged objects, and its holding of
/// registered objects.
extension ObjectContext {
    /// Marks `object` so that the context's next save fails (or follows ``mergePolicy``) if the object's row changed
    /// or went in the store since the context read it, even though the save writes nothing for it: Core Data's
    /// `detectConflicts(for:)`, for a save whose changes rest on what an unchanged object says. The mark lasts until
    /// a save succeeds, a rollback or a reset; a save with no changes reaches no store and checks nothing. An
    /// insert has no row to check. A child context's marks are checked when its changes reach the store. Under a
    /// merge policy other than ``MergePolicy/error``, a marked object whose row moved on takes the stored values.
    ///
    /// ```swift
    /// try ctx.detectConflicts(for: account)   // the transfer below assumes the account's balance as read
    /// ```
    public func detectConflicts(for object: ManagedObject) throws {
        state.checkExecutor()
        try state.detectConflicts(for: object)
    }

    /// Refreshes every object the context holds, as Core Data's `refreshAllObjects()`: an object without changes
    /// turns into a fault (read again on next use, its relationships' destinations let go of), one with changes
    /// reads the stored values and keeps its own changes on top (``refresh(_:mergeChanges:)`` with `true`). Inserts
    /// and pending deletions stay as they are; so does a changed object whose row is gone below (its save reports it).
    ///
    /// ```swift
    /// try await context.perform { ctx in try ctx.refreshAllObjects() }
    /// ```
    public func refreshAllObjects() throws {
        state.checkExecutor()
        try state.refreshAllObjects()
    }

    /// Whether the context keeps every object it registers alive (Core Data's `retainsRegisteredObjects`, false by
    /// default): by default an object without changes lives only as long as the app holds it, and reading it again
    /// reads its row again; turned on, every registered object stays until it is deleted and saved, the context is
    /// reset, or this is turned off.
    public var retainsRegisteredObjects: Bool {
        get { state.registered.retainsObjects }
        set { state.registered.retainsObjects = newValue }
    }
}

extension ContextState {
    /// See ``ObjectContext/detectConflicts(for:)``.
    func detectConflicts(for object: ManagedObject) throws {
        try checkOwnership(object)
        guard !object.isInserted else { return }
        if object.isFaultStorage { try fulfill(object) }
        conflictChecks[ObjectIdentifier(object)] = object
    }

    /// See ``ObjectContext/refreshAllObjects()``.
    func refreshAllObjects() throws {
        for object in registered.objects where !object.isFaultStorage && !object.isInserted && !object.isDeleted && object.state === self {
            do {
                try refresh(object, mergeChanges: true)
            } catch ObjectGraphError.objectNotFound(let id) where id == object.objectID {
                // Its row is gone below: its changes stay, and its save reports the missing row.
                continue
            }
        }
    }
}
