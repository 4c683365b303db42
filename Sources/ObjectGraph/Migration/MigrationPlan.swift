/// What a lightweight migration from one model version to the next does, inferred from the two models with Core
/// Data's rules, readable before it runs (``description``).
///
/// Entities, attributes and relationships match by name, or by the new one's renaming identifier (Xcode's
/// `elementID`). Inferred: adding and removing entities, attributes and relationships; renaming; optional to required
/// with a default for rows without a value; required to optional; widening and lossless type changes (Integer 16 to
/// 32 to 64, integer to Double or Float, Float to Double, any value to String: dates as ISO 8601 text to the
/// millisecond, binary data as hexadecimal);
/// to-one to to-many (the object kept as a one-element set); one-to-many to many-to-many; moving an entity under a new
/// parent or out from under one; new indexes and uniqueness constraints. Anything else is refused with the reason.
///
/// ```swift
/// let plan = try MigrationPlan(from: versionOne, to: versionTwo)
/// print(plan)   // per entity: attributes kept, converted, added, removed; relationships; rows move to which table
/// ```
public struct MigrationPlan: Sendable, CustomStringConvertible {
    /// How one attribute of the new model gets its values.
    public struct AttributeStep: Sendable, Hashable {
        /// The attribute in the new model.
        public var name: String
        /// The attribute it is read from in the old model; nil for a new attribute.
        public var source: String?
        /// The old attribute's type, when it converts to another.
        public var convertedFrom: AttributeType?
        /// The value rows get where they have none (a new attribute, or one now required): its default.
        public var fill: AttributeValue?
    }

    /// How one relationship of the new model gets its contents.
    public struct RelationshipStep: Sendable, Hashable {
        /// The relationship in the new model.
        public var name: String
        /// The relationship it is read from in the old model; nil for a new relationship.
        public var source: String?
        /// Whether a to-one becomes a to-many (its object kept as a one-element set).
        public var becomesToMany: Bool
    }

    /// How the rows of one entity of the new model are made.
    public struct EntityStep: Sendable {
        /// The entity in the new model.
        public var entity: String
        /// The entity whose rows it takes in the old model; nil for a new entity.
        public var source: String?
        public var attributes: [AttributeStep]
        public var relationships: [RelationshipStep]
        /// Attributes and relationships of the old entity the new one no longer has.
        public var removed: [String]
    }

    /// The model migrated from.
    public let source: Model
    /// The model migrated to.
    public let destination: Model
    /// One step per entity of the new model, in its order.
    public let entities: [EntityStep]
    /// Entities of the old model whose rows are dropped.
    public let removedEntities: [String]

    /// Infers the plan.
    ///
    /// - Throws: ``ObjectGraphError/migrationRefused(path:entity:property:reason:)`` (with an empty path) for a change
    ///   the rules do not cover, naming the entity and property and saying why.
    public init(from source: Model, to destination: Model) throws {
        self.source = source
        self.destination = destination
        var steps: [EntityStep] = []
        var matched: Set<String> = []
        for entity in destination.entities {
            let oldName = [entity.description.renamingIdentifier, entity.name].compactMap { $0 }.first { source.entityIfPresent($0) != nil }
            guard let oldName, let old = source.entityIfPresent(oldName) else {
                steps.append(EntityStep(entity: entity.name, source: nil, attributes: [], relationships: [], removed: []))
                continue
            }
            matched.insert(oldName)
            steps.append(try Self.step(from: old, to: entity, source: source, destination: destination))
        }
        entities = steps
        removedEntities = source.entities.map(\.name).filter { !matched.contains($0) }
        try checkTrees()
    }

    /// Rows keep their keys, which are unique only within a table: two old tables cannot pour into one new table.
    private func checkTrees() throws {
        var oldRootsByNewRoot: [String: Set<String>] = [:]
        for step in entities {
            guard let sourceName = step.source, let old = source.entityIfPresent(sourceName),
                  let new = destination.entityIfPresent(step.entity) else { continue }
            oldRootsByNewRoot[new.rootName, default: []].insert(old.rootName)
        }
        for (root, oldRoots) in oldRootsByNewRoot where oldRoots.count > 1 {
            throw Self.refusal(root, nil, "it would take the rows of separate inheritance trees (\(oldRoots.sorted().joined(separator: ", "))) into one table; migrate them in two versions, or with a custom stage")
        }
    }

    static func refusal(_ entity: String, _ property: String?, _ reason: String) -> ObjectGraphError {
        .migrationRefused(path: "", entity: entity, property: property, reason: reason)
    }

    /// Runs `body`, giving the migration refusals it throws the path of the store the plans are for (a plan is
    /// worked out apart from any store, so its refusal names none).
    package static func namingStore<T>(_ path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch ObjectGraphError.migrationRefused(_, let entity, let property, let reason) {
            throw ObjectGraphError.migrationRefused(path: path, entity: entity, property: property, reason: reason)
        }
    }

