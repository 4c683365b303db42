/// A context's objects marked updated since its last save, in the order they were first marked; it holds them.
///
/// A list rather than a table by ID: nothing looks an updated object up by ID (the registry answers that), and a
/// save walks these objects four times (validation, the change set, the commit, the release). In a table's hash
/// order each walk jumped around memory, a cache miss per object and pass: committing and letting go of 50,000
/// changed objects took 55 ms that way, where the usual loop that changed them had visited them in the order a
/// fetch made them, which is their order in memory.
///
/// Membership is the object's ``ManagedObject/isMarkedUpdated`` flag. Removing an object clears the flag and
/// leaves its entry, which walks skip; ``ManagedObject/isListedUpdated`` says an entry exists, so marking the
/// object again does not list it twice.
struct UpdatedObjects {
    private var listed: [ManagedObject] = []
    /// How many listed objects are still marked.
    private(set) var count = 0

    /// The marked objects, in the order they were first marked.
    var objects: LazyFilterSequence<[ManagedObject]> { listed.lazy.filter(\.isMarkedUpdated) }

    /// Marks `object` updated; nothing changes when it already is, but for an edit of its values after its lists
    /// (`listsOnly` false), which clears ``ManagedObject/isMarkedForListsOnly``.
    mutating func insert(_ object: ManagedObject, listsOnly: Bool = false) {
        guard !object.isMarkedUpdated else {
            if !listsOnly { object.isMarkedForListsOnly = false }
            return
        }
        object.isMarkedUpdated = true
        object.isMarkedForListsOnly = listsOnly
        count += 1
        guard !object.isListedUpdated else { return }
        object.isListedUpdated = true
        listed.append(object)
    }

    /// Unmarks `object`; nothing changes when it is not marked.
    mutating func remove(_ object: ManagedObject) {
        guard object.isMarkedUpdated else { return }
        (object.isMarkedUpdated, object.isMarkedForListsOnly) = (false, false)
        count -= 1
    }

    /// Unmarks every object and lets go of them, in the order they were marked.
    mutating func removeAll() {
        for object in listed { (object.isMarkedUpdated, object.isListedUpdated, object.isMarkedForListsOnly) = (false, false, false) }
        listed = []
        count = 0
    }
}
