/// A run of one transaction's changes as a store keeps them: consecutive keys of one entity changed the same way
/// (an import of a million rows is one run), or one deletion with its tombstone.
package struct HistoryRun: Sendable, Equatable {
    package var entityName: String
    package var firstKey: Int64
    package var count: Int64
    package var kind: PersistentHistoryChange.ChangeType
    /// For updates, the properties changed, sorted.
    package var properties: [String] = []
    /// For a deletion, the preserved values.
    package var tombstone: [String: AttributeValue] = [:]

    package init(
        entityName: String, firstKey: Int64, count: Int64, kind: PersistentHistoryChange.ChangeType, properties: [String] = [],
        tombstone: [String: AttributeValue] = [:]
    ) {
        (self.entityName, self.firstKey, self.count, self.kind) = (entityName, firstKey, count, kind)
        (self.properties, self.tombstone) = (properties, tombstone)
    }

    /// The changes of the run, one per key.
    package func changes() -> [PersistentHistoryChange] {
        (firstKey..<firstKey + count).map { key in
            PersistentHistoryChange(
                changedObjectID: ObjectID(entityName: entityName, rawKey: key), changeType: kind,
                updatedProperties: Set(properties), tombstone: tombstone)
        }
    }
}

/// What one transaction records in persistent history, gathered as the store writes it.
package struct HistoryRecord: Sendable {
    package var source: TransactionSource
    package private(set) var runs: [HistoryRun] = []

    package init(source: TransactionSource) { self.source = source }

    package var isEmpty: Bool { runs.isEmpty }

    /// Records one object's change, extending the last run when it continues it.
    mutating func add(_ id: ObjectID, _ kind: PersistentHistoryChange.ChangeType, properties: [String] = [], tombstone: [String: AttributeValue] = [:]) {
        if tombstone.isEmpty, let last = runs.last, last.tombstone.isEmpty, last.kind == kind, last.entityName == id.entityName,
           last.firstKey + last.count == id.rawKey, last.properties == properties {
            runs[runs.count - 1].count += 1
            return
        }
        runs.append(HistoryRun(entityName: id.entityName, firstKey: id.rawKey, count: 1, kind: kind, properties: properties, tombstone: tombstone))
    }

    /// Records keys `keys` of `entityName`, sorted first so that consecutive keys make one run.
    package mutating func add(entityName: String, keys: [Int64], _ kind: PersistentHistoryChange.ChangeType, properties: [String] = []) {
        for key in keys.sorted() { add(ObjectID(entityName: entityName, rawKey: key), kind, properties: properties) }
    }

    /// The record of a save: its inserts (by the keys the store gave them), its updates with the properties they
    /// changed (to-many contents included), and its deletions with their tombstones.
    ///
    /// `insertedKeys`, the keys the store gave the inserts in order, spares looking each one up in the result's map
    /// (a large import's history then costs a comparison per row).
    package static func of(
        _ changes: ChangeSet, result: SaveResult, model: Model, source: TransactionSource, tombstones: [ObjectID: [String: AttributeValue]],
        insertedKeys: [Int64]? = nil
    ) -> HistoryRecord {
        var record = HistoryRecord(source: source)
        if let insertedKeys {
            for (row, key) in zip(changes.inserted, insertedKeys) { record.add(ObjectID(entityName: row.objectID.entityName, rawKey: key), .insert) }
        } else {
            for row in changes.inserted { record.add(result.permanentIDs[row.objectID] ?? row.objectID, .insert) }
        }
        var toManyKeys: [ObjectID: Set<String>] = [:]
        for contents in changes.toMany where model.entityIfPresent(contents.objectID.entityName)?.relationship(named: contents.relationship)?.isTransient != true {
            toManyKeys[result.permanentIDs[contents.objectID] ?? contents.objectID, default: []].insert(contents.relationship)
        }
        let insertedIDs = toManyKeys.isEmpty ? [] : Set(changes.inserted.map { result.permanentIDs[$0.objectID] ?? $0.objectID })
        for row in changes.updated {
            guard let entity = model.entityIfPresent(row.objectID.entityName) else { continue }
            let stored = row.storedChanges(of: entity)
            var keys = Set(stored.attributes.map { entity.attributes[$0].name })
            for slot in stored.toOneSlots {
                if let index = entity.toOneSlot.firstIndex(of: slot) { keys.insert(entity.relationships[index].name) }
            }
            keys.formUnion(toManyKeys.removeValue(forKey: row.objectID) ?? [])
            // A row whose only changes were transient wrote nothing.
            guard !keys.isEmpty else { continue }
            record.add(row.objectID, .update, properties: keys.sorted())
        }
        // Owners whose only change was a to-many relationship kept in a join table or in positions.
        for (id, keys) in toManyKeys.sorted(by: { $0.key < $1.key }) where !insertedIDs.contains(id) && !id.isTemporaryID {
            record.add(id, .update, properties: keys.sorted())
        }
        for (id, _) in changes.deleted { record.add(id, .delete, tombstone: tombstones[id] ?? [:]) }
        return record
    }
}

extension ModelEntity {
    /// The attributes whose last value history keeps when an object is deleted, by position.
    package var preservedAttributes: [Int] {
        attributes.indices.filter { attributes[$0].preservesValueInHistoryOnDeletion && !attributes[$0].isTransient }
    }
}
