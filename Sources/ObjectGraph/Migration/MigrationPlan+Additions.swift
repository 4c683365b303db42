extension MigrationPlan {
    /// What a step that only adds to the store adds: columns (new attributes and to-one relationships) and join
    /// tables. A store makes such a step in place, copying no row; any other step rebuilds its tables.
    public struct Additions: Sendable {
        /// A column to add.
        public struct Column: Sendable {
            /// Its table and name.
            public var table: String
            public var name: String
            /// The attribute type it stores; nil for a to-one relationship's key column.
            public var type: AttributeType?
            /// For a key column, the table it refers to.
            public var references: String?
            /// The value existing rows of `entities` get (a new required attribute's default).
            public var fill: AttributeValue?
            public var entities: [String]
        }

        public var columns: [Column]
        /// The join tables of new many-to-many (or one-sided to-many) relationships.
        public var joinTables: [String]
    }

    /// The step's additions when it only adds; nil when it changes, moves or removes anything.
    public var additions: Additions? {
        guard removedEntities.isEmpty, source.entities.count == destination.entities.count else { return nil }
        var columns: [Additions.Column] = []
        for step in entities {
            guard step.source == step.entity, step.removed.isEmpty, let was = source.entityIfPresent(step.entity),
                  let entity = destination.entityIfPresent(step.entity), was.tableName == entity.tableName, was.rootName == entity.rootName,
                  was.description.parentName == entity.description.parentName,
                  was.attributes.compactMap(\.derivation) == entity.attributes.compactMap(\.derivation) else { return nil }
            for attribute in step.attributes {
                guard let index = entity.attributeIndex[attribute.name] else { return nil }
                let column = entity.attributeColumns[index]
                if attribute.source == nil {
                    // Declared by this entity (an inherited one is its ancestor's to add).
                    guard entity.description.attributes.contains(where: { $0.name == attribute.name }) else { continue }
                    if !entity.attributes[index].isOptional && attribute.fill == nil { return nil }
                    columns.append(Additions.Column(
                        table: entity.tableName, name: column, type: entity.attributeTypes[index], references: nil, fill: attribute.fill,
                        entities: entity.selfAndDescendantNames))
                } else {
                    // Kept as it was: same name, type and column, and not newly required (rows may lack a value).
                    guard attribute.source == attribute.name, attribute.convertedFrom == nil, attribute.fill == nil,
                          let oldIndex = was.attributeIndex[attribute.name], was.attributeColumns[oldIndex] == column,
                          !(was.attributes[oldIndex].isOptional && !entity.attributes[index].isOptional) else { return nil }
                }
            }
            for relationship in step.relationships {
                guard let resolved = entity.relationship(named: relationship.name) else { return nil }
                let storage = resolved.storage
                if let sourceName = relationship.source {
                    // A join table that gains or loses its second order column is rebuilt.
                    guard sourceName == relationship.name, let kept = was.relationship(named: sourceName), kept.storage == storage,
                          kept.isOrderedBothWays == resolved.isOrderedBothWays else { return nil }
                } else if case .foreignKey(let column) = storage, entity.description.relationships.contains(where: { $0.name == relationship.name }) {
                    let destinationTable = entity.relationship(named: relationship.name).flatMap { destination.entityIfPresent($0.destinationEntityName) }?.tableName
                    columns.append(Additions.Column(
                        table: entity.tableName, name: column, type: nil, references: destinationTable, fill: nil, entities: entity.selfAndDescendantNames))
                }
            }
        }
        func joinTables(_ model: Model) -> Set<String> {
            Set(model.entities.flatMap { entity in
                entity.relationships.compactMap { if case .joinTable(let table, true) = $0.storage { table } else { nil } }
            })
        }
        let (before, after) = (joinTables(source), joinTables(destination))
        guard after.isSuperset(of: before) else { return nil }
        return Additions(columns: columns, joinTables: after.subtracting(before).sorted())
    }
}
