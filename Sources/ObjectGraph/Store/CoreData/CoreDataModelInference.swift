import Foundation

extension CoreDataStoreFile {
    /// A model rebuilt from a Core Data store alone, and what could not be recovered.
    public struct InferredModel: Sendable {
        /// The model: Core Data's entity names and inheritance, properties named after their columns.
        public let model: Model
        /// What the store does not say, each once: names whose case is lost, links read as numbers, inverses named
        /// here.
        public let notes: [String]
    }

    /// Rebuilds the model of the Core Data store at `storeURL` from the store itself, for a store whose model file
    /// is not at hand: entity names and inheritance from `Z_PRIMARYKEY`, properties from the tables' columns.
    ///
    /// What comes back exactly: entity names, inheritance, many-to-many relationships (their join tables name both
    /// sides), order. What comes back in part, listed in ``InferredModel/notes``: property names lose their case
    /// (`ZFIRSTNAME` reads `firstname`); types are the columns' (booleans read as integers, UUIDs and transformables
    /// as bytes); a property of a sub-entity is given to the entity whose rows hold its values; a to-one is told from
    /// a number only when its column is named after an entity (`ZAUTHOR` links to `Author`), and its to-many
    /// inverse, which no column names, is named here after the entity (`books`). The model Core Data caches in the
    /// store (`Z_MODELCACHE`) is an archive of its own private format and is not read.
    ///
    /// ```swift
    /// let inferred = try CoreDataStoreFile.inferredModel(forStoreAt: URL(filePath: "Notes.sqlite"))
    /// inferred.notes.forEach { print($0) }
    /// let coordinator = try PersistentStoreCoordinator(model: inferred.model, coreDataStoreURL: URL(filePath: "Notes.sqlite"))
    /// ```
    public static func inferredModel(forStoreAt storeURL: URL) throws -> InferredModel {
        let file = try OpenedFile(url: storeURL)
        return try CoreDataModelInference(file: file).model()
    }
}

/// Reads a model out of a Core Data store's tables (see ``CoreDataStoreFile/inferredModel(forStoreAt:)``).
struct CoreDataModelInference {
    let file: CoreDataStoreFile.OpenedFile

    private struct Entity {
        var description: EntityDescription
        let number: Int64
        let parentNumber: Int64
    }

