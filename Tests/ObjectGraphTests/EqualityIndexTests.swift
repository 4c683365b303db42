import Testing
@testable import ObjectGraph

/// A layer's equality index answers `attribute == value` with exactly the rows a scan of the layer finds, in the
/// layer's order, for every entity and indexed attribute, across runs of several entities, inserted and updated
/// rows, repeated values and nulls.
@Suite struct EqualityIndexTests {
    /// A small deterministic generator (a linear congruential one), so a failure repeats.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state
        }
    }

    @Test func theIndexAgreesWithAScanOfTheLayer() throws {
        let model = try Fixtures.model()
        var random = Generator(state: 7)
        let labels: [AttributeValue] = [.null, .string("a"), .string("b"), .string("é")]
        func row(_ entityName: String) throws -> ChangeSet.Row {
            let entity = try model.entity(named: entityName)
            let values = entity.attributes.map { attribute -> AttributeValue in
                switch attribute.type {
                case .string: labels.randomElement(using: &random)!
                case .int32, .int64: Bool.random(using: &random) ? .int(Int64.random(in: 1...4, using: &random)) : .null
                default: .null
                }
            }
            return ChangeSet.Row(objectID: ObjectID.temporary(entityName), version: 0, values: AttributeValues(values),
                                 toOne: Array(repeating: nil, count: entity.toOneCount), changedAttributes: [], changedToOne: [])
        }
        var changes = ChangeSet()
        // Runs of one entity, an entity met again after another, and updated rows after the inserted ones.
        for (entityName, count) in [("Book", 40), ("Tag", 25), ("Book", 30), ("Movie", 10)] {
            for _ in 0..<count { changes.inserted.append(try row(entityName)) }
        }
        for (entityName, count) in [("Tag", 15), ("Book", 20)] {
            for _ in 0..<count { changes.updated.append(try row(entityName)) }
        }
        changes.buildIndex()
        changes.buildEqualityIndexes(model: model)
        let rows = changes.inserted + changes.updated
        var checked = 0
        for entityName in ["Book", "Tag", "Movie"] {
            let entity = try model.entity(named: entityName)
            for (position, attribute) in entity.attributes.enumerated() where EqualityKey.isIndexable(attribute.type) {
                let name = "\(entityName).\(attribute.name)"
                let keys = (labels + (1...5).map { AttributeValue.int($0) }).compactMap(EqualityKey.init)
                for key in keys {
                    let scanned = rows.filter { $0.objectID.entityName == entityName && EqualityKey($0.values[position]) == key }
                        .map(\.objectID)
                    #expect(changes.equalityMatches(name, key) == scanned, "\(name) == \(key)")
                    checked += scanned.count
                }
            }
        }
        // The layer did hold matches: the comparison above was not only of empty answers.
        #expect(checked > 100)
        // An attribute that is not indexed has no answer, rather than an empty one.
        #expect(changes.equalityMatches("Book.nothing", .number(1)) == nil)
    }
}
