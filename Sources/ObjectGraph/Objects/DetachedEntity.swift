import Synchronization

/// What an object made by an `@Entity` class's own initializer knows of itself before a context has it (see
/// ``ManagedObject/init()``): its class's entity in a model of its own, whose attributes it holds as any object
/// does, and its relationships' declarations, whose destinations it keeps by name until it is inserted.
struct DetachedEntity: Sendable {
    /// The class's entity, with its ancestors' attributes and without relationships (their destinations are other
    /// classes, which a model of this class alone does not have).
    let entity: ModelEntity
    /// Every relationship of the class and its ancestors, by name.
    let relationships: [String: RelationshipDescription]

    /// The entity of an object whose class is not an `@Entity` class.
    static let placeholder: ModelEntity = {
        do {
            return try Model(entities: [EntityDescription("ManagedObject")]).entity(named: "ManagedObject")
        } catch {
            preconditionFailure("ObjectGraph: a model of one empty entity did not build: \(error)")
        }
    }()

    private static let cache = Mutex<[ObjectIdentifier: DetachedEntity]>([:])

    /// The detached entity of `type`, or nil when it is not an `@Entity` class; built once per class.
    static func of(_ type: ManagedObject.Type) -> DetachedEntity? {
        guard let managed = type as? any ManagedEntity.Type else { return nil }
        if let cached = cache.withLock({ $0[ObjectIdentifier(type)] }) { return cached }
        var chain: [EntityDescription] = []
        var current: AnyClass? = type
        while let someClass = current, let entityClass = someClass as? any ManagedEntity.Type {
            chain.append(entityClass.entityDescription)
            current = _getSuperclass(someClass)
        }
        var relationships: [String: RelationshipDescription] = [:]
        for description in chain {
            for relationship in description.relationships { relationships[relationship.name] = relationship }
        }
        let alone = chain.map { description in
            var alone = description
            alone.relationships = []
            alone.fetchedProperties = []
            for index in alone.attributes.indices { alone.attributes[index].derivation = nil }
            return alone
        }
        guard let entity = try? Model(entities: alone).entity(named: managed.entityName) else { return nil }
        let made = DetachedEntity(entity: entity, relationships: relationships)
        cache.withLock { $0[ObjectIdentifier(type)] = made }
        return made
    }
}

extension ManagedObject {
    /// Whether the object was made by its class's own initializer and no context has it yet.
    @inline(__always)
    var isNewAndDetached: Bool { state == nil && detachReason == .notInserted }

    /// The declaration of relationship `key` of an object not inserted yet.
    private func detachedRelationship(_ key: String, toMany: Bool) throws -> RelationshipDescription {
        guard let relationship = DetachedEntity.of(type(of: self))?.relationships[key] else {
            throw ObjectGraphError.unknownKey(entity: entity.name, key: key)
        }
        guard relationship.isToMany == toMany else {
            throw ObjectGraphError.wrongPropertyKind(
                entity: entity.name, key: key, reason: toMany ? "is a to-one relationship; use object(forKey:)" : "is a to-many relationship; use objects(forKey:)")
        }
        return relationship
    }

    /// The objects relationship `key` of an object not inserted yet names.
    func detachedLinks(_ key: String, toMany: Bool) throws -> [ManagedObject] {
        _ = try detachedRelationship(key, toMany: toMany)
        return extras?.detachedLinks[key] ?? []
    }

    /// Sets what relationship `key` of an object not inserted yet names; the objects must be of its destination.
    func setDetachedLinks(_ objects: [ManagedObject], forKey key: String, toMany: Bool) throws {
        let relationship = try detachedRelationship(key, toMany: toMany)
        for object in objects where !Self.isKind(object.entity.name, of: relationship.destinationEntityName, type(of: object)) {
            throw ObjectGraphError.wrongDestination(entity: entity.name, key: key, expected: relationship.destinationEntityName, got: object.entity.name)
        }
        madeExtras().detachedLinks[key] = objects
    }

    /// Whether an object of entity `name` and class `type` may be a destination of `destination`: the entity
    /// itself, or a sub-entity (whose class descends from an `@Entity` class of that name).
    private static func isKind(_ name: String, of destination: String, _ type: ManagedObject.Type) -> Bool {
        var current: AnyClass? = type
        while let someClass = current, let entityClass = someClass as? any ManagedEntity.Type {
            if entityClass.entityName == destination { return true }
            current = _getSuperclass(someClass)
        }
        return name == destination
    }
}
