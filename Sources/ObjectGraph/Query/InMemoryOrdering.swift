import Foundation
import PredicateFormat

/// Sorting in memory exactly as the SQLite store sorts: NULL first when ascending, numbers before text, text by
/// UTF-8 bytes after the sort key's folding, ties by a final comparison. Used by the in-memory store and by the
/// pending-changes overlay, so results agree with SQL-side sorting.
enum InMemoryOrdering {
    static func order(_ a: AttributeValue, _ b: AttributeValue, _ key: SortKey) -> ComparisonResult {
        let options = key.foldOptions
        guard !options.isEmpty, case .string(let x) = a, case .string(let y) = b else { return a.storeOrder(b) }
        return AttributeValue.string(StringMatching.fold(x, options)).storeOrder(.string(StringMatching.fold(y, options)))
    }

    /// Sorts `items` by `keys`, reading each key's value with `value` (given the key's position in `keys`) once per
    /// item; `tieBreak` orders equal items, and items it leaves equal keep their order. With `prefix`, only the first
    /// `prefix` items of the order are kept, chosen without sorting the rest: a fetch of the first 1,000 of 100,000
    /// pending rows orders 1,000.
    static func sort<Item>(
        _ items: inout [Item], by keys: [SortKey], prefix: Int? = nil,
        value: (Item, Int) throws -> AttributeValue, tieBreak: (Item, Item) -> Bool
    ) throws {
        let width = keys.count
        // One flat array of every item's sort values: an array per item was an allocation per row.
        var values: [AttributeValue] = []
        values.reserveCapacity(items.count * width)
        for item in items {
            for key in keys.indices { values.append(try value(item, key)) }
        }
        let ordered = items
        // A key whose values are all integers (a count, a rank, a key) is compared as plain words: most
        // of a large ordering is comparisons, and comparing two values case by case cost several times more.
        let integers: [[Int64]?] = keys.indices.map { index in
            var column: [Int64] = []
            column.reserveCapacity(items.count)
            for item in 0..<items.count {
                guard case .int(let value) = values[item * width + index] else { return nil }
                column.append(value)
            }
            return column
        }
        func precedes(_ a: Int, _ b: Int) -> Bool {
            for (index, key) in keys.enumerated() {
                if let column = integers[index] {
                    let (x, y) = (column[a], column[b])
                    if x != y { return key.ascending == (x < y) }
                    continue
                }
                let order = Self.order(values[a * width + index], values[b * width + index], key)
                if order != .orderedSame { return key.ascending == (order == .orderedAscending) }
            }
            if tieBreak(ordered[a], ordered[b]) { return true }
            return !tieBreak(ordered[b], ordered[a]) && a < b
        }
        var positions: [Int]
        if let prefix, prefix < items.count {
            positions = smallest(prefix, of: items.count, by: precedes)
        } else {
            positions = Array(items.indices)
            positions.sort(by: precedes)
        }
        items = positions.map { ordered[$0] }
    }

    /// The value `rank` values from the smallest of `values` (0: the smallest), found by partitioning a copy: what a
    /// limited fetch over many pending rows cuts its candidates at before ordering the few left.
    static func value(ranked rank: Int, in values: [Int64]) -> Int64 {
        precondition(rank >= 0 && rank < values.count, "rank \(rank) of \(values.count) values")
        var values = values
        select(rank, in: &values, by: <)
        return values[rank]
    }

    /// The `count` first of the positions `0..<total` in `precedes`' order, in that order: partitioned until the
    /// first `count` are known (about three comparisons per position, where a heap of the kept ones took twenty when
    /// rows came in the opposite order, as an import's do under a descending sort), and only they sorted.
    private static func smallest(_ count: Int, of total: Int, by precedes: (Int, Int) -> Bool) -> [Int] {
        guard count > 0 else { return [] }
        var positions = Array(0..<total)
        select(count - 1, in: &positions, by: precedes)
        var first = Array(positions[0..<count])
        first.sort(by: precedes)
        return first
    }

    /// Reorders `elements` so that the one at `rank` is the one a sort by `precedes` (a strict weak order) would put
    /// there, none after it preceding it and none before it following it: partitioned around pivots, keeping the
    /// side that holds `rank`.
    @inline(__always)
    private static func select<Element>(_ rank: Int, in elements: inout [Element], by precedes: (Element, Element) -> Bool) {
        var low = 0, high = elements.count - 1, rounds = 0
        while low < high {
            rounds += 1
            // Unlucky pivots again and again: sort what is left rather than risk quadratic time.
            if rounds > 64 {
                elements[low...high].sort(by: precedes)
                return
            }
            let middle = low + (high - low) / 2
            if precedes(elements[middle], elements[low]) { elements.swapAt(middle, low) }
            if precedes(elements[high], elements[low]) { elements.swapAt(high, low) }
            if precedes(elements[high], elements[middle]) { elements.swapAt(high, middle) }
            let pivot = elements[middle]
            var i = low, j = high
            while i <= j {
                while precedes(elements[i], pivot) { i += 1 }
                while precedes(pivot, elements[j]) { j -= 1 }
                if i <= j {
                    elements.swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            // Now nothing in low...j follows anything in i...high, and anything between them is equal to the pivot.
            if rank <= j {
                high = j
            } else if rank >= i {
                low = i
            } else {
                return
            }
        }
    }
}

/// Reads rows' sort values by their attributes' positions: evaluating each key path per row (a dictionary lookup
/// per key, then the evaluator) cost more than ordering 100,000 pending rows. A key that is not an attribute of the
/// row's entity is read by the caller's fallback, as before. Immutable, so that the hot closures that read through
/// it pay no exclusivity check.
struct AttributeSortValues {
    /// Each entity's positions of the keys: a fetch's entity and its sub-entities, a handful at most.
    private let positions: [(entityName: String, ofKeys: [Int?])]

    init(model: Model, keys: [SortKey], entityNames: some Sequence<String>) {
        positions = entityNames.map { name in
            let entity = model.entityIfPresent(name)
            return (name, keys.map { key in key.keyPath.count == 1 ? entity?.attributeIndex[key.keyPath[0]] : nil })
        }
    }

    /// The value of `snapshot` for the sort key at `key`, as the evaluator would read it.
    func value(of snapshot: Snapshot, key: Int, fallback: () throws -> AttributeValue) rethrows -> AttributeValue {
        try value(entityName: snapshot.objectID.entityName, values: snapshot.values, key: key, fallback: fallback)
    }

    /// The attribute position of the sort key at `key` in each entity's rows, when it is an attribute of all of them.
    func positions(ofKey key: Int) -> [(entityName: String, position: Int)]? {
        var found: [(entityName: String, position: Int)] = []
        for entry in positions {
            guard key < entry.ofKeys.count, let position = entry.ofKeys[key] else { return nil }
            found.append((entry.entityName, position))
        }
        return found
    }

    /// The value of a row of `entityName` with `values` for the sort key at `key`.
    func value(entityName: String, values: AttributeValues, key: Int, fallback: () throws -> AttributeValue) rethrows -> AttributeValue {
        guard let entry = positions.first(where: { $0.entityName == entityName }), let position = entry.ofKeys[key] else {
            return try fallback()
        }
        // Through the evaluator's value, so that the order is the one every other read of the key sorts by.
        return AttributeValue(values[position].predicateValue)
    }
}
