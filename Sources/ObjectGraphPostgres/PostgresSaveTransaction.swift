import Foundation
import ObjectGraph
import PostgresNIO
import PredicateFormat

/// One save inside one PostgreSQL transaction: keys for new rows, inserts, updates and deletes checked against
/// each row's version, to-many rewrites, then the history record and its announcement. Any error rolls all of it
/// back (``PostgresSession/transaction(_:)``); a connection lost midway is rolled back by the server.
struct PostgresSaveTransaction {
    let store: PostgresStore
    let session: PostgresSession
    private var result = SaveResult()
    private var conflicts: [SaveConflict] = []
    private var tombstones: [ObjectID: [String: AttributeValue]] = [:]
    private static let id = pgQuoted(StorageNames.rowID)
    private static let version = pgQuoted(StorageNames.rowVersion)
    /// PostgreSQL takes at most 65,535 bound values per statement; an insert or update binds whole rows up to this many.
    private static let bindsPerStatement = 30_000

    init(store: PostgresStore, session: PostgresSession) {
        self.store = store
        self.session = session
    }

    mutating func run(_ changes: ChangeSet) throws -> SaveResult {
        let keys = try assignKeys(changes.inserted, preset: changes.presetIDs)
        try insert(changes.inserted, keys: keys)
        // In key order, and referring tables first, as the SQLite store writes them (see `ChangeSet.updateOrder`
        // and `Model.deletionOrder(of:)`).
        try update(changes.updateOrder.map { changes.updated[$0] })
        try delete(store.model.deletionOrder(of: changes.deleted.map(\.objectID)).map { changes.deleted[$0] })
        try check(changes.checked)
        guard conflicts.isEmpty else { throw ObjectGraphError.conflict(conflicts) }
        try rewrite(changes.toMany)
        try readDerivedValues(changes)
        let record = HistoryRecord.of(changes, result: result, model: store.model, source: changes.source, tombstones: tombstones, insertedKeys: keys)
        try store.writeHistory(record, in: session)
        return result
    }

    /// The rows this save wrote whose entity has derived attributes, as the triggers left them: the saving context
    /// shows the values the store computed. One statement per table.
    private mutating func readDerivedValues(_ changes: ChangeSet) throws {
        let ids = (changes.inserted + changes.updated).map { permanent($0.objectID) }.filter { id in
            store.model.entityIfPresent(id.entityName).map { !$0.derivedAttributes.isEmpty } ?? false
        }
        for snapshot in try store.snapshots(of: ids, in: session).values { result.refreshed[snapshot.objectID] = snapshot }
    }

    private func permanent(_ id: ObjectID) -> ObjectID { result.permanentIDs[id] ?? id }

    private func appendKey(_ id: ObjectID?, to binds: inout StatementBindings) {
        if let id { binds.append(permanent(id).rawKey) } else { binds.appendNull() }
    }

    /// The key of every inserted row, in order: preset and permanent IDs keep theirs; temporary ones take the next
    /// keys of their tree's sequence.
    private mutating func assignKeys(_ rows: [ChangeSet.Row], preset: [ObjectID: ObjectID]) throws -> [Int64] {
        var keys = [Int64](repeating: 0, count: rows.count)
        var groups: [String: [Int]] = [:]
        var order: [String] = []
        for (position, row) in rows.enumerated() {
            let id = row.objectID
            if let settled = preset[id] {
                keys[position] = settled.rawKey
            } else if !id.isTemporaryID {
                keys[position] = id.rawKey
            } else {
                let root = store.model.entityIfPresent(id.entityName)?.rootName ?? id.entityName
                if groups[root] == nil { order.append(root) }
                groups[root, default: []].append(position)
            }
        }
        var mapping = PermanentIDMap.Builder()
        mapping.add(preset)
        for root in order {
            let positions = groups[root]!
            let allocated = try PostgresStore.allocate(session, root: root, count: positions.count)
            for (position, key) in zip(positions, allocated) {
                let id = rows[position].objectID
                keys[position] = key
                mapping.add(id, ObjectID(entityName: id.entityName, rawKey: key))
            }
        }
        result.permanentIDs = mapping.build()
        return keys
    }

