import PredicateFormat

/// A root context's write, with its merge policy settling conflicts: the store reports every conflicting row with
/// its stored values; the policy rewrites those rows; the write is tried again, as often as other saves keep
/// changing the rows underneath (each retry follows a save that committed meanwhile, so the store moves on).
extension ContextState {
    /// How many times a merging policy settles conflicts before the save fails with the last one: far more than
    /// contention between hosts brings (a fixed four failed 1 to 5 saves in 300 with four hosts updating the same
    /// three rows), so that in practice only a store that reports conflicts forever ends it.
    static let settlingAttempts = 100

    func writeToStore(_ flat: ChangeSet) throws -> SaveResult {
        var changes = flat
        var refreshed: [ObjectID: Snapshot] = [:]
        for _ in 1..<Self.settlingAttempts where mergePolicy != .error {
            do {
                return finish(try write(&changes), refreshed)
            } catch ObjectGraphError.conflict(let conflicts) {
                changes = try resolve(conflicts, in: changes, refreshed: &refreshed)
                changes.index = ChangeSetIndex()
            } catch ObjectGraphError.uniquenessViolation(let entity, let keys, let detail) where !keys.isEmpty {
                let resolved = try resolveUniqueness(entity: entity, keys: keys, in: changes, refreshed: &refreshed)
                guard resolved.inserted.count < changes.inserted.count else {
                    throw ObjectGraphError.uniquenessViolation(entity: entity, keys: keys, detail: detail)
                }
                changes = resolved
                // Rows moved: the index (positions) no longer holds; a published view re-indexes.
                changes.index = ChangeSetIndex()
            }
        }
        return finish(try write(&changes), refreshed)
    }

    /// One attempt at writing `changes`, published for this context's children while the store writes it (see
    /// ``republishView()``); the view stays up until the save has been applied here.
    private func write(_ changes: inout ChangeSet) throws -> SaveResult {
        try publishWrite(&changes)
        changes.source = transactionSource
        return try coordinator.save(changes)
    }

    private func finish(_ result: SaveResult, _ refreshed: [ObjectID: Snapshot]) -> SaveResult {
        var result = result
        for (id, snapshot) in refreshed { result.refreshed[result.permanentIDs[id] ?? id] = snapshot }
        return result
    }

    private func resolve(_ conflicts: [SaveConflict], in changes: ChangeSet, refreshed: inout [ObjectID: Snapshot]) throws -> ChangeSet {
        var changes = changes
        for conflict in conflicts {
            let id = conflict.objectID
            if let position = changes.checked.firstIndex(where: { $0.objectID == id }) {
                // An object marked for conflict detection has nothing to write: under a merging policy it takes the
                // stored values (and leaves the context, with the other merged deletions, when its row is gone).
                changes.checked.remove(at: position)
                if let stored = conflict.stored { refreshed[id] = stored }
                continue
            }
            if let position = changes.updated.firstIndex(where: { $0.objectID == id }) {
                var row = changes.updated[position]
                guard let stored = conflict.stored else {
                    if mergePolicy == .rollback {
                        changes.updated.remove(at: position)
                        continue
                    }
                    if case .custom(let policy) = mergePolicy,
                       try policy.resolver.resolve(question(.updateOfDeletedRow, row, stored: nil)) == .store {
                        changes.updated.remove(at: position)
                        continue
                    }
                    throw ObjectGraphError.conflict(conflicts)
                }
                row.version = stored.version
                // The app's rule: the object wins as under overwrite, the store as under rollback, or chosen values.
                var policy = mergePolicy
                if case .custom(let custom) = mergePolicy {
                    switch try custom.resolver.resolve(question(.update, row, stored: stored)) {
                    case .object: policy = .overwrite
                    case .store: policy = .rollback
                    case .values(let chosen):
                        row = try rowSetting(chosen, on: stored, from: row)
                        refreshed[id] = merged(row, stored, keepingObject: Set(row.values.indices), toOne: Set(row.changedToOne))
                    }
                }
                switch policy {
                case .custom:
                    break
                case .error:
                    throw ObjectGraphError.conflict(conflicts)
                case .mergeByPropertyObjectTrump:
                    refreshed[id] = merged(row, stored, keepingObject: Set(row.changedAttributes), toOne: Set(row.changedToOne))
                case .mergeByPropertyStoreTrump:
                    let storeChanged = Set(stored.values.indices.filter { index in
                        index < row.committedValues.count && stored.values[index] != row.committedValues[index]
                    })
                    row.changedAttributes = row.changedAttributes.filter { !storeChanged.contains($0) }
                    refreshed[id] = merged(row, stored, keepingObject: Set(row.changedAttributes), toOne: Set(row.changedToOne))
                case .overwrite:
                    row.changedAttributes = Array(row.values.indices)
                    row.changedToOne = Array(row.toOne.indices)
                case .rollback:
                    refreshed[id] = stored
                    changes.updated.remove(at: position)
                    continue
                }
                changes.updated[position] = row
            } else if let position = changes.deleted.firstIndex(where: { $0.objectID == id }) {
                guard let stored = conflict.stored else {
                    changes.deleted.remove(at: position)
                    continue
                }
                var keepsDeletion = mergePolicy == .mergeByPropertyObjectTrump || mergePolicy == .overwrite
                switch mergePolicy {
                case .error:
                    throw ObjectGraphError.conflict(conflicts)
                case .custom(let policy):
                    let entity = try model.entity(named: id.entityName)
                    let question = MergeConflict(
                        kind: .deletion, objectID: id, entityName: entity.name, objectValues: [:], storedValues: Self.named(stored.values, entity), changedKeys: [])
                    keepsDeletion = try policy.resolver.resolve(question) == .object
                default:
                    break
                }
                if keepsDeletion {
                    changes.deleted[position].version = stored.version
                } else {
                    refreshed[id] = stored
                    changes.deleted.remove(at: position)
                }
            }
        }
        return changes
    }

