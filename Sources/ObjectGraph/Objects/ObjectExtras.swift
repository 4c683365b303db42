/// The parts of a managed object that most objects never use, kept in a box of their own made on first use: the
/// loaded to-many contents, and the committed row once it is kept apart from the current one (a fetched object
/// shares one row for both until its first change; see ``ManagedObject/currentIsCommitted``).
///
/// Every fetched row becomes an object, and most are only read: without these 40 bytes (four fields held inline,
/// 32 of them empty) an object is a smaller allocation, with less memory to fault in and fewer fields to release
/// when it goes.
final class ObjectExtras {
    /// Loaded to-many relationships, by relationship index.
    var toMany: [Int: RelatedIDs] = [:]
    /// To-many contents as last loaded or saved, by relationship index.
    var committedToMany: [Int: RelatedIDs] = [:]
    /// The committed row's attribute values while kept apart from the current ones.
    var committedAttributes = AttributeValues.empty
    /// The committed row's to-one destinations while kept apart from the current ones.
    var committedDestinations: [ObjectID?] = []

    /// Drops a committed row kept apart: the current row is the committed one again, or there is none.
    func dropCommittedRow() {
        (committedAttributes, committedDestinations) = (.empty, [])
    }
}
