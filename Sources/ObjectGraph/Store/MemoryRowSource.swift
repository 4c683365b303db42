import PredicateFormat

/// A row of the in-memory store as the evaluator sees it: attributes, and relationships to other rows.
struct MemoryRowSource: IdentifiableSource {
    let store: InMemoryStore
    let contents: InMemoryStore.Contents
    let id: ObjectID

    var sourceIdentity: PredicateValue { .int(id.rawKey) }

    func matchesIdentity(_ value: PredicateValue) throws(FormatPredicateError) -> Bool { value == .int(id.rawKey) }

    func predicateValue(forKey key: String) throws(FormatPredicateError) -> EvaluatedValue {
        guard let entity = store.model.entityIfPresent(id.entityName),
              let row = contents.rows[entity.rootName]?[id.rawKey] else { return .value(.null) }
        if let index = entity.attributeIndex[key] { return .value(row.values[index].predicateValue) }
        guard let index = entity.relationshipIndex[key] else { throw .unknownKey(entity: entity.name, key: key) }
        if let slot = entity.toOneSlot[index] {
            return row.toOne[slot].map { .object(MemoryRowSource(store: store, contents: contents, id: $0)) } ?? .value(.null)
        }
        do {
            let related = try store.related(id, entity.relationships[index], in: contents)
            return .collection(related.map { .object(MemoryRowSource(store: store, contents: contents, id: $0)) })
        } catch {
            throw .evaluation("\(error)")
        }
    }

    func keepsOrder(forKey key: String) -> Bool {
        store.model.entityIfPresent(id.entityName)?.keepsOrder(forKey: key) ?? true
    }

    func attributeValue(at path: [String], entity: String) throws -> AttributeValue {
        try AttributeValue.read(path, from: self, entity: entity)
    }
}
