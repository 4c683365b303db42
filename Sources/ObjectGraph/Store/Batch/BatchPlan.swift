import PredicateFormat

/// What planning a batch request reads of a store: one consistent view of its rows (a store's lock held, or one
/// database transaction).
///
/// Rows and destinations are asked for many objects at a time: on a server each call is a round trip, and a batch
/// delete of 10,000 books asked one book at a time took 72 times the two `DELETE`s it comes to.
package protocol BatchPlanReading {
    /// The stored row of each of `ids` (of the ID's entity or one of its sub-entities), nil where there is none.
    func rows(_ ids: [ObjectID]) throws -> [Snapshot?]
    /// The rows a fetch selects, unsliced.
    func select(_ request: StoreFetchRequest) throws -> [Snapshot]
    /// The destinations of `relationship` of each of the stored objects `ids`, all of one entity.
    func related(_ ids: [ObjectID], _ relationship: ModelRelationship) throws -> [[ObjectID]]
    /// Every row of the inheritance tree rooted at `root`: the holders of its uniqueness constraints.
    func rows(ofTree root: String) throws -> [Snapshot]
    /// The row as the evaluator reads it, for a batch update's computed values.
    func source(for row: Snapshot) -> any KeyValueSource
}

/// A batch request as the change set a context would save (rows inserted, updated with their new values, deleted
/// with the delete rules applied), with the objects it names: stores without SQL of their own for a request apply
/// this plan as one save, so every store gives a request the same outcome.
package struct BatchPlan: Sendable {
    package var changes = ChangeSet()
    /// The objects the request names (temporary IDs for new rows).
    package var matched: [ObjectID] = []

    /// Plans `request` over the rows `reading` gives.
    package static func make(_ request: BatchRequest, model: Model, reading: some BatchPlanReading) throws -> BatchPlan {
        switch request {
        case .insert(let insert): try insertPlan(insert, model: model, reading: reading)
        case .update(let update): try updatePlan(update, model: model, reading: reading)
        case .delete(let delete): try deletePlan(delete, model: model, reading: reading)
        }
    }

    /// The request's result once its change set was saved with `saved`.
    package func result(of request: BatchRequest, saved: SaveResult) -> BatchResult {
        guard request.resultType == .objectIDs else { return BatchResult(count: matched.count) }
        return BatchResult(
            count: matched.count, objectIDs: matched.map { saved.permanentIDs[$0] ?? $0 },
            changes: StoreChanges(
                inserted: changes.inserted.map { saved.permanentIDs[$0.objectID] ?? $0.objectID },
                updated: changes.updated.map(\.objectID), deleted: changes.deleted.map(\.objectID)))
    }

    /// New rows, or with uniqueness constraints and ``BatchInsertRequest/upserts``, updates of the stored (or
    /// earlier new) rows they match, as SQLite's `ON CONFLICT DO UPDATE` does.
    static func insertPlan(_ request: BatchInsertRequest, model: Model, reading: some BatchPlanReading) throws -> BatchPlan {
        let columns = try BatchInsertColumns(request, model: model)
        let entity = columns.entity
        let kinds = model.entities.filter { $0.rootName == entity.rootName }
        let constraints = request.upserts ? kinds.flatMap { kind in kind.uniquenessConstraints.map { (kind, $0) } } : []
        let tree = constraints.isEmpty ? [] : try reading.rows(ofTree: entity.rootName)
        let stored = Dictionary(tree.map { ($0.objectID, $0) }) { first, _ in first }
        // Each constraint's values → the row holding them (stored, or new in this request).
        var holders: [[[AttributeValue]: ObjectID]] = constraints.map { kind, keys in
            var table: [[AttributeValue]: ObjectID] = [:]
            for row in tree {
                guard let rowEntity = model.entityIfPresent(row.objectID.entityName), rowEntity.isKind(of: kind) else { continue }
                let tuple = keys.map { row.values[rowEntity.attributeIndex[$0]!] }
                if !tuple.contains(.null) { table[tuple] = row.objectID }
            }
            return table
        }
        var plan = BatchPlan()
        var inserted: [ObjectID: Int] = [:]
        var updated: [ObjectID: Int] = [:]
        let toOneCount = entity.toOneSlot.compactMap { $0 }.count
        let keyAttributes = request.keys.map { entity.attributeIndex[$0]! }
        try columns.forEachRow(of: request) { _, values, gives in
            // The row's values under each constraint that applies to it, nil where one is missing (no match then).
            let tuples = constraints.map { kind, keys -> [AttributeValue]? in
                guard entity.isKind(of: kind) else { return nil }
                let tuple = keys.map { values[entity.attributeIndex[$0]!] }
                return tuple.contains(.null) ? nil : tuple
            }
            let holder = tuples.indices.lazy.compactMap { position in tuples[position].flatMap { holders[position][$0] } }.first
            guard let holder else {
                let id = ObjectID.temporary(entity.name)
                inserted[id] = plan.changes.inserted.count
                plan.changes.inserted.append(ChangeSet.Row(
                    objectID: id, version: 0, values: AttributeValues(values), toOne: Array(repeating: nil, count: toOneCount),
                    changedAttributes: [], changedToOne: []))
                for (position, tuple) in tuples.enumerated() {
                    if let tuple { holders[position][tuple] = id }
                }
                plan.matched.append(id)
                return
            }
            // Over a matched row, only the keys this row gives: a key it leaves out keeps the stored value.
            let given = keyAttributes.indices.filter { gives[$0] }.map { keyAttributes[$0] }
            if let position = inserted[holder] {
                for index in given { plan.changes.inserted[position].values[index] = values[index] }
            } else if let position = updated[holder] {
                for index in given { plan.changes.updated[position].values[index] = values[index] }
            } else if let stored = stored[holder] {
                let kind = try model.entity(named: stored.objectID.entityName)
                var newValues = stored.values
                for index in given { newValues[kind.attributeIndex[entity.attributes[index].name]!] = values[index] }
                updated[holder] = plan.changes.updated.count
                plan.changes.updated.append(ChangeSet.Row(
                    objectID: holder, version: stored.version, values: newValues, toOne: stored.toOne,
                    changedAttributes: given.map { kind.attributeIndex[entity.attributes[$0].name]! }, changedToOne: []))
            }
            plan.matched.append(holder)
        }
        return plan
    }

    /// The objects the predicate selects, each with its new values computed by the evaluator.
    static func updatePlan(_ request: BatchUpdateRequest, model: Model, reading: some BatchPlanReading) throws -> BatchPlan {
        let entity = try model.entity(named: request.entityName)
        let assignments = try request.assignments(of: entity)
        for assignment in assignments {
            if case .keyPath(let path) = assignment.expression, path.count > 1 || entity.relationship(named: path[0]) != nil {
                throw ObjectGraphError.invalidBatchRequest(
                    entity: entity.name, reason: "a new value reads across a to-one relationship, which a batch update cannot; compute it through a context")
            }
        }
        var fetch = StoreFetchRequest(entityName: entity.name)
        fetch.includesSubentities = request.includesSubentities
        fetch.predicate = request.predicate
        var plan = BatchPlan()
        for snapshot in try reading.select(fetch) {
            let kind = try model.entity(named: snapshot.objectID.entityName)
            var values = snapshot.values
            let source = reading.source(for: snapshot)
            var changed: [Int] = []
            for assignment in assignments {
                let index = assignment.index
                let name = entity.attributes[index].name
                let position = kind.attributeIndex[name]!
                if let constant = assignment.constant {
                    values[position] = constant
                } else {
                    let result: EvaluatedValue
                    do {
                        result = try assignment.expression.evaluate(with: source)
                    } catch {
                        throw ObjectGraphError.invalidPredicate(entity: entity.name, error: error)
                    }
                    guard case .value(let value) = result else {
                        throw ObjectGraphError.invalidBatchRequest(entity: entity.name, reason: "the new value of '\(name)' is not a single value")
                    }
                    values[position] = try BatchInsertColumns.computed(AttributeValue(value), attribute: index, of: entity)
                }
                changed.append(position)
            }
            plan.changes.updated.append(ChangeSet.Row(
                objectID: snapshot.objectID, version: snapshot.version, values: values, toOne: snapshot.toOne,
                changedAttributes: changed, changedToOne: []))
            plan.matched.append(snapshot.objectID)
        }
        return plan
    }

    /// The objects selected, those their cascades reach, refused by a deny rule with a surviving destination, and
    /// the survivors whose reference to a deleted object is cleared. Each step reads its rows and destinations for
    /// all the objects of one entity at once (a cascade one level at a time).
    static func deletePlan(_ request: BatchDeleteRequest, model: Model, reading: some BatchPlanReading) throws -> BatchPlan {
        var plan = BatchPlan()
        // The rows read so far, by ID: the versions the deletions are checked against.
        var versions: [ObjectID: Int64] = [:]
        let selected: [Snapshot]
        if let ids = request.objectIDs {
            selected = try reading.rows(try request.checkedObjectIDs(ids, model: model)).compactMap { $0 }
        } else {
            var fetch = StoreFetchRequest(entityName: request.entityName)
            fetch.includesSubentities = request.includesSubentities
            fetch.predicate = request.predicate
            selected = try reading.select(fetch)
        }
        for row in selected { versions[row.objectID] = row.version }
        plan.matched = versions.keys.sorted()
        var doomed = Set(plan.matched)
        var level = plan.matched
        while !level.isEmpty {
            var next: [ObjectID] = []
            try forEachRelationship(of: level, model: model, reading: reading, where: { $0.deleteRule == .cascade }) { _, _, destinations in
                for target in destinations.joined() where doomed.insert(target).inserted { next.append(target) }
            }
            level = next
        }
        let ordered = doomed.sorted()
        // The first refusal in ID order, as deleting them one by one would meet it.
        var refusal: (id: ObjectID, relationship: Int, count: Int)?
        try forEachRelationship(of: ordered, model: model, reading: reading, where: { $0.deleteRule == .deny }) { ids, relationship, destinations in
            for (id, targets) in zip(ids, destinations) {
                let count = targets.count(where: { !doomed.contains($0) })
                if count > 0, refusal.map({ (id, relationship) < ($0.id, $0.relationship) }) ?? true { refusal = (id, relationship, count) }
            }
        }
        if let refusal {
            let entity = try model.entity(named: refusal.id.entityName)
            throw ObjectGraphError.deleteDenied(
                entity: entity.name, objectID: refusal.id, relationship: entity.relationships[refusal.relationship].name, count: refusal.count)
        }
        // Survivors holding a to-one reference to a deleted object: cleared, in ID order, then relationship order. (A
        // cascade leaves no survivor, and a deny refused any above.)
        var clearing: [ObjectID: [(relationship: Int, survivors: [ObjectID])]] = [:]
        try forEachRelationship(of: ordered, model: model, reading: reading, where: { relationship in
            guard relationship.deleteRule == .nullify, relationship.hasInverse, case .inverseForeignKey = relationship.storage else { return false }
            return true
        }) { ids, relationship, destinations in
            for (id, targets) in zip(ids, destinations) {
                let survivors = targets.filter { !doomed.contains($0) }
                if !survivors.isEmpty { clearing[id, default: []].append((relationship, survivors)) }
            }
        }
        let survivorIDs = Array(Set(clearing.values.joined().flatMap(\.survivors)))
        let survivorRows = Dictionary(uniqueKeysWithValues: zip(survivorIDs, try reading.rows(survivorIDs)))
        var cleared: [ObjectID: Int] = [:]
        for id in ordered {
            guard let relationships = clearing[id] else { continue }
            let entity = try model.entity(named: id.entityName)
            for (relationship, survivors) in relationships.sorted(by: { $0.relationship < $1.relationship }) {
                for survivor in survivors {
                    guard let stored = survivorRows[survivor] ?? nil else { continue }
                    let kind = try model.entity(named: stored.objectID.entityName)
                    guard let index = kind.relationshipIndex[entity.relationships[relationship].inverseName], let slot = kind.toOneSlot[index] else { continue }
                    if let position = cleared[survivor] {
                        plan.changes.updated[position].toOne[slot] = nil
                        plan.changes.updated[position].changedToOne.append(slot)
                    } else {
                        var toOne = stored.toOne
                        toOne[slot] = nil
                        cleared[survivor] = plan.changes.updated.count
                        plan.changes.updated.append(ChangeSet.Row(
                            objectID: survivor, version: stored.version, values: stored.values, toOne: toOne, changedAttributes: [], changedToOne: [slot]))
                    }
                }
            }
        }
        let unread = ordered.filter { versions[$0] == nil }
        for (id, stored) in zip(unread, try reading.rows(unread)) {
            guard let stored else { throw ObjectGraphError.objectNotFound(id) }
            versions[id] = stored.version
        }
        plan.changes.deleted = ordered.map { ($0, versions[$0]!) }
        return plan
    }

    /// Calls `body` with the IDs of each entity among `ids` (in their order), the index of each of its relationships
    /// `selected` picks, and those objects' destinations across it, read at once.
    private static func forEachRelationship(
        of ids: [ObjectID], model: Model, reading: some BatchPlanReading, where selected: (ModelRelationship) -> Bool,
        _ body: (_ ids: [ObjectID], _ relationship: Int, _ destinations: [[ObjectID]]) throws -> Void
    ) throws {
        var byEntity: [String: [ObjectID]] = [:]
        var names: [String] = []
        for id in ids {
            if byEntity[id.entityName] == nil { names.append(id.entityName) }
            byEntity[id.entityName, default: []].append(id)
        }
        for name in names {
            let entity = try model.entity(named: name)
            // A transient relationship links nothing in the store: its rule applies in the contexts that hold it.
            for (index, relationship) in entity.relationships.enumerated() where !relationship.isTransient && selected(relationship) {
                try body(byEntity[name]!, index, try reading.related(byEntity[name]!, relationship))
            }
        }
    }
}
