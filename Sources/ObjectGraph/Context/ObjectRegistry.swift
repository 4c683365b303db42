/// A context's map from IDs to live objects, holding them weakly as Core Data does: an unchanged object lives as
/// long as the app holds it (changed ones are held by the context's change sets), so reading a million objects in
/// batches never keeps a million objects alive. Uniquing holds: while an object lives, its ID leads to it.
struct ObjectRegistry {
    private struct Entry {
        weak var object: ManagedObject?
    }

    private var entries: [ObjectID: Entry] = [:]
    private var purgeAt = 4096

    subscript(id: ObjectID) -> ManagedObject? {
        get { entries[id]?.object }
        set {
            guard let newValue else {
                entries[id] = nil
                return
            }
            entries[id] = Entry(object: newValue)
            if entries.count >= purgeAt { purge() }
        }
    }

    /// The number of entries (some may be for objects already gone).
    var count: Int { entries.count }

    /// Every live object.
    var objects: [ManagedObject] { entries.values.compactMap(\.object) }

    mutating func removeAll() { entries = [:] }

    /// Drops entries whose objects are gone, so the map stays proportional to what is alive.
    private mutating func purge() {
        entries = entries.filter { $0.value.object != nil }
        purgeAt = max(4096, entries.count * 2)
    }
}