    /// Inserts each run of rows of one entity in multi-row statements.
    private func insert(_ rows: [ChangeSet.Row], keys: [Int64]) throws {
        var start = 0
        while start < rows.count {
            let entityName = rows[start].objectID.entityName
            let (entity, table) = try store.layout(for: entityName)
            guard let columns = table.entities[entity.name] else { throw ObjectGraphError.unknownEntity(entity.name) }
            var end = start + 1
            while end < rows.count && rows[end].objectID.entityName == entityName { end += 1 }
            let width = 2 + columns.insertColumns.count
            let perStatement = max(1, Self.bindsPerStatement / width)
            let names = ([StorageNames.rowID, StorageNames.rowEntity] + columns.insertColumns).map(pgQuoted).joined(separator: ", ")
            for chunkStart in stride(from: start, to: end, by: perStatement) {
                let chunk = chunkStart..<min(chunkStart + perStatement, end)
                var binds = StatementBindings(capacity: chunk.count * width)
                var tuples: [String] = []
                tuples.reserveCapacity(chunk.count)
                for position in chunk {
                    let first = binds.count
                    tuples.append("(" + (1...width).map { "$\(first + $0)" }.joined(separator: ", ") + ")")
                    binds.append(keys[position])
                    binds.append(entityName)
                    let values = rows[position].values
                    for attribute in columns.storedAttributes { PostgresValueCoding.append(values[attribute], to: &binds) }
                    // The stored to-ones, the first slots; the transient ones stay in memory.
                    for destination in rows[position].toOne.prefix(entity.storedToOneCount) { appendKey(destination, to: &binds) }
                }
                _ = try store.guardingUniqueness(entity) {
                    try session.query("INSERT INTO \(pgQuoted(table.name)) (\(names)) VALUES \(tuples.joined(separator: ", "))", binds)
                }
            }
            start = end
        }
    }

    /// Updates `rows` in order, each run of rows of one entity changing the same columns in statements of many rows
    /// (a row each was a round trip each: 50,000 changed objects took 50,000). A row the statement did not change
    /// (its version moved on, or it is gone) is a conflict.
    private mutating func update(_ rows: [ChangeSet.Row]) throws {
        var start = 0
        while start < rows.count {
            let shape = try PostgresUpdateShape(rows[start], store: store)
            var end = start + 1
            while end < rows.count, shape.matches(rows[end]) { end += 1 }
            if !shape.assignments.isEmpty {
                let perStatement = max(1, Self.bindsPerStatement / (2 + shape.assignments.count))
                for chunkStart in stride(from: start, to: end, by: perStatement) {
                    try update(rows[chunkStart..<min(chunkStart + perStatement, end)], shape: shape)
                }
            }
            start = end
        }
    }

    private mutating func update(_ rows: ArraySlice<ChangeSet.Row>, shape: PostgresUpdateShape) throws {
        var binds = StatementBindings(capacity: rows.count * (2 + shape.assignments.count))
        var tuples: [String] = []
        tuples.reserveCapacity(rows.count)
        for row in rows {
            // Each placeholder cast to its column's type: a column of NULLs alone would otherwise be text.
            var placeholders = ["$\(binds.count + 1)::BIGINT", "$\(binds.count + 2)::BIGINT"]
            binds.append(row.objectID.rawKey)
            binds.append(row.version)
            for assignment in shape.assignments {
                switch assignment.source {
                case .attribute(let index): PostgresValueCoding.append(row.values[index], to: &binds)
                case .toOne(let slot): appendKey(row.toOne[slot], to: &binds)
                }
                placeholders.append("$\(binds.count)::\(assignment.sqlType)")
            }
            tuples.append("(" + placeholders.joined(separator: ", ") + ")")
        }
        let values = shape.assignments.indices.map { "v.c\($0)" }
        let sql = """
            UPDATE \(pgQuoted(shape.table.name)) AS t
            SET \(zip(shape.assignments, values).map { "\(pgQuoted($0.column)) = \($1)" }.joined(separator: ", ")), \(Self.version) = t.\(Self.version) + 1
            FROM (VALUES \(tuples.joined(separator: ", "))) AS v(id, version\(values.map { ", " + $0.dropFirst(2) }.joined()))
            WHERE t.\(Self.id) = v.id AND t.\(Self.version) = v.version
            RETURNING t.\(Self.id)
            """
        let changed = try store.guardingUniqueness(shape.entity) { try Set(session.query(sql, binds).map { try $0.decode(Int64.self) }) }
        let missed = rows.filter { !changed.contains($0.objectID.rawKey) }
        let stored = try store.snapshots(ofKeys: missed.map(\.objectID.rawKey), table: shape.table, in: session)
        for row in rows {
            guard changed.contains(row.objectID.rawKey) else {
                conflicts.append(SaveConflict.make(
                    row, id: row.objectID, expected: row.version, stored: stored[row.objectID.rawKey], entity: shape.entity))
                continue
            }
            result.updatedRows.append((row.objectID, row.version + 1))
        }
    }

