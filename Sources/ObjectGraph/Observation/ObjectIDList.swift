/// The IDs of a section of a ``FetchedResultsSnapshot``, in order: a random-access collection whose copies share
/// storage, so a snapshot per diff costs the changed part of the results, not all of them.
///
/// ```swift
/// for id in change.snapshot.sections[0].objectIDs { print(id) }
/// let ids = Array(change.snapshot.sections[0].objectIDs)
/// ```
public struct ObjectIDList: RandomAccessCollection, Sendable, Hashable, ExpressibleByArrayLiteral {
    var storage: ChunkedList<ObjectID>

    init(storage: ChunkedList<ObjectID>) { self.storage = storage }

    /// A list of these IDs.
    public init(_ ids: some Sequence<ObjectID>) { storage = ChunkedList(ids) }

    public init(arrayLiteral ids: ObjectID...) { storage = ChunkedList(ids) }

    public var startIndex: Int { 0 }
    public var endIndex: Int { storage.count }
    public subscript(position: Int) -> ObjectID { storage[position] }

    /// Inserts an ID (for applying a diff to a copy).
    public mutating func insert(_ id: ObjectID, at position: Int) { storage.insert(id, at: position) }

    /// Removes the ID at `position` (for applying a diff to a copy).
    @discardableResult
    public mutating func remove(at position: Int) -> ObjectID { storage.remove(at: position) }

    public static func == (a: ObjectIDList, b: ObjectIDList) -> Bool { a.count == b.count && a.elementsEqual(b) }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for id in self { hasher.combine(id) }
    }
}