    /// A conflict of `row` (an update) with `stored`, for a ``ConflictResolver``.
    private func question(_ kind: MergeConflict.Kind, _ row: ChangeSet.Row, stored: Snapshot?) throws -> MergeConflict {
        let entity = try model.entity(named: row.objectID.entityName)
        return MergeConflict(
            kind: kind, objectID: row.objectID, entityName: entity.name, objectValues: Self.named(row.values, entity),
            storedValues: stored.map { Self.named($0.values, entity) } ?? [:], changedKeys: row.changedAttributes.map { entity.attributes[$0].name })
    }

    /// `values` by attribute name.
    private static func named(_ values: AttributeValues, _ entity: ModelEntity) -> [String: AttributeValue] {
        Dictionary(uniqueKeysWithValues: entity.attributes.indices.map { (entity.attributes[$0].name, values[$0]) })
    }

    /// `row` made the stored row with `chosen` (attributes by name) set, every attribute written: what a
    /// ``MergeResolution/values(_:)`` resolution stores. An unknown key fails the save, naming it.
    private func rowSetting(_ chosen: [String: AttributeValue], on stored: Snapshot, from row: ChangeSet.Row) throws -> ChangeSet.Row {
        let entity = try model.entity(named: row.objectID.entityName)
        var values = stored.values
        for (key, value) in chosen {
            guard let index = entity.attributeIndex[key] else { throw ObjectGraphError.unknownKey(entity: entity.name, key: key) }
            let coerced = entity.attributes[index].type.coerce(value)
            guard entity.attributes[index].type.accepts(coerced) else {
                throw ObjectGraphError.typeMismatch(entity: entity.name, key: key, expected: entity.attributes[index].type.name, got: "\(value)")
            }
            values[index] = coerced
        }
        var row = row
        row.values = values
        row.changedAttributes = Array(values.indices)
        return row
    }

    /// The row as it will be stored: the object's values for `keepingObject`, the stored ones elsewhere.
    private func merged(_ row: ChangeSet.Row, _ stored: Snapshot, keepingObject: Set<Int>, toOne: Set<Int>) -> Snapshot {
        let values = AttributeValues(row.values.indices.map { keepingObject.contains($0) ? row.values[$0] : stored.values[$0] })
        let destinations = row.toOne.indices.map { toOne.contains($0) ? row.toOne[$0] : stored.toOne[$0] }
        return Snapshot(objectID: row.objectID, version: stored.version + 1, values: values, toOne: destinations)
    }

    /// Inserts that collide with a stored row on a uniqueness constraint become that row: updated with the object's
    /// values (object trump, overwrite: an upsert) or left as stored (store trump, rollback).
    private func resolveUniqueness(entity: String, keys: [String], in changes: ChangeSet, refreshed: inout [ObjectID: Snapshot]) throws -> ChangeSet {
        var changes = changes
        let constrained = try model.entity(named: entity)
        var kept: [ChangeSet.Row] = []
        for row in changes.inserted {
            let rowEntity = try model.entity(named: row.objectID.entityName)
            let indexes = keys.compactMap { rowEntity.attributeIndex[$0] }
            guard rowEntity.isKind(of: constrained), indexes.count == keys.count,
                  !indexes.contains(where: { row.values[$0].isNull }) else {
                kept.append(row)
                continue
            }
            var request = StoreFetchRequest(entityName: entity)
            request.predicate = .and(zip(keys, indexes).map { key, index in
                .comparison(Comparison(.keyPath([key]), .equal, .constant(row.values[index].predicateValue)))
            })
            request.limit = 1
            guard let existing = try coordinator.store.fetch(request).first else {
                kept.append(row)
                continue
            }
            changes.presetIDs[row.objectID] = existing.objectID
            var resolution: MergeResolution = mergePolicy == .mergeByPropertyObjectTrump || mergePolicy == .overwrite ? .object : .store
            if case .custom(let policy) = mergePolicy {
                resolution = try policy.resolver.resolve(MergeConflict(
                    kind: .uniqueness, objectID: existing.objectID, entityName: rowEntity.name, objectValues: Self.named(row.values, rowEntity),
                    storedValues: Self.named(existing.values, rowEntity), changedKeys: rowEntity.attributeNames))
            }
            switch resolution {
            case .object:
                changes.updated.append(ChangeSet.Row(
                    objectID: existing.objectID, version: existing.version, values: row.values, toOne: row.toOne,
                    changedAttributes: Array(row.values.indices), changedToOne: Array(row.toOne.indices), committedValues: existing.values))
            case .values(let chosen):
                var update = ChangeSet.Row(
                    objectID: existing.objectID, version: existing.version, values: existing.values, toOne: existing.toOne,
                    changedAttributes: [], changedToOne: [], committedValues: existing.values)
                update = try rowSetting(chosen, on: existing, from: update)
                changes.updated.append(update)
            case .store:
                refreshed[row.objectID] = existing
            }
        }
        changes.inserted = kept
        return changes
    }
}
