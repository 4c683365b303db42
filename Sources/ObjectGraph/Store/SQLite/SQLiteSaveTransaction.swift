import Foundation
import GRDB
import GRDBSQLite
import PredicateFormat

/// One save, inside one write transaction: keys for new rows, inserts, updates with version checks, deletes, and
/// to-many rewrites. Any error rolls the whole transaction back.
struct SQLiteSaveTransaction {
    let store: SQLiteStore
    let db: Database
    var result = SaveResult()
    /// The prepared INSERTs of each entity for the whole transaction.
    private var insertStatements: [String: InsertStatements] = [:]
    /// The prepared UPDATEs of each shape for the whole transaction.
    private var updateStatements: [UpdateShape: Statement] = [:]
    /// The UPDATE the previous row used.
    private var lastUpdate: UpdateStatement?
    /// The DELETE the previous row used, with its table.
    private var lastDelete: (table: TableLayout, statement: Statement)?

    /// The files of large values this save wrote and let go of (see ``ExternalBinaryData``).
    let externalFiles: ExternalFileChanges

    init(store: SQLiteStore, db: Database, externalFiles: ExternalFileChanges = ExternalFileChanges()) {
        self.store = store
        self.db = db
        self.externalFiles = externalFiles
    }

    /// Every conflicting row, so a failed save reports them all at once.
    private var conflicts: [SaveConflict] = []
    /// The preserved values of deleted rows, for history, read before the rows go.
    private var tombstones: [ObjectID: [String: AttributeValue]] = [:]

    mutating func run(_ changes: ChangeSet) throws -> SaveResult {
        let keys = try assignKeys(changes.inserted, preset: changes.presetIDs)
        try insert(changes.inserted, keys: keys)
        result.updatedRows.reserveCapacity(changes.updated.count)
        // Rows read in place: passed by value, each was copied (five retains and releases, and a cache miss for
        // each of its buffers' counts), a fifth of the store's part of 50,000 updates.
        try changes.updated.withUnsafeBufferPointer { rows in
            for position in changes.updateOrder { try update(rows, at: position) }
        }
        for position in store.model.deletionOrder(of: changes.deleted.map(\.objectID)) {
            try delete(changes.deleted[position].objectID, version: changes.deleted[position].version)
        }
        for (id, version) in changes.checked { try check(id, version: version) }
        guard conflicts.isEmpty else { throw ObjectGraphError.conflict(conflicts) }
        // The owners' links first, then the positions of a relationship ordered on both sides kept by its target side.
        for contents in changes.toMany { try rewrite(contents) }
        for contents in changes.toMany { try reorderTargetSide(contents) }
        if store.model.hasDerivedAttributes { try readDerivedValues(changes) }
        if store.recordsHistory {
            let record = HistoryRecord.of(changes, result: result, model: store.model, source: changes.source, tombstones: tombstones, insertedKeys: keys)
            try store.writeHistory(record, in: db)
        }
        return result
    }

    /// The rows this save wrote whose entity has derived attributes, as the triggers left them: the saving context
    /// shows the values the store computed (see ``DerivationTriggers``).
    private mutating func readDerivedValues(_ changes: ChangeSet) throws {
        var byRoot: [String: [ObjectID]] = [:]
        for id in (changes.inserted + changes.updated).map({ permanent($0.objectID) }) {
            guard let entity = store.model.entityIfPresent(id.entityName), !entity.derivedAttributes.isEmpty else { continue }
            byRoot[entity.rootName, default: []].append(id)
        }
        for (root, ids) in byRoot {
            guard let table = store.tables[root] else { continue }
            var reader = RowReader(table: table, external: store.externalData)
            for id in ids {
                try store.step(db, table.selectByKey, [id.rawKey.databaseValue], cached: true) { result.refreshed[id] = try reader.snapshot($0) }
            }
        }
    }

    private func permanent(_ id: ObjectID) -> ObjectID { result.permanentIDs[id] ?? id }

    private func key(_ id: ObjectID?) -> DatabaseValue {
        guard let id else { return .null }
        return permanent(id).rawKey.databaseValue
    }

