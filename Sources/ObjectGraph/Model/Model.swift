import Foundation
import PredicateFormat

/// A checked set of entities: what a coordinator, its store and its contexts agree on.
///
/// Building a model checks every declaration together and throws ``ObjectGraphError/invalidModel(entity:property:reason:)``
/// naming the entity and property at fault: duplicate names, unknown parents or destinations, missing or mismatched
/// inverses, constraints on unknown attributes.
///
/// ```swift
/// let model = try Model([Book.self, Author.self])          // macro entities
/// let runtime = try Model(entities: [authorDescription, bookDescription])
/// ```
public final class Model: Sendable {
    /// The entities, in declaration order.
    public let entities: [ModelEntity]
    /// A stable hash of the model's canonical form: equal models have equal hashes, across runs and machines.
    public let versionHash: String
    /// The declarations the model was built from, sorted by name (its canonical form).
    public let entityDescriptions: [EntityDescription]
    /// Named sets of entities (Xcode's configurations), as read from a model file.
    public let configurations: [String: [String]]
    /// Named fetch requests with `$variables` (Xcode's fetch request templates); see
    /// ``fetchRequest(fromTemplateNamed:substitutionVariables:)``.
    public let fetchRequestTemplates: [String: FetchRequestTemplate]
    /// Free-form information for the app (the model's user info in Xcode).
    public let userInfo: [String: String]
    /// Whether any entity has a relationship (when none has, a save has no references to rewrite).
    let hasRelationships: Bool
    /// Whether any entity has a transient attribute or relationship (when none has, a fetch need not look for one).
    let hasTransientProperties: Bool
    /// Whether any entity has a derived attribute (when none has, a save reads nothing back).
    let hasDerivedAttributes: Bool
    /// Whether any relationship has no inverse (when none has, a deletion has no one-sided references to clear).
    let hasOneSidedRelationships: Bool
    private let entitiesByName: NameTable<ModelEntity>
    /// Entities by the class that represents them (classes that represent one entity only).
    private let entitiesByClass: [ObjectIdentifier: ModelEntity]

    /// Builds a model from the entity classes the `@Entity` macro generated.
    public convenience init(_ types: [any ManagedEntity.Type]) throws {
        var classes: [String: ManagedObject.Type] = [:]
        for type in types { classes[type.entityDescription.name] = type }
        try self.init(entities: types.map { $0.entityDescription }, classes: classes)
    }

    /// Builds a model from entity descriptions, with plain ``ManagedObject`` instances (or the registered classes).
    ///
    /// Configurations must name entities of the model, and templates fetch entities of the model.
    public init(
        entities descriptions: [EntityDescription], classes: [String: ManagedObject.Type] = [:],
        configurations: [String: [String]] = [:], fetchRequestTemplates: [String: FetchRequestTemplate] = [:], userInfo: [String: String] = [:]
    ) throws {
        let byName = try Self.indexByName(descriptions)
        for description in descriptions { try Self.check(description, in: byName) }
        let names = StorageNames(descriptions)
        var built: [ModelEntity] = []
        for description in descriptions {
            let chain = try Self.ancestry(of: description, in: byName)
            let attributes = chain.flatMap(\.attributes)
            let declared = chain.flatMap(\.relationships)
            try Self.checkUniqueNames(entity: description.name, attributes: attributes, relationships: declared)
            try Self.checkFetchedProperties(of: description, chain: chain, in: byName)
            let relationships = try declared.map { try Self.resolve($0, of: description, chain: chain, in: byName, names: names) }
            let descendants = Self.descendants(of: description.name, in: descriptions)
            built.append(ModelEntity(
                description: description, rootName: chain[0].name, selfAndDescendantNames: descendants,
                tableName: names.table(ofRoot: chain[0].name),
                attributes: attributes,
                attributeColumns: chain.flatMap { ancestor in ancestor.attributes.map { names.column($0.name, declaredBy: ancestor.name) } },
                relationships: relationships,
                uniquenessConstraints: chain.flatMap(\.uniquenessConstraints),
                fetchedProperties: chain.flatMap(\.fetchedProperties),
                objectType: classes[description.name] ?? ManagedObject.self
            ))
        }
        self.entities = built
        self.hasRelationships = built.contains { !$0.relationships.isEmpty }
        self.hasTransientProperties = built.contains { !$0.transientAttributes.isEmpty || $0.relationships.contains(where: \.isTransient) }
        self.hasDerivedAttributes = built.contains { !$0.derivedAttributes.isEmpty }
        self.hasOneSidedRelationships = built.contains { $0.relationships.contains { !$0.hasInverse } }
        self.entitiesByName = NameTable(built.map { ($0.name, $0) })
        let byClass = Dictionary(grouping: built.filter { $0.objectType != ManagedObject.self }) { ObjectIdentifier($0.objectType) }
        self.entitiesByClass = byClass.compactMapValues { $0.count == 1 ? $0[0] : nil }
        self.entityDescriptions = descriptions.sorted { $0.name < $1.name }
        for (name, members) in configurations {
            if let unknown = members.first(where: { byName[$0] == nil }) {
                throw ObjectGraphError.invalidModel(entity: unknown, property: nil, reason: "configuration '\(name)' names it, but the model has no such entity")
            }
        }
        for (name, template) in fetchRequestTemplates where byName[template.entityName] == nil {
            throw ObjectGraphError.invalidModel(
                entity: template.entityName, property: nil, reason: "fetch request template '\(name)' fetches it, but the model has no such entity")
        }
        self.configurations = configurations
        self.fetchRequestTemplates = fetchRequestTemplates
        self.userInfo = userInfo
        self.versionHash = Self.hash(of: entityDescriptions)
    }

