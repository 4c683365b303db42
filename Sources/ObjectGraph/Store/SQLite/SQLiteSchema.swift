import Foundation
import GRDB
import PredicateFormat

/// The store's own columns of every row, quoted for SQL (see `StorageNames`).
enum RowColumn {
    static let id = sqlQuoted(StorageNames.rowID)
    static let entity = sqlQuoted(StorageNames.rowEntity)
    static let version = sqlQuoted(StorageNames.rowVersion)
}

/// The table of one inheritance tree and how each entity's values map to its columns.
///
/// One table per root entity: an entity without sub-entities gets a table of its own, with a column per attribute
/// and per to-one relationship. Sub-entities share their root's table, told apart by `row.entity`, so fetching a
/// parent entity returns its sub-entities' objects with one query. Names follow `StorageNames`.
///
/// A class, immutable: every fetch takes its table's layout, and a struct of arrays, a dictionary and strings cost
/// a retain and a release of each.
package final class TableLayout: Sendable {
    package struct Column: Sendable {
        package var name: String
        package var sqlType: String
        /// For a foreign key: the referenced table.
        package var references: String?
    }

    /// Where one entity's values sit in a `SELECT` of ``selectList``. A class, immutable: every row read takes its
    /// entity's columns, and a struct of six arrays cost six retains and releases per row.
    package final class EntityColumns: Sendable {
        package let attributes: [Int]
        package let attributeTypes: [AttributeType]
        package let toOne: [Int]
        /// For to-one relationships into trees with sub-entities: the position of the destination's `_entity`.
        package let toOneEntity: [Int?]
        package let toOneDestination: [String]
        /// How many transient to-one slots follow the stored ones (``toOne``): nil in every row read.
        package let transientToOneCount: Int
        /// The writable columns for an insert, in order: attributes, then to-one keys.
        package let insertColumns: [String]
        /// How many attributes' values never fit a word (strings, data…): rows with none share blocks of storage
        /// (`AttributeValues.RowAllocator`), others make room for that many values aside.
        let wordlessCount: Int
        /// How each attribute is read: its column's position, and whether SQLite's integer, real or text value function
        /// reads it (the common cases, decided once here rather than by matching the attribute type per value).
        let reads: [ColumnRead]

        /// The attributes the table keeps, by position (transient ones are in memory only).
        package let storedAttributes: [Int]
        /// Whether any attribute is transient: its rows are read by the slower path that leaves those to defaults.
        let hasTransient: Bool
        /// Each attribute's value in a row just read: its default for a transient attribute.
        package let defaults: AttributeValues

        struct ColumnRead {
            enum Kind: UInt8 { case integer, real, text, other, transient }
            let position: Int32
            let kind: Kind
        }

        init(
            attributes: [Int], attributeTypes: [AttributeType], toOne: [Int], toOneEntity: [Int?], toOneDestination: [String],
            insertColumns: [String], entity: ModelEntity
        ) {
            self.attributes = attributes
            self.storedAttributes = entity.storedAttributes
            self.hasTransient = !entity.transientAttributes.isEmpty
            self.defaults = entity.defaultValues
            self.attributeTypes = attributeTypes
            self.toOne = toOne
            self.toOneEntity = toOneEntity
            self.toOneDestination = toOneDestination
            self.transientToOneCount = entity.toOneCount - entity.storedToOneCount
            self.insertColumns = insertColumns
            self.reads = zip(attributes, attributeTypes).map { position, type in
                guard position >= 0 else { return ColumnRead(position: -1, kind: .transient) }
                switch type {
                case .int16, .int32, .int64: return ColumnRead(position: Int32(position), kind: .integer)
                case .double, .float: return ColumnRead(position: Int32(position), kind: .real)
                case .string: return ColumnRead(position: Int32(position), kind: .text)
                default: return ColumnRead(position: Int32(position), kind: .other)
                }
            }
            self.wordlessCount = attributeTypes.count { !$0.fitsWord }
        }
    }

    package let name: String
    /// The root entity of the tree the table holds (the key of its sequence of primary keys).
    package let rootEntity: String
    package let columns: [Column]
    /// `row.id, row.entity (NULL for a table of one entity), row.version, <columns...>, <destination-entity lookups...>`
    package let selectList: [String]
    /// `SELECT <selectList> FROM <table> AS t0`.
    package let selectClause: String
    /// ``selectClause`` for the row of one key, its one parameter: made once, since a fault fired alone (the
    /// commonest read of all) built it for every row it read.
    package let selectByKey: String
    package let entities: [String: EntityColumns]
    /// The only entity, when the tree has one: its rows need no `_entity` lookup.
    package let single: (name: String, columns: EntityColumns)?
    /// The SQL its ``selectList`` and ``indexes(model:)`` are written in: names differ where PostgreSQL shortens
    /// them (see `SQLDialect.quoted(_:)`).
    package let dialect: SQLDialect

    package init(root: ModelEntity, model: Model, dialect: SQLDialect = .sqlite) {
        self.dialect = dialect
        name = root.tableName
        rootEntity = root.name
        var columns: [Column] = []
        var position: [String: Int] = [:]
        func add(_ column: Column) {
            if position[column.name] == nil {
                position[column.name] = columns.count
                columns.append(column)
            }
        }
        let tree = root.selfAndDescendantNames.compactMap { model.entityIfPresent($0) }
        for entity in tree {
            for (attribute, column) in zip(entity.attributes, entity.attributeColumns) where !attribute.isTransient {
                add(Column(name: column, sqlType: Self.sqlType(attribute.type)))
            }
            for relationship in entity.relationships {
                if case .foreignKey(let column) = relationship.storage {
                    let destinationTable = model.entityIfPresent(relationship.destinationEntityName)?.tableName ?? relationship.destinationEntityName
                    add(Column(name: column, sqlType: "INTEGER", references: destinationTable))
                }
            }
        }
        // Positions of ordered one-to-many relationships that point into this tree.
        for entity in model.entities {
            for relationship in entity.relationships {
                if case .inverseForeignKey(_, let orderColumn?) = relationship.storage,
                   model.entityIfPresent(relationship.destinationEntityName)?.rootName == root.name {
                    add(Column(name: orderColumn, sqlType: "INTEGER"))
                }
            }
        }
        self.columns = columns
        // A table of one entity selects no `row.entity` (its rows' entity is known): a column read per row less.
        // The position stays, so every table's columns sit where ``EntityColumns`` says.
        let entityColumn = tree.count == 1 ? "NULL" : "t0.\(RowColumn.entity)"
        var select = ["t0.\(RowColumn.id)", entityColumn, "t0.\(RowColumn.version)"] + columns.map { "t0." + dialect.quoted($0.name) }
        var entities: [String: EntityColumns] = [:]
        for entity in tree {
            var toOne: [Int] = []
            var toOneEntity: [Int?] = []
            var destinations: [String] = []
            var insertColumns = entity.storedAttributes.map { entity.attributeColumns[$0] }
            for relationship in entity.relationships {
                guard case .foreignKey(let column) = relationship.storage else { continue }
                toOne.append(3 + position[column]!)
                insertColumns.append(column)
                destinations.append(relationship.destinationEntityName)
                let destination = model.entityIfPresent(relationship.destinationEntityName)
                if let destination, destination.selfAndDescendantNames.count > 1 {
                    toOneEntity.append(select.count)
                    select.append("(SELECT d.\(RowColumn.entity) FROM \(dialect.quoted(destination.tableName)) AS d WHERE d.\(RowColumn.id) = t0.\(dialect.quoted(column)))")
                } else {
                    toOneEntity.append(nil)
                }
            }
            entities[entity.name] = EntityColumns(
                // A transient attribute has no column: -1.
                attributes: entity.attributes.indices.map { entity.attributes[$0].isTransient ? -1 : 3 + position[entity.attributeColumns[$0]]! },
                attributeTypes: entity.attributes.map(\.type),
                toOne: toOne, toOneEntity: toOneEntity, toOneDestination: destinations, insertColumns: insertColumns, entity: entity)
        }
        selectList = select
        selectClause = "SELECT \(select.joined(separator: ", ")) FROM \(dialect.quoted(name)) AS t0"
        selectByKey = "\(selectClause) WHERE t0.\(dialect.quoted(StorageNames.rowID)) = \(dialect == .sqlite ? "?" : "$1")"
        self.entities = entities
        single = entities.count == 1 ? entities.first.map { ($0.key, $0.value) } : nil
    }

    static func sqlType(_ type: AttributeType) -> String {
        switch type {
        case .string, .uuid, .uri, .decimal: "TEXT"
        case .bool, .int16, .int32, .int64: "INTEGER"
        case .double, .float, .date: "REAL"
        // Undefined is transient only: no column has it.
        case .binary, .codable, .undefined: "BLOB"
        }
    }

    /// The statements that create the table and its indexes. An index is named after its table and columns,
    /// `Book(title)`, `Book(isbn) unique`: a name no table or other index can have.
    func createStatements(model: Model) -> [String] {
        var definitions = [
            "\(RowColumn.id) INTEGER PRIMARY KEY",
            "\(RowColumn.entity) TEXT NOT NULL",
            "\(RowColumn.version) INTEGER NOT NULL DEFAULT 1",
        ]
        for column in columns {
            var definition = "\(sqlQuoted(column.name)) \(column.sqlType)"
            if let references = column.references {
                definition += " REFERENCES \(sqlQuoted(references))(\(RowColumn.id)) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED"
            }
            definitions.append(definition)
        }
        return ["CREATE TABLE \(sqlQuoted(name)) (\(definitions.joined(separator: ", ")))"] + indexes(model: model).map(\.sql)
    }

    /// An index of the table: its name, the statement that creates it, and for a uniqueness constraint, whose.
    package struct Index {
        package var name: String
        package var sql: String
        package var constraint: (entity: String, keys: [String])?
    }

    /// The table's indexes: for its foreign keys, and the entities' indexed attributes, fetch indexes and uniqueness
    /// constraints.
    /// The column of `entity`'s to-one relationship `name`, when it has one.
    private static func foreignKeyColumn(_ name: String, of entity: ModelEntity) -> String? {
        guard case .foreignKey(let column)? = entity.relationship(named: name)?.storage else { return nil }
        return column
    }

    package func indexes(model: Model) -> [Index] {
        var indexes: [Index] = []
        var seen: Set<String> = []
        // A column starting with '-' is indexed in descending order (and named so: `Book(-published)`).
        func index(_ columns: [String], unique: (entity: String, keys: [String])? = nil) {
            let indexName = "\(name)(\(columns.joined(separator: ",")))" + (unique != nil ? " unique" : "")
            guard seen.insert(indexName).inserted else { return }
            let elements = columns.map { $0.hasPrefix("-") ? dialect.quoted(String($0.dropFirst())) + " DESC" : dialect.quoted($0) }
            let sql = "CREATE \(unique != nil ? "UNIQUE " : "")INDEX \(dialect.quoted(indexName)) ON \(dialect.quoted(name))(\(elements.joined(separator: ", ")))"
            indexes.append(Index(name: indexName, sql: sql, constraint: unique))
        }
        for column in columns where column.references != nil { index([column.name]) }
        // No index on row.entity: it has a handful of values, and without statistics SQLite would prefer it to the
        // attribute indexes that actually narrow a fetch.
        let tree = model.entityIfPresent(rootEntity)?.selfAndDescendantNames.compactMap { model.entityIfPresent($0) } ?? []
        for entity in tree {
            func columns(_ keys: [String]) -> [String] {
                keys.map { key in
                    let descending = key.hasPrefix("-")
                    let name = descending ? String(key.dropFirst()) : key
                    let column = entity.attributeIndex[name].map { entity.attributeColumns[$0] } ?? Self.foreignKeyColumn(name, of: entity) ?? name
                    return descending ? "-" + column : column
                }
            }
            let description = entity.description
            for attribute in description.attributes where attribute.isIndexed { index(columns([attribute.name])) }
            for keys in description.indexes { index(columns(keys)) }
            for keys in description.uniquenessConstraints { index(columns(keys), unique: (entity.name, keys)) }
        }
        return indexes
    }
}

