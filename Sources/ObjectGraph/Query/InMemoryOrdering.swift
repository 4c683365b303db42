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

    /// Sorts `items` by `keys`, reading each key path's value with `value`; `tieBreak` orders equal items.
    static func sort<Item>(
        _ items: inout [Item], by keys: [SortKey], value: (Item, [String]) throws -> AttributeValue, tieBreak: (Item, Item) -> Bool
    ) throws {
        let decorated = try items.map { item in (item, try keys.map { try value(item, $0.keyPath) }) }
        let sorted = decorated.sorted { lhs, rhs in
            for (index, key) in keys.enumerated() {
                let order = Self.order(lhs.1[index], rhs.1[index], key)
                if order != .orderedSame { return key.ascending == (order == .orderedAscending) }
            }
            return tieBreak(lhs.0, rhs.0)
        }
        items = sorted.map(\.0)
    }
}
