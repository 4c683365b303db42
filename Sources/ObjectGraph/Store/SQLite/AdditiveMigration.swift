import Foundation
import GRDB
import PredicateFormat

/// The in-place way through a migration step that only adds: new optional attributes and to-one relationships
/// (columns), many-to-many relationships (join tables), indexes and uniqueness constraints. Nothing is copied:
/// `ALTER TABLE … ADD COLUMN` changes the schema alone, so adding an attribute to a table of a million rows costs
/// what SQLite's own statement costs. Any other step rebuilds its tables (see ``SQLiteMigration``).
enum AdditiveMigration {
    /// Applies `plan` in place when it only adds; returns false, having changed nothing, when it does more.
    static func applyIfAdditive(_ plan: MigrationPlan, modelJSON: String, in db: Database) throws -> Bool {
        guard let additions = plan.additions else { return false }
        let (old, new) = (plan.source, plan.destination)
        // The bookkeeping first, the schema changes last: after a schema change SQLite re-reads the schema before
        // the next statement, and that cost more than the rest of the step together.
        try db.execute(sql: "UPDATE \(sqlQuoted(StorageNames.metadataTable)) SET value = ? WHERE key = 'model_hash'", arguments: [new.versionHash])
        try db.execute(
            sql: "UPDATE \(sqlQuoted(StorageNames.metadataTable)) SET value = ? WHERE key = 'model'",
            arguments: [modelJSON])
        try SQLiteStore.fillSchemaTable(db, model: new, adding: old)
        for column in additions.columns {
            let type = column.type.map(TableLayout.sqlType) ?? "INTEGER"
            let references = column.references.map { " REFERENCES \(sqlQuoted($0))(\(RowColumn.id)) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED" } ?? ""
            try db.execute(sql: "ALTER TABLE \(sqlQuoted(column.table)) ADD COLUMN \(sqlQuoted(column.name)) \(type)\(references)")
            if let fill = column.fill {
                try db.execute(
                    sql: "UPDATE \(sqlQuoted(column.table)) SET \(sqlQuoted(column.name)) = ? WHERE \(RowColumn.entity) IN (\(column.entities.map(sqlStringLiteral).joined(separator: ", ")))",
                    arguments: [SQLiteValueCoding.encode(fill)])
            }
        }
        for table in SQLiteStore.joinTables(new) where additions.joinTables.contains(table.name) { try SQLiteStore.createJoinTable(db, table) }
        // Indexes change only with the entities' declarations, or for a new to-one's key column.
        let sameIndexes = additions.columns.allSatisfy { $0.type != nil } && zip(old.entities, new.entities).allSatisfy { was, entity in
            was.name == entity.name && was.description.indexes == entity.description.indexes
                && was.description.uniquenessConstraints == entity.description.uniquenessConstraints
                && was.description.attributes.filter(\.isIndexed).map(\.name) == entity.description.attributes.filter(\.isIndexed).map(\.name)
        }
        if !sameIndexes { try replaceIndexes(old: old, new: new, in: db) }
        return true
    }

    /// Creates the new model's indexes the store lacks and drops those it no longer declares; a uniqueness
    /// constraint that finds duplicates is refused, naming them.
    private static func replaceIndexes(old: Model, new: Model, in db: Database) throws {
        func indexes(_ model: Model) -> [String: TableLayout.Index] {
            var result: [String: TableLayout.Index] = [:]
            for table in SQLiteStore.tableLayouts(model) {
                for index in table.indexes(model: model) { result[index.name] = index }
            }
            return result
        }
        let (before, after) = (indexes(old), indexes(new))
        for name in before.keys where after[name] == nil { try db.execute(sql: "DROP INDEX IF EXISTS \(sqlQuoted(name))") }
        for (name, index) in after where before[name] == nil {
            do {
                try db.execute(sql: index.sql)
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
                var found = ""
                if let constraint = index.constraint, let entity = new.entityIfPresent(constraint.entity) {
                    let columns = constraint.keys.compactMap { entity.attributeIndex[$0].map { entity.attributeColumns[$0] } }
                    let kinds = "o.\(RowColumn.entity) IN (\(entity.selfAndDescendantNames.map(sqlStringLiteral).joined(separator: ", ")))"
                    found = try SQLiteMigration.duplicates(in: entity.tableName, columns: columns, where: kinds, db)
                }
                throw MigrationPlan.refusal(
                    index.constraint?.entity ?? name, index.constraint?.keys.joined(separator: ", "),
                    "its uniqueness constraint finds rows with the same values\(found.isEmpty ? " (\(error.message ?? ""))" : found); a custom stage can remove the duplicates first")
            }
        }
    }
}
