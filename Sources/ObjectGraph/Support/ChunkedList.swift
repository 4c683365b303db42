/// A list kept in chunks of a few hundred elements, so that inserting or removing in the middle moves one chunk,
/// not everything after it: what keeps a fetched results controller's diff for one object independent of the
/// number of results. Copies share chunks until one is changed.
struct ChunkedList<Element>: RandomAccessCollection {
    private(set) var chunks: [[Element]] = []
    /// The number of elements up to and including each chunk.
    private var ends: [Int] = []
    /// 1,024 elements, or fewer to keep a chunk within 16 KB (at least 64): an insert moves half a chunk on average,
    /// and a controller's members are some 70 bytes each, so chunks of 1,024 of them made moving memory most of
    /// placing an object.
    static var chunkLimit: Int { Swift.min(1_024, Swift.max(64, 16_384 / Swift.max(1, MemoryLayout<Element>.stride))) }

    init() {}

    init(_ elements: some Sequence<Element>) {
        var chunk: [Element] = []
        chunk.reserveCapacity(Self.chunkLimit / 2)
        for element in elements {
            chunk.append(element)
            if chunk.count == Self.chunkLimit / 2 {
                chunks.append(chunk)
                chunk = []
            }
        }
        if !chunk.isEmpty { chunks.append(chunk) }
        recountEnds(from: 0)
    }

    var startIndex: Int { 0 }
    var endIndex: Int { ends.last ?? 0 }

    subscript(position: Int) -> Element {
        get {
            let chunk = chunkIndex(containing: position)
            return chunks[chunk][position - start(of: chunk)]
        }
        set {
            let chunk = chunkIndex(containing: position)
            chunks[chunk][position - start(of: chunk)] = newValue
        }
    }

    mutating func append(_ element: Element) { insert(element, at: count) }

    mutating func insert(_ element: Element, at position: Int) {
        precondition(position >= 0 && position <= count, "insert at \(position) of \(count)")
        if chunks.isEmpty {
            chunks = [[element]]
            ends = [1]
            return
        }
        let chunk = position == count ? chunks.count - 1 : chunkIndex(containing: position)
        chunks[chunk].insert(element, at: position - start(of: chunk))
        if chunks[chunk].count > Self.chunkLimit {
            let half = chunks[chunk].count / 2
            let tail = Array(chunks[chunk][half...])
            chunks[chunk].removeSubrange(half...)
            chunks.insert(tail, at: chunk + 1)
        }
        recountEnds(from: chunk)
    }

    @discardableResult
    mutating func remove(at position: Int) -> Element {
        let chunk = chunkIndex(containing: position)
        let element = chunks[chunk].remove(at: position - start(of: chunk))
        if chunks[chunk].isEmpty { chunks.remove(at: chunk) }
        recountEnds(from: chunk)
        return element
    }

    /// The first position whose element `isBefore` rejects, in a list where every element it accepts comes first (a
    /// binary search, as an insertion point in a sorted list). Elements are read in place: reading each through the
    /// subscript copied it, and found its chunk again, at every step.
    func partitioningIndex(where isBefore: (Element) -> Bool) -> Int {
        var low = 0, high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            if isBefore(chunks[middle][chunks[middle].count - 1]) { low = middle + 1 } else { high = middle }
        }
        guard low < chunks.count else { return count }
        let chunk = low
        low = 0
        high = chunks[chunk].count
        while low < high {
            let middle = (low + high) / 2
            if isBefore(chunks[chunk][middle]) { low = middle + 1 } else { high = middle }
        }
        return start(of: chunk) + low
    }

    private func start(of chunk: Int) -> Int { chunk == 0 ? 0 : ends[chunk - 1] }

    /// The chunk holding `position`: the first whose end is past it.
    private func chunkIndex(containing position: Int) -> Int {
        precondition(position >= 0 && position < count, "index \(position) of \(count)")
        var low = 0, high = ends.count - 1
        while low < high {
            let middle = (low + high) / 2
            if ends[middle] > position { high = middle } else { low = middle + 1 }
        }
        return low
    }

    private mutating func recountEnds(from chunk: Int) {
        ends.removeSubrange(Swift.min(chunk, ends.count)...)
        var total = chunk == 0 ? 0 : ends[chunk - 1]
        for index in chunk..<chunks.count {
            total += chunks[index].count
            ends.append(total)
        }
    }
}

extension ChunkedList: Sendable where Element: Sendable {}
