import Foundation

/// Reads every object of a Core Data SQLite store through its ``CoreDataLayout``: values and to-ones from the
/// entity tables, ordered lists from their order columns, many-to-many lists from their join tables.
struct CoreDataRowReader {
    let model: Model
    let layout: CoreDataLayout
    let connection: ReadOnlyConnection
    let path: String
    let externalData: URL

    private func refuse(_ reason: String) -> ObjectGraphError { .storeReadFailed(path: path, reason: reason) }

    private static func quoted(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    func objects() throws -> [AtomicStoreContents.Object] {
        let kinds = try entityOfEachKey()
        func object(_ key: Int64, _ expected: String, _ place: String) throws -> ObjectID {
            let kind = try model.entity(named: expected)
            guard let name = kinds[kind.rootName]?[key], let entity = model.entityIfPresent(name), entity.isKind(of: kind) else {
                throw refuse("\(place) names the key \(key), which no \(expected) of the store has")
            }
            return ObjectID(entityName: name, rawKey: key)
        }
        var objects: [ObjectID: AtomicStoreContents.Object] = [:]
        var order: [ObjectID] = []
        for entity in model.entities where !entity.isAbstract {
            let table = layout.tables[entity.rootName]!
            let columns = layout.columns[entity.name] ?? [:]
            let attributes = entity.storedAttributes.map { entity.attributes[$0] }
            let toOnes = entity.relationships.filter { !$0.isToMany && !$0.isTransient }
            let selected = ["Z_PK", "Z_OPT"] + attributes.map { columns[$0.name]! } + toOnes.map { columns[$0.name]! }
            let sql = "SELECT \(selected.map(Self.quoted).joined(separator: ", ")) FROM \(Self.quoted(table)) WHERE Z_ENT = \(layout.entityNumbers[entity.name]!)"
            try connection.cells(sql) { row in
                guard let key = row[0].integer else { throw refuse("a row of \(table) has no integer Z_PK") }
                let id = ObjectID(entityName: entity.name, rawKey: key)
                var values: [String: AttributeValue] = [:]
                for (offset, attribute) in attributes.enumerated() {
                    let place = CoreDataValueDecoding.Place(table: table, column: selected[2 + offset], key: key)
                    let value = try CoreDataValueDecoding.value(row[2 + offset], of: attribute, at: place, externalData: externalData, path: path)
                    if value != .null { values[attribute.name] = value }
                }
                var relationships: [String: [ObjectID]] = [:]
                for (offset, relationship) in toOnes.enumerated() {
                    let cell = row[2 + attributes.count + offset]
                    guard cell != .null else { continue }
                    let place = "\(table).\(selected[2 + attributes.count + offset]) of the row Z_PK \(key) (\(entity.name).\(relationship.name))"
                    guard let target = cell.integer else { throw refuse("\(place) is a \(cell.kindName), not a key") }
                    relationships[relationship.name] = [try object(target, relationship.destinationEntityName, place)]
                }
                // Core Data counts versions from 1 (a row it inserted has Z_OPT 1); a missing one reads as the first.
                let version = max(row[1].integer ?? 1, 1)
                objects[id] = AtomicStoreContents.Object(objectID: id, version: version, values: values, relationships: relationships)
                order.append(id)
            }
        }
        for entity in model.entities {
            for relationship in entity.relationships where relationship.isToMany && relationship.keepsContentsApart
                && entity.description.relationships.contains(where: { $0.name == relationship.name }) {
                for (owner, members) in try lists(of: relationship, declaredBy: entity, object: object) {
                    objects[owner]?.relationships[relationship.name] = members
                }
            }
        }
        return order.map { objects[$0]! }
    }

    /// The entity of every key of every tree, from `Z_ENT`.
    private func entityOfEachKey() throws -> [String: [Int64: String]] {
        var kinds: [String: [Int64: String]] = [:]
        for (root, table) in layout.tables {
            let tree = Set(try model.entity(named: root).selfAndDescendantNames)
            try connection.cells("SELECT Z_PK, Z_ENT FROM \(Self.quoted(table))") { row in
                guard let key = row[0].integer, let number = row[1].integer else {
                    throw refuse("a row of \(table) has no integer Z_PK or Z_ENT")
                }
                guard let name = layout.entityNames[number], tree.contains(name) else {
                    throw refuse("the row Z_PK \(key) of \(table) has Z_ENT \(number), which is no entity of \(root)'s tree")
                }
                guard kinds[root, default: [:]].updateValue(name, forKey: key) == nil else {
                    throw refuse("two rows of \(table) have the key Z_PK \(key)")
                }
            }
        }
        return kinds
    }

    /// Each owner's members of an ordered one-to-many or a many-to-many, in order.
    private func lists(
        of relationship: ModelRelationship, declaredBy entity: ModelEntity, object: (Int64, String, String) throws -> ObjectID
    ) throws -> [ObjectID: [ObjectID]] {
        var rows: [(owner: Int64, member: Int64, order: Int64)] = []
        let sql: String
        let place: String
        if let join = layout.joins[entity.name]?[relationship.name] {
            let orderTerm = join.orderColumn.map(Self.quoted) ?? "0"
            sql = "SELECT \(Self.quoted(join.ownerColumn)), \(Self.quoted(join.memberColumn)), \(orderTerm) FROM \(Self.quoted(join.table))"
            place = "the join table \(join.table) (\(entity.name).\(relationship.name))"
        } else if let orderColumn = layout.orderColumns[entity.name]?[relationship.name] {
            let destination = try model.entity(named: relationship.destinationEntityName)
            let ownerColumn = layout.columns[destination.name]![relationship.inverseName]!
            sql = "SELECT \(Self.quoted(ownerColumn)), Z_PK, COALESCE(\(Self.quoted(orderColumn)), 0) FROM \(Self.quoted(layout.tables[destination.rootName]!)) WHERE \(Self.quoted(ownerColumn)) IS NOT NULL"
            place = "\(layout.tables[destination.rootName]!).\(orderColumn) (\(entity.name).\(relationship.name))"
        } else {
            return [:]
        }
        try connection.cells(sql) { row in
            guard let owner = row[0].integer, let member = row[1].integer else { throw refuse("\(place) has a row without two keys") }
            rows.append((owner, member, row[2].integer ?? 0))
        }
        var lists: [ObjectID: [(order: Int64, member: ObjectID)]] = [:]
        // A link listed twice (a join table without its primary key) is one link.
        var seen: Set<[Int64]> = []
        for row in rows where seen.insert([row.owner, row.member]).inserted {
            let owner = try object(row.owner, entity.name, place)
            lists[owner, default: []].append((row.order, try object(row.member, relationship.destinationEntityName, place)))
        }
        return lists.mapValues { members in members.sorted { ($0.order, $0.member.rawKey) < ($1.order, $1.member.rawKey) }.map(\.member) }
    }
}
