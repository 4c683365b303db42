import ObjectGraph

/// What an update of one saved row writes: its entity and the columns it changes. Consecutive rows of one shape
/// (a save's usual run: many objects of one entity with the same attribute changed) share one statement.
struct PostgresUpdateShape {
    /// One changed column, where its value comes from in the row, and its type for the statement's cast.
    struct Assignment {
        enum Source {
            case attribute(Int)
            case toOne(Int)
        }

        let column: String
        let source: Source
        let sqlType: String
    }

    let entity: ModelEntity
    let table: TableLayout
    /// The stored attributes, then the to-one slots, the row changes; empty for a row that changed nothing stored
    /// (only transient properties), which is not written.
    let assignments: [Assignment]
    private let attributes: [Int]
    private let toOneSlots: [Int]

    init(_ row: ChangeSet.Row, store: PostgresStore) throws {
        let (entity, table) = try store.layout(for: row.objectID.entityName)
        guard let columns = table.entities[entity.name] else { throw ObjectGraphError.unknownEntity(entity.name) }
        self.entity = entity
        self.table = table
        (attributes, toOneSlots) = row.storedChanges(of: entity)
        assignments = attributes.map { index in
            let column = entity.attributeColumns[index]
            return Assignment(column: column, source: .attribute(index), sqlType: PostgresValueCoding.sqlType(ofColumn: column, in: table))
        } + toOneSlots.map { slot in
            Assignment(column: columns.insertColumns[columns.storedAttributes.count + slot], source: .toOne(slot), sqlType: "BIGINT")
        }
    }

    /// Whether `row` writes the same columns of the same entity.
    func matches(_ row: ChangeSet.Row) -> Bool {
        row.objectID.entityName == entity.name && row.changedToOne.lazy.filter { $0 < entity.storedToOneCount }.elementsEqual(toOneSlots)
            && row.changedAttributes.lazy.filter { !entity.attributes[$0].isTransient }.elementsEqual(attributes)
    }
}