    /// The primary key of every inserted row, in order: a preset or already permanent ID keeps its key; temporary
    /// ones take the next keys of their tree's sequence (one update per tree). The result's map holds both.
    private mutating func assignKeys(_ rows: [ChangeSet.Row], preset: [ObjectID: ObjectID]) throws -> [Int64] {
        var keys = [Int64](repeating: 0, count: rows.count)
        // Positions needing a key, by tree, in row order. Rows come in runs of one entity: the root is looked up
        // once per run rather than by hashing the entity's name for every row.
        var groups: [(root: String, positions: [Int])] = []
        var run: (entityName: String, group: Int)?
        // By position: a loop over the rows themselves copied each whole row (a tenth of the store's part of a
        // large insert).
        for position in rows.indices {
            let id = rows[position].objectID
            if let settled = preset.isEmpty ? nil : preset[id] {
                keys[position] = settled.rawKey
            } else if !id.isTemporaryID {
                keys[position] = id.rawKey
            } else {
                if run?.entityName != id.entityName {
                    let root = store.model.entityIfPresent(id.entityName)?.rootName ?? id.entityName
                    let group = groups.firstIndex { $0.root == root } ?? groups.count
                    if group == groups.count { groups.append((root, [])) }
                    run = (id.entityName, group)
                }
                groups[run!.group].positions.append(position)
            }
        }
        var mapping = PermanentIDMap.Builder()
        mapping.add(preset)
        // Keys reserved in memory for a published view are written now: the sequence moves past them in this
        // transaction, so it commits with the rows or not at all.
        var presetMaximum: [String: Int64] = [:]
        var presetKeys: [String: [Int64]] = [:]
        for (temporary, permanent) in preset where temporary.isTemporaryID {
            let root = store.model.entityIfPresent(permanent.entityName)?.rootName ?? permanent.entityName
            presetMaximum[root] = max(presetMaximum[root] ?? 0, permanent.rawKey)
        }
        // Keys reserved for rows this save inserts (others name stored rows a merge policy updates instead).
        for position in keys.indices where keys[position] != 0 && rows[position].objectID.isTemporaryID {
            let root = store.model.entityIfPresent(rows[position].objectID.entityName)?.rootName ?? rows[position].objectID.entityName
            presetKeys[root, default: []].append(keys[position])
        }
        // The reservation held in this process only: another process's save may have taken the same keys since.
        for (root, reserved) in presetKeys {
            guard let table = store.tables[root] else { continue }
            for start in stride(from: 0, to: reserved.count, by: 500) {
                let chunk = reserved[start..<min(start + 500, reserved.count)]
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                if let taken = try Int64.fetchOne(
                    db, sql: "SELECT \(RowColumn.id) FROM \(sqlQuoted(table.name)) WHERE \(RowColumn.id) IN (\(marks)) LIMIT 1",
                    arguments: StatementArguments(Array(chunk))) {
                    throw ObjectGraphError.storeWriteFailed(
                        path: store.location,
                        reason: "key \(taken) of \(root), reserved for this save's new objects, was taken by another process's save meanwhile; save again")
                }
            }
        }
        for (root, maximum) in presetMaximum {
            try db.execute(
                sql: "UPDATE \(sqlQuoted(SQLiteStore.sequenceTable)) SET max_key = max(max_key, ?) WHERE entity = ?", arguments: [maximum, root])
        }
        for (root, positions) in groups {
            var next = try store.allocate(db, root: root, count: positions.count)[0]
            for position in positions {
                let id = rows[position].objectID
                keys[position] = next
                mapping.add(id, ObjectID(entityName: id.entityName, rawKey: next))
                next += 1
            }
        }
        result.permanentIDs = mapping.build()
        return keys
    }

    private mutating func insertStatements(_ entityName: String) throws -> InsertStatements {
        if let prepared = insertStatements[entityName] { return prepared }
        let (entity, table) = try store.layout(for: entityName)
        guard let columns = table.entities[entity.name] else { throw ObjectGraphError.unknownEntity(entity.name) }
        let prepared = try InsertStatements(
            entityName: entityName, table: table.name, columns: columns.insertColumns,
            storedAttributes: columns.hasTransient ? columns.storedAttributes : nil, in: db)
        insertStatements[entityName] = prepared
        return prepared
    }

    /// Inserts `rows` with their `keys`: each run of rows of one entity a chunk of rows per statement while a whole
    /// chunk remains, then a row per statement.
    private mutating func insert(_ rows: [ChangeSet.Row], keys: [Int64]) throws {
        var start = 0
        while start < rows.count {
            let statements = try insertStatements(rows[start].objectID.entityName)
            let entity = try store.layout(for: statements.entityName).0
            var end = start + 1
            while end < rows.count && rows[end].objectID.entityName == statements.entityName { end += 1 }
            try statements.forEachStatement(over: start..<end) { statement, positions in
                try run(statement, rows: positions, of: rows, keys: keys, stored: statements.storedAttributes, entity: entity)
            }
            start = end
        }
    }

