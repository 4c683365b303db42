/// Lookups into a change set, built once on the saving context's queue, so that a parent that keeps the change
/// set as a pending layer answers "what does this layer say about X?" in constant time without copying it.
public struct ChangeSetIndex: Sendable {
    /// Where each inserted or updated row is: (is it an insert, its position in `inserted` or `updated`).
    var rows: [ObjectID: (inserted: Bool, position: Int)] = [:]
    /// Deleted rows and the version they were read at.
    var deleted: [ObjectID: Int64] = [:]
    /// Inserted and updated rows by entity name, for fetches judged in memory.
    var rowsByEntity: [String: [ObjectID]] = [:]
    /// The contents of changed to-many relationships, by owner and relationship name.
    var toMany: [ObjectID: [String: [ObjectID]]] = [:]
}

extension ChangeSet {
    /// Builds ``index``; call it on the queue that made the change set.
    mutating func buildIndex() {
        var index = ChangeSetIndex()
        for (position, row) in inserted.enumerated() {
            index.rows[row.objectID] = (true, position)
            index.rowsByEntity[row.objectID.entityName, default: []].append(row.objectID)
        }
        for (position, row) in updated.enumerated() {
            index.rows[row.objectID] = (false, position)
            index.rowsByEntity[row.objectID.entityName, default: []].append(row.objectID)
        }
        for (id, version) in deleted { index.deleted[id] = version }
        for contents in toMany { index.toMany[contents.objectID, default: [:]][contents.relationship] = contents.destinations }
        self.index = index
    }

    /// The row this change set holds for `id`, as a snapshot.
    func snapshot(for id: ObjectID) -> Snapshot? {
        guard let place = index.rows[id] else { return nil }
        let row = place.inserted ? inserted[place.position] : updated[place.position]
        return Snapshot(objectID: row.objectID, version: row.version, values: row.values, toOne: row.toOne)
    }

    /// Every object ID the change set inserts, updates or deletes (flattened on demand, by whoever asks).
    var insertedIDs: [ObjectID] { inserted.map(\.objectID) }
    var updatedIDs: [ObjectID] { updated.map(\.objectID) }
    var deletedIDs: [ObjectID] { deleted.map(\.objectID) }
}
