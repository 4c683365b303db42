import Foundation
import GRDB
import PredicateFormat

/// Runs a ``MigrationPlan`` on an SQLite store, inside the caller's transaction with foreign keys off (see
/// ``SQLiteStore``'s opening): the old tables are moved aside, the new model's schema is created, every row is copied
/// across entity by entity with its key, its version and its values converted as the plan says, relationships are
/// rebuilt (a to-one becoming a to-many fills a join table), and the old tables are dropped. SQLite copies the rows
/// itself (`INSERT … SELECT`), so no row passes through memory. A failure anywhere rolls all of it back.
enum SQLiteMigration {
    private static let aside = "objectgraph.migrating."

    /// Migrates the store in `db` from `source` to `destination`, naming `path` in every refusal; `step` of `steps`
    /// for the progress reported to `progress`.
    static func run(
        from source: Model, to destination: Model, in db: Database, path: String, step: Int = 1, steps: Int = 1, progress: MigrationProgressHandler? = nil
    ) throws {
        try MigrationPlan.namingStore(path) {
            let plan = try MigrationPlan(from: source, to: destination)
            let modelJSON = String(decoding: destination.canonicalJSON(), as: UTF8.self)
            // The step's time: its work on the store, the plan (inferred once already by the file check) and the
            // model's encoding apart.
            let started = ContinuousClock.now
            // A step that only adds changes the schema in place; any other rebuilds its tables.
            if try AdditiveMigration.applyIfAdditive(plan, modelJSON: modelJSON, in: db) {
                progress?(MigrationProgress(
                    step: step, steps: steps, entity: plan.entities.last?.entity ?? "", entitiesDone: plan.entities.count, entities: plan.entities.count,
                    rowsDone: 0, rows: 0, elapsed: ContinuousClock.now - started))
                return
            }
            try migrate(plan, modelJSON: modelJSON, in: db, path: path, report: progress.map { handler in
                { entity, entitiesDone, entities, rowsDone, rows in
                    handler(MigrationProgress(
                        step: step, steps: steps, entity: entity, entitiesDone: entitiesDone, entities: entities, rowsDone: rowsDone, rows: rows,
                        elapsed: ContinuousClock.now - started))
                }
            })
        }
    }

    private static func migrate(
        _ plan: MigrationPlan, modelJSON: String, in db: Database, path: String, report: ((String, Int, Int, Int, Int) -> Void)?
    ) throws {
        let (old, new) = (plan.source, plan.destination)
        let moved = old.entities.filter { $0.rootName == $0.name }.map(\.tableName) + SQLiteStore.joinTables(old).map(\.name)
            + [StorageNames.metadataTable, StorageNames.sequenceTable, StorageNames.schemaTable]
        for name in moved where try db.tableExists(name) {
            try db.execute(sql: "ALTER TABLE \(sqlQuoted(name)) RENAME TO \(sqlQuoted(aside + name))")
        }
        // Indexes and triggers keep their names when their table moves: the new schema's would meet them.
        let attached = try Row.fetchAll(db, sql: """
            SELECT type, name FROM sqlite_master WHERE type IN ('index', 'trigger') AND sql IS NOT NULL AND tbl_name LIKE 'objectgraph.migrating.%'
            """)
        for row in attached {
            try db.execute(sql: "DROP \((row[0] as String) == "index" ? "INDEX" : "TRIGGER") \(sqlQuoted(row[1] as String))")
        }
        let kept = try Row.fetchAll(db, sql: """
            SELECT key, CAST(value AS TEXT) FROM \(sqlQuoted(aside + StorageNames.metadataTable))
            WHERE key NOT IN ('model_hash', 'model', 'format_version')
            """).map { ($0[0] as String, $0[1] as String) }
        try SQLiteStore.createSchema(db, model: new, tables: SQLiteStore.tableLayouts(new), metadata: kept + [
            ("model_hash", new.versionHash), ("model", modelJSON),
        ])
        try carrySequences(plan, in: db)
        // Rows to copy, counted first so that progress has a total.
        var counts: [String: Int] = [:]
        for step in plan.entities {
            guard let sourceName = step.source, let entity = old.entityIfPresent(sourceName) else { continue }
            counts[step.entity] = try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM \(sqlQuoted(aside + entity.tableName)) WHERE \(RowColumn.entity) = ?", arguments: [entity.name]) ?? 0
        }
        let total = counts.values.reduce(0, +)
        var done = 0
        for (index, step) in plan.entities.enumerated() {
            try copyRows(step, plan: plan, in: db)
            done += counts[step.entity] ?? 0
            report?(step.entity, index + 1, plan.entities.count, done, total)
        }
        try copyRelationships(plan, in: db)
        for name in moved where try db.tableExists(aside + name) { try db.execute(sql: "DROP TABLE \(sqlQuoted(aside + name))") }
    }

