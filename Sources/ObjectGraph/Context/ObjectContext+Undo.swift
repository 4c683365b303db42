/// Undo, as Core Data's context offers it (``ContextUndoManager``), and SwiftData's `isUndoEnabled`.
extension ObjectContext {
    /// The undo manager recording this context's changes; nil (the default, as Core Data's on iOS) records nothing.
    /// Changes made before it is set are not undoable.
    ///
    /// ```swift
    /// try await context.perform { ctx in ctx.undoManager = ContextUndoManager() }
    /// ```
    public var undoManager: ContextUndoManager? {
        get { state.undoManager }
        set {
            state.checkExecutor()
            state.undoManager = newValue
        }
    }

    /// Whether the context records its changes for undo (SwiftData's `isUndoEnabled`): setting it gives the context
    /// a ``ContextUndoManager``, or takes it away.
    public var isUndoEnabled: Bool {
        get { state.undoManager != nil }
        set { if newValue != isUndoEnabled { undoManager = newValue ? ContextUndoManager() : nil } }
    }

    /// Undoes the last group of changes (Core Data's `undo()`); nothing without an undo manager.
    public func undo() throws { try state.undoManager?.undo() }

    /// Redoes the last undone group (Core Data's `redo()`); nothing without an undo manager.
    public func redo() throws { try state.undoManager?.redo() }
}

extension MainContext {
    /// The undo manager recording the main context's changes (see ``ObjectContext/undoManager``).
    public var undoManager: ContextUndoManager? {
        get { state.undoManager }
        nonmutating set { state.undoManager = newValue }
    }

    /// Whether the main context records its changes for undo (see ``ObjectContext/isUndoEnabled``).
    public var isUndoEnabled: Bool {
        get { state.undoManager != nil }
        nonmutating set { if newValue != isUndoEnabled { undoManager = newValue ? ContextUndoManager() : nil } }
    }

    /// Undoes the last group of changes (see ``ObjectContext/undo()``).
    public func undo() throws { try state.undoManager?.undo() }

    /// Redoes the last undone group (see ``ObjectContext/redo()``).
    public func redo() throws { try state.undoManager?.redo() }
}
