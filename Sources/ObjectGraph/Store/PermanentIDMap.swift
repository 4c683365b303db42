/// Which permanent ID each temporary ID became: read like a dictionary, `mapping[temporaryID]`.
///
/// A save gives the new rows of an entity consecutive keys in the order their objects were inserted, and temporary
/// keys come from one counter of the process, each a step further below zero. So a context's inserts map run by
/// run: the i-th object of a run, whose temporary key is the run's first minus i, became the run's first permanent
/// key plus i. The map keeps those runs rather than an entry per object: a 50,000-object import is one run, where
/// hash tables of 50,000 entries (the save's, and the coordinator's memory of it both ways) took a fifth of the
/// save. An ID outside any run, such as an insert a merge policy turned into an update of a stored row (which may be
/// of another entity of the same tree), is a run of one.
///
/// ```swift
/// let result = try store.save(changes)
/// let saved = result.permanentIDs[temporaryID]   // nil when this save did not make it permanent
/// for (temporary, permanent) in result.permanentIDs { print(temporary, "->", permanent) }
/// ```
public struct PermanentIDMap: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// Consecutive objects of one entity: `count` temporary keys from `temporaryKey` down, to as many permanent
    /// keys from `permanentKey` up. The permanent side names its own entity: an upsert's stored row may be of a
    /// sub-entity or a parent of the inserted object's.
    struct Run: Sendable {
        let entityName: String
        let permanentEntityName: String
        let temporaryKey: Int64
        let permanentKey: Int64
        var count: Int64

        var lowestTemporaryKey: Int64 { temporaryKey - count + 1 }
    }

    /// Sorted by temporary key. Temporary keys are unique in the process, so no two runs share one.
    private let runs: [Run]
    /// Positions in `runs` sorted by the permanent side's entity name, then permanent key: the lookups from a
    /// permanent ID. Keys are unique only within an inheritance tree, so the name separates runs of other trees
    /// that share keys.
    private let byPermanentID: [Int]

    /// How many IDs the map holds.
    public let count: Int

    /// Whether the map holds no ID.
    public var isEmpty: Bool { count == 0 }

    init(runs: [Run]) {
        self.runs = runs.sorted { $0.temporaryKey < $1.temporaryKey }
        byPermanentID = self.runs.indices.sorted { [runs = self.runs] in
            (runs[$0].permanentEntityName, runs[$0].permanentKey) < (runs[$1].permanentEntityName, runs[$1].permanentKey)
        }
        count = Int(runs.reduce(0) { $0 + $1.count })
        assert(zip(self.runs, self.runs.dropFirst()).allSatisfy { $0.temporaryKey < $1.lowestTemporaryKey },
               "a temporary key is mapped twice")
    }

    /// A map of `mapping`'s entries, whose keys are temporary IDs.
    public init(_ mapping: [ObjectID: ObjectID]) {
        var builder = Builder()
        builder.add(mapping)
        self = builder.build()
    }

    /// A map of the literal's entries, whose keys are temporary IDs.
    public init(dictionaryLiteral elements: (ObjectID, ObjectID)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// The maps' entries together; an ID in several of them must map to the same ID in each.
    init(merging maps: [PermanentIDMap]) {
        self.init(runs: maps.flatMap(\.runs))
    }

    /// The permanent ID `temporaryID` became, or nil when the map does not hold it.
    public subscript(temporaryID: ObjectID) -> ObjectID? {
        let key = temporaryID.rawKey
        // The last run whose lowest key is at most `key`: the only one that can hold it.
        var low = 0, high = runs.count
        while low < high {
            let middle = (low + high) / 2
            if runs[middle].lowestTemporaryKey <= key { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        let run = runs[low - 1]
        guard key <= run.temporaryKey, run.entityName == temporaryID.entityName else { return nil }
        return ObjectID(entityName: run.permanentEntityName, rawKey: run.permanentKey + (run.temporaryKey - key))
    }

    /// The temporary ID that became `permanentID`, or nil when the map does not hold it.
    public func temporaryID(for permanentID: ObjectID) -> ObjectID? {
        let target = (permanentID.entityName, permanentID.rawKey)
        var low = 0, high = byPermanentID.count
        while low < high {
            let middle = (low + high) / 2
            let run = runs[byPermanentID[middle]]
            if (run.permanentEntityName, run.permanentKey) <= target { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        let run = runs[byPermanentID[low - 1]]
        let offset = permanentID.rawKey - run.permanentKey
        guard run.permanentEntityName == permanentID.entityName, offset < run.count else { return nil }
        return ObjectID(entityName: run.entityName, rawKey: run.temporaryKey - offset)
    }

    /// The span of temporary keys the map holds, or nil when it is empty: a context asking whether IDs inserted
    /// after a save were saved then compares a key, rather than searching.
    var temporaryKeys: ClosedRange<Int64>? {
        guard let first = runs.first, let last = runs.last else { return nil }
        return first.lowestTemporaryKey...last.temporaryKey
    }

    /// Every entry as a pair of the temporary ID and the permanent ID it became, run by run.
    public func makeIterator() -> Iterator { Iterator(runs: runs) }

    /// The entries of a ``PermanentIDMap``, run by run.
    public struct Iterator: IteratorProtocol {
        fileprivate let runs: [Run]
        fileprivate var run = 0
        fileprivate var offset: Int64 = 0

        fileprivate init(runs: [Run]) { self.runs = runs }

        /// The next pair of temporary and permanent IDs.
        public mutating func next() -> (temporary: ObjectID, permanent: ObjectID)? {
            while run < runs.count && offset == runs[run].count {
                run += 1
                offset = 0
            }
            guard run < runs.count else { return nil }
            let current = runs[run]
            defer { offset += 1 }
            return (ObjectID(entityName: current.entityName, rawKey: current.temporaryKey - offset),
                    ObjectID(entityName: current.permanentEntityName, rawKey: current.permanentKey + offset))
        }
    }

    /// Collects entries in the order they come and makes the map: an entry that continues the last run (the same
    /// entities, the next temporary key down and the next permanent key up) extends it.
    package struct Builder {
        private var runs: [Run] = []

        package init() {}

        package mutating func add(_ temporary: ObjectID, _ permanent: ObjectID) {
            if let last = runs.last, last.entityName == temporary.entityName, last.permanentEntityName == permanent.entityName,
               temporary.rawKey == last.temporaryKey - last.count, permanent.rawKey == last.permanentKey + last.count {
                runs[runs.count - 1].count += 1
            } else {
                runs.append(Run(
                    entityName: temporary.entityName, permanentEntityName: permanent.entityName,
                    temporaryKey: temporary.rawKey, permanentKey: permanent.rawKey, count: 1))
            }
        }

        /// Adds every entry of `mapping`, whose keys are temporary IDs: in the order temporary keys are handed out
        /// (down from zero), so consecutive ones extend runs whatever order the dictionary lists them in.
        package mutating func add(_ mapping: [ObjectID: ObjectID]) {
            for (temporary, permanent) in mapping.sorted(by: { $0.key.rawKey > $1.key.rawKey }) { add(temporary, permanent) }
        }

        package func build() -> PermanentIDMap { PermanentIDMap(runs: runs) }
    }
}
