/// How a store lays out one entity's rows, as the SQL compiler needs to know it.
public struct SQLTable: Sendable {
    /// The table's name.
    public var name: String
    /// The primary-key column.
    public var primaryKey: String
    /// When the table also holds other entities' rows: the column naming each row's entity.
    public var entityColumn: String?
    /// With ``entityColumn``: the entity names whose rows belong to the entity asked for.
    public var entityNames: [String]

    /// Describes a table.
    public init(name: String, primaryKey: String = "id", entityColumn: String? = nil, entityNames: [String] = []) {
        self.name = name
        self.primaryKey = primaryKey
        self.entityColumn = entityColumn
        self.entityNames = entityNames
    }
}

/// How a column stores its values. Arguments are bound in the same form: dates as seconds since 2001 (REAL),
/// Booleans as 0 and 1, UUIDs and URLs as text, decimals as text compared numerically.
public enum SQLValueKind: Sendable, Hashable {
    case integer, real, text, decimal, date, blob, bool, uuid, url
}

/// How a to-many relationship links its rows to their owner.
public enum SQLToManyLink: Sendable, Hashable {
    /// The destination's `column` holds the owner's key.
    /// An ordered relationship keeps each row's position in `orderColumn`.
    case inverseForeignKey(column: String, orderColumn: String? = nil)
    /// A join table whose `ownerColumn` holds the owner's key and `destinationColumn` the destination's.
    /// An ordered relationship keeps each link's position in the join table's `orderColumn`.
    case joinTable(table: String, ownerColumn: String, destinationColumn: String, orderColumn: String? = nil)
}

/// What a key of an entity is, for the SQL compiler.
public enum SQLProperty: Sendable, Hashable {
    case attribute(column: String, kind: SQLValueKind)
    case toOne(column: String, destination: String)
    case toMany(destination: String, link: SQLToManyLink)
}

/// A store's description of its tables: what the compiler translates key paths with.
public protocol SQLSchema {
    /// The table of `entity`.
    func table(forEntity entity: String) throws(FormatPredicateError) -> SQLTable
    /// The key `key` of `entity`; throw ``FormatPredicateError/evaluation(_:)`` naming both when there is none.
    func property(_ key: String, ofEntity entity: String) throws(FormatPredicateError) -> SQLProperty
}
