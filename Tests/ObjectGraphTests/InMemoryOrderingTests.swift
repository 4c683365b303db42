import Foundation
import Testing
@testable import ObjectGraph

/// Ordering in memory keeps the first items of a limited fetch without sorting the rest; what it keeps must be
/// exactly the full sort's prefix, ties and all.
@Suite struct InMemoryOrderingTests {
    struct Item: Equatable {
        var value: AttributeValue
        var key: Int
    }

    func fullSort(_ items: [Item], _ keys: [SortKey]) throws -> [Item] {
        var sorted = items
        try InMemoryOrdering.sort(&sorted, by: keys, value: { item, _ in item.value }, tieBreak: { $0.key < $1.key })
        return sorted
    }

    @Test(arguments: ["random", "ascending", "descending", "equal", "few values"])
    func aPrefixIsTheFullSortsPrefix(_ shape: String) throws {
        var generator = SystemRandomNumberGenerator()
        for count in [0, 1, 2, 3, 10, 257, 5_000] {
            let values: [Int] = switch shape {
            case "ascending": Array(0..<count)
            case "descending": Array((0..<count).reversed())
            case "equal": Array(repeating: 7, count: count)
            case "few values": (0..<count).map { _ in Int.random(in: 0..<4, using: &generator) }
            default: (0..<count).map { _ in Int.random(in: 0..<1_000_000, using: &generator) }
            }
            // Keys shuffled, so that the tie-break is not the input order.
            let keys = Array(0..<count).shuffled(using: &generator)
            let items = zip(values, keys).map { Item(value: .int(Int64($0)), key: $1) }
            for ascending in [true, false] {
                let sortKeys = [SortKey("value", ascending: ascending)]
                let sorted = try fullSort(items, sortKeys)
                for prefix in Set([0, 1, 2, count / 3, count - 1, count, count + 5].filter { $0 >= 0 }) {
                    var kept = items
                    try InMemoryOrdering.sort(&kept, by: sortKeys, prefix: prefix, value: { item, _ in item.value }, tieBreak: { $0.key < $1.key })
                    #expect(kept == Array(sorted.prefix(prefix)), "\(shape), \(count) items, prefix \(prefix), ascending \(ascending)")
                }
            }
        }
    }

    /// Items the tie-break leaves equal keep their order (dictionary results have no tie-break of their own).
    @Test func itemsLeftEqualKeepTheirOrder() throws {
        let items = (0..<300).map { Item(value: .int(Int64($0 % 3)), key: $0) }
        var sorted = items
        try InMemoryOrdering.sort(&sorted, by: [SortKey("value")], value: { item, _ in item.value }, tieBreak: { _, _ in false })
        #expect(sorted.map(\.key) == (0..<3).flatMap { residue in Array(stride(from: residue, to: 300, by: 3)) })
        var first = items
        try InMemoryOrdering.sort(&first, by: [SortKey("value")], prefix: 150, value: { item, _ in item.value }, tieBreak: { _, _ in false })
        #expect(first.map(\.key) == Array(sorted.prefix(150).map(\.key)))
    }

    /// The value of each rank is the sorted array's at that rank, whatever the input's order and ties.
    @Test func aRankedValueIsTheSortedArraysValueAtThatRank() {
        var generator = SystemRandomNumberGenerator()
        for count in [1, 2, 3, 17, 1_000] {
            for values in [
                (0..<count).map { _ in Int64.random(in: -5...5, using: &generator) },
                (0..<count).map { Int64($0) }, (0..<count).map { Int64(count - $0) }, Array(repeating: Int64.min, count: count),
            ] {
                let sorted = values.sorted()
                for rank in Set([0, count / 2, count - 1]) {
                    #expect(InMemoryOrdering.value(ranked: rank, in: values) == sorted[rank], "\(count) values, rank \(rank)")
                }
            }
        }
    }
}
