/// The rows of a change set that hold each value of one attribute, for `attribute == value` fetches over a pending
/// layer. Rows are named by their position in the set: its inserted rows, then its updated ones.
///
/// A table from each value to the last row holding it, and for each row the row before it with the same value: two
/// flat buffers per attribute. A table of arrays (one per value) cost a save of 50,000 rows with ten indexed
/// attributes half a million small arrays to build, and as many to free, which made the stack's nested import
/// spend most of its time on this index.
struct EqualityIndex: Sendable {
    /// The last row holding each value.
    private var last: [EqualityKey: Int32] = [:]
    /// For each row, the row before it holding the same value, or -1 (also for a row holding no indexed value).
    private var previous: [Int32]

    /// An empty index over a set of `rowCount` rows.
    init(rowCount: Int) {
        precondition(rowCount < Int(Int32.max), "a change set of \(rowCount) rows is too large to index")
        previous = Array(repeating: -1, count: rowCount)
    }

    /// Makes room for `count` more distinct values without growing on the way.
    mutating func reserveCapacity(_ count: Int) { last.reserveCapacity(last.count + count) }

    /// Records that the row at `position` holds `key`; positions are added in increasing order.
    mutating func add(_ key: EqualityKey, at position: Int) {
        let row = Int32(truncatingIfNeeded: position)
        if let before = last.updateValue(row, forKey: key) { previous[position] = before }
    }

    /// The positions of the rows holding `key`, in increasing order.
    func positions(of key: EqualityKey) -> [Int] {
        guard var row = last[key] else { return [] }
        var result: [Int] = []
        while row >= 0 {
            result.append(Int(row))
            row = previous[Int(row)]
        }
        return result.reversed()
    }
}
