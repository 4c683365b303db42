import Foundation
import ObjectGraph
import PostgresNIO

/// Runs a `MigrationPlan` on a PostgreSQL store, inside the opening transaction (see ``PostgresSchema``), as the
/// SQLite store's rebuild does: the old tables move to a schema aside, the new model's tables are created, every row
/// is copied by the server (`INSERT … SELECT`) with its key, its version and its values converted as the plan says,
/// relationships are rebuilt (a to-one becoming a to-many fills a join table), and the old tables are dropped.
/// History stays where it is. A step's custom stages run around it in the same transaction. A failure anywhere rolls
/// all of it back.
enum PostgresMigration {
    private static let aside = "objectgraph_migrating"

    /// Migrates the store `session` sees from `source` to `destination`, naming `location` in every refusal and
    /// reporting to `progress` after each entity's rows, as step `step` of `steps`.
    static func run(
        from source: Model, to destination: Model, in session: PostgresSession, location: String,
        step: Int = 1, steps: Int = 1, progress: MigrationProgressHandler? = nil
    ) throws {
        let started = ContinuousClock.now
        let plan = try MigrationPlan.namingStore(location) { try MigrationPlan(from: source, to: destination) }
        try session.query("CREATE SCHEMA \(pgQuoted(aside))")
        let moved = source.entities.filter { $0.rootName == $0.name }.map(\.tableName) + SQLiteStore.joinTables(source).map(\.name)
            + [StorageNames.metadataTable, StorageNames.sequenceTable]
        for name in moved { try session.query("ALTER TABLE \(pgQuoted(name)) SET SCHEMA \(pgQuoted(aside))") }
        // The old model's derivation triggers go with their functions; the new model's are made anew.
        for row in try session.query("SELECT proname FROM pg_proc WHERE proname LIKE 'og\\_derive\\_%'") {
            try session.query("DROP FUNCTION \(try row.decode(String.self)) CASCADE")
        }
        var kept: [(String, String)] = []
        for row in try session.query("""
            SELECT key, value FROM \(old(StorageNames.metadataTable)) WHERE key NOT IN ('model_hash', 'model', 'format_version')
            """) {
            kept.append(try row.decode((String, String).self))
        }
        let tables = PostgresSchema.tableLayouts(destination)
        for statement in PostgresSchema.createStatements(model: destination, tables: tables, includingHistory: false) { try session.query(statement) }
        var metadata = StatementBindings()
        var tuples: [String] = []
        for (key, value) in kept + [
            ("model_hash", destination.versionHash), ("model", String(decoding: destination.canonicalJSON(), as: UTF8.self)),
            ("format_version", "\(PostgresSchema.formatVersion)"),
        ] {
            tuples.append("($\(metadata.count + 1), $\(metadata.count + 2))")
            metadata.append(key)
            metadata.append(value)
        }
        try session.query("INSERT INTO \(pgQuoted(StorageNames.metadataTable)) (key, value) VALUES \(tuples.joined(separator: ", "))", metadata)
        try carrySequences(plan, in: session)
        // Rows to copy, counted first so that progress has a total.
        var counts: [String: Int] = [:]
        if progress != nil {
            for entityStep in plan.entities {
                guard let sourceName = entityStep.source, let oldEntity = plan.source.entityIfPresent(sourceName) else { continue }
                counts[entityStep.entity] = Int(try session.query(
                    "SELECT COUNT(*) FROM \(old(oldEntity.tableName)) WHERE \(pgQuoted(StorageNames.rowEntity)) = $1",
                    PostgresSchema.binds([oldEntity.name])
                ).first?.decode(Int64.self) ?? 0)
            }
        }
        let total = counts.values.reduce(0, +)
        var done = 0
        for (index, entityStep) in plan.entities.enumerated() {
            try copyRows(entityStep, plan: plan, in: session, location: location)
            done += counts[entityStep.entity] ?? 0
            progress?(MigrationProgress(
                step: step, steps: steps, entity: entityStep.entity, entitiesDone: index + 1, entities: plan.entities.count,
                rowsDone: done, rows: total, elapsed: ContinuousClock.now - started))
        }
        try copyRelationships(plan, in: session)
        // The copies' references are checked now (they are deferred to commit otherwise, and PostgreSQL drops no
        // table with checks pending), then deferred again for what follows in the transaction.
        try session.query("SET CONSTRAINTS ALL IMMEDIATE")
        try session.query("DROP SCHEMA \(pgQuoted(aside)) CASCADE")
        try session.query("SET CONSTRAINTS ALL DEFERRED")
    }

