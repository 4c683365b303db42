/// An object's loaded to-many contents, by relationship index: nil for a relationship not loaded.
///
/// A list with a place per index up to the highest loaded, not a dictionary: a prefetch loads one relationship for
/// every object of a large fetch, and a dictionary per object was a larger allocation, a hash per read and write,
/// and a table to free with the object (a seventh of a walk over 200,000 books' tags).
struct ToManyTable: Sequence, ExpressibleByDictionaryLiteral {
    private var slots: [RelatedIDs?] = []

    init() {}

    init(dictionaryLiteral elements: (Int, RelatedIDs)...) {
        for (index, contents) in elements { self[index] = contents }
    }

    subscript(index: Int) -> RelatedIDs? {
        get { index < slots.count ? slots[index] : nil }
        set {
            if index >= slots.count {
                guard newValue != nil else { return }
                grow(to: index + 1)
            }
            slots[index] = newValue
        }
        _modify {
            if index >= slots.count { grow(to: index + 1) }
            yield &slots[index]
        }
    }

    /// Places up to `count`, in one allocation and without a list of nils made first.
    private mutating func grow(to count: Int) {
        slots.reserveCapacity(count)
        slots.append(contentsOf: repeatElement(nil, count: count - slots.count))
    }

    /// Whether no relationship is loaded.
    var isEmpty: Bool { !slots.contains { $0 != nil } }

    /// The indexes of the loaded relationships, in order.
    var keys: [Int] { slots.indices.filter { slots[$0] != nil } }

    /// The loaded contents, in index order.
    var values: [RelatedIDs] { slots.compactMap { $0 } }

    func makeIterator() -> some IteratorProtocol<(key: Int, value: RelatedIDs)> {
        slots.enumerated().lazy.compactMap { index, contents in contents.map { (key: index, value: $0) } }.makeIterator()
    }
}