    /// Keys stay as they were: each new tree's sequence starts after the highest key of the old trees it takes.
    private static func carrySequences(_ plan: MigrationPlan, in db: Database) throws {
        var highest: [String: Int64] = [:]
        for step in plan.entities {
            guard let sourceName = step.source, let old = plan.source.entityIfPresent(sourceName),
                  let new = plan.destination.entityIfPresent(step.entity) else { continue }
            let key = try Int64.fetchOne(
                db, sql: "SELECT max_key FROM \(sqlQuoted(aside + StorageNames.sequenceTable)) WHERE entity = ?", arguments: [old.rootName]) ?? 0
            highest[new.rootName] = max(highest[new.rootName] ?? 0, key)
        }
        for (root, key) in highest {
            try db.execute(sql: "UPDATE \(sqlQuoted(StorageNames.sequenceTable)) SET max_key = ? WHERE entity = ?", arguments: [key, root])
        }
    }

    private static func copyRows(_ step: MigrationPlan.EntityStep, plan: MigrationPlan, in db: Database) throws {
        guard let sourceName = step.source, let old = plan.source.entityIfPresent(sourceName),
              let new = plan.destination.entityIfPresent(step.entity) else { return }
        let oldTable = sqlQuoted(aside + old.tableName)
        let ofEntity = "o.\(RowColumn.entity) = \(sqlStringLiteral(old.name))"
        var columns = [RowColumn.id, RowColumn.entity, RowColumn.version]
        var values = ["o.\(RowColumn.id)", sqlStringLiteral(new.name), "o.\(RowColumn.version)"]
        var arguments: [DatabaseValue] = []
        for attribute in step.attributes {
            guard let index = new.attributeIndex[attribute.name] else { continue }
            let description = new.attributes[index]
            var value = "NULL"
            if let sourceName = attribute.source, let oldIndex = old.attributeIndex[sourceName] {
                value = convert("o.\(sqlQuoted(old.attributeColumns[oldIndex]))", from: attribute.convertedFrom, to: description.type)
            }
            if let fill = attribute.fill {
                value = "COALESCE(\(value), ?)"
                arguments.append(SQLiteValueCoding.encode(fill))
            } else if !description.isOptional && description.derivation == nil {
                // Required, with nothing to fill a missing value: every row must have one already.
                let missing = value == "NULL"
                    ? try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(oldTable) AS o WHERE \(ofEntity)") ?? 0
                    : try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(oldTable) AS o WHERE \(ofEntity) AND \(value) IS NULL") ?? 0
                if missing > 0 {
                    throw MigrationPlan.refusal(
                        new.name, attribute.name, "it is required and has no default, but \(missing) of the rows have no value for it")
                }
            }
            columns.append(sqlQuoted(new.attributeColumns[index]))
            values.append(value)
        }
        for relationship in step.relationships {
            guard let sourceName = relationship.source, case .foreignKey(let column)? = new.relationship(named: relationship.name)?.storage,
                  case .foreignKey(let oldColumn)? = old.relationship(named: sourceName)?.storage else { continue }
            columns.append(sqlQuoted(column))
            values.append("o.\(sqlQuoted(oldColumn))")
        }
        do {
            try db.execute(
                sql: "INSERT INTO \(sqlQuoted(new.tableName)) (\(columns.joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) FROM \(oldTable) AS o WHERE \(ofEntity)",
                arguments: StatementArguments(arguments))
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            let keys = new.uniquenessConstraints.first { keys in
                keys.allSatisfy { key in (error.message ?? "").contains(".\(new.attributeIndex[key].map { new.attributeColumns[$0] } ?? key)") }
            } ?? []
            // The duplicates, as the old rows hold them.
            let oldColumns = keys.compactMap { key in
                step.attributes.first { $0.name == key }?.source.flatMap { old.attributeIndex[$0] }.map { old.attributeColumns[$0] }
            }
            let found = oldColumns.count == keys.count ? try duplicates(in: aside + old.tableName, columns: oldColumns, where: ofEntity, db) : ""
            throw MigrationPlan.refusal(
                new.name, keys.joined(separator: ", "), "its uniqueness constraint finds rows with the same values\(found); a custom stage can remove the duplicates first")
        }
    }