    /// Runs a custom stage on a context of `model` inside the migration's transaction, and saves what it changed
    /// there (in a savepoint): the stage sees the rows as the migration left them so far, and its changes commit or
    /// roll back with the whole migration, as the SQLite store's copy does.
    static func runStage(
        _ body: @escaping @Sendable (isolated ObjectContext) throws -> Void, model: Model, in session: PostgresSession, identifier: String
    ) throws {
        let store = PostgresStore(stageOf: session, model: model, identifier: identifier)
        let coordinator = PersistentStoreCoordinator(model: model, store: store)
        try ObjectContext(coordinator: coordinator, name: "migration stage").performAndWait { ctx in
            try body(ctx)
            try ctx.save()
        }
    }

    /// An old table, in the schema aside.
    private static func old(_ table: String) -> String { "\(pgQuoted(aside)).\(pgQuoted(table))" }

    /// Keys stay as they were: each new tree's sequence starts after the highest key of the old trees it takes.
    private static func carrySequences(_ plan: MigrationPlan, in session: PostgresSession) throws {
        var highest: [String: Int64] = [:]
        for step in plan.entities {
            guard let sourceName = step.source, let oldEntity = plan.source.entityIfPresent(sourceName),
                  let new = plan.destination.entityIfPresent(step.entity) else { continue }
            let key = try session.query(
                "SELECT max_key FROM \(old(StorageNames.sequenceTable)) WHERE entity = $1", PostgresSchema.binds([oldEntity.rootName])
            ).first?.decode(Int64.self) ?? 0
            highest[new.rootName] = max(highest[new.rootName] ?? 0, key)
        }
        for (root, key) in highest {
            var binds = StatementBindings()
            binds.append(key)
            binds.append(root)
            try session.query("UPDATE \(pgQuoted(StorageNames.sequenceTable)) SET max_key = $1 WHERE entity = $2", binds)
        }
    }

    private static func copyRows(_ step: MigrationPlan.EntityStep, plan: MigrationPlan, in session: PostgresSession, location: String) throws {
        guard let sourceName = step.source, let oldEntity = plan.source.entityIfPresent(sourceName),
              let new = plan.destination.entityIfPresent(step.entity) else { return }
        let oldTable = old(oldEntity.tableName)
        let ofEntity = "o.\(pgQuoted(StorageNames.rowEntity)) = \(PostgresSchema.sqlLiteral(oldEntity.name))"
        var columns = [StorageNames.rowID, StorageNames.rowEntity, StorageNames.rowVersion].map(pgQuoted)
        var values = ["o.\(pgQuoted(StorageNames.rowID))", PostgresSchema.sqlLiteral(new.name), "o.\(pgQuoted(StorageNames.rowVersion))"]
        var binds = StatementBindings()
        for attribute in step.attributes {
            guard let index = new.attributeIndex[attribute.name] else { continue }
            let description = new.attributes[index]
            guard !description.isTransient else { continue }
            var value = "NULL"
            if let sourceName = attribute.source, let oldIndex = oldEntity.attributeIndex[sourceName] {
                value = convert("o.\(pgQuoted(oldEntity.attributeColumns[oldIndex]))", from: attribute.convertedFrom, to: description.type)
            }
            if let fill = attribute.fill {
                PostgresValueCoding.append(fill, to: &binds)
                value = "COALESCE(\(value), $\(binds.count))"
            } else if !description.isOptional && description.derivation == nil {
                // Required, with nothing to fill a missing value: every row must have one already.
                let missing = try session.query(
                    "SELECT COUNT(*) FROM \(oldTable) AS o WHERE \(ofEntity)\(value == "NULL" ? "" : " AND \(value) IS NULL")"
                ).first?.decode(Int64.self) ?? 0
                if missing > 0 {
                    throw ObjectGraphError.migrationRefused(
                        path: location, entity: new.name, property: attribute.name,
                        reason: "it is required and has no default, but \(missing) of the rows have no value for it")
                }
            }
            columns.append(pgQuoted(new.attributeColumns[index]))
            values.append(value)
        }
        for relationship in step.relationships {
            guard let sourceName = relationship.source, case .foreignKey(let column)? = new.relationship(named: relationship.name)?.storage,
                  case .foreignKey(let oldColumn)? = oldEntity.relationship(named: sourceName)?.storage else { continue }
            columns.append(pgQuoted(column))
            values.append("o.\(pgQuoted(oldColumn))")
        }
        do {
            try session.query(
                "INSERT INTO \(pgQuoted(new.tableName)) (\(columns.joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) FROM \(oldTable) AS o WHERE \(ofEntity)",
                binds)
        } catch let failure as PostgresErrors.Failure where failure.sqlState == "23505" {
            throw ObjectGraphError.migrationRefused(
                path: location, entity: new.name, property: nil,
                reason: "a uniqueness constraint finds rows with the same values (\(failure.message)); a custom stage can remove the duplicates first")
        }
    }

