import PredicateFormat

/// Objects are what the evaluator reads when a fetch judges unsaved changes in memory.
extension ManagedObject: IdentifiableSource {
    public var sourceIdentity: PredicateValue { .int(objectID.rawKey) }

    public func matchesIdentity(_ value: PredicateValue) throws(FormatPredicateError) -> Bool {
        value == .int(objectID.rawKey)
    }

    /// False for an unordered to-many relationship: `[n]` picks from ordered ones only, on every store.
    public func keepsOrder(forKey key: String) -> Bool {
        entity.keepsOrder(forKey: key)
    }

    public func predicateValue(forKey key: String) throws(FormatPredicateError) -> EvaluatedValue {
        do {
            if entity.attributeIndex[key] != nil { return .value(try value(forKey: key).predicateValue) }
            guard let index = entity.relationshipIndex[key] else {
                throw FormatPredicateError.unknownKey(entity: entity.name, key: key)
            }
            if entity.relationships[index].isToMany {
                return .collection(try objects(forKey: key).map { .object($0) })
            }
            return try object(forKey: key).map { .object($0) } ?? .value(.null)
        } catch let error as FormatPredicateError {
            throw error
        } catch let error as ObjectGraphError {
            throw .evaluation(error.description)
        } catch {
            throw .evaluation("\(error)")
        }
    }
}
