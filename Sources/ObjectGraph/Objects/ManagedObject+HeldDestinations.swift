/// What a source object keeps alive of one of its relationships: the destinations it last handed out.
///
/// Core Data keeps the destinations of a relationship an app has read alive through its source, so that walking
/// from many books to their few authors makes each author once. The registry holds no unchanged object (ARCHITECTURE
/// decision 3), so without this a walk made, loaded and freed an author for every book that reached it. Holding
/// changes lifetimes only: every read still asks the registry, so what a read returns is the same with or without it.
enum HeldDestination {
    case nothing
    case object(ManagedObject)
    case objects([ManagedObject])
}

extension ManagedObject {
    /// Keeps `held` alive through this object, in the place of relationship `index`'s previous destinations.
    @inline(__always)
    func hold(_ held: HeldDestination, forRelationship index: Int) {
        if heldDestinations.isEmpty {
            heldDestinations = Array(repeating: .nothing, count: entity.relationships.count)
        }
        heldDestinations[index] = held
    }

    /// Lets go of every destination this object keeps alive: when it turns into a fault or leaves its context.
    ///
    /// This is what breaks a cycle of objects holding each other (a book holding its author, which holds its books),
    /// as Core Data's `refresh(_:mergeChanges: false)` does.
    func releaseHeldDestinations() {
        guard !heldDestinations.isEmpty else { return }
        heldDestinations = []
    }
}