    func model() throws -> CoreDataStoreFile.InferredModel {
        var notes: [String] = []
        var entities: [Int64: Entity] = [:]
        for row in file.primaryKeys {
            entities[row.ent] = Entity(description: EntityDescription(row.name), number: row.ent, parentNumber: row.superEnt)
        }
        func parent(_ number: Int64) -> Int64? { entities[number].flatMap { $0.parentNumber == 0 ? nil : $0.parentNumber } }
        func ancestors(_ number: Int64) -> [Int64] { [number] + (parent(number).map(ancestors) ?? []) }
        for number in entities.keys {
            if let parentNumber = parent(number) { entities[number]!.description.parentName = entities[parentNumber]?.description.name }
        }
        let byUpperName = Dictionary(entities.values.map { (CoreDataLayout.upper($0.description.name), $0.number) }) { first, _ in first }
        var usedNames: [Int64: Set<String>] = [:]
        func claim(_ name: String, on number: Int64) -> String {
            var candidate = name
            var suffix = 1
            while usedNames[number, default: []].contains(candidate) {
                suffix += 1
                candidate = name + String(suffix)
            }
            usedNames[number, default: []].insert(candidate)
            return candidate
        }
        notes.append("property names are the columns' without their case (ZFIRSTNAME reads firstname)")
        // Each root's table: its columns, each given to the entity whose rows hold its values.
        for rootNumber in entities.keys.sorted() where parent(rootNumber) == nil {
            let rootName = entities[rootNumber]!.description.name
            let table = "Z" + CoreDataLayout.upper(rootName)
            guard let columns = file.schema[table] else {
                throw ObjectGraphError.storeReadFailed(path: file.path, reason: "the entity \(rootName) has no table \(table)")
            }
            let orderColumns = Set(columns.filter { $0.hasPrefix("Z_FOK_") })
            for column in columns where column.hasPrefix("Z") && !column.hasPrefix("Z_") {
                var holders: Set<Int64> = []
                try file.failing("\(table).\(column)") {
                    try file.connection.cells("SELECT DISTINCT Z_ENT FROM \"\(table)\" WHERE \"\(column)\" IS NOT NULL") { row in
                        if let number = row[0].integer { holders.insert(number) }
                    }
                }
                // The deepest entity that is an ancestor of (or is) every entity with a value.
                let owner = holders.isEmpty ? rootNumber : holders.map(ancestors).reduce(Set(ancestors(holders.first!))) { $0.intersection($1) }
                    .max { ancestors($0).count < ancestors($1).count } ?? rootNumber
                var name = String(column.dropFirst()).lowercased()
                // A numbered column whose plain name is another entity's (ZRATING1 beside ZRATING) is that name again.
                if let base = name.firstIndex(where: \.isNumber), columns.contains("Z" + name[..<base].uppercased()) { name = String(name[..<base]) }
                let declared = file.declaredTypes[table]?[column]?.uppercased() ?? ""
                if declared.hasPrefix("INTEGER"), let destination = byUpperName[String(column.dropFirst())] {
                    let destinationName = entities[destination]!.description.name
                    let linkName = claim(name, on: owner)
                    let ownerName = entities[owner]!.description.name
                    let inverse = claim(Self.listName(of: ownerName), on: destination)
                    let ordered = orderColumns.contains("Z_FOK_" + column.dropFirst())
                    entities[owner]!.description.relationships.append(RelationshipDescription(linkName, destination: destinationName, inverse: inverse))
                    entities[destination]!.description.relationships.append(RelationshipDescription(
                        inverse, destination: ownerName, inverse: linkName, isToMany: true, isOrdered: ordered))
                    notes.append("\(ownerName).\(linkName) links to \(destinationName) (its column is named after it); its inverse \(destinationName).\(inverse) is named here")
                    continue
                }
                let type = Self.type(declared)
                entities[owner]!.description.attributes.append(AttributeDescription(claim(name, on: owner), type))
                if declared.hasPrefix("INTEGER") && !["Z_PK", "Z_ENT", "Z_OPT"].contains(column) {
                    notes.append("\(entities[owner]!.description.name).\(name) reads as an integer: a boolean, or a link whose destination the store does not name, reads so too")
                }
            }
        }
        // Many-to-many relationships: a join table `Z_<n><NAME>` with the columns `Z_<n><OTHER>` and `Z_<m><NAME>`.
        for (table, columns) in file.schema.sorted(by: { $0.key < $1.key }) {
            guard let (own, ownName) = Self.numberedName(table, prefix: "Z_"), entities[own] != nil else { continue }
            let keys = columns.filter { !$0.hasPrefix("Z_FOK_") }.compactMap { Self.numberedName($0, prefix: "Z_") }
            // The members' keys are in the column named after the table's relationship; the owners' in the other.
            let named = keys.filter { Self.stripNumber($0.1, base: ownName) == ownName }
            guard keys.count == 2, named.count == 1, let member = named.first, let owner = keys.first(where: { $0 != member }),
                  owner.0 == own, entities[member.0] != nil else {
                if keys.count == 2 { notes.append("the join table \(table) is not read: its columns do not say which side is which") }
                continue
            }
            let ownerEntity = entities[own]!.description.name
            let memberEntity = entities[member.0]!.description.name
            let forward = claim(ownName.lowercased(), on: own)
            let backward = claim(owner.1.lowercased(), on: member.0)
            entities[own]!.description.relationships.append(RelationshipDescription(
                forward, destination: memberEntity, inverse: backward, isToMany: true, isOrdered: columns.contains("Z_FOK_\(member.0)\(member.1)")))
            entities[member.0]!.description.relationships.append(RelationshipDescription(
                backward, destination: ownerEntity, inverse: forward, isToMany: true, isOrdered: columns.contains("Z_FOK_\(own)\(owner.1)")))
        }
        let descriptions = entities.keys.sorted().map { entities[$0]!.description }
        do {
            return CoreDataStoreFile.InferredModel(model: try Model(entities: descriptions), notes: notes)
        } catch {
            throw ObjectGraphError.storeReadFailed(path: file.path, reason: "the model read from the store does not build: \(error)")
        }
    }

    /// A to-many's name after its members' entity: `Book` gives `books`.
    static func listName(of entity: String) -> String {
        (entity.prefix(1).lowercased() + entity.dropFirst()) + "s"
    }

    /// `Z_12TAGS` as (12, "TAGS").
    static func numberedName(_ name: String, prefix: String) -> (Int64, String)? {
        guard name.hasPrefix(prefix) else { return nil }
        let rest = name.dropFirst(prefix.count)
        let digits = rest.prefix(while: \.isNumber)
        guard let number = Int64(digits), digits.count < rest.count else { return nil }
        return (number, String(rest.dropFirst(digits.count)))
    }

    /// A column's name without the number Core Data adds to a name another column has (`TAGS1` for `TAGS`).
    static func stripNumber(_ name: String, base: String) -> String {
        guard name.hasPrefix(base), name.dropFirst(base.count).allSatisfy(\.isNumber) else { return name }
        return base
    }

    /// An attribute type for a column's declared type.
    static func type(_ declared: String) -> AttributeType {
        if declared.hasPrefix("INTEGER") { return .int64 }
        if declared.hasPrefix("FLOAT") || declared.hasPrefix("REAL") || declared.hasPrefix("DOUBLE") { return .double }
        if declared.hasPrefix("TIMESTAMP") { return .date }
        if declared.hasPrefix("DECIMAL") || declared.hasPrefix("NUMERIC") { return .decimal }
        if declared.hasPrefix("BLOB") { return .binary }
        return .string
    }
}
