/// The parts of a managed object that most objects never use, kept in a box of their own made on first use: the
/// loaded to-many contents, the committed row once it is kept apart from the current one (a fetched object shares
/// one row for both until its first change; see ``ManagedObject/currentIsCommitted``), and the destinations it holds
/// once they are more than one relationship's.
///
/// Every fetched row becomes an object, and most are only read: without these 40 bytes (four fields held inline,
/// 32 of them empty) an object is a smaller allocation, with less memory to fault in and fewer fields to release
/// when it goes.
///
/// Its properties are `@exclusivity(unchecked)` for the reason ``ManagedObject/values`` is: only this module's code
/// reaches them, through their object, on its context's executor, and none of it reaches the same property again
/// while modifying it. The run-time checks were a sixth of the saving thread's time for 50,000 changed objects (each
/// first change, and each save's comparison and commit, reads or writes the box).
final class ObjectExtras {
    /// Loaded to-many relationships, by relationship index.
    @exclusivity(unchecked) var toMany = ToManyTable()
    /// To-many contents as last loaded or saved, by relationship index.
    @exclusivity(unchecked) var committedToMany = ToManyTable()
    /// The committed row's attribute values while kept apart from the current ones.
    @exclusivity(unchecked) var committedAttributes = AttributeValues.empty
    /// The committed row's to-one destinations while kept apart from the current ones.
    @exclusivity(unchecked) var committedDestinations: [ObjectID?] = []
    /// The destinations the object keeps alive, by relationship index, once it holds more than one relationship's
    /// (see ``ManagedObject/heldSingle``).
    @exclusivity(unchecked) var heldDestinations: [HeldDestination] = []
    /// The relationships set on an object not inserted yet, by name (see ``ManagedObject/init()``).
    var detachedLinks: [String: [ManagedObject]] = [:]

    /// Drops a committed row kept apart: the current row is the committed one again, or there is none.
    func dropCommittedRow() {
        (committedAttributes, committedDestinations) = (.empty, [])
    }
}
