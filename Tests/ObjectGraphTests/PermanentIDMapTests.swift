import Testing
@testable import ObjectGraph

/// ``PermanentIDMap`` keeps runs of consecutive keys; whatever the runs, it must answer exactly as the dictionary of
/// its entries would, both ways.
@Suite struct PermanentIDMapTests {
    /// A small deterministic generator, so a failure names a seed that reproduces it.
    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
    }

    /// Entries as saves make them: temporary keys going down, permanent keys going up within each tree, runs broken
    /// by gaps (objects inserted elsewhere, or deleted before the save) and by changes of entity. Book and Novel share
    /// one tree's keys; Tag is another tree whose keys overlap Book's.
    static func entries(seed: UInt64, count: Int) -> [(ObjectID, ObjectID)] {
        var random = Generator(state: seed)
        var temporaryKey: Int64 = -1 - Int64(random.next(1000))
        var nextKey: [String: Int64] = ["Book": 1, "Tag": 1]
        let entities = ["Book", "Novel", "Tag"]
        var entity = "Book"
        var entries: [(ObjectID, ObjectID)] = []
        for _ in 0..<count {
            if random.next(10) == 0 { entity = entities[random.next(3)] }
            let tree = entity == "Tag" ? "Tag" : "Book"
            if random.next(8) == 0 { temporaryKey -= Int64(1 + random.next(3)) }
            if random.next(8) == 0 { nextKey[tree]! += Int64(1 + random.next(3)) }
            entries.append((ObjectID(entityName: entity, rawKey: temporaryKey), ObjectID(entityName: entity, rawKey: nextKey[tree]!)))
            temporaryKey -= 1
            nextKey[tree]! += 1
        }
        return entries
    }

    static func check(_ map: PermanentIDMap, against entries: [(ObjectID, ObjectID)]) {
        let reference = Dictionary(uniqueKeysWithValues: entries)
        let inverse = Dictionary(uniqueKeysWithValues: entries.map { ($1, $0) })
        #expect(map.count == reference.count)
        #expect(map.isEmpty == reference.isEmpty)
        for (temporary, permanent) in entries {
            #expect(map[temporary] == permanent, "\(temporary)")
            #expect(map.temporaryID(for: permanent) == temporary, "\(permanent)")
        }
        // Iteration yields every entry once.
        let listed = Array(map)
        #expect(listed.count == reference.count)
        #expect(Dictionary(listed.map { ($0.temporary, $0.permanent) }, uniquingKeysWith: { first, _ in first }) == reference)
        // Keys around every entry, and under other entities' names: found exactly when the dictionary has them.
        let lowest = entries.map(\.0.rawKey).min() ?? 0, highest = entries.map(\.1.rawKey).max() ?? 0
        for name in ["Book", "Novel", "Tag", "Author"] {
            for key in (lowest - 2)...0 {
                let id = ObjectID(entityName: name, rawKey: key)
                #expect(map[id] == reference[id], "\(id)")
            }
            for key in 0...(highest + 2) {
                let id = ObjectID(entityName: name, rawKey: key)
                #expect(map.temporaryID(for: id) == inverse[id], "\(id)")
            }
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func aMapAnswersAsTheDictionaryOfItsEntries(seed: UInt64) {
        let entries = Self.entries(seed: seed, count: 400)
        var builder = PermanentIDMap.Builder()
        for (temporary, permanent) in entries { builder.add(temporary, permanent) }
        Self.check(builder.build(), against: entries)
        // Made from the dictionary, in whatever order it lists its entries.
        Self.check(PermanentIDMap(Dictionary(uniqueKeysWithValues: entries)), against: entries)
        // Three saves' maps merged, the way the coordinator's memory compacts them.
        let thirds = stride(from: 0, to: entries.count, by: 150).map { Array(entries[$0..<min($0 + 150, entries.count)]) }
        let maps = thirds.map { part in
            var builder = PermanentIDMap.Builder()
            for (temporary, permanent) in part { builder.add(temporary, permanent) }
            return builder.build()
        }
        Self.check(PermanentIDMap(merging: maps), against: entries)
    }

    /// A merge policy's upsert maps an inserted object to a stored row of another entity of its tree (a Novel found
    /// by a Book's uniqueness constraint): the permanent side keeps its own entity, both ways, beside ordinary runs.
    @Test func anEntryMayNameAnotherEntityOnItsPermanentSide() {
        var entries = Self.entries(seed: 9, count: 40)
        let lowest = entries.map(\.0.rawKey).min()!
        entries.append((ObjectID(entityName: "Book", rawKey: lowest - 5), ObjectID(entityName: "Novel", rawKey: 9_000)))
        entries.append((ObjectID(entityName: "Novel", rawKey: lowest - 6), ObjectID(entityName: "Book", rawKey: 9_001)))
        var builder = PermanentIDMap.Builder()
        for (temporary, permanent) in entries { builder.add(temporary, permanent) }
        Self.check(builder.build(), against: entries)
        Self.check(PermanentIDMap(Dictionary(uniqueKeysWithValues: entries)), against: entries)
        #expect(builder.build()[ObjectID(entityName: "Book", rawKey: lowest - 5)] == ObjectID(entityName: "Novel", rawKey: 9_000))
        #expect(builder.build().temporaryID(for: ObjectID(entityName: "Book", rawKey: 9_000)) == nil)
    }

    @Test func anEmptyMapHoldsNothing() {
        let empty: PermanentIDMap = [:]
        Self.check(empty, against: [])
        #expect(empty.temporaryKeys == nil)
    }

    /// A save whose objects were inserted one after another is one run: its span is the save's temporary keys.
    @Test func consecutiveInsertsSpanTheirTemporaryKeys() {
        var builder = PermanentIDMap.Builder()
        for offset in 0..<50_000 as Range<Int64> {
            builder.add(ObjectID(entityName: "Book", rawKey: -10 - offset), ObjectID(entityName: "Book", rawKey: 7 + offset))
        }
        let map = builder.build()
        #expect(map.count == 50_000)
        #expect(map.temporaryKeys == -50_009 ... -10)
        #expect(map[ObjectID(entityName: "Book", rawKey: -10)] == ObjectID(entityName: "Book", rawKey: 7))
        #expect(map[ObjectID(entityName: "Book", rawKey: -50_009)] == ObjectID(entityName: "Book", rawKey: 50_006))
        #expect(map[ObjectID(entityName: "Book", rawKey: -50_010)] == nil)
        #expect(map.temporaryID(for: ObjectID(entityName: "Book", rawKey: 50_007)) == nil)
    }
}
