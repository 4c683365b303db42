import PredicateFormat

/// The store describes its tables to the predicate compiler (see ``ModelSQLSchema``).
extension SQLiteStore: SQLSchema {
    public func table(forEntity entityName: String) throws(FormatPredicateError) -> SQLTable {
        try ModelSQLSchema(model: model).table(forEntity: entityName)
    }

    public func property(_ key: String, ofEntity entityName: String) throws(FormatPredicateError) -> SQLProperty {
        try ModelSQLSchema(model: model).property(key, ofEntity: entityName)
    }
}

/// A model's tables as every SQL store lays them out, for the predicate compiler: a table per inheritance tree,
/// `row.entity` to tell sub-entities apart, columns and foreign keys by property (see `StorageNames`).
package struct ModelSQLSchema: SQLSchema {
    package let model: Model

    package init(model: Model) { self.model = model }

    package func table(forEntity entityName: String) throws(FormatPredicateError) -> SQLTable {
        guard let entity = model.entityIfPresent(entityName) else { throw .evaluation("unknown entity '\(entityName)'") }
        let treeSize = model.entityIfPresent(entity.rootName)?.selfAndDescendantNames.count ?? 1
        if entity.selfAndDescendantNames.count == treeSize {
            return SQLTable(name: entity.tableName, primaryKey: StorageNames.rowID)
        }
        return SQLTable(
            name: entity.tableName, primaryKey: StorageNames.rowID, entityColumn: StorageNames.rowEntity, entityNames: entity.selfAndDescendantNames)
    }

    package func property(_ key: String, ofEntity entityName: String) throws(FormatPredicateError) -> SQLProperty {
        guard let entity = model.entityIfPresent(entityName) else { throw .evaluation("unknown entity '\(entityName)'") }
        if let index = entity.attributeIndex[key] {
            if entity.attributes[index].isTransient {
                throw .unsupported("\(entityName).\(key) is transient: no store keeps it, so a fetch cannot test or sort by it")
            }
            return .attribute(column: entity.attributeColumns[index], kind: Self.valueKind(entity.attributeTypes[index]))
        }
        guard let relationship = entity.relationship(named: key) else {
            throw .unknownKey(entity: entityName, key: key)
        }
        switch relationship.storage {
        case .transient:
            throw .unsupported("\(entityName).\(key) is transient: no store keeps it, so a fetch cannot test or sort by it")
        case .foreignKey(let column):
            return .toOne(column: column, destination: relationship.destinationEntityName)
        case .inverseForeignKey(let column, let orderColumn):
            return .toMany(destination: relationship.destinationEntityName, link: .inverseForeignKey(column: column, orderColumn: orderColumn))
        case .joinTable(let table, let isSourceSide):
            return .toMany(destination: relationship.destinationEntityName, link: .joinTable(
                table: table, ownerColumn: isSourceSide ? "source" : "target", destinationColumn: isSourceSide ? "target" : "source",
                orderColumn: relationship.isOrdered ? (isSourceSide ? "position" : "inverse_position") : nil))
        }
    }

    package static func valueKind(_ type: AttributeType) -> SQLValueKind {
        switch type {
        case .string: .text
        case .bool: .bool
        case .int16, .int32, .int64: .integer
        case .double, .float: .real
        case .decimal: .decimal
        case .date: .date
        case .binary, .codable, .undefined: .blob
        case .uuid: .uuid
        case .uri: .url
        }
    }
}