    /// A value of an old column as the new attribute type stores it (see `MigrationPlan.converts(_:to:)`), in the
    /// forms the SQLite store's migration writes.
    private static func convert(_ column: String, from oldType: AttributeType?, to new: AttributeType) -> String {
        guard let oldType else { return column }
        switch new {
        case .double, .float: return "CAST(\(column) AS DOUBLE PRECISION)"
        case .string where oldType == .date:
            // Seconds since 2001 (978,307,200 s after 1970), as ISO 8601 text with milliseconds.
            return #"to_char(to_timestamp(\#(column) + 978307200) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"#
        case .string where oldType == .binary: return "encode(\(column), 'hex')"
        case .decimal, .string: return [.uuid, .uri, .decimal].contains(oldType) ? column : "CAST(\(column) AS TEXT)"
        default: return column
        }
    }

    /// Join tables, and positions of ordered to-many relationships, as the new model keeps them.
    private static func copyRelationships(_ plan: MigrationPlan, in session: PostgresSession) throws {
        let id = pgQuoted(StorageNames.rowID)
        var filled: Set<String> = []
        for step in plan.entities {
            guard let sourceName = step.source, let oldEntity = plan.source.entityIfPresent(sourceName),
                  let new = plan.destination.entityIfPresent(step.entity) else { continue }
            for relationshipStep in step.relationships {
                guard let oldName = relationshipStep.source, let relationship = new.relationship(named: relationshipStep.name),
                      let oldRelationship = oldEntity.relationship(named: oldName),
                      let oldDestination = plan.source.entityIfPresent(oldRelationship.destinationEntityName) else { continue }
                switch relationship.storage {
                case .foreignKey, .inverseForeignKey(_, nil), .transient:
                    break
                case .inverseForeignKey(_, let orderColumn?):
                    guard case .inverseForeignKey(_, let oldOrder?) = oldRelationship.storage, filled.insert(orderColumn).inserted,
                          let destination = plan.destination.entityIfPresent(relationship.destinationEntityName) else { continue }
                    let newTable = pgQuoted(destination.tableName)
                    try session.query("""
                        UPDATE \(newTable) SET \(pgQuoted(orderColumn)) = o.\(pgQuoted(oldOrder)) FROM \(old(oldDestination.tableName)) AS o
                        WHERE o.\(id) = \(newTable).\(id)
                        """)
                case .joinTable(let table, let isSourceSide):
                    guard filled.insert(table).inserted else { continue }
                    let copy = JoinTableCopy(oldTable: old, quoted: pgQuoted, nullInteger: "NULL::BIGINT")
                    if let statement = copy.statement(
                        for: relationship, isSourceSide: isSourceSide, table: table, from: oldRelationship, of: oldEntity, to: oldDestination) {
                        try session.query(statement)
                    }
                }
            }
        }
    }
}