    private static func step(from old: ModelEntity, to new: ModelEntity, source: Model, destination: Model) throws -> EntityStep {
        var attributes: [AttributeStep] = []
        var used: Set<String> = []
        for attribute in new.attributes where !attribute.isTransient {
            let oldAttribute = [attribute.renamingIdentifier, attribute.name].compactMap { $0 }
                .compactMap { name in old.attribute(named: name).flatMap { $0.isTransient ? nil : $0 } }.first
            guard let oldAttribute else {
                attributes.append(AttributeStep(name: attribute.name, source: nil, convertedFrom: nil, fill: attribute.defaultValue.isNull ? nil : attribute.defaultValue))
                continue
            }
            used.insert(oldAttribute.name)
            if oldAttribute.type != attribute.type && !Self.converts(oldAttribute.type, to: attribute.type) {
                throw refusal(new.name, attribute.name, "its type changes from \(oldAttribute.type.name) to \(attribute.type.name), which no rule converts without loss")
            }
            let nowRequired = oldAttribute.isOptional && !attribute.isOptional
            attributes.append(AttributeStep(
                name: attribute.name, source: oldAttribute.name, convertedFrom: oldAttribute.type == attribute.type ? nil : oldAttribute.type,
                fill: nowRequired && !attribute.defaultValue.isNull ? attribute.defaultValue : nil))
        }
        var relationships: [RelationshipStep] = []
        for relationship in new.relationships {
            let oldRelationship = [relationship.description.renamingIdentifier, relationship.name].compactMap { $0 }
                .compactMap { old.relationship(named: $0) }.first
            guard let oldRelationship else {
                relationships.append(RelationshipStep(name: relationship.name, source: nil, becomesToMany: false))
                continue
            }
            used.insert(oldRelationship.name)
            if oldRelationship.isToMany && !relationship.isToMany {
                throw refusal(new.name, relationship.name, "it changes from to-many to to-one, which would drop objects; a custom stage can choose which to keep")
            }
            let newDestination = destination.entityIfPresent(relationship.destinationEntityName)
            let oldDestinationName = newDestination.flatMap { [$0.description.renamingIdentifier, $0.name].compactMap { $0 }.first { source.entityIfPresent($0) != nil } }
            guard oldDestinationName == oldRelationship.destinationEntityName else {
                throw refusal(new.name, relationship.name, "its destination changes from \(oldRelationship.destinationEntityName) to \(relationship.destinationEntityName)")
            }
            relationships.append(RelationshipStep(name: relationship.name, source: oldRelationship.name, becomesToMany: !oldRelationship.isToMany && relationship.isToMany))
        }
        let removed = (old.attributes.filter { !$0.isTransient }.map(\.name) + old.relationships.map(\.name)).filter { !used.contains($0) }
        return EntityStep(entity: new.name, source: old.name, attributes: attributes, relationships: relationships, removed: removed)
    }

    /// Whether values of `old` convert to `new` without loss (Core Data's lightweight rules).
    static func converts(_ old: AttributeType, to new: AttributeType) -> Bool {
        let integers: [AttributeType] = [.int16, .int32, .int64]
        if let from = integers.firstIndex(of: old), let to = integers.firstIndex(of: new) { return from <= to }
        switch new {
        case .double: return integers.contains(old) || old == .float
        case .float: return old == .int16
        case .decimal: return integers.contains(old)
        case .string: return [.bool, .int16, .int32, .int64, .double, .float, .decimal, .uuid, .uri, .date, .binary].contains(old)
        case .int16, .int32, .int64: return old == .bool
        default: return false
        }
    }

    public var description: String {
        let inPlace = additions != nil
        var lines = ["migration from model \(source.versionHash) to \(destination.versionHash)"
            + (inPlace ? ": only adds, in place (no row is copied)" : ": tables rebuilt, every row copied")]
        for step in entities {
            guard let sourceName = step.source else {
                lines.append("\(step.entity): new entity")
                continue
            }
            let table = destination.entityIfPresent(step.entity)?.tableName ?? step.entity
            lines.append("\(step.entity)" + (sourceName == step.entity ? "" : " (was \(sourceName))") + (inPlace ? ": table \(table)" : ": rows copied into table \(table)"))
            for attribute in step.attributes {
                switch (attribute.source, attribute.convertedFrom) {
                case (nil, _): lines.append("  + \(attribute.name)" + (attribute.fill.map { " = \($0)" } ?? ""))
                case (let from?, let type?): lines.append("  ~ \(attribute.name)" + (from == attribute.name ? "" : " (was \(from))") + ": converted from \(type.name)")
                case (let from?, nil) where from != attribute.name: lines.append("  ~ \(attribute.name): renamed from \(from)")
                default: if let fill = attribute.fill { lines.append("  ~ \(attribute.name): now required, missing values become \(fill)") }
                }
            }
            for relationship in step.relationships {
                switch relationship.source {
                case nil: lines.append("  + \(relationship.name) (empty)")
                case let from? where relationship.becomesToMany: lines.append("  ~ \(relationship.name)" + (from == relationship.name ? "" : " (was \(from))") + ": to-one becomes to-many")
                case let from? where from != relationship.name: lines.append("  ~ \(relationship.name): renamed from \(from)")
                default: break
                }
            }
            for name in step.removed { lines.append("  - \(name)") }
        }
        for name in removedEntities { lines.append("\(name): removed, with its rows") }
        return lines.joined(separator: "\n")
    }
}
