extension Model {
    /// The part of the model a store of configuration `name` keeps: the configuration's entities alone, as Xcode's
    /// configurations split a model between stores (reference data shipped read-only in one, the user's data in
    /// another). Open each store with its configuration's model, then join them in one coordinator with
    /// ``PersistentStoreCoordinator/init(model:stores:)``.
    ///
    /// ```swift
    /// let reference = try SQLiteStore(
    ///     url: shippedURL, versions: SchemaVersions([model.model(forConfiguration: "Reference")]),
    ///     options: StoreOptions(isReadOnly: true))
    /// ```
    ///
    /// A store holds whole inheritance trees and every relationship of its entities, as Core Data requires
    /// (relationships never cross stores; a fetched property may, since it is a fetch).
    ///
    /// - Throws: ``ObjectGraphError/invalidModel(entity:property:reason:)`` for an unknown configuration, an entity
    ///   whose parent or sub-entity is outside it, or a relationship whose destination is.
    public func model(forConfiguration name: String) throws -> Model {
        guard let members = configurations[name] else {
            let known = configurations.keys.sorted().joined(separator: ", ")
            throw ObjectGraphError.invalidModel(
                entity: "(configuration \(name))", property: nil,
                reason: "the model has no configuration '\(name)'" + (known.isEmpty ? "" : "; it has \(known)"))
        }
        let inside = Set(members)
        var descriptions: [EntityDescription] = []
        for entity in entities where inside.contains(entity.name) {
            try checkSelfContained(entity, in: inside, configuration: name)
            var description = entity.description
            // A fetched property is a fetch, which the coordinator answers from whichever store holds its entity.
            description.fetchedProperties.removeAll { !inside.contains($0.entityName) }
            descriptions.append(description)
        }
        var classes: [String: ManagedObject.Type] = [:]
        for entity in entities where inside.contains(entity.name) { classes[entity.name] = entity.objectType }
        return try Model(entities: descriptions, classes: classes, userInfo: userInfo)
    }

    /// The names of the configurations `entityName` is in, sorted.
    func configurations(including entityName: String) -> [String] {
        configurations.filter { $0.value.contains(entityName) }.keys.sorted()
    }

    private func checkSelfContained(_ entity: ModelEntity, in inside: Set<String>, configuration: String) throws {
        let outside = { (other: String) in "configuration '\(configuration)' leaves out \(other), " }
        if let parent = entity.description.parentName, !inside.contains(parent) {
            throw ObjectGraphError.invalidModel(
                entity: entity.name, property: nil,
                reason: outside(parent) + "its parent entity: a store keeps whole inheritance trees, so add \(parent) to the configuration")
        }
        if let child = entity.selfAndDescendantNames.first(where: { !inside.contains($0) }) {
            throw ObjectGraphError.invalidModel(
                entity: entity.name, property: nil,
                reason: outside(child) + "its sub-entity: a store keeps whole inheritance trees, so add \(child) to the configuration")
        }
        for relationship in entity.relationships where !inside.contains(relationship.destinationEntityName) {
            throw ObjectGraphError.invalidModel(
                entity: entity.name, property: relationship.name,
                reason: outside(relationship.destinationEntityName)
                    + "the relationship's destination: relationships never cross stores (as in Core Data); keep both "
                    + "entities in one configuration, or make the link a fetched property")
        }
    }
}
