import PredicateFormat

extension ManagedObject {
    /// The objects the fetched property `key` selects for this object, in this object's context: its predicate
    /// with `$FETCH_SOURCE` set to this object (and `$FETCH_SOURCE.key` to its values). Each call fetches (unsaved changes included, as any fetch).
    ///
    /// ```swift
    /// let long = try author.fetchedObjects(forKey: "longBooks")
    /// ```
    ///
    /// - Throws: ``ObjectGraphError/unknownKey(entity:key:)`` when the entity has no fetched property `key`.
    public func fetchedObjects(forKey key: String) throws -> [ManagedObject] {
        guard let property = entity.fetchedProperties.first(where: { $0.name == key }) else {
            throw ObjectGraphError.unknownKey(entity: entity.name, key: key)
        }
        let state = try checkedState()
        var request = FetchRequest(entityName: property.entityName)
        do {
            request.predicate = try FormatPredicate(format: property.predicate, argumentArray: [])
                .substitutingMembers(of: "FETCH_SOURCE") { path in try Self.constant(FormatExpression.keyPath(path).evaluate(with: self)) }
                .withSubstitutionVariables(["FETCH_SOURCE": objectID])
        } catch let error as ObjectGraphError {
            throw error
        } catch {
            throw ObjectGraphError.invalidFetch(entity: entity.name, reason: "fetched property '\(key)': \(error)")
        }
        return try state.fetch(request)
    }

    /// A value read from the fetch source (`$FETCH_SOURCE.countryCode`, `$FETCH_SOURCE.author`) as a constant of
    /// the fetch: Core Data's way to relate objects across stores, by their values.
    private static func constant(_ value: EvaluatedValue) -> FormatExpression {
        switch value {
        case .value(let value): .constant(value)
        case .object(let object): .constant((object as? ManagedObject)?.objectID.predicateArgumentValue ?? .null)
        case .collection(let items): .aggregate(items.map(constant))
        }
    }
}