    /// Binds `positions` of `rows` (all of one entity) one after another to `statement`'s parameters and runs it.
    private func run(
        _ statement: Statement, rows positions: Range<Int>, of rows: [ChangeSet.Row], keys: [Int64], stored: [Int]?, entity: ModelEntity
    ) throws {
        let external = entity.externalBinaryAttributes
        do {
            // Bound one by one: an array of database values per row cost more than SQLite's insert.
            sqlite3_reset(statement.sqliteStatement)
            var index: Int32 = 1
            for position in positions {
                try statement.bind(keys[position], at: index)
                index += 1
                let values = rows[position].values
                if !external.isEmpty {
                    for attribute in stored ?? Array(0..<values.count) {
                        try statement.bind(try rowForm(values[attribute], external: external.contains(attribute)), at: index)
                        index += 1
                    }
                } else if let stored {
                    for attribute in stored {
                        try statement.bind(values[attribute], at: index)
                        index += 1
                    }
                } else {
                    for value in values {
                        try statement.bind(value, at: index)
                        index += 1
                    }
                }
                // The stored to-ones, the first slots; the transient ones stay in memory.
                for destination in rows[position].toOne.prefix(entity.storedToOneCount) {
                    try statement.bind(self.key(destination), at: index)
                    index += 1
                }
            }
            try statement.step()
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE || error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY {
            throw uniqueness(try store.model.entity(named: rows[positions.lowerBound].objectID.entityName), error)
        }
    }

    /// A prepared UPDATE with what binding a row to it needs; ``lastUpdate`` keeps the one the previous row used.
    /// A class: as a struct, handing the previous row's on to the next row copied (retained) each of its parts,
    /// a tenth of the store's part of a large save's UPDATEs.
    private final class UpdateStatement {
        let statement: Statement
        let shape: UpdateShape
        /// The row's changed attributes as the change set lists them, transient ones included (what the next row
        /// is compared with).
        let changedAttributes: [Int]
        let entity: ModelEntity
        let table: TableLayout

        init(statement: Statement, shape: UpdateShape, changedAttributes: [Int], entity: ModelEntity, table: TableLayout) {
            (self.statement, self.shape, self.changedAttributes, self.entity, self.table) = (statement, shape, changedAttributes, entity, table)
        }
    }

    /// Which columns an UPDATE sets: rows changing the same ones share one prepared statement for the whole save.
    private struct UpdateShape: Hashable {
        let entityName: String
        let attributes: [Int]
        let toOneSlots: [Int]
    }

    /// The UPDATE for the changed columns of row `position`, with its entity and table: the previous row's when
    /// this one changed the same ones (the usual large save changes one thing in many objects), else one per shape
    /// for the transaction. Nil when only transient attributes changed.
    private mutating func updateStatement(for rows: UnsafeBufferPointer<ChangeSet.Row>, at position: Int) throws -> UpdateStatement? {
        // Read in place, as ``update(_:at:)`` reads the row.
        let row = rows.baseAddress! + position
        if let last = lastUpdate, last.entity.name == row.pointee.objectID.entityName,
           last.changedAttributes == row.pointee.changedAttributes, last.shape.toOneSlots == row.pointee.changedToOne {
            return last
        }
        let (entity, table) = try store.layout(for: row.pointee.objectID.entityName)
        let (attributes, toOneSlots) = row.pointee.storedChanges(of: entity)
        // Only transient properties changed: nothing of the row is stored differently.
        guard !attributes.isEmpty || !toOneSlots.isEmpty else { return nil }
        let shape = UpdateShape(entityName: entity.name, attributes: attributes, toOneSlots: toOneSlots)
        let statement: Statement
        if let prepared = updateStatements[shape] {
            statement = prepared
        } else {
            guard let columns = table.entities[entity.name] else { throw ObjectGraphError.unknownEntity(entity.name) }
            let assignments = attributes.map { "\(sqlQuoted(entity.attributeColumns[$0])) = ?" }
                + shape.toOneSlots.map { "\(sqlQuoted(columns.insertColumns[columns.storedAttributes.count + $0])) = ?" }
                + ["\(RowColumn.version) = \(RowColumn.version) + 1"]
            statement = try db.makeStatement(
                sql: "UPDATE \(sqlQuoted(table.name)) SET \(assignments.joined(separator: ", ")) WHERE \(RowColumn.id) = ? AND \(RowColumn.version) = ?")
            updateStatements[shape] = statement
        }
        let prepared = UpdateStatement(
            statement: statement, shape: shape, changedAttributes: row.pointee.changedAttributes, entity: entity, table: table)
        lastUpdate = prepared
        return prepared
    }

    private mutating func update(_ rows: UnsafeBufferPointer<ChangeSet.Row>, at position: Int) throws {
        guard let prepared = try updateStatement(for: rows, at: position) else { return }
        let statement = prepared.statement
        do {
            // Bound one by one, as inserts are: an array of database values per row cost more than the UPDATE.
            var index: Int32 = 1
            let external = prepared.entity.externalBinaryAttributes
            if !external.isEmpty, prepared.shape.attributes.contains(where: external.contains) {
                try releaseExternalValues(of: rows[position].objectID, entity: prepared.entity, table: prepared.table)
            }
            for attribute in prepared.shape.attributes {
                try statement.bind(external.isEmpty ? rows[position].values[attribute] : try rowForm(rows[position].values[attribute], external: external.contains(attribute)), at: index)
                index += 1
            }
            for slot in prepared.shape.toOneSlots {
                try statement.bind(key(rows[position].toOne[slot]), at: index)
                index += 1
            }
            try statement.bind(rows[position].objectID.rawKey, at: index)
            try statement.bind(rows[position].version, at: index + 1)
            try statement.step()
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            throw uniqueness(prepared.entity, error)
        }
        // SQLite's count directly: GRDB's accessor first checks it runs on the database's queue, a tenth of a large
        // save's UPDATEs.
        guard sqlite3_changes(db.sqliteConnection) == 1 else {
            conflicts.append(try conflict(rows[position].objectID, table: prepared.table, expected: rows[position].version, row: rows[position], entity: prepared.entity))
            return
        }
        result.updatedRows.append((rows[position].objectID, rows[position].version + 1))
    }

    private mutating func delete(_ id: ObjectID, version: Int64) throws {
        let (entity, table) = try store.layout(for: id.entityName)
        if store.recordsHistory, case let preserved = entity.preservedAttributes, !preserved.isEmpty {
            tombstones[id] = try store.tombstone(of: id, entity: entity, attributes: preserved, in: db)
        }
        if !entity.externalBinaryAttributes.isEmpty { try releaseExternalValues(of: id, entity: entity, table: table) }
        let statement: Statement
        if let last = lastDelete, last.table === table {
            statement = last.statement
        } else {
            statement = try db.cachedStatement(sql: "DELETE FROM \(sqlQuoted(table.name)) WHERE \(RowColumn.id) = ? AND \(RowColumn.version) = ?")
            lastDelete = (table, statement)
        }
        // Bound and counted directly, as updates are.
        try statement.bind(id.rawKey, at: 1)
        try statement.bind(version, at: 2)
        try statement.step()
        guard sqlite3_changes(db.sqliteConnection) == 1 else {
            conflicts.append(try conflict(id, table: table, expected: version, row: nil, entity: entity))
            return
        }
    }

    /// `value` as the row keeps it: a large value of an attribute that allows external storage (`external`) goes to
    /// a file, and the row keeps the file's name.
    private func rowForm(_ value: AttributeValue, external: Bool) throws -> AttributeValue {
        guard external, case .data(let data) = value, data.count >= ExternalBinaryData.threshold else { return value }
        let name = try store.externalData.write(data)
        externalFiles.written.append(name)
        return .string(name)
    }

    /// Notes the files the row of `id` names for its external values, which the update or deletion about to run
    /// lets go of (removed once the save commits and readers of the old row are done).
    private func releaseExternalValues(of id: ObjectID, entity: ModelEntity, table: TableLayout) throws {
        let columns = entity.externalBinaryAttributes.map { "\(sqlQuoted(entity.attributeColumns[$0]))" }
        guard let row = try Row.fetchOne(db, sql: "SELECT \(columns.joined(separator: ", ")) FROM \(sqlQuoted(table.name)) WHERE \(RowColumn.id) = ?", arguments: [id.rawKey])
        else { return }
        for index in columns.indices {
            if case .string(let name) = (row[index] as DatabaseValue).storage { externalFiles.released.append(name) }
        }
    }

    private func rewrite(_ contents: ChangeSet.ToManyContents) throws {
        let owner = permanent(contents.objectID)
        let relationship = try contents.modelRelationship(of: owner, in: store.model)
        switch relationship.storage {
        case .joinTable(let table, true):
            // The positions the targets' lists give their members stay with the links that stay; a new link goes at
            // the end of its target's list (its target's list, when this save changed it, sets them next).
            var kept: [Int64: Int64] = [:]
            if relationship.isOrderedBothWays && result.permanentIDs[contents.objectID] == nil {
                for row in try Row.fetchAll(db, sql: "SELECT target, inverse_position FROM \(sqlQuoted(table)) WHERE source = ?", arguments: [owner.rawKey]) {
                    if let position: Int64 = row[1] { kept[row[0]] = position }
                }
            }
            // A row this save inserted has no links to remove.
            if result.permanentIDs[contents.objectID] == nil {
                try db.cachedStatement(sql: "DELETE FROM \(sqlQuoted(table)) WHERE source = ?").run(binding: [owner.rawKey.databaseValue])
            }
            if relationship.isOrderedBothWays {
                let statement = try db.cachedStatement(sql: """
                    INSERT INTO \(sqlQuoted(table)) (source, target, position, inverse_position)
                    VALUES (?1, ?2, ?3, coalesce(?4, (SELECT max(inverse_position) + 1 FROM \(sqlQuoted(table)) WHERE target = ?2), 0))
                    """)
                for (position, destination) in contents.destinations.enumerated() {
                    let target = permanent(destination).rawKey
                    try statement.execute(arguments: [owner.rawKey, target, position, kept[target]])
                }
            } else {
                let statement = try db.cachedStatement(sql: "INSERT INTO \(sqlQuoted(table)) (source, target, position) VALUES (?, ?, ?)")
                for (position, destination) in contents.destinations.enumerated() {
                    try statement.execute(arguments: [owner.rawKey, permanent(destination).rawKey, relationship.isOrdered ? position : nil])
                }
            }
        case .inverseForeignKey(_, let orderColumn?):
            let destination = try store.model.entity(named: relationship.destinationEntityName)
            let statement = try db.cachedStatement(sql: "UPDATE \(sqlQuoted(destination.tableName)) SET \(sqlQuoted(orderColumn)) = ? WHERE \(RowColumn.id) = ?")
            for (position, member) in contents.destinations.enumerated() {
                try statement.execute(arguments: [position, permanent(member).rawKey])
            }
        default:
            break
        }
    }

    /// Writes the order of a target side's list of a relationship ordered on both sides: its members' links are in
    /// the join table (the source side's rewrite, or stored before), each given its position in the list.
    private func reorderTargetSide(_ contents: ChangeSet.ToManyContents) throws {
        let owner = permanent(contents.objectID)
        let relationship = try contents.modelRelationship(of: owner, in: store.model)
        guard relationship.isOrderedBothWays, case .joinTable(let table, false) = relationship.storage else { return }
        let statement = try db.cachedStatement(sql: "UPDATE \(sqlQuoted(table)) SET inverse_position = ? WHERE target = ? AND source = ?")
        for (position, member) in contents.destinations.enumerated() {
            try statement.execute(arguments: [position, owner.rawKey, permanent(member).rawKey])
        }
    }

    /// Checks that the row of `id`, which this save writes nothing for, is still at `version` (see
    /// ``ChangeSet/checked``).
    private mutating func check(_ id: ObjectID, version: Int64) throws {
        let (entity, table) = try store.layout(for: id.entityName)
        let stored = try Int64.fetchOne(
            db, sql: "SELECT \(RowColumn.version) FROM \(sqlQuoted(table.name)) WHERE \(RowColumn.id) = ?", arguments: [id.rawKey])
        if stored != version { conflicts.append(try conflict(id, table: table, expected: version, row: nil, entity: entity)) }
    }

    private func conflict(_ id: ObjectID, table: TableLayout, expected: Int64, row: ChangeSet.Row?, entity: ModelEntity) throws -> SaveConflict {
        var stored: Snapshot?
        var reader = RowReader(table: table, external: store.externalData)
        try store.step(db, table.selectByKey, [id.rawKey.databaseValue], cached: true) { stored = try reader.snapshot($0) }
        return SaveConflict.make(row, id: id, expected: expected, stored: stored, entity: entity)
    }

    private func uniqueness(_ entity: ModelEntity, _ error: DatabaseError) -> ObjectGraphError {
        Self.uniqueness(entity, error)
    }

    /// The error for a uniqueness constraint SQLite says `error` broke, naming the constraint's keys.
    static func uniqueness(_ entity: ModelEntity, _ error: DatabaseError) -> ObjectGraphError {
        let message = error.message ?? "\(error)"
        // SQLite names the columns, `Table.column`: a constraint's keys map to theirs.
        let keys = entity.uniquenessConstraints.first { keys in
            keys.allSatisfy { key in message.contains(".\(entity.attributeIndex[key].map { entity.attributeColumns[$0] } ?? key)") }
        } ?? []
        return .uniquenessViolation(entity: entity.name, keys: keys, detail: message)
    }
}
