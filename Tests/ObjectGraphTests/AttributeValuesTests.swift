import Foundation
import Testing
@testable import ObjectGraph

/// `AttributeValues` behaves as `[AttributeValue]` does, whatever its storage: a row of its own or a block shared
/// with other rows of a fetch.
@Suite struct AttributeValuesTests {
    static let everyKind: [AttributeValue] = [
        .null, .bool(true), .bool(false), .int(.min), .int(.max), .int(0), .double(-0.0), .double(.infinity),
        .double(2.5), .date(Date(timeIntervalSinceReferenceDate: 123_456.789)), .string("Dune"), .string(""),
        .string(String(repeating: "é", count: 40)), .decimal(Decimal(string: "3.14159")!), .data(Data([0, 1, 2])),
        .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!), .url(URL(string: "https://example.com/a")!),
    ]

    @Test func everyKindReadsBackAsWritten() {
        let values = AttributeValues(Self.everyKind)
        #expect(Array(values) == Self.everyKind)
        #expect(values.count == Self.everyKind.count)
        #expect(values == AttributeValues(Self.everyKind))
        #expect(values.hashValue == AttributeValues(Self.everyKind).hashValue)
        #expect(values != AttributeValues(Self.everyKind.dropLast()))
        #expect(AttributeValues([]) == [])
    }

    /// Equality is the arrays' equality, value by value: -0.0 equals 0.0, and an integer never equals a double.
    @Test func equalityIsTheArraysEquality() {
        let pairs: [([AttributeValue], [AttributeValue])] = [
            ([.double(-0.0)], [.double(0.0)]), ([.int(1)], [.double(1)]), ([.null], [.string("")]),
            ([.bool(true)], [.int(1)]), ([.string("a"), .int(2)], [.string("a"), .int(2)]),
            ([.date(Date(timeIntervalSinceReferenceDate: 1))], [.double(1)]),
        ]
        for (left, right) in pairs {
            #expect((AttributeValues(left) == AttributeValues(right)) == (left == right), "\(left) vs \(right)")
        }
    }

    /// Random writes of random kinds agree with an array, copies taken along the way keep their values, and a
    /// position switching between strings and numbers never grows the side list beyond one entry per position.
    @Test func randomWritesAgreeWithAnArray() {
        var generator = FetchConsistencyTests.SplitMix(seed: 7)
        var values = AttributeValues(Array(repeating: AttributeValue.null, count: 12))
        var mirror = Array(repeating: AttributeValue.null, count: 12)
        var copies: [(AttributeValues, [AttributeValue])] = []
        for step in 0..<20_000 {
            let position = generator.below(12)
            let value = Self.everyKind[generator.below(Self.everyKind.count)]
            values[position] = value
            mirror[position] = value
            if step % 997 == 0 { copies.append((values, mirror)) }
            #expect(values[position] == value)
        }
        #expect(Array(values) == mirror)
        #expect(values.storage!.header.others.count <= 12)
        for (copy, expected) in copies { #expect(Array(copy) == expected) }
    }

    /// A copy made by a write shares the original's strings until one side writes one: each side then sees only
    /// its own writes, whichever side writes first and whatever kind it writes.
    @Test func aCopyAndItsOriginalKeepTheirOwnValuesSetAside() {
        let start: [AttributeValue] = [.string("title"), .int(1), .data(Data([1])), .null]
        for (side, position, value) in [(0, 0, AttributeValue.string("new")), (1, 0, .int(7)), (0, 2, .null), (1, 1, .int(2))] {
            var original = AttributeValues(start)
            var copy = original
            var expected = (start, start)
            copy[1] = .int(5)
            expected.1[1] = .int(5)
            #expect(copy.storage !== original.storage)
            if side == 0 {
                original[position] = value
                expected.0[position] = value
            } else {
                copy[position] = value
                expected.1[position] = value
            }
            copy[3] = .string("set aside later")
            expected.1[3] = .string("set aside later")
            #expect(Array(original) == expected.0 && Array(copy) == expected.1, "write of \(value) at \(position)")
        }
    }

    /// What a save compares: `differs(from:at:)` and `isNull(at:)` answer as the values themselves do, for rows
    /// of their own, copies sharing storage, and rows of a shared block.
    @Test func positionalComparisonsAgreeWithTheValues() {
        var generator = FetchConsistencyTests.SplitMix(seed: 11)
        let kinds = Self.everyKind + [.double(0.0), .string("Dune"), .int(0)]
        var allocator = AttributeValues.RowAllocator(count: 6, othersCapacity: 6)
        for _ in 0..<2_000 {
            let left = (0..<6).map { _ in kinds[generator.below(kinds.count)] }
            var right = left
            for position in 0..<6 where generator.below(3) == 0 { right[position] = kinds[generator.below(kinds.count)] }
            // Every kind: short values share the block, data and URLs move the row out.
            let block = allocator.row { writer in for (position, value) in left.enumerated() { writer.set(value, at: position) } }
            #expect(Array(block) == left)
            var copy = AttributeValues(left)
            let original = copy
            copy[generator.below(6)] = right[0]
            let pairs: [(AttributeValues, AttributeValues)] = [
                (AttributeValues(left), AttributeValues(right)), (original, copy), (original, original), (block, AttributeValues(right)),
            ]
            for (a, b) in pairs {
                for position in 0..<6 {
                    #expect(a.differs(from: b, at: position) == (a[position] != b[position]), "\(a) vs \(b) at \(position)")
                    #expect(a.isNull(at: position) == a[position].isNull)
                }
            }
        }
    }

    /// Rows of numbers and short strings share blocks; a row holding data or a long string moves to storage of its
    /// own; writing to one row of a block leaves its neighbours as they were.
    @Test func rowsOfABlockAreIndependent() {
        var allocator = AttributeValues.RowAllocator(count: 3, othersCapacity: 1)
        var rows: [AttributeValues] = []
        var mirrors: [[AttributeValue]] = []
        for row in 0..<300 {
            let mirror: [AttributeValue] = switch row {
            case 150: [.int(Int64(row)), .string(String(repeating: "long ", count: 60)), .null]
            case 200: [.int(Int64(row)), .data(Data([1, 2, 3])), .string("short")]
            case _ where row % 5 == 0: [.int(Int64(row)), .string("title \(row)"), .null]
            default: [.int(Int64(row)), .double(Double(row) / 2), row % 3 == 0 ? .null : .bool(row % 2 == 0)]
            }
            rows.append(allocator.row { writer in
                for (position, value) in mirror.enumerated() { writer.set(value, at: position) }
            })
            mirrors.append(mirror)
        }
        #expect(rows[1].storage === rows[2].storage)
        #expect(rows[100].storage === rows[101].storage, "a short string shares the block")
        #expect(rows[150].storage !== rows[149].storage && rows[150].storage !== rows[151].storage)
        #expect(rows[200].storage !== rows[199].storage && rows[200].storage !== rows[201].storage)
        #expect(Set(rows.map { ObjectIdentifier($0.storage!) }).count < 20)
        for index in stride(from: 0, to: 300, by: 7) {
            rows[index][1] = .string("changed \(index)")
            mirrors[index][1] = .string("changed \(index)")
        }
        for (row, mirror) in zip(rows, mirrors) {
            #expect(Array(row) == mirror)
            #expect(row == AttributeValues(mirror))
            #expect(row.hashValue == AttributeValues(mirror).hashValue)
        }
    }

    /// A sealed block takes no more rows: the next row starts a block of its own, and the rows handed out before
    /// keep their values, short strings included; a row copied out of a block on its first write takes its own
    /// values only.
    @Test func aSealedBlockTakesNoMoreRows() {
        var allocator = AttributeValues.RowAllocator(count: 2, othersCapacity: 1)
        func row(_ index: Int) -> AttributeValues {
            allocator.row { writer in
                writer.setInt(Int64(index), at: 0)
                writer.set(.string("row \(index)"), at: 1)
            }
        }
        let before = (0..<10).map(row)
        allocator.seal()
        let after = (10..<20).map(row)
        #expect(Set(after.map { ObjectIdentifier($0.storage!) }).isDisjoint(with: before.map { ObjectIdentifier($0.storage!) }))
        for (index, values) in (before + after).enumerated() {
            #expect(Array(values) == [.int(Int64(index)), .string("row \(index)")])
        }
        var changed = after[5]
        changed[0] = .int(-1)
        #expect(changed.storage !== after[5].storage && changed.storage!.header.others == [.string("row 15")])
        #expect(Array(changed) == [.int(-1), .string("row 15")] && Array(after[5]) == [.int(15), .string("row 15")])
    }

    /// A block's rows are handed out as they are written; a row of exactly one value per word is still whole.
    @Test func rowsOfNoValuesAndOfManyValues() {
        var empty = AttributeValues.RowAllocator(count: 0)
        #expect(empty.row { _ in }.isEmpty)
        var wide = AttributeValues.RowAllocator(count: 17)
        let rows = (0..<40).map { row in
            wide.row { writer in for position in 0..<17 { writer.setInt(Int64(row * 100 + position), at: position) } }
        }
        for (row, values) in rows.enumerated() {
            #expect(Array(values) == (0..<17).map { .int(Int64(row * 100 + $0)) })
            #expect(values.int64(at: 16) == Int64(row * 100 + 16))
        }
    }
}
