import Foundation

/// Where Core Data's SQLite store keeps each entity, value and link of a model: the tables and columns named by
/// the rules ARCHITECTURE.md lists ("Core Data's SQLite layout"), found in the file's own schema. Building it is
/// the check that the store was written with this model: an entity or a column the rules expect and the file lacks
/// is refused, naming it.
struct CoreDataLayout {
    /// A many-to-many relationship's join table, as seen from one side.
    struct JoinTable {
        let table: String
        /// The column holding the keys of the objects owning the list.
        let ownerColumn: String
        /// The column holding the keys of the list's members.
        let memberColumn: String
        /// The members' order in the owner's list, when the relationship is ordered.
        let orderColumn: String?
    }

    /// Each entity's number (`Z_ENT`), by name, and the reverse.
    let entityNumbers: [String: Int64]
    let entityNames: [Int64: String]
    /// Each inheritance tree's table, by root entity name.
    let tables: [String: String]
    /// Each stored attribute's and to-one's column, by entity name and property name (inherited ones included).
    let columns: [String: [String: String]]
    /// The order column of each ordered one-to-many (in the members' table), by owner entity and relationship.
    let orderColumns: [String: [String: String]]
    /// Each many-to-many relationship's join table, by entity and relationship.
    let joins: [String: [String: JoinTable]]
    /// The largest key handed out in each tree (`Z_MAX`), by root entity name.
    let lastKeys: [String: Int64]

    /// Core Data's name for a property or entity in a table or column name.
    static func upper(_ name: String) -> String { name.uppercased() }