    /// Deletes `rows` in order, each run of rows of one table in one statement. A row the statement did not delete
    /// (its version moved on, or it is gone) is a conflict.
    private mutating func delete(_ rows: [(objectID: ObjectID, version: Int64)]) throws {
        let entities = try rows.map { try store.layout(for: $0.objectID.entityName) }
        var start = 0
        while start < rows.count {
            let table = entities[start].1
            var end = start + 1
            while end < rows.count, entities[end].1 === table { end += 1 }
            let run = start..<end
            // What a tombstone keeps, read before the rows go, in one statement for the run.
            let kept = try store.snapshots(
                ofKeys: run.filter { !entities[$0].0.preservedAttributes.isEmpty }.map { rows[$0].objectID.rawKey }, table: table, in: session)
            for position in run {
                let (id, entity) = (rows[position].objectID, entities[position].0)
                if let stored = kept[id.rawKey] {
                    tombstones[id] = Dictionary(uniqueKeysWithValues: entity.preservedAttributes.map { (entity.attributes[$0].name, stored.values[$0]) })
                }
            }
            var binds = StatementBindings()
            binds.append(rows[run].map(\.objectID.rawKey))
            binds.append(rows[run].map(\.version))
            let deleted = try Set(session.query("""
                DELETE FROM \(pgQuoted(table.name)) AS t USING unnest($1::BIGINT[], $2::BIGINT[]) AS v(id, version)
                WHERE t.\(Self.id) = v.id AND t.\(Self.version) = v.version
                RETURNING t.\(Self.id)
                """, binds).map { try $0.decode(Int64.self) })
            let missed = run.filter { !deleted.contains(rows[$0].objectID.rawKey) }
            let stored = try store.snapshots(ofKeys: missed.map { rows[$0].objectID.rawKey }, table: table, in: session)
            for position in missed {
                let id = rows[position].objectID
                conflicts.append(SaveConflict.make(nil, id: id, expected: rows[position].version, stored: stored[id.rawKey], entity: entities[position].0))
            }
            start = end
        }
    }

    /// Checks that the rows this save writes nothing for are still at the versions the context read (see
    /// ``ChangeSet/checked``): one read per row's table, the rows held (`FOR SHARE`) so that none moves before the
    /// commit.
    private mutating func check(_ checks: [(objectID: ObjectID, version: Int64)]) throws {
        guard !checks.isEmpty else { return }
        var byTable: [ObjectIdentifier: (table: TableLayout, entity: ModelEntity, checks: [(objectID: ObjectID, version: Int64)])] = [:]
        for check in checks {
            let (entity, table) = try store.layout(for: check.objectID.entityName)
            byTable[ObjectIdentifier(table), default: (table, entity, [])].checks.append(check)
        }
        for (_, group) in byTable {
            var binds = StatementBindings()
            binds.append(group.checks.map(\.objectID.rawKey))
            var versions: [Int64: Int64] = [:]
            for row in try session.query(
                "SELECT \(Self.id), \(Self.version) FROM \(pgQuoted(group.table.name)) WHERE \(Self.id) = ANY($1::BIGINT[]) FOR SHARE", binds) {
                let (key, version) = try row.decode((Int64, Int64).self)
                versions[key] = version
            }
            let moved = group.checks.filter { versions[$0.objectID.rawKey] != $0.version }
            guard !moved.isEmpty else { continue }
            let stored = try store.snapshots(ofKeys: moved.map(\.objectID.rawKey), table: group.table, in: session)
            for check in moved {
                let entity = try store.model.entity(named: check.objectID.entityName)
                conflicts.append(SaveConflict.make(nil, id: check.objectID, expected: check.version, stored: stored[check.objectID.rawKey], entity: entity))
            }
        }
    }

