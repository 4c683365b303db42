import PredicateFormat

/// The fetch machinery of a context: store reads, the pending-changes overlay, prefetching.
extension ContextState {
    /// The objects of `names` with unsaved changes here: what a fetch must judge in memory.
    func pendingObjects(of names: Set<String>) -> (changed: [ManagedObject], hidden: Set<ObjectID>) {
        var changed: [ManagedObject] = []
        var hidden: Set<ObjectID> = []
        for object in inserted.values where names.contains(object.entity.name) { changed.append(object) }
        for object in updated.values where names.contains(object.entity.name) {
            hidden.insert(object.objectID)
            if !object.isDeleted { changed.append(object) }
        }
        for object in deleted.values where names.contains(object.entity.name) { hidden.insert(object.objectID) }
        return (changed, hidden)
    }

    /// The request's results as objects, in order, sliced; the store does the work when nothing is pending.
    func fetchObjects(_ request: FetchRequest, loadValues: Bool) throws -> [ManagedObject] {
        try request.validate()
        let entity = try model.entity(named: request.entityName)
        let names = Set(request.includesSubentities ? entity.selfAndDescendantNames : [entity.name])
        let pending = request.includesPendingChanges ? pendingObjects(of: names) : (changed: [], hidden: [])
        var storeRequest = request.storeRequest()
        if pending.changed.isEmpty && pending.hidden.isEmpty {
            storeRequest.limit = request.fetchLimit
            storeRequest.offset = request.fetchOffset
            if !loadValues {
                return try coordinator.store.fetchIDs(storeRequest).map { try object(with: $0) }
            }
            return try coordinator.store.fetch(storeRequest).map { try register($0) }
        }
        // Each hidden object can push at most one stored row out of the requested slice: read that many more.
        storeRequest.limit = request.fetchLimit.map { $0 + request.fetchOffset + pending.hidden.count }
        var candidates = try coordinator.store.fetch(storeRequest).filter { !pending.hidden.contains($0.objectID) }.map { try register($0) }
        for object in pending.changed {
            if let predicate = request.predicate {
                do {
                    guard try predicate.evaluate(with: object) else { continue }
                } catch {
                    throw ObjectGraphError.invalidFetch(entity: entity.name, reason: error.description)
                }
            }
            candidates.append(object)
        }
        try InMemoryOrdering.sort(&candidates, by: request.sortKeys, value: { object, path in
            try AttributeValue.read(path, from: object, entity: entity.name)
        }, tieBreak: Self.storeOrder)
        let start = min(request.fetchOffset, candidates.count)
        let end = request.fetchLimit.map { min(start + $0, candidates.count) } ?? candidates.count
        return Array(candidates[start..<end])
    }

    /// Stored rows by key; unsaved inserts after them in insertion order, as their keys will be once saved.
    static func storeOrder(_ lhs: ManagedObject, _ rhs: ManagedObject) -> Bool {
        let (l, r) = (lhs.objectID.rawKey, rhs.objectID.rawKey)
        if (l < 0) != (r < 0) { return l > 0 }
        return l < 0 ? l > r : l < r
    }

    /// The objects for `ids`, loading the values of those not yet loaded in one store read.
    func materialize(_ ids: [ObjectID]) throws -> [ManagedObject] {
        var objects = try ids.map { try object(with: $0) }
        let missing = objects.filter(\.isFaultStorage).map(\.objectID).filter { rowCache[$0] == nil }
        if !missing.isEmpty {
            for snapshot in try coordinator.store.snapshots(for: missing) { rowCache[snapshot.objectID] = snapshot }
        }
        for object in objects where object.isFaultStorage {
            if let snapshot = rowCache.removeValue(forKey: object.objectID) { fill(object, from: snapshot) }
        }
        objects = objects.filter { !$0.isFaultStorage }
        return objects
    }

    /// Loads the objects of relationship key paths for `objects` with one store read per relationship and level.
    func prefetch(_ paths: [String], for objects: [ManagedObject]) throws {
        for path in paths {
            var level = objects
            for key in path.split(separator: ".").map(String.init) {
                var next: [ObjectID] = []
                for (entityName, group) in Dictionary(grouping: level, by: { $0.entity.name }) {
                    let entity = try model.entity(named: entityName)
                    guard let index = entity.relationshipIndex[key] else {
                        throw ObjectGraphError.invalidFetch(entity: entityName, reason: "cannot prefetch '\(path)': \(entityName) has no relationship '\(key)'")
                    }
                    let relationship = entity.relationships[index]
                    if let slot = entity.toOneSlot[index] {
                        next += group.compactMap { $0.toOne[slot] }
                        continue
                    }
                    let owners = group.filter { $0.toMany[index] == nil && !$0.objectID.isTemporaryID }
                    let related = try coordinator.store.relatedIDs(of: owners.map(\.objectID), relationship: relationship)
                    for owner in owners {
                        let ids = related[owner.objectID] ?? []
                        owner.toMany[index] = RelatedIDs(ids)
                        owner.committedToMany[index] = RelatedIDs(ids)
                    }
                    next += group.flatMap { $0.toMany[index]?.ids ?? [] }
                }
                level = try materialize(Array(Set(next)))
                // Keep the values for objects nobody holds yet: reading the relationship later costs no store read.
                for object in level where !object.hasChanges {
                    if let committed = object.committed { rowCache[object.objectID] = committed }
                }
            }
        }
    }
}
