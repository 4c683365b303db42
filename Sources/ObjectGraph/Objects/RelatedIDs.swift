/// The contents of a loaded to-many relationship: the IDs in order, and membership tests.
///
/// Most to-many relationships an app walks hold a few members (a book's tags, an order's lines), and a walk loads one
/// per object: a set for each list was two more allocations and a hash per member, for tests a scan of a few IDs
/// answers sooner. So a list keeps a set only past ``linearLimit`` members.
struct RelatedIDs: Equatable {
    /// The members, in order.
    private(set) var ids: [ObjectID] = []
    /// The members as a set, kept once there are more than ``linearLimit``.
    private var index: Set<ObjectID>?

    /// The longest list tested by a scan.
    static var linearLimit: Int { 16 }

    init(_ ids: [ObjectID] = []) {
        self.ids = ids
        index = ids.count > Self.linearLimit ? Set(ids) : nil
    }

    /// The members as a set.
    var members: Set<ObjectID> { index ?? Set(ids) }

    func contains(_ id: ObjectID) -> Bool {
        if let index { return index.contains(id) }
        return ids.contains(id)
    }

    /// Whether both hold the same contents: the same members in the same order for an ordered relationship, in any
    /// order otherwise. How a loaded list is judged changed against the committed one.
    func isSame(as other: RelatedIDs, ordered: Bool) -> Bool {
        ordered ? ids == other.ids : hasSameMembers(as: other)
    }

    /// Whether both hold the same members, in any order.
    func hasSameMembers(as other: RelatedIDs) -> Bool {
        if index != nil || other.index != nil { return members == other.members }
        return ids.allSatisfy(other.contains) && other.ids.allSatisfy(contains)
    }

    /// Adds `id` at the end unless it is a member; returns whether it was added.
    @discardableResult
    mutating func append(_ id: ObjectID) -> Bool {
        guard !contains(id) else { return false }
        ids.append(id)
        if index != nil {
            index!.insert(id)
        } else if ids.count > Self.linearLimit {
            index = Set(ids)
        }
        return true
    }

    /// Removes `id` if it is a member; returns whether it was removed.
    @discardableResult
    mutating func remove(_ id: ObjectID) -> Bool {
        guard let position = ids.firstIndex(of: id) else { return false }
        ids.remove(at: position)
        index?.remove(id)
        return true
    }

    /// Removes every member of `gone`, in one pass over the list.
    mutating func remove(_ gone: Set<ObjectID>) {
        if index != nil {
            let before = index!.count
            index!.subtract(gone)
            if index!.count == before { return }
        }
        ids.removeAll { gone.contains($0) }
    }

    mutating func replace(_ old: ObjectID, with new: ObjectID) {
        guard let position = ids.firstIndex(of: old) else { return }
        ids[position] = new
        if index != nil {
            index!.remove(old)
            index!.insert(new)
        }
    }

    static func == (lhs: RelatedIDs, rhs: RelatedIDs) -> Bool { lhs.ids == rhs.ids }
}