    /// Writes the new contents of to-many relationships: each join table's links in two statements for the whole
    /// save (the owners' old links deleted, then every new one inserted), and the positions of each ordered
    /// one-to-many's members in one, where a statement or two per owner were a round trip or two per owner. The
    /// target sides of relationships ordered on both sides then set their members' `inverse_position`, one statement
    /// per join table.
    private func rewrite(_ changes: [ChangeSet.ToManyContents]) throws {
        var links: [String: JoinTableLinks] = [:]
        var tables: [String] = []
        var positions: [OrderColumn: (keys: [Int64], positions: [Int64])] = [:]
        var columns: [OrderColumn] = []
        // The target sides' lists of relationships ordered on both sides, by join table: written after the links.
        var targetOrders: [String: (targets: [Int64], sources: [Int64], positions: [Int64])] = [:]
        var targetTables: [String] = []
        for contents in changes {
            let owner = permanent(contents.objectID)
            let relationship = try contents.modelRelationship(of: owner, in: store.model)
            switch relationship.storage {
            case .joinTable(let table, true):
                if links[table] == nil {
                    tables.append(table)
                    links[table] = JoinTableLinks(isOrdered: relationship.isOrdered, isOrderedBothWays: relationship.isOrderedBothWays)
                }
                // A row this save inserted has no links to remove.
                links[table]!.add(owner: owner.rawKey, isNew: result.permanentIDs[contents.objectID] != nil,
                                  destinations: contents.destinations.map { permanent($0).rawKey })
            case .joinTable(let table, false) where relationship.isOrderedBothWays:
                if targetOrders[table] == nil { targetTables.append(table) }
                for (position, member) in contents.destinations.enumerated() {
                    targetOrders[table, default: ([], [], [])].targets.append(owner.rawKey)
                    targetOrders[table, default: ([], [], [])].sources.append(permanent(member).rawKey)
                    targetOrders[table, default: ([], [], [])].positions.append(Int64(position))
                }
            case .inverseForeignKey(_, let orderColumn?):
                let destination = try store.model.entity(named: relationship.destinationEntityName)
                let column = OrderColumn(table: destination.tableName, name: orderColumn)
                for (position, member) in contents.destinations.enumerated() {
                    if positions[column] == nil { columns.append(column) }
                    positions[column, default: ([], [])].keys.append(permanent(member).rawKey)
                    positions[column, default: ([], [])].positions.append(Int64(position))
                }
            default:
                break
            }
        }
        for table in tables { try links[table]!.write(to: table, in: session) }
        for table in targetTables {
            var binds = StatementBindings()
            binds.append(targetOrders[table]!.targets)
            binds.append(targetOrders[table]!.sources)
            binds.append(targetOrders[table]!.positions)
            try session.query("""
                UPDATE \(pgQuoted(table)) AS j SET inverse_position = members.position
                FROM unnest($1::BIGINT[], $2::BIGINT[], $3::BIGINT[]) AS members(target, source, position)
                WHERE j.target = members.target AND j.source = members.source
                """, binds)
        }
        for column in columns {
            var binds = StatementBindings()
            binds.append(positions[column]!.keys)
            binds.append(positions[column]!.positions)
            try session.query("""
                UPDATE \(pgQuoted(column.table)) AS d SET \(pgQuoted(column.name)) = members.position
                FROM unnest($1::BIGINT[], $2::BIGINT[]) AS members(key, position) WHERE d.\(Self.id) = members.key
                """, binds)
        }
    }

    /// The column keeping the positions of an ordered one-to-many's members in their table.
    private struct OrderColumn: Hashable {
        let table: String
        let name: String
    }
}

extension PostgresStore {
    /// Runs a statement, turning a broken uniqueness constraint into the error naming the constraint's keys.
    func guardingUniqueness<T>(_ entity: ModelEntity, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let failure as PostgresErrors.Failure where failure.sqlState == "23505" {
            // The server names the index as the store wrote it (shortened where the name is long).
            let constraint = failure.constraintName ?? ""
            let keys = tables[entity.rootName]?.indexes(model: model).first { index in
                index.constraint != nil && SQLDialect.postgresName(index.name) == constraint
            }?.constraint?.keys ?? []
            throw ObjectGraphError.uniquenessViolation(entity: entity.name, keys: keys, detail: failure.message)
        }
    }

    /// The stored rows of `keys` in `table`, by key, read inside a save's transaction in one statement (a row a
    /// time was a round trip a row), and locked for it when `locking`.
    func snapshots(ofKeys keys: [Int64], table: TableLayout, in session: PostgresSession, locking: Bool = false) throws -> [Int64: Snapshot] {
        guard !keys.isEmpty else { return [:] }
        var binds = StatementBindings()
        binds.append(keys)
        let sql = "\(table.selectClause) WHERE t0.\(pgQuoted(StorageNames.rowID)) = ANY($1::BIGINT[])"
            + (locking ? " FOR UPDATE OF t0" : "")
        var found: [Int64: Snapshot] = [:]
        for row in try session.query(sql, binds) {
            let snapshot = try PostgresRowReader.snapshot(row, table: table)
            found[snapshot.objectID.rawKey] = snapshot
        }
        return found
    }

    /// The stored row of each of `ids` that has one of its ID's entity or a sub-entity, by the ID asked: one statement
    /// per table, locked for the transaction when `locking`.
    func snapshots(of ids: [ObjectID], in session: PostgresSession, locking: Bool = false) throws -> [ObjectID: Snapshot] {
        var tables: [String: (table: TableLayout, ids: [ObjectID])] = [:]
        for id in ids where !id.isTemporaryID {
            let table = try layout(for: id.entityName).1
            tables[table.name, default: (table, [])].ids.append(id)
        }
        var found: [ObjectID: Snapshot] = [:]
        for (table, ids) in tables.values {
            let rows = try snapshots(ofKeys: ids.map(\.rawKey), table: table, in: session, locking: locking)
            for id in ids {
                // The key may hold a row of another entity of the tree than the one asked for.
                guard let row = rows[id.rawKey], let asked = model.entityIfPresent(id.entityName),
                      model.entityIfPresent(row.objectID.entityName)?.isKind(of: asked) == true else { continue }
                found[id] = row
            }
        }
        return found
    }
}
