/// What a source object keeps alive of one of its relationships: the destinations it last handed out.
///
/// Core Data keeps the destinations of a relationship an app has read alive through its source, so that walking
/// from many books to their few authors makes each author once. The registry holds no unchanged object (ARCHITECTURE
/// decision 3), so without this a walk made, loaded and freed an author for every book that reached it. Holding
/// changes lifetimes only: a read returns held destinations only where the registry would return the same objects (see
/// ``ManagedObject/heldDestination(forRelationship:id:in:)``), so what a read returns is the same with or without them.
enum HeldDestination {
    case nothing
    case object(ManagedObject)
    case objects([ManagedObject])
}

/// Where an object's held destinations are, beside a relationship index in ``ManagedObject/heldSingleIndex``.
enum HeldIndex {
    /// Nothing is held.
    static let none: Int16 = -1
    /// The destinations are in ``ObjectExtras/heldDestinations``.
    static let table: Int16 = -2
}

extension ManagedObject {
    /// Keeps `held` alive through this object, in the place of relationship `index`'s previous destinations.
    @inline(__always)
    func hold(_ held: HeldDestination, forRelationship index: Int) {
        if heldSingleIndex == HeldIndex.none || Int(heldSingleIndex) == index, let single = Int16(exactly: index) {
            heldSingleIndex = single
            heldSingle = held
            return
        }
        if heldSingleIndex != HeldIndex.table { holdInTable() }
        madeExtras().heldDestinations[index] = held
    }

    /// Moves the destinations held so far into a table with a place for every relationship.
    @inline(never)
    private func holdInTable() {
        var table = Array(repeating: HeldDestination.nothing, count: entity.relationships.count)
        if heldSingleIndex >= 0 { swap(&table[Int(heldSingleIndex)], &heldSingle) }
        heldSingleIndex = HeldIndex.table
        madeExtras().heldDestinations = table
    }

    /// What this object holds for relationship `index`, wherever it is held.
    @inline(__always)
    private func held(forRelationship index: Int) -> HeldDestination? {
        if Int(heldSingleIndex) == index { return heldSingle }
        guard heldSingleIndex == HeldIndex.table, let table = extras?.heldDestinations, index < table.count else { return nil }
        return table[index]
    }

    /// Whether `object` is what the registry of `state` returns for `id`, known without a lookup: every path that
    /// removes a loaded object from its context's registry detaches it or registers it under its new ID, so an
    /// attached, loaded object with `id` is the registry's object for `id`.
    @inline(__always)
    private static func isRegistered(_ object: ManagedObject, as id: ObjectID, in state: ContextState) -> Bool {
        object.state === state && !object.isFaultStorage && object.storedKey == id.rawKey && object.entity.name == id.entityName
    }

    /// The object this object holds for to-one relationship `index`, when it is the registry's object for `id` in
    /// `state`: found without a lookup (200,000 books reading their prefetched authors looked each one up again).
    @inline(__always)
    func heldDestination(forRelationship index: Int, id: ObjectID, in state: ContextState) -> ManagedObject? {
        guard case .object(let object)? = held(forRelationship: index), Self.isRegistered(object, as: id, in: state) else { return nil }
        return object
    }

    /// The objects this object holds for to-many relationship `index`, when they are the registry's objects for
    /// `ids` in `state`, in order: the list a prefetch made, handed out without a lookup or a new list per read.
    @inline(__always)
    func heldDestinations(forRelationship index: Int, ids: [ObjectID], in state: ContextState) -> [ManagedObject]? {
        guard case .objects(let objects)? = held(forRelationship: index), objects.count == ids.count else { return nil }
        for position in objects.indices where !Self.isRegistered(objects[position], as: ids[position], in: state) { return nil }
        return objects
    }

    /// Lets go of every destination this object keeps alive: when it turns into a fault or leaves its context.
    ///
    /// This is what breaks a cycle of objects holding each other (a book holding its author, which holds its books),
    /// as Core Data's `refresh(_:mergeChanges: false)` does.
    func releaseHeldDestinations() {
        switch heldSingleIndex {
        case HeldIndex.none: return
        case HeldIndex.table: extras?.heldDestinations = []
        default: heldSingle = .nothing
        }
        heldSingleIndex = HeldIndex.none
    }
}
