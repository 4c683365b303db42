/// A context's undo and redo, as Core Data's context undo manager records them: each event's changes (a `perform`
/// block's, or what ``ObjectContext/processPendingChanges()`` closes) are one undo group, inside any group the app
/// opens with ``beginUndoGrouping()``. Undo restores the objects' values, relationships and existence as they were
/// before the group, across saves too (the restored objects are changes to save again). Merges and children's saves
/// are not undoable, as in Core Data; a rollback or a reset forgets every group.
///
/// Foundation's `UndoManager` is not on Linux, so this class has its calls, for a context's changes.
///
/// ```swift
/// try await context.perform { ctx in
///     ctx.undoManager = ContextUndoManager()          // or ctx.isUndoEnabled = true, as SwiftData
///     book.title = "Dune"
/// }
/// try await context.perform { ctx in try ctx.undo() }  // the title is back
/// ```
///
/// An undo manager belongs to one context, and is used on that context's queue.
public final class ContextUndoManager {
    /// One undoable change of one object: what it was before the group and after (nil: not in the context).
    struct Step {
        let object: ManagedObject
        let before: ObjectEventState?
        let after: ObjectEventState?
    }

    struct Group {
        var steps: [Step] = []
        var actionName = ""
    }

    /// The context recording into this manager.
    weak var state: ContextState?
    private var undoStack: [Group] = []
    private var redoStack: [Group] = []
    /// Groups the app opened and has not closed, innermost last.
    private var openGroups: [Group] = []
    private var disabledCount = 0
    /// Whether the changes being processed are an undo's or a redo's own (recorded as the event's start, not as a step).
    private(set) var isApplying = false

    /// The most groups kept for undo; 0 (the default) keeps all.
    public var levelsOfUndo = 0 {
        didSet { trim() }
    }
    /// Whether an undo is restoring objects now.
    public private(set) var isUndoing = false
    /// Whether a redo is restoring objects now.
    public private(set) var isRedoing = false

    /// Creates an undo manager; give it to a context with ``ObjectContext/undoManager``.
    public init() {}

    /// Whether there is a group to undo (the current event's changes count).
    public var canUndo: Bool {
        flush()
        return !undoStack.isEmpty || openGroups.contains { !$0.steps.isEmpty }
    }

    /// Whether there is an undone group to redo.
    public var canRedo: Bool {
        flush()
        return !redoStack.isEmpty
    }

    /// How many groups the app has opened and not closed.
    public var groupingLevel: Int { openGroups.count }

    /// Whether changes are recorded (see ``disableUndoRegistration()``).
    public var isUndoRegistrationEnabled: Bool { disabledCount == 0 }

    /// The name of the group an undo would undo, as ``setActionName(_:)`` gave it.
    public var undoActionName: String { undoStack.last?.actionName ?? "" }

    /// The name of the group a redo would redo.
    public var redoActionName: String { redoStack.last?.actionName ?? "" }

    /// Names the group being recorded (the innermost open one, else the last one closed), for an Undo menu item.
    public func setActionName(_ name: String) {
        if openGroups.isEmpty {
            flush()
            if !undoStack.isEmpty { undoStack[undoStack.count - 1].actionName = name }
        } else {
            openGroups[openGroups.count - 1].actionName = name
        }
    }

    /// Opens a group: every change until the matching ``endUndoGrouping()`` is undone in one step.
    public func beginUndoGrouping() {
        flush()
        openGroups.append(Group())
    }

    /// Closes the innermost group the app opened, with the changes made so far.
    ///
    /// - Precondition: a group is open (Foundation's undo manager raises the same error).
    public func endUndoGrouping() {
        flush()
        precondition(!openGroups.isEmpty, "endUndoGrouping() without a beginUndoGrouping(): no undo group is open")
        add(openGroups.removeLast())
    }

    /// Stops recording changes until as many ``enableUndoRegistration()`` calls: what happens meanwhile cannot be
    /// undone (a change made on the app's behalf, such as seeding).
    public func disableUndoRegistration() {
        flush()
        disabledCount += 1
    }

    /// Records changes again, once every ``disableUndoRegistration()`` is matched.
    public func enableUndoRegistration() {
        flush()
        disabledCount = max(0, disabledCount - 1)
    }

    /// Forgets every group to undo and to redo.
    public func removeAllActions() {
        undoStack = []
        redoStack = []
        openGroups = openGroups.map { _ in Group() }
    }

    /// Restores the objects the last group changed as they were before it (closing any group the app left open
    /// first), and keeps the group for ``redo()``.
    ///
    /// - Throws: what reading a restored object's row throws (a fault whose row is gone).
    public func undo() throws {
        flush()
        while !openGroups.isEmpty { add(openGroups.removeLast()) }
        guard let group = undoStack.popLast() else { return }
        isUndoing = true
        defer { isUndoing = false }
        try restore(group.steps.reversed().map { ($0.object, $0.before) })
        redoStack.append(group)
    }

    /// Restores the objects the last undone group changed as the group had left them.
    public func redo() throws {
        flush()
        guard let group = redoStack.popLast() else { return }
        isRedoing = true
        defer { isRedoing = false }
        try restore(group.steps.map { ($0.object, $0.after) })
        undoStack.append(group)
        trim()
    }

    // MARK: Recording

    /// The context's processed event: `steps` become a group (or join the app's open group). A new change makes
    /// what was undone no longer redoable, as in Foundation.
    func record(_ steps: [Step]) {
        guard !steps.isEmpty, !isApplying, isUndoRegistrationEnabled else { return }
        if openGroups.isEmpty {
            add(Group(steps: steps))
        } else {
            openGroups[openGroups.count - 1].steps += steps
        }
        redoStack = []
    }

    private func add(_ group: Group) {
        guard !group.steps.isEmpty else { return }
        if openGroups.isEmpty {
            undoStack.append(group)
            trim()
        } else {
            openGroups[openGroups.count - 1].steps += group.steps
        }
    }

    private func trim() {
        if levelsOfUndo > 0, undoStack.count > levelsOfUndo { undoStack.removeFirst(undoStack.count - levelsOfUndo) }
    }

    /// Ends the current event, so its changes are a group before the manager acts.
    private func flush() {
        guard let state else { return }
        state.checkExecutor()
        state.processPendingChanges()
    }

    private func restore(_ targets: [(ManagedObject, ObjectEventState?)]) throws {
        guard let state else { return }
        isApplying = true
        defer {
            // The restored objects' changes are processed as the event's start, not recorded as a new group.
            state.processPendingChanges()
            isApplying = false
        }
        try state.restore(targets)
    }
}
