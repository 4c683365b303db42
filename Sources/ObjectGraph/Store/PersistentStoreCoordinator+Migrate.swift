/// Copying a store's objects into another store.
extension PersistentStoreCoordinator {
    /// Copies every object of this coordinator's store, with its values, relationships and order, into
    /// `destination`, an empty store of the same model (another SQLite file, a PostgreSQL database, memory), in one
    /// save, and returns a coordinator on it: Core Data's `migratePersistentStore(_:to:options:type:)`. Objects keep
    /// their keys, so IDs saved elsewhere still name them; the app's metadata comes along; persistent history stays
    /// behind (the copy starts its own).
    ///
    /// ```swift
    /// let server = try PostgresStore(configuration: configuration, model: model)
    /// let moved = try coordinator.migratePersistentStore(to: server)
    /// ```
    ///
    /// - Throws: ``ObjectGraphError/storeWriteFailed(path:reason:)`` when `destination` already holds objects, the
    ///   stores' own errors otherwise; no object is written to `destination` then (its key sequences may have moved).
    public func migratePersistentStore(to destination: any PersistentStore) throws -> PersistentStoreCoordinator {
        let roots = model.entities.filter { $0.description.parentName == nil }
        for root in roots where try destination.count(StoreFetchRequest(entityName: root.name)) > 0 {
            throw ObjectGraphError.storeWriteFailed(
                path: destination.location, reason: "it already holds \(root.name) objects: a store is copied into an empty one only; nothing was written")
        }
        var changes = ChangeSet()
        var owners: [String: [ObjectID]] = [:]
        for root in roots {
            let rows = try store.fetch(StoreFetchRequest(entityName: root.name))
            guard let highest = rows.map(\.objectID.rawKey).max() else { continue }
            // The copy's keys are the source's: its sequence moves past them, for the objects made after.
            _ = try destination.allocatePrimaryKeys(rootEntity: root.name, count: Int(highest))
            for row in rows {
                let entity = try model.entity(named: row.objectID.entityName)
                var toOne = row.toOne
                if toOne.count < entity.toOneCount { toOne += Array(repeating: nil, count: entity.toOneCount - toOne.count) }
                changes.inserted.append(ChangeSet.Row(
                    objectID: row.objectID, version: 0, values: row.values, toOne: toOne, changedAttributes: [], changedToOne: []))
                owners[entity.name, default: []].append(row.objectID)
            }
        }
        for (entityName, ids) in owners {
            let entity = try model.entity(named: entityName)
            for relationship in entity.relationships where relationship.isToMany && relationship.keepsContentsApart {
                for (owner, destinations) in zip(ids, try store.relatedIDs(of: ids, relationship: relationship)) where !destinations.isEmpty {
                    changes.toMany.append(ChangeSet.ToManyContents(objectID: owner, relationship: relationship.name, destinations: destinations))
                }
            }
        }
        changes.source = TransactionSource(author: "migratePersistentStore", contextName: nil)
        if !changes.isEmpty { _ = try destination.save(changes) }
        let metadata = try store.metadata()
        if !metadata.isEmpty { try destination.setMetadata(metadata) }
        return PersistentStoreCoordinator(model: model, store: destination)
    }
}