    /// The entity named `name`.
    public func entity(named name: String) throws -> ModelEntity {
        guard let entity = entityIfPresent(name) else { throw ObjectGraphError.unknownEntity(name) }
        return entity
    }

    /// The entity a class represents: the one built with it, else the entity of the class's name.
    func entity(for type: ManagedObject.Type) throws -> ModelEntity {
        if let entity = entitiesByClass[ObjectIdentifier(type)] { return entity }
        return try entity(named: (type as? any ManagedEntity.Type)?.entityName ?? String(describing: type))
    }

    /// The entity named `name`, or nil.
    public func entityIfPresent(_ name: String) -> ModelEntity? { entitiesByName[name] }

    /// The canonical JSON form of the model, as kept in an SQLite store's metadata table.
    public func canonicalJSON() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding plain value types of our own cannot fail.
        return (try? encoder.encode(entityDescriptions)) ?? Data()
    }

    // MARK: Checks

    /// Why `name` cannot name an entity or property, if it cannot: every other name works, keywords and names
    /// like the store's own included (see `StorageNames`).
    static func unusableNameReason(_ name: String) -> String? {
        if name.isEmpty { return "a name cannot be empty" }
        if name.contains(".") { return "a name cannot contain '.', which separates the keys of a key path" }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) { return "a name cannot contain control characters" }
        return nil
    }

    private static func indexByName(_ descriptions: [EntityDescription]) throws -> [String: EntityDescription] {
        var byName: [String: EntityDescription] = [:]
        for description in descriptions {
            guard !description.name.isEmpty else {
                throw ObjectGraphError.invalidModel(entity: "(unnamed)", property: nil, reason: "an entity needs a name")
            }
            if let reason = unusableNameReason(description.name) {
                throw ObjectGraphError.invalidModel(entity: description.name, property: nil, reason: reason)
            }
            guard byName[description.name] == nil else {
                throw ObjectGraphError.invalidModel(
                    entity: description.name, property: nil, reason: "two entities have this name")
            }
            byName[description.name] = description
        }
        return byName
    }

    private static func check(_ description: EntityDescription, in byName: [String: EntityDescription]) throws {
        let name = description.name
        if let parent = description.parentName, byName[parent] == nil {
            throw ObjectGraphError.invalidModel(entity: name, property: nil, reason: "its parent entity '\(parent)' is not in the model")
        }
        for attribute in description.attributes {
            if let reason = unusableNameReason(attribute.name) {
                throw ObjectGraphError.invalidModel(entity: name, property: attribute.name, reason: reason)
            }
            if let derivation = attribute.derivation {
                guard let parsed = Derivation(derivation) else {
                    throw ObjectGraphError.invalidModel(
                        entity: name, property: attribute.name,
                        reason: "its derivation '\(derivation)' is not one Core Data allows (a to-one key path, a to-many's @count, now(), lowercase:, uppercase:, canonical:)")
                }
                if attribute.isTransient {
                    throw ObjectGraphError.invalidModel(entity: name, property: attribute.name, reason: "a derived attribute is stored, so it cannot be transient")
                }
                try parsed.check(attribute, of: name, in: byName, chain: try ancestry(of: description, in: byName))
            }
            if attribute.type == .undefined && !attribute.isTransient {
                throw ObjectGraphError.invalidModel(
                    entity: name, property: attribute.name,
                    reason: "the Undefined type holds values in memory only, so the attribute must be transient (as Core Data requires)")
            }
            if !attribute.type.accepts(attribute.type.coerce(attribute.defaultValue)) {
                throw ObjectGraphError.invalidModel(
                    entity: name, property: attribute.name,
                    reason: "default value \(attribute.defaultValue) does not fit type \(attribute.type.name)")
            }
        }
        let attributeNames = Set(description.attributes.map(\.name))
        for constraint in description.uniquenessConstraints {
            for key in constraint where !attributeNames.contains(key) {
                throw ObjectGraphError.invalidModel(
                    entity: name, property: key, reason: "a uniqueness constraint names an attribute the entity does not declare")
            }
        }
        // An index key may start with '-': that element descends. An index may name a to-one relationship too (its
        // column), as Xcode's fetch indexes do.
        let toOneNames = Set(description.relationships.filter { !$0.isToMany && !$0.isTransient }.map(\.name))
        for index in description.indexes {
            for key in index.map({ $0.hasPrefix("-") ? String($0.dropFirst()) : $0 }) where !attributeNames.contains(key) && !toOneNames.contains(key) {
                throw ObjectGraphError.invalidModel(
                    entity: name, property: key, reason: "an index names neither an attribute nor a stored to-one relationship the entity declares")
            }
        }
        for relationship in description.relationships {
            if let reason = unusableNameReason(relationship.name) {
                throw ObjectGraphError.invalidModel(entity: name, property: relationship.name, reason: reason)
            }
            if relationship.isOrdered && !relationship.isToMany {
                throw ObjectGraphError.invalidModel(entity: name, property: relationship.name, reason: "only a to-many relationship can be ordered")
            }
        }
    }

    private static func ancestry(of description: EntityDescription, in byName: [String: EntityDescription]) throws -> [EntityDescription] {
        var chain = [description]
        var seen: Set<String> = [description.name]
        while let parentName = chain[0].parentName, let parent = byName[parentName] {
            guard seen.insert(parentName).inserted else {
                throw ObjectGraphError.invalidModel(entity: description.name, property: nil, reason: "its parent chain loops through '\(parentName)'")
            }
            chain.insert(parent, at: 0)
        }
        return chain
    }

    private static func checkUniqueNames(entity: String, attributes: [AttributeDescription], relationships: [RelationshipDescription]) throws {
        var seen: Set<String> = []
        for name in attributes.map(\.name) + relationships.map(\.name) where !seen.insert(name).inserted {
            throw ObjectGraphError.invalidModel(entity: entity, property: name, reason: "two properties have this name (inherited ones count)")
        }
    }

    private static func checkFetchedProperties(of description: EntityDescription, chain: [EntityDescription], in byName: [String: EntityDescription]) throws {
        let taken = Set(chain.flatMap { $0.attributes.map(\.name) + $0.relationships.map(\.name) })
        var seen: Set<String> = []
        for property in description.fetchedProperties {
            func fail(_ reason: String) -> ObjectGraphError { .invalidModel(entity: description.name, property: property.name, reason: reason) }
            guard !taken.contains(property.name), seen.insert(property.name).inserted else { throw fail("two properties have this name (inherited ones count)") }
            guard byName[property.entityName] != nil else { throw fail("it fetches '\(property.entityName)', which is not in the model") }
            do {
                _ = try FormatPredicate(format: property.predicate, argumentArray: [])
            } catch {
                throw fail("its predicate: \(error.description)")
            }
        }
    }

    private static func descendants(of name: String, in descriptions: [EntityDescription]) -> [String] {
        var result = [name]
        var index = 0
        while index < result.count {
            let current = result[index]
            result += descriptions.filter { $0.parentName == current }.map(\.name)
            index += 1
        }
        return result
    }

    private static func resolve(
        _ relationship: RelationshipDescription, of owner: EntityDescription, chain: [EntityDescription],
        in byName: [String: EntityDescription], names: StorageNames
    ) throws -> ModelRelationship {
        // The declaring entity is the one in the chain that lists the relationship.
        let declaring = chain.last { $0.relationships.contains { $0.name == relationship.name } } ?? owner
        func fail(_ reason: String) -> ObjectGraphError {
            .invalidModel(entity: declaring.name, property: relationship.name, reason: reason)
        }
        guard let destination = byName[relationship.destinationEntityName] else {
            throw fail("its destination entity '\(relationship.destinationEntityName)' is not in the model")
        }
        let destinationChain = try ancestry(of: destination, in: byName)
        guard relationship.hasInverse else {
            if relationship.isTransient { return ModelRelationship(description: relationship, storage: .transient) }
            if relationship.isToMany {
                let mine = "\(declaring.name).\(relationship.name)"
                return ModelRelationship(description: relationship, storage: .joinTable(table: names.joinTables[mine] ?? mine, isSourceSide: true))
            }
            return ModelRelationship(description: relationship, storage: .foreignKey(column: names.column(relationship.name, declaredBy: declaring.name)))
        }
        guard let inverse = destinationChain.flatMap(\.relationships).first(where: { $0.name == relationship.inverseName }) else {
            throw fail("its inverse '\(relationship.inverseName)' is not a relationship of \(destination.name)")
        }
        let ownerChainNames = Set(chain.map(\.name))
        guard inverse.inverseName == relationship.name, ownerChainNames.contains(inverse.destinationEntityName) else {
            throw fail("its inverse \(destination.name).\(inverse.name) names \(inverse.destinationEntityName).\(inverse.inverseName) as its own inverse, not this relationship")
        }
        let inverseOwner = destinationChain.last { $0.relationships.contains { $0.name == inverse.name } } ?? destination
        // One side in a store and the other in memory would be two answers to one question (which objects are linked).
        guard relationship.isTransient == inverse.isTransient else {
            let (transient, stored) = relationship.isTransient ? ("it", "its inverse \(destination.name).\(inverse.name)") : ("its inverse \(destination.name).\(inverse.name)", "it")
            throw fail("\(transient) is transient and \(stored) is not: make both transient or neither")
        }
        if relationship.isTransient { return ModelRelationship(description: relationship, storage: .transient) }
        let storage: RelationshipStorage
        switch (relationship.isToMany, inverse.isToMany) {
        case (false, _):
            storage = .foreignKey(column: names.column(relationship.name, declaredBy: declaring.name))
        case (true, false):
            storage = .inverseForeignKey(
                column: names.column(inverse.name, declaredBy: inverseOwner.name),
                orderColumn: relationship.isOrdered ? names.orderColumns["\(inverseOwner.name).\(inverse.name)"] : nil)
        case (true, true):
            let mine = "\(declaring.name).\(relationship.name)"
            let theirs = "\(inverseOwner.name).\(inverse.name)"
            let isSource = StorageNames.namesJoinTable(mine: mine, mineOrdered: relationship.isOrdered, theirs: theirs, theirsOrdered: inverse.isOrdered)
            storage = .joinTable(table: names.joinTables[isSource ? mine : theirs] ?? (isSource ? mine : theirs), isSourceSide: isSource)
        }
        var resolved = ModelRelationship(description: relationship, storage: storage)
        // Core Data keeps an order for each side that asks for one.
        resolved.isOrderedBothWays = relationship.isToMany && inverse.isToMany && relationship.isOrdered && inverse.isOrdered
        return resolved
    }

    /// FNV-1a over the canonical JSON, twice with different seeds, for a 128-bit hex digest that needs no crypto library.
    ///
    /// User info, renaming identifiers and value transformer names are left out, as Core Data leaves them out of its
    /// version hashes: none changes what a store holds.
    private static func hash(of descriptions: [EntityDescription]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let hashed = descriptions.map { description in
            var description = description
            description.userInfo = [:]
            description.renamingIdentifier = nil
            for index in description.attributes.indices {
                description.attributes[index].userInfo = [:]
                description.attributes[index].renamingIdentifier = nil
                // How values become data is the app's business; the store holds data either way.
                description.attributes[index].valueTransformerName = nil
                // What history keeps of a deleted row is not part of the row.
                description.attributes[index].preservesValueInHistoryOnDeletion = false
                // A row holds its value or names its file: either reads the same.
                description.attributes[index].allowsExternalBinaryDataStorage = false
            }
            for index in description.relationships.indices {
                description.relationships[index].userInfo = [:]
                description.relationships[index].renamingIdentifier = nil
            }
            return description
        }
        let bytes = (try? encoder.encode(hashed)) ?? Data()
        func fnv(_ seed: UInt64) -> UInt64 {
            var hash = seed
            for byte in bytes {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01B3
            }
            return hash
        }
        let high = fnv(0xCBF2_9CE4_8422_2325)
        let low = fnv(0x6C62_272E_07BB_0142)
        return String(format: "%016llx%016llx", high, low)
    }
}

extension Model {
    /// The transient property a key path reaches from `entity` (an attribute at its end, or a relationship it goes
    /// through), as "Entity.property".
    func transientProperty(at keyPath: [String], from entity: ModelEntity) -> String? {
        var current = entity
        for (index, key) in keyPath.enumerated() {
            if let position = current.attributeIndex[key] {
                return index == keyPath.count - 1 && current.attributes[position].isTransient ? "\(current.name).\(key)" : nil
            }
            guard let relationship = current.relationship(named: key) else { return nil }
            if relationship.isTransient { return "\(current.name).\(key)" }
            guard let next = entityIfPresent(relationship.destinationEntityName) else { return nil }
            current = next
        }
        return nil
    }
}
