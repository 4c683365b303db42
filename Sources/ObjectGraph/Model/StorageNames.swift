/// The tables and columns a store keeps a model in, named so that no name of the model can ever collide with one of
/// the store's own, and no two properties ever share a column.
///
/// - A root entity's table is named after it; sub-entities share it. Each row's key, entity name and version are in
///   the columns `row.id`, `row.entity` and `row.version`.
/// - An attribute's column is named after the attribute; a to-one relationship's column, holding the destination's
///   `row.id`, after the relationship.
/// - An ordered to-many relationship keeps its positions beside its inverse's column, in `<that column>.order`.
/// - A many-to-many relationship is kept in the join table `<Entity>.<relationship>` (`source`, `target`,
///   `position`), named after the side that holds the positions when ordered, else the one that sorts first. Ordered
///   on both sides, it has a fourth column, `inverse_position`: the source's position in the target's list.
/// - The store's own tables are `objectgraph.metadata`, `objectgraph.sequence` and `objectgraph.schema`; the last
///   lists every table and column with the entity and property it keeps.
///
/// A model's names cannot contain a `.` (it separates the keys of a key path), and every name the store adds does,
/// so the two never meet. SQLite compares names ignoring case: when two names of one table (two properties, such as
/// `name` and `Name`, or two sibling sub-entities' `size`) or two tables would be equal ignoring case, the later one
/// in declaration order is suffixed `.2` (then `.3`, …).
package struct StorageNames: Sendable {
    package static let rowID = "row.id"
    package static let rowEntity = "row.entity"
    package static let rowVersion = "row.version"
    package static let metadataTable = "objectgraph.metadata"
    package static let sequenceTable = "objectgraph.sequence"
    package static let schemaTable = "objectgraph.schema"

    /// Root entity name → table.
    private(set) var tables: [String: String] = [:]
    /// "Entity.property" of the declaring entity → column, for attributes and to-one relationships.
    private(set) var columns: [String: String] = [:]
    /// "Entity.relationship" of a to-one whose inverse is ordered → the column of positions.
    private(set) var orderColumns: [String: String] = [:]
    /// "Entity.relationship" of the side a join table is named after → the join table.
    private(set) var joinTables: [String: String] = [:]

    /// Names everything `descriptions` declare. It reads declarations only and assumes nothing checked: a model
    /// that fails its checks is refused after this, by ``Model``, with the reason.
    init(_ descriptions: [EntityDescription]) {
        let byName = Dictionary(descriptions.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var usedTables = NameSpace(reserved: [Self.metadataTable, Self.sequenceTable, Self.schemaTable])
        var usedColumns: [String: NameSpace] = [:]
        func root(of name: String) -> String {
            var current = name
            var seen: Set<String> = [name]
            while let parent = byName[current]?.parentName, byName[parent] != nil, seen.insert(parent).inserted { current = parent }
            return current
        }
        for description in descriptions where root(of: description.name) == description.name {
            tables[description.name] = usedTables.claim(description.name)
        }
        // Columns per tree, the root's properties first, then each sub-entity's in declaration order.
        let shallowFirst = descriptions.enumerated().sorted { (depth($0.element.name), $0.offset) < (depth($1.element.name), $1.offset) }
        for description in shallowFirst.map(\.element) {
            let tree = root(of: description.name)
            var space = usedColumns[tree] ?? NameSpace(reserved: [Self.rowID, Self.rowEntity, Self.rowVersion])
            for attribute in description.attributes where !attribute.isTransient {
                columns["\(description.name).\(attribute.name)"] = space.claim(attribute.name)
            }
            for relationship in description.relationships where !relationship.isToMany && !relationship.isTransient {
                columns["\(description.name).\(relationship.name)"] = space.claim(relationship.name)
            }
            usedColumns[tree] = space
        }
        for description in descriptions {
            for relationship in description.relationships where relationship.isToMany && !relationship.isTransient {
                let mine = "\(description.name).\(relationship.name)"
                // Without an inverse, a to-many relationship keeps its members in a join table of its own.
                guard relationship.hasInverse else {
                    joinTables[mine] = usedTables.claim(mine)
                    continue
                }
                guard let (inverseOwner, inverse) = declaration(of: relationship.inverseName, from: relationship.destinationEntityName) else { continue }
                let theirs = "\(inverseOwner.name).\(inverse.name)"
                if !inverse.isToMany {
                    guard relationship.isOrdered, let column = columns[theirs] else { continue }
                    let tree = root(of: inverseOwner.name)
                    orderColumns[theirs] = usedColumns[tree, default: NameSpace(reserved: [])].claim(column + ".order")
                } else if Self.namesJoinTable(mine: mine, mineOrdered: relationship.isOrdered, theirs: theirs, theirsOrdered: inverse.isOrdered) {
                    joinTables[mine] = usedTables.claim(mine)
                }
            }
        }

        func depth(_ name: String) -> Int {
            var depth = 0
            var current = name
            while let parent = byName[current]?.parentName, byName[parent] != nil, depth < descriptions.count {
                current = parent
                depth += 1
            }
            return depth
        }
        func declaration(of name: String, from entity: String) -> (EntityDescription, RelationshipDescription)? {
            var current = byName[entity]
            var steps = 0
            while let description = current, steps <= descriptions.count {
                if let relationship = description.relationships.first(where: { $0.name == name }) { return (description, relationship) }
                current = description.parentName.flatMap { byName[$0] }
                steps += 1
            }
            return nil
        }
    }

    /// Whether the side `mine` of a many-to-many relationship names its join table: the ordered side (it holds the
    /// positions in `position`), else the side whose "Entity.relationship" sorts first (when both are ordered, the
    /// other side's positions are in `inverse_position`).
    static func namesJoinTable(mine: String, mineOrdered: Bool, theirs: String, theirsOrdered: Bool) -> Bool {
        mineOrdered != theirsOrdered ? mineOrdered : mine <= theirs
    }

    func table(ofRoot root: String) -> String { tables[root] ?? root }

    func column(_ property: String, declaredBy entity: String) -> String { columns["\(entity).\(property)"] ?? property }
}

/// Names claimed in one SQLite namespace (a database's tables, or one table's columns), compared as SQLite compares
/// them: ignoring case.
private struct NameSpace {
    private var taken: Set<String>

    init(reserved: [String]) { taken = Set(reserved.map { $0.lowercased() }) }

    /// `name`, or `name.2`, `name.3`, … when it is taken.
    mutating func claim(_ name: String) -> String {
        var candidate = name
        var suffix = 1
        while !taken.insert(candidate.lowercased()).inserted {
            suffix += 1
            candidate = "\(name).\(suffix)"
        }
        return candidate
    }
}
