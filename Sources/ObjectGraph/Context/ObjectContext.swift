import Dispatch
import Foundation

/// A scratch pad of objects confined to one queue: Core Data's managed object context, as an actor.
///
/// A main-queue context runs on the main actor's executor, a private-queue context on its own serial queue. All
/// work with objects happens inside ``perform(_:)`` (async) or ``performAndWait(_:)`` (blocking), whose closure is
/// isolated to the context: inside, everything is synchronous; outside, objects cannot be reached, because
/// ``ManagedObject`` is not Sendable and the closures must return Sendable values (pass ``ObjectID``s).
///
/// ```swift
/// let context = ObjectContext(coordinator: coordinator, name: "import")
/// let id = try await context.perform { ctx in
///     let book = try ctx.insert("Book")
///     try book.setValue("Dune", forKey: "title")
///     try ctx.save()
///     return book.objectID
/// }
/// ```
public actor ObjectContext {
    /// Where a context runs its work.
    public enum ConcurrencyType: Sendable {
        /// On the main actor (the main thread).
        case mainQueue
        /// On a private serial queue of its own.
        case privateQueue
    }

    /// The context's name, used in error and trap messages.
    public nonisolated let name: String
    /// The coordinator the context reads from and saves to (through its parents, for a child).
    public nonisolated let coordinator: PersistentStoreCoordinator
    /// The context a child saves into; nil for a root context, which saves to the store.
    public nonisolated let parent: ObjectContext?
    /// Where the context runs.
    public nonisolated let concurrencyType: ConcurrencyType
    nonisolated let executor: ContextExecutor
    nonisolated let hub: NotificationHub
    let state: ContextState
    // nonisolated(unsafe): the same bookkeeping, for `MainContext`, `deinit` and an initializer only. Sound because
    // `MainContext` is @MainActor and exists only for main-queue contexts, whose executor is the main actor's; every
    // use runs on that one thread, and ContextState.checkExecutor() traps otherwise. `deinit` uses it only where
    // nothing else can run on the context's executor (see there), the initializer before the context exists for
    // anyone else.
    nonisolated(unsafe) let mainActorState: ContextState
    /// The save this (root) context is writing, readable by its children from any thread.
    nonisolated let inFlight: InFlightBoard
    /// The query generation the context's tree reads the store at: its root's, shared by every child.
    nonisolated let generationPin: GenerationPin
    var mergeToken: NotificationToken?
    var remoteMergeToken: RemoteChangeToken?

    /// Creates a root context on `coordinator`: its saves go to the store.
    public init(coordinator: PersistentStoreCoordinator, concurrencyType: ConcurrencyType = .privateQueue, name: String? = nil) {
        self.init(coordinator: coordinator, parent: nil, concurrencyType: concurrencyType, name: name)
    }

    /// Creates a child of `parent`: it reads through the parent (seeing its unsaved changes) and its saves go into
    /// the parent only; nothing reaches disk until the root context saves.
    public init(parent: ObjectContext, concurrencyType: ConcurrencyType = .privateQueue, name: String? = nil) {
        self.init(coordinator: parent.coordinator, parent: parent, concurrencyType: concurrencyType, name: name)
    }

    /// A context whose merge policy is set before anyone can use it (the stack's contexts): setting it through
    /// ``mergePolicy`` needs the context's queue, and a call that reached the queue first would save without it.
    init(coordinator: PersistentStoreCoordinator, parent: ObjectContext?, concurrencyType: ConcurrencyType = .privateQueue, name: String?, mergePolicy: MergePolicy) {
        self.init(coordinator: coordinator, parent: parent, concurrencyType: concurrencyType, name: name)
        mainActorState.mergePolicy = mergePolicy
    }

    private init(coordinator: PersistentStoreCoordinator, parent: ObjectContext?, concurrencyType: ConcurrencyType, name: String?) {
        let name = name ?? (concurrencyType == .mainQueue ? "main" : "private")
        self.name = name
        self.coordinator = coordinator
        self.parent = parent
        self.concurrencyType = concurrencyType
        let executor: ContextExecutor = concurrencyType == .mainQueue ? .main : .queue(QueueExecutor(label: "ObjectGraph.context.\(name)"))
        self.executor = executor
        let hub = NotificationHub(forward: parent == nil ? coordinator.hub : nil)
        self.hub = hub
        let pin = parent?.generationPin ?? GenerationPin()
        generationPin = pin
        let below: any RowSource = parent.map { ParentSource(parent: $0) } ?? StoreSource(coordinator: coordinator, pin: pin)
        let state = ContextState(name: name, executor: executor, coordinator: coordinator, below: below, notifications: hub)
        state.generationPin = pin
        self.state = state
        self.mainActorState = state
        self.inFlight = state.inFlight
        state.owner = self
        // Every context below reads its changes for this one from now on (see ``ViewChangeLog``).
        var ancestor = parent
        while let context = ancestor {
            context.inFlight.viewChanges.isRead.value = true
            state.seenViewChanges.append(context.inFlight.viewChanges.end)
            ancestor = context.parent
        }
        if let parent, !parent.inFlight.hasReaders.value {
            parent.inFlight.hasReaders.value = true
            parent.enqueue { $0.state.republishView() }
        }
    }

    /// Detaches every object: objects hold the bookkeeping strongly (see ``ManagedObject``), and unsaved changes
    /// would otherwise keep it and them alive in a cycle. An object the app still holds throws "its context was
    /// deallocated" from then on. It runs at once, so the store closes when the last context on it goes.
    deinit {
        // The hubs' callbacks hold this context weakly; they go with it.
        mergeToken?.remove()
        remoteMergeToken?.remove()
        switch executor {
        case .queue:
            // Nothing can be running on a private queue for this context: every job and `performAndWait` holds the
            // context, and its objects are usable only inside them.
            mainActorState.tearDown()
        case .main where executor.isCurrent:
            mainActorState.tearDown()
        case .main:
            // Main-actor code may be using this context's objects right now (through `MainContext`): detach them
            // there.
            let handoff = TeardownHandoff(state: mainActorState)
            DispatchQueue.main.async { handoff.state.tearDown() }
        }
    }

    /// The executor the actor runs on: the main actor's, or the context's private queue.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        switch executor {
        case .main: MainActor.sharedUnownedExecutor
        case .queue(let queue): queue.asUnownedSerialExecutor()
        }
    }

    /// The model of the context's coordinator.
    public nonisolated var model: Model { coordinator.model }

    // MARK: Running work on the context

    /// Runs `body` on the context's queue and returns its (Sendable) result.
    public func perform<T: Sendable>(_ body: @Sendable (isolated ObjectContext) throws -> T) async rethrows -> T {
        try body(self)
    }

    /// Runs `body` on the context's queue and blocks until it returns; runs it inline when already on that queue,
    /// so re-entry never deadlocks.
    ///
    /// Blocking the main thread on a busy private queue stalls the app; prefer ``perform(_:)``.
    public nonisolated func performAndWait<T: Sendable>(_ body: @Sendable (isolated ObjectContext) throws -> T) rethrows -> T {
        if executor.isCurrent {
            return try assumeIsolated { try body($0) }
        }
        switch executor {
        case .main:
            return try DispatchQueue.main.sync { try self.assumeIsolated { try body($0) } }
        case .queue(let queue):
            return try queue.sync { try self.assumeIsolated { try body($0) } }
        }
    }

    // MARK: Objects

    /// Inserts a new object of `entity` with its default values; it has a temporary ID until saved.
    public func insert(_ entity: ModelEntity) throws -> ManagedObject {
        state.checkExecutor()
        return try state.insert(entity)
    }

    /// Inserts an object made by its class's own initializer, as SwiftData's `context.insert(_:)` does: with the
    /// values it was given, and the new objects it links to (see ``ManagedObject/init()``). An object this context
    /// already has is left as it is.
    ///
    /// ```swift
    /// let book = Book(title: "Dune", author: Author(name: "Frank Herbert"))
    /// try ctx.insert(book)            // the author too
    /// ```
    ///
    /// - Throws: ``ObjectGraphError/crossContext(entity:objectID:reason:)`` for an object of another context,
    ///   ``ObjectGraphError/objectInaccessible(entity:objectID:reason:)`` for one that was inserted and let go (its
    ///   context reset, its insert rolled back), ``ObjectGraphError/invalidModel(entity:property:reason:)`` when the
    ///   context's model was not built with its class.
    public func insert(_ object: ManagedObject) throws {
        state.checkExecutor()
        try state.insert(object)
    }

    /// Inserts a new object of the entity named `entityName`.
    ///
    /// - Throws: ``ObjectGraphError/unknownEntity(_:)``, or ``ObjectGraphError/invalidModel(entity:property:reason:)``
    ///   for an abstract entity.
    public func insert(_ entityName: String) throws -> ManagedObject {
        try insert(try coordinator.model.entity(named: entityName))
    }

    /// Marks `object` deleted; delete rules run and the row goes away when the context saves.
    public func delete(_ object: ManagedObject) throws {
        state.checkExecutor()
        try state.delete(object)
    }

    /// The object for `id`: the registered instance, or a fault that loads on first access (no I/O here).
    ///
    /// Asking twice gives the same instance (uniquing).
    public func object(with id: ObjectID) throws -> ManagedObject {
        state.checkExecutor()
        return try state.object(with: id)
    }

    /// The object for `id`, loaded; throws ``ObjectGraphError/objectNotFound(_:)`` when no row exists.
    public func existingObject(with id: ObjectID) throws -> ManagedObject {
        state.checkExecutor()
        return try state.existingObject(with: id)
    }

    /// Gives `objects` permanent IDs now, before they are saved.
    public func obtainPermanentIDs(for objects: [ManagedObject]) throws {
        state.checkExecutor()
        try state.obtainPermanentIDs(for: objects)
    }

    // MARK: Changes

    /// Whether the context has unsaved inserts, deletes or changed values.
    public var hasChanges: Bool {
        state.checkExecutor()
        return state.hasChanges
    }

    /// Objects inserted and not yet saved.
    public var insertedObjects: Set<ManagedObject> { Set(state.pendingInserts) }

    /// Objects with unsaved changed values (setting a value back to the stored one undoes the change).
    public var updatedObjects: Set<ManagedObject> {
        Set(state.updated.objects.filter { !$0.isDeleted && !$0.changedKeys().isEmpty })
    }

    /// Objects deleted and not yet saved.
    public var deletedObjects: Set<ManagedObject> { Set(state.deleted.values) }

    /// How many live objects of this context hold loaded values: what batched fetching keeps bounded.
    public var materializedObjectCount: Int { state.materializedCount.value }

    /// Every object the context holds.
    public var registeredObjects: Set<ManagedObject> { Set(state.registered.objects) }

    /// The object this context holds for `id`, or nil: unlike ``object(with:)``, it never makes a fault of an object
    /// the context does not hold (Core Data's `registeredObject(for:)`). A fault the context holds is returned as one.
    ///
    /// ```swift
    /// if let book = ctx.registeredObject(for: id) { print(book.isFault) }
    /// ```
    public func registeredObject(for id: ObjectID) -> ManagedObject? {
        state.checkExecutor()
        return state.registered[state.coordinator.resolve(id)]
    }

    /// Validates every change, then writes them all in one store transaction.
    ///
    /// On failure nothing is written and the context keeps its changes. Validation failures come together in one
    /// ``ObjectGraphError/validation(_:)``.
    public func save() throws {
        state.checkExecutor()
        try state.save()
    }

    /// Discards every unsaved change: inserted objects go away, updated and deleted ones get their stored values back.
    public func rollback() {
        state.checkExecutor()
        state.rollback()
    }

    /// Forgets every registered object; using one afterwards throws (or, from a typed property, traps) with a message.
    /// Objects keeping each other alive through their relationships are freed.
    public func reset() {
        state.checkExecutor()
        state.reset()
    }

    /// Turns `object` back into a fault, dropping its changes; with `mergeChanges`, reloads the stored values and
    /// keeps its own changed values on top.
    ///
    /// Turned into a fault, the object also lets go of the destinations its relationships handed out, which is how
    /// objects that read each other's relationships (a book and its author) stop keeping each other alive:
    ///
    /// ```swift
    /// for book in books { try ctx.refresh(book, mergeChanges: false) }
    /// ```
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) throws {
        state.checkExecutor()
        try state.refresh(object, mergeChanges: mergeChanges)
    }
}

/// Carries a main-queue context's bookkeeping from its deinit (on some other thread) to the main queue.
// @unchecked Sendable: sound because the deinit that makes it holds the last reference the context had, and the
// main-queue block that receives it is then the only code touching `state` off the main actor's own uses, which run
// on that same queue.
private final class TeardownHandoff: @unchecked Sendable {
    let state: ContextState
    init(state: ContextState) { self.state = state }
}