/// Conversions between attribute values and SQLite values: exact in both directions.
enum SQLiteValueCoding {
    static func encode(_ value: AttributeValue) -> DatabaseValue {
        switch value {
        case .null: .null
        case .bool(let v): (v ? 1 : 0).databaseValue
        case .int(let v): v.databaseValue
        case .double(let v): v.databaseValue
        case .string(let v): v.databaseValue
        // Decimal keeps every digit as text; Double would round it.
        case .decimal(let v): v.description.databaseValue
        // Seconds since 2001 as a Double is Date's own representation: no rounding on the way back.
        case .date(let v): v.timeIntervalSinceReferenceDate.databaseValue
        case .data(let v): v.databaseValue
        case .uuid(let v): v.uuidString.databaseValue
        case .url(let v): v.absoluteString.databaseValue
        case .objectID(let v): v.rawKey.databaseValue
        }
    }

    /// A value whose attribute type is unknown (an aggregate over numbers): by its storage class.
    static func decodeUntyped(_ value: DatabaseValue) -> AttributeValue {
        switch value.storage {
        case .null: .null
        case .int64(let i): .int(i)
        case .double(let d): .double(d)
        case .string(let s): .string(s)
        case .blob(let data): .data(data)
        }
    }

    static func decode(_ value: DatabaseValue, as type: AttributeType) -> AttributeValue {
        switch (type, value.storage) {
        case (_, .null): .null
        case (.string, .string(let s)): .string(s)
        case (.bool, .int64(let i)): .bool(i != 0)
        case (.int16, .int64(let i)), (.int32, .int64(let i)), (.int64, .int64(let i)): .int(i)
        case (.double, .double(let d)), (.float, .double(let d)): .double(d)
        case (.double, .int64(let i)), (.float, .int64(let i)): .double(Double(i))
        case (.decimal, .string(let s)): Decimal(string: s).map(AttributeValue.decimal) ?? .null
        case (.decimal, .int64(let i)): .decimal(Decimal(i))
        case (.date, .double(let d)): .date(Date(timeIntervalSinceReferenceDate: d))
        case (.date, .int64(let i)): .date(Date(timeIntervalSinceReferenceDate: Double(i)))
        case (.binary, .blob(let data)), (.codable, .blob(let data)): .data(data)
        case (.uuid, .string(let s)): UUID(uuidString: s).map(AttributeValue.uuid) ?? .null
        case (.uri, .string(let s)): URL(string: s).map(AttributeValue.url) ?? .null
        case (_, .int64(let i)): .int(i)
        case (_, .double(let d)): .double(d)
        case (_, .string(let s)): .string(s)
        case (_, .blob(let data)): .data(data)
        }
    }
}
