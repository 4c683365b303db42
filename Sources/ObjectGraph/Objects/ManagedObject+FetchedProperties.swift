import PredicateFormat

extension ManagedObject {
    /// The objects the fetched property `key` selects for this object, in this object's context: its predicate
    /// with `$FETCH_SOURCE` set to this object. Each call fetches (unsaved changes included, as any fetch).
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
                .withSubstitutionVariables(["FETCH_SOURCE": objectID])
        } catch {
            throw ObjectGraphError.invalidFetch(entity: entity.name, reason: "fetched property '\(key)': \(error.description)")
        }
        return try state.fetch(request)
    }
}
