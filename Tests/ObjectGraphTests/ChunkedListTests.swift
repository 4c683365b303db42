import Testing
@testable import ObjectGraph

/// A chunked list holds exactly what an array given the same inserts and removals holds, across chunk splits and
/// emptied chunks; copies share storage yet change alone.
@Suite struct ChunkedListTests {
    @Test func randomEditsAgreeWithAnArray() {
        var random = SplitMix(state: 11)
        var list = ChunkedList<Int>()
        var array: [Int] = []
        for step in 0..<20_000 {
            if array.isEmpty || Int.random(in: 0..<3, using: &random) > 0 {
                let position = Int.random(in: 0...array.count, using: &random)
                list.insert(step, at: position)
                array.insert(step, at: position)
            } else {
                let position = Int.random(in: 0..<array.count, using: &random)
                #expect(list.remove(at: position) == array.remove(at: position))
            }
            if step % 997 == 0 { #expect(Array(list) == array, "after step \(step)") }
        }
        #expect(Array(list) == array)
        #expect(list.chunks.count > 5, "the edits never split a chunk")
        #expect(list.chunks.allSatisfy { !$0.isEmpty && $0.count <= ChunkedList<Int>.chunkLimit })
        var copy = list
        copy.remove(at: 0)
        copy[5] = -1
        #expect(Array(list) == array)
        #expect(copy.count == array.count - 1 && copy[5] == -1)
        #expect(Array(ChunkedList(array)) == array)
    }

    /// The binary search over chunks finds every insertion point a linear search of the sorted elements finds: at
    /// chunk boundaries, before the first and after the last.
    @Test func partitioningIndexIsTheFirstElementNotBefore() {
        var random = SplitMix(state: 5)
        var list = ChunkedList<Int>()
        #expect(list.partitioningIndex { $0 < 3 } == 0)
        var sorted: [Int] = []
        for _ in 0..<5_000 {
            let value = Int.random(in: 0..<2_000, using: &random)
            let position = list.partitioningIndex { $0 < value }
            #expect(position == (sorted.firstIndex { $0 >= value } ?? sorted.count))
            list.insert(value, at: position)
            sorted.insert(value, at: position)
        }
        #expect(Array(list) == sorted && sorted == sorted.sorted())
        #expect(list.chunks.count > 5)
        for value in [-1, 0, 1_000, 1_999, 2_000] {
            #expect(list.partitioningIndex { $0 < value } == (sorted.firstIndex { $0 >= value } ?? sorted.count))
        }
    }
}