    /// The first values `columns` of `table` hold in more than one row, for a message: " (123 in 3 rows, …)".
    static func duplicates(in table: String, columns: [String], where condition: String, _ db: Database) throws -> String {
        guard !columns.isEmpty else { return "" }
        let list = columns.map { "o.\(sqlQuoted($0))" }.joined(separator: ", ")
        let rows = try Row.fetchAll(db, sql: """
            SELECT \(list), COUNT(*) FROM \(sqlQuoted(table)) AS o WHERE \(condition) GROUP BY \(list) HAVING COUNT(*) > 1 LIMIT 3
            """)
        guard !rows.isEmpty else { return "" }
        let described = rows.map { row in
            let values = (0..<columns.count).map { "\(row[$0] as DatabaseValue)" }.joined(separator: ", ")
            return "\(values) in \(row[columns.count] as Int) rows"
        }
        return " (" + described.joined(separator: "; ") + ")"
    }

    /// A value of an old column as the new attribute type stores it (see ``MigrationPlan/converts(_:to:)``).
    private static func convert(_ column: String, from old: AttributeType?, to new: AttributeType) -> String {
        guard let old else { return column }
        switch new {
        case .double, .float: return "CAST(\(column) AS REAL)"
        case .string where old == .date:
            // Seconds since 2001 (978,307,200 s after 1970), as ISO 8601 text.
            return "strftime('%Y-%m-%dT%H:%M:%fZ', \(column) + 978307200, 'unixepoch')"
        case .string where old == .binary:
            return "CASE WHEN \(column) IS NULL THEN NULL ELSE lower(hex(\(column))) END"
        case .decimal, .string: return [.uuid, .uri, .decimal].contains(old) ? column : "CAST(\(column) AS TEXT)"
        default: return column
        }
    }

    /// Join tables, and positions of ordered to-many relationships, as the new model keeps them.
    private static func copyRelationships(_ plan: MigrationPlan, in db: Database) throws {
        var filled: Set<String> = []
        for step in plan.entities {
            guard let sourceName = step.source, let old = plan.source.entityIfPresent(sourceName),
                  let new = plan.destination.entityIfPresent(step.entity) else { continue }
            for relationshipStep in step.relationships {
                guard let oldName = relationshipStep.source, let relationship = new.relationship(named: relationshipStep.name),
                      let oldRelationship = old.relationship(named: oldName),
                      let oldDestination = plan.source.entityIfPresent(oldRelationship.destinationEntityName) else { continue }
                switch relationship.storage {
                case .foreignKey, .transient:
                    break
                case .inverseForeignKey(_, let orderColumn?):
                    guard case .inverseForeignKey(_, let oldOrder?) = oldRelationship.storage, filled.insert(orderColumn).inserted,
                          let destination = plan.destination.entityIfPresent(relationship.destinationEntityName) else { continue }
                    let newTable = sqlQuoted(destination.tableName)
                    try db.execute(sql: """
                        UPDATE \(newTable) SET \(sqlQuoted(orderColumn)) = (SELECT o.\(sqlQuoted(oldOrder)) FROM \(sqlQuoted(aside + oldDestination.tableName)) AS o
                        WHERE o.\(RowColumn.id) = \(newTable).\(RowColumn.id))
                        """)
                case .inverseForeignKey:
                    break
                case .joinTable(let table, let isSourceSide):
                    guard filled.insert(table).inserted else { continue }
                    let copy = JoinTableCopy(oldTable: { sqlQuoted(aside + $0) }, quoted: sqlQuoted, nullInteger: "NULL")
                    if let statement = copy.statement(
                        for: relationship, isSourceSide: isSourceSide, table: table, from: oldRelationship, of: old, to: oldDestination) {
                        try db.execute(sql: statement)
                    }
                }
            }
        }
    }
}
