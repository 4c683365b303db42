import Foundation
import GRDB
import PredicateFormat

/// Stores of format 1, upgraded in place to the current format when opened.
///
/// Format 1 named a root entity's table after it, kept each row's key, entity and version in `id`, `_entity` and
/// `_version`, an attribute in a column of its name, a to-one relationship in `<relationship>_id`, an ordered
/// to-many's positions in `<inverse>_order`, a many-to-many relationship in `<Entity>_<relationship>`, and its own
/// data in `objectgraph_metadata` and `objectgraph_sequence`. Those names could meet a model's (`id`,
/// `author_id` beside `author`), so models using them were refused, and stores holding them never existed.
///
/// The upgrade runs inside the caller's transaction, with foreign keys off (see
/// ``SQLiteStore/prepareSchema(_:model:tables:path:)``): the old tables are moved aside, the current schema is
/// created, every row is copied across, entity by entity, and the old tables are dropped. A failure anywhere rolls
/// all of it back and leaves the store as it was.
enum StoreFormat1 {
    static let metadataTable = "objectgraph_metadata"
    static let sequenceTable = "objectgraph_sequence"
    private static let aside = "objectgraph.format1."

    static func upgrade(_ db: Database, model: Model, tables: NameTable<TableLayout>, path: String) throws -> String {
        let identifier = try SQLiteStore.checkedIdentifier(db, metadataTable: metadataTable, model: model, path: path)
        let roots = model.entities.filter { $0.rootName == $0.name }
        let oldJoinTables = joinTables(model)
        let moved = roots.map(\.name) + oldJoinTables.map(\.name) + [metadataTable, sequenceTable]
        for name in moved {
            try db.execute(sql: "ALTER TABLE \(sqlQuoted(name)) RENAME TO \(sqlQuoted(aside + name))")
        }
        let metadata = try Row.fetchAll(db, sql: "SELECT key, CAST(value AS TEXT) FROM \(sqlQuoted(aside + metadataTable)) WHERE key != 'format_version'")
            .map { ($0[0] as String, $0[1] as String) }
        try SQLiteStore.createSchema(db, model: model, tables: tables, metadata: metadata)
        try db.execute(sql: """
            UPDATE \(sqlQuoted(SQLiteStore.sequenceTable)) SET max_key = old.max_key
            FROM \(sqlQuoted(aside + sequenceTable)) AS old WHERE old.entity = \(sqlQuoted(SQLiteStore.sequenceTable)).entity
            """)
        for root in roots {
            guard let table = tables[root.name] else { continue }
            for entity in root.selfAndDescendantNames.compactMap(model.entityIfPresent) {
                let pairs = columnPairs(of: entity, in: model)
                try db.execute(
                    sql: """
                        INSERT INTO \(sqlQuoted(table.name)) (\(pairs.map { sqlQuoted($0.new) }.joined(separator: ", ")))
                        SELECT \(pairs.map { sqlQuoted($0.old) }.joined(separator: ", ")) FROM \(sqlQuoted(aside + root.name)) WHERE _entity = ?
                        """,
                    arguments: [entity.name])
            }
        }
        for old in oldJoinTables {
            // The side that names the table may differ between the formats ('_' and '.' sort differently): the
            // columns swap with it.
            let (source, target) = old.currentIsSourceSide == old.isSourceSide ? ("source", "target") : ("target", "source")
            try db.execute(sql: """
                INSERT INTO \(sqlQuoted(old.currentName)) (source, target, position)
                SELECT \(source), \(target), position FROM \(sqlQuoted(aside + old.name))
                """)
        }
        for name in moved { try db.execute(sql: "DROP TABLE \(sqlQuoted(aside + name))") }
        return identifier
    }

    /// Each current column of `entity`'s rows with the format-1 column it comes from.
    private static func columnPairs(of entity: ModelEntity, in model: Model) -> [(new: String, old: String)] {
        var pairs = [(StorageNames.rowID, "id"), (StorageNames.rowEntity, "_entity"), (StorageNames.rowVersion, "_version")]
        pairs += entity.storedAttributes.map { (entity.attributeColumns[$0], entity.attributes[$0].name) }
        for relationship in entity.relationships {
            if case .foreignKey(let column) = relationship.storage { pairs.append((column, "\(relationship.name)_id")) }
        }
        // Positions of ordered to-many relationships whose inverse is this entity's to-one.
        for owner in model.entities {
            for declared in owner.description.relationships {
                guard case .inverseForeignKey(_, let orderColumn?)? = owner.relationship(named: declared.name)?.storage,
                      entity.relationship(named: declared.inverseName) != nil,
                      entity.isKind(of: (try? model.entity(named: declared.destinationEntityName)) ?? entity) else { continue }
                pairs.append((orderColumn, "\(declared.inverseName)_order"))
            }
        }
        return pairs
    }

    /// The many-to-many relationships' join tables as format 1 named them, with the current name and which side
    /// each format made the `source`.
    private static func joinTables(_ model: Model) -> [(name: String, isSourceSide: Bool, currentName: String, currentIsSourceSide: Bool)] {
        var result: [(String, Bool, String, Bool)] = []
        var seen: Set<String> = []
        for entity in model.entities {
            for declared in entity.description.relationships {
                guard case .joinTable(let currentName, let currentIsSourceSide)? = entity.relationship(named: declared.name)?.storage,
                      seen.insert(currentName).inserted,
                      let destination = model.entityIfPresent(declared.destinationEntityName),
                      let inverse = destination.relationship(named: declared.inverseName),
                      let inverseOwner = declaringEntity(of: inverse.name, from: destination, in: model) else { continue }
                let mine = "\(entity.name)_\(declared.name)"
                let theirs = "\(inverseOwner.name)_\(inverse.name)"
                let isSource = StorageNames.namesJoinTable(mine: mine, mineOrdered: declared.isOrdered, theirs: theirs, theirsOrdered: inverse.isOrdered)
                result.append((isSource ? mine : theirs, isSource, currentName, currentIsSourceSide))
            }
        }
        return result
    }

    private static func declaringEntity(of relationship: String, from entity: ModelEntity, in model: Model) -> ModelEntity? {
        var current: ModelEntity? = entity
        while let candidate = current {
            if candidate.description.relationships.contains(where: { $0.name == relationship }) { return candidate }
            current = candidate.description.parentName.flatMap(model.entityIfPresent)
        }
        return nil
    }
}
