/// The main-queue context, used synchronously from main-actor code: what ``DataStack/onMain(_:)`` hands out.
///
/// The main context is an actor whose executor is the main actor's; Swift cannot yet say that the two are one,
/// so main-actor code would have to `await` it. This facade offers the same operations synchronously, on the main
/// actor only (it is `@MainActor` and not Sendable), with the same run-time checks.
@MainActor
public struct MainContext {
    private let unchecked: ContextState

    /// The main context's bookkeeping, after the check every context call makes: the compiler proved this runs on
    /// the main actor, but an unsafe escape (a `nonisolated(unsafe)` copy, an `@unchecked Sendable` box) can still
    /// carry the facade to another thread, and that must trap as any other call off a context's queue does.
    var state: ContextState {
        unchecked.checkExecutor()
        return unchecked
    }

    init(_ context: ObjectContext) {
        precondition(context.concurrencyType == .mainQueue, "MainContext needs a main-queue context, not '\(context.name)'")
        // Each call checks its thread and adopts IDs that saves below made permanent (``state``); the check on the
        // main thread is one load (the main thread's ID, remembered), not a question to Dispatch.
        unchecked = context.mainActorState
    }

    /// Inserts a new object of a macro entity class.
    public func insert<T: ManagedEntity>(_ type: T.Type) throws -> T { try state.insert(type) }

    /// Inserts an object made by its class's own initializer, with the new objects it links to (see
    /// ``ObjectContext/insert(_:)-(ManagedObject)``).
    public func insert(_ object: ManagedObject) throws { try state.insert(object) }

    /// Marks an object deleted.
    public func delete(_ object: ManagedObject) throws { try state.delete(object) }

    /// The object for `id`, loaded.
    public func existingObject(with id: ObjectID) throws -> ManagedObject { try state.existingObject(with: id) }

    /// The object main holds for `id`, or nil; it never makes a fault (Core Data's `registeredObject(for:)`).
    public func registeredObject(for id: ObjectID) -> ManagedObject? { state.registered[state.coordinator.resolve(id)] }

    /// The object for `id` as a macro entity class, loaded.
    public func existingObject<T: ManagedEntity>(with id: ObjectID, as type: T.Type) throws -> T {
        try state.existingObject(with: id, as: type)
    }

    /// The objects a request selects.
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] { try state.fetch(request) }

    /// The objects a request selects, as a macro entity class.
    public func fetch<T: ManagedEntity>(_ request: FetchRequest, as type: T.Type) throws -> [T] {
        try state.fetch(request, as: type)
    }

    /// The objects a request selects, as a macro entity class (see ``ObjectContext/fetch(_:_:)``).
    public func fetch<T: ManagedEntity>(_ type: T.Type, _ request: FetchRequest) throws -> [T] {
        try state.fetch(request, as: type)
    }

    /// Every object of a macro entity class matching a format, in the order of `sortedBy`.
    public func fetch<T: ManagedEntity>(_ type: T.Type, sortedBy sortKeys: [String] = [], where format: String? = nil, _ arguments: Any?...) throws -> [T] {
        try fetch(try T.request(format: format, arguments: arguments, orderBy: sortKeys, offset: 0, limit: nil), as: T.self)
    }

    /// The IDs a request selects.
    public func fetchObjectIDs(_ request: FetchRequest) throws -> [ObjectID] { try state.fetchIDs(request) }

    /// The number of objects a request would return.
    public func count(for request: FetchRequest) throws -> Int { try state.count(request) }

    /// Dictionary results.
    public func fetchDictionaries(_ request: FetchRequest) throws -> [[String: AttributeValue]] { try state.fetchDictionaries(request) }

    /// Saves the main context (into the writer, in the nested layout).
    public func save() throws { try state.save() }

    /// Whether the main context has unsaved changes.
    public var hasChanges: Bool { state.hasChanges }

    /// Marks `object` for conflict detection at the next save (see ``ObjectContext/detectConflicts(for:)``).
    public func detectConflicts(for object: ManagedObject) throws { try state.detectConflicts(for: object) }

    /// Refreshes every object the context holds (see ``ObjectContext/refreshAllObjects()``).
    public func refreshAllObjects() throws { try state.refreshAllObjects() }

    /// Whether the context keeps every object it registers alive (see ``ObjectContext/retainsRegisteredObjects``).
    public var retainsRegisteredObjects: Bool {
        get { state.registered.retainsObjects }
        set { state.registered.retainsObjects = newValue }
    }

    /// Whether typed properties read a fault whose row is gone as nil and zero values (see
    /// ``ObjectContext/shouldDeleteInaccessibleFaults``).
    public var shouldDeleteInaccessibleFaults: Bool {
        get { state.shouldDeleteInaccessibleFaults }
        set { state.shouldDeleteInaccessibleFaults = newValue }
    }

    /// Whether `object` belongs to this context.
    public func owns(_ object: ManagedObject) -> Bool { object.state === state }
}
