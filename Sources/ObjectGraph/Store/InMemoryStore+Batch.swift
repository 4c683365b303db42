import PredicateFormat

/// Batch requests in memory: each becomes the change set a context would save (rows inserted, updated with their
/// new values, deleted with the delete rules applied), applied under the store's lock as one save is, so both
/// stores give a request the same outcome.
extension InMemoryStore {
    /// A request turned into a change set, with the objects it names (temporary IDs for new rows).
    private struct Plan {
        var changes = ChangeSet()
        var matched: [ObjectID] = []
    }

    public func execute(_ request: BatchRequest, source: TransactionSource) throws -> BatchResult {
        try contents.withLock { state in
            var plan: Plan
            switch request {
            case .insert(let insert): plan = try insertPlan(insert, in: state)
            case .update(let update): plan = try updatePlan(update, in: state)
            case .delete(let delete): plan = try deletePlan(delete, in: state)
            }
            plan.changes.source = source
            var next = state
            let result = try apply(plan.changes, to: &next)
            if recordsHistory {
                let tombstones = tombstones(of: plan.changes.deleted.map(\.objectID), in: state)
                record(HistoryRecord.of(plan.changes, result: result, model: model, source: source, tombstones: tombstones), in: &next)
            }
            state = next
            guard request.resultType == .objectIDs else { return BatchResult(count: plan.matched.count) }
            return BatchResult(
                count: plan.matched.count, objectIDs: plan.matched.map { result.permanentIDs[$0] ?? $0 },
                changes: StoreChanges(
                    inserted: plan.changes.inserted.map { result.permanentIDs[$0.objectID] ?? $0.objectID },
                    updated: plan.changes.updated.map(\.objectID), deleted: plan.changes.deleted.map(\.objectID)))
        }
    }

    private func row(_ id: ObjectID, in state: Contents) -> StoredRow? {
        model.entityIfPresent(id.entityName).flatMap { state.rows[$0.rootName]?[id.rawKey] }
    }

    /// New rows, or with uniqueness constraints and ``BatchInsertRequest/upserts``, updates of the stored (or
    /// earlier new) rows they match, as SQLite's `ON CONFLICT DO UPDATE` does.
    private func insertPlan(_ request: BatchInsertRequest, in state: Contents) throws -> Plan {
        let columns = try BatchInsertColumns(request, model: model)
        let entity = columns.entity
        let tree = model.entities.filter { $0.rootName == entity.rootName }
        let constraints = request.upserts ? tree.flatMap { kind in kind.uniquenessConstraints.map { (kind, $0) } } : []
        // Each constraint's values → the row holding them (stored, or new in this request).
        var holders: [[[AttributeValue]: ObjectID]] = constraints.map { kind, keys in
            var table: [[AttributeValue]: ObjectID] = [:]
            for (key, row) in state.rows[entity.rootName] ?? [:] {
                guard let rowEntity = model.entityIfPresent(row.entityName), rowEntity.isKind(of: kind) else { continue }
                let tuple = keys.map { row.values[rowEntity.attributeIndex[$0]!] }
                if !tuple.contains(.null) { table[tuple] = ObjectID(entityName: row.entityName, rawKey: key) }
            }
            return table
        }
        var plan = Plan()
        var inserted: [ObjectID: Int] = [:]
        var updated: [ObjectID: Int] = [:]
        let toOneCount = entity.toOneSlot.compactMap { $0 }.count
        let given = request.keys.map { entity.attributeIndex[$0]! }
        try columns.forEachRow(of: request) { _, values in
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
            if let position = inserted[holder] {
                for index in given { plan.changes.inserted[position].values[index] = values[index] }
            } else if let position = updated[holder] {
                for index in given { plan.changes.updated[position].values[index] = values[index] }
            } else if let stored = row(holder, in: state) {
                let kind = try model.entity(named: stored.entityName)
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
    private func updatePlan(_ request: BatchUpdateRequest, in state: Contents) throws -> Plan {
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
        var plan = Plan()
        for snapshot in try selected(fetch, sliced: false, in: state) {
            let kind = try model.entity(named: snapshot.objectID.entityName)
            var values = snapshot.values
            let source = MemoryRowSource(store: self, contents: state, id: snapshot.objectID)
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
    /// the survivors whose reference to a deleted object is cleared.
    private func deletePlan(_ request: BatchDeleteRequest, in state: Contents) throws -> Plan {
        var plan = Plan()
        if let ids = request.objectIDs {
            for id in try request.checkedObjectIDs(ids, model: model) {
                if let stored = row(id, in: state) { plan.matched.append(ObjectID(entityName: stored.entityName, rawKey: id.rawKey)) }
            }
            plan.matched = Array(Set(plan.matched)).sorted()
        } else {
            var fetch = StoreFetchRequest(entityName: request.entityName)
            fetch.includesSubentities = request.includesSubentities
            fetch.predicate = request.predicate
            plan.matched = try selected(fetch, sliced: false, in: state).map(\.objectID).sorted()
        }
        var doomed = Set(plan.matched)
        var pending = plan.matched
        while let id = pending.popLast() {
            let entity = try model.entity(named: id.entityName)
            for relationship in entity.relationships where relationship.deleteRule == .cascade {
                for target in try related(id, relationship, in: state) where doomed.insert(target).inserted { pending.append(target) }
            }
        }
        let ordered = doomed.sorted()
        for id in ordered {
            let entity = try model.entity(named: id.entityName)
            for relationship in entity.relationships where relationship.deleteRule == .deny {
                let survivors = try related(id, relationship, in: state).filter { !doomed.contains($0) }
                if !survivors.isEmpty {
                    throw ObjectGraphError.deleteDenied(entity: entity.name, objectID: id, relationship: relationship.name, count: survivors.count)
                }
            }
        }
        var cleared: [ObjectID: Int] = [:]
        for id in ordered {
            let entity = try model.entity(named: id.entityName)
            for relationship in entity.relationships where relationship.deleteRule != .noAction && relationship.hasInverse {
                guard case .inverseForeignKey = relationship.storage else { continue }
                for survivor in try related(id, relationship, in: state) where !doomed.contains(survivor) {
                    guard let stored = row(survivor, in: state) else { continue }
                    let kind = try model.entity(named: stored.entityName)
                    guard let index = kind.relationshipIndex[relationship.inverseName], let slot = kind.toOneSlot[index] else { continue }
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
        plan.changes.deleted = ordered.map { ($0, row($0, in: state)!.version) }
        return plan
    }
}
