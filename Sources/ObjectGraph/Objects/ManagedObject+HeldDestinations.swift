/// What a source object keeps alive of one of its relationships: the destinations it last handed out.
///
/// Core Data keeps the destinations of a relationship an app has read alive through its source, so that walking
/// from many books to their few authors makes each author once. The registry holds no unchanged object (ARCHITECTURE
/// decision 3), so without this a walk made, loaded and freed an author for every book that reached it. Holding
/// changes lifetimes only: a read returns a held destination only where the registry would return the same object (see
/// ``ManagedObject/heldDestination(forRelationship:id:in:)``), so what a read returns is the same with or without it.
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

    /// The loaded object this object holds for to-one relationship `index`, when it is the object of `id` in
    /// `state`: what the registry would return, found without a lookup (200,000 books reading their prefetched
    /// authors looked each one up again). Every path that removes a loaded object from its context's registry
    /// detaches it or registers it under its new ID, so an attached, loaded object with `id` is the registry's
    /// object for `id`.
    @inline(__always)
    func heldDestination(forRelationship index: Int, id: ObjectID, in state: ContextState) -> ManagedObject? {
        guard Int(heldSingleIndex) == index, case .object(let held) = heldSingle, held.state === state, !held.isFaultStorage,
              held.storedKey == id.rawKey, held.entity.name == id.entityName else { return nil }
        return held
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
