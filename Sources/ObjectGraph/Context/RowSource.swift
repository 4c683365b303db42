/// What lies beneath a context: the store, for a root context, or its parent's current state (its own unsaved
/// changes included), for a child. Everything crossing it is Sendable.
protocol RowSource: Sendable {
    func snapshots(for ids: [ObjectID]) throws -> [Snapshot]
    func fetch(_ request: StoreFetchRequest) throws -> [Snapshot]
    func count(_ request: StoreFetchRequest) throws -> Int
    /// One list per ID of `ids`, in the same order.
    func relatedIDs(of ids: [ObjectID], relationship: ModelRelationship) throws -> [[ObjectID]]
    func fetchDictionaries(_ request: StoreDictionaryRequest) throws -> [[String: AttributeValue]]
    /// Hands a child's saved changes (its own layer last) to what lies below; `source` names the child (its
    /// ``ContextState``), which does not read its own changes back (see ``ViewChangeLog``).
    func push(_ layers: [ChangeSet], from source: ObjectIdentifier) throws -> SaveResult
    /// A count that changes whenever what lies below shows changes (0 for the store, whose changes reach a root as
    /// merges); read from any thread.
    var generation: Int { get }
}

/// The store beneath a root context.
struct StoreSource: RowSource {
    let coordinator: PersistentStoreCoordinator
    /// The state of the store the root context reads, when it is pinned to one (a query generation).
    let pin: GenerationPin
    var generation: Int { 0 }

    func snapshots(for ids: [ObjectID]) throws -> [Snapshot] { try pin.reading { try coordinator.store.snapshots(for: ids) } }
    func fetch(_ request: StoreFetchRequest) throws -> [Snapshot] { try pin.reading { try coordinator.store.fetch(request) } }
    func count(_ request: StoreFetchRequest) throws -> Int { try pin.reading { try coordinator.store.count(request) } }
    func relatedIDs(of ids: [ObjectID], relationship: ModelRelationship) throws -> [[ObjectID]] {
        try pin.reading { try coordinator.store.relatedIDs(of: ids, relationship: relationship) }
    }
    func fetchDictionaries(_ request: StoreDictionaryRequest) throws -> [[String: AttributeValue]] {
        try pin.reading { try coordinator.store.fetchDictionaries(request) }
    }
    func push(_ layers: [ChangeSet], from source: ObjectIdentifier) throws -> SaveResult {
        precondition(layers.count == 1, "a root context flattens its layers before writing")
        return try coordinator.save(layers[0])
    }
}

/// The parent context beneath a child: every call runs on the parent's queue, against its current state.
///
/// A child blocks while its parent answers, as in Core Data; the parent never blocks on its children, so a tree
/// cannot deadlock unless app code makes a parent wait on a child.
struct ParentSource: RowSource {
    let parent: ObjectContext
    var generation: Int {
        var total = 0
        var context: ObjectContext? = parent
        while let below = context {
            total &+= below.inFlight.viewGeneration.value
            context = below.parent
        }
        return total
    }

    func snapshots(for ids: [ObjectID]) throws -> [Snapshot] {
        try parent.performAndWait { try $0.state.currentSnapshots(for: ids) }
    }
    func fetch(_ request: StoreFetchRequest) throws -> [Snapshot] {
        // A root parent publishes its state as "the store plus its pending layers" when it can: read both rather
        // than wait for its queue (which a save to disk holds for long).
        if let rows = try parent.generationPin.reading({ try InFlightSave.fetch(request, from: parent.inFlight, store: parent.coordinator.store) }) {
            return rows
        }
        return try parent.performAndWait { try $0.state.serveFetch(request) }
    }
    func count(_ request: StoreFetchRequest) throws -> Int {
        try parent.performAndWait { try $0.state.serveCount(request) }
    }
    func relatedIDs(of ids: [ObjectID], relationship: ModelRelationship) throws -> [[ObjectID]] {
        try parent.performAndWait { try $0.state.currentRelatedIDs(of: ids, relationship: relationship) }
    }
    func fetchDictionaries(_ request: StoreDictionaryRequest) throws -> [[String: AttributeValue]] {
        try parent.performAndWait { try $0.state.below.fetchDictionaries(request) }
    }
    func push(_ layers: [ChangeSet], from source: ObjectIdentifier) throws -> SaveResult {
        var result = SaveResult()
        result.discarded = parent.performAndWait { $0.state.receive(layers, from: source) }
        return result
    }
}
