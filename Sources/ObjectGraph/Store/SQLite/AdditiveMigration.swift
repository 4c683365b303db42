import Foundation
import GRDB
import PredicateFormat

/// The in-place way through a migration step that only adds: new optional attributes and to-one relationships
/// (columns), many-to-many relationships (join tables), indexes and uniqueness constraints. Nothing is copied:
/// `ALTER TABLE … ADD COLUMN` changes the schema alone, so adding an attribute to a table of a million rows costs
/// what SQLite's own statement costs. Any other step rebuilds its tables (see ``SQLiteMigration``).
enum AdditiveMigration {
    /// Applies `plan` in place when it only adds; returns false, having changed nothing, when it does more.
    static func applyIfAdditive(_ plan: MigrationPlan, in db: Database) throws -> Bool {
        let (old, new) = (plan.source, plan.destination)
        guard plan.removedEntities.isEmpty, old.entities.count == new.entities.count else { return false }
        var added: [(table: String, column: String, type: String, references: String?)] = []
        var filled: [(table: String, column: String, entities: [String], value: AttributeValue)] = []
        for step in plan.entities {
            guard step.source == step.entity, step.removed.isEmpty, let was = old.entityIfPresent(step.entity),
                  let entity = new.entityIfPresent(step.entity), was.tableName == entity.tableName, was.rootName == entity.rootName,
                  was.description.parentName == entity.description.parentName,
                  was.derivedAttributes.map(\.index) == entity.derivedAttributes.map(\.index),
                  was.attributes.compactMap(\.derivation) == entity.attributes.compactMap(\.derivation) else { return false }
            for attribute in step.attributes {
                guard let index = entity.attributeIndex[attribute.name] else { return false }
                let column = entity.attributeColumns[index]
                if attribute.source == nil {
                    // Declared by this entity (an inherited one is its ancestor's step to add).
                    guard entity.description.attributes.contains(where: { $0.name == attribute.name }) else { continue }
                    if !entity.attributes[index].isOptional && attribute.fill == nil { return false }
                    added.append((entity.tableName, column, TableLayout.sqlType(entity.attributeTypes[index]), nil))
                    if let fill = attribute.fill { filled.append((entity.tableName, column, entity.selfAndDescendantNames, fill)) }
                } else {
                    // Kept as it was: same name, type and column, and not newly required (rows may lack a value).
                    guard attribute.source == attribute.name, attribute.convertedFrom == nil, attribute.fill == nil,
                          let oldIndex = was.attributeIndex[attribute.name], was.attributeColumns[oldIndex] == column,
                          !(was.attributes[oldIndex].isOptional && !entity.attributes[index].isOptional) else { return false }
                }
            }
            for relationship in step.relationships {
                guard let storage = entity.relationship(named: relationship.name)?.storage else { return false }
                if let source = relationship.source {
                    guard source == relationship.name, was.relationship(named: source)?.storage == storage else { return false }
                } else if case .foreignKey(let column) = storage,
                          entity.description.relationships.contains(where: { $0.name == relationship.name }) {
                    let destination = new.entityIfPresent(entity.relationship(named: relationship.name)!.destinationEntityName)
                    added.append((entity.tableName, column, "INTEGER", destination?.tableName))
                }
            }
        }
        let oldJoins = Set(SQLiteStore.joinTables(old).map(\.name))
        let newJoins = SQLiteStore.joinTables(new).filter { !oldJoins.contains($0.name) }
        guard Set(SQLiteStore.joinTables(new).map(\.name)).isSuperset(of: oldJoins) else { return false }

        for column in added {
            let references = column.references.map { " REFERENCES \(sqlQuoted($0))(\(RowColumn.id)) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED" } ?? ""
            try db.execute(sql: "ALTER TABLE \(sqlQuoted(column.table)) ADD COLUMN \(sqlQuoted(column.column)) \(column.type)\(references)")
        }
        for fill in filled {
            try db.execute(
                sql: "UPDATE \(sqlQuoted(fill.table)) SET \(sqlQuoted(fill.column)) = ? WHERE \(RowColumn.entity) IN (\(fill.entities.map(sqlStringLiteral).joined(separator: ", ")))",
                arguments: [SQLiteValueCoding.encode(fill.value)])
        }
        for table in newJoins { try SQLiteStore.createJoinTable(db, table) }
        try replaceIndexes(old: old, new: new, in: db)
        try db.execute(sql: "UPDATE \(sqlQuoted(StorageNames.metadataTable)) SET value = ? WHERE key = 'model_hash'", arguments: [new.versionHash])
        try db.execute(
            sql: "UPDATE \(sqlQuoted(StorageNames.metadataTable)) SET value = ? WHERE key = 'model'",
            arguments: [String(decoding: new.canonicalJSON(), as: UTF8.self)])
        try SQLiteStore.fillSchemaTable(db, model: new)
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
                throw MigrationPlan.refusal(
                    index.constraint?.entity ?? name, index.constraint?.keys.joined(separator: ", "),
                    "its uniqueness constraint finds rows with the same values (\(error.message ?? "")); a custom stage can remove the duplicates first")
            }
        }
    }
}
