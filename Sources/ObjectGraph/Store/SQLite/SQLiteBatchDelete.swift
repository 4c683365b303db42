import GRDB
import GRDBSQLite
import PredicateFormat

/// A batch delete in SQL, with the model's delete rules applied as a context applies them at save: the rows to
/// delete are gathered per tree in temporary tables, cascades add their destinations until nothing more is added,
/// a deny rule with a destination that survives refuses the whole request, and nullify clears the survivors'
/// references (moving their versions on) before the rows go.
struct SQLiteBatchDelete {
    let store: SQLiteStore
    let db: Database
    private var model: Model { store.model }
    /// The temporary table of each tree's rows to delete, by root entity.
    private var doomed: [String: String] = [:]

    init(store: SQLiteStore, db: Database) {
        self.store = store
        self.db = db
    }

    mutating func run(_ request: BatchDeleteRequest, history: inout HistoryRecord) throws -> BatchResult {
        defer { dropTables() }
        let entity = try model.entity(named: request.entityName)
        let matched = try select(request, entity: entity)
        try cascade()
        try checkDenyRules()
        let nullified = try nullify()
        var deleted: [ObjectID] = []
        for (root, table) in doomed.sorted(by: { $0.key < $1.key }) {
            let rows = try Row.fetchAll(db, sql: "SELECT key, entity FROM \(table) ORDER BY key")
            let tombstones = try self.tombstones(root: root, table: table)
            for row in rows {
                let id = ObjectID(entityName: row[1], rawKey: row[0])
                deleted.append(id)
                if store.recordsHistory { history.add(id, .delete, tombstone: tombstones[id.rawKey] ?? [:]) }
            }
            try db.execute(sql: "DELETE FROM \(sqlQuoted(try model.entity(named: root).tableName)) WHERE \(RowColumn.id) IN (SELECT key FROM \(table))")
        }
        if store.recordsHistory {
            for (id, property) in nullified { history.add(id, .update, properties: [property]) }
        }
        guard request.resultType == .objectIDs else { return BatchResult(count: matched.count) }
        return BatchResult(count: matched.count, objectIDs: matched, changes: StoreChanges(updated: nullified.map(\.id), deleted: deleted))
    }

    /// The temporary table for `root`'s rows to delete, created on first use.
    private mutating func table(_ root: String) throws -> String {
        if let table = doomed[root] { return table }
        let table = "temp." + sqlQuoted("objectgraph.doomed.\(root)")
        try db.execute(sql: "CREATE TEMP TABLE IF NOT EXISTS \(table) (key INTEGER PRIMARY KEY, entity TEXT NOT NULL)")
        try db.execute(sql: "DELETE FROM \(table)")
        doomed[root] = table
        return table
    }

    private func dropTables() {
        for table in doomed.values { try? db.execute(sql: "DROP TABLE IF EXISTS \(table)") }
    }

    /// Gathers the rows the request names or selects; returns their IDs.
    private mutating func select(_ request: BatchDeleteRequest, entity: ModelEntity) throws -> [ObjectID] {
        let table = try table(entity.rootName)
        if let ids = request.objectIDs {
            let insert = try db.makeStatement(sql: """
                INSERT OR IGNORE INTO \(table) SELECT \(RowColumn.id), \(RowColumn.entity) FROM \(sqlQuoted(entity.tableName)) WHERE \(RowColumn.id) = ?
                """)
            for id in try request.checkedObjectIDs(ids, model: model) { try insert.execute(arguments: [id.rawKey]) }
        } else {
            var (conditions, arguments) = store.entityFilter(entity, includesSubentities: request.includesSubentities)
            let compiled: CompiledPredicate
            do {
                compiled = try SQLCompiler(schema: store).compile(request.predicate, entity: entity.name, alias: "t0", firstArgumentIndex: arguments.count + 1)
            } catch {
                throw ObjectGraphError.invalidPredicate(entity: entity.name, error: error)
            }
            conditions.append(compiled.condition)
            let statement = try db.makeStatement(sql: """
                INSERT INTO \(table) SELECT t0.\(RowColumn.id), t0.\(RowColumn.entity) FROM \(sqlQuoted(entity.tableName)) AS t0 \
                \(compiled.joins.joined(separator: " ")) WHERE \(conditions.joined(separator: " AND "))
                """)
            try statement.bind(arguments + compiled.arguments)
            try statement.step()
        }
        return try Row.fetchAll(db, sql: "SELECT key, entity FROM \(table) ORDER BY key").map { ObjectID(entityName: $0[1], rawKey: $0[0]) }
    }

    /// SQL giving `(source, target)` for each link of `relationship` from the rows of `entity` in `sources` (the
    /// rows to delete), whatever holds the link: the source's column, the destination's, or a join table.
    private func links(_ entity: ModelEntity, _ relationship: ModelRelationship, from sources: String) throws -> String {
        let keys = "(SELECT key FROM \(sources) WHERE entity = \(sqlStringLiteral(entity.name)))"
        let destination = try model.entity(named: relationship.destinationEntityName)
        switch relationship.storage {
        case .foreignKey(let column):
            return "SELECT s.\(RowColumn.id) AS source, s.\(sqlQuoted(column)) AS target FROM \(sqlQuoted(entity.tableName)) AS s WHERE s.\(RowColumn.id) IN \(keys) AND s.\(sqlQuoted(column)) IS NOT NULL"
        case .inverseForeignKey(let column, _):
            return "SELECT d.\(sqlQuoted(column)) AS source, d.\(RowColumn.id) AS target FROM \(sqlQuoted(destination.tableName)) AS d WHERE d.\(sqlQuoted(column)) IN \(keys)"
        case .joinTable(let table, let isSourceSide):
            let (mine, other) = isSourceSide ? ("source", "target") : ("target", "source")
            return "SELECT j.\(mine) AS source, j.\(other) AS target FROM \(sqlQuoted(table)) AS j WHERE j.\(mine) IN \(keys)"
        case .transient:
            return "SELECT NULL AS source, NULL AS target WHERE 0"
        }
    }