    init(model: Model, schema: [String: [String]], primaryKeys: [(ent: Int64, name: String, superEnt: Int64, max: Int64)], path: String) throws {
        func mismatch(_ detail: String) -> ObjectGraphError {
            .storeReadFailed(path: path, reason: "the store was not written with this model (\(detail)); open it with the model version it was written with")
        }
        var numbers: [String: Int64] = [:]
        var names: [Int64: String] = [:]
        for row in primaryKeys { (numbers[row.name], names[row.ent]) = (row.ent, row.name) }
        for entity in model.entities where numbers[entity.name] == nil {
            throw mismatch("the model's entity \(entity.name) is not in the store's Z_PRIMARYKEY")
        }
        for row in primaryKeys where model.entityIfPresent(row.name) == nil {
            throw mismatch("the store's entity \(row.name) (Z_ENT \(row.ent)) is not in the model")
        }
        for row in primaryKeys {
            let parent = model.entityIfPresent(row.name)?.description.parentName
            let storedParent = row.superEnt == 0 ? nil : names[row.superEnt]
            guard parent == storedParent else {
                throw mismatch("\(row.name)'s parent entity is \(storedParent ?? "none") in the store and \(parent ?? "none") in the model")
            }
        }
        let columnSets = schema.mapValues(Set.init)
        var tables: [String: String] = [:]
        var columns: [String: [String: String]] = [:]
        var lastKeys: [String: Int64] = [:]
        for root in model.entities where root.description.parentName == nil {
            let table = "Z" + Self.upper(root.name)
            guard let tableColumns = schema[table] else { throw mismatch("no table \(table) for the entity \(root.name)") }
            for required in ["Z_PK", "Z_ENT", "Z_OPT"] where !columnSets[table]!.contains(required) {
                throw mismatch("the table \(table) has no \(required) column")
            }
            tables[root.name] = table
            let tree = root.selfAndDescendantNames.compactMap(model.entityIfPresent)
            lastKeys[root.name] = primaryKeys.filter { root.selfAndDescendantNames.contains($0.name) }.map(\.max).max() ?? 0
            // The properties each entity declares (not those it inherits), stored ones: the table's columns are theirs.
            var declared: [(ent: Int64, order: Int, entity: String, property: String)] = []
            for entity in tree {
                let own = entity.description.attributes.filter { !$0.isTransient }.map(\.name)
                    + entity.description.relationships.filter { !$0.isToMany && !$0.isTransient }.map(\.name)
                for (order, name) in own.enumerated() { declared.append((numbers[entity.name]!, order, entity.name, name)) }
            }
            // Names that collide once uppercased take numbered columns (ZTITLE, ZTITLE1, ZTITLE2), in entity order.
            var assigned: [String: [String: String]] = [:]
            for (upperName, group) in Dictionary(grouping: declared, by: { Self.upper($0.property) }) {
                let candidates = Self.numbered("Z" + upperName, in: tableColumns)
                guard candidates.count >= group.count else {
                    let missing = group.sorted { ($0.ent, $0.order) < ($1.ent, $1.order) }[candidates.count]
                    throw mismatch("the table \(table) has no column for \(missing.entity).\(missing.property) (Z\(upperName))")
                }
                for (owner, column) in zip(group.sorted { ($0.ent, $0.order) < ($1.ent, $1.order) }, candidates) {
                    assigned[owner.entity, default: [:]][owner.property] = column
                }
            }
            // Each entity reads its ancestors' columns too.
            for entity in tree {
                var own: [String: String] = [:]
                var ancestor: ModelEntity? = entity
                while let current = ancestor {
                    own.merge(assigned[current.name] ?? [:]) { mine, _ in mine }
                    ancestor = current.description.parentName.flatMap(model.entityIfPresent)
                }
                columns[entity.name] = own
            }
        }
        var orderColumns: [String: [String: String]] = [:]
        var joins: [String: [String: JoinTable]] = [:]
        for entity in model.entities {
            for relationship in entity.relationships where relationship.isToMany && !relationship.isTransient {
                guard let destination = model.entityIfPresent(relationship.destinationEntityName),
                      let inverse = destination.relationship(named: relationship.inverseName) else {
                    throw mismatch("\(entity.name).\(relationship.name) has no inverse, whose layout in Core Data's store is not read here")
                }
                if !inverse.isToMany {
                    guard relationship.isOrdered else { continue }
                    let table = tables[destination.rootName]!
                    guard let column = Self.numbered("Z_FOK_" + Self.upper(inverse.name), in: schema[table]!).first else {
                        throw mismatch("the table \(table) has no order column Z_FOK_\(Self.upper(inverse.name)) for \(entity.name).\(relationship.name)")
                    }
                    orderColumns[entity.name, default: [:]][relationship.name] = column
                    continue
                }
                let own = try Self.declaringNumber(entity, relationship.name, model, numbers)
                let other = try Self.declaringNumber(destination, inverse.name, model, numbers)
                let (upperOwn, upperOther) = (Self.upper(relationship.name), Self.upper(inverse.name))
                // The table is named after one side (`Z_<its entity's number><ITS NAME>`); its columns after the
                // other way round: a side's keys are in `Z_<that side's number><THE OTHER SIDE'S NAME>`.
                guard let table = ["Z_\(own)\(upperOwn)", "Z_\(other)\(upperOther)"].first(where: { schema[$0] != nil }) else {
                    throw mismatch("no join table Z_\(own)\(upperOwn) or Z_\(other)\(upperOther) for \(entity.name).\(relationship.name)")
                }
                let tableColumns = schema[table]!
                let ownerCandidates = Self.numbered("Z_\(own)\(upperOther)", in: tableColumns)
                // A relationship that is its own inverse has both columns of one name, the second numbered.
                guard let ownerColumn = ownerCandidates.first,
                      let memberColumn = Self.numbered("Z_\(other)\(upperOwn)", in: tableColumns).first(where: { $0 != ownerColumn }) else {
                    throw mismatch("the join table \(table) has no columns Z_\(own)\(upperOther) and Z_\(other)\(upperOwn)")
                }
                let orderColumn = relationship.isOrdered ? Self.numbered("Z_FOK_\(other)\(upperOwn)", in: tableColumns).first : nil
                if relationship.isOrdered && orderColumn == nil {
                    throw mismatch("the join table \(table) has no order column Z_FOK_\(other)\(upperOwn) for \(entity.name).\(relationship.name)")
                }
                joins[entity.name, default: [:]][relationship.name] = JoinTable(
                    table: table, ownerColumn: ownerColumn, memberColumn: memberColumn, orderColumn: orderColumn)
            }
        }
        (entityNumbers, entityNames, self.tables, self.columns) = (numbers, names, tables, columns)
        (self.orderColumns, self.joins, self.lastKeys) = (orderColumns, joins, lastKeys)
    }

    /// The number of the entity that declares `property` (the topmost ancestor of `entity` that has it).
    private static func declaringNumber(_ entity: ModelEntity, _ property: String, _ model: Model, _ numbers: [String: Int64]) throws -> Int64 {
        var declaring = entity
        while let parent = declaring.description.parentName.flatMap(model.entityIfPresent), parent.relationship(named: property) != nil {
            declaring = parent
        }
        return numbers[declaring.name]!
    }

    /// The columns named `base` or `base` followed by a number, the plain one first, then by number.
    static func numbered(_ base: String, in columns: [String]) -> [String] {
        columns.compactMap { column -> (Int, String)? in
            guard column.hasPrefix(base) else { return nil }
            let suffix = column.dropFirst(base.count)
            if suffix.isEmpty { return (-1, column) }
            return Int(suffix).map { ($0, column) }
        }.sorted { $0.0 < $1.0 }.map(\.1)
    }
}
