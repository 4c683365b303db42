/// A context's map from IDs to live objects. It does not keep objects alive, as Core Data's does not: an unchanged
/// object lives as long as the app holds it (changed ones are held by the context's change sets), so reading a
/// million objects in batches never keeps a million objects alive. Uniquing holds: while an object lives, its ID
/// leads to it.
///
/// Entries are unretained references rather than `weak` ones: a weak reference gives every object a side table,
/// which makes each retain and release of it take the slow path, and a registry of weak entries keeps an entry for
/// every object that has died until it is swept. Instead each object removes its own entry when it is deallocated
/// (``ManagedObject``'s `deinit`, which runs on its context's executor because objects never leave it), and every
/// path that detaches an object from its context removes the entry first, so an entry never outlives its object.
struct ObjectRegistry {
    private var entries: [ObjectID: Unmanaged<ManagedObject>] = [:]

    subscript(id: ObjectID) -> ManagedObject? {
        get { entries[id]?.takeUnretainedValue() }
        set { entries[id] = newValue.map { Unmanaged.passUnretained($0) } }
    }

    /// Removes the entry for `id` if it is `object`'s (another object may have been registered under the ID since).
    /// Compares addresses only, so it is safe to call from `object`'s `deinit`.
    mutating func remove(_ id: ObjectID, ifItIs object: ManagedObject) {
        guard let entry = entries[id], entry.toOpaque() == Unmanaged.passUnretained(object).toOpaque() else { return }
        entries[id] = nil
    }

    /// The object registered for `id`, or the one `make` creates, registered: one lookup either way (a large fetch
    /// registers every row it reads).
    mutating func object(for id: ObjectID, orRegister make: () -> ManagedObject) -> (object: ManagedObject, isNew: Bool) {
        var created: ManagedObject?
        // The default is evaluated only when `id` is absent, and the modifying access stores it: a single probe.
        let entry = Self.touch(&entries[id, default: {
            let object = make()
            created = object
            return Unmanaged.passUnretained(object)
        }()])
        if let created { return (created, true) }
        return (entry.takeUnretainedValue(), false)
    }

    @inline(__always)
    private static func touch(_ entry: inout Unmanaged<ManagedObject>) -> Unmanaged<ManagedObject> { entry }

    /// The number of registered objects.
    var count: Int { entries.count }

    /// Every registered object.
    var objects: [ManagedObject] { entries.values.map { $0.takeUnretainedValue() } }

    mutating func reserveCapacity(_ count: Int) { entries.reserveCapacity(count) }

    mutating func removeAll() { entries = [:] }
}