    /// Every (entity, relationship) of the trees with rows to delete whose rule is `rule`.
    private func relationships(_ rules: Set<DeleteRule>) -> [(root: String, entity: ModelEntity, relationship: ModelRelationship)] {
        doomed.keys.sorted().flatMap { root in
            model.entities.filter { $0.rootName == root }.flatMap { entity in
                // A transient relationship links nothing in the store: its rule applies in the contexts that hold it.
                entity.relationships.filter { rules.contains($0.deleteRule) && !$0.isTransient }.map { (root, entity, $0) }
            }
        }
    }

    private mutating func cascade() throws {
        var grew = true
        while grew {
            grew = false
            for (root, entity, relationship) in relationships([.cascade]) {
                let destination = try model.entity(named: relationship.destinationEntityName)
                let target = try table(destination.rootName)
                try db.execute(sql: """
                    INSERT OR IGNORE INTO \(target) SELECT d.\(RowColumn.id), d.\(RowColumn.entity) FROM \(sqlQuoted(destination.tableName)) AS d \
                    WHERE d.\(RowColumn.id) IN (SELECT target FROM (\(try links(entity, relationship, from: doomed[root]!))))
                    """)
                if db.changesCount > 0 { grew = true }
            }
        }
    }

    private mutating func checkDenyRules() throws {
        for (root, entity, relationship) in relationships([.deny]) {
            let destination = try model.entity(named: relationship.destinationEntityName)
            let survivors = try table(destination.rootName)
            let links = try links(entity, relationship, from: doomed[root]!)
            if let row = try Row.fetchOne(db, sql: """
                SELECT source, count(*) FROM (\(links)) WHERE target NOT IN (SELECT key FROM \(survivors)) GROUP BY source ORDER BY source LIMIT 1
                """) {
                throw ObjectGraphError.deleteDenied(
                    entity: entity.name, objectID: ObjectID(entityName: entity.name, rawKey: row[0]), relationship: relationship.name, count: row[1])
            }
        }
    }

    /// Clears the references surviving rows hold to rows to delete, where the deleted side's rule asks it (every
    /// rule but no action) and the survivor keeps the reference in its own row; returns each survivor with the
    /// relationship cleared.
    private mutating func nullify() throws -> [(id: ObjectID, property: String)] {
        var cleared: [(ObjectID, String)] = []
        for (root, entity, relationship) in relationships([.nullify, .cascade, .deny]) {
            guard case .inverseForeignKey(let column, _) = relationship.storage, relationship.hasInverse else { continue }
            let destination = try model.entity(named: relationship.destinationEntityName)
            let survivors = try table(destination.rootName)
            let keys = "(SELECT key FROM \(doomed[root]!) WHERE entity = \(sqlStringLiteral(entity.name)))"
            for row in try Row.fetchAll(db, sql: """
                UPDATE \(sqlQuoted(destination.tableName)) SET \(sqlQuoted(column)) = NULL, \(RowColumn.version) = \(RowColumn.version) + 1
                WHERE \(sqlQuoted(column)) IN \(keys) AND \(RowColumn.id) NOT IN (SELECT key FROM \(survivors))
                RETURNING \(RowColumn.id), \(RowColumn.entity)
                """) {
                cleared.append((ObjectID(entityName: row[1], rawKey: row[0]), relationship.inverseName))
            }
        }
        return cleared
    }

    /// The preserved values of `root`'s rows to delete, by key.
    private func tombstones(root: String, table: String) throws -> [Int64: [String: AttributeValue]] {
        guard store.recordsHistory else { return [:] }
        var result: [Int64: [String: AttributeValue]] = [:]
        for entity in model.entities where entity.rootName == root {
            let preserved = entity.preservedAttributes
            guard !preserved.isEmpty else { continue }
            let columns = preserved.map { "t0." + sqlQuoted(entity.attributeColumns[$0]) }.joined(separator: ", ")
            for row in try Row.fetchAll(db, sql: """
                SELECT t0.\(RowColumn.id), \(columns) FROM \(sqlQuoted(entity.tableName)) AS t0
                WHERE t0.\(RowColumn.id) IN (SELECT key FROM \(table) WHERE entity = ?)
                """, arguments: [entity.name]) {
                result[row[0]] = SQLiteStore.tombstone(row, from: 1, entity: entity, attributes: preserved)
            }
        }
        return result
    }
}

extension SQLiteStore {
    func batchDelete(_ request: BatchDeleteRequest, db: Database, history: inout HistoryRecord) throws -> BatchResult {
        var delete = SQLiteBatchDelete(store: self, db: db)
        return try delete.run(request, history: &history)
    }
}
